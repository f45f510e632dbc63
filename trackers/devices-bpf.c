/* devices-bpf.c - v2 device filter: a BPF_PROG_TYPE_CGROUP_DEVICE program generated from
 * the rules as an instruction array (no compiler at build time), loaded with the bpf(2)
 * system call (BPF_PROG_LOAD), attached to the cgroup with BPF_F_ALLOW_MULTI (other programs
 * on the cgroup or its ancestors still run: every one must allow), replaced in place with
 * BPF_F_REPLACE, detached on remove.  The system call directly, not libbpf: four commands
 * are all it takes, and libbpf (with libelf and libz) cost every program linking the
 * trackers ~0.2 ms of dynamic loading at each start, device rules or not.
 *
 * The program (ctx = struct bpf_cgroup_dev_ctx):
 *     r2 = access_type; r3 = r2 & 0xffff (type); r2 >>= 16 (access)
 *     r4 = major; r5 = minor
 *     per rule, last to first:  type/major/minor mismatch -> next rule;
 *                               allow: access & ~granted -> next; deny: !(access & named) -> next
 *                               r0 = verdict; exit
 *     r0 = 1; exit             (default allow, omitted after a rule that matches everything)
 */
#include "devices.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf-sys.h"
#include "util.h"

/* The kernel's uapi header ships no instruction macros. */
#define I_LDX_W(d_, s_, o_) \
        ((struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = (d_), .src_reg = (s_), .off = (o_) })
#define I_ALU_IMM(op_, d_, i_) \
        ((struct bpf_insn){ .code = BPF_ALU64 | (op_) | BPF_K, .dst_reg = (d_), .imm = (i_) })
#define I_MOV_REG(d_, s_) \
        ((struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = (d_), .src_reg = (s_) })
#define I_JMP_IMM(op_, d_, i_, o_) \
        ((struct bpf_insn){ .code = BPF_JMP | (op_) | BPF_K, .dst_reg = (d_), .imm = (i_), .off = (o_) })
#define I_EXIT() ((struct bpf_insn){ .code = BPF_JMP | BPF_EXIT })

enum { R0, R1, R2, R3, R4, R5 };

static int dev_type(char t)
{
        return t == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
}

/* Instructions of one rule's block, into out (NULL: count only). */
static size_t rule_block(const tr_dev_rule *r, struct bpf_insn *out)
{
        struct bpf_insn b[12];
        size_t n = 0;
        /* conditions first with a placeholder offset, patched to "end of block" below */
        size_t jumps[6], nj = 0;
        if (r->type != 'a') {
                jumps[nj++] = n;
                b[n++] = I_JMP_IMM(BPF_JNE, R3, dev_type(r->type), 0);
        }
        if (r->major != TR_DEV_ANY) {
                jumps[nj++] = n;
                b[n++] = I_JMP_IMM(BPF_JNE, R4, (int32_t) r->major, 0);
        }
        if (r->minor != TR_DEV_ANY) {
                jumps[nj++] = n;
                b[n++] = I_JMP_IMM(BPF_JNE, R5, (int32_t) r->minor, 0);
        }
        if (r->access != TR_DEV_RWM) {
                b[n++] = I_MOV_REG(R0, R2);
                if (r->allow) {
                        b[n++] = I_ALU_IMM(BPF_AND, R0, (int32_t) (~r->access & TR_DEV_RWM));
                        jumps[nj++] = n;
                        b[n++] = I_JMP_IMM(BPF_JNE, R0, 0, 0);
                } else {
                        b[n++] = I_ALU_IMM(BPF_AND, R0, (int32_t) r->access);
                        jumps[nj++] = n;
                        b[n++] = I_JMP_IMM(BPF_JEQ, R0, 0, 0);
                }
        }
        b[n++] = I_ALU_IMM(BPF_MOV, R0, r->allow ? 1 : 0);
        b[n++] = I_EXIT();
        for (size_t j = 0; j < nj; j++)
                b[jumps[j]].off = (int16_t) (n - jumps[j] - 1);
        if (out)
                memcpy(out, b, n * sizeof *b);
        return n;
}

static bool matches_all(const tr_dev_rule *r)
{
        return r->type == 'a' && r->major == TR_DEV_ANY && r->minor == TR_DEV_ANY && r->access == TR_DEV_RWM;
}

int tr_dev_bpf_build(const tr_dev_rules *rs, struct bpf_insn **out, size_t *np, tr_error *err)
{
        static const struct bpf_insn head[] = {
                I_LDX_W(R2, R1, offsetof(struct bpf_cgroup_dev_ctx, access_type)),
                I_MOV_REG(R3, R2),
                I_ALU_IMM(BPF_AND, R3, 0xffff),
                I_ALU_IMM(BPF_RSH, R2, 16),
                I_LDX_W(R4, R1, offsetof(struct bpf_cgroup_dev_ctx, major)),
                I_LDX_W(R5, R1, offsetof(struct bpf_cgroup_dev_ctx, minor)),
        };
        size_t total = TR_ARRAY_SIZE(head) + 2;
        for (size_t i = rs->n; i-- > 0;)
                total += rule_block(&rs->r[i], NULL);
        if (total > 4096)
                return tr_error_set(err, E2BIG, "%zu device rules are too many for one program", rs->n);
        struct bpf_insn *p = calloc(total, sizeof *p);
        if (!p)
                return tr_error_set(err, ENOMEM, "out of memory");
        size_t n = 0;
        memcpy(p, head, sizeof head);
        n += TR_ARRAY_SIZE(head);
        bool ended = false;
        for (size_t i = rs->n; i-- > 0 && !ended;) {
                n += rule_block(&rs->r[i], p + n);
                ended = matches_all(&rs->r[i]);
        }
        if (!ended) {
                p[n++] = I_ALU_IMM(BPF_MOV, R0, 1);
                p[n++] = I_EXIT();
        }
        *out = p;
        *np = n;
        return 0;
}

/* BPF_PROG_LOAD of the device program; log (log_size bytes, level 1) only when given.  The
 * verifier may answer EAGAIN under memory pressure: tried again a few times. */
static int prog_load(const struct bpf_insn *insns, size_t n, char *log, uint32_t log_size)
{
        union bpf_attr a;
        memset(&a, 0, sizeof a);
        a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
        a.insns = tr_bpf_ptr(insns);
        a.insn_cnt = (uint32_t) n;
        a.license = tr_bpf_ptr("GPL");
        snprintf(a.prog_name, sizeof a.prog_name, "procd_devices");
        if (log) {
                a.log_buf = tr_bpf_ptr(log);
                a.log_size = log_size;
                a.log_level = 1;
        }
        int fd = -EAGAIN;
        for (int i = 0; i < 5 && fd == -EAGAIN; i++)
                fd = tr_sys_bpf(BPF_PROG_LOAD, &a);
        return fd;
}

static int load(const tr_dev_rules *rs, tr_error *err)
{
        _cleanup_free_ struct bpf_insn *insns = NULL;
        size_t n = 0;
        int r = tr_dev_bpf_build(rs, &insns, &n, err);
        if (r < 0)
                return r;
        int fd = prog_load(insns, n, NULL, 0);
        if (fd < 0) {
                int e = -fd;
                /* again with the verifier's log for the message */
                char log[4096] = "";
                int fd2 = prog_load(insns, n, log, sizeof log);
                if (fd2 >= 0)
                        close(fd2);
                log[sizeof log - 1] = '\0';
                return tr_error_set(err, e, "loading the device program (%zu instructions): %s%s%s", n, strerror(e),
                                    log[0] ? "; verifier: " : "", log);
        }
        return fd;
}

static int bpf_apply(tr_dev_filter *f, tr_cgroup *cg, const tr_dev_rules *rs, tr_error *err)
{
        if (f->bpf_cg_fd < 0) {
                int v2fd = tr_cgroup_v2_fd(cg);
                if (v2fd < 0)
                        return tr_error_set(err, ENOENT, "no v2 cgroup to attach the device program to");
                f->bpf_cg_fd = fcntl(v2fd, F_DUPFD_CLOEXEC, 3);
                if (f->bpf_cg_fd < 0)
                        return tr_error_setx(err, errno, "dup of the v2 cgroup fd");
        }
        _cleanup_close_ int fd = load(rs, err);
        if (fd < 0)
                return fd;
        union bpf_attr a;
        memset(&a, 0, sizeof a);
        a.target_fd = (uint32_t) f->bpf_cg_fd;
        a.attach_bpf_fd = (uint32_t) fd;
        a.attach_type = BPF_CGROUP_DEVICE;
        a.attach_flags = BPF_F_ALLOW_MULTI;
        if (f->bpf_prog_fd >= 0) {
                a.attach_flags |= BPF_F_REPLACE;
                a.replace_bpf_fd = (uint32_t) f->bpf_prog_fd;
        }
        int r = tr_sys_bpf(BPF_PROG_ATTACH, &a);
        if (r < 0)
                return tr_error_set(err, -r, "attaching the device program to cgroup %s: %s",
                                    tr_cgroup_path(cg, tr_cgroup_hierarchies(cg)->v2), strerror(-r));
        struct bpf_prog_info info;
        uint32_t len = sizeof info;
        memset(&info, 0, sizeof info);
        memset(&a, 0, sizeof a);
        a.info.bpf_fd = (uint32_t) fd;
        a.info.info_len = len;
        a.info.info = tr_bpf_ptr(&info);
        if (tr_sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) == 0)
                f->bpf_prog_id = info.id;
        if (f->bpf_prog_fd >= 0)
                close(f->bpf_prog_fd);
        f->bpf_prog_fd = TR_TAKE_FD(fd);
        return 0;
}

static void bpf_remove(tr_dev_filter *f)
{
        /* ENOENT-like failures are fine: a removed cgroup detached it already */
        if (f->bpf_prog_fd >= 0 && f->bpf_cg_fd >= 0) {
                union bpf_attr a;
                memset(&a, 0, sizeof a);
                a.target_fd = (uint32_t) f->bpf_cg_fd;
                a.attach_bpf_fd = (uint32_t) f->bpf_prog_fd;
                a.attach_type = BPF_CGROUP_DEVICE;
                (void) tr_sys_bpf(BPF_PROG_DETACH, &a);
        }
        if (f->bpf_prog_fd >= 0)
                close(f->bpf_prog_fd);
        if (f->bpf_cg_fd >= 0)
                close(f->bpf_cg_fd);
        f->bpf_prog_fd = f->bpf_cg_fd = -1;
}

const tr_dev_ops tr_dev_bpf_ops = { "bpf", bpf_apply, bpf_remove };
