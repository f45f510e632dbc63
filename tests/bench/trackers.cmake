# Benchmarks are programs, not tests: built with the tree, run by hand (make bench).
add_executable(bench-trackers ${CMAKE_CURRENT_LIST_DIR}/bench-trackers.c)
target_link_libraries(bench-trackers PRIVATE trackers)
