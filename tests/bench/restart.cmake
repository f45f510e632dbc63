# bench-restart: time for procd to restore 1,000 families after a SIGKILL (cgroup and /proc
# families).  Built, run by hand as root:  build/tests/bench/bench-restart [--families N]
add_executable(bench-restart ${CMAKE_CURRENT_LIST_DIR}/bench-restart.c)
target_link_libraries(bench-restart PRIVATE procd_client trackers)
add_dependencies(bench-restart procd)
