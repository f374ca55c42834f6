# The files `cmake --install` puts beside the programs (GNUInstallDirs; the
# programs are installed by their own folders). The layout is the Debian
# packages' (debian/*.install take these paths as they are), so that a man
# page names one path for both:
#   sbin/               basild, apbasil_proxy, apkill_proxy (the paths
#                       conf/basild.service and conf/cray.conf name),
#                       basil-slurm (conf/basil-slurm.conf)
#   bin/                basilctl, basil-emulator
#   libexec/basild/     apbasil_proxy-fallback (apbasil_proxy looks in
#                       ../libexec/basild/),
#                       basil_gateway built here
#   share/man/          the manual pages (apkill_proxy.8 a link to
#                       apbasil_proxy.8)
#   share/bash-completion/completions/basilctl   basilctl's completion
#   share/doc/PACKAGE/  each package's examples (conf/) and, for
#                       apbasil-proxy, basil_gateway.c to build on the main
#                       system (apbasil_proxy(8), "The gateway helper"):
#       basild/examples/          basild.conf, failover/ (two controllers),
#                                 prometheus/ (alerting rules, their tests,
#                                 a scrape configuration), site/ (a
#                                 one-host site with Slurm and the emulator)
#       apbasil-proxy/examples/   apbasil_proxy.conf, cray.conf
#       apbasil-proxy/            basil_gateway.c
#       basil-emulator/examples/  emulator-system.example
#       basil-slurm/examples/     basil-slurm.conf, plugstack.conf
#   lib/<triplet>/slurm-wlm/ reduced_auto_affinity.so, in Debian's Slurm
#                       PluginDir with prefix /usr (BASIL_SLURM_PLUGINDIR)
#   lib/systemd/system/ basild.service, its ExecStart naming the installed
#                       basild (BASIL_SYSTEMD_UNITDIR, relative to the prefix
#                       unless absolute; the Debian build sets /lib/systemd/system)

# apbasil_proxy finds its fallback at ../libexec/basild/ from its own folder.
if(NOT CMAKE_INSTALL_SBINDIR STREQUAL "sbin" OR NOT CMAKE_INSTALL_LIBEXECDIR STREQUAL "libexec")
  message(WARNING "apbasil_proxy looks for apbasil_proxy-fallback beside it and in ../libexec/basild/: "
                  "with CMAKE_INSTALL_SBINDIR=${CMAKE_INSTALL_SBINDIR} and "
                  "CMAKE_INSTALL_LIBEXECDIR=${CMAKE_INSTALL_LIBEXECDIR} it will not find it")
endif()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}
        FILES_MATCHING PATTERN "*.[1-8]")  # links stay links
set(basil_docdir ${CMAKE_INSTALL_DATAROOTDIR}/doc)
install(FILES ${PROJECT_SOURCE_DIR}/conf/basild.conf DESTINATION ${basil_docdir}/basild/examples)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/conf/failover DESTINATION ${basil_docdir}/basild/examples)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/conf/prometheus DESTINATION ${basil_docdir}/basild/examples)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/conf/site DESTINATION ${basil_docdir}/basild/examples)
install(FILES ${PROJECT_SOURCE_DIR}/conf/bash-completion/basilctl
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions)
install(FILES ${PROJECT_SOURCE_DIR}/conf/apbasil_proxy.conf ${PROJECT_SOURCE_DIR}/conf/cray.conf
        DESTINATION ${basil_docdir}/apbasil-proxy/examples)
install(FILES ${PROJECT_SOURCE_DIR}/basild/conduit/basil_gateway.c DESTINATION ${basil_docdir}/apbasil-proxy)
install(FILES ${PROJECT_SOURCE_DIR}/conf/emulator-system.example DESTINATION ${basil_docdir}/basil-emulator/examples)
install(FILES ${PROJECT_SOURCE_DIR}/conf/basil-slurm.conf DESTINATION ${basil_docdir}/basil-slurm/examples)
if(NOT BASIL_SANITIZE)  # the SPANK plugin's, which the sanitizer tree does not build
  install(FILES ${PROJECT_SOURCE_DIR}/conf/plugstack.conf DESTINATION ${basil_docdir}/basil-slurm/examples)
endif()

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
