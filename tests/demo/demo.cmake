add_executable(procd-demo ${CMAKE_CURRENT_LIST_DIR}/procd-demo.c)
target_link_libraries(procd-demo PRIVATE trackers)
# make demo as a test: its last line checks no survivors, no job cgroup left, a clean quit.
procd_add_test(NAME test_demo COMMAND ${CMAKE_CURRENT_LIST_DIR}/demo.sh ${PROJECT_BINARY_DIR}
               LABELS integration TIMEOUT 120)
