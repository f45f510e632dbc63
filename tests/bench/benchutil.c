/* benchutil.c - helpers the benchmark programs share. */
#include "benchutil.h"

#include <stdio.h>
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

double bench_loadavg(void)
{
        double l[1] = { -1.0 };
        return getloadavg(l, 1) == 1 ? l[0] : -1.0;
}

const char *bench_load_note(char *buf, size_t size)
{
        double l = bench_loadavg();
        snprintf(buf, size, "load %.2f%s", l, l > 2.0 ? " WARNING: load above 2, not a figure" : "");
        return buf;
}
