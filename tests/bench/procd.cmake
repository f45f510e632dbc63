# bench-procd: GetUsage latency/throughput (cgroup vs /proc family), RSS and idle CPU of
# procd with 1,000 families and 5,000 background processes.  Built, run by hand as root:
#   build/tests/bench/bench-procd [--short]
add_executable(bench-procd ${CMAKE_CURRENT_LIST_DIR}/bench-procd.c)
target_link_libraries(bench-procd PRIVATE procd_client trackers)
add_dependencies(bench-procd procd)
