# procd_add_test(NAME name
#                {SOURCES a.c b.c [LIBS lib...] | COMMAND program args...}
#                [LABELS unit|integration|lane|...] [TIMEOUT s] [ENVIRONMENT VAR=value...]
#                [FIXTURE_SETUP f | FIXTURE_CLEANUP f] [NO_SWEEP])
# The one way a test is registered with ctest: every test gets SKIP_RETURN_CODE 77 (a test
# that cannot run here exits 77 after printing why, and ctest counts it as skipped, never as a
# pass), a timeout (300 s unless told), and the environment the tests read (PROCD_FIXTURES,
# PROCD_BUILD_DIR).  tests/layout-skips.sh (ctest test_layout_skips) fails when a test lacks
# the skip code, so a bare add_test() shows at once.
# - SOURCES: builds a CUnit test program linked with tests/support (procd_testsupport).
# - COMMAND: a script or program test (shell tests, the sweep).
# Label `lane`: a mode-dependent integration test that the CI guest lanes run in a pure-v2,
# a pure-v1 and a hybrid guest (tests/vm/lanes --ci, make test-vm-ci); the host runs it too.
# Every test needs the stale-cgroup sweep as a ctest fixture (so a crashed run leaves nothing
# behind) unless NO_SWEEP, or it is the sweep itself (FIXTURE_SETUP / FIXTURE_CLEANUP).
function(procd_add_test)
  cmake_parse_arguments(T "NO_SWEEP" "NAME;TIMEOUT;FIXTURE_SETUP;FIXTURE_CLEANUP"
                        "SOURCES;LIBS;LABELS;COMMAND;ENVIRONMENT" ${ARGN})
  if(T_SOURCES AND T_COMMAND)
    message(FATAL_ERROR "procd_add_test(${T_NAME}): SOURCES or COMMAND, not both")
  endif()
  if(T_SOURCES)
    add_executable(${T_NAME} ${T_SOURCES})
    target_link_libraries(${T_NAME} PRIVATE procd_testsupport ${T_LIBS} PkgConfig::CUNIT)
    add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  elseif(T_COMMAND)
    add_test(NAME ${T_NAME} COMMAND ${T_COMMAND})
  else()
    message(FATAL_ERROR "procd_add_test(${T_NAME}): needs SOURCES or COMMAND")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set(_env PROCD_FIXTURES=${PROJECT_SOURCE_DIR}/tests/fixtures PROCD_BUILD_DIR=${PROJECT_BINARY_DIR}
      G_DEBUG=fatal-criticals ${T_ENVIRONMENT})
  set_tests_properties(${T_NAME} PROPERTIES
    SKIP_RETURN_CODE 77
    TIMEOUT ${T_TIMEOUT}
    LABELS "${T_LABELS}"
    ENVIRONMENT "${_env}")
  if(T_FIXTURE_SETUP)
    set_tests_properties(${T_NAME} PROPERTIES FIXTURES_SETUP ${T_FIXTURE_SETUP})
  elseif(T_FIXTURE_CLEANUP)
    set_tests_properties(${T_NAME} PROPERTIES FIXTURES_CLEANUP ${T_FIXTURE_CLEANUP})
  elseif(NOT T_NO_SWEEP)
    set_tests_properties(${T_NAME} PROPERTIES FIXTURES_REQUIRED procd_sweep)
  endif()
endfunction()
