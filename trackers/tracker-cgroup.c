/* tracker-cgroup.c: being written */
