# Lean start-up for the programs that run once per BASIL call (the emulator
# as apbasil, apbasil_proxy). Loading and relocating libxml2 with ICU,
# SQLite and Boost.Program_options costs about 2 ms per process, more than
# the emulator's own work for a QUERY SUMMARY. A target with the property
# BASIL_STATIC_DEPS set to ON links the static archives of those libraries
# (from the same Debian -dev packages) and libstdc++ statically; glibc stays
# shared (apbasil_proxy adds -static on top: apbasil_proxy/CMakeLists.txt). Everything else links the shared libraries as usual.
#
# Off under the sanitizers (ASan wants the shared runtime), with
# -DBASIL_LEAN=OFF, and when an archive is missing.
option(BASIL_LEAN "Link the per-call programs against static archives of their libraries" ON)

set(BASIL_LEAN_ACTIVE OFF)
if(BASIL_LEAN AND NOT BASIL_SANITIZE AND NOT BASIL_FUZZ)
  pkg_check_modules(BASIL_XML2_PC QUIET libxml-2.0)
  pkg_check_modules(BASIL_SQLITE_PC QUIET sqlite3)
  set(_missing "")
  set(BASIL_XML2_ARCHIVES "")
  set(BASIL_SQLITE_ARCHIVES "")
  # The libraries pkg-config names for a static link, as archives. libm,
  # libdl and libpthread are glibc's and stay shared.
  foreach(kind XML2 SQLITE)
    foreach(lib IN LISTS BASIL_${kind}_PC_STATIC_LIBRARIES)
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

# basil_lean_executable(target): ask for the archives (when active).
function(basil_lean_executable target)
  if(BASIL_LEAN_ACTIVE)
    set_target_properties(${target} PROPERTIES BASIL_STATIC_DEPS ON)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  endif()
endfunction()
