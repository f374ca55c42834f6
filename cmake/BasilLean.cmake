# Lean start-up for the programs that run once per BASIL call (the emulator
# as apbasil, apbasil_proxy) or per job (basil-slurm's hooks). Loading and relocating libxml2 with ICU,
# SQLite and Boost.Program_options costs about 2 ms per process, more than
# the emulator's own work for a QUERY SUMMARY. A target with the property
# BASIL_STATIC_DEPS set to ON links the static archives of those libraries
# (from the same Debian -dev packages) and libstdc++ statically; with
# basil_static_executable glibc is linked statically too, so that the
# dynamic loader does not run at all. Everything else links the shared
# libraries as usual.
#
# Off under the sanitizers (ASan wants the shared runtime), with
# -DBASIL_LEAN=OFF, and when an archive is missing.
option(BASIL_LEAN "Link the per-call programs against static archives of their libraries" ON)
# The static programs' debug information in TARGET.debug beside them (see
# basil_static_executable). Off for the Debian build, whose dh_strip moves
# every program's debug information into the -dbgsym packages.
option(BASIL_SPLIT_DEBUG "Split the static programs' debug information into TARGET.debug" ON)

set(BASIL_LEAN_ACTIVE OFF)
if(BASIL_LEAN AND NOT BASIL_SANITIZE AND NOT BASIL_FUZZ)
  set(_missing "")
  set(BASIL_XML2_ARCHIVES "")
  set(BASIL_SQLITE_ARCHIVES "")
  # The libraries pkg-config names for a static link (cmake/BasilDependencies.cmake),
  # as archives. libm, libdl and libpthread are glibc's and stay shared.
  foreach(kind XML2 SQLITE)
    if(kind STREQUAL "XML2")
      set(_static_libs ${LIBXML2_STATIC_LIBRARIES})
    else()
      set(_static_libs ${SQLITE3_STATIC_LIBRARIES})
    endif()
    foreach(lib IN LISTS _static_libs)
      if(lib MATCHES "^(m|dl|pthread|rt|c)$")
        continue()
      endif()
      find_library(BASIL_ARCHIVE_${lib} NAMES lib${lib}.a)
      if(BASIL_ARCHIVE_${lib})
        list(APPEND BASIL_${kind}_ARCHIVES ${BASIL_ARCHIVE_${lib}})
      else()
        list(APPEND _missing lib${lib}.a)
      endif()
    endforeach()
  endforeach()
  find_library(BASIL_ARCHIVE_boost_po NAMES libboost_program_options.a)
  if(NOT BASIL_ARCHIVE_boost_po)
    list(APPEND _missing libboost_program_options.a)
  endif()
  # apbasil_proxy decompresses what basild passes on compressed.
  find_library(BASIL_ARCHIVE_lz4 NAMES liblz4.a)
  if(NOT BASIL_ARCHIVE_lz4)
    list(APPEND _missing liblz4.a)
  endif()
  if(NOT BASIL_XML2_ARCHIVES OR NOT BASIL_SQLITE_ARCHIVES)
    list(APPEND _missing "pkg-config static link lines")
  endif()
  if(_missing)
    message(STATUS "BASIL_LEAN: off, missing ${_missing}")
  else()
    set(BASIL_LEAN_ACTIVE ON)
    message(STATUS "BASIL_LEAN: per-call programs link static archives")
  endif()
endif()

# basil_dep_<name>: what a library links for libxml2, SQLite or
# Boost.Program_options; the consuming executable's BASIL_STATIC_DEPS picks
# the archives or the shared library.
set(_static "$<BOOL:$<TARGET_PROPERTY:BASIL_STATIC_DEPS>>")
function(basil_dependency name shared)
  add_library(basil_dep_${name} INTERFACE)
  if(BASIL_LEAN_ACTIVE)
    target_link_libraries(basil_dep_${name} INTERFACE
      "$<${_static}:${ARGN}>" "$<$<NOT:${_static}>:${shared}>")
  else()
    target_link_libraries(basil_dep_${name} INTERFACE ${shared})
  endif()
endfunction()

# basil_lean_executable(target): ask for the archives (when active). Its
# libraries are compiled a file at a time (BASIL_PER_CALL: the end of the
# top CMakeLists.txt).
function(basil_lean_executable target)
  set_target_properties(${target} PROPERTIES BASIL_PER_CALL ON)
  if(BASIL_LEAN_ACTIVE)
    set_target_properties(${target} PROPERTIES BASIL_STATIC_DEPS ON)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  endif()
endfunction()

# basil_static_executable(target bindir): basil_lean_executable, and when
# active a fully static program (glibc too: no dynamic loader, no relocation
# of a position-independent executable at start), with its debug information
# in TARGET.debug beside it in the build tree, installed to BINDIR/.debug/;
# gdb finds either through the GNU debug link. Measured
# per call on this machine: apbasil_proxy 1.06 -> 0.76 ms against a server
# answering at once, the emulator's QUERY SUMMARY 1.92 -> 1.42 ms and a
# further 0.1 ms without the debug sections. Only for programs that need no
# name service (no user or host look-up): that part of glibc cannot be
# linked statically. The linker warns that libxml2 (nanohttp) and SQLite
# (extension loading) reference getaddrinfo and dlopen; neither is called.
function(basil_static_executable target bindir)
  basil_lean_executable(${target})
  if(NOT BASIL_LEAN_ACTIVE)
    return()
  endif()
  target_link_options(${target} PRIVATE -static)
  if(NOT BASIL_SPLIT_DEBUG)
    return()
  elseif(NOT CMAKE_OBJCOPY)
    message(STATUS "${target}: no objcopy, its debug information stays in the program")
  else()
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:${target}> $<TARGET_FILE:${target}>.debug
      COMMAND ${CMAKE_OBJCOPY} --strip-debug --add-gnu-debuglink=$<TARGET_FILE:${target}>.debug
              $<TARGET_FILE:${target}>
      VERBATIM)
    install(FILES $<TARGET_FILE:${target}>.debug DESTINATION ${bindir}/.debug)
  endif()
endfunction()
