# procd restart and crash (procd/core/restore.c): restores with real processes.
procd_add_test(NAME test_procd_restart SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procd_restart.c
               LIBS procd_test_harness procd_core LABELS "integration;lane" TIMEOUT 1200)
add_dependencies(test_procd_restart procd)
