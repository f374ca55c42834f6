# The files `cmake --install` puts beside the programs (GNUInstallDirs; the
# programs are installed by their own folders):
#   sbin/               basild, apbasil_proxy, apkill_proxy (the paths
#                       conf/basild.service and conf/cray.conf name),
#                       basil-slurm (conf/basil-slurm.conf)
#   bin/                basilctl, basil-emulator
#   libexec/basild/     apbasil_proxy-fallback (apbasil_proxy looks in
#                       ../libexec/basild/), basil_gateway built here
#   share/basild/       basil_gateway.c, to build on the main system
#                       (apbasil_proxy(8), "The gateway helper")
#   share/man/          the manual pages
#   share/doc/basild/examples/   conf/: basild.conf, apbasil_proxy.conf,
#                       cray.conf, basil-slurm.conf, emulator-system.example
#   lib/systemd/system/ basild.service, its ExecStart naming the installed
#                       basild (BASIL_SYSTEMD_UNITDIR, relative to the prefix
#                       unless absolute)

# apbasil_proxy finds its fallback at ../libexec/basild/ from its own folder.
if(NOT CMAKE_INSTALL_SBINDIR STREQUAL "sbin" OR NOT CMAKE_INSTALL_LIBEXECDIR STREQUAL "libexec")
  message(WARNING "apbasil_proxy looks for apbasil_proxy-fallback beside it and in ../libexec/basild/: "
                  "with CMAKE_INSTALL_SBINDIR=${CMAKE_INSTALL_SBINDIR} and "
                  "CMAKE_INSTALL_LIBEXECDIR=${CMAKE_INSTALL_LIBEXECDIR} it will not find it")
endif()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}
        FILES_MATCHING PATTERN "*.[1-8]")
install(FILES ${PROJECT_SOURCE_DIR}/conf/basild.conf
              ${PROJECT_SOURCE_DIR}/conf/apbasil_proxy.conf
              ${PROJECT_SOURCE_DIR}/conf/cray.conf
              ${PROJECT_SOURCE_DIR}/conf/basil-slurm.conf
              ${PROJECT_SOURCE_DIR}/conf/emulator-system.example
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# The unit names /usr/sbin/basild; installed, it names the basild of the
# prefix given at install time (cmake --install --prefix).
set(BASIL_SYSTEMD_UNITDIR "lib/systemd/system" CACHE STRING
    "Where basild.service is installed (relative to the prefix unless absolute)")
install(CODE "
  set(unitdir \"${BASIL_SYSTEMD_UNITDIR}\")
  if(NOT IS_ABSOLUTE \"\${unitdir}\")
    set(unitdir \"\${CMAKE_INSTALL_PREFIX}/\${unitdir}\")
  endif()
  set(sbindir \"${CMAKE_INSTALL_SBINDIR}\")
  if(NOT IS_ABSOLUTE \"\${sbindir}\")
    set(sbindir \"\${CMAKE_INSTALL_PREFIX}/\${sbindir}\")
  endif()
  file(READ \"${PROJECT_SOURCE_DIR}/conf/basild.service\" unit)
  string(REPLACE \"/usr/sbin/basild \" \"\${sbindir}/basild \" unit \"\${unit}\")
  file(WRITE \"${PROJECT_BINARY_DIR}/install/basild.service\" \"\${unit}\")
  file(INSTALL DESTINATION \"\${unitdir}\" TYPE FILE FILES \"${PROJECT_BINARY_DIR}/install/basild.service\")
")
