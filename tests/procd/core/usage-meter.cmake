# procd/core/usage-meter.c: one usage meter for both transports.
procd_add_test(NAME test_usage_meter SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_usage_meter.c
               LIBS procd_core LABELS unit)
