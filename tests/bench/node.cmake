# bench-node: a whole execute node, HTCondor-shaped (20 jobs polled every 5 s, churn, 5,000
# background processes, 220 s; --short 40 s and 1,000), procd and, where given
# (--condor-procd PATH or $CONDOR_PROCD), condor_procd: both daemons' CPU.  Run by hand as
# root or by `make bench` (--short with BENCH_QUICK=1): build/tests/bench/bench-node [--short]
add_executable(bench-node ${CMAKE_CURRENT_LIST_DIR}/bench-node.c)
target_link_libraries(bench-node PRIVATE procd_classic_client benchutil trackers)
add_dependencies(bench-node procd)
