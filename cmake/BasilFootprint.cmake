# The build trees' size on disk. The README's test command builds a normal,
# an ASan+UBSan and a fuzz tree and then the Debian packages; with plain -g
# that came to 8.9 GB, more than a CI machine once had free ("No space left
# on device" while linking the ASan tree). Neither change below alters the
# code that runs:
# - debug sections are compressed (zlib, -gz): gdb, perf, addr2line and the
#   sanitizers' symbolizer read them as they are. Off for the Debian build
#   (debian/rules), whose dh_dwz and dh_strip work on the plain sections.
# - static libraries are thin archives (ar T): they name the objects beside
#   them instead of holding a second copy. No archive is installed.
option(BASIL_COMPRESS_DEBUG "Compress the debug sections of objects and programs (-gz)" ON)

include(CheckCompilerFlag)
include(CheckLinkerFlag)
if(BASIL_COMPRESS_DEBUG)
  check_compiler_flag(CXX -gz BASIL_HAVE_GZ)
  check_linker_flag(CXX -gz BASIL_HAVE_LINK_GZ)
  if(BASIL_HAVE_GZ AND BASIL_HAVE_LINK_GZ)
    add_compile_options(-gz)
    add_link_options(-gz)
  else()
    message(STATUS "BASIL_COMPRESS_DEBUG: the compiler or linker takes no -gz, debug sections stay plain")
  endif()
endif()

foreach(lang C CXX)
  set(CMAKE_${lang}_ARCHIVE_CREATE "<CMAKE_AR> qcT <TARGET> <LINK_FLAGS> <OBJECTS>")
  set(CMAKE_${lang}_ARCHIVE_APPEND "<CMAKE_AR> qT <TARGET> <LINK_FLAGS> <OBJECTS>")
endforeach()
