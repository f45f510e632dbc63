# HTCondor's launch from the root cgroup (issue 19): procd -A makes family cgroups by default
# under a base of its own, and a setsid double-fork escaper dies at KILL_FAMILY.
procd_add_test(NAME test_classic_root SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_classic_root.c
               LIBS procd_classic_client procd_core LABELS "integration;lane" TIMEOUT 120)
add_dependencies(test_classic_root procd)
set_tests_properties(test_classic_root PROPERTIES SKIP_RETURN_CODE 77)
