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

# How much debug information -g gives. "full" is the compiler's -g; "lines"
# is -g1: line tables and function names, what backtraces, perf, the
# sanitizers' reports and addr2line need, without the variables and types a
# debugger shows. The README's test command builds with "lines": it cut the
# compile of a basild source by a third (typed_calls.cc, 29.7 -> 20.0 s) and
# nothing in the suite reads more. Not for the Debian build (debian/rules),
# whose -dbgsym packages carry the full information.
set(BASIL_DEBUG_INFO "full" CACHE STRING "Debug information of the -g build types: full (-g) or lines (-g1)")
set_property(CACHE BASIL_DEBUG_INFO PROPERTY STRINGS full lines)
if(BASIL_DEBUG_INFO STREQUAL "lines")
  foreach(lang C CXX)
    foreach(config DEBUG RELWITHDEBINFO)
      string(REGEX REPLACE "(^| )-g( |$)" "\\1-g1\\2" CMAKE_${lang}_FLAGS_${config} "${CMAKE_${lang}_FLAGS_${config}}")
    endforeach()
  endforeach()
elseif(NOT BASIL_DEBUG_INFO STREQUAL "full")
  message(FATAL_ERROR "BASIL_DEBUG_INFO must be full or lines, not \"${BASIL_DEBUG_INFO}\"")
endif()
