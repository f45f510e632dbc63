# procd_add_test(NAME name SOURCES a.c b.c LIBS lib... [LABELS unit|integration|lane] [TIMEOUT s])
# Label `lane`: a mode-dependent integration test that the CI guest lanes run in a pure-v2,
# a pure-v1 and a hybrid guest (tests/vm/lanes --ci, make test-vm-ci); the host runs it too.
# Builds a CUnit test program and registers it with ctest.  Fixture files are found through
# the PROCD_FIXTURES environment variable; every test also gets the stale-cgroup sweep as a
# ctest fixture so a crashed run leaves nothing behind.
function(procd_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE procd_testsupport ${T_LIBS} PkgConfig::CUNIT)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES
    TIMEOUT ${T_TIMEOUT}
    LABELS "${T_LABELS}"
    FIXTURES_REQUIRED procd_sweep
    ENVIRONMENT "PROCD_FIXTURES=${PROJECT_SOURCE_DIR}/tests/fixtures;PROCD_BUILD_DIR=${PROJECT_BINARY_DIR};G_DEBUG=fatal-criticals")
endfunction()
