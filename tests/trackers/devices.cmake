# device rules: parser, generated BPF program and v1 plan (unit); the filter on a real cgroup
# and the GPU node finder on mknod'ed nodes (integration).
procd_add_test(NAME test_devices SOURCES test_devices.c LIBS trackers PkgConfig::LIBBPF LABELS "integration;lane" TIMEOUT 120)
