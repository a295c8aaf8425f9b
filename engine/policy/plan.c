/*
 * engine/policy/plan.c — plans (macro actions): multi-tick controllers a client starts for one
 * agent with a text command ("GATHER 3 wood") and then asks, tick by tick, for the agent's
 * primitive action until the macro reports that the goal is reached or cannot be.
 *
 * Every agent's plan state is allocated once, when the registries freeze, for the largest
 * plan_size any macro asked for; starting and running plans allocates nothing. A plan is
 * stamped with the episode it started in, so a reset ends every plan without touching
 * them. The kernel calls a macro's `next` at most once per tick: a repeated plan_next in
 * the same tick answers from the action it kept.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/internal.h"

#define PLAN_SIZE_MAX 4096
#define MACRO_NAME_MAX 63

/* [A-Z][A-Z0-9_]*: the command word of a plan, typed by LLMs and people. */
static bool valid_macro_name(const char *name)
{
    if (!(name[0] >= 'A' && name[0] <= 'Z')) return false;
    size_t n = 0;
    for (const char *p = name; *p; p++, n++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
    return n <= MACRO_NAME_MAX;
}

static int32_t find_macro(const polis_env *env, const char *word, size_t len)
{
    for (int32_t i = 0; i < env->policy->n_macros; i++) {
        const char *name = env->policy->macros[i].name;
        size_t k = 0;
        for (; k < len && name[k]; k++) {
            char c = word[k];
            if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
            if (c != name[k]) break;
        }
        if (k == len && name[k] == '\0') return i;
    }
    return -1;
}

polis_status polis__macro_add(polis_ctx *ctx, const polis_macro_def *def)
{
    polis_env *env = ctx->env;
    const polis_host *h = ctx->head.host;
    if (env->state != POLIS__ENV_LOADING) {
        h->error(ctx, "macro: registration is closed once the env is created (register in "
                      "init or start)");
        return POLIS_ERR_STATE;
    }
    if (!def) {
        h->error(ctx, "macro: definition is NULL");
        return POLIS_ERR_INVALID;
    }
    if (!def->name || !valid_macro_name(def->name)) {
        h->error(ctx,
                 "macro name \"%s\" is not 1 to %d characters from A-Z, 0-9 and _ "
                 "starting with a letter",
                 def->name ? def->name : "(null)", MACRO_NAME_MAX);
        return POLIS_ERR_INVALID;
    }
    if (!def->start || !def->next) {
        h->error(ctx, "macro %s: %s is NULL", def->name, def->start ? "next" : "start");
        return POLIS_ERR_INVALID;
    }
    if (def->plan_size > PLAN_SIZE_MAX) {
        h->error(ctx, "macro %s: plan_size %zu is larger than %d", def->name, def->plan_size,
                 PLAN_SIZE_MAX);
        return POLIS_ERR_INVALID;
    }
    int32_t dup = find_macro(env, def->name, strlen(def->name));
    if (dup >= 0) {
        h->error(ctx, "macro \"%s\" is already registered by %s", def->name,
                 env->policy->macros[dup].ctx->name);
        return POLIS_ERR_INVALID;
    }
    struct polis__policy_state *ps = env->policy;
    polis_status st =
        polis__grow(env, (void **)&ps->macros, &ps->cap_macros, ps->n_macros, sizeof *ps->macros);
    if (st) return st;
    polis__macro *m = &env->policy->macros[env->policy->n_macros];
    m->name = polis__strdup(env, def->name);
    m->usage = polis__strdup(env, def->usage && *def->usage ? def->usage : def->name);
    m->doc = polis__strdup(env, def->doc ? def->doc : "");
    if (!m->name || !m->usage || !m->doc) {
        polis__strfree(env, m->name);
        polis__strfree(env, m->usage);
        polis__strfree(env, m->doc);
        memset(m, 0, sizeof *m);
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    }
    m->plan_size = def->plan_size;
    m->start = def->start;
    m->next = def->next;
    m->ud = def->ud;
    m->ctx = ctx;
    env->policy->n_macros++;
    return POLIS_OK;
}

/* The largest plan_size, in 16-byte steps: they keep every agent's plan aligned for any
 * struct a macro keeps there. */
static size_t plan_stride(const struct polis__policy_state *ps)
{
    size_t largest = 0;
    for (int32_t i = 0; i < ps->n_macros; i++)
        if (ps->macros[i].plan_size > largest) largest = ps->macros[i].plan_size;
    return (largest + 15) & ~(size_t)15;
}

size_t polis__plans_agent_bytes(const polis_env *env)
{
    const struct polis__policy_state *ps = env->policy;
    return ps->n_macros ? plan_stride(ps) + sizeof *ps->plans : 0;
}

polis_status polis__plans_alloc(polis_env *env)
{
    struct polis__policy_state *ps = env->policy;
    if (ps->n_macros == 0 || env->n_agents == 0) return POLIS_OK;
    ps->plan_stride = plan_stride(ps);
    size_t n = (size_t)env->n_agents;
    ps->plans = polis__alloc(env, n * sizeof *ps->plans);
    if (ps->plan_stride) ps->plan_mem = polis__alloc(env, n * ps->plan_stride);
    if (!ps->plans || (ps->plan_stride && !ps->plan_mem))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory allocating plan state");
    for (size_t a = 0; a < n; a++) ps->plans[a].macro = -1;
    return POLIS_OK;
}

void polis__plans_free(polis_env *env)
{
    struct polis__policy_state *ps = env->policy;
    size_t n = (size_t)env->n_agents;
    polis__free(env, ps->plans, n * sizeof *ps->plans);
    polis__free(env, ps->plan_mem, n * ps->plan_stride);
    ps->plans = NULL;
    ps->plan_mem = NULL;
    for (int32_t i = 0; i < ps->n_macros; i++) {
        polis__strfree(env, ps->macros[i].name);
        polis__strfree(env, ps->macros[i].usage);
        polis__strfree(env, ps->macros[i].doc);
    }
    polis__free(env, ps->macros, sizeof *ps->macros * (size_t)ps->cap_macros);
    ps->macros = NULL;
    ps->n_macros = ps->cap_macros = 0;
}

/* Macros in registration order: the plan commands a client can give an agent. */
void polis__macros_describe(polis__describe *b, cJSON *root, const polis_env *env)
{
    const struct polis__policy_state *ps = env->policy;
    cJSON *arr = polis__describe_arr(b, root, "macros");
    for (int32_t i = 0; i < ps->n_macros; i++) {
        cJSON *o = polis__describe_obj(b, arr, NULL);
        polis__describe_str(b, o, "name", ps->macros[i].name);
        polis__describe_str(b, o, "usage", ps->macros[i].usage);
        polis__describe_str(b, o, "doc", ps->macros[i].doc);
        polis__describe_str(b, o, "owner", polis__describe_owner(ps->macros[i].ctx));
    }
}

/* ---- listing ------------------------------------------------------------------------------ */

int32_t polis_env_n_macros(const polis_env *env) { return env ? env->policy->n_macros : 0; }

static const polis__macro *macro_at(const polis_env *env, int32_t macro)
{
    return env && macro >= 0 && macro < env->policy->n_macros ? &env->policy->macros[macro] : NULL;
}

const char *polis_env_macro_name(const polis_env *env, int32_t macro)
{
    const polis__macro *m = macro_at(env, macro);
    return m ? m->name : NULL;
}

const char *polis_env_macro_usage(const polis_env *env, int32_t macro)
{
    const polis__macro *m = macro_at(env, macro);
    return m ? m->usage : NULL;
}

const char *polis_env_macro_doc(const polis_env *env, int32_t macro)
{
    const polis__macro *m = macro_at(env, macro);
    return m ? m->doc : NULL;
}

/* ---- running ------------------------------------------------------------------------------ */

/* The agent's plan record if it has a plan running in this episode, else NULL. */
static polis__plan *running_plan(const polis_env *env, int32_t agent)
{
    if (!env || !env->policy->plans || agent < 0 || agent >= env->n_agents) return NULL;
    polis__plan *p = &env->policy->plans[agent];
    return p->macro >= 0 && p->episode == env->episode ? p : NULL;
}

static void *plan_memory(polis_env *env, int32_t agent)
{
    /* a macro with plan_size 0 still gets a valid pointer it never reads through */
    const struct polis__policy_state *ps = env->policy;
    return ps->plan_mem ? ps->plan_mem + (size_t)agent * ps->plan_stride : (void *)ps->plans;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static polis_status check_agent(polis_env *env, const char *fn, int32_t agent)
{
    if (env->state != POLIS__ENV_RUNNING && env->state != POLIS__ENV_DONE)
        return polis__fail(env, POLIS_ERR_STATE, "%s: %s", fn,
                           env->state == POLIS__ENV_BROKEN
                               ? "the previous step or reset failed; call reset"
                               : "call reset before using plans");
    if (agent < 0 || agent >= env->n_agents)
        return polis__fail(env, POLIS_ERR_INVALID, "%s: agent %d is not an agent id (0..%d)", fn,
                           agent, env->n_agents - 1);
    return POLIS_OK;
}

/* "GATHER, CRAFT" into buf, for messages that should say what could have been asked. */
static const char *macro_list(const polis_env *env, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < env->policy->n_macros && len < cap; i++) {
        int n = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", env->policy->macros[i].name);
        if (n < 0) break;
        len += (size_t)n;
    }
    return buf;
}

polis_status polis_env_plan_start(polis_env *env, int32_t agent, const char *command)
{
    if (!env) return POLIS_ERR_INVALID;
    polis__clear_error(env);
    polis_status st = check_agent(env, "plan_start", agent);
    if (st) return st;
    const char *aname = env->scn.agent_names[agent];
    if (!command)
        return polis__fail(env, POLIS_ERR_INVALID, "plan_start: agent %d (%s): command is NULL",
                           agent, aname);
    if (env->policy->n_macros == 0)
        return polis__fail(env, POLIS_ERR_ACTION,
                           "plan_start: agent %d (%s): the scenario has no macros", agent, aname);
    /* whatever happens next, the agent's previous plan is over */
    polis__plan *p = &env->policy->plans[agent];
    p->macro = -1;
    p->why[0] = '\0';
    if (env->io.terminations[agent] || env->io.truncations[agent])
        return polis__fail(env, POLIS_ERR_STATE,
                           "plan_start: agent %d (%s) has finished the episode (tick %lld)", agent,
                           aname, (long long)env->tick);

    while (is_space(*command)) command++;
    size_t len = strlen(command);
    while (len && is_space(command[len - 1])) len--;
    if (len == 0)
        return polis__fail(env, POLIS_ERR_ACTION, "plan_start: agent %d (%s): the command is empty",
                           agent, aname);
    if (len >= POLIS__PLAN_COMMAND_MAX)
        return polis__fail(env, POLIS_ERR_ACTION,
                           "plan_start: agent %d (%s): the command is longer than %d characters",
                           agent, aname, POLIS__PLAN_COMMAND_MAX - 1);
    size_t word = 0;
    while (word < len && !is_space(command[word])) word++;
    int32_t mi = find_macro(env, command, word);
    if (mi < 0) {
        char list[512];
        return polis__fail(env, POLIS_ERR_ACTION,
                           "plan_start: agent %d (%s): unknown macro \"%.*s\" (macros: %s)", agent,
                           aname, (int)(word > 64 ? 64 : word), command,
                           macro_list(env, list, sizeof list));
    }
    memcpy(p->command, command, len);
    p->command[len] = '\0';
    const char *args = p->command + word;
    while (is_space(*args)) args++;

    const polis__macro *m = &env->policy->macros[mi];
    void *mem = plan_memory(env, agent);
    memset(mem, 0, m->plan_size);
    env->err[0] = '\0';
    env->current = m->ctx;
    st = m->start(m->ctx, m->ud, agent, args, mem);
    env->current = NULL;
    if (st == POLIS_ERR_ACTION) {
        /* a refusal: the macro's reason is what the client needs, with the place around it */
        char reason[POLIS_ERRMAX];
        snprintf(reason, sizeof reason, "%s", env->err[0] ? env->err : "refused the arguments");
        return polis__fail(env, POLIS_ERR_ACTION, "plan_start: agent %d (%s): %s: %s", agent, aname,
                           m->name, reason);
    }
    if (st != POLIS_OK) {
        char what[192];
        snprintf(what, sizeof what, "macro %s start, agent %d (%s)", m->name, agent, aname);
        polis__place_error(env, m->ctx, st, what);
        return st;
    }
    p->macro = mi;
    p->episode = env->episode;
    p->tick = -1;
    p->action = 0;
    return POLIS_OK;
}

/* Ends p's plan with `state` and a reason: the macro's, or a default when it gave none. */
static void end_plan(polis__plan *p, polis_plan_state state, polis_plan_state *out_state,
                     const char **why)
{
    p->macro = -1;
    p->why[sizeof p->why - 1] = '\0';
    if (!p->why[0])
        snprintf(p->why, sizeof p->why, "%s",
                 state == POLIS_PLAN_DONE ? "done" : "the macro gave no reason");
    *out_state = state;
    if (why) *why = p->why;
}

polis_status polis_env_plan_next(polis_env *env, int32_t agent, polis_plan_state *state,
                                 int32_t *out_action, const char **why)
{
    if (!env) return POLIS_ERR_INVALID;
    polis__clear_error(env);
    if (why) *why = NULL;
    polis_status st = check_agent(env, "plan_next", agent);
    if (st) return st;
    if (!state || !out_action)
        return polis__fail(env, POLIS_ERR_INVALID, "plan_next: state or out_action is NULL");
    polis__plan *p = running_plan(env, agent);
    const char *aname = env->scn.agent_names[agent];
    if (!p)
        return polis__fail(env, POLIS_ERR_INVALID, "plan_next: agent %d (%s) has no plan", agent,
                           aname);
    if (env->io.terminations[agent] || env->io.truncations[agent]) {
        snprintf(p->why, sizeof p->why, "agent finished");
        end_plan(p, POLIS_PLAN_IMPOSSIBLE, state, why);
        return POLIS_OK;
    }
    if (p->tick == env->tick) {
        *state = POLIS_PLAN_RUNNING;
        *out_action = p->action;
        return POLIS_OK;
    }
    const polis__macro *m = &env->policy->macros[p->macro];
    polis_plan_state s = POLIS_PLAN_RUNNING;
    int32_t action = -1;
    p->why[0] = '\0';
    env->err[0] = '\0';
    env->current = m->ctx;
    st = m->next(m->ctx, m->ud, agent, plan_memory(env, agent), &s, &action, p->why, sizeof p->why);
    env->current = NULL;
    if (st != POLIS_OK) {
        p->macro = -1;
        char what[192];
        snprintf(what, sizeof what, "macro %s, agent %d (%s)", m->name, agent, aname);
        polis__place_error(env, m->ctx, st, what);
        return st;
    }
    if (s == POLIS_PLAN_DONE || s == POLIS_PLAN_IMPOSSIBLE) {
        end_plan(p, s, state, why);
        return POLIS_OK;
    }
    p->why[0] = '\0';
    const polis_io *io = &env->io;
    if (s != POLIS_PLAN_RUNNING) {
        p->macro = -1;
        return polis__fail(env, POLIS_ERR_ACTION,
                           "plan_next: macro %s: agent %d (%s): plan state %d is not RUNNING, "
                           "DONE or IMPOSSIBLE at tick %lld",
                           m->name, agent, aname, (int)s, (long long)env->tick);
    }
    if (action < 0 || action >= io->n_actions) {
        p->macro = -1;
        return polis__fail(env, POLIS_ERR_ACTION,
                           "plan_next: macro %s: agent %d (%s): action %d is outside [0, %d) at "
                           "tick %lld",
                           m->name, agent, aname, action, io->n_actions, (long long)env->tick);
    }
    if (!io->masks[(size_t)agent * (size_t)io->n_actions + (size_t)action]) {
        p->macro = -1;
        return polis__fail(env, POLIS_ERR_ACTION,
                           "plan_next: macro %s: agent %d (%s): action %d (%s) is not legal at "
                           "tick %lld",
                           m->name, agent, aname, action, env->actions[action].name,
                           (long long)env->tick);
    }
    p->tick = env->tick;
    p->action = action;
    *state = POLIS_PLAN_RUNNING;
    *out_action = action;
    return POLIS_OK;
}

void polis_env_plan_cancel(polis_env *env, int32_t agent)
{
    polis__plan *p = running_plan(env, agent);
    if (p) p->macro = -1;
}

const char *polis_env_plan_command(const polis_env *env, int32_t agent)
{
    const polis__plan *p = running_plan(env, agent);
    return p ? p->command : NULL;
}
