# bench-fds: procd's open fds and RSS per family registered and polled (10,000 families;
# --short 1,000), each beside its target, and its answer at the fd limit.  Counts, not
# times.  Run by hand as root or by `make bench` (--short with BENCH_QUICK=1):
# build/tests/bench/bench-fds [--short]
add_executable(bench-fds ${CMAKE_CURRENT_LIST_DIR}/bench-fds.c)
target_link_libraries(bench-fds PRIVATE procd_classic_client benchutil trackers)
add_dependencies(bench-fds procd)
