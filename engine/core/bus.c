/*
 * bus.c — the typed event bus.
 *
 * Delivery order (documented in docs/kernel.md, "The event bus", and relied on by tests):
 *   - A publish outside any dispatch is delivered at once, synchronously, before publish
 *     returns.
 *   - Subscribers of one event run by ascending priority, ties in registration order; host
 *     subscribers (polis_env_subscribe) run after every plugin and script subscriber, first
 *     those of that type, then those of every type, in subscription order.
 *   - An event published while another is being delivered is queued and delivered after
 *     the current event has reached all its subscribers, in publication order (FIFO), still
 *     inside the outermost publish call — so in the same tick, never lost, never reordered.
 *   - The queue is preallocated ("event_queue" in the scenario); overflowing it fails the
 *     publish with POLIS_ERR_LIMIT instead of dropping events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Sort key: plugin/script subscribers first (by priority, then registration), host
 * subscribers last (by registration). */
static int cmp_sub(const void *a, const void *b)
{
    const polis__sub *x = a, *y = b;
    if (x->type != y->type) return x->type < y->type ? -1 : 1;
    int hx = x->host_fn != NULL, hy = y->host_fn != NULL;
    if (hx != hy) return hx - hy;
    if (!hx && x->priority != y->priority) return x->priority < y->priority ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

polis_status polis__bus_freeze(polis_env *env)
{
    /* Resolve names; every-type host subscribers sort to the front (type -1) and are kept
     * apart in any_subs. */
    for (int32_t i = 0; i < env->n_subs; i++) {
        polis__sub *s = &env->subs[i];
        if (s->event == NULL) continue; /* host subscriber, type already set */
        s->type = polis_env_event_find(env, s->event);
        if (s->type < 0)
            return polis__fail(env, POLIS_ERR_CONFIG,
                               "%s: subscribes to event type \"%s\", which no plugin or script "
                               "registers",
                               s->ctx ? s->ctx->name : "polis", s->event);
    }
    if (env->n_subs) qsort(env->subs, (size_t)env->n_subs, sizeof *env->subs, cmp_sub);
    int32_t i = 0;
    while (i < env->n_subs && env->subs[i].type < 0) i++;
    env->any_subs = env->subs;
    env->n_any_subs = i;
    for (int32_t t = 0; t < env->n_events; t++)
        env->events[t].sub_begin = env->events[t].sub_end = i;
    while (i < env->n_subs) {
        int32_t t = env->subs[i].type, b = i;
        while (i < env->n_subs && env->subs[i].type == t) i++;
        env->events[t].sub_begin = b;
        env->events[t].sub_end = i;
    }

    if (!env->bus_queue) {
        size_t slot = 8;
        for (int32_t t = 0; t < env->n_events; t++)
            if (env->events[t].size > slot) slot = (env->events[t].size + 7) & ~(size_t)7;
        env->bus_slot = slot;
        env->bus_cap = env->scn.event_queue > 0 ? env->scn.event_queue : 4096;
        env->bus_queue = polis__alloc(env, sizeof *env->bus_queue * (size_t)env->bus_cap);
        env->bus_payload = polis__alloc(env, slot * (size_t)env->bus_cap);
        if (!env->bus_queue || !env->bus_payload)
            return polis__fail(env, POLIS_ERR_NOMEM, "out of memory allocating the event queue");
    }
    return POLIS_OK;
}

void polis__bus_reset(polis_env *env)
{
    env->bus_head = 0;
    env->bus_len = 0;
    env->bus_depth = 0;
}

void polis__bus_free(polis_env *env)
{
    polis__free(env, env->bus_queue, sizeof *env->bus_queue * (size_t)env->bus_cap);
    polis__free(env, env->bus_payload, env->bus_slot * (size_t)env->bus_cap);
    env->bus_queue = NULL;
    env->bus_payload = NULL;
}

static polis_status deliver_range(polis_env *env, const polis__sub *s, int32_t n,
                                  const polis_event *ev)
{
    for (int32_t i = 0; i < n; i++) {
        if (s[i].host_fn) {
            s[i].host_fn(s[i].ud, ev);
            continue;
        }
        polis_ctx *saved = env->current;
        env->current = s[i].ctx;
        polis_status st = s[i].fn(s[i].ctx, s[i].ud, ev);
        env->current = saved;
        if (st != POLIS_OK) {
            char what[160];
            snprintf(what, sizeof what, "event %s", env->events[ev->type].name);
            polis__place_error(env, s[i].ctx, st, what);
            return st;
        }
    }
    return POLIS_OK;
}

static polis_status deliver(polis_env *env, const polis_event *ev)
{
    const polis__event_type *et = &env->events[ev->type];
    /* env->subs is NULL when nothing subscribes: NULL + 0 is undefined in C, so an empty
     * range forms no pointer at all. */
    if (et->sub_end > et->sub_begin) {
        polis_status st =
            deliver_range(env, env->subs + et->sub_begin, et->sub_end - et->sub_begin, ev);
        if (st) return st;
    }
    if (env->n_any_subs == 0) return POLIS_OK;
    return deliver_range(env, env->any_subs, env->n_any_subs, ev);
}

static polis_status publish(polis_env *env, polis_ctx *from, int32_t type, const void *payload,
                            size_t size);

/* Delivers what the subscribers published meanwhile (queued), in order, then empties the
 * queue. The slot being delivered stays counted in bus_len until it is done, so nothing
 * published meanwhile can overwrite it. */
static polis_status drain(polis_env *env, polis_status st)
{
    while (st == POLIS_OK && env->bus_len > 0) {
        const polis__queued *q = &env->bus_queue[env->bus_head];
        polis_event qe = {
            .type = q->type, .tick = q->tick, .seq = q->seq, .data = env->bus_payload + q->offset};
        st = deliver(env, &qe);
        env->bus_head = (env->bus_head + 1) % env->bus_cap;
        env->bus_len--;
    }
    polis__bus_reset(env);
    return st;
}

/* An event no plugin or script subscribes to, published outside a dispatch, takes its
 * sequence number and nothing else: what publish would do with it, without its frame (most
 * events of a run without recording or subscribers, e.g. the social plugin's, 3-4 per
 * agent-step in Exploration with social actions; docs/performance-log.md); with host
 * subscribers to every event (a recorder), it goes straight to them, in order (host
 * subscribers cannot fail). Everything else, errors included, goes through publish. */
polis_status polis__bus_publish(polis_env *env, polis_ctx *from, int32_t type, const void *payload,
                                size_t size)
{
    if (env->bus_depth == 0 && type >= 0 && type < env->n_events &&
        env->state != POLIS__ENV_LOADING && env->state != POLIS__ENV_FROZEN) {
        const polis__event_type *et = &env->events[type];
        if (et->sub_end == et->sub_begin && size == et->size && (payload || !size)) {
            if (env->n_any_subs == 0) {
                env->bus_seq++;
                return POLIS_OK;
            }
            polis_event ev = {
                .type = type, .tick = env->tick, .seq = env->bus_seq++, .data = payload};
            env->bus_depth = 1;
            const polis__sub *s = env->any_subs;
            for (int32_t i = 0, n = env->n_any_subs; i < n; i++) s[i].host_fn(s[i].ud, &ev);
            if (env->bus_len == 0) {
                env->bus_depth = 0; /* (bus_head is 0: the queue was drained and reset) */
                return POLIS_OK;
            }
            return drain(env, POLIS_OK);
        }
    }
    return publish(env, from, type, payload, size);
}

static polis_status publish(polis_env *env, polis_ctx *from, int32_t type, const void *payload,
                            size_t size)
{
    const char *who = from ? from->name : "polis";
    if (env->state == POLIS__ENV_LOADING || env->state == POLIS__ENV_FROZEN) {
        polis__fail(env, POLIS_ERR_STATE,
                    "%s: publish: events can be published only during "
                    "reset and step",
                    who);
        return POLIS_ERR_STATE;
    }
    if (type < 0 || type >= env->n_events) {
        polis__fail(env, POLIS_ERR_INVALID, "%s: publish: unknown event type id %d", who, type);
        return POLIS_ERR_INVALID;
    }
    const polis__event_type *et = &env->events[type];
    if (size != et->size || (size && !payload)) {
        polis__fail(env, POLIS_ERR_INVALID,
                    "%s: publish %s: payload is %zu bytes, the event's fields take %zu", who,
                    et->name, payload ? size : (size_t)0, et->size);
        return POLIS_ERR_INVALID;
    }
    if (env->bus_depth > 0) {
        if (env->bus_len == env->bus_cap) {
            polis__fail(env, POLIS_ERR_LIMIT,
                        "%s: publish %s: the event queue is full (%d events published during "
                        "one dispatch); raise \"event_queue\" in the scenario",
                        who, et->name, env->bus_cap);
            return POLIS_ERR_LIMIT;
        }
        int32_t slot = (env->bus_head + env->bus_len) % env->bus_cap;
        polis__queued *q = &env->bus_queue[slot];
        q->type = type;
        q->tick = env->tick;
        q->seq = env->bus_seq++;
        q->offset = (size_t)slot * env->bus_slot;
        if (size) memcpy(env->bus_payload + q->offset, payload, size);
        env->bus_len++;
        return POLIS_OK;
    }
    polis_event ev = {.type = type, .tick = env->tick, .seq = env->bus_seq++, .data = payload};
    env->bus_depth = 1;
    return drain(env, deliver(env, &ev));
}

/* ---- public ------------------------------------------------------------------------------- */

int32_t polis_env_n_event_types(const polis_env *env) { return env->n_events; }

int32_t polis_env_event_find(const polis_env *env, const char *name)
{
    for (int32_t i = 0; name && i < env->n_events; i++)
        if (strcmp(env->events[i].name, name) == 0) return i;
    return -1;
}

const char *polis_env_event_name(const polis_env *env, int32_t type)
{
    return type >= 0 && type < env->n_events ? env->events[type].name : NULL;
}

int32_t polis_env_event_n_fields(const polis_env *env, int32_t type)
{
    return type >= 0 && type < env->n_events ? env->events[type].n_fields : -1;
}

polis_status polis_env_event_field(const polis_env *env, int32_t type, int32_t i, const char **name,
                                   polis_ftype *ftype, size_t *offset)
{
    if (type < 0 || type >= env->n_events) return POLIS_ERR_INVALID;
    const polis__event_type *et = &env->events[type];
    if (i < 0 || i >= et->n_fields) return POLIS_ERR_INVALID;
    if (name) *name = et->fields[i].name;
    if (ftype) *ftype = et->fields[i].type;
    if (offset) *offset = et->fields[i].offset;
    return POLIS_OK;
}

size_t polis_env_event_size(const polis_env *env, int32_t type)
{
    return type >= 0 && type < env->n_events ? env->events[type].size : 0;
}

polis_status polis_env_subscribe(polis_env *env, int32_t type, polis_host_event_fn fn, void *ud)
{
    if (!env) return POLIS_ERR_INVALID;
    if (!fn) return polis__fail(env, POLIS_ERR_INVALID, "polis_env_subscribe: fn is NULL");
    if (env->state != POLIS__ENV_FROZEN)
        return polis__fail(env, POLIS_ERR_STATE,
                           "polis_env_subscribe: host subscribers must be added after create "
                           "and before the first reset");
    if (type < -1 || type >= env->n_events)
        return polis__fail(env, POLIS_ERR_INVALID,
                           "polis_env_subscribe: unknown event type id %d (0..%d, or -1 for all)",
                           type, env->n_events - 1);
    polis__sub s = {.type = type, .host_fn = fn, .ud = ud};
    polis_status st = polis__sub_add(env, &s);
    if (st) return st;
    return polis__bus_freeze(env);
}
