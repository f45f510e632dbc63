# Extra launch cost of the job-boundary options (a program, run by hand; table in NOTES).
add_executable(bench-boundary ${CMAKE_CURRENT_LIST_DIR}/bench-boundary.c)
target_link_libraries(bench-boundary PRIVATE procd_starter)
add_dependencies(bench-boundary procd-starter)
