# procd/core/pid-watch.c: the watchers' pidfds in one epoll set.
procd_add_test(NAME test_pid_watch SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pid_watch.c
               LIBS procd_core PkgConfig::GLIB LABELS unit)
