# the caller's ancestors held by /proc/PID fds (trackers/ancestry.c)
procd_add_test(NAME test_ancestry SOURCES test_ancestry.c LIBS trackers LABELS unit TIMEOUT 60)
