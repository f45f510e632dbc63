# The job's boundary through the real procd-starter: device rules, private /tmp, PID namespace.
procd_add_test(NAME test_boundary SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_boundary.c ${CMAKE_CURRENT_LIST_DIR}/starter-run.c
               LIBS procd_starter procd_test_harness PkgConfig::LIBBPF LABELS "integration;lane" TIMEOUT 300)
add_dependencies(test_boundary procd-starter)
