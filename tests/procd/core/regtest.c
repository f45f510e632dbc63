/* regtest.c - see regtest.h. */
#include "regtest.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <unistd.h>

static tr_hierarchies HS;

int rt_suite_init(void) { return tr_hierarchies_discover(&HS, NULL) < 0 ? 1 : 0; }

pd_registry *rt_registry(void)
{
        pd_registry *r = NULL;
        tr_error err = { 0 };
        if (pd_registry_new(&HS, getpid(), 60, &r, &err) < 0)
                fprintf(stderr, "pd_registry_new: %s\n", err.msg);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        return r;
}

pd_family *rt_register(pd_registry *r, pid_t pid)
{
        pd_family *f = NULL;
        bool bad_watcher = false;
        tr_error err = { 0 };
        int k = pd_registry_register(r, pid, NULL, 0, 60, &f, &bad_watcher, &err);
        if (k < 0)
                fprintf(stderr, "register %d: %s\n", (int) pid, err.msg);
        CU_ASSERT_EQUAL(k, 0);
        return k < 0 ? NULL : f;
}
