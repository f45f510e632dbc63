# bench-classic: REGISTER_SUBFAMILY, GET_USAGE and KILL_FAMILY through the classic FIFO
# transport vs the D-Bus transport, server CPU per call, with 1,000 families and 5,000
# background processes.  Run by hand as root: build/tests/bench/bench-classic
# (--daemon <path of condor_procd> measures HTCondor's daemon, FIFO only).
add_executable(bench-classic ${CMAKE_CURRENT_LIST_DIR}/bench-classic.c)
target_link_libraries(bench-classic PRIVATE benchutil procd_classic_client procd_test_harness procd_client trackers)
add_dependencies(bench-classic procd)
# classic-floor: a daemon that only speaks the protocol (every answer success, no work), so
# that `bench-classic --daemon build/tests/bench/classic-floor` measures what the protocol
# alone costs per call here: the floor under GET_USAGE's server CPU.
add_executable(classic-floor ${CMAKE_CURRENT_LIST_DIR}/classic-floor.c)
