# procd-starter launch overhead and kill-to-empty (a program, run by hand; table in NOTES).
add_executable(bench-starter ${CMAKE_CURRENT_LIST_DIR}/bench-starter.c)
target_link_libraries(bench-starter PRIVATE procd_starter)
add_dependencies(bench-starter procd-starter)
