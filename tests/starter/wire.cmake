# starter/procd-wire.c: marshalling and parsing (malformed replies) offline, then live against procd.
procd_add_test(NAME test_procd_wire SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procd_wire.c
               LIBS procd_starter procd_test_harness LABELS integration TIMEOUT 120)
if(TARGET procd)
  add_dependencies(test_procd_wire procd)
endif()
