/* benchutil.h - helpers the benchmark programs share (sleepers, kill and reap: tests/support). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "testsupport.h"

/* Median of v[0..n) (sorts v in place); n > 0. */
uint64_t bench_median(uint64_t *v, size_t n);
