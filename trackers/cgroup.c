/* cgroup.c: being written */
