/*
 * plugin.c — loading .so plugins: find the file, dlopen it, read and check its descriptor,
 * order plugins by their declared requirements, validate their parameters, init, start,
 * and on destroy tear them down in reverse order.
 *
 * Every refusal names the scenario entry ("plugins[1]"), the file and the mismatch.
 */
/* dladdr() is a GNU/BSD extension: it tells where libpolis (or the program it is linked
 * into) was loaded from, so installed plugins are found relative to it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#ifndef POLIS_PLUGIN_BUILD_DIR
#define POLIS_PLUGIN_BUILD_DIR ""
#endif
#ifndef POLIS_BUILD_ROOT
#define POLIS_BUILD_ROOT ""
#endif
#ifndef POLIS_PLUGIN_INSTALL_DIR
#define POLIS_PLUGIN_INSTALL_DIR ""
#endif
#ifndef POLIS_PLUGIN_REL_LIBDIR
#define POLIS_PLUGIN_REL_LIBDIR "polis/plugins"
#endif
#ifndef POLIS_PLUGIN_REL_BINDIR
#define POLIS_PLUGIN_REL_BINDIR "../lib/polis/plugins"
#endif

/* The size of an ABI 1.0 descriptor: every field up to and including n_exports. Later
 * minor versions only append, so anything at least this large is readable. */
#define DESC_V1_0_SIZE (offsetof(polis_plugin_desc, n_exports) + sizeof(int32_t))

/* Tries dir/name.so for each ':'-separated dir in `dirs`, appending what it tried to
 * `tried`. Returns 1 and sets *out when found, 0 when not, -1 when out of memory. */
static int search(polis_env *env, const char *dirs, const char *name, char *tried, size_t tried_cap,
                  char **out)
{
    if (!dirs) return 0;
    const char *p = dirs;
    while (*p) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0 && len < 4000) {
            char cand[4200];
            snprintf(cand, sizeof cand, "%.*s/%s.so", (int)len, p, name);
            size_t tl = strlen(tried), cl = strlen(cand);
            if (tl + cl + 3 < tried_cap) {
                if (tl) {
                    memcpy(tried + tl, ", ", 2);
                    tl += 2;
                }
                memcpy(tried + tl, cand, cl + 1);
            }
            if (access(cand, R_OK) == 0) {
                char canon[PATH_MAX];
                const char *use = realpath(cand, canon) ? canon : cand;
                return (*out = polis__strdup(env, use)) ? 1 : -1;
            }
        }
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

bool polis__self_dir(char *buf, size_t cap)
{
    Dl_info info;
    char self[PATH_MAX];
    void *addr = (void *)(uintptr_t)&polis__plugin_resolve;
    if (dladdr(addr, &info) && info.dli_fname && strchr(info.dli_fname, '/') &&
        realpath(info.dli_fname, self)) {
        /* found the shared library (or an executable loaded by path) */
    } else {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) return false;
        self[n] = '\0';
    }
    char *slash = strrchr(self, '/');
    if (!slash) return false;
    *slash = '\0';
    return (size_t)snprintf(buf, cap, "%s", self) < cap;
}

/* The plugin directories next to the loaded libpolis, or next to the program it is linked
 * into statically: "<dir>/plugins" (the build tree keeps plugins beside the library and
 * the CLI) and the install layout relative to a library or an executable. Writes a
 * ':'-separated list into buf; empty if the location cannot be found. */
static void self_dirs(char *buf, size_t cap)
{
    buf[0] = '\0';
    char self[PATH_MAX];
    if (!polis__self_dir(self, sizeof self)) return;
    snprintf(buf, cap, "%s/plugins:%s/%s:%s/%s", self, self, POLIS_PLUGIN_REL_LIBDIR, self,
             POLIS_PLUGIN_REL_BINDIR);
}

/* Whether this libpolis (or the program it is linked into) runs from the build tree it was
 * built in: only then is the build tree's plugin directory searched. An installed copy
 * carries the same compiled-in path but must not load plugins from a source checkout that
 * may have changed since, or belong to someone else. */
static bool in_build_tree(void)
{
    char self[PATH_MAX];
    size_t n = strlen(POLIS_BUILD_ROOT);
    if (n == 0 || !polis__self_dir(self, sizeof self)) return false;
    char root[PATH_MAX];
    const char *r = realpath(POLIS_BUILD_ROOT, root) ? root : POLIS_BUILD_ROOT;
    n = strlen(r);
    return strncmp(self, r, n) == 0 && (self[n] == '\0' || self[n] == '/');
}

polis_status polis__plugin_resolve(polis_env *env, const char *name, char **out)
{
    char tried[4096] = "";
    char near[3 * PATH_MAX + 64];
    self_dirs(near, sizeof near);
    /* Never the scenario's directory or the current directory: a bare name loads code only
     * from places the user configured or polis installed, so a downloaded scenario folder
     * that holds a `<name>.so` does not run it. A scenario-local plugin needs its "path". */
    const char *dirs[5] = {env->plugin_path, getenv("POLIS_PLUGIN_PATH"), near,
                           in_build_tree() ? POLIS_PLUGIN_BUILD_DIR : NULL,
                           POLIS_PLUGIN_INSTALL_DIR};
    char *found = NULL;
    for (int i = 0; i < 5; i++) {
        int r = search(env, dirs[i], name, tried, sizeof tried, &found);
        if (r > 0) {
            *out = found;
            return POLIS_OK;
        }
        if (r < 0) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    }
    /* Say so when the scenario's directory holds the file: the old search order found it. */
    const char *base = env->scn.base_dir ? env->scn.base_dir : ".";
    char local[PATH_MAX], hint[PATH_MAX + 160] = "";
    if ((size_t)snprintf(local, sizeof local, "%s/%s.so", base, name) < sizeof local &&
        access(local, F_OK) == 0)
        snprintf(hint, sizeof hint,
                 "; %s is not searched by name, write {\"path\": \"./%s.so\"} to load it", local,
                 name);
    return polis__fail(env, POLIS_ERR_PLUGIN, "cannot find plugin \"%s\"%s (tried %s)", name, hint,
                       tried[0] ? tried : "no directories");
}

static bool valid_plugin_name(const char *s)
{
    if (!s || !*s || strlen(s) > 63) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
    return true;
}

static size_t param_size(polis_param_type t)
{
    switch (t) {
    case POLIS_PARAM_BOOL: return sizeof(bool);
    case POLIS_PARAM_INT: return sizeof(int64_t);
    case POLIS_PARAM_DOUBLE: return sizeof(double);
    case POLIS_PARAM_STRING: return sizeof(const char *);
    case POLIS_PARAM_JSON: return sizeof(const polis_json *);
    }
    return 0;
}

/* Checks what the engine reads from a descriptor before calling into the plugin. */
static polis_status check_desc(polis_env *env, const char *where, const char *file,
                               const polis_plugin_desc *d)
{
    const char *src = env->scn.source;
    if (d->abi_major != POLIS_ABI_MAJOR)
        return polis__fail(env, POLIS_ERR_PLUGIN,
                           "%s: %s: %s: plugin ABI major version %u, this engine supports %u", src,
                           where, file, d->abi_major, POLIS_ABI_MAJOR);
    if (d->struct_size < DESC_V1_0_SIZE)
        return polis__fail(env, POLIS_ERR_PLUGIN,
                           "%s: %s: %s: descriptor struct_size %u is smaller than the ABI 1.0 "
                           "descriptor (%zu bytes)",
                           src, where, file, d->struct_size, (size_t)DESC_V1_0_SIZE);
    /* abi_minor is the oldest host the plugin needs (plugin.h, "Versions"): it calls slots of
     * that minor without checking, so an older engine must not load it. */
    if (d->abi_minor > POLIS_ABI_MINOR)
        return polis__fail(env, POLIS_ERR_PLUGIN,
                           "%s: %s: %s: the plugin needs plugin ABI %u.%u or newer (its "
                           "abi_minor), this engine (polis %s) has ABI %u.%u: update polis",
                           src, where, file, d->abi_major, d->abi_minor, POLIS_VERSION_STRING,
                           POLIS_ABI_MAJOR, POLIS_ABI_MINOR);
    /* Up to this engine's minor, the descriptor is at most the engine's own. */
    if (d->struct_size > sizeof(polis_plugin_desc))
        return polis__fail(env, POLIS_ERR_PLUGIN,
                           "%s: %s: %s: descriptor struct_size %u is larger than the ABI %u.%u "
                           "descriptor (%zu bytes)",
                           src, where, file, d->struct_size, POLIS_ABI_MAJOR, POLIS_ABI_MINOR,
                           sizeof(polis_plugin_desc));
    if (!valid_plugin_name(d->name))
        return polis__fail(env, POLIS_ERR_PLUGIN,
                           "%s: %s: %s: plugin name %s%s%s is not 1-63 characters of [a-z0-9_]",
                           src, where, file, d->name ? "\"" : "", d->name ? d->name : "NULL",
                           d->name ? "\"" : "");
    if (!d->init)
        return polis__fail(env, POLIS_ERR_PLUGIN, "%s: %s: %s: plugin \"%s\" has no init function",
                           src, where, file, d->name);
    if (d->n_params < 0 || (d->n_params > 0 && !d->params))
        return polis__fail(env, POLIS_ERR_PLUGIN,
                           "%s: %s: %s: plugin \"%s\" declares %d parameters without a table", src,
                           where, file, d->name, d->n_params);
    for (int32_t i = 0; i < d->n_params; i++) {
        const polis_param_def *p = &d->params[i];
        size_t sz = param_size(p->type);
        if (!p->key || sz == 0)
            return polis__fail(env, POLIS_ERR_PLUGIN,
                               "%s: %s: %s: plugin \"%s\": parameter %d has %s", src, where, file,
                               d->name, i, p->key ? "an unknown type" : "no key");
        if (p->offset + sz > d->params_size)
            return polis__fail(env, POLIS_ERR_PLUGIN,
                               "%s: %s: %s: plugin \"%s\": parameter \"%s\" at offset %zu does "
                               "not fit params_size %zu",
                               src, where, file, d->name, p->key, p->offset, d->params_size);
    }
    if (d->n_exports < 0 || (d->n_exports > 0 && !d->exports))
        return polis__fail(env, POLIS_ERR_PLUGIN,
                           "%s: %s: %s: plugin \"%s\" declares %d exports without a table", src,
                           where, file, d->name, d->n_exports);
    return POLIS_OK;
}

/* Opens one plugin file and creates its ctx (not yet initialised). */
static polis_status open_one(polis_env *env, int32_t i)
{
    const polis__scn_plugin *sp = &env->scn.plugins[i];
    const char *src = env->scn.source;
    char *path = NULL;
    if (sp->path) {
        if (!(path = polis__strdup(env, sp->path)))
            return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    } else {
        polis_status rst = polis__plugin_resolve(env, sp->name, &path);
        if (rst == POLIS_ERR_NOMEM) return rst;
        if (rst != POLIS_OK) {
            char msg[POLIS_ERRMAX];
            snprintf(msg, sizeof msg, "%s", env->err);
            return polis__fail(env, rst, "%s: %s: %s", src, sp->jpath, msg);
        }
    }
    dlerror();
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        polis__fail(env, POLIS_ERR_PLUGIN, "%s: %s: cannot load %s: %s", src, sp->jpath, path,
                    e ? e : "unknown dlopen error");
        polis__strfree(env, path);
        return POLIS_ERR_PLUGIN;
    }
    polis_status st = POLIS_OK;
    polis_plugin_entry_fn entry;
    void *sym = dlsym(dl, POLIS_PLUGIN_ENTRY);
    memcpy(&entry, &sym, sizeof entry); /* object pointer to function pointer, as POSIX allows */
    const polis_plugin_desc *d = NULL;
    if (!sym) {
        st = polis__fail(env, POLIS_ERR_PLUGIN,
                         "%s: %s: %s: no entry symbol \"%s\" (is it a polis plugin?)", src,
                         sp->jpath, path, POLIS_PLUGIN_ENTRY);
    } else if (!(d = entry())) {
        st = polis__fail(env, POLIS_ERR_PLUGIN, "%s: %s: %s: %s returned NULL", src, sp->jpath,
                         path, POLIS_PLUGIN_ENTRY);
    } else if ((st = check_desc(env, sp->jpath, path, d)) == POLIS_OK) {
        if (sp->name && !sp->path && strcmp(sp->name, d->name) != 0) {
            st = polis__fail(env, POLIS_ERR_PLUGIN,
                             "%s: %s: %s declares plugin name \"%s\", not \"%s\"", src, sp->jpath,
                             path, d->name, sp->name);
        } else {
            polis_ctx *other = polis__ctx_find(env, d->name);
            if (other) {
                const char *ow = other->scn_plugin ? other->scn_plugin->jpath : "the kernel";
                st = polis__fail(env, POLIS_ERR_PLUGIN,
                                 "%s: %s: duplicate plugin name \"%s\" (also %s)", src, sp->jpath,
                                 d->name, ow);
            }
        }
    }
    if (st == POLIS_OK) {
        polis_ctx *ctx = polis__ctx_new(env, POLIS__CTX_PLUGIN, d->name);
        if (!ctx) {
            st = polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
        } else {
            ctx->dl = dl;
            ctx->desc = d;
            ctx->scn_plugin = sp;
            ctx->path = path;
            return POLIS_OK;
        }
    }
    dlclose(dl);
    polis__strfree(env, path);
    return st;
}

/* Depth-first visit in scenario order: a plugin's requirements init before it. */
static polis_status visit(polis_env *env, polis_ctx *ctx, int32_t *order, int32_t *n, uint8_t *mark,
                          int32_t first)
{
    int32_t k = ctx->index - first;
    if (mark[k] == 2) return POLIS_OK;
    if (mark[k] == 1)
        return polis__fail(env, POLIS_ERR_PLUGIN,
                           "%s: %s: plugin \"%s\" is part of a requirement cycle", env->scn.source,
                           ctx->scn_plugin->jpath, ctx->name);
    mark[k] = 1;
    const char *const *req = ctx->desc->requires;
    for (int32_t r = 0; req && req[r]; r++) {
        polis_ctx *dep = polis__ctx_find(env, req[r]);
        if (!dep || dep->kind != POLIS__CTX_PLUGIN)
            return polis__fail(env, POLIS_ERR_PLUGIN,
                               "%s: %s: plugin \"%s\" requires plugin \"%s\", which the scenario "
                               "does not load (add it to \"plugins\")",
                               env->scn.source, ctx->scn_plugin->jpath, ctx->name, req[r]);
        polis_status st = visit(env, dep, order, n, mark, first);
        if (st) return st;
    }
    mark[k] = 2;
    order[(*n)++] = ctx->index;
    return POLIS_OK;
}

polis_status polis__plugins_load(polis_env *env)
{
    polis_status st;
    int32_t first = env->n_ctxs;
    int32_t count = env->scn.n_plugins;
    for (int32_t i = 0; i < count; i++)
        if ((st = open_one(env, i)) != POLIS_OK) return st;
    if (count == 0) return POLIS_OK;

    int32_t *order = polis__alloc(env, sizeof(int32_t) * (size_t)count);
    uint8_t *mark = polis__alloc(env, (size_t)count);
    int32_t n = 0;
    st = (!order || !mark) ? polis__fail(env, POLIS_ERR_NOMEM, "out of memory") : POLIS_OK;
    for (int32_t i = 0; st == POLIS_OK && i < count; i++)
        st = visit(env, env->ctxs[first + i], order, &n, mark, first);
    /* Reorder the ctx array into init order, so unload can walk it backwards. */
    if (st == POLIS_OK) {
        polis_ctx **tmp = polis__alloc(env, sizeof(polis_ctx *) * (size_t)count);
        if (!tmp) {
            st = polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
        } else {
            for (int32_t i = 0; i < count; i++) tmp[i] = env->ctxs[order[i]];
            for (int32_t i = 0; i < count; i++) {
                env->ctxs[first + i] = tmp[i];
                tmp[i]->index = first + i;
            }
            polis__free(env, tmp, sizeof(polis_ctx *) * (size_t)count);
        }
    }
    polis__free(env, order, sizeof(int32_t) * (size_t)count);
    polis__free(env, mark, (size_t)count);
    if (st) return st;

    const polis_host *host = polis__host();
    for (int32_t i = first; i < first + count; i++) {
        polis_ctx *ctx = env->ctxs[i];
        const polis_plugin_desc *d = ctx->desc;
        char jpath[96];
        snprintf(jpath, sizeof jpath, "%s.params", ctx->scn_plugin->jpath);
        ctx->param_defs = d->params;
        ctx->n_param_defs = d->n_params;
        ctx->params_size = d->params_size;
        st = polis__params_build(env, d->params, d->n_params, d->params_size,
                                 ctx->scn_plugin->params, jpath, &ctx->params);
        if (st) return st;
        polis__clear_error(env);
        env->current = ctx;
        uint64_t failures = env->alloc_failures;
        st = d->init(host, ctx, ctx->params, &ctx->head.state);
        env->current = NULL;
        if (st != POLIS_OK && env->alloc_failures != failures) st = POLIS_ERR_NOMEM;
        /* A failed init that already created its state still gets destroy(), so a plugin
         * frees in one place whatever it allocated before failing. */
        ctx->initialised = ctx->head.state != NULL || st == POLIS_OK;
        if (st != POLIS_OK) {
            char msg[POLIS_ERRMAX];
            snprintf(msg, sizeof msg, "%s", env->err[0] ? env->err : polis_status_str(st));
            return polis__fail(env, st == POLIS_ERR_NOMEM ? st : POLIS_ERR_PLUGIN,
                               "%s: %s: plugin \"%s\" init failed: %s", env->scn.source,
                               ctx->scn_plugin->jpath, ctx->name, msg);
        }
    }
    return POLIS_OK;
}

polis_status polis__plugins_start(polis_env *env)
{
    for (int32_t i = 0; i < env->n_ctxs; i++) {
        polis_ctx *ctx = env->ctxs[i];
        if (ctx->kind != POLIS__CTX_PLUGIN || !ctx->desc->start) continue;
        polis__clear_error(env);
        env->current = ctx;
        uint64_t failures = env->alloc_failures;
        polis_status st = ctx->desc->start(ctx, ctx->head.state);
        env->current = NULL;
        if (st != POLIS_OK && env->alloc_failures != failures) st = POLIS_ERR_NOMEM;
        if (st != POLIS_OK) {
            char msg[POLIS_ERRMAX];
            snprintf(msg, sizeof msg, "%s", env->err[0] ? env->err : polis_status_str(st));
            return polis__fail(env, st == POLIS_ERR_NOMEM ? st : POLIS_ERR_PLUGIN,
                               "%s: %s: plugin \"%s\" start failed: %s", env->scn.source,
                               ctx->scn_plugin->jpath, ctx->name, msg);
        }
    }
    return POLIS_OK;
}

void polis__plugins_unload(polis_env *env)
{
    for (int32_t i = env->n_ctxs - 1; i >= 0; i--) {
        polis_ctx *ctx = env->ctxs[i];
        if (ctx->kind != POLIS__CTX_PLUGIN) continue;
        if (ctx->initialised && ctx->desc->destroy) ctx->desc->destroy(ctx, ctx->head.state);
        ctx->initialised = false;
        if (ctx->params)
            polis__params_free(env, ctx->desc->params, ctx->desc->n_params, ctx->desc->params_size,
                               ctx->params);
        ctx->params = NULL;
    }
    /* dlclose after every destroy: a plugin's destroy may still call into another's
     * service. */
    for (int32_t i = env->n_ctxs - 1; i >= 0; i--) {
        polis_ctx *ctx = env->ctxs[i];
        if (ctx->kind != POLIS__CTX_PLUGIN) continue;
        if (ctx->dl) dlclose(ctx->dl);
        ctx->dl = NULL;
        polis__strfree(env, ctx->path);
        ctx->path = NULL;
    }
}

/* ---- what the scenario loaded (polis/env.h) ------------------------------------------------ */

static bool loaded(const polis_ctx *c)
{
    return c->kind == POLIS__CTX_PLUGIN || c->kind == POLIS__CTX_SCRIPT;
}

int32_t polis_env_n_plugins(const polis_env *env)
{
    int32_t n = 0;
    for (int32_t i = 0; env && i < env->n_ctxs; i++) n += loaded(env->ctxs[i]);
    return n;
}

polis_status polis_env_plugin(const polis_env *env, int32_t i, polis_plugin_info *out)
{
    if (!env || !out || i < 0) return POLIS_ERR_INVALID;
    for (int32_t c = 0; c < env->n_ctxs; c++) {
        const polis_ctx *ctx = env->ctxs[c];
        if (!loaded(ctx) || i-- > 0) continue;
        bool so = ctx->kind == POLIS__CTX_PLUGIN;
        const char *path = so ? ctx->path : ctx->scn_script ? ctx->scn_script->path : NULL;
        *out = (polis_plugin_info){
            .name = ctx->name,
            .version = so && ctx->desc && ctx->desc->version ? ctx->desc->version : "",
            .kind = so ? POLIS_PLUGIN_SO : POLIS_PLUGIN_LUA,
            .path = path ? path : "",
        };
        return POLIS_OK;
    }
    return POLIS_ERR_INVALID;
}
