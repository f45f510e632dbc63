# procd-starter (starter/): option parsing and limit mapping as unit tests; the real binary
# against real cgroups (and a real systemd --user manager) as integration tests.
procd_add_test(NAME test_starter_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_starter_unit.c
               LIBS procd_starter LABELS unit)
procd_add_test(NAME test_starter SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_starter.c ${CMAKE_CURRENT_LIST_DIR}/starter-run.c
               LIBS procd_starter procd_test_harness LABELS "integration;lane" TIMEOUT 300)
add_dependencies(test_starter procd-starter)
if(TARGET procd)
  add_dependencies(test_starter procd) # the "with procd" suite runs the daemon
endif()
# procd-starter on a single v1 hierarchy (a private mount namespace with one cgroup mount)
procd_add_test(NAME test_starter_one_hierarchy
               COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_starter_one_hierarchy.sh $<TARGET_FILE:procd-starter>
               LABELS integration TIMEOUT 60)
