/* classic-args.h - condor_procd's command line (procd_main.cpp): -A ADDR [-C UID] [-L FILE|SYSLOG]
 * [-R BYTES] [-S SECS] [-P PID] [-G MIN MAX] [-E] [-D].  Options are told apart by their
 * second character only ("-Sx" is -S); any other single-dash option is illegal.  procd is in
 * this mode when an -A option is given or it runs as "condor_procd"; its own long options
 * (--socket ...) may be mixed in and are left for its getopt_long parser. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct pd_classic_args {
        bool classic;            /* condor_procd's command line */
        const char *address;     /* -A */
        bool principal_set;      /* -C */
        uid_t principal;
        const char *log;         /* -L FILE or "SYSLOG"; NULL: no log */
        uint64_t log_max_bytes;  /* -R (0: no rotation; else at least 65536) */
        int64_t interval_sec;    /* -S (default 60; -1: none) */
        pid_t root_pid;          /* -P (0: the parent, which is then the watcher) */
        bool gid_tracking;       /* -G MIN MAX */
        gid_t gid_min, gid_max;
        bool gid_external;       /* -E */
        bool debug_wait;         /* -D: sleep 30 s at start */
        int argc;                /* the rest: argv[0] and every argument not consumed above */
        char **argv;             /* (NULL-terminated, g_free it) */
} pd_classic_args;

/* 0 (also when not in classic mode: then argc/argv are the whole command line); -EINVAL
 * with the reason in why (an illegal option, a missing or bad value, no -A). */
int pd_classic_args_parse(int argc, char **argv, pd_classic_args *out, char *why, size_t size);

void pd_classic_args_usage(FILE *f);
