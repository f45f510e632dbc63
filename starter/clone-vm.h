/* clone-vm.h - start a child that shares the starter's memory until it execs.
 *
 * posix_spawn's way (CLONE_VM, the child on a stack of its own): the kernel copies no page
 * tables, the parent takes no copy-on-write faults while the child lives, and the child's
 * exec or exit has no copy of the address space to tear down.  On a 2-vCPU guest of kernel
 * 6.18 a fork-style clone of procd-starter cost 80-220 us of the parent's time and its exec
 * or exit 50-100 us more, against ~25 us for the CLONE_VM clone (NOTES 14.30).
 *
 * The child runs on the parent's memory and thread-local storage (errno among it) with the
 * parent running beside it, so it must:
 *  - read only what the parent does not change while it lives (its own copy of any state
 *    the parent goes on updating);
 *  - make system calls only (no malloc, no stdio: their state is the parent's);
 *  - set errno only while the parent waits for it, or be past caring (the parent is dead);
 *  - end by execve or _exit, never by returning into the parent's frames.
 * The stack is mapped with a PROT_NONE page below it, so an overflow faults instead of
 * writing into the parent's memory.
 *
 * Where the build cannot (another architecture for the clone3 form, an ASan build: its
 * instrumentation keeps per-thread stack bounds the child would break), the callers keep
 * the fork-style clone. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trackers/error.h"

/* The kernel's struct clone_args (linux/sched.h, CLONE_ARGS_SIZE_VER2: 88 bytes), spelled
 * out so that older headers build. */
typedef struct st_clone_args {
        uint64_t flags;
        uint64_t pidfd;
        uint64_t child_tid;
        uint64_t parent_tid;
        uint64_t exit_signal;
        uint64_t stack;
        uint64_t stack_size;
        uint64_t tls;
        uint64_t set_tid;
        uint64_t set_tid_size;
        uint64_t cgroup;
} st_clone_args;

typedef struct st_vm_stack {
        void *map;    /* the mapping, guard page first; NULL: none */
        size_t bytes; /* of the mapping */
} st_vm_stack;

#define ST_VM_STACK_INIT { NULL, 0 }

/* Whether st_clone3_vm exists in this build (x86-64, no ASan). */
bool st_clone3_vm_supported(void);
/* Whether a CLONE_VM child may run instrumented code here (false under ASan). */
bool st_clone_vm_allowed(void);

/* Map a stack of `bytes` (rounded up to pages) with a guard page below; 0 or -errno. */
int st_vm_stack_map(st_vm_stack *s, size_t bytes, tr_error *err);
/* Where `reserve` bytes for the child's own data start at the top of the mapping (16-byte
 * aligned); the child's stack grows down from there. */
void *st_vm_stack_data(const st_vm_stack *s, size_t reserve);
/* Unmap (idempotent).  Only once the child that ran on it has exec'd or been reaped. */
void st_vm_stack_unmap(st_vm_stack *s);

/* clone3(args) with CLONE_VM added and the child on `s`'s stack below `reserve` bytes:
 * the child's pid in the parent, or -errno; the child runs fn(arg), which must not return
 * (if it does, the child exits with its value).  Fills args' stack fields.  -ENOSYS where
 * unsupported (st_clone3_vm_supported). */
long st_clone3_vm(st_clone_args *args, const st_vm_stack *s, size_t reserve, int (*fn)(void *), void *arg);
