#include "pidset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tr_pidset_add(tr_pidset *s, pid_t pid)
{
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 64;
                pid_t *p = s->borrowed ? malloc(cap * sizeof *p) : realloc(s->pids, cap * sizeof *p);
                if (!p)
                        return -ENOMEM;
                if (s->borrowed && s->n)
                        memcpy(p, s->pids, s->n * sizeof *p);
                s->pids = p;
                s->cap = cap;
                s->borrowed = false;
        }
        s->pids[s->n++] = pid;
        return 0;
}

int tr_pidset_add_all(tr_pidset *dst, const tr_pidset *src)
{
        for (size_t i = 0; i < src->n; i++)
                if (tr_pidset_add(dst, src->pids[i]) < 0)
                        return -ENOMEM;
        return 0;
}

static int cmp_pid(const void *a, const void *b)
{
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
        return (x > y) - (x < y);
}

void tr_pidset_normalize(tr_pidset *s)
{
        if (s->n < 2)
                return;
        qsort(s->pids, s->n, sizeof *s->pids, cmp_pid);
        size_t w = 1;
        for (size_t r = 1; r < s->n; r++)
                if (s->pids[r] != s->pids[w - 1])
                        s->pids[w++] = s->pids[r];
        s->n = w;
}

bool tr_pidset_contains(const tr_pidset *s, pid_t pid)
{
        return s->n && bsearch(&pid, s->pids, s->n, sizeof *s->pids, cmp_pid) != NULL;
}

void tr_pidset_clear(tr_pidset *s) { s->n = 0; }

void tr_pidset_free(tr_pidset *s)
{
        if (!s->borrowed)
                free(s->pids);
        s->pids = NULL;
        s->n = s->cap = 0;
        s->borrowed = false;
}
