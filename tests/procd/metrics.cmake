# procd's Prometheus face (issue 17 §3): promtool on `procctl metrics` and on the textfile, a
# real node-exporter serving the textfile, the alert rules.  A shell test (external programs).
add_test(NAME test_metrics COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_metrics.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(test_metrics PROPERTIES TIMEOUT 300 LABELS integration SKIP_RETURN_CODE 77
                     FIXTURES_REQUIRED procd_sweep)
# procd without systemd (issue 17 §5): detached, --pidfile, syslog instead of the inherited
# stderr (a private mount namespace binds the test's syslog socket over /dev/log).
add_test(NAME test_detach COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_detach.sh ${PROJECT_BINARY_DIR})
set_tests_properties(test_detach PROPERTIES TIMEOUT 120 LABELS integration SKIP_RETURN_CODE 77
                     FIXTURES_REQUIRED procd_sweep)
