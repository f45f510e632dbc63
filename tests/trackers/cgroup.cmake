# cgroup side of the tracker library: hierarchy discovery, file parsers, the cgroup handle.
procd_add_test(NAME test_hierarchy SOURCES test_hierarchy.c LIBS trackers LABELS unit)
procd_add_test(NAME test_cgparse SOURCES test_cgparse.c LIBS trackers LABELS unit)
procd_add_test(NAME test_cgroup SOURCES test_cgroup.c LIBS trackers LABELS integration TIMEOUT 300)
