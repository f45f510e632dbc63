/* cgroup-tick.c - a host-wide count of cgroup changes kept by a BPF program (see
 * cgroup-tick.h).
 *
 * The program (BPF_PROG_TYPE_RAW_TRACEPOINT; its context is not read):
 *     r1 = &counter              (ld_imm64, BPF_PSEUDO_MAP_VALUE: the array's value 0)
 *     r2 = 1
 *     lock *(u64 *)(r1 + 0) += r2
 *     r0 = 0; exit
 */
#include "cgroup-tick.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf-sys.h"
#include "util.h"

static const char *const tracepoints[] = {
        "cgroup_attach_task", "cgroup_transfer_tasks", "cgroup_mkdir", "cgroup_rmdir", "cgroup_rename",
};
#define N_TP (sizeof tracepoints / sizeof tracepoints[0])

struct tr_cg_tick {
        const uint64_t *counter; /* the array's value, mapped read-only */
        size_t map_bytes;
        int links[N_TP];
};

void tr_cg_tick_free(tr_cg_tick *t)
{
        if (!t)
                return;
        for (size_t i = 0; i < N_TP; i++)
                if (t->links[i] >= 0)
                        close(t->links[i]);
        if (t->counter)
                munmap((void *) t->counter, t->map_bytes);
        free(t);
}

static int map_create(void)
{
        union bpf_attr a;
        memset(&a, 0, sizeof a);
        a.map_type = BPF_MAP_TYPE_ARRAY;
        a.key_size = sizeof(uint32_t);
        a.value_size = sizeof(uint64_t);
        a.max_entries = 1;
        a.map_flags = BPF_F_MMAPABLE;
        memcpy(a.map_name, "procd_cg_tick", sizeof "procd_cg_tick");
        return tr_sys_bpf(BPF_MAP_CREATE, &a);
}

static int prog_load(int map_fd)
{
        const struct bpf_insn insns[] = {
                { .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1, .src_reg = BPF_PSEUDO_MAP_VALUE, .imm = map_fd },
                { .imm = 0 }, /* the value's offset */
                { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 1 },
                { .code = BPF_STX | BPF_DW | BPF_ATOMIC, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_2, .imm = BPF_ADD },
                { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
                { .code = BPF_JMP | BPF_EXIT },
        };
        union bpf_attr a;
        memset(&a, 0, sizeof a);
        a.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
        a.insns = tr_bpf_ptr(insns);
        a.insn_cnt = sizeof insns / sizeof insns[0];
        a.license = tr_bpf_ptr("GPL");
        memcpy(a.prog_name, "procd_cg_tick", sizeof "procd_cg_tick");
        int fd;
        for (int tries = 0; (fd = tr_sys_bpf(BPF_PROG_LOAD, &a)) == -EAGAIN && tries < 5; tries++)
                ; /* the verifier under memory pressure */
        return fd;
}

static int attach(int prog_fd, const char *name)
{
        union bpf_attr a;
        memset(&a, 0, sizeof a);
        a.raw_tracepoint.name = tr_bpf_ptr(name);
        a.raw_tracepoint.prog_fd = (uint32_t) prog_fd;
        return tr_sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
}

/* The map mapped and the program attached to every tracepoint: 0, or -errno (what was
 * made stays in t, for tr_cg_tick_free). */
static int setup(tr_cg_tick *t)
{
        _cleanup_close_ int map_fd = map_create();
        if (map_fd < 0)
                return map_fd;
        long page = sysconf(_SC_PAGESIZE);
        t->map_bytes = page > 0 ? (size_t) page : 4096;
        /* the mapping keeps the map, the links the program: both fds closed here */
        void *p = mmap(NULL, t->map_bytes, PROT_READ, MAP_SHARED, map_fd, 0);
        if (p == MAP_FAILED)
                return -errno;
        t->counter = p;
        _cleanup_close_ int prog_fd = prog_load(map_fd);
        if (prog_fd < 0)
                return prog_fd;
        for (size_t i = 0; i < N_TP; i++) {
                t->links[i] = attach(prog_fd, tracepoints[i]);
                if (t->links[i] < 0)
                        return t->links[i];
        }
        return 0;
}

int tr_cg_tick_new(tr_cg_tick **out)
{
        *out = NULL;
        tr_cg_tick *t = calloc(1, sizeof *t);
        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < N_TP; i++)
                t->links[i] = -1;
        int r = setup(t);
        if (r < 0) {
                tr_cg_tick_free(t);
                return r;
        }
        *out = t;
        return 0;
}

uint64_t tr_cg_tick_now(const tr_cg_tick *t) { return __atomic_load_n(t->counter, __ATOMIC_ACQUIRE); }
