/* clone-vm.c - a child on its own stack sharing the starter's memory (see clone-vm.h). */
#include "clone-vm.h"

#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef CLONE_VM
#define CLONE_VM 0x00000100
#endif

#if defined(__SANITIZE_ADDRESS__)
#define ST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ST_ASAN 1
#endif
#endif

#if defined(__x86_64__) && !defined(ST_ASAN)
#define ST_HAVE_CLONE3_VM 1
/* long st_clone3_vm_raw(args, size, fn, arg): the clone3 system call (435); the parent
 * returns its result.  The child starts on the new stack with the parent's registers but
 * %rax = 0 and %rsp = stack + stack_size: fn and arg wait in %r8 and %r9, which the
 * syscall instruction keeps (it clobbers %rcx and %r11 only).  %rbp is zeroed so a
 * backtrace ends there; the stack top is 16-byte aligned, so fn is entered as by a call
 * from an aligned frame.  If fn returns, exit (60) with its value: the child must never
 * return into the frames above, which are the parent's. */
__asm__(".text\n"
        ".globl st_clone3_vm_raw\n"
        ".hidden st_clone3_vm_raw\n"
        ".type st_clone3_vm_raw,@function\n"
        ".p2align 4\n"
        "st_clone3_vm_raw:\n"
        "\tmovq %rdx, %r8\n"
        "\tmovq %rcx, %r9\n"
        "\tmovl $435, %eax\n"
        "\tsyscall\n"
        "\ttestq %rax, %rax\n"
        "\tjz 1f\n"
        "\tret\n"
        "1:\n"
        "\txorl %ebp, %ebp\n"
        "\tmovq %r9, %rdi\n"
        "\tcall *%r8\n"
        "\tmovl %eax, %edi\n"
        "\tmovl $60, %eax\n"
        "\tsyscall\n"
        "\tud2\n"
        ".size st_clone3_vm_raw, .-st_clone3_vm_raw\n");
long st_clone3_vm_raw(st_clone_args *args, size_t size, int (*fn)(void *), void *arg);
#endif

bool st_clone3_vm_supported(void)
{
#ifdef ST_HAVE_CLONE3_VM
        return true;
#else
        return false;
#endif
}

bool st_clone_vm_allowed(void)
{
#ifdef ST_ASAN
        return false;
#else
        return true;
#endif
}

int st_vm_stack_map(st_vm_stack *s, size_t bytes, tr_error *err)
{
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        size_t len = (bytes + page - 1) / page * page + page;
        /* NORESERVE: only the pages the child touches are ever charged */
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1,
                       0);
        if (m == MAP_FAILED)
                return tr_error_setx(err, errno, "mapping a stack for the child");
        if (mprotect(m, page, PROT_NONE) < 0) {
                int e = errno;
                munmap(m, len);
                return tr_error_setx(err, e, "the child's stack guard page");
        }
        s->map = m;
        s->bytes = len;
        return 0;
}

void *st_vm_stack_data(const st_vm_stack *s, size_t reserve)
{
        uintptr_t end = (uintptr_t) s->map + s->bytes;
        return (void *) ((end - reserve) & ~(uintptr_t) 15);
}

void st_vm_stack_unmap(st_vm_stack *s)
{
        if (s->map)
                munmap(s->map, s->bytes);
        s->map = NULL;
        s->bytes = 0;
}

long st_clone3_vm(st_clone_args *args, const st_vm_stack *s, size_t reserve, int (*fn)(void *), void *arg)
{
#ifdef ST_HAVE_CLONE3_VM
        uintptr_t lo = (uintptr_t) s->map; /* the guard page is the stack's lowest page */
        uintptr_t top = (uintptr_t) st_vm_stack_data(s, reserve);
        args->flags |= CLONE_VM;
        args->stack = (uint64_t) lo;
        args->stack_size = (uint64_t) (top - lo);
        return st_clone3_vm_raw(args, sizeof *args, fn, arg);
#else
        (void) args;
        (void) s;
        (void) reserve;
        (void) fn;
        (void) arg;
        return -ENOSYS;
#endif
}
