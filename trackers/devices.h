/* devices.h - a job's device rules and the filter that enforces them on its cgroup.
 *
 * Rule text (command line, report): TYPE:MAJOR:MINOR:ACCESS with TYPE a (all), b or c,
 * MAJOR/MINOR a number or "*", ACCESS a non-empty subset of "rwm"; e.g. c:1:3:rw,
 * c:195:*:rwm, a:*:*:rwm ("a" takes "*" for both numbers, as the kernel's device cgroup).
 *
 * Semantics (one list, in the order given, last matching rule wins, default allow - the
 * default of a new device cgroup): an allow rule matches a request whose every access bit
 * it grants; a deny rule matches a request that asks for any bit it names.  So
 * "deny a:*:*:rwm, allow c:1:3:rw" is a whitelist, "deny c:195:*:rwm" a blacklist.
 *
 * Enforcement, one strategy per file behind tr_dev_ops:
 *   devices-bpf.c  v2: a BPF_PROG_TYPE_CGROUP_DEVICE program generated from the rules (an
 *                  instruction array, no compiler), attached with BPF_F_ALLOW_MULTI, swapped
 *                  in place with BPF_F_REPLACE when the rules change, detached on remove.
 *   devices-v1.c   v1: devices.allow / devices.deny in the devices hierarchy.
 * Hybrid hosts get both (the kernel checks both).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "error.h"

#define TR_DEV_ANY UINT32_MAX /* "*" for a major or minor */

enum {
        TR_DEV_MKNOD = 1u << 0, /* the values of the kernel's BPF_DEVCG_ACC_* */
        TR_DEV_READ = 1u << 1,
        TR_DEV_WRITE = 1u << 2,
        TR_DEV_RWM = 7u,
};

typedef struct tr_dev_rule {
        bool allow;
        char type;       /* 'a', 'b', 'c' */
        uint32_t major;  /* TR_DEV_ANY for "*" */
        uint32_t minor;
        unsigned access; /* TR_DEV_* bits, non-zero */
} tr_dev_rule;

typedef struct tr_dev_rules {
        tr_dev_rule *r;
        size_t n, cap;
} tr_dev_rules;

/* Parse "TYPE:MAJOR:MINOR:ACCESS".  -EINVAL with a message naming the bad part. */
int tr_dev_rule_parse(const char *text, bool allow, tr_dev_rule *out, tr_error *err);
/* "deny c:1:3:rw" (the rule text with its verdict) into buf. */
void tr_dev_rule_format(const tr_dev_rule *r, char *buf, size_t size);
int tr_dev_rules_add(tr_dev_rules *rs, const tr_dev_rule *r, tr_error *err);
void tr_dev_rules_free(tr_dev_rules *rs);

/* Whether rule r matches a request (type 'b' or 'c', access bits). */
bool tr_dev_rule_matches(const tr_dev_rule *r, char type, uint32_t major, uint32_t minor, unsigned access);
/* The verdict of the rule list for a request (the reference the generated program and
 * the v1 translation are tested against). */
bool tr_dev_rules_allow(const tr_dev_rules *rs, char type, uint32_t major, uint32_t minor, unsigned access);

/* ---- v2: the generated program (devices-bpf.c) ---- */

struct bpf_insn;
/* Instructions of a cgroup device program for rs (malloc'd into *out).  Rules are tested
 * last to first, the first hit returns its verdict; a rule that matches everything ends
 * the program (rules before it are dead and not emitted: the verifier refuses unreachable
 * code). */
int tr_dev_bpf_build(const tr_dev_rules *rs, struct bpf_insn **out, size_t *n, tr_error *err);

/* ---- v1: the writes (devices-v1.c) ---- */

typedef struct tr_dev_v1_write {
        const char *file; /* "devices.allow" or "devices.deny" */
        char value[64];   /* "a", "c 1:3 rw", "b *:* m" */
} tr_dev_v1_write;

/* The devices.allow/deny writes that give a new v1 cgroup the verdicts of rs (*out
 * malloc'd, *n of them).  v1 keeps one default and a list of exceptions that a later write
 * can only add to or remove exactly, so a list that needs more (an allow carved out of a
 * broader deny, a partial-access "a" rule) is -EOPNOTSUPP with the rule named. */
int tr_dev_v1_plan(const tr_dev_rules *rs, tr_dev_v1_write **out, size_t *n, tr_error *err);

/* ---- the filter on one cgroup ---- */

typedef struct tr_dev_filter tr_dev_filter;

typedef struct tr_dev_ops {
        const char *name; /* "bpf", "v1" */
        /* install or replace (atomically where the mechanism can) the rules on cg */
        int (*apply)(tr_dev_filter *f, tr_cgroup *cg, const tr_dev_rules *rs, tr_error *err);
        /* undo what apply did on a cgroup that may be gone already */
        void (*remove)(tr_dev_filter *f);
} tr_dev_ops;

extern const tr_dev_ops tr_dev_bpf_ops;
extern const tr_dev_ops tr_dev_v1_ops;

struct tr_dev_filter {
        const tr_dev_ops *ops[2];
        int n_ops;
        tr_cgroup *cg;      /* borrowed; must outlive the filter until remove */
        int bpf_prog_fd;    /* devices-bpf.c */
        int bpf_cg_fd;      /* dup of the v2 cgroup fd it is attached to */
        uint32_t bpf_prog_id;
        char method[16];    /* "bpf", "v1", "bpf+v1" */
};

/* Enforce rs on cg: BPF where cg has a v2 cgroup, v1 writes where it has a devices
 * hierarchy, both on hybrid.  Called again with new rules on the same filter, the BPF
 * program is replaced in place (no moment without a filter).  -EOPNOTSUPP when cg has
 * neither. */
int tr_dev_filter_apply(tr_dev_filter **f, tr_cgroup *cg, const tr_dev_rules *rs, tr_error *err);
/* Detach and free (NULL is fine).  The BPF program goes with its last reference. */
void tr_dev_filter_free(tr_dev_filter *f);

/* ---- GPU nodes ---- */

typedef struct tr_gpu_node {
        char path[96];  /* "/dev/nvidia0", "/dev/dri/renderD128" */
        uint32_t major, minor;
        int index;      /* GPU number, -1 for shared control nodes (nvidiactl, nvidia-uvm, kfd) */
} tr_gpu_node;

/* Character devices under dev_root ("/dev") that give access to a GPU: nvidiaN (index N),
 * nvidiactl, nvidia-uvm*, nvidia-modeset, nvidia-caps/ (shared), dri/renderD(128+N) and
 * dri/cardN (index N), kfd (shared).  *out malloc'd (NULL when none). */
int tr_gpu_nodes_find(const char *dev_root, tr_gpu_node **out, size_t *n, tr_error *err);
