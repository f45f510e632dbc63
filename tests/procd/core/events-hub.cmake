# procd/core/events.c: the events hub (sinks, listeners, counters).
procd_add_test(NAME test_events_hub SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_events_hub.c
               LIBS procd_core LABELS unit)
