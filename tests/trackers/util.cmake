procd_add_test(NAME test_util SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_util.c LIBS trackers LABELS unit TIMEOUT 60)
procd_add_test(NAME test_usage SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_usage.c LIBS trackers LABELS unit TIMEOUT 60)
procd_add_test(NAME test_pidset SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pidset.c LIBS trackers LABELS unit TIMEOUT 60)
procd_add_test(NAME test_error SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_error.c LIBS trackers LABELS unit TIMEOUT 60)
