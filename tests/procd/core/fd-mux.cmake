# procd/core/fd-mux.c: the fds that rarely fire, in one epoll set (one main-loop source).
procd_add_test(NAME test_fd_mux SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fd_mux.c
               LIBS procd_core PkgConfig::GLIB LABELS unit)
