/* benchutil.h - helpers the benchmark programs share. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Median of v[0..n) (sorts v in place); n > 0. */
uint64_t bench_median(uint64_t *v, size_t n);
/* A child that pauses until killed (and dies with its parent). */
pid_t bench_sleeper(void);
/* SIGKILL and reap a child of ours (pid > 1 only). */
void bench_kill_reap(pid_t pid);
