# Benchmarks are programs, not tests: built with the tree, run by hand (make bench).
add_executable(bench-trackers ${CMAKE_CURRENT_LIST_DIR}/bench-trackers.c)
target_link_libraries(bench-trackers PRIVATE trackers)
# What each kernel file a usage query may read costs here (kept fd vs open/read/close).
add_executable(bench-usage-files ${CMAKE_CURRENT_LIST_DIR}/bench-usage-files.c)
target_link_libraries(bench-usage-files PRIVATE trackers benchutil)
