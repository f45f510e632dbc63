procd_add_test(NAME test_tracker SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tracker.c LIBS trackers LABELS "integration;lane")
