# Every third-party package the project uses, found here and nowhere else.
# A required one that is missing stops the configure step; libsystemd, the
# one optional package, is reported either way.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
# libxml2 and SQLite through pkg-config: their targets, and the libraries a
# static link needs (cmake/BasilLean.cmake).
pkg_check_modules(LIBXML2 REQUIRED IMPORTED_TARGET GLOBAL libxml-2.0)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET GLOBAL sqlite3)
find_package(nlohmann_json 3 REQUIRED)
# toml++ (the configuration parser): basild uses it header-only.
pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET GLOBAL tomlplusplus)
# The gateway helper's answers, compressed on their way (frames.h, Z frame).
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET GLOBAL liblz4)

if(BASIL_FUZZ)
  # The control request parser's fuzz target needs Boost's headers only.
  find_package(Boost 1.74 REQUIRED)
  return()
endif()

find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
pkg_check_modules(LIBSSH REQUIRED IMPORTED_TARGET GLOBAL libssh>=0.10)
pkg_check_modules(SYSTEMD QUIET IMPORTED_TARGET GLOBAL libsystemd)
if(SYSTEMD_FOUND)
  message(STATUS "libsystemd ${SYSTEMD_VERSION}: basild tells systemd when it is ready (sd_notify)")
else()
  message(STATUS "libsystemd: not found; basild is built without sd_notify "
                 "(conf/basild.service's Type=notify then needs Type=simple)")
endif()
# Slurm's client library (Debian libslurm-dev): basil-slurm reads and
# updates job records and ends a job its prolog refused FAILED through it.
# It loads it in the child that calls it (slurm/libslurm.h), by the SONAME
# of the library found here; the SPANK plugins need only its headers.
find_path(SLURM_INCLUDE_DIR slurm/slurm.h REQUIRED)
find_library(SLURM_LIBRARY slurm REQUIRED)
execute_process(COMMAND ${CMAKE_OBJDUMP} -p "${SLURM_LIBRARY}" OUTPUT_VARIABLE _slurm_dynamic
                RESULT_VARIABLE _slurm_objdump ERROR_QUIET)
string(REGEX MATCH "SONAME +([^ \n]+)" _slurm_soname "${_slurm_dynamic}")
if(NOT _slurm_objdump EQUAL 0 OR NOT CMAKE_MATCH_1)
  message(FATAL_ERROR "cannot read the SONAME of ${SLURM_LIBRARY} (${CMAKE_OBJDUMP} -p)")
endif()
set(SLURM_SONAME "${CMAKE_MATCH_1}")
message(STATUS "libslurm: ${SLURM_SONAME}, loaded by basil-slurm's children")
# hwloc (Debian libhwloc-dev): the reduced-auto-affinity SPANK plugin reads
# the node's sockets, cores and hardware threads through it.
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET GLOBAL hwloc)
if(BASIL_TESTS)
  find_package(GTest REQUIRED)
endif()
if(BASIL_BENCH)
  find_package(benchmark REQUIRED)
endif()
