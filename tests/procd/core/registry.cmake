# procd/core/registry.c alone: registration, lookup, placement, unregister folding, watchers.
procd_add_test(NAME test_registry SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_registry.c
               LIBS procd_test_harness procd_core LABELS unit TIMEOUT 120)
