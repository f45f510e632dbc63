/* test_devices.c - device rules (trackers/devices*.c).
 *
 * Unit: the rule parser, the generated BPF program (run by a small interpreter of the
 * instructions it uses, against the reference verdict) and the v1 plan, one line per case.
 * Integration (root): the filter on a real cgroup - a member denied /dev/null gets EPERM,
 * replacing the rules swaps the program in place, freeing detaches it; the v1 strategy
 * alone; the GPU node finder on mknod'ed nodes. */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/devices.h"
#include "trackers/util.h"

/* "+c:1:3:rw -a:*:*:rwm" -> rules (+ allow, - deny); false on a parse error */
static bool rules_from(const char *spec, tr_dev_rules *rs)
{
        memset(rs, 0, sizeof *rs);
        char copy[512];
        snprintf(copy, sizeof copy, "%s", spec);
        char *save = NULL;
        for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
                tr_dev_rule r;
                tr_error err = { 0 };
                if ((t[0] != '+' && t[0] != '-') || tr_dev_rule_parse(t + 1, t[0] == '+', &r, &err) < 0 ||
                    tr_dev_rules_add(rs, &r, &err) < 0) {
                        printf("\nbad rule %s: %s\n", t, err.msg);
                        tr_dev_rules_free(rs);
                        return false;
                }
        }
        return true;
}

/* ---- parser ---- */

static void check_parse(const char *text, bool allow, int want_rc, const char *want_fmt)
{
        tr_dev_rule r;
        tr_error err = { 0 };
        int rc = tr_dev_rule_parse(text, allow, &r, &err);
        char got[64] = "";
        if (rc == 0)
                tr_dev_rule_format(&r, got, sizeof got);
        bool ok = rc == want_rc && (rc != 0 || strcmp(got, want_fmt) == 0) && (rc == 0 || err.msg[0]);
        if (!ok)
                printf("\nparse '%s': rc %d (want %d) '%s' (want '%s') %s\n", text, rc, want_rc, got,
                       want_fmt ? want_fmt : "", err.msg);
        CU_ASSERT_TRUE(ok);
}

static void test_parse(void)
{
        check_parse("c:1:3:rw", true, 0, "allow c:1:3:rw");
        check_parse("c:1:3:wr", false, 0, "deny c:1:3:rw");
        check_parse("b:8:*:m", true, 0, "allow b:8:*:m");
        check_parse("c:*:*:rwm", false, 0, "deny c:*:*:rwm");
        check_parse("a:*:*:rwm", false, 0, "deny a:*:*:rwm");
        check_parse("c:195:255:mwr", true, 0, "allow c:195:255:rwm");
        check_parse("c:4095:1048575:r", true, 0, "allow c:4095:1048575:r");
        check_parse("c:4096:0:r", true, -EINVAL, NULL);      /* major > 12 bits */
        check_parse("c:1:1048576:r", true, -EINVAL, NULL);   /* minor > 20 bits */
        check_parse("a:1:3:rwm", true, -EINVAL, NULL);       /* a takes * only */
        check_parse("x:1:3:r", true, -EINVAL, NULL);
        check_parse("c:1:3", true, -EINVAL, NULL);
        check_parse("c:1:3:", true, -EINVAL, NULL);
        check_parse("c:1:3:rr", true, -EINVAL, NULL);
        check_parse("c:1:3:rx", true, -EINVAL, NULL);
        check_parse("c:1:3:rwmr", true, -EINVAL, NULL);
        check_parse("c::3:r", true, -EINVAL, NULL);
        check_parse("c:-1:3:r", true, -EINVAL, NULL);
        check_parse("c:1:3:r:x", true, -EINVAL, NULL);       /* ACCESS "r:x" */
        check_parse("cc:1:3:r", true, -EINVAL, NULL);
        check_parse("", true, -EINVAL, NULL);
}

/* ---- the generated program, run by an interpreter of the instructions it uses ---- */

static int run_prog(const struct bpf_insn *p, size_t n, const struct bpf_cgroup_dev_ctx *ctx)
{
        uint64_t reg[11] = { 0 };
        for (size_t pc = 0; pc < n; pc++) {
                const struct bpf_insn *i = &p[pc];
                uint64_t src = BPF_SRC(i->code) == BPF_X ? reg[i->src_reg] : (uint64_t) (int64_t) i->imm;
                switch (i->code) {
                case BPF_LDX | BPF_MEM | BPF_W: {
                        if (i->src_reg != 1 || i->off < 0 || (size_t) i->off + 4 > sizeof *ctx)
                                return -1;
                        uint32_t v;
                        memcpy(&v, (const char *) ctx + i->off, 4);
                        reg[i->dst_reg] = v;
                        break;
                }
                case BPF_ALU64 | BPF_MOV | BPF_X:
                case BPF_ALU64 | BPF_MOV | BPF_K: reg[i->dst_reg] = src; break;
                case BPF_ALU64 | BPF_AND | BPF_K: reg[i->dst_reg] &= src; break;
                case BPF_ALU64 | BPF_RSH | BPF_K: reg[i->dst_reg] >>= src; break;
                case BPF_JMP | BPF_JNE | BPF_K:
                        if (reg[i->dst_reg] != src)
                                pc += (size_t) i->off;
                        break;
                case BPF_JMP | BPF_JEQ | BPF_K:
                        if (reg[i->dst_reg] == src)
                                pc += (size_t) i->off;
                        break;
                case BPF_JMP | BPF_EXIT: return (int) reg[0];
                default: return -2; /* an instruction the generator should not emit */
                }
        }
        return -3; /* fell off the end */
}

/* spec: rules; req: "c 1 3 rw"; want: verdict (the reference and the program must agree) */
static void check_prog(const char *spec, const char *req, bool want)
{
        tr_dev_rules rs;
        CU_ASSERT_TRUE_FATAL(rules_from(spec, &rs));
        char type, acc[8];
        unsigned maj, min;
        CU_ASSERT_EQUAL_FATAL(sscanf(req, "%c %u %u %7s", &type, &maj, &min, acc), 4);
        unsigned access = (strchr(acc, 'r') ? TR_DEV_READ : 0) | (strchr(acc, 'w') ? TR_DEV_WRITE : 0) |
                          (strchr(acc, 'm') ? TR_DEV_MKNOD : 0);
        bool ref = tr_dev_rules_allow(&rs, type, maj, min, access);
        struct bpf_insn *p = NULL;
        size_t n = 0;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_dev_bpf_build(&rs, &p, &n, &err), 0);
        struct bpf_cgroup_dev_ctx ctx = {
                .access_type = (access << 16) | (type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR),
                .major = maj,
                .minor = min,
        };
        int got = run_prog(p, n, &ctx);
        if (ref != want || got != (int) want)
                printf("\n[%s] %s: reference %d, program %d (%zu insns), want %d\n", spec, req, ref, got, n, want);
        CU_ASSERT_EQUAL(ref, want);
        CU_ASSERT_EQUAL(got, (int) want);
        free(p);
        tr_dev_rules_free(&rs);
}

static void test_program(void)
{
        check_prog("", "c 1 3 rw", true);                                  /* default allow */
        check_prog("-c:1:3:rwm", "c 1 3 r", false);
        check_prog("-c:1:3:rwm", "c 1 5 r", true);
        check_prog("-c:1:3:rwm", "b 1 3 r", true);                         /* type matters */
        check_prog("-c:1:3:w", "c 1 3 r", true);                           /* deny w: read still fine */
        check_prog("-c:1:3:w", "c 1 3 rw", false);
        check_prog("-c:195:*:rwm", "c 195 7 r", false);                    /* minor wildcard */
        check_prog("-c:*:0:rwm", "c 226 0 w", false);                      /* major wildcard */
        check_prog("-c:*:0:rwm", "c 226 1 w", true);
        check_prog("-a:*:*:rwm", "b 8 0 r", false);                        /* deny everything */
        check_prog("-a:*:*:rwm +c:1:3:rw", "c 1 3 rw", true);              /* whitelist */
        check_prog("-a:*:*:rwm +c:1:3:rw", "c 1 3 m", false);              /* allow needs every bit */
        check_prog("-a:*:*:rwm +c:1:3:rw", "c 1 5 r", false);
        check_prog("+c:1:3:rw -a:*:*:rwm", "c 1 3 r", false);              /* last match wins */
        check_prog("-c:1:*:rwm +c:1:3:r", "c 1 3 r", true);               /* carve-out */
        check_prog("-c:1:*:rwm +c:1:3:r", "c 1 3 rw", false);
        check_prog("-a:*:*:w", "c 1 3 r", true);                           /* partial a */
        check_prog("-a:*:*:w", "b 8 0 w", false);
        check_prog("+a:*:*:rwm -c:1:3:rwm", "c 1 3 r", false);
        check_prog("-c:1:3:rwm +a:*:*:rwm", "c 1 3 r", true);              /* allow-all ends it */
        check_prog("-b:8:*:m +b:8:0:m", "b 8 0 m", true);
        check_prog("-b:8:*:m +b:8:0:m", "b 8 1 m", false);
}

/* the program for a rule list that ends in "match everything" has no default tail */
static void test_program_shape(void)
{
        tr_dev_rules rs;
        CU_ASSERT_TRUE_FATAL(rules_from("-c:1:3:rwm -a:*:*:rwm", &rs));
        struct bpf_insn *p = NULL;
        size_t n = 0;
        CU_ASSERT_EQUAL_FATAL(tr_dev_bpf_build(&rs, &p, &n, NULL), 0);
        /* 6 head + "r0 = 0; exit": the earlier rule is dead and not emitted */
        CU_ASSERT_EQUAL(n, 8);
        free(p);
        tr_dev_rules_free(&rs);
}

/* ---- v1 plan ---- */

/* want: "allow a|deny c 1:3 rwm" or "EOPNOTSUPP" */
static void check_v1(const char *spec, const char *want)
{
        tr_dev_rules rs;
        CU_ASSERT_TRUE_FATAL(rules_from(spec, &rs));
        tr_dev_v1_write *w = NULL;
        size_t n = 0;
        tr_error err = { 0 };
        int rc = tr_dev_v1_plan(&rs, &w, &n, &err);
        char got[512] = "";
        if (rc == -EOPNOTSUPP && err.msg[0])
                snprintf(got, sizeof got, "EOPNOTSUPP");
        for (size_t i = 0; rc == 0 && i < n; i++) {
                size_t l = strlen(got);
                snprintf(got + l, sizeof got - l, "%s%s %s", i ? "|" : "", strcmp(w[i].file, "devices.allow") == 0 ? "allow" : "deny",
                         w[i].value);
        }
        if (strcmp(got, want) != 0)
                printf("\nv1 [%s]: '%s' (want '%s') %s\n", spec, got, want, err.msg);
        CU_ASSERT_STRING_EQUAL(got, want);
        free(w);
        tr_dev_rules_free(&rs);
}

static void test_v1_plan(void)
{
        check_v1("", "allow a");
        check_v1("-c:1:3:rwm", "allow a|deny c 1:3 rwm");
        check_v1("-c:195:*:rw", "allow a|deny c 195:* rw");
        check_v1("-a:*:*:rwm +c:1:3:rw +c:1:5:rwm", "deny a|allow c 1:3 rw|allow c 1:5 rwm");
        check_v1("-c:9:9:rwm -a:*:*:rwm +b:*:*:m", "deny a|allow b *:* m");   /* before "a": dead */
        check_v1("+c:1:3:rwm", "allow a");                                     /* already allowed */
        check_v1("-c:1:3:rwm +c:1:3:r", "allow a|deny c 1:3 rwm|allow c 1:3 r"); /* exact cancel */
        check_v1("-a:*:*:rwm +c:1:3:rw -c:1:3:w", "deny a|allow c 1:3 rw|deny c 1:3 w");
        check_v1("-c:1:*:rwm +c:1:3:r", "EOPNOTSUPP");                        /* carve-out */
        check_v1("-a:*:*:rwm +c:1:*:rw -c:1:3:rw", "EOPNOTSUPP");
        check_v1("-a:*:*:w", "EOPNOTSUPP");                                   /* partial a */
        check_v1("-a:*:*:rwm +c:1:3:r +c:1:3:w", "EOPNOTSUPP");               /* v1 would merge */
        check_v1("-c:1:3:r -c:1:3:w", "allow a|deny c 1:3 r|deny c 1:3 w");    /* merging denies is fine */
}

/* ---- integration: the filter on a real cgroup ---- */

static tr_cgroup *make_cg(const char *name)
{
        char path[PATH_MAX];
        ts_cgroup_path(path, sizeof path, name);
        tr_cgroup *cg = NULL;
        tr_error err = { 0 };
        if (tr_cgroup_create(ts_hierarchies(), path, &cg, &err) < 0) {
                printf("\ncreate %s: %s\n", path, err.msg);
                return NULL;
        }
        return cg;
}

typedef struct open_arg {
        tr_cgroup *cg;
        const char *dev;
} open_arg;

/* in a child: join the cgroup, open the device; exit 0 when it opened, else its errno */
static int open_in_cg(void *p)
{
        open_arg *a = p;
        if (tr_cgroup_attach(a->cg, getpid(), NULL) < 0)
                return 100;
        int fd = open(a->dev, O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return errno;
        close(fd);
        return 0;
}

static int open_result(tr_cgroup *cg, const char *dev)
{
        open_arg a = { cg, dev };
        pid_t pid = ts_fork(open_in_cg, &a);
        if (pid <= 1)
                return -1;
        int st = ts_wait(pid, 20000);
        return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ids of the device programs attached to cg's v2 cgroup; returns how many */
static int attached(tr_cgroup *cg, uint32_t *ids, uint32_t cap)
{
        uint32_t flags = 0, cnt = cap;
        if (bpf_prog_query(tr_cgroup_v2_fd(cg), BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt) < 0)
                return -1;
        return (int) cnt;
}

static bool prog_exists(uint32_t id)
{
        int fd = bpf_prog_get_fd_by_id(id);
        if (fd >= 0)
                close(fd);
        return fd >= 0;
}

static void test_filter_bpf(void)
{
        if (!ts_need_root("device filter") || ts_hierarchies()->v2 < 0)
                return;
        _cleanup_cgroup_ tr_cgroup *cg = make_cg("devbpf");
        CU_ASSERT_PTR_NOT_NULL_FATAL(cg);
        tr_dev_rules rs;
        CU_ASSERT_TRUE_FATAL(rules_from("-c:1:3:rwm", &rs));
        tr_dev_filter *f = NULL;
        tr_error err = { 0 };
        int rc = tr_dev_filter_apply(&f, cg, &rs, &err);
        if (rc < 0)
                printf("\napply: %s\n", err.msg);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        CU_ASSERT_TRUE(strncmp(f->method, "bpf", 3) == 0);
        uint32_t ids[8];
        CU_ASSERT_EQUAL(attached(cg, ids, 8), 1);
        CU_ASSERT_EQUAL(ids[0], f->bpf_prog_id);
        uint32_t first = f->bpf_prog_id;
        CU_ASSERT_EQUAL(open_result(cg, "/dev/null"), EPERM);
        CU_ASSERT_EQUAL(open_result(cg, "/dev/zero"), 0);
        CU_ASSERT_EQUAL(open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0 ? 0 : errno, 0); /* only the cgroup */

        /* new rules: replaced in place, still one program, the old one gone */
        tr_dev_rules_free(&rs);
        CU_ASSERT_TRUE_FATAL(rules_from("-c:1:5:rwm", &rs));
        CU_ASSERT_EQUAL_FATAL(tr_dev_filter_apply(&f, cg, &rs, &err), 0);
        CU_ASSERT_EQUAL(attached(cg, ids, 8), 1);
        CU_ASSERT_EQUAL(ids[0], f->bpf_prog_id);
        CU_ASSERT_NOT_EQUAL(f->bpf_prog_id, first);
        CU_ASSERT_FALSE(prog_exists(first));
        CU_ASSERT_EQUAL(open_result(cg, "/dev/null"), 0);
        CU_ASSERT_EQUAL(open_result(cg, "/dev/zero"), EPERM);

        uint32_t second = f->bpf_prog_id;
        bool bpf_only = strcmp(f->method, "bpf") == 0;
        tr_dev_filter_free(f);
        CU_ASSERT_EQUAL(attached(cg, ids, 8), 0);
        CU_ASSERT_FALSE(prog_exists(second));
        if (bpf_only) /* v1 rules (hybrid) stay with the cgroup directory */
                CU_ASSERT_EQUAL(open_result(cg, "/dev/zero"), 0);
        tr_dev_rules_free(&rs);
        ts_reap_orphans(0);
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg, 5000000, &err), 0);
}

/* the v1 strategy alone (hybrid and v1 hosts): a whitelist written to devices.allow/deny */
static void test_filter_v1(void)
{
        if (!ts_need_root("v1 device filter"))
                return;
        int v1 = ts_hierarchies()->v1_of[TR_CTRL_DEVICES];
        if (v1 < 0) {
                ts_skip("v1 device filter", "no v1 devices hierarchy on this host");
                return;
        }
        _cleanup_cgroup_ tr_cgroup *cg = make_cg("devv1");
        CU_ASSERT_PTR_NOT_NULL_FATAL(cg);
        tr_dev_rules rs;
        CU_ASSERT_TRUE_FATAL(rules_from("-a:*:*:rwm +c:1:3:rw +c:1:5:rwm", &rs));
        tr_dev_filter f = { .ops = { &tr_dev_v1_ops }, .n_ops = 1, .cg = cg, .bpf_prog_fd = -1, .bpf_cg_fd = -1 };
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_dev_v1_ops.apply(&f, cg, &rs, &err), 0);
        char list[512] = "";
        CU_ASSERT_TRUE(tr_cgroup_read(cg, v1, "devices.list", list, sizeof list, &err) > 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(list, "c 1:3 rw\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(list, "c 1:5 rwm\n"));
        CU_ASSERT_PTR_NULL(strstr(list, "a *:*"));
        CU_ASSERT_EQUAL(open_result(cg, "/dev/null"), 0);
        CU_ASSERT_EQUAL(open_result(cg, "/dev/zero"), 0);
        CU_ASSERT_EQUAL(open_result(cg, "/dev/full"), EPERM); /* c 1:7 */
        tr_dev_rules_free(&rs);
        ts_reap_orphans(0);
        CU_ASSERT_EQUAL(tr_cgroup_destroy(cg, 5000000, &err), 0);
}

/* ---- GPU nodes ---- */

static void test_gpu_nodes(void)
{
        if (!ts_need_root("GPU nodes (mknod)"))
                return;
        char dir[] = "/tmp/procd-devtest.XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
        char p[PATH_MAX];
        static const struct {
                const char *name;
                unsigned maj, min;
        } nodes[] = { { "nvidia0", 195, 0 }, { "nvidia1", 195, 1 }, { "nvidiactl", 195, 255 },
                      { "nvidia-uvm", 510, 0 }, { "dri/renderD128", 226, 128 }, { "dri/card1", 226, 1 },
                      { "kfd", 511, 0 }, { "nvidiafoo", 195, 9 }, { "null", 1, 3 }, { "dri/renderD12", 226, 12 } };
        snprintf(p, sizeof p, "%s/dri", dir);
        CU_ASSERT_EQUAL_FATAL(mkdir(p, 0755), 0);
        for (size_t i = 0; i < TR_ARRAY_SIZE(nodes); i++) {
                snprintf(p, sizeof p, "%s/%s", dir, nodes[i].name);
                CU_ASSERT_EQUAL(mknod(p, S_IFCHR | 0600, makedev(nodes[i].maj, nodes[i].min)), 0);
        }
        snprintf(p, sizeof p, "%s/nvidia2", dir); /* a regular file is no GPU */
        close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        tr_gpu_node *g = NULL;
        size_t n = 0;
        tr_error err = { 0 };
        CU_ASSERT_EQUAL_FATAL(tr_gpu_nodes_find(dir, &g, &n, &err), 0);
        static const struct {
                const char *rel;
                int index;
                unsigned maj, min;
        } want[] = { { "/dri/card1", 1, 226, 1 }, { "/dri/renderD128", 0, 226, 128 }, { "/kfd", -1, 511, 0 },
                     { "/nvidia-uvm", -1, 510, 0 }, { "/nvidia0", 0, 195, 0 }, { "/nvidia1", 1, 195, 1 },
                     { "/nvidiactl", -1, 195, 255 } };
        CU_ASSERT_EQUAL(n, TR_ARRAY_SIZE(want));
        for (size_t i = 0; i < n && i < TR_ARRAY_SIZE(want); i++) {
                char w[PATH_MAX];
                snprintf(w, sizeof w, "%s%s", dir, want[i].rel);
                bool ok = strcmp(g[i].path, w) == 0 && g[i].index == want[i].index && g[i].major == want[i].maj &&
                          g[i].minor == want[i].min;
                if (!ok)
                        printf("\nnode %zu: %s %d %u:%u, want %s %d\n", i, g[i].path, g[i].index, g[i].major,
                               g[i].minor, w, want[i].index);
                CU_ASSERT_TRUE(ok);
        }
        free(g);
        CU_ASSERT_EQUAL(tr_gpu_nodes_find("/nonexistent-procd", &g, &n, &err), 0);
        CU_ASSERT_EQUAL(n, 0);
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CU_ASSERT_EQUAL(system(cmd), 0);
}

int main(void)
{
        CU_TestInfo unit[] = {
                { "rule parser", test_parse },
                { "generated program vs reference", test_program },
                { "program ends at a match-everything rule", test_program_shape },
                { "v1 plan", test_v1_plan },
                CU_TEST_INFO_NULL,
        };
        CU_TestInfo live[] = {
                { "BPF filter: EPERM, replace in place, detach", test_filter_bpf },
                { "v1 filter: whitelist", test_filter_v1 },
                { "GPU nodes under a dev root", test_gpu_nodes },
                CU_TEST_INFO_NULL,
        };
        CU_SuiteInfo suites[] = {
                { "device rules", NULL, NULL, NULL, NULL, unit },
                { "device filter", NULL, NULL, NULL, NULL, live },
                CU_SUITE_INFO_NULL,
        };
        return ts_run(suites);
}
