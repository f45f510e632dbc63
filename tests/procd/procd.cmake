# procd (the daemon, procd/main.c and procd/options.c): end-to-end tests through the client
# library, quotas, limits, a fuzzer and a valgrind run of the daemon.  They start
# build/procd/procd themselves (tests/support/harness.h, on a temporary socket).
procd_add_test(NAME test_procd SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procd.c
               LIBS procd_test_harness LABELS "integration;lane" TIMEOUT 300)
add_dependencies(test_procd procd)
procd_add_test(NAME test_procd_valgrind SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procd_valgrind.c
               LIBS procd_test_harness LABELS integration TIMEOUT 600)
add_dependencies(test_procd_valgrind procd)
procd_add_test(NAME test_procd_quota SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procd_quota.c
               LIBS procd_test_harness PkgConfig::GLIB LABELS integration TIMEOUT 300)
add_dependencies(test_procd_quota procd)
procd_add_test(NAME test_procd_options
               SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procd_options.c ${PROJECT_SOURCE_DIR}/procd/options.c
               LIBS procd_client PkgConfig::GLIB LABELS unit TIMEOUT 60)
target_compile_definitions(test_procd_options PRIVATE PROCD_CONFIG_FILE="/nonexistent/procd-test/procd.conf")
procd_add_test(NAME test_procd_options_default
               SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procd_options_default.c ${PROJECT_SOURCE_DIR}/procd/options.c
               LIBS procd_client PkgConfig::GLIB LABELS unit TIMEOUT 60)
target_compile_definitions(test_procd_options_default PRIVATE
                           PROCD_CONFIG_FILE="${PROJECT_SOURCE_DIR}/tests/fixtures/config/good.conf")
procd_add_test(NAME test_procd_limits SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procd_limits.c
               LIBS procd_test_harness PkgConfig::GLIB LABELS integration TIMEOUT 300)
add_dependencies(test_procd_limits procd)
procd_add_test(NAME test_procd_fuzz SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procd_fuzz.c
               LIBS procd_test_harness LABELS integration TIMEOUT 600)
add_dependencies(test_procd_fuzz procd)
# procd/log-file.c: condor_procd's -L log file and its rotation.
procd_add_test(NAME test_log_file SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_log_file.c ${PROJECT_SOURCE_DIR}/procd/log-file.c
               LIBS trackers PkgConfig::GLIB LABELS unit TIMEOUT 60)
target_compile_definitions(test_log_file PRIVATE G_LOG_DOMAIN="procd")
# events come from v2 inotify or v1 eventfds: a lane test (PROCD_TEST_EVENTS: the slow
# subscriber's count, small in the guests)
procd_add_test(NAME test_events SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_events.c
               LIBS procd_test_harness LABELS "integration;lane" TIMEOUT 300)
add_dependencies(test_events procd procctl)
# issue 17 §2: the audit trail from both faces (D-Bus, the classic FIFO), and the journal's fields
procd_add_test(NAME test_audit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_audit.c
               LIBS procd_classic_client procd_test_harness LABELS integration TIMEOUT 300)
add_dependencies(test_audit procd)
