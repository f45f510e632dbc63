# cgroup side of the tracker library: hierarchy discovery, file parsers, the cgroup handle
# (one test program per source file of the handle; cgtest.c holds what they share).
procd_add_test(NAME test_hierarchy SOURCES test_hierarchy.c LIBS trackers LABELS unit)
procd_add_test(NAME test_cgparse SOURCES test_cgparse.c LIBS trackers LABELS unit)
procd_add_test(NAME test_cglimits SOURCES test_cglimits.c cgtest.c LIBS trackers LABELS unit)
procd_add_test(NAME test_backoff SOURCES test_backoff.c LIBS trackers LABELS unit)
procd_add_test(NAME test_cgroup_walk SOURCES test_cgroup_walk.c cgtest.c LIBS trackers LABELS unit)
procd_add_test(NAME test_cgroup SOURCES test_cgroup.c cgtest.c LIBS trackers LABELS "integration;lane" TIMEOUT 300)
procd_add_test(NAME test_cgroup_setup SOURCES test_cgroup_setup.c cgtest.c LIBS trackers LABELS "integration;lane" TIMEOUT 300)
procd_add_test(NAME test_cgroup_stats SOURCES test_cgroup_stats.c cgtest.c LIBS trackers LABELS "integration;lane" TIMEOUT 300)
procd_add_test(NAME test_cgroup_freezer SOURCES test_cgroup_freezer.c cgtest.c LIBS trackers LABELS "integration;lane" TIMEOUT 300)
procd_add_test(NAME test_cgroup_gate SOURCES test_cgroup_gate.c cgtest.c LIBS trackers LABELS "integration;lane" TIMEOUT 300)
procd_add_test(NAME test_cgroup_kill SOURCES test_cgroup_kill.c cgtest.c LIBS trackers LABELS "integration;lane" TIMEOUT 300)
procd_add_test(NAME test_cgroup_subtree SOURCES test_cgroup_subtree.c cgtest.c LIBS trackers LABELS "integration;lane" TIMEOUT 300)
