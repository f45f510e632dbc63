/* admission.h - who may hold one of a transport's slots (a D-Bus connection, a classic
 * FIFO request in progress): a total cap, the last slots reserved for uid 0, a cap per
 * non-root uid, and the time a peer has to identify itself or finish its request.
 *
 * Peers of non-zero uid (and peers whose uid is unknown) share max_total - root_reserved
 * slots, at most max_per_uid each; uid 0 may take every slot.  A slot whose peer is leaving
 * (the transport's leaving() says so) still counts toward max_total until released, but no
 * longer toward the uid caps.  Refusals are logged, at most one warning per 10 s. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PD_ADMISSION_MAX_SLOTS 256
#define PD_ADMISSION_ROOT_RESERVED 32
#define PD_ADMISSION_DEFAULT_PER_UID 32
#define PD_ADMISSION_AUTH_TIMEOUT_SEC 10 /* a peer that has not authenticated loses its slot */
/* A peer idle this long may lose its slot to a newcomer when the caps are reached (below);
 * the default of procd's --evict-idle-after */
#define PD_ADMISSION_EVICT_MIN_IDLE_SEC 2

typedef struct pd_admission pd_admission;

typedef struct pd_slot {
        bool uid_known;
        uid_t uid;
        void *owner; /* the transport's peer object */
} pd_slot;

/* what: "connection", "request" (log text).  leaving (may be NULL): whether a slot's peer
 * is on its way out.  max_per_uid in 1..max_total. */
pd_admission *pd_admission_new(const char *what, unsigned max_total, unsigned root_reserved, unsigned max_per_uid,
                               bool (*leaving)(void *owner));
void pd_admission_free(pd_admission *a);

/* A slot for a peer, or NULL (refusal logged) when the caps say no. */
pd_slot *pd_admission_take(pd_admission *a, bool uid_known, uid_t uid, void *owner);
/* The peer proved to be uid: true if it may keep its slot (re-checked, the slot itself not
 * counted, when the uid differs from the one it was admitted with); false (logged) if not,
 * the slot then stays held until released. */
bool pd_admission_confirm(pd_admission *a, pd_slot *slot, uid_t uid);
void pd_admission_release(pd_admission *a, pd_slot *slot);

/* Idle peers make room: when a take would be refused, the slot whose peer has been idle the
 * longest (idle_usec(owner), at least min_idle_sec) is evicted (evict(owner)
 * drops the peer and releases its slot) and the take is tried again.  Root may evict
 * anyone's idle peer, any other uid only its own.  A slot whose peer is leaving goes first,
 * for anyone: closed peers the transport has not reaped yet never keep a newcomer out.  So
 * idle connections, root's included, never keep a new one out.  Without this call nobody is
 * evicted. */
void pd_admission_set_eviction(pd_admission *a, unsigned min_idle_sec, uint64_t (*idle_usec)(void *owner),
                               void (*evict)(void *owner));
unsigned pd_admission_held(const pd_admission *a);
