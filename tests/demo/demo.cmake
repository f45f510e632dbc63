add_executable(procd-demo ${CMAKE_CURRENT_LIST_DIR}/procd-demo.c)
target_link_libraries(procd-demo PRIVATE trackers)
