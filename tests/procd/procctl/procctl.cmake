# procd/procctl/procctl.c: the CLI against a procd it starts.
procd_add_test(NAME test_procctl SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procctl.c
               LIBS procd_test_harness LABELS integration TIMEOUT 120)
add_dependencies(test_procctl procd procctl)
