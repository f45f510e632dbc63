# make install into a scratch root (DESTDIR) and the Debian packages (dpkg-deb -c).  Shell
# tests: they drive cmake --install and dpkg-buildpackage as an admin would.
configure_file(${CMAKE_CURRENT_LIST_DIR}/paths.sh.in ${CMAKE_CURRENT_BINARY_DIR}/paths.sh @ONLY)
add_test(NAME test_install COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_install.sh ${CMAKE_CURRENT_BINARY_DIR}/paths.sh)
set_tests_properties(test_install PROPERTIES TIMEOUT 300 LABELS "integration;packaging" SKIP_RETURN_CODE 77)
if(PROCD_SANITIZE)
  # the installed library carries ASan+UBSan: the client program is built with them too, so
  # that their runtime comes first
  set_tests_properties(test_install PROPERTIES ENVIRONMENT "PROCD_TEST_CFLAGS=-fsanitize=address,undefined")
endif()
add_test(NAME test_deb COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_deb.sh ${CMAKE_CURRENT_BINARY_DIR}/paths.sh)
set_tests_properties(test_deb PROPERTIES TIMEOUT 1200 LABELS "integration;packaging" SKIP_RETURN_CODE 77)
