# A SIGKILLed starter (with procd, embedded) and a starter across a procd restart.
procd_add_test(NAME test_starter_crash SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_starter_crash.c ${CMAKE_CURRENT_LIST_DIR}/starter-run.c
               LIBS procd_starter procd_test_harness LABELS "integration;lane" TIMEOUT 300)
add_dependencies(test_starter_crash procd-starter)
if(TARGET procd)
  add_dependencies(test_starter_crash procd)
endif()
