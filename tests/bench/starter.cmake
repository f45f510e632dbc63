# procd-starter launch overhead (embedded and with a procd it starts; issue 20: median of 200
# launches, <= 3 ms embedded, <= 4 ms with procd) and kill-to-empty.  Run by `make bench`.
add_executable(bench-starter ${CMAKE_CURRENT_LIST_DIR}/bench-starter.c)
target_link_libraries(bench-starter PRIVATE procd_starter procd_classic_client)
add_dependencies(bench-starter procd)
add_dependencies(bench-starter procd-starter)
