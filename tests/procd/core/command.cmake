# procd/core/command.c: the command layer in-process (authorization, placement, pid reuse).
procd_add_test(NAME test_procd_command SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procd_command.c
               LIBS procd_test_harness procd_core LABELS integration TIMEOUT 300)
