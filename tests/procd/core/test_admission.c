/* test_admission.c - the slot caps both transports share: root's reserve, the per-uid cap,
 * eviction of idle peers, and closed peers not yet reaped giving way to a newcomer. */
#include <CUnit/CUnit.h>
#include <glib.h>

#include "procd/core/admission.h"
#include "testsupport.h"

#define TOTAL 8
#define RESERVED 2
#define PER_UID 3

typedef struct peer {
        pd_admission *adm;
        pd_slot *slot;
        bool leaving;
        uint64_t idle_usec;
        int evicted;
} peer;

static bool peer_leaving(void *owner) { return ((peer *) owner)->leaving; }
static uint64_t peer_idle(void *owner) { return ((peer *) owner)->idle_usec; }

static void peer_evict(void *owner)
{
        peer *p = owner;
        p->evicted++;
        pd_admission_release(p->adm, p->slot);
        p->slot = NULL;
}

static bool take(pd_admission *a, peer *p, uid_t uid)
{
        p->adm = a;
        p->slot = pd_admission_take(a, true, uid, p);
        return p->slot != NULL;
}

static void test_caps(void)
{
        pd_admission *a = pd_admission_new("connection", TOTAL, RESERVED, PER_UID, peer_leaving);
        peer p[TOTAL + 1] = { 0 };
        /* uid 1000 takes its three, then is refused */
        for (int i = 0; i < PER_UID; i++)
                CU_ASSERT(take(a, &p[i], 1000));
        CU_ASSERT_FALSE(take(a, &p[PER_UID], 1000));
        /* other non-root uids fill the non-reserved slots: 6 of 8 */
        CU_ASSERT(take(a, &p[3], 1001));
        CU_ASSERT(take(a, &p[4], 1001));
        CU_ASSERT(take(a, &p[5], 1002));
        CU_ASSERT_FALSE(take(a, &p[6], 1003)); /* the last 2 are root's */
        CU_ASSERT(take(a, &p[6], 0));
        CU_ASSERT(take(a, &p[7], 0));
        CU_ASSERT_FALSE(take(a, &p[8], 0)); /* no eviction configured: root refused too */
        CU_ASSERT_EQUAL(pd_admission_held(a), TOTAL);
        pd_admission_free(a);
}

static void test_eviction(void)
{
        pd_admission *a = pd_admission_new("connection", TOTAL, RESERVED, PER_UID, peer_leaving);
        pd_admission_set_eviction(a, 2, peer_idle, peer_evict);
        peer p[TOTAL] = { 0 }, late = { 0 };
        for (int i = 0; i < TOTAL; i++)
                CU_ASSERT(take(a, &p[i], 0));
        /* nobody idle long enough: refused, nobody evicted */
        CU_ASSERT_FALSE(take(a, &late, 0));
        /* the longest idle (at least 2 s) gives way to root */
        p[3].idle_usec = 3 * G_USEC_PER_SEC;
        p[5].idle_usec = 5 * G_USEC_PER_SEC;
        CU_ASSERT(take(a, &late, 0));
        CU_ASSERT_EQUAL(p[5].evicted, 1);
        CU_ASSERT_EQUAL(p[3].evicted, 0);
        pd_admission_release(a, late.slot);
        CU_ASSERT(take(a, &p[5], 0));
        /* a closed peer not reaped yet gives way even though it was active a moment ago,
         * and for a non-root newcomer too (the slot counts only toward the total) */
        pd_admission_release(a, p[3].slot);
        CU_ASSERT(take(a, &p[3], 1000)); /* room again: 8 held */
        p[3].idle_usec = 0;
        p[6].leaving = true;
        CU_ASSERT(take(a, &late, 0));
        CU_ASSERT_EQUAL(p[6].evicted, 1);
        CU_ASSERT_EQUAL(pd_admission_held(a), TOTAL);
        peer late2 = { 0 };
        p[7].leaving = true;
        CU_ASSERT(take(a, &late2, 1001)); /* a non-root newcomer */
        CU_ASSERT_EQUAL(p[7].evicted, 1);
        CU_ASSERT_EQUAL(pd_admission_held(a), TOTAL);
        pd_admission_free(a);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "total cap, root's reserve, per-uid cap", test_caps },
                { "idle peers evicted longest first; leaving peers before them", test_eviction },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("admission", NULL, NULL, tests);
}
