/* benchutil.c - helpers the benchmark programs share. */
#include "benchutil.h"

#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return (x > y) - (x < y);
}

uint64_t bench_median(uint64_t *v, size_t n)
{
        qsort(v, n, sizeof *v, cmp_u64);
        return v[n / 2];
}
