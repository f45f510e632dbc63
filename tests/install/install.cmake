# make install into a scratch root (DESTDIR) and the Debian packages (dpkg-deb -c).  Shell
# tests: they drive cmake --install and dpkg-buildpackage as an admin would.
configure_file(${CMAKE_CURRENT_LIST_DIR}/paths.sh.in ${CMAKE_CURRENT_BINARY_DIR}/paths.sh @ONLY)
if(PROCD_SANITIZE)
  # the installed library carries ASan+UBSan: the client program is built with them too, so
  # that their runtime comes first
  set(_install_env PROCD_TEST_CFLAGS=-fsanitize=address,undefined)
endif()
procd_add_test(NAME test_install COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_install.sh ${CMAKE_CURRENT_BINARY_DIR}/paths.sh
               LABELS integration packaging TIMEOUT 300 ENVIRONMENT ${_install_env})
procd_add_test(NAME test_deb COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_deb.sh ${CMAKE_CURRENT_BINARY_DIR}/paths.sh
               LABELS integration packaging TIMEOUT 1200)
