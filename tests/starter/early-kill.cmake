# procd-starter SIGKILLed 0-200 ms after its start, with procd and embedded: nothing of the
# job may outlive it (the gate and the guard).
procd_add_test(NAME test_starter_early_kill SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_starter_early_kill.c
               ${CMAKE_CURRENT_LIST_DIR}/starter-run.c LIBS procd_starter procd_test_harness LABELS "integration;lane" TIMEOUT 300)
add_dependencies(test_starter_early_kill procd-starter)
if(TARGET procd)
  add_dependencies(test_starter_early_kill procd)
endif()
