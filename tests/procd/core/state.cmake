# procd/core/state.c: the state file (unit, fixtures).
procd_add_test(NAME test_state SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_state.c
               LIBS procd_core LABELS unit TIMEOUT 60)
