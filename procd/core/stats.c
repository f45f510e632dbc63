/* stats.c - procd's own counters (see stats.h). */
#include "stats.h"

#include <string.h>
#include <time.h>

#include "procd/wire.h"

void pd_stats_init(pd_stats *st)
{
        memset(st, 0, sizeof *st);
        st->requests = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        st->start_realtime_usec = (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

void pd_stats_clear(pd_stats *st)
{
        if (st->requests)
                g_hash_table_destroy(st->requests);
        st->requests = NULL;
}

uint64_t *pd_stats_request_counter(pd_stats *st, const char *operation, const char *status)
{
        if (!st || !st->requests)
                return NULL;
        /* the key is built on the stack: a copy is made only for a new key (a
         * g_strdup_printf per request was ~1,400 instructions of every GET_USAGE) */
        size_t no = strlen(operation), ns = strlen(status);
        char small[128];
        g_autofree char *big = no + ns + 2 > sizeof small ? g_malloc(no + ns + 2) : NULL;
        char *key = big ? big : small;
        memcpy(key, operation, no);
        key[no] = '\n';
        memcpy(key + no + 1, status, ns + 1);
        uint64_t *n = g_hash_table_lookup(st->requests, key);
        if (!n) {
                n = g_new0(uint64_t, 1);
                g_hash_table_insert(st->requests, g_strdup(key), n);
        }
        return n;
}

void pd_stats_request_named(pd_stats *st, const char *operation, const char *status)
{
        uint64_t *n = pd_stats_request_counter(st, operation, status);
        if (n)
                (*n)++;
}

void pd_stats_request(pd_stats *st, const char *operation, procd_status status)
{
        pd_stats_request_named(st, operation, status == PROCD_OK ? "OK" : procd_status_name(status));
}

void pd_stats_foreach_request(const pd_stats *st, pd_stats_request_fn fn, void *ud)
{
        if (!st || !st->requests)
                return;
        GList *keys = g_list_sort(g_hash_table_get_keys(st->requests), (GCompareFunc) strcmp);
        for (GList *l = keys; l; l = l->next) {
                const char *k = l->data;
                const char *nl = strchr(k, '\n');
                g_autofree char *op = g_strndup(k, (gsize) (nl - k));
                fn(op, nl + 1, *(uint64_t *) g_hash_table_lookup(st->requests, k), ud);
        }
        g_list_free(keys);
}
