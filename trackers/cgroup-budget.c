/* cgroup-budget.c - a bound on the fds cgroup handles keep open (see cgroup.h): the
 * handles used last stay awake in a list, most recent first; the one beyond the bound
 * rests. */
#include "cgroup-internal.h"

#include <stdlib.h>

struct tr_cg_budget {
        size_t max_awake, n;
        tr_cgroup *first, *last;
};

#define FDS_PER_AWAKE 12u

tr_cg_budget *tr_cg_budget_new(size_t max_awake)
{
        tr_cg_budget *b = calloc(1, sizeof *b);
        if (b)
                b->max_awake = max_awake ? max_awake : 1;
        return b;
}

void tr_cg_budget_free(tr_cg_budget *b)
{
        if (!b)
                return;
        while (b->first)
                tr_cg_budget_unlink(b->first);
        free(b);
}

void tr_cg_budget_unlink(tr_cgroup *cg)
{
        tr_cg_budget *b = cg->budget;
        if (!b)
                return;
        if (cg->awake_prev)
                cg->awake_prev->awake_next = cg->awake_next;
        else
                b->first = cg->awake_next;
        if (cg->awake_next)
                cg->awake_next->awake_prev = cg->awake_prev;
        else
                b->last = cg->awake_prev;
        cg->awake_prev = cg->awake_next = NULL;
        cg->budget = NULL;
        b->n--;
}

void tr_cg_budget_touch(tr_cg_budget *b, tr_cgroup *cg)
{
        if (!b || b->first == cg)
                return;
        tr_cg_budget_unlink(cg); /* from wherever it was, this budget or another */
        cg->budget = cg->home = b;
        cg->awake_next = b->first;
        if (b->first)
                b->first->awake_prev = cg;
        b->first = cg;
        if (!b->last)
                b->last = cg;
        b->n++;
        while (b->n > b->max_awake)
                tr_cgroup_rest(b->last); /* unlinks it */
}

void tr_cg_budget_woke(tr_cgroup *cg)
{
        if (cg->home && !cg->budget)
                tr_cg_budget_touch(cg->home, cg);
}

size_t tr_cg_budget_awake(const tr_cg_budget *b) { return b ? b->n : 0; }

size_t tr_cg_budget_max_for(unsigned long nofile)
{
        size_t n = nofile / 8u / FDS_PER_AWAKE;
        return n < 4 ? 4 : n > 1024 ? 1024 : n;
}
