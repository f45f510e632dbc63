/* usage-meter.c - per-family readings between usage queries. */
#include "usage-meter.h"

#include <glib.h>

/* Entries of families nobody asked about for this long go when the table is large. */
#define METER_PRUNE_AT 4096u
#define METER_IDLE_USEC (3600ull * 1000000ull)

typedef struct reading {
        uint64_t cpu_usec, t_usec, max_image_bytes;
} reading;

struct pd_usage_meter {
        GHashTable *by_root; /* GINT_TO_POINTER(root pid) -> reading * */
};

pd_usage_meter *pd_usage_meter_new(void)
{
        pd_usage_meter *m = g_new0(pd_usage_meter, 1);
        m->by_root = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        return m;
}

void pd_usage_meter_free(pd_usage_meter *m)
{
        if (!m)
                return;
        g_hash_table_destroy(m->by_root);
        g_free(m);
}

static gboolean idle_entry(gpointer key, gpointer value, gpointer data)
{
        (void) key;
        const reading *r = value;
        uint64_t now = *(const uint64_t *) data;
        return now > r->t_usec && now - r->t_usec > METER_IDLE_USEC;
}

void pd_usage_meter_update(pd_usage_meter *m, pid_t root_pid, uint64_t cpu_usec, uint64_t image_bytes,
                           uint64_t now_usec, pd_usage_reading *out)
{
        reading *r = g_hash_table_lookup(m->by_root, GINT_TO_POINTER(root_pid));
        out->percent_cpu = 0.0;
        out->percent_cpu_known = false;
        out->interval_usec = 0;
        if (r && cpu_usec >= r->cpu_usec) {
                if (now_usec > r->t_usec) {
                        out->percent_cpu = (double) (cpu_usec - r->cpu_usec) * 100.0 / (double) (now_usec - r->t_usec);
                        out->percent_cpu_known = true;
                        out->interval_usec = now_usec - r->t_usec;
                }
        } else if (r) {
                r->max_image_bytes = 0; /* another family: start afresh */
        } else {
                if (g_hash_table_size(m->by_root) >= METER_PRUNE_AT)
                        g_hash_table_foreach_remove(m->by_root, idle_entry, &now_usec);
                r = g_new0(reading, 1);
                g_hash_table_insert(m->by_root, GINT_TO_POINTER(root_pid), r);
        }
        r->cpu_usec = cpu_usec;
        r->t_usec = now_usec;
        if (image_bytes > r->max_image_bytes)
                r->max_image_bytes = image_bytes;
        out->max_image_bytes = r->max_image_bytes;
}

void pd_usage_meter_forget(pd_usage_meter *m, pid_t root_pid)
{
        g_hash_table_remove(m->by_root, GINT_TO_POINTER(root_pid));
}

uint64_t pd_usage_cpu_usec(const tr_usage *u)
{
        if (u->cpu_user_usec.available || u->cpu_system_usec.available)
                return (u->cpu_user_usec.available ? u->cpu_user_usec.value : 0) +
                       (u->cpu_system_usec.available ? u->cpu_system_usec.value : 0);
        return u->cpu_usec.available ? u->cpu_usec.value : 0;
}

uint64_t pd_usage_image_bytes(const tr_usage *u)
{
        if (u->image_size_bytes.available)
                return u->image_size_bytes.value;
        if (u->memory_current_bytes.available)
                return u->memory_current_bytes.value;
        return u->rss_bytes.available ? u->rss_bytes.value : 0;
}
