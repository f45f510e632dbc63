/* bpf-sys.h - the bpf(2) system call as the trackers use it: directly, not through libbpf
 * (devices-bpf.c says why), and the instruction encodings the kernel's uapi header lacks. */
#pragma once

#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* bpf(2): the result, or -errno. */
static inline int tr_sys_bpf(enum bpf_cmd cmd, union bpf_attr *attr)
{
        long r = syscall(__NR_bpf, cmd, attr, sizeof *attr);
        return r < 0 ? -errno : (int) r;
}

static inline uint64_t tr_bpf_ptr(const void *p) { return (uint64_t) (uintptr_t) p; }
