# procd/core/fd-mux.c: procd's fds in one epoll set (one main-loop source), and the main loop's wait.
procd_add_test(NAME test_fd_mux SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fd_mux.c
               LIBS procd_core PkgConfig::GLIB LABELS unit)
