/* include/polis/kit.h: the parameter macros agree with hand-written entries, the counts count,
 * and every text, word and number helper on ordinary, edge and hostile input. The text
 * helpers write through a stand-in host table whose text_append/text_printf fill a buffer. */
#include <stdarg.h>

#include "check.h"
#include "polis/kit.h"

/* ---- a stand-in for the kernel's text buffer ------------------------------------------------ */

typedef struct buf {
    char s[512];
    size_t n;
} buf;

static void append(polis_text *t, const char *s, size_t n)
{
    buf *b = (buf *)(void *)t;
    if (b->n + n < sizeof b->s) {
        memcpy(b->s + b->n, s, n);
        b->n += n;
        b->s[b->n] = '\0';
    }
}

static void printf_(polis_text *t, const char *fmt, ...) POLIS_PRINTF(2, 3);
static void printf_(polis_text *t, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    append(t, tmp, (size_t)n);
}

static const char *text(void (*fn)(const polis_host *, polis_text *, void *), void *arg)
{
    static buf b;
    static polis_host h;
    memset(&b, 0, sizeof b);
    h.text_append = append;
    h.text_printf = printf_;
    fn(&h, (polis_text *)(void *)&b, arg);
    return b.s;
}

static void put_json(const polis_host *h, polis_text *t, void *s)
{
    polis_kit_put_json_string(h, t, s);
}

static void put_offset(const polis_host *h, polis_text *t, void *d)
{
    const int32_t *xy = d;
    polis_kit_put_offset(h, t, xy[0], xy[1]);
}

static void put_number(const polis_host *h, polis_text *t, void *v)
{
    polis_kit_put_number(h, t, *(const double *)v);
}

/* ---- parameters ------------------------------------------------------------------------------ */

typedef struct params {
    int64_t n;
    double x;
    bool b;
    const char *s;
    const polis_json *j;
} params;

static const polis_param_def KIT[] = {
    POLIS_P_INT(params, "n", n, -5, 5, 2, "an int"),
    POLIS_P_DOUBLE(params, "x", x, 0, 1, 0.5, "a double"),
    POLIS_P_BOOL(params, "b", b, true, "a bool"),
    POLIS_P_STRING(params, "s", s, "hi", "a string"),
    POLIS_P_JSON(params, "j", j, "anything"),
};

static const polis_param_def HAND[] = {
    {"n", POLIS_PARAM_INT, offsetof(params, n), -5, 5, 2, NULL, "an int", false},
    {"x", POLIS_PARAM_DOUBLE, offsetof(params, x), 0, 1, 0.5, NULL, "a double", false},
    {"b", POLIS_PARAM_BOOL, offsetof(params, b), 0, 1, 1, NULL, "a bool", false},
    {"s", POLIS_PARAM_STRING, offsetof(params, s), 0, 0, 0, "hi", "a string", false},
    {"j", POLIS_PARAM_JSON, offsetof(params, j), 0, 0, 0, NULL, "anything", false},
};

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *p, void **s)
{
    return POLIS_OK;
}

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("kit_test", 3),
    POLIS_DESC_PARAMS(KIT, params),
    .init = init,
};

static void test_params(void)
{
    CHECK_EQ_INT(POLIS_COUNT(KIT), 5);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_STR(KIT[i].key, HAND[i].key);
        CHECK_EQ_INT(KIT[i].type, HAND[i].type);
        CHECK_EQ_INT((long long)KIT[i].offset, (long long)HAND[i].offset);
        CHECK(KIT[i].min == HAND[i].min && KIT[i].max == HAND[i].max);
        CHECK(KIT[i].def_num == HAND[i].def_num);
        CHECK((KIT[i].def_str == NULL) == (HAND[i].def_str == NULL));
        CHECK_EQ_STR(KIT[i].doc, HAND[i].doc);
        CHECK(KIT[i].required == HAND[i].required);
    }
    CHECK_EQ_INT(DESC.abi_major, POLIS_ABI_MAJOR);
    CHECK_EQ_INT(DESC.abi_minor, 3);
    CHECK_EQ_INT(DESC.struct_size, sizeof(polis_plugin_desc));
    CHECK_EQ_STR(DESC.name, "kit_test");
    CHECK(DESC.params == KIT && DESC.n_params == 5 && DESC.params_size == sizeof(params));
}

/* ---- text -------------------------------------------------------------------------------------
 */

static void test_text(void)
{
    CHECK_EQ_STR(text(put_json, "agent_0"), "\"agent_0\"");
    CHECK_EQ_STR(text(put_json, "a \"b\" \\c\n\x01\xc3\xa9"),
                 "\"a \\\"b\\\" \\\\c\\u000a\\u0001\xc3\xa9\"");
    CHECK_EQ_STR(text(put_json, ""), "\"\"");
    int32_t d[][2] = {{0, 0}, {1, 0}, {-2, 1}, {0, -3}, {5, 5}};
    CHECK_EQ_STR(text(put_offset, d[0]), "here");
    CHECK_EQ_STR(text(put_offset, d[1]), "1 east (1 step)");
    CHECK_EQ_STR(text(put_offset, d[2]), "1 south, 2 west (3 steps)");
    CHECK_EQ_STR(text(put_offset, d[3]), "3 north (3 steps)");
    CHECK_EQ_STR(text(put_offset, d[4]), "5 south, 5 east (10 steps)");
    double v[] = {0.35, 100000, 0.1, -2.5e-7, 1.0 / 3.0, 0.0, 1e300};
    const char *want[] = {"0.35", "100000", "0.1", "-2.5e-07", "0.3333333333333333", "0", "1e+300"};
    for (int i = 0; i < 7; i++) CHECK_EQ_STR(text(put_number, &v[i]), want[i]);
    double inf = 1e308 * 10, nan = inf - inf;
    CHECK_EQ_STR(text(put_number, &inf), "null");
    CHECK_EQ_STR(text(put_number, &nan), "null");
}

/* ---- words and numbers -------------------------------------------------------------------------
 */

static void test_words(void)
{
    char b[32];
    const char *w[3];
    CHECK_EQ_INT(polis_kit_words("  Go  North.", " ", b, sizeof b, w, 3), 2);
    CHECK_EQ_STR(w[0], "go");
    CHECK_EQ_STR(w[1], "north");
    CHECK_EQ_INT(polis_kit_words("move_EAST-now", "_-", b, sizeof b, w, 3), 3);
    CHECK_EQ_STR(w[2], "now");
    CHECK_EQ_INT(polis_kit_words("a b c d", " ", b, sizeof b, w, 3), -1); /* too many */
    CHECK_EQ_INT(polis_kit_words("", " ", b, sizeof b, w, 3), 0);
    CHECK_EQ_INT(polis_kit_words("   ", " ", b, sizeof b, w, 3), 0);
    CHECK_EQ_INT(polis_kit_words(".", " ", b, sizeof b, w, 3), 0);
    CHECK_EQ_INT(polis_kit_words("0123456789012345678901234567890123", " ", b, sizeof b, w, 3), -1);
    CHECK_EQ_INT(polis_kit_words("x..", " ", b, sizeof b, w, 3), 1); /* one '.' dropped */
    CHECK_EQ_STR(w[0], "x.");

    CHECK(polis_kit_lower(b, sizeof b, "MiXeD 42_É"));
    CHECK_EQ_STR(b, "mixed 42_É");
    CHECK(!polis_kit_lower(b, 4, "four"));
    CHECK(polis_kit_lower(b, 5, "four"));

    int64_t v = 7;
    CHECK(polis_kit_parse_int("42", 0, 100, &v) && v == 42);
    CHECK(polis_kit_parse_int("-3", -5, 5, &v) && v == -3);
    CHECK(polis_kit_parse_int("+3", -5, 5, &v) && v == 3);
    CHECK(polis_kit_parse_int("-9223372036854775808", INT64_MIN, 0, &v) && v == INT64_MIN);
    CHECK(polis_kit_parse_int("9223372036854775807", 0, INT64_MAX, &v) && v == INT64_MAX);
    v = 7;
    CHECK(!polis_kit_parse_int("9223372036854775808", 0, INT64_MAX, &v));
    CHECK(!polis_kit_parse_int("99999999999999999999999", 0, INT64_MAX, &v));
    CHECK(!polis_kit_parse_int("101", 0, 100, &v));
    CHECK(!polis_kit_parse_int("", 0, 100, &v));
    CHECK(!polis_kit_parse_int("-", 0, 100, &v));
    CHECK(!polis_kit_parse_int("1 ", 0, 100, &v));
    CHECK(!polis_kit_parse_int("0x10", 0, 100, &v));
    CHECK_EQ_INT(v, 7); /* untouched by refusals */

    CHECK_EQ_INT(polis_kit_name_stem("miner_12"), 5);
    CHECK_EQ_INT(polis_kit_name_stem("miner"), 5);
    CHECK_EQ_INT(polis_kit_name_stem("miner_"), 6);
    CHECK_EQ_INT(polis_kit_name_stem("miner_1a"), 8);
    CHECK_EQ_INT(polis_kit_name_stem("a_b_3"), 3);
    CHECK_EQ_INT(polis_kit_name_index("group_3", "group", 10), 3);
    CHECK_EQ_INT(polis_kit_name_index("group_03", "group", 10), 3);
    CHECK_EQ_INT(polis_kit_name_index("group_10", "group", 10), -1);
    CHECK_EQ_INT(polis_kit_name_index("group_-1", "group", 10), -1);
    CHECK_EQ_INT(polis_kit_name_index("group_+1", "group", 10), -1);
    CHECK_EQ_INT(polis_kit_name_index("group3", "group", 10), -1);
    CHECK_EQ_INT(polis_kit_name_index("groups_3", "group", 10), -1);
    CHECK_EQ_INT(polis_kit_name_index("group_", "group", 10), -1);
    CHECK_EQ_INT(polis_kit_name_index("agent_99999999999999999999", "agent", 10), -1);
}

/* ---- the grid -----------------------------------------------------------------------------------
 */

static char last_error[256];
static const polis_grid *the_grid;

static const polis_grid *grid_of(polis_ctx *ctx) { return the_grid; }

static void error_(polis_ctx *ctx, const char *fmt, ...) POLIS_PRINTF(2, 3);
static void error_(polis_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

static void test_grid(void)
{
    polis_host h;
    memset(&h, 0, sizeof h);
    h.grid = grid_of;
    h.error = error_;
    polis_grid g = {.width = 3, .height = 2};
    the_grid = &g;
    CHECK(polis_kit_need_grid(&h, NULL) == &g);
    CHECK_EQ_STR(last_error, "");
    the_grid = NULL;
    CHECK(polis_kit_need_grid(&h, NULL) == NULL);
    CHECK_EQ_STR(last_error,
                 "needs a grid: add \"grid\": {\"width\": W, \"height\": H} to the scenario");
}

/* ---- JSON input for parsers ----------------------------------------------------------------- */

static polis_status next_status;
static char parsed_name[32];

static polis_status stub_parse(polis_ctx *ctx, const char *text, size_t len, const char *name,
                               const polis_json **out)
{
    snprintf(parsed_name, sizeof parsed_name, "%s", name);
    *out = NULL;
    return next_status;
}

static void test_json_input(void)
{
    polis_json_api api = {.version = 1, .struct_size = sizeof api, .parse = stub_parse};
    const polis_json *doc;
    const polis_status in[] = {POLIS_OK, POLIS_ERR_CONFIG, POLIS_ERR_LIMIT, POLIS_ERR_NOMEM,
                               POLIS_ERR_INVALID};
    const polis_status want[] = {POLIS_OK, POLIS_ERR_ACTION, POLIS_ERR_ACTION, POLIS_ERR_NOMEM,
                                 POLIS_ERR_ACTION};
    for (int i = 0; i < 5; i++) {
        next_status = in[i];
        CHECK_EQ_INT(polis_kit_json_input(&api, NULL, "{}", &doc), want[i]);
        CHECK_EQ_STR(parsed_name, "action");
    }
}

int main(void)
{
    test_grid();
    test_json_input();
    test_params();
    test_text();
    test_words();
    CHECK_DONE();
}
