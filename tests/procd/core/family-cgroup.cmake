# procd/core/family-cgroup.c: family cgroups in-process and through procd.
procd_add_test(NAME test_family_cgroup SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_family_cgroup.c
               LIBS procd_test_harness procd_core LABELS "integration;lane" TIMEOUT 300)
add_dependencies(test_family_cgroup procd)
