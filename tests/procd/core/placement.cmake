# procd/core/family-cgroup.c placement (issue 16): procd never undoes another manager's cgroup placement; run in the
# guest lanes too (pure v2, pure v1, hybrid).
procd_add_test(NAME test_placement SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_placement.c
               LIBS procd_test_harness procd_core LABELS "integration;lane" TIMEOUT 300)
add_dependencies(test_placement procd)
