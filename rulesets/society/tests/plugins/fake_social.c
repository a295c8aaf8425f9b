/* fake_social — a stand-in for plugins/social that provides only what society uses of the
 * social service: sharers(). `map` and `player` list sharing edges [[from, to], ...]: `from`
 * shares its map (or its own state) with `to`. Lets the society tests pin shared vision down
 * independently of the real social plugin. `journal` 1 adds the sharing journal (service
 * version 3) with no changes, as the edges never change; 2 adds one that loses changes:
 * share_seq grows at about one call in four and share_change is always false, so a reader
 * must read the sharers afresh then, and go on from there. */
#include <string.h>

#include "polis/kit.h"
#include "polis/social.h"

#define MAX_EDGES 256

typedef struct fake_params {
    const polis_json *map, *player;
    int64_t journal;
} fake_params;

static const polis_param_def PARAMS[] = {
    POLIS_P_JSON(fake_params, "map", map, "[[from, to], ...]"),
    POLIS_P_JSON(fake_params, "player", player, "[[from, to], ...]"),
    POLIS_P_INT(fake_params, "journal", journal, 0, 2, 0,
                "0 none, 1 the sharing journal, 2 a journal that loses changes"),
};

typedef struct fake {
    polis_social_api api;
    uint64_t seq, calls; /* the journal's next number; share_seq calls */
    bool lost;
    int32_t n[2];
    int32_t from[2][MAX_EDGES], to[2][MAX_EDGES];
} fake;

static int32_t sharers(void *self, int32_t agent, polis_social_share what, int32_t *out,
                       int32_t cap)
{
    fake *f = self;
    int32_t n = 0;
    /* ascending ids, as the contract says */
    for (int32_t u = 0; u < 65536; u++) {
        bool has = false;
        for (int32_t i = 0; i < f->n[what]; i++)
            if (f->from[what][i] == u && f->to[what][i] == agent && u != agent) has = true;
        if (!has) continue;
        if (n < cap) out[n] = u;
        n++;
    }
    return n;
}

static uint64_t share_seq(void *self)
{
    fake *f = self;
    /* about one call in four, at irregular intervals */
    return f->lost && (++f->calls * 0x9e3779b97f4a7c15ULL) >> 62 == 0 ? ++f->seq : f->seq;
}

static bool share_change(void *self, uint64_t seq, polis_social_share *what, int32_t *from,
                         int32_t *to, bool *on)
{
    (void)self, (void)seq, (void)what, (void)from, (void)to, (void)on;
    return false;
}

static polis_status edges(const polis_host *h, polis_ctx *ctx, const polis_json *j, fake *f,
                          int what)
{
    if (h->json_kind(j) == -1) return POLIS_OK;
    int32_t len = h->json_len(j);
    for (int32_t i = 0; i < len && i < MAX_EDGES; i++) {
        const polis_json *e = h->json_at(ctx, j, i);
        int64_t a, b;
        polis_status st;
        if ((st = h->json_int(ctx, h->json_at(ctx, e, 0), 0, 65535, &a)) ||
            (st = h->json_int(ctx, h->json_at(ctx, e, 1), 0, 65535, &b)))
            return st;
        f->from[what][f->n[what]] = (int32_t)a;
        f->to[what][f->n[what]] = (int32_t)b;
        f->n[what]++;
    }
    return POLIS_OK;
}

static polis_status fake_init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    const fake_params *p = params;
    fake *f = h->alloc(ctx, sizeof *f);
    if (!f) return POLIS_ERR_NOMEM;
    *state = f;
    f->api.version = 1;
    f->api.struct_size = (uint32_t)(offsetof(polis_social_api, revision) + sizeof f->api.revision);
    f->api.self = f;
    f->api.sharers = sharers;
    if (p->journal) {
        f->api.version = 3;
        f->api.struct_size = sizeof f->api;
        f->api.share_seq = share_seq;
        f->api.share_change = share_change;
        f->lost = p->journal == 2;
    }
    polis_status st;
    if ((st = edges(h, ctx, p->map, f, POLIS_SOCIAL_SHARE_MAP)) ||
        (st = edges(h, ctx, p->player, f, POLIS_SOCIAL_SHARE_PLAYER)))
        return st;
    return h->service_provide(ctx, POLIS_SOCIAL_SERVICE, &f->api);
}

static void fake_destroy(polis_ctx *ctx, void *state)
{
    if (state) polis_ctx_host(ctx)->free(ctx, state, sizeof(fake));
}

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("fake_social", 7),
    .version = "1",
    .doc = "a stand-in social service with fixed sharing edges",
    POLIS_DESC_PARAMS(PARAMS, fake_params),
    .init = fake_init,
    .destroy = fake_destroy,
};

POLIS_PLUGIN(DESC)
