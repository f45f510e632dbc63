/* test_clone_vm.c - starter/clone-vm.c: the CLONE_VM child's stack and clone3 trampoline.
 *
 * The child must run fn(arg) on the given stack, share the parent's memory, exit with fn's
 * value if fn returns, and never come back into the parent's frames; the stack's lowest
 * page must be PROT_NONE.  Where the build has no st_clone3_vm (another architecture, an
 * ASan build) the clone cases say so and check that it answers -ENOSYS. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "starter/clone-vm.h"
#include "testsupport.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define STACK_BYTES (64 * 1024)

/* What the child saw, written into the shared memory. */
struct seen {
        volatile pid_t pid;
        volatile uintptr_t local; /* the address of one of its locals: on the new stack */
        int ret;                  /* what fn returns (0: it _exits with 9 instead) */
};

static int child_fn(void *arg)
{
        struct seen *s = arg;
        int here = 0;
        s->local = (uintptr_t) &here;
        s->pid = (pid_t) syscall(SYS_getpid);
        if (s->ret)
                return s->ret; /* the trampoline exits with it */
        _exit(9);
}

/* Whether [addr, addr+len) is mapped with the permissions perms ("---p", "rw-p"). */
static bool mapped_as(uintptr_t addr, size_t len, const char *perms)
{
        FILE *f = fopen("/proc/self/maps", "re");
        if (!f)
                return false;
        char line[512];
        bool ok = false;
        while (fgets(line, sizeof line, f)) {
                unsigned long lo, hi;
                char p[8];
                if (sscanf(line, "%lx-%lx %7s", &lo, &hi, p) == 3 && lo <= addr && addr + len <= hi) {
                        ok = strcmp(p, perms) == 0;
                        break;
                }
        }
        fclose(f);
        return ok;
}

static void test_stack_layout(void)
{
        st_vm_stack s = ST_VM_STACK_INIT;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(st_vm_stack_map(&s, STACK_BYTES, &err), 0);
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        uintptr_t base = (uintptr_t) s.map;
        CU_ASSERT_TRUE(s.bytes >= STACK_BYTES + page);
        CU_ASSERT_TRUE(mapped_as(base, page, "---p"));                     /* the guard page */
        CU_ASSERT_TRUE(mapped_as(base + page, s.bytes - page, "rw-p"));    /* the stack */
        uintptr_t data = (uintptr_t) st_vm_stack_data(&s, 100);
        CU_ASSERT_EQUAL(data % 16, 0);
        CU_ASSERT_TRUE(data + 100 <= base + s.bytes && data + 100 + 16 > base + s.bytes);
        st_vm_stack_unmap(&s);
        CU_ASSERT_PTR_NULL(s.map);
        st_vm_stack_unmap(&s); /* idempotent */
}

/* One clone: fn sees its stack and the shared memory; the exit status is the expected one. */
static void clone_once(int ret, int want_status)
{
        st_vm_stack s = ST_VM_STACK_INIT;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(st_vm_stack_map(&s, STACK_BYTES, &err), 0);
        static struct seen seen; /* shared: the parent's memory is the child's */
        memset(&seen, 0, sizeof seen);
        seen.ret = ret;
        int pidfd = -1;
        st_clone_args args;
        memset(&args, 0, sizeof args);
        args.flags = CLONE_PIDFD;
        args.pidfd = (uint64_t) (uintptr_t) &pidfd;
        args.exit_signal = SIGCHLD;
        long pid = st_clone3_vm(&args, &s, 64, child_fn, &seen);
        if (!st_clone3_vm_supported()) {
                printf("\n    no st_clone3_vm in this build (architecture or ASan): -ENOSYS expected ");
                CU_ASSERT_EQUAL(pid, -ENOSYS);
                st_vm_stack_unmap(&s);
                return;
        }
        CU_ASSERT_TRUE_FATAL(pid > 0);
        siginfo_t si;
        memset(&si, 0, sizeof si);
        CU_ASSERT_EQUAL(waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED), 0);
        CU_ASSERT_EQUAL(si.si_code, CLD_EXITED);
        CU_ASSERT_EQUAL(si.si_status, want_status);
        CU_ASSERT_EQUAL(seen.pid, (pid_t) pid); /* written by the child into our memory */
        uintptr_t lo = (uintptr_t) s.map, top = (uintptr_t) st_vm_stack_data(&s, 64);
        CU_ASSERT_TRUE(seen.local > lo && seen.local < top); /* it ran on the given stack */
        CU_ASSERT_EQUAL(args.flags & 0x100, 0x100);          /* CLONE_VM was added */
        close(pidfd);
        st_vm_stack_unmap(&s);
}

static void test_clone_exits(void) { clone_once(0, 9); }
static void test_clone_fn_returns(void) { clone_once(5, 5); }

int main(void)
{
        CU_TestInfo tests[] = {
                { "stack: guard page below, data at an aligned top", test_stack_layout },
                { "clone3 VM: the child runs on the stack, shares memory, _exits", test_clone_exits },
                { "clone3 VM: fn returning ends the child with its value", test_clone_fn_returns },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("clone-vm", NULL, NULL, tests);
}
