/* admission.c - slot caps per uid with root's reserve, shared by procd's transports. */
#include "admission.h"

#include <glib.h>
#include <stdio.h>

struct pd_admission {
        const char *what;
        unsigned max_total, root_reserved, max_per_uid;
        bool (*leaving)(void *owner);
        uint64_t (*idle_usec)(void *owner);
        void (*evict)(void *owner);
        unsigned evict_min_idle_sec;
        GPtrArray *slots; /* pd_slot *, owned */
        pd_slot *spare;   /* the last slot released, for the next take (owned) */
        gint64 last_refusal_log;
        unsigned refusals_unlogged; /* refused since the last warning */
};

pd_admission *pd_admission_new(const char *what, unsigned max_total, unsigned root_reserved, unsigned max_per_uid,
                               bool (*leaving)(void *owner))
{
        pd_admission *a = g_new0(pd_admission, 1);
        a->what = what;
        a->max_total = max_total;
        a->root_reserved = root_reserved < max_total ? root_reserved : max_total;
        a->max_per_uid = max_per_uid ? max_per_uid : 1;
        a->leaving = leaving;
        a->slots = g_ptr_array_new_with_free_func(g_free);
        return a;
}

void pd_admission_free(pd_admission *a)
{
        if (!a)
                return;
        g_ptr_array_free(a->slots, TRUE);
        g_free(a->spare);
        g_free(a);
}

unsigned pd_admission_held(const pd_admission *a) { return a->slots->len; }

static void log_refusal(pd_admission *a, bool uid_known, uid_t uid, const char *why)
{
        gint64 now = g_get_monotonic_time();
        if (a->last_refusal_log && now - a->last_refusal_log < 10 * G_USEC_PER_SEC) {
                a->refusals_unlogged++;
                return;
        }
        char who[32];
        if (uid_known)
                snprintf(who, sizeof who, "uid %u", (unsigned) uid);
        else
                snprintf(who, sizeof who, "an unknown uid");
        g_warning("refusing a %s from %s: %s (%u more refused since the last warning)", a->what, who, why,
                  a->refusals_unlogged);
        a->last_refusal_log = now;
        a->refusals_unlogged = 0;
}

/* Whether a peer of this uid may hold one more slot, the other slots than self counted.
 * NULL when it may, else why not (in buf). */
static const char *over_quota(const pd_admission *a, const pd_slot *self, bool uid_known, uid_t uid, char *buf,
                              size_t size)
{
        unsigned total = 0, nonroot = 0, mine = 0;
        for (guint i = 0; i < a->slots->len; i++) {
                const pd_slot *o = a->slots->pdata[i];
                if (o == self)
                        continue;
                total++;
                if (a->leaving && a->leaving(o->owner))
                        continue; /* on its way out: released soon */
                if (!o->uid_known || o->uid != 0)
                        nonroot++;
                if (uid_known && o->uid_known && o->uid == uid)
                        mine++;
        }
        if (total >= a->max_total)
                snprintf(buf, size, "%u %ss held (limit)", total, a->what);
        else if (uid_known && uid == 0)
                return NULL;
        else if (nonroot >= a->max_total - a->root_reserved)
                snprintf(buf, size, "%u non-root %ss held (the last %u slots are root's)", nonroot, a->what,
                         a->root_reserved);
        else if (uid_known && mine >= a->max_per_uid)
                snprintf(buf, size, "it holds %u %ss (limit per uid %u)", mine, a->what, a->max_per_uid);
        else
                return NULL;
        return buf;
}

void pd_admission_set_eviction(pd_admission *a, unsigned min_idle_sec, uint64_t (*idle_usec)(void *owner),
                               void (*evict)(void *owner))
{
        a->evict_min_idle_sec = min_idle_sec;
        a->idle_usec = idle_usec;
        a->evict = evict;
}

/* Evict the longest-idle peer a newcomer of this uid may displace; false when none.
 * A peer already on its way out (closed, not yet reaped: the transport reaps at idle
 * priority, after every pending accept) gives its slot first, whoever the newcomer is. */
static bool evict_idle(pd_admission *a, bool uid_known, uid_t uid)
{
        if (!a->evict)
                return false;
        for (guint i = 0; a->leaving && i < a->slots->len; i++) {
                pd_slot *o = a->slots->pdata[i];
                if (a->leaving(o->owner)) {
                        a->evict(o->owner); /* releases o */
                        return true;
                }
        }
        if (!uid_known)
                return false;
        pd_slot *victim = NULL;
        uint64_t longest = (uint64_t) a->evict_min_idle_sec * G_USEC_PER_SEC;
        for (guint i = 0; i < a->slots->len; i++) {
                pd_slot *o = a->slots->pdata[i];
                if (a->leaving && a->leaving(o->owner))
                        continue;
                if (uid != 0 && !(o->uid_known && o->uid == uid))
                        continue;
                uint64_t idle = a->idle_usec(o->owner);
                if (idle >= longest) {
                        longest = idle;
                        victim = o;
                }
        }
        if (!victim)
                return false;
        char who[32];
        if (victim->uid_known)
                snprintf(who, sizeof who, "uid %u", (unsigned) victim->uid);
        else
                snprintf(who, sizeof who, "an unknown uid");
        g_message("%s of %s idle for %.0f s gives way to a new one of uid %u", a->what, who,
                  (double) longest / G_USEC_PER_SEC, (unsigned) uid);
        a->evict(victim->owner); /* releases victim */
        return true;
}

pd_slot *pd_admission_take(pd_admission *a, bool uid_known, uid_t uid, void *owner)
{
        char why[128];
        const char *r = over_quota(a, NULL, uid_known, uid, why, sizeof why);
        while (r && evict_idle(a, uid_known, uid)) /* each round releases a slot: bounded */
                r = over_quota(a, NULL, uid_known, uid, why, sizeof why);
        if (r) {
                log_refusal(a, uid_known, uid, r);
                return NULL;
        }
        /* the spare: a classic request takes and releases a slot each, and the malloc and
         * free were ~150 instructions of every GET_USAGE (issue 20) */
        pd_slot *s = a->spare ? a->spare : g_new(pd_slot, 1);
        a->spare = NULL;
        *s = (pd_slot){ .uid_known = uid_known, .uid = uid, .owner = owner };
        g_ptr_array_add(a->slots, s);
        return s;
}

bool pd_admission_confirm(pd_admission *a, pd_slot *slot, uid_t uid)
{
        if (slot->uid_known && slot->uid == uid)
                return true;
        char why[128];
        const char *r = over_quota(a, slot, true, uid, why, sizeof why);
        slot->uid_known = true;
        slot->uid = uid;
        if (r) {
                log_refusal(a, true, uid, r);
                return false;
        }
        return true;
}

void pd_admission_release(pd_admission *a, pd_slot *slot)
{
        if (!slot)
                return;
        for (guint i = a->slots->len; i-- > 0;) {
                if (a->slots->pdata[i] != slot)
                        continue;
                g_ptr_array_steal_index_fast(a->slots, i);
                if (a->spare)
                        g_free(slot);
                else
                        a->spare = slot;
                return;
        }
}
