/*
 * engine/record/record.c — the recorder: writes an episode of any game as a polis recording
 * (docs/recording.md) from what the kernel already knows — the scenario, the action table,
 * the looks the game registered (scene.c), every bus event (through a host subscriber), the
 * io buffers and the state hash. No per-game code.
 *
 * Each line is built in one growable buffer and handed to a sink: a file (gzip through zlib
 * when the name ends in ".gz") or the caller's function (the replay check compares the lines
 * it would write with the recorded ones). Per tick the recorder writes what changed since the
 * previous line: it keeps a copy of the last scene, compares tiles a row and agents a record
 * at a time, and things, nodes and edges first byte for byte, then (when they differ) by key
 * in one merge of the two key-sorted lists (sorted in place when a game appends them out of
 * order). Only what changed is formatted: integers without printf, floats through a memo of
 * their printf text, each event type's keys written once. Nothing is allocated once the
 * buffers are sized (the first lines; tests/unit/test_scene.c counts).
 *
 * A file is written (and deflated, for ".gz") by a writer thread of the recorder's own: the
 * stepping thread copies each finished line into one of two fixed chunks and hands a full
 * chunk over. Parts of a line are kept there as raw values (rec_op: a step's head, its
 * events, the agents and list elements that changed, a keyframe's tiles) and formatted by
 * the writer thread, so beside the step run mostly the comparisons that find what changed.
 * Some of those run on the writer thread too: the thread keeps the previous line's kept edge list
 * itself (its slots as kept_start read them, sent once an episode and whenever the list is
 * whole again), so the stepping thread sends only the new edges of the slots the kernel logged
 * as changed, and the thread compares, sorts and merges them with ranks of its own, brings its
 * copy up to date, and sorts it for a keyframe (put_edge_mirror, render_edge_mirror); agents and
 * stats of a few hundred bytes go whole, and the thread keeps the last line's to compare them
 * (agents_whole). Without a writer thread the same functions run on the stepping thread.
 * The bytes are those a direct write gives (a sink gets the same lines, formatted on the
 * calling thread); a failed write is reported by a call that hands a chunk over after the
 * thread found it (at the latest when every chunk is full: the stepping thread waits for one),
 * or by close.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cjson/cJSON.h>
#if defined(POLIS_HAVE_ISAL)
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

#include "polis/plugin.h" /* POLIS_ABI_*: the header names the plugin ABI */
#include "polis/record.h"
#include "polis/scene.h"
#include "polis/vary.h"
#include "polis/visibility.h"

/* The longest message the recorder keeps. */
#define REC_ERRMAX 1024

/* One field of an event type, as polis_env_event_field gives it once at open. */
typedef struct ev_field {
    polis_ftype type;
    size_t offset;
} ev_field;

typedef struct rbuf {
    char *p;
    size_t len, cap;
    bool oom;
    int64_t grows; /* allocations so far (the buffers only grow; tests count them) */
} rbuf;

static void rb_grow(rbuf *b, size_t more)
{
    if (b->oom) return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return;
    }
    b->p = p;
    b->cap = cap;
    b->grows++;
}

/* Room for `more` bytes and a terminating NUL (written by emit). */
static inline __attribute__((always_inline)) bool rb_room(rbuf *b, size_t more)
{
    if (b->len + more + 1 > b->cap) rb_grow(b, more);
    return !b->oom;
}

static inline __attribute__((always_inline)) void rb_put(rbuf *b, const char *s, size_t n)
{
    if (!rb_room(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static inline __attribute__((always_inline)) void rb_ch(rbuf *b, char c)
{
    if (!rb_room(b, 1)) return;
    b->p[b->len++] = c;
}

static void rb_puts(rbuf *b, const char *s) { rb_put(b, s, strlen(s)); }

/* n bytes copied in 64-byte blocks of fixed-size moves (then the rest), for the large copies of
 * a tick (a keyframe's tiles, 16 KiB on survival): libc's memcpy takes `rep movsb` at that size,
 * which valgrind counts a byte at a time; on the CPU the two cost about the same. */
static void copy_blocks(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    for (; n >= 64; n -= 64, d += 64, s += 64) memcpy(d, s, 64);
    if (n) memcpy(d, s, n);
}

/* n bytes (n <= 32) as at most two fixed-size moves that overlap, never past either end: a
 * step line's actions, rewards and flags (a few agents) without a call to memcpy each. */
static inline __attribute__((always_inline)) void copy_small(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (n >= 16) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++) d[i] = s[i];
    }
}

/* A string literal, its length known at compile time. */
#define RB_LIT(b, lit) rb_put((b), "" lit, sizeof(lit) - 1)

static void rb_printf(rbuf *b, const char *fmt, ...) POLIS_PRINTF(2, 3);
static void rb_printf(rbuf *b, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        rb_put(b, small, (size_t)n);
        return;
    }
    if (!rb_room(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* "00" to "99": two digits at a time */
static const char DIGITS2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

/* v (< 100) at p, one or two digits; writes two bytes either way (the second of a one-digit
 * number is overwritten by what follows or lies past the text's end) */
static inline char *put_u100(char *p, unsigned v)
{
    memcpy(p, DIGITS2 + 2 * v + (v < 10), 2);
    return p + 1 + (v >= 10);
}

/* An integer's text at p, without printf (the recorder writes thousands per tick; most are
 * small), with room for 20 bytes; returns the end. */
static char *put_int_long(char *p, int64_t v)
{
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    if (v < 0) *p++ = '-';
    int n = 1;
    for (uint64_t x = u; x >= 10; x /= 10) n++;
    char *q = p + n;
    for (; u >= 100; u /= 100) {
        q -= 2;
        memcpy(q, DIGITS2 + 2 * (u % 100), 2);
    }
    if (u >= 10)
        memcpy(q - 2, DIGITS2 + 2 * u, 2);
    else
        q[-1] = (char)('0' + u);
    return p + n;
}

#define INT_MAXLEN 20 /* "-9223372036854775808" */

/* v at p with room for INT_MAXLEN bytes; returns the end */
static inline char *put_int(char *p, int64_t v)
{
    if ((uint64_t)v < 100) return put_u100(p, (unsigned)v);
    return put_int_long(p, v);
}

static inline void rb_int(rbuf *b, int64_t v)
{
    if (rb_room(b, INT_MAXLEN)) b->len = (size_t)(put_int(b->p + b->len, v) - b->p);
}

/* ",v" or "v" */
static inline void rb_item(rbuf *b, bool comma, int64_t v)
{
    if (!rb_room(b, INT_MAXLEN + 1)) return;
    char *p = b->p + b->len;
    if (comma) *p++ = ',';
    b->len = (size_t)(put_int(p, v) - b->p);
}

/* A JSON string literal (RFC 8259 escapes; bytes >= 0x80 are passed through as UTF-8). Runs
 * of bytes that need no escape are copied at once. */
static void rb_str(rbuf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    rb_ch(b, '"');
    for (;;) {
        const unsigned char *q = p;
        while (*q >= 0x20 && *q != '"' && *q != '\\') q++;
        if (q > p) rb_put(b, (const char *)p, (size_t)(q - p));
        if (!*q) break;
        switch (*q) {
        case '"': RB_LIT(b, "\\\""); break;
        case '\\': RB_LIT(b, "\\\\"); break;
        case '\n': RB_LIT(b, "\\n"); break;
        case '\r': RB_LIT(b, "\\r"); break;
        case '\t': RB_LIT(b, "\\t"); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[*q >> 4], hex[*q & 15]};
            rb_put(b, u, sizeof u);
        }
        }
        p = q + 1;
    }
    rb_ch(b, '"');
}

/* A string held in an array of cap bytes (a scene element's id, kind or label: NUL-terminated
 * in it; cap a multiple of 16) as rb_str writes it, at q with room for cap + 2 bytes, its bytes
 * looked at 16 at a time; returns the end, or NULL when the string needs an escape (or the
 * build has no SSE2): rb_str writes it then. */
static inline char *put_str_in(char *q, const char *s, size_t cap)
{
#if defined(__SSE2__)
    const __m128i ctl = _mm_set1_epi8(0x1f), quote = _mm_set1_epi8('"'), bsl = _mm_set1_epi8('\\');
    *q++ = '"';
    for (size_t i = 0; i < cap; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        /* a byte below 0x20 (the NUL that ends it among them), a quote or a backslash */
        __m128i sp = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bsl)));
        unsigned m = (unsigned)_mm_movemask_epi8(sp);
        _mm_storeu_si128((__m128i *)(void *)(q + i), v);
        if (m) {
            size_t k = i + (unsigned)__builtin_ctz(m);
            if (s[k]) return NULL;
            q[k] = '"';
            return q + k + 1;
        }
    }
#else
    (void)q;
    (void)s;
    (void)cap;
#endif
    return NULL;
}

/* Floats as printf writes them ("%.9g" for f32, "%.17g" for f64), remembered by their bits:
 * a game's rewards and event values take few distinct values, so printf runs once per value
 * (a direct-mapped table; a collision only costs a printf). */
#define MEMO_SLOTS 256

typedef struct num_memo {
    uint64_t bits;
    uint8_t len; /* 0: empty */
    char s[31];
} num_memo;

/* The longest text put_f32 / put_f64 write ("%.17g" is at most 24 bytes: sign, 17 digits,
 * point, "e-308"). */
#define FLOAT_MAXLEN 31

static char *put_memo(char *p, num_memo *memo, uint64_t bits, double v, bool f32)
{
    uint64_t h = (bits * 0x9e3779b97f4a7c15ULL) >> 56; /* 0..255 */
    num_memo *m = &memo[h];
    if (m->len == 0 || m->bits != bits) {
        int n = snprintf(m->s, sizeof m->s, f32 ? "%.9g" : "%.17g", v);
        if (n <= 0 || (size_t)n >= sizeof m->s) { /* cannot happen (FLOAT_MAXLEN) */
            m->len = 0;
            memcpy(p, "null", 4);
            return p + 4;
        }
        m->bits = bits;
        m->len = (uint8_t)n;
    }
    memcpy(p, m->s, sizeof m->s); /* the slot's whole text buffer: a fixed-size copy */
    return p + m->len;
}

/* A float with enough digits to round-trip as f32, at p with room for FLOAT_MAXLEN bytes;
 * JSON has no infinities or NaN. */
static char *put_f32(char *p, num_memo *memo, float v)
{
    if (v != v || v > FLT_MAX || v < -FLT_MAX) {
        memcpy(p, "null", 4);
        return p + 4;
    }
    if (v < 16777216.0f && v > -16777216.0f && v == (float)(int32_t)v)
        return put_int(p, (int32_t)v); /* what %.9g prints for a whole number (0 for -0) */
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return put_memo(p, memo, bits, (double)v, true);
}

static char *put_f64(char *p, num_memo *memo, double v)
{
    if (v != v || v > DBL_MAX || v < -DBL_MAX) {
        memcpy(p, "null", 4);
        return p + 4;
    }
    if (v < 1e15 && v > -1e15 && v == (double)(int64_t)v && (v != 0 || !signbit(v)))
        return put_int(p, (int64_t)v); /* what %.17g prints for a whole number */
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return put_memo(p, memo + MEMO_SLOTS, bits, v, false);
}

static void rb_f32(rbuf *b, num_memo *memo, float v)
{
    if (rb_room(b, FLOAT_MAXLEN)) b->len = (size_t)(put_f32(b->p + b->len, memo, v) - b->p);
}

static void rb_f64(rbuf *b, num_memo *memo, double v)
{
    if (rb_room(b, FLOAT_MAXLEN)) b->len = (size_t)(put_f64(b->p + b->len, memo, v) - b->p);
}

/* An element of a list being sorted, with its key's leading bytes as numbers: up to three
 * parts (a thing's id; a node's id; an edge's source, target and kind), each part's first 16
 * bytes as two big-endian numbers, and in `whole` the parts they hold whole (a string of at
 * most 16 bytes: the rest of its array is NUL), so that most comparisons compare numbers and
 * the rest compare the elements' keys (list_desc.cmp). */
typedef struct sort_key {
    uint64_t a[6];
    const char *el;
    uint32_t whole; /* bit p: part p is all in a[2p], a[2p + 1] */
} sort_key;

#define KEY_WHOLE 7u

/* A list of the scene (things, nodes or edges) as the diff needs it: sorted by key. */
typedef struct sorted_list {
    const void *el; /* the scene's own array when it came sorted, else `copy` */
    void *copy;     /* [cap + 1] */
    void *raw;      /* [cap + 1]: the unsorted list `copy` was sorted from (n_raw long) */
    void *prev;     /* the previous line's list, sorted: [cap + 1] */
    int32_t n, n_prev, n_raw, cap;
    int32_t *idx; /* [3 * (cap + 1)]: a diff's added, moved and deleted elements */
    int32_t *ord; /* [cap + 1]: the sort's order */
    char *out;    /* a diff's OP_LIST: [u32 list, adds, moves, dels] then the elements */
    /* [cap + 1] each: the elements a diff merges, in key order */
    const char **pcur, **pprev;
    /* A list a plugin keeps in slots (polis_env_scene_kept): while `kept`, prev holds the
     * previous line's elements in no order, prev[i] the element of slot kslot[i], slot s's at
     * kpos[s] (-1: none), as in scene number kseen; a step then looks only at the slots changed
     * since (kchg), their old and new elements sorted by key through pprev and pcur. `fast`:
     * this tick's scene is read that way (no sorted copy unless a keyframe needs one). */
    bool kept, fast;
    bool same;           /* this scene's list is the previous line's, byte for byte (take_scene) */
    polis_scene_kept kp; /* the slots (kept_start): where, rewritten by every scene */
    int32_t kslots;
    uint64_t kseen;
    int32_t *kpos, *kchg;  /* [kslots + 1] */
    int32_t *kslot;        /* [cap + 1] */
    sort_key *keys;        /* [cap + 1]: a sort's elements */
    int32_t *ktmp;         /* [cap + 1]: its merge buffer */
    struct edge_ranks *er; /* a kept edge list's keys as numbers (NULL: none) */
    /* A kept edge list the writer thread keeps a copy of (`mirror`; put_edge_mirror): the
     * stepping thread sends the new edges of the changed slots (OP_EMIRROR, from `mbuf`), the
     * thread diffs them against its copy. mpend: prev, kpos and kslot hold the list kept_start
     * read, not yet sent to the thread (they are stale once sent); unmirror: this tick's list
     * is not whole (take_scene), diffed against the thread's copy (the stepping thread has
     * none); mkey: a keyframe's list is the thread's copy, sorted there. The thread's own list
     * (rec_writer.edges) uses kwhere: [kslots + 1], where each changed slot's new edge is. */
    bool mirror, mpend, unmirror, mkey;
    char *mbuf;
    int32_t *kwhere;
    uint32_t mkey_op[1];
} sorted_list;

static void ranks_free(struct edge_ranks *er);
static void list_free(sorted_list *l);
static bool sort_ranked(struct polis_recorder *r, sorted_list *l);

/* What the diff needs to know of a list: its element size, key order, and how elements
 * are written. */
typedef struct list_desc {
    const char *member; /* ",\"things\":{" */
    size_t size;
    int (*cmp)(const void *, const void *);      /* key order */
    void (*key)(sort_key *, const void *);       /* the key's leading bytes as numbers */
    bool (*changed)(const void *, const void *); /* same key, replaced (new kind, label, weight) */
    bool (*moved)(const void *, const void *);   /* same key, new position; NULL: no "move" */
    bool del_changed;                            /* a replaced element is a "del" and an "add" */
    void (*put_add)(rbuf *, num_memo *, const void *);
    void (*put_move)(rbuf *, num_memo *, const void *);
    void (*put_del)(rbuf *, num_memo *, const void *);
} list_desc;

enum { L_THINGS, L_NODES, L_EDGES, L_COUNT };

/* One element of any list, aligned (the recorded op's bytes are not). */
typedef union {
    polis_scene_thing t;
    polis_scene_node n;
    polis_scene_edge e;
} scene_el;

/* A piece of a line kept as raw values and formatted where the line is written out (on the
 * writer thread when there is one): the step line's head (tick, actions, rewards, flags), the
 * tick's events, the changes of agents, things, nodes and edges, and a keyframe's tiles. A line is
 * its text with these pieces spliced in at their offsets. */
enum {
    OP_HEAD = 1,
    OP_EVENTS = 2,
    OP_TILES = 3,
    OP_LIST = 4,
    OP_AGENTS = 5,
    OP_HASH = 6,
    OP_WHOLE = 7,
    OP_PAIRS = 8,
    OP_EMIRROR = 9,
    OP_AGENTS_WHOLE = 10,
    OP_KEY_AGENTS = 11,
    OP_TDIFF = 12,
    OP_SCENE = 13,
    OP_KEY_SCENE = 14
};
/* OP_SCENE's first u32 (then a u32 of padding and a scene copy's take): a step line's scene,
 * drawn and diffed by the writer thread into the line; a reset's, drawn only (the keyframe
 * after it shows it). OP_KEY_SCENE: [u32 keep][u32 pad][f64 returns per agent], a keyframe's
 * scene (its tiles, things, agents, nodes and edges) from the writer thread's last drawn, kept
 * for the next diff when `keep` (an episode's first). */
enum { SCENE_STEP = 0, SCENE_RESET = 1 };
/* The OP_EMIRROR modes (its first u32): a step line's changed slots of a kept edge list, the
 * same after the whole list and its slots (kept_start's, sent at the first changes after it), a
 * step line's whole list when no longer whole, a keyframe's list (the thread's copy, sorted) */
enum { MIRROR_CHANGES = 0, MIRROR_START = 1, MIRROR_WHOLE = 2, MIRROR_KEY = 3 };

/* a step line: head, events, changed tiles, agents, a change of each list; a keyframe: hash,
 * tiles, lists */
#define REC_MAXOPS (4 + L_COUNT)
/* the changed tiles a step line holds as raw values (OP_TDIFF: [i32 layer, x, y, kind] each,
 * formatted where the line is written out); more in one line are formatted beside the step */
#define TDIFF_MAX 64

typedef struct rec_op {
    uint32_t at, kind, len; /* offset in the line's text, OP_*, bytes of raw values */
    const void *src;
} rec_op;

/* A line in a chunk: [u32 text length][u32 ops] ops' {at, kind, len} (u32 each), the text,
 * then each op's raw values. */
#define FRAME_HEAD (2 * sizeof(uint32_t))
#define FRAME_OP (3 * sizeof(uint32_t))

/* The file's writer thread: chunk[fill] is filled by the stepping thread, then handed over to
 * the thread's queue (`queue`, in order) and another free chunk (`free_c`, the one freed last:
 * warm in the caches) is filled. Most of the time two chunks take turns; the others are used
 * only while the thread is behind (the host ran something else on its CPU for a few
 * milliseconds, a slow write, a burst of keyframes), so that the stepping thread waits only
 * when all are full. Every chunk is allocated at open (a chunk never used stays unmapped
 * memory): nothing grows per tick. */
#define REC_CHUNK ((size_t)1 << 17)
#define REC_CHUNKS 32
/* Room a chunk keeps past a line: writer_put copies a text this short as this many bytes */
#define REC_SLACK 16
/* The state copies a keyframe's hash is made from: at most this many, of at most this many
 * bytes together (at least two) */
#define REC_SNAPS 128
#define REC_SNAP_BUDGET ((size_t)16 << 20)

typedef struct rec_writer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a chunk queued (for the thread) or freed (for the stepper), or stop */
    char *chunk[REC_CHUNKS];
    size_t len[REC_CHUNKS], cap[REC_CHUNKS]; /* cap: REC_CHUNK, or more once a line was larger */
    int fill;                                /* the stepping thread's */
    /* under mu: the chunks handed over, in order (queue[(q_head + i) % REC_CHUNKS], i < q_n),
     * and the free ones (a stack) */
    int queue[REC_CHUNKS], q_head, q_n;
    int free_c[REC_CHUNKS], n_free;
    bool stop, failed; /* under mu */
    rbuf text;         /* the thread's: a chunk's lines formatted */
    num_memo *memo;    /* the thread's float memo */
    /* a kept edge list as the last line left it, the changed slots' edges diffed against it
     * by the thread (render_edge_mirror): its slots, ranks and buffers (allocated with the
     * scene copies; NULL: none) */
    sorted_list *edges;
    /* the agents and their stats as the last line left them, when a step line holds them whole
     * (OP_AGENTS_WHOLE, diffed here: render_agents_whole) and a keyframe too (OP_KEY_AGENTS),
     * and the thread's copies of a line's (aligned) and their diff (NULL: none) */
    polis_scene_agent *prev_agents, *cur_agents;
    int32_t *prev_stats, *cur_stats, *agents_out;
    double *cur_returns;
    /* copies of the state the hash of a keyframe or end line reads (polis_env_state_parts),
     * hashed by the thread (OP_HASH: [u32 copy]).
     * As many as the chunks in flight may name (REC_SNAP_BUDGET; survival: a hash in about
     * fifty lines, ten a chunk): with fewer, a keyframe would wait for the thread to format
     * the chunks before it, and the two threads would take turns instead of running side by
     * side. Taken in turn (snap_next) among the first snap_used, and one more only when the
     * next in turn is still busy: while the thread keeps up a few take turns, warm in the
     * caches. */
    uint8_t *snap[REC_SNAPS];
    size_t snap_cap; /* each copy's bytes (allocated at the first hash) */
    int snap_n;      /* copies allocated (2..REC_SNAPS) */
    /* busy: from the copy to its hash (set by the stepping thread, cleared by the writer's);
     * snap_wait: the stepping thread waits on cv for a copy (set under mu), so that a hash
     * signals only then */
    atomic_bool snap_busy[REC_SNAPS];
    atomic_bool snap_wait;
    int snap_next, snap_used;
    /* scenes drawn from copies (polis_scene_copy): the thread's recorder of the scene, which
     * draws each line's take and diffs it as the stepping thread would (NULL: the stepping
     * thread reads the scenes); a draw or diff that failed (under mu: its status and message;
     * nothing more is written from then on) */
    struct polis_recorder *sr;
    polis_status scene_status;
    char scene_err[REC_ERRMAX];
} rec_writer;

struct polis_recorder {
    polis_env *env;
    void (*sink)(void *ud, const char *line, size_t len);
    void *sink_ud;
    FILE *f;
    struct gz_file *gz;
    rec_writer *writer; /* NULL: the stepping thread writes (a sink, or no thread could start) */
    bool write_failed;
    char err[REC_ERRMAX];
    int32_t keyframe_every;
    int64_t key_lo; /* the last multiple of keyframe_every at or before the tick last stepped */
    int32_t n_agents;
    int64_t episode; /* -1 before the first begin_episode */
    bool in_episode;
    double *returns; /* [n_agents] */
    rbuf line;       /* the line's text, without its ops */
    rec_op ops[REC_MAXOPS];
    int n_ops;
    size_t ops_len;      /* the ops' raw bytes, summed */
    uint64_t hash_op[2]; /* an OP_HASH's raw value: which copy, its bytes */
    /* a step line's raw pieces one after the other (one copy into the writer's chunk): its
     * head (OP_HEAD, padded to 4 bytes), a few kept things' old and new (put_thing_pairs), the
     * changed agents (OP_AGENTS); raw_end: where the next piece goes */
    char *step_raw, *raw_end;
    rbuf out;    /* a line formatted on this thread (a sink, no writer, a line over a chunk) */
    rbuf events; /* the current tick's events, raw: [i32 type][its data] each (OP_EVENTS) */
    rbuf msgs;   /* messages for the next step line, ",{...}" each */
    bool events_on;
    num_memo *memo; /* [2 * MEMO_SLOTS]: f32, then f64 */
    /* each event type's JSON text written once: ",{\"type\":\"name\"" then ",\"field\":" per
     * field, at ev_keys.p + ev_off[ev_first[type] + i] (i = 0: the prefix, i > 0: field i-1) */
    rbuf ev_keys;
    size_t *ev_off;
    int32_t *ev_first;
    /* each event type's fields (ev_fields[ev_first[type] - type + i], i < ev_first[type + 1]
     * - ev_first[type] - 1), read once at open so an event costs no call into the env */
    ev_field *ev_fields;
    size_t *ev_size; /* each event type's data bytes the recorder reads (past its last field) */
    /* the previous line's scene */
    bool sized;
    int32_t sized_dims[3 + L_COUNT]; /* layers, width, height and list capacities sized for */
    int32_t *prev_tiles;             /* [cells + 1] */
    uint64_t *tile_ver; /* [layers + 1]: each layer's version prev_tiles holds (0: none) */
    const polis_scene_said *said; /* what the scene take_scene read says of itself */
    polis_scene_agent *prev_agents;
    int32_t *prev_stats;
    size_t cells, n_stats;
    sorted_list lists[L_COUNT];
    /* every list idle (list_idle) and not kept at the last take_scene: a scene with no things,
     * nodes or edges again skips their bookkeeping */
    bool no_lists, any_kept; /* any_kept: a list has slots (sorted_list.kslots) */
    int64_t allocs;          /* allocations of the scene copies */
    /* a step line holds the agents and their stats whole, diffed by the writer thread (a few
     * hundred bytes: copied faster than compared); a keyframe's agents are formatted there, from
     * key_agents ([agents][stats][f64 returns]) */
    bool agents_whole;
    char *key_agents;
    /* the env's (episode, tick) after the previous line: the changes of who sees whom made
     * then (polis_env_visibility_changes) go into the next reset or step line */
    int64_t vis_episode, vis_tick;
    /* scenes drawn from copies (docs/recording.md, "Scenes on the writer thread"): `takes` on
     * the stepping thread's recorder (each line's take into step_raw, OP_SCENE; a keyframe's
     * returns into key_ret, OP_KEY_SCENE), `draws` on the writer thread's (rec_writer.sr), which
     * draws them, and the scene it drew last; NULL: the env's scenes (polis_env_scene_get) */
    polis_scene_copy *takes, *draws;
    const polis_scene *drawn;
    char *take_buf; /* a take: after OP_SCENE's 16-byte head (stepping), aligned (writer) */
    char *key_ret;
    int64_t draw_tick;         /* the writer thread's: the tick of the line drawn (messages) */
    polis_status scene_status; /* the stepping thread's: the writer's scene failure, reported */
    rec_writer *writer_of;     /* the writer thread's recorder of the scene: its thread */
};

static polis_status rec_fail(polis_recorder *r, polis_status st, const char *fmt, ...)
    POLIS_PRINTF(3, 4);
static polis_status rec_fail(polis_recorder *r, polis_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    return st;
}

const char *polis_recorder_error(const polis_recorder *r)
{
    return r ? r->err : "recorder is NULL";
}

/* ---- formatting the raw pieces of a line --------------------------------------------------- */

#define KEY_SLACK 16

static inline void copy_keys(char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i += KEY_SLACK) memcpy(dst + i, src + i, KEY_SLACK);
}

/* ",\"events\":[{...},...]" from the raw events (each [i32 type][its data]) */
static void render_events(const polis_recorder *r, rbuf *b, num_memo *memo, const uint8_t *raw,
                          size_t len)
{
    RB_LIT(b, ",\"events\":[");
    const char *keys = r->ev_keys.p;
    for (const uint8_t *end = raw + len; raw < end;) {
        int32_t type;
        memcpy(&type, raw, sizeof type);
        const uint8_t *data = raw + sizeof type;
        raw = data + r->ev_size[type];
        int32_t first = r->ev_first[type];
        int32_t n_fields = r->ev_first[type + 1] - first - 1;
        const ev_field *fields = r->ev_fields + (first - type);
        const size_t *off = r->ev_off + first;
        /* one reservation for the event: its keys (copied 16 bytes at a time: ev_keys has
         * KEY_SLACK readable bytes past its end; they are short, and a call to memcpy costs
         * more), each value and the closing brace */
        size_t need = off[n_fields + 1] - off[0] + (size_t)n_fields * FLOAT_MAXLEN + KEY_SLACK + 1;
        if (!rb_room(b, need)) return;
        char *q = b->p + b->len;
        /* the first event goes without its leading comma */
        size_t skip = b->p[b->len - 1] == '[';
        copy_keys(q, keys + off[0] + skip, off[1] - off[0] - skip);
        q += off[1] - off[0] - skip;
        for (int32_t i = 0; i < n_fields; i++) {
            const ev_field *f = &fields[i];
            const uint8_t *p = data + f->offset;
            copy_keys(q, keys + off[i + 1], off[i + 2] - off[i + 1]);
            q += off[i + 2] - off[i + 1];
            switch (f->type) {
            case POLIS_FIELD_I32: {
                int32_t v;
                memcpy(&v, p, sizeof v);
                q = put_int(q, v);
                break;
            }
            case POLIS_FIELD_I64: {
                int64_t v;
                memcpy(&v, p, sizeof v);
                q = put_int(q, v);
                break;
            }
            case POLIS_FIELD_F32: {
                float v;
                memcpy(&v, p, sizeof v);
                q = put_f32(q, memo, v);
                break;
            }
            case POLIS_FIELD_F64: {
                double v;
                memcpy(&v, p, sizeof v);
                q = put_f64(q, memo, v);
                break;
            }
            }
        }
        *q++ = '}';
        b->len = (size_t)(q - b->p);
    }
    rb_ch(b, ']');
}

/* ",\"name\":[...]" of flags (values 0..255), with one reservation */
static inline void put_u8s(rbuf *b, const char *member, size_t mlen, const uint8_t *v, int32_t n)
{
    if (!rb_room(b, mlen + 4 * (size_t)n + 1)) return;
    char *p = b->p + b->len;
    memcpy(p, member, mlen);
    p += mlen;
    for (int32_t a = 0; a < n; a++) {
        if (a) *p++ = ',';
        unsigned x = v[a];
        if (x >= 100) *p++ = (char)('0' + x / 100);
        if (x >= 10) *p++ = (char)('0' + x / 10 % 10);
        *p++ = (char)('0' + x % 10);
    }
    *p++ = ']';
    b->len = (size_t)(p - b->p);
}

#define PUT_U8S(b, lit, v, n) put_u8s((b), "" lit, sizeof(lit) - 1, (v), (n))

/* The raw head of a step line: [i64 tick][i32 actions][f32 rewards][u8 term][u8 trunc]
 * [u8 illegal], n agents each. */
static size_t head_size(int32_t n) { return sizeof(int64_t) + (size_t)n * 11; }

/* The head as a step line's first raw piece: padded to 4 bytes, so that the pieces after it
 * (int32 values) stay aligned (render_head reads only head_size bytes). */
#define HEAD_PADDED(hs) (((hs) + 3) & ~(size_t)3)

/* "{\"t\":\"step\",\"tick\":T,\"actions\":[...],...,\"illegal\":[...]" from the raw head */
static void render_head(rbuf *b, num_memo *memo, int32_t n, const uint8_t *raw)
{
    int64_t tick;
    memcpy(&tick, raw, sizeof tick);
    const uint8_t *act = raw + sizeof tick, *rew = act + 4 * (size_t)n, *fl = rew + 4 * (size_t)n;
    RB_LIT(b, "{\"t\":\"step\",\"tick\":");
    rb_int(b, tick);
    RB_LIT(b, ",\"actions\":[");
    if (rb_room(b, (size_t)n * (INT_MAXLEN + FLOAT_MAXLEN + 2) + 16)) {
        char *q = b->p + b->len;
        for (int32_t a = 0; a < n; a++) {
            int32_t v;
            memcpy(&v, act + 4 * (size_t)a, sizeof v);
            if (a) *q++ = ',';
            q = put_int(q, v);
        }
        memcpy(q, "],\"rewards\":[", 13);
        q += 13;
        for (int32_t a = 0; a < n; a++) {
            float v;
            memcpy(&v, rew + 4 * (size_t)a, sizeof v);
            if (a) *q++ = ',';
            q = put_f32(q, memo, v);
        }
        *q++ = ']';
        b->len = (size_t)(q - b->p);
    }
    PUT_U8S(b, ",\"term\":[", fl, n);
    PUT_U8S(b, ",\"trunc\":[", fl + n, n);
    PUT_U8S(b, ",\"illegal\":[", fl + 2 * (size_t)n, n);
}

/* Bit k set when cell j0 + k (< plane, > 0) of a layer's raw tiles holds another kind than the
 * cell before it: where a run starts. Sixty-four cells compared in sixteen vector compares, so
 * that a keyframe's runs (a few cells each on a Survival map) cost no mispredicted loop exit
 * each: the runs are then read off the bits. */
static inline uint64_t run_starts(const uint8_t *t, size_t j0, size_t plane)
{
    uint64_t m = 0;
#if defined(__SSE2__)
    if (j0 > 0 && j0 + 64 <= plane) {
        const uint8_t *x = t + j0 * sizeof(int32_t);
        for (int g = 0; g < 16; g++) {
            __m128i cur = _mm_loadu_si128((const __m128i *)(const void *)(x + 16 * g));
            __m128i prev = _mm_loadu_si128((const __m128i *)(const void *)(x + 16 * g - 4));
            unsigned eq = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(cur, prev)));
            m |= (uint64_t)(~eq & 0xfu) << (4 * g);
        }
        return m;
    }
#endif
    for (size_t k = 0; k < 64 && j0 + k < plane; k++) {
        size_t j = j0 + k;
        int32_t v, u;
        if (j == 0) continue;
        memcpy(&v, t + j * sizeof v, sizeof v);
        memcpy(&u, t + (j - 1) * sizeof u, sizeof u);
        m |= (uint64_t)(v != u) << k;
    }
    return m;
}

/* A keyframe's layers, each "[kind,count,...]" (runs of a kind in row-major order), from the
 * raw tiles of the scene the recorder was sized for */
static void render_tiles(const polis_recorder *r, rbuf *b, const uint8_t *raw)
{
    /* room checked once per 64 cells (at most 64 runs), each ",kind,count" */
    enum { RUN_MAX = 2 * (INT_MAXLEN + 1) };
    int32_t n_layers = r->sized_dims[0];
    size_t plane = (size_t)r->sized_dims[1] * (size_t)r->sized_dims[2];
    for (int32_t l = 0; l < n_layers; l++) {
        rb_puts(b, l ? ",[" : "[");
        const uint8_t *t = raw + (size_t)l * plane * sizeof(int32_t);
        size_t start = 0; /* the run being read */
        for (size_t j0 = 0; j0 < plane; j0 += 64) {
            if (!rb_room(b, 65 * RUN_MAX)) return;
            char *q = b->p + b->len;
            for (uint64_t m = run_starts(t, j0, plane); m; m &= m - 1) {
                size_t j = j0 + (size_t)__builtin_ctzll(m);
                int32_t v;
                memcpy(&v, t + start * sizeof v, sizeof v);
                if (start) *q++ = ',';
                q = put_int(q, v);
                *q++ = ',';
                q = put_int(q, (int64_t)(j - start));
                start = j;
            }
            if (j0 + 64 >= plane && start < plane) { /* the layer's last run */
                int32_t v;
                memcpy(&v, t + start * sizeof v, sizeof v);
                if (start) *q++ = ',';
                q = put_int(q, v);
                *q++ = ',';
                q = put_int(q, (int64_t)(plane - start));
            }
            b->len = (size_t)(q - b->p);
        }
        rb_ch(b, ']');
    }
}

static const list_desc LISTS[L_COUNT];

/* An edge in a line's raw values (OP_LIST, OP_WHOLE): a byte of flags, then its from, to and
 * kind, each in its first 16 bytes when it ends there (byte 16 is NUL: the rest of its array
 * is, types.h) or else in its whole array (bit 0, 1, 2 of the flags set), then the weight. 53
 * bytes for most edges instead of 164: fewer for the writer's chunk to copy. */
#define EDGE_SHORT 16

static inline char *pack_edge(char *q, const polis_scene_edge *e)
{
    const char *str[3] = {e->from, e->to, e->kind};
    const size_t cap[3] = {POLIS_SCENE_ID_MAX, POLIS_SCENE_ID_MAX, POLIS_SCENE_KIND_MAX};
    char *flags = q++;
    *flags = 0;
    for (int p = 0; p < 3; p++) {
        if (str[p][EDGE_SHORT]) {
            memcpy(q, str[p], cap[p]);
            q += cap[p];
            *flags = (char)(*flags | 1 << p);
        } else {
            memcpy(q, str[p], EDGE_SHORT);
            q += EDGE_SHORT;
        }
    }
    memcpy(q, &e->weight, sizeof e->weight);
    return q + sizeof e->weight;
}

/* The edge pack_edge wrote at raw into e (NUL-padded); returns the bytes past it. */
static const uint8_t *unpack_edge(const uint8_t *raw, polis_scene_edge *e)
{
    char *str[3] = {e->from, e->to, e->kind};
    const size_t cap[3] = {POLIS_SCENE_ID_MAX, POLIS_SCENE_ID_MAX, POLIS_SCENE_KIND_MAX};
    uint8_t flags = *raw++;
    memset(e, 0, sizeof *e);
    for (int p = 0; p < 3; p++) {
        size_t n = flags >> p & 1 ? cap[p] : EDGE_SHORT;
        memcpy(str[p], raw, n);
        raw += n;
    }
    memcpy(&e->weight, raw, sizeof e->weight);
    return raw + sizeof e->weight;
}

/* An element of list `which` into a line's raw values at q (an edge packed); returns the bytes
 * past it. */
static inline char *el_pack(int which, char *q, const void *el, size_t size)
{
    if (which == L_EDGES) return pack_edge(q, el);
    memcpy(q, el, size);
    return q + size;
}

/* The element el_pack wrote at raw into el; returns the bytes past it. */
static inline const uint8_t *el_unpack(int which, const uint8_t *raw, scene_el *el, size_t size)
{
    if (which == L_EDGES) return unpack_edge(raw, &el->e);
    memcpy(el, raw, size);
    return raw + size;
}

/* An OP_LIST's list with this bit set: its moved things are [i32 id, x, y] each, not whole
 * things (put_few_things; "move" writes no more of them). */
#define LIST_SHORT_MOVES 0x100u

/* A list's member of a step line, ",\"things\":{\"add\":[...],\"move\":[...],\"del\":[...]}"
 * with the empty arrays left out, from its OP_LIST (diff_list) */
static void render_list(rbuf *b, num_memo *memo, const uint8_t *raw)
{
    static const char *const open[3] = {"\"add\":[", "\"move\":[", "\"del\":["};
    uint32_t h[4];
    memcpy(h, raw, sizeof h);
    uint32_t which = h[0] & ~LIST_SHORT_MOVES;
    const list_desc *d = &LISTS[which];
    raw += sizeof h;
    rb_puts(b, d->member);
    bool any = false;
    for (int pass = 0; pass < 3; pass++) {
        uint32_t n = h[1 + pass];
        if (!n) continue;
        void (*put)(rbuf *, num_memo *, const void *) = pass == 0   ? d->put_add
                                                        : pass == 1 ? d->put_move
                                                                    : d->put_del;
        if (any) rb_ch(b, ',');
        rb_puts(b, open[pass]);
        for (uint32_t k = 0; k < n; k++) {
            scene_el el;
            if (pass == 1 && h[0] & LIST_SHORT_MOVES) { /* a moved thing's id and place */
                int32_t v[3];
                memcpy(v, raw, sizeof v);
                raw += sizeof v;
                el.t.id = v[0];
                el.t.x = v[1];
                el.t.y = v[2];
            } else {
                raw = el_unpack((int)which, raw, &el, d->size);
            }
            if (k) rb_ch(b, ',');
            put(b, memo, &el);
        }
        rb_ch(b, ']');
        any = true;
    }
    rb_ch(b, '}');
}

/* At most this many changed slots of kept things go as pairs (put_thing_pairs). */
#define KEPT_FEW 32

/* p[0 .. n) put in id order (an insertion sort; the ids of one side are unique) */
static inline void things_in_order(const polis_scene_thing **p, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        const polis_scene_thing *t = p[i];
        uint32_t j = i;
        for (; j > 0 && p[j - 1]->id > t->id; j--) p[j] = p[j - 1];
        p[j] = t;
    }
}

/* The things' OP_LIST raw values at q: added, moved and deleted things, each group in id
 * order; returns the bytes past them. */
static char *few_things_list(char *q, const polis_scene_thing *const *add, uint32_t na,
                             const polis_scene_thing *const *mov, uint32_t nm,
                             const polis_scene_thing *const *del, uint32_t nd)
{
    uint32_t h[4] = {L_THINGS | LIST_SHORT_MOVES, na, nm, nd};
    memcpy(q, h, sizeof h);
    q += sizeof h;
    for (uint32_t k = 0; k < na; k++, q += sizeof **add) memcpy(q, add[k], sizeof **add);
    for (uint32_t k = 0; k < nm; k++, q += 3 * sizeof(int32_t)) {
        int32_t v[3] = {mov[k]->id, mov[k]->x, mov[k]->y};
        memcpy(q, v, sizeof v);
    }
    for (uint32_t k = 0; k < nd; k++, q += sizeof **del) memcpy(q, del[k], sizeof **del);
    return q;
}

/* A few changed slots of kept things (Survival's two or three mobs a tick), from their OP_PAIRS
 * (put_thing_pairs: each slot's old and new thing, either absent), as the OP_LIST that sorts
 * by key and a merge would give: ids, kinds, labels and places compared here, on the writer
 * thread when there is one. Returns the OP_LIST's end at out, or out when nothing changed. */
static char *few_things_diff(char *out, const polis_scene_thing *const *po,
                             const polis_scene_thing *const *pn, uint32_t nch)
{
    const polis_scene_thing *add[KEPT_FEW], *mov[KEPT_FEW], *del[KEPT_FEW];
    uint32_t na = 0, nm = 0, nd = 0;
    /* Most ticks: each changed slot holds the thing it held (moved), or only one side of the
     * slots is new or gone. Paired by slot, no merge by id is needed: each side's unpaired
     * things are adds or dels as they are; the three arrays are put in id order after. When
     * things of both sides are unpaired (an id that changed slots, a slot whose id changed),
     * the merge by id below decides. */
    uint32_t lone_old = 0, lone_new = 0;
    for (uint32_t k = 0; k < nch; k++) {
        const polis_scene_thing *o = po[k], *n = pn[k];
        if (o && n && o->id == n->id) {
            /* labels are NUL to the end of their arrays: two empty ones (a mob's) are equal */
            if (n->kind != o->kind ||
                ((n->label[0] || o->label[0]) && memcmp(n->label, o->label, sizeof n->label) != 0))
                add[na++] = n; /* replaced: a thing's add replaces it */
            else if (n->x != o->x || n->y != o->y)
                mov[nm++] = n;
            continue;
        }
        if (o) del[nd++] = o, lone_old++;
        if (n) add[na++] = n, lone_new++;
    }
    if (!(lone_old && lone_new)) {
        if (!(na + nm + nd)) return out;
        things_in_order(add, na);
        things_in_order(mov, nm);
        things_in_order(del, nd);
        return few_things_list(out, add, na, mov, nm, del, nd);
    }
    const polis_scene_thing *so[KEPT_FEW], *sn[KEPT_FEW];
    uint32_t no = 0, nn = 0;
    for (uint32_t k = 0; k < nch; k++) {
        if (po[k]) so[no++] = po[k];
        if (pn[k]) sn[nn++] = pn[k];
    }
    things_in_order(so, no);
    things_in_order(sn, nn);
    na = nm = nd = 0;
    for (uint32_t i = 0, j = 0; i < nn || j < no;) {
        int c = i >= nn ? 1 : j >= no ? -1 : (sn[i]->id > so[j]->id) - (sn[i]->id < so[j]->id);
        if (c < 0) {
            add[na++] = sn[i];
        } else if (c > 0) {
            del[nd++] = so[j];
        } else if (sn[i]->kind != so[j]->kind ||
                   memcmp(sn[i]->label, so[j]->label, sizeof sn[i]->label) != 0) {
            add[na++] = sn[i]; /* replaced: a thing's add replaces it */
        } else if (sn[i]->x != so[j]->x || sn[i]->y != so[j]->y) {
            mov[nm++] = sn[i];
        }
        if (c <= 0) i++;
        if (c >= 0) j++;
    }
    return na + nm + nd ? few_things_list(out, add, na, mov, nm, del, nd) : out;
}

/* A thing put_pair_thing wrote at raw into t; returns the bytes past it. */
static inline const uint8_t *get_pair_thing(const uint8_t *raw, polis_scene_thing *t, bool head)
{
    if (head) {
        memset(t, 0, sizeof *t);
        memcpy(t, raw, 4 * sizeof(int32_t));
        return raw + 4 * sizeof(int32_t);
    }
    memcpy(t, raw, sizeof *t);
    return raw + sizeof *t;
}

/* The things' member of a step line from its OP_PAIRS ([u32 n], then per changed slot [u32:
 * bit 0 an old thing follows, bit 1 a new one, bits 2 and 3 each of them as its first 16 bytes,
 * its label empty] and those things): nothing when no thing changed. */
static void render_pairs(rbuf *b, num_memo *memo, const uint8_t *raw)
{
    polis_scene_thing old[KEPT_FEW], cur[KEPT_FEW];
    const polis_scene_thing *po[KEPT_FEW], *pn[KEPT_FEW];
    char list[4 * sizeof(uint32_t) + 2 * KEPT_FEW * sizeof(polis_scene_thing)];
    uint32_t n;
    memcpy(&n, raw, sizeof n);
    raw += sizeof n;
    for (uint32_t k = 0; k < n && k < KEPT_FEW; k++) {
        uint32_t has;
        memcpy(&has, raw, sizeof has);
        raw += sizeof has;
        po[k] = has & 1 ? &old[k] : NULL;
        pn[k] = has & 2 ? &cur[k] : NULL;
        if (has & 1) raw = get_pair_thing(raw, &old[k], has & 4);
        if (has & 2) raw = get_pair_thing(raw, &cur[k], has & 8);
    }
    if (few_things_diff(list, po, pn, n < KEPT_FEW ? n : KEPT_FEW) != list)
        render_list(b, memo, (const uint8_t *)list);
}

/* A keyframe's whole list, its elements as "add" writes them, from its OP_WHOLE ([u32 list]
 * then the elements, in key order) */
static void render_whole(rbuf *b, num_memo *memo, const uint8_t *raw, size_t len)
{
    uint32_t which;
    memcpy(&which, raw, sizeof which);
    const list_desc *d = &LISTS[which];
    const uint8_t *end = raw + len;
    for (raw += sizeof which; raw < end;) {
        scene_el el;
        raw = el_unpack((int)which, raw, &el, d->size);
        d->put_add(b, memo, &el);
        if (raw < end) rb_ch(b, ',');
    }
}

/* A keyframe's agents, "{\"x\":..,\"stats\":[..],\"return\":..}" each (ns stats an agent) */
static void put_key_agents(rbuf *b, num_memo *memo, const polis_scene_agent *agents,
                           const int32_t *stats, int32_t n, size_t ns, const double *returns)
{
    for (int32_t a = 0; a < n; a++) {
        const polis_scene_agent *ag = &agents[a];
        if (a) rb_ch(b, ',');
        RB_LIT(b, "{\"x\":");
        rb_int(b, ag->x);
        RB_LIT(b, ",\"y\":");
        rb_int(b, ag->y);
        RB_LIT(b, ",\"facing\":");
        rb_int(b, ag->facing);
        RB_LIT(b, ",\"alive\":");
        rb_int(b, ag->alive);
        RB_LIT(b, ",\"stats\":[");
        for (size_t k = 0; k < ns; k++) rb_item(b, k != 0, stats[(size_t)a * ns + k]);
        RB_LIT(b, "],\"return\":");
        rb_f64(b, memo, returns[a]);
        rb_ch(b, '}');
    }
}

/* Which of four stats differ (bit i: c[i] != o[i]): one compare of the four where SSE2 is
 * (Survival's 18 stats cost 18 compares and branches a tick otherwise). */
static inline uint32_t stats_diff4(const int32_t *c, const int32_t *o)
{
#if defined(__SSE2__)
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)c);
    __m128i y = _mm_loadu_si128((const __m128i *)(const void *)o);
    return (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, y))) ^ 15u;
#else
    return (uint32_t)(c[0] != o[0]) | (uint32_t)(c[1] != o[1]) << 1 |
           (uint32_t)(c[2] != o[2]) << 2 | (uint32_t)(c[3] != o[3]) << 3;
#endif
}

/* The records of the agents whose members or stats differ from prev_agents and prev_stats
 * (which take the new values) at q, as an OP_AGENTS holds them (render_agents); returns their
 * end (q when none changed). On the stepping thread, or on the writer thread from a line's
 * OP_AGENTS_WHOLE (render_agents_whole): the same comparisons either way. */
static int32_t *agents_diff(int32_t *q, const polis_scene_agent *agents, const int32_t *stats,
                            polis_scene_agent *prev_agents, int32_t *prev_stats, int32_t n,
                            size_t ns)
{
    for (int32_t a = 0; a < n; a++) {
        const polis_scene_agent *c = &agents[a];
        polis_scene_agent *o = &prev_agents[a];
        /* a game without stats has no stats buffers (NULL; no offset may be applied) */
        const int32_t *cs = ns ? stats + (size_t)a * ns : NULL;
        int32_t *os = ns ? prev_stats + (size_t)a * ns : NULL;
        /* without branches: whether an agent moved is as good as random on most games */
        int32_t which = (((c->x ^ o->x) | (c->y ^ o->y)) != 0) | (c->facing != o->facing) << 1 |
                        (c->alive != o->alive) << 2;
        size_t k0 = 0; /* the first changed stat: four at a time, then one at a time */
        while (k0 + 4 <= ns && !stats_diff4(cs + k0, os + k0)) k0 += 4;
        while (k0 < ns && cs[k0] == os[k0]) k0++;
        /* the record is written whether or not anything changed, and kept only if so */
        int32_t *rec = q;
        *q++ = a;
        *q++ = which;
        *q++ = c->x;
        *q++ = c->y;
        *q++ = c->facing;
        *q++ = c->alive;
        q++; /* the count of changed stats */
        size_t k = k0;
        for (; k + 4 <= ns; k += 4) /* the changed ones of each four, in order */
            for (uint32_t m = stats_diff4(cs + k, os + k); m; m &= m - 1) {
                size_t j = k + (size_t)__builtin_ctz(m);
                *q++ = (int32_t)j;
                *q++ = cs[j];
                os[j] = cs[j];
            }
        for (; k < ns; k++) {
            if (cs[k] == os[k]) continue;
            *q++ = (int32_t)k;
            *q++ = cs[k];
            os[k] = cs[k];
        }
        int32_t n_changed = (int32_t)((q - rec - 7) / 2);
        rec[6] = n_changed;
        *o = *c;
        q = (which | n_changed) ? q : rec;
    }
    return q;
}

/* ",\"agents\":[[a,{changed members}],...]" from an OP_AGENTS: per changed agent [a, which
 * members changed (bits: 1 position, 2 facing, 4 alive), x, y, facing, alive, changed stats
 * k] then k pairs [stat, value] (int32 each) */
static void render_agents(rbuf *b, const uint8_t *raw, size_t len)
{
    RB_LIT(b, ",\"agents\":[");
    for (const uint8_t *end = raw + len; raw < end;) {
        int32_t v[7];
        memcpy(v, raw, sizeof v);
        raw += sizeof v;
        RB_LIT(b, "[");
        rb_int(b, v[0]);
        RB_LIT(b, ",{");
        bool first = true;
        if (v[1] & 1) {
            RB_LIT(b, "\"x\":");
            rb_int(b, v[2]);
            RB_LIT(b, ",\"y\":");
            rb_int(b, v[3]);
            first = false;
        }
        if (v[1] & 2) {
            if (!first) rb_ch(b, ',');
            RB_LIT(b, "\"facing\":");
            rb_int(b, v[4]);
            first = false;
        }
        if (v[1] & 4) {
            if (!first) rb_ch(b, ',');
            RB_LIT(b, "\"alive\":");
            rb_int(b, v[5]);
            first = false;
        }
        if (v[6]) {
            if (!first) rb_ch(b, ',');
            RB_LIT(b, "\"stats\":{");
            for (int32_t k = 0; k < v[6]; k++) {
                int32_t kv[2];
                memcpy(kv, raw, sizeof kv);
                raw += sizeof kv;
                if (k) rb_ch(b, ',');
                rb_ch(b, '"');
                rb_int(b, kv[0]);
                RB_LIT(b, "\":");
                rb_int(b, kv[1]);
            }
            rb_ch(b, '}');
        }
        RB_LIT(b, "}]");
        if (raw < end) rb_ch(b, ',');
    }
    rb_ch(b, ']');
}

/* A line's whole agents and stats ([agents][stats], as the scene holds them) into the writer
 * thread's aligned copies; returns the bytes past them. */
static const uint8_t *agents_in(const polis_recorder *r, const uint8_t *raw)
{
    rec_writer *w = r->writer;
    size_t na = (size_t)r->n_agents * sizeof *w->cur_agents, ns = r->n_stats * sizeof(int32_t);
    memcpy(w->cur_agents, raw, na);
    if (ns) memcpy(w->cur_stats, raw + na, ns);
    return raw + na + ns;
}

/* A step line's agents from its OP_AGENTS_WHOLE (agents_whole): compared with those the thread
 * kept (agents_diff) and formatted as an OP_AGENTS; nothing when none changed. */
static void render_agents_whole(const polis_recorder *r, rbuf *b, const uint8_t *raw)
{
    rec_writer *w = r->writer;
    size_t ns = r->n_agents ? r->n_stats / (size_t)r->n_agents : 0;
    agents_in(r, raw);
    int32_t *q = agents_diff(w->agents_out, w->cur_agents, ns ? w->cur_stats : NULL, w->prev_agents,
                             w->prev_stats, r->n_agents, ns);
    if (q > w->agents_out)
        render_agents(b, (const uint8_t *)w->agents_out, (size_t)(q - w->agents_out) * sizeof *q);
}

/* A keyframe's agents from its OP_KEY_AGENTS ([agents][stats][f64 returns]), which the thread
 * keeps for the next step line's diff. */
static void render_key_agents(const polis_recorder *r, rbuf *b, num_memo *memo, const uint8_t *raw)
{
    rec_writer *w = r->writer;
    size_t n = (size_t)r->n_agents, ns = n ? r->n_stats / n : 0;
    memcpy(w->cur_returns, agents_in(r, raw), n * sizeof *w->cur_returns);
    put_key_agents(b, memo, w->cur_agents, w->cur_stats, r->n_agents, ns, w->cur_returns);
    memcpy(w->prev_agents, w->cur_agents, n * sizeof *w->prev_agents);
    if (ns) memcpy(w->prev_stats, w->cur_stats, r->n_stats * sizeof *w->prev_stats);
}

static inline uint32_t get_u32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline char *set_u32(char *p, size_t v)
{
    uint32_t u = (uint32_t)v;
    memcpy(p, &u, sizeof u);
    return p + sizeof u;
}

#define FNV_PRIME 1099511628211ULL
#define FNV_OFFSET 14695981039346656037ULL

/* FNV_PRIME to the powers 0..127 (fnv_init, once) */
static uint64_t fnv_pow[128];
static pthread_once_t fnv_once = PTHREAD_ONCE_INIT;

static void fnv_init(void)
{
    fnv_pow[0] = 1;
    for (int i = 1; i < 128; i++) fnv_pow[i] = fnv_pow[i - 1] * FNV_PRIME;
}

/* Bit i set: byte i of p[0 .. n) (n <= 64) is not zero. */
static inline uint64_t nonzero_bytes(const uint8_t *p, size_t n)
{
#if defined(__SSE2__)
    if (n == 64) {
        const __m128i z = _mm_setzero_si128();
        uint64_t m = 0;
        for (int k = 0; k < 4; k++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
            m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, z)) << (16 * k);
        }
        return ~m;
    }
#endif
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++) m |= (uint64_t)(p[i] != 0) << i;
    return m;
}

/* A 64-bit FNV-1a hash continued over n bytes: polis_env_state_hash's value (env.c), computed
 * with one multiply per byte that is not zero. A zero byte's step, h ^= 0 then h *= FNV_PRIME,
 * is a multiply alone, and multiplies in a row are one by the prime's power: the hash is kept
 * as h times FNV_PRIME to the power e still owed (e: 1 past a byte, plus the zero bytes after
 * it), paid with the next byte that is not zero. The states a keyframe hashes (observations,
 * masks, tiles as int32) are mostly zero bytes. */
static uint64_t fnv1a_more(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    pthread_once(&fnv_once, fnv_init);
    unsigned e = 0; /* at most 64 + 63 across blocks: fnv_pow has 128 */
    while (n) {
        size_t k = n < 64 ? n : 64;
        uint64_t m = nonzero_bytes(b, k);
        if (!m && k == 64) {
            h *= fnv_pow[64]; /* owed either way; e stays below 128 */
        } else {
            unsigned c = 0; /* bytes of the block counted into e */
            for (; m; m &= m - 1) {
                unsigned i = (unsigned)__builtin_ctzll(m);
                h = (h * fnv_pow[e + i - c]) ^ b[i];
                e = 1;
                c = i + 1;
            }
            e += (unsigned)k - c;
        }
        b += k;
        n -= k;
    }
    return h * fnv_pow[e];
}

/* h continued over z zero bytes: times FNV_PRIME to the power z */
static uint64_t fnv1a_zeros(uint64_t h, size_t z)
{
    for (uint64_t p = FNV_PRIME; z; z >>= 1, p *= p)
        if (z & 1) h *= p;
    return h;
}

/* A state copy for the thread's hash, without its zero bytes (sparse_copy): runs of
 * [u32 zero bytes before][u32 bytes] and those bytes; hashed by fnv1a_sparse. A keyframe's
 * state is mostly zeros (an entity table's free slots: 95% of exploration's 208 KiB): the copy
 * writes a few KiB where it wrote all of it. */
typedef struct sparse_copy {
    uint8_t *q, *run; /* where the next byte goes; the open run's head (NULL: none) */
    size_t zeros;     /* zero bytes since the last run */
} sparse_copy;

/* Bytes a sparse copy of a state of `total` bytes in `parts` parts may take: a run's head per
 * block of 64 at most, and one for each part's tail and the end */
#define SPARSE_MAX(total, parts) ((total) + (total) / 8 + 8 * ((size_t)(parts) + 2))

static void sparse_data(sparse_copy *c, const uint8_t *p, size_t n)
{
    if (!c->run) {
        c->run = c->q;
        set_u32(set_u32((char *)c->q, c->zeros), 0);
        c->q += 8;
        c->zeros = 0;
    }
    if (n) memcpy(c->q, p, n);
    c->q += n;
    set_u32((char *)c->run + 4, get_u32((const char *)c->run + 4) + n);
}

/* Whether 64 bytes hold one that is not zero: the OR of their four 16-byte words compared
 * once (half the work of nonzero_bytes, which says which) */
static inline bool any_nonzero64(const uint8_t *p)
{
#if defined(__SSE2__)
    const __m128i *v = (const __m128i *)(const void *)p;
    __m128i o = _mm_or_si128(_mm_or_si128(_mm_loadu_si128(v), _mm_loadu_si128(v + 1)),
                             _mm_or_si128(_mm_loadu_si128(v + 2), _mm_loadu_si128(v + 3)));
    return _mm_movemask_epi8(_mm_cmpeq_epi8(o, _mm_setzero_si128())) != 0xffff;
#else
    return nonzero_bytes(p, 64) != 0;
#endif
}

static void sparse_part(sparse_copy *c, const uint8_t *p, size_t n)
{
    for (; n >= 64; p += 64, n -= 64) {
        if (any_nonzero64(p)) {
            sparse_data(c, p, 64);
        } else {
            c->zeros += 64;
            c->run = NULL;
        }
    }
    if (n) sparse_data(c, p, n);
}

/* The hash of a sparse copy of n bytes: polis_env_state_hash's value of the state */
static uint64_t fnv1a_sparse(const uint8_t *p, size_t n)
{
    uint64_t h = FNV_OFFSET;
    while (n >= 8) {
        size_t z = get_u32((const char *)p), k = get_u32((const char *)p + 4);
        h = fnv1a_more(fnv1a_zeros(h, z), p + 8, k);
        p += 8 + k;
        n -= 8 + k;
    }
    return h;
}

/* The 16 hex digits of h */
static void rb_hex64(rbuf *b, uint64_t h)
{
    static const char hex[] = "0123456789abcdef";
    if (!rb_room(b, 16)) return;
    for (int i = 0; i < 16; i++) b->p[b->len + (size_t)i] = hex[(h >> (60 - 4 * i)) & 15];
    b->len += 16;
}

/* An OP_HASH: the hash of the state copy it names, which is then free again */
static void render_hash(const polis_recorder *r, rbuf *b, const uint8_t *raw)
{
    rec_writer *w = r->writer;
    uint64_t v[2];
    memcpy(v, raw, sizeof v);
    size_t c = (size_t)v[0];
    rb_hex64(b, fnv1a_sparse(w->snap[c], (size_t)v[1]));
    /* sequentially consistent, as put_hash's: either it sees the copy free, or this sees it
     * waiting (it waits under mu, which is taken here before the signal) */
    atomic_store(&w->snap_busy[c], false);
    if (atomic_load(&w->snap_wait)) {
        pthread_mutex_lock(&w->mu);
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
}

static void render_edge_mirror(const polis_recorder *r, rbuf *b, num_memo *memo,
                               const uint8_t *raw);

/* ",\"tiles\":[[l,x,y,kind],..." from a step line's changed tiles (OP_TDIFF); the line's text
 * closes the array (after the tiles formatted beside the step, when there were more) */
static void render_tdiff(rbuf *b, const uint8_t *raw, size_t len)
{
    static const char key[] = ",\"tiles\":[";
    size_t n = len / (4 * sizeof(int32_t));
    if (!rb_room(b, sizeof key + n * (4 * (INT_MAXLEN + 1) + 2))) return;
    char *q = b->p + b->len;
    memcpy(q, key, sizeof key - 1);
    q += sizeof key - 1;
    for (size_t i = 0; i < n; i++, raw += 4 * sizeof(int32_t)) {
        int32_t v[4];
        memcpy(v, raw, sizeof v);
        if (i) *q++ = ',';
        *q++ = '[';
        q = put_int(q, v[0]);
        *q++ = ',';
        q = put_int(q, v[1]);
        *q++ = ',';
        q = put_int(q, v[2]);
        *q++ = ',';
        q = put_int(q, v[3]);
        *q++ = ']';
    }
    b->len = (size_t)(q - b->p);
}

static void render_scene(const polis_recorder *r, rbuf *b, num_memo *memo, const uint8_t *raw,
                         size_t len);
static void render_key_scene(const polis_recorder *r, rbuf *b, num_memo *memo, const uint8_t *raw,
                             size_t len);

static void render(const polis_recorder *r, rbuf *b, num_memo *memo, const char *text, size_t len,
                   const rec_op *ops, int n_ops)
{
    size_t pos = 0;
    for (int i = 0; i < n_ops; i++) {
        rb_put(b, text + pos, ops[i].at - pos);
        pos = ops[i].at;
        if (ops[i].kind == OP_HEAD)
            render_head(b, memo, r->n_agents, ops[i].src);
        else if (ops[i].kind == OP_TILES)
            render_tiles(r, b, ops[i].src);
        else if (ops[i].kind == OP_LIST)
            render_list(b, memo, ops[i].src);
        else if (ops[i].kind == OP_AGENTS)
            render_agents(b, ops[i].src, ops[i].len);
        else if (ops[i].kind == OP_HASH)
            render_hash(r, b, ops[i].src);
        else if (ops[i].kind == OP_WHOLE)
            render_whole(b, memo, ops[i].src, ops[i].len);
        else if (ops[i].kind == OP_PAIRS)
            render_pairs(b, memo, ops[i].src);
        else if (ops[i].kind == OP_EMIRROR)
            render_edge_mirror(r, b, memo, ops[i].src);
        else if (ops[i].kind == OP_AGENTS_WHOLE)
            render_agents_whole(r, b, ops[i].src);
        else if (ops[i].kind == OP_KEY_AGENTS)
            render_key_agents(r, b, memo, ops[i].src);
        else if (ops[i].kind == OP_TDIFF)
            render_tdiff(b, ops[i].src, ops[i].len);
        else if (ops[i].kind == OP_SCENE)
            render_scene(r, b, memo, ops[i].src, ops[i].len);
        else if (ops[i].kind == OP_KEY_SCENE)
            render_key_scene(r, b, memo, ops[i].src, ops[i].len);
        else
            render_events(r, b, memo, ops[i].src, ops[i].len);
    }
    rb_put(b, text + pos, len - pos);
}

/* ---- a gzip file ----------------------------------------------------------------------------- */

/* One gzip member, deflated fast (recording runs beside the step): by ISA-L's igzip at its
 * level 1 where the build found it (about four times zlib's level 1 on a recording, and a
 * smaller file), else by zlib at level 1. Every gzip reader reads either. */
typedef struct gz_file {
#if defined(POLIS_HAVE_ISAL)
    FILE *f;
    struct isal_zstream z;
    uint8_t *level_buf;
    uint8_t out[(size_t)1 << 17];
#else
    gzFile z;
#endif
} gz_file;

#if defined(POLIS_HAVE_ISAL)
static gz_file *gz_open(const char *path)
{
    gz_file *g = malloc(sizeof *g);
    if (!g) return NULL;
    g->level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
    g->f = g->level_buf ? fopen(path, "wb") : NULL;
    if (!g->f) {
        int e = g->level_buf ? errno : ENOMEM;
        free(g->level_buf);
        free(g);
        errno = e;
        return NULL;
    }
    isal_deflate_init(&g->z);
    g->z.gzip_flag = IGZIP_GZIP;
    g->z.level = 1;
    g->z.level_buf = g->level_buf;
    g->z.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    return g;
}

/* Deflates what is given (all of it, end: and ends the stream) and writes what comes out. */
static bool gz_deflate(gz_file *g, const char *p, size_t n, bool end)
{
    do {
        uint32_t k = n > ((uint32_t)1 << 30) ? (uint32_t)1 << 30 : (uint32_t)n;
        g->z.next_in = (uint8_t *)(uintptr_t)p;
        g->z.avail_in = k;
        g->z.end_of_stream = end && k == n;
        p += k;
        n -= k;
        do {
            g->z.next_out = g->out;
            g->z.avail_out = sizeof g->out;
            if (isal_deflate(&g->z) != COMP_OK) return false;
            size_t made = sizeof g->out - g->z.avail_out;
            if (made && fwrite(g->out, 1, made, g->f) != made) return false;
        } while (g->z.avail_in || (g->z.end_of_stream && g->z.internal_state.state != ZSTATE_END));
    } while (n);
    return true;
}

static bool gz_write(gz_file *g, const char *p, size_t n) { return gz_deflate(g, p, n, false); }

static bool gz_close(gz_file *g)
{
    bool ok = gz_deflate(g, "", 0, true);
    if (fclose(g->f) != 0) ok = false;
    free(g->level_buf);
    free(g);
    return ok;
}
#else
static gz_file *gz_open(const char *path)
{
    gz_file *g = malloc(sizeof *g);
    if (!g) return NULL;
    g->z = gzopen(path, "wb1");
    if (!g->z) {
        int e = errno;
        free(g);
        errno = e;
        return NULL;
    }
    gzbuffer(g->z, 1 << 17);
    return g;
}

static bool gz_write(gz_file *g, const char *p, size_t n)
{
    while (n) {
        unsigned k = n < ((size_t)1 << 30) ? (unsigned)n : 1u << 30;
        if (gzwrite(g->z, p, k) != (int)k) return false;
        p += k;
        n -= k;
    }
    return true;
}

static bool gz_close(gz_file *g)
{
    bool ok = gzclose(g->z) == Z_OK;
    free(g);
    return ok;
}
#endif

/* ---- the file's writer thread --------------------------------------------------------------- */

/* Writes n bytes to the file (gzip or plain); false when that failed. */
static bool write_out(polis_recorder *r, const char *p, size_t n)
{
    if (!n) return true;
    if (r->gz) return gz_write(r->gz, p, n);
    return fwrite(p, 1, n, r->f) == n;
}

/* Formats the lines of a chunk and writes them. */
static bool write_chunk(polis_recorder *r, const char *p, size_t n)
{
    rec_writer *w = r->writer;
    rbuf *b = &w->text;
    b->len = 0;
    if (w->scene_status) return true; /* nothing after a scene that failed */
    for (const char *end = p + n; p < end;) {
        uint32_t len = get_u32(p), n_ops = get_u32(p + 4);
        rec_op ops[REC_MAXOPS];
        const char *text = p + FRAME_HEAD + FRAME_OP * n_ops, *raw = text + len;
        for (uint32_t i = 0; i < n_ops; i++) {
            const char *o = p + FRAME_HEAD + FRAME_OP * i;
            ops[i] = (rec_op){get_u32(o), get_u32(o + 4), get_u32(o + 8), raw};
            raw += ops[i].len;
        }
        size_t line = b->len;
        render(r, b, w->memo, text, len, ops, (int)n_ops);
        if (w->scene_status) { /* the lines before it are written, not this one */
            b->len = line;
            break;
        }
        p = raw;
    }
    return !b->oom && write_out(r, b->p, b->len);
}

static void *writer_main(void *arg)
{
    polis_recorder *r = arg;
    rec_writer *w = r->writer;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->q_n && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
        if (!w->q_n) break; /* stop, and nothing left */
        int c = w->queue[w->q_head];
        pthread_mutex_unlock(&w->mu);
        bool ok = write_chunk(r, w->chunk[c], w->len[c]);
        pthread_mutex_lock(&w->mu);
        if (!ok) w->failed = true;
        w->q_head = (w->q_head + 1) % REC_CHUNKS;
        w->q_n--;
        w->free_c[w->n_free++] = c;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    /* the file is closed here too: closing a gzip file deflates what its buffer holds */
    bool ok = true;
    if (r->gz && !gz_close(r->gz)) ok = false;
    if (r->f && fclose(r->f) != 0) ok = false;
    r->gz = NULL;
    r->f = NULL;
    if (!ok) w->failed = true; /* read after the join */
    return NULL;
}

/* The chunks queued at which the thread, asleep with none to format, is woken: each wake is a
 * system call here and a switch there (on a virtual machine an interrupt between its CPUs, about
 * 8% of a recorded Survival run's extra time on the stepping thread at one wake a chunk); the
 * thread then formats them in a row. A caller about to wait for the thread wakes it itself. */
#ifndef REC_WAKE
#define REC_WAKE 4
#endif

/* Hands the filled chunk to the thread's queue and takes a free one to fill next (waiting only
 * when none is free). A write the thread found failed is reported here. */
static void writer_hand_over(polis_recorder *r)
{
    rec_writer *w = r->writer;
    pthread_mutex_lock(&w->mu);
    if (!w->n_free) pthread_cond_broadcast(&w->cv); /* all queued: the thread must run */
    while (!w->n_free) pthread_cond_wait(&w->cv, &w->mu);
    if (w->failed) r->write_failed = true;
    if (w->scene_status && !r->scene_status) {
        r->scene_status = w->scene_status;
        snprintf(r->err, sizeof r->err, "%s", w->scene_err);
    }
    w->queue[(w->q_head + w->q_n) % REC_CHUNKS] = w->fill;
    w->q_n++;
    w->fill = w->free_c[--w->n_free];
    w->len[w->fill] = 0;
    bool wake = w->q_n >= REC_WAKE;
    pthread_mutex_unlock(&w->mu);
    /* after the unlock: the thread woken does not wait for the mutex this thread holds */
    if (wake) pthread_cond_broadcast(&w->cv);
}

/* Text as lines without ops, in pieces that fit the chunks. */
static void writer_put_text(polis_recorder *r, const char *p, size_t n)
{
    rec_writer *w = r->writer;
    while (n) {
        if (REC_CHUNK - w->len[w->fill] < FRAME_HEAD + 64) writer_hand_over(r);
        size_t room = REC_CHUNK - w->len[w->fill] - FRAME_HEAD, k = n < room ? n : room;
        char *q = w->chunk[w->fill] + w->len[w->fill];
        q = set_u32(q, k);
        q = set_u32(q, 0);
        memcpy(q, p, k);
        w->len[w->fill] += FRAME_HEAD + k;
        p += k;
        n -= k;
    }
}

/* n raw bytes at q (a keyframe's tiles in 64-byte blocks); returns the end */
static inline char *copy_run(char *q, const char *src, size_t n)
{
    if (n >= 4096)
        copy_blocks(q, src, n);
    else
        memcpy(q, src, n);
    return q + n;
}

/* The line (text and ops) into the chunk, formatted by the thread. A line larger than a chunk
 * (a keyframe of a hundred agents' social graph) goes alone into the chunk grown for it (a
 * free chunk: the thread has the others); only when that fails is it formatted here. */
static void writer_put(polis_recorder *r)
{
    rec_writer *w = r->writer;
    size_t size = FRAME_HEAD + FRAME_OP * (size_t)r->n_ops + r->line.len + r->ops_len;
    /* REC_SLACK past the line: a short text's fixed-size copy below may write that far */
    if (w->len[w->fill] && w->cap[w->fill] - w->len[w->fill] < size + REC_SLACK)
        writer_hand_over(r);
    if (size + REC_SLACK > w->cap[w->fill]) {
        size_t cap = w->cap[w->fill];
        while (cap < size + REC_SLACK) cap *= 2;
        char *p = realloc(w->chunk[w->fill], cap);
        if (!p) {
            /* formatted here once the thread is done with the lines before it (their edges'
             * ranks are its state, and the lines keep their order) */
            if (w->len[w->fill]) writer_hand_over(r);
            pthread_mutex_lock(&w->mu);
            pthread_cond_broadcast(&w->cv); /* the thread may sleep on fewer than REC_WAKE */
            while (w->q_n) pthread_cond_wait(&w->cv, &w->mu);
            pthread_mutex_unlock(&w->mu);
            r->out.len = 0;
            render(r, &r->out, r->memo, r->line.p, r->line.len, r->ops, r->n_ops);
            if (!r->out.oom) writer_put_text(r, r->out.p, r->out.len);
            return;
        }
        r->allocs++;
        w->chunk[w->fill] = p;
        w->cap[w->fill] = cap;
    }
    char *q = w->chunk[w->fill] + w->len[w->fill];
    q = set_u32(q, r->line.len);
    q = set_u32(q, (size_t)r->n_ops);
    for (int i = 0; i < r->n_ops; i++) {
        q = set_u32(q, r->ops[i].at);
        q = set_u32(q, r->ops[i].kind);
        q = set_u32(q, r->ops[i].len);
    }
    if (r->line.len <= REC_SLACK) /* a step line's "}\n": the line's buffer has 4 KiB */
        memcpy(q, r->line.p, REC_SLACK);
    else
        memcpy(q, r->line.p, r->line.len);
    q += r->line.len;
    /* pieces that follow one another in memory (a step line's in step_raw) in one copy: a run
     * grows while the next piece starts where it ends */
    const char *run = r->n_ops ? r->ops[0].src : NULL;
    size_t rn = 0;
    for (int i = 0; i < r->n_ops; i++) {
        const char *src = r->ops[i].src;
        if (src != run + rn) {
            q = copy_run(q, run, rn);
            run = src;
            rn = 0;
        }
        rn += r->ops[i].len;
    }
    if (rn) copy_run(q, run, rn);
    w->len[w->fill] += size;
}

/* Starts the thread; without one (no memory, no thread) the stepping thread writes. */
static void writer_start(polis_recorder *r)
{
    rec_writer *w = calloc(1, sizeof *w);
    if (!w) return;
    for (int i = 0; i < REC_SNAPS; i++) atomic_init(&w->snap_busy[i], false);
    atomic_init(&w->snap_wait, false);
    bool chunks = true;
    for (int c = 0; c < REC_CHUNKS; c++) {
        chunks = chunks && (w->chunk[c] = malloc(REC_CHUNK));
        w->cap[c] = REC_CHUNK;
    }
    /* chunk 0 filled first, then 1, 2, ... as the stack gives them */
    for (int c = REC_CHUNKS - 1; c > 0; c--) w->free_c[w->n_free++] = c;
    w->memo = calloc(2 * MEMO_SLOTS, sizeof *w->memo);
    bool mu = false, cv = false;
    if (chunks && w->memo && (mu = pthread_mutex_init(&w->mu, NULL) == 0) &&
        (cv = pthread_cond_init(&w->cv, NULL) == 0)) {
        r->writer = w;
        if (pthread_create(&w->thread, NULL, writer_main, r) == 0) return;
        r->writer = NULL;
    }
    if (cv) pthread_cond_destroy(&w->cv);
    if (mu) pthread_mutex_destroy(&w->mu);
    for (int c = 0; c < REC_CHUNKS; c++) free(w->chunk[c]);
    free(w->memo);
    free(w);
}

static void rec_free(polis_recorder *r);
static void copies_start(polis_recorder *r);

/* Writes what is left, closes the file, stops and joins the thread. */
static void writer_stop(polis_recorder *r)
{
    rec_writer *w = r->writer;
    if (!w) return;
    if (w->len[w->fill]) writer_hand_over(r);
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    if (w->failed) r->write_failed = true;
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    for (int c = 0; c < REC_CHUNKS; c++) free(w->chunk[c]);
    free(w->text.p);
    free(w->memo);
    for (int i = 0; i < w->snap_n; i++) free(w->snap[i]);
    if (w->edges) list_free(w->edges);
    if (w->scene_status && !r->scene_status) {
        r->scene_status = w->scene_status;
        snprintf(r->err, sizeof r->err, "%s", w->scene_err);
    }
    rec_free(w->sr);
    free(w->prev_agents);
    free(w->cur_agents);
    free(w->prev_stats);
    free(w->cur_stats);
    free(w->agents_out);
    free(w->cur_returns);
    free(w->edges);
    free(w);
    r->writer = NULL;
}

/* A raw piece at the line's current end. */
static void add_op(polis_recorder *r, uint32_t kind, const void *src, size_t len)
{
    r->ops[r->n_ops++] = (rec_op){(uint32_t)r->line.len, kind, (uint32_t)len, src};
    r->ops_len += len;
}

/* The largest state a copy is made of for the writer thread to hash; a larger one (a
 * thousand agents' observations) is hashed on the stepping thread. */
#define REC_SNAP_MAX ((size_t)32 << 20)

/* The state hash of this moment into the line: with a writer thread, a copy of the state
 * (polis_env_state_parts) that the thread hashes (OP_HASH), for a keyframe's hash reads
 * every observation (a few million instructions at 100 agents); else hashed here. The same
 * value either way. */
static void put_hash(polis_recorder *r)
{
    rec_writer *w = r->writer;
    const void *ptr[POLIS_STATE_PARTS];
    size_t len[POLIS_STATE_PARTS], total = 0;
    int32_t k = polis_env_state_parts(r->env, ptr, len);
    for (int32_t i = 0; i < k; i++) total += len[i];
    if (w && total <= REC_SNAP_MAX && !w->snap_n) { /* the first hash: all the copies */
        size_t want = REC_SNAP_BUDGET / (total ? total : 1);
        int n = want < 2 ? 2 : want > REC_SNAPS ? REC_SNAPS : (int)want;
        while (w->snap_n < n && (w->snap[w->snap_n] = malloc(SPARSE_MAX(total, k)))) w->snap_n++;
        if (w->snap_n < 2) { /* no memory for two: hashed here */
            for (int i = 0; i < w->snap_n; i++) free(w->snap[i]);
            w->snap_n = -1;
        }
        w->snap_cap = total;
        w->snap_used = 1;
    }
    if (!w || w->snap_n < 2 || total > w->snap_cap) {
        uint64_t h = FNV_OFFSET;
        for (int32_t i = 0; i < k; i++) h = fnv1a_more(h, ptr[i], len[i]);
        rb_hex64(&r->line, h);
        return;
    }
    int c = w->snap_next;
    if (atomic_load(&w->snap_busy[c]) && w->snap_used < w->snap_n) c = w->snap_used++;
    if (atomic_load(&w->snap_busy[c])) {
        /* its hash is in a line not formatted yet: in the chunk being filled (handed over
         * now) or in one the thread has */
        if (w->len[w->fill]) writer_hand_over(r);
        pthread_mutex_lock(&w->mu);
        pthread_cond_broadcast(&w->cv); /* the thread may sleep on fewer than REC_WAKE */
        atomic_store(&w->snap_wait, true);
        while (atomic_load(&w->snap_busy[c])) pthread_cond_wait(&w->cv, &w->mu);
        atomic_store(&w->snap_wait, false);
        pthread_mutex_unlock(&w->mu);
    }
    sparse_copy sc = {w->snap[c], NULL, 0};
    for (int32_t i = 0; i < k; i++) sparse_part(&sc, ptr[i], len[i]);
    if (sc.zeros) { /* the zeros at the end: a run of no bytes */
        sc.run = NULL;
        sparse_data(&sc, NULL, 0);
    }
    /* seen by the thread through the hand-over of the chunk that names it (under mu) */
    atomic_store_explicit(&w->snap_busy[c], true, memory_order_relaxed);
    w->snap_next = c + 1 >= w->snap_used ? 0 : c + 1;
    r->hash_op[0] = (uint64_t)c;
    r->hash_op[1] = (uint64_t)(sc.q - w->snap[c]);
    add_op(r, OP_HASH, r->hash_op, sizeof r->hash_op);
}

/* Hands the finished line (with its '\n') to the sink. */
static polis_status emit(polis_recorder *r)
{
    rb_ch(&r->line, '\n');
    if (r->line.oom || r->events.oom || r->msgs.oom)
        return rec_fail(r, POLIS_ERR_NOMEM, "recorder: out of memory building a line");
    if (r->writer) {
        writer_put(r);
    } else {
        const char *p = r->line.p;
        size_t n = r->line.len;
        if (r->n_ops) {
            r->out.len = 0;
            render(r, &r->out, r->memo, r->line.p, r->line.len, r->ops, r->n_ops);
            p = r->out.p;
            n = r->out.len;
        } else {
            r->line.p[r->line.len] = '\0'; /* rb_room kept a byte for it */
        }
        if (!r->out.oom) {
            if (r->sink) {
                if (r->n_ops) r->out.p[r->out.len] = '\0';
                r->sink(r->sink_ud, p, n);
            } else if (!write_out(r, p, n)) {
                r->write_failed = true;
            }
        }
    }
    r->line.len = 0;
    r->n_ops = 0;
    r->ops_len = 0;
    if (r->out.oom) return rec_fail(r, POLIS_ERR_NOMEM, "recorder: out of memory building a line");
    if (r->write_failed) return rec_fail(r, POLIS_ERR_IO, "recorder: cannot write the recording");
    return r->scene_status; /* the writer thread's scene failed (r->err says how) */
}

/* ---- events ----------------------------------------------------------------------------- */

/* An event, as raw values: [i32 type][its data] (formatted when the line is written out). */
static inline __attribute__((always_inline)) void event_put(polis_recorder *r,
                                                            const polis_event *ev, size_t n)
{
    char *q = r->events.p + r->events.len;
    memcpy(q, &ev->type, sizeof(int32_t));
    q += sizeof(int32_t);
    /* most events are a few int32 fields: two fixed-size moves that may overlap (every byte of
     * the n is read and written once or twice, none past them), not a call to memcpy, which
     * is most of this function's cost at 3-30 events a tick */
    const char *d = ev->data;
    if (n >= 16 && n <= 32) {
        memcpy(q, d, 16);
        memcpy(q + n - 16, d + n - 16, 16);
    } else if (n >= 8 && n < 16) {
        memcpy(q, d, 8);
        memcpy(q + n - 8, d + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        memcpy(q, d, 4);
        memcpy(q + n - 4, d + n - 4, 4);
    } else if (n) {
        memcpy(q, d, n);
    }
    r->events.len += sizeof(int32_t) + n;
}

/* An event when the buffer must grow first (the first ticks): apart, so that on_event calls
 * nothing and saves no registers. */
static __attribute__((noinline)) void event_grow(polis_recorder *r, const polis_event *ev, size_t n)
{
    if (rb_room(&r->events, sizeof(int32_t) + n)) event_put(r, ev, n);
}

static void on_event(void *ud, const polis_event *ev)
{
    polis_recorder *r = ud;
    if (!r->events_on) return;
    size_t n = r->ev_size[ev->type];
    if (r->events.len + sizeof(int32_t) + n + 1 > r->events.cap) { /* (rb_room) */
        event_grow(r, ev, n);
        return;
    }
    event_put(r, ev, n);
}

/* Writes every event type's keys once (event types are fixed once the env is created). */
static polis_status event_keys(polis_recorder *r)
{
    const polis_env *env = r->env;
    int32_t n_types = polis_env_n_event_types(env);
    size_t n = 1, n_fields = 0;
    for (int32_t t = 0; t < n_types; t++) {
        n_fields += (size_t)polis_env_event_n_fields(env, t);
        n += (size_t)polis_env_event_n_fields(env, t) + 1;
    }
    r->ev_off = calloc(n + 1, sizeof *r->ev_off);
    r->ev_first = calloc((size_t)n_types + 1, sizeof *r->ev_first);
    r->ev_fields = calloc(n_fields + 1, sizeof *r->ev_fields);
    r->ev_size = calloc((size_t)n_types + 1, sizeof *r->ev_size);
    if (!r->ev_off || !r->ev_first || !r->ev_fields || !r->ev_size) return POLIS_ERR_NOMEM;
    rbuf *b = &r->ev_keys;
    size_t k = 0;
    for (int32_t t = 0; t < n_types; t++) {
        r->ev_first[t] = (int32_t)k;
        r->ev_off[k++] = b->len;
        RB_LIT(b, ",{\"type\":");
        rb_str(b, polis_env_event_name(env, t));
        for (int32_t i = 0; i < polis_env_event_n_fields(env, t); i++) {
            const char *name = NULL;
            ev_field *f = &r->ev_fields[k - (size_t)t - 1];
            if (polis_env_event_field(env, t, i, &name, &f->type, &f->offset) != POLIS_OK)
                return POLIS_ERR_INVALID;
            size_t end = f->offset + (f->type == POLIS_FIELD_I32 || f->type == POLIS_FIELD_F32
                                          ? sizeof(int32_t)
                                          : sizeof(int64_t));
            if (end > r->ev_size[t]) r->ev_size[t] = end;
            r->ev_off[k++] = b->len;
            rb_ch(b, ',');
            rb_str(b, name);
            rb_ch(b, ':');
        }
    }
    r->ev_first[n_types] = (int32_t)k;
    r->ev_off[k] = b->len;
    if (rb_room(b, KEY_SLACK)) memset(b->p + b->len, 0, KEY_SLACK); /* copy_keys reads past */
    return b->oom ? POLIS_ERR_NOMEM : POLIS_OK;
}

/* ---- opening: the header ---------------------------------------------------------------- */

static uint64_t fnv1a(const char *s, size_t n) { return fnv1a_more(FNV_OFFSET, s, n); }

/* A JSON text as one line (re-printed without formatting), or NULL if it does not parse. */
static char *one_line(const char *text, size_t len)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    if (!j) return NULL;
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

/* ",\"visibility\":[{\"observers\":[ids],\"hidden\":[ids],\"from\":N[,\"until\":M]},...]": the
 * scenario's who-sees-whom rules (overrides applied), for the viewer's agent views; nothing
 * without rules. */
static polis_status put_rules(polis_recorder *r)
{
    int32_t nr = polis_env_visibility_n_rules(r->env), n = r->n_agents;
    if (!nr) return POLIS_OK;
    uint8_t *flags = malloc(2 * (size_t)n);
    if (!flags) return rec_fail(r, POLIS_ERR_NOMEM, "recorder: out of memory");
    rb_puts(&r->line, ",\"visibility\":[");
    for (int32_t i = 0; i < nr; i++) {
        int64_t from, until;
        polis_env_visibility_rule(r->env, i, &from, &until, flags, flags + n);
        for (int side = 0; side < 2; side++) {
            rb_puts(&r->line, side ? "],\"hidden\":["
                              : i  ? ",{\"observers\":["
                                   : "{\"observers\":[");
            bool first = true;
            for (int32_t a = 0; a < n; a++)
                if (flags[side * n + a]) {
                    rb_item(&r->line, !first, a);
                    first = false;
                }
        }
        rb_printf(&r->line, "],\"from\":%" PRId64, from);
        if (until >= 0) rb_printf(&r->line, ",\"until\":%" PRId64, until);
        rb_put(&r->line, "}", 1);
    }
    rb_put(&r->line, "]", 1);
    free(flags);
    return POLIS_OK;
}

static polis_status header(polis_recorder *r, const polis_record_info *info)
{
    polis_env *env = r->env;
    rbuf *b = &r->line;
    rb_printf(b, "{\"t\":\"header\",\"format\":\"polis-recording\",\"version\":%d,\"polis\":",
              POLIS_RECORDING_VERSION);
    rb_str(b, POLIS_VERSION_STRING);
    rb_printf(b, ",\"abi\":\"%d.%d\",\"name\":", POLIS_ABI_MAJOR, POLIS_ABI_MINOR);
    rb_str(b, polis_env_name(env));
    rb_puts(b, ",\"scenario\":");
    char *scn = one_line(info->scenario_text, info->scenario_len);
    if (!scn)
        return rec_fail(r, POLIS_ERR_INVALID, "recorder: the scenario text is not valid JSON");
    rb_puts(b, scn);
    /* the hash of the scenario as the header holds it, so a replay re-checks it */
    uint64_t scn_hash = fnv1a(scn, strlen(scn));
    cJSON_free(scn);
    rb_puts(b, ",\"scenario_path\":");
    if (info->scenario_path)
        rb_str(b, info->scenario_path);
    else
        rb_puts(b, "null");
    rb_puts(b, ",\"base_dir\":");
    if (info->base_dir)
        rb_str(b, info->base_dir);
    else
        rb_puts(b, "null");
    rb_printf(b, ",\"scenario_hash\":\"%016" PRIx64 "\",\"overrides\":", scn_hash);
    if (info->overrides && *info->overrides) {
        char *ov = one_line(info->overrides, strlen(info->overrides));
        if (!ov)
            return rec_fail(r, POLIS_ERR_INVALID, "recorder: the overrides are not valid JSON");
        rb_puts(b, ov);
        cJSON_free(ov);
    } else {
        rb_puts(b, "null");
    }
    rb_printf(b, ",\"seed\":%" PRIu64 ",\"keyframe_every\":%d,\"plugins\":[", info->seed,
              (int)r->keyframe_every);
    bool first = true;
    for (int32_t i = 0; i < polis_env_n_plugins(env); i++) {
        polis_plugin_info p;
        if (polis_env_plugin(env, i, &p) != POLIS_OK) continue;
        rb_puts(b, first ? "{\"name\":" : ",{\"name\":");
        first = false;
        rb_str(b, p.name);
        rb_puts(b, ",\"version\":");
        rb_str(b, p.version);
        rb_puts(b, p.kind == POLIS_PLUGIN_SO ? ",\"kind\":\"so\",\"path\":"
                                             : ",\"kind\":\"lua\",\"path\":");
        rb_str(b, p.path);
        rb_put(b, "}", 1);
    }
    rb_puts(b, "],\"agents\":[");
    for (int32_t a = 0; a < polis_env_n_agents(env); a++) {
        if (a) rb_put(b, ",", 1);
        rb_str(b, polis_env_agent_name(env, a));
    }
    rb_puts(b, "],\"actions\":[");
    for (int32_t i = 0; i < polis_env_n_actions(env); i++) {
        rb_puts(b, i ? ",{\"name\":" : "{\"name\":");
        rb_str(b, polis_env_action_name(env, i));
        rb_puts(b, ",\"doc\":");
        const char *doc = polis_env_action_doc(env, i);
        rb_str(b, doc ? doc : "");
        rb_put(b, "}", 1);
    }
    rb_printf(b, "],\"map\":{\"width\":%d,\"height\":%d,\"layers\":[",
              (int)polis_env_scene_width(env), (int)polis_env_scene_height(env));
    int32_t nl = polis_env_scene_width(env) > 0 ? polis_env_scene_n_layers(env) : 0;
    for (int32_t i = 0; i < nl; i++) {
        if (i) rb_put(b, ",", 1);
        rb_str(b, polis_env_scene_layer_name(env, i));
    }
    rb_puts(b, "]},\"kinds\":[");
    for (int32_t i = 0; i < polis_env_scene_n_kinds(env); i++) {
        polis_kind_info k;
        polis_env_scene_kind(env, i, &k);
        rb_puts(b, i ? ",{\"name\":" : "{\"name\":");
        rb_str(b, k.name);
        rb_puts(b, ",\"glyph\":");
        rb_str(b, k.glyph);
        rb_puts(b, ",\"color\":");
        rb_str(b, k.color);
        rb_puts(b, ",\"shape\":");
        rb_str(b, polis_shape_name(k.shape));
        rb_puts(b, ",\"plugin\":");
        rb_str(b, k.plugin);
        rb_put(b, "}", 1);
    }
    rb_puts(b, "],\"stats\":[");
    for (int32_t i = 0; i < polis_env_scene_n_stats(env); i++) {
        const char *name, *group;
        int32_t max;
        polis_env_scene_stat(env, i, &name, &group, &max);
        rb_puts(b, i ? ",{\"name\":" : "{\"name\":");
        rb_str(b, name);
        rb_puts(b, ",\"group\":");
        rb_str(b, group);
        rb_printf(b, ",\"max\":%d}", (int)max);
    }
    int32_t rx, ry;
    if (polis_env_scene_view(env, &rx, &ry))
        rb_printf(b, "],\"view\":{\"rx\":%d,\"ry\":%d}", (int)rx, (int)ry);
    else
        rb_puts(b, "],\"view\":null");
    polis_status st = put_rules(r);
    if (st) return st;
    rb_puts(b, ",\"policies\":");
    if (info->policies && *info->policies) {
        char *pol = one_line(info->policies, strlen(info->policies));
        if (!pol) return rec_fail(r, POLIS_ERR_INVALID, "recorder: policies is not valid JSON");
        rb_puts(b, pol);
        cJSON_free(pol);
    } else {
        rb_puts(b, "null");
    }
    rb_puts(b, ",\"source\":");
    rb_str(b, info->source ? info->source : "api");
    rb_put(b, "}", 1);
    return emit(r);
}

static polis_status open_common(polis_recorder *r, polis_env *env, const polis_record_info *info,
                                polis_error *err)
{
    r->env = env;
    r->episode = -1;
    r->vis_episode = polis_env_episode(env);
    r->vis_tick = polis_env_tick(env);
    r->n_agents = polis_env_n_agents(env);
    r->keyframe_every = info->keyframe_every > 0 ? info->keyframe_every : 100;
    r->key_lo = -2 * (int64_t)r->keyframe_every; /* no tick is within keyframe_every of it */
    r->events_on = true; /* the first reset's events go into its reset line */
    r->returns = calloc((size_t)(r->n_agents ? r->n_agents : 1), sizeof *r->returns);
    r->memo = calloc(2 * MEMO_SLOTS, sizeof *r->memo);
    if (!r->returns || !r->memo) return rec_fail(r, POLIS_ERR_NOMEM, "recorder: out of memory");
    polis_status st = polis_env_subscribe(env, -1, on_event, r);
    if (st) {
        snprintf(err->message, sizeof err->message,
                 "recorder: cannot subscribe to the env's events (%s): open the recorder "
                 "before the first reset",
                 polis_env_error(env));
        return st;
    }
    if ((st = event_keys(r))) return rec_fail(r, st, "recorder: out of memory");
    if ((st = header(r, info))) snprintf(err->message, sizeof err->message, "%s", r->err);
    return st;
}

static void list_free(sorted_list *l)
{
    free(l->copy);
    free(l->raw);
    free(l->prev);
    free(l->idx);
    free(l->ord);
    free(l->pcur);
    free(l->pprev);
    free(l->out);
    free(l->kpos);
    free(l->kchg);
    free(l->kslot);
    free(l->keys);
    free(l->ktmp);
    free(l->mbuf);
    free(l->kwhere);
    ranks_free(l->er);
}

static void rec_free(polis_recorder *r)
{
    if (!r) return;
    free(r->returns);
    free(r->memo);
    free(r->line.p);
    free(r->events.p);
    free(r->msgs.p);
    free(r->ev_keys.p);
    free(r->ev_off);
    free(r->ev_first);
    free(r->ev_fields);
    free(r->ev_size);
    free(r->out.p);
    free(r->prev_tiles);
    free(r->tile_ver);
    free(r->prev_agents);
    free(r->prev_stats);
    free(r->step_raw);
    free(r->key_agents);
    free(r->take_buf);
    free(r->key_ret);
    for (int i = 0; i < L_COUNT; i++) list_free(&r->lists[i]);
    free(r);
}

int64_t polis_recorder_allocs(const polis_recorder *r)
{
    return r ? r->allocs + r->line.grows + r->events.grows + r->msgs.grows + r->out.grows : 0;
}

static polis_status check_info(polis_env *env, const polis_record_info *info, polis_error *err)
{
    if (!env || !info || !info->scenario_text || info->keyframe_every < 0) {
        snprintf(err->message, sizeof err->message, "recorder: %s",
                 !env                   ? "env is NULL"
                 : !info                ? "info is NULL"
                 : !info->scenario_text ? "info->scenario_text is NULL"
                                        : "keyframe_every is negative");
        return err->status = POLIS_ERR_INVALID;
    }
    return POLIS_OK;
}

polis_status polis_recorder_open(const char *path, polis_env *env, const polis_record_info *info,
                                 polis_recorder **out, polis_error *err)
{
    polis_error local;
    if (!err) err = &local;
    err->status = POLIS_OK;
    err->message[0] = '\0';
    if (out) *out = NULL;
    if (!out || !path) {
        snprintf(err->message, sizeof err->message, "recorder: %s is NULL", out ? "path" : "out");
        return err->status = POLIS_ERR_INVALID;
    }
    polis_status st = check_info(env, info, err);
    if (st) return st;
    polis_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->message, sizeof err->message, "recorder: out of memory");
        return err->status = POLIS_ERR_NOMEM;
    }
    size_t n = strlen(path);
    bool gz = n > 3 && strcmp(path + n - 3, ".gz") == 0;
    /* large buffers: a tick's line is a few hundred bytes, a write call per 4 KiB cost more
     * than formatting them */
    if (gz) {
        r->gz = gz_open(path);
    } else {
        r->f = fopen(path, "wb");
        if (r->f) setvbuf(r->f, NULL, _IOFBF, 1 << 17);
    }
    if (!r->gz && !r->f) {
        snprintf(err->message, sizeof err->message, "recorder: cannot create %s: %s", path,
                 strerror(errno));
        rec_free(r);
        return err->status = POLIS_ERR_IO;
    }
    writer_start(r);
    if (!(st = open_common(r, env, info, err))) copies_start(r);
    if (st) {
        if (!err->message[0]) snprintf(err->message, sizeof err->message, "%s", r->err);
        polis_recorder_close(r);
        remove(path);
        return err->status = st;
    }
    *out = r;
    return POLIS_OK;
}

polis_status polis_recorder_open_sink(void (*sink)(void *ud, const char *line, size_t len),
                                      void *ud, polis_env *env, const polis_record_info *info,
                                      polis_recorder **out, polis_error *err)
{
    polis_error local;
    if (!err) err = &local;
    err->status = POLIS_OK;
    err->message[0] = '\0';
    if (out) *out = NULL;
    if (!out || !sink) {
        snprintf(err->message, sizeof err->message, "recorder: %s is NULL", out ? "sink" : "out");
        return err->status = POLIS_ERR_INVALID;
    }
    polis_status st = check_info(env, info, err);
    if (st) return st;
    polis_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->message, sizeof err->message, "recorder: out of memory");
        return err->status = POLIS_ERR_NOMEM;
    }
    r->sink = sink;
    r->sink_ud = ud;
    if ((st = open_common(r, env, info, err))) {
        if (!err->message[0]) snprintf(err->message, sizeof err->message, "%s", r->err);
        rec_free(r);
        return err->status = st;
    }
    *out = r;
    return POLIS_OK;
}

polis_status polis_recorder_flush(polis_recorder *r)
{
    if (!r) return POLIS_ERR_INVALID;
    rec_writer *w = r->writer;
    if (w) {
        if (w->len[w->fill]) writer_hand_over(r);
        pthread_mutex_lock(&w->mu);
        pthread_cond_broadcast(&w->cv); /* the thread may sleep on fewer than REC_WAKE */
        while (w->q_n) pthread_cond_wait(&w->cv, &w->mu);
        if (w->failed) r->write_failed = true;
        if (w->scene_status && !r->scene_status) {
            r->scene_status = w->scene_status;
            snprintf(r->err, sizeof r->err, "%s", w->scene_err);
        }
        /* the thread waits for a chunk (it takes one under mu): the file is this thread's */
        if (r->f && fflush(r->f) != 0) r->write_failed = true;
        pthread_mutex_unlock(&w->mu);
    } else if (r->f && fflush(r->f) != 0) {
        r->write_failed = true;
    }
    if (r->write_failed) return rec_fail(r, POLIS_ERR_IO, "recorder: cannot write the recording");
    return r->scene_status;
}

polis_status polis_recorder_close(polis_recorder *r)
{
    if (!r) return POLIS_OK;
    writer_stop(r);
    polis_scene_copy_close(r->takes); /* after the thread's last draw */
    polis_status st = r->write_failed ? POLIS_ERR_IO : r->scene_status;
    if (r->gz && !gz_close(r->gz)) st = POLIS_ERR_IO;
    if (r->f && fclose(r->f) != 0) st = POLIS_ERR_IO;
    rec_free(r);
    return st;
}

/* ---- scenes ----------------------------------------------------------------------------- */

/* Two keys in the list's order: their leading numbers, then the rest of the key only where
 * the numbers do not decide (the element's own comparison). */
static inline int key_cmp(const list_desc *d, const sort_key *x, const sort_key *y)
{
    uint32_t whole = x->whole & y->whole;
    for (int p = 0; p < 3; p++) {
        if (x->a[2 * p] != y->a[2 * p]) return x->a[2 * p] < y->a[2 * p] ? -1 : 1;
        if (x->a[2 * p + 1] != y->a[2 * p + 1]) return x->a[2 * p + 1] < y->a[2 * p + 1] ? -1 : 1;
        if (!(whole >> p & 1)) return d->cmp(x->el, y->el);
    }
    return 0;
}

#define SORT_RUN 8

/* The order of k[0 .. n) by key, as indices: o[i] = i sorted in runs of SORT_RUN by insertion,
 * then the runs merged pairwise through t[n] (qsort may allocate); a pair already in order is
 * copied. Returns the array that holds the result (o or t). */
static int32_t *sort_keys(const list_desc *d, const sort_key *k, int32_t *o, int32_t *t, size_t n)
{
    for (size_t lo = 0; lo < n; lo += SORT_RUN) {
        size_t hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;
        o[lo] = (int32_t)lo;
        for (size_t i = lo + 1; i < hi; i++) {
            size_t j = i;
            for (; j > lo && key_cmp(d, &k[o[j - 1]], &k[i]) > 0; j--) o[j] = o[j - 1];
            o[j] = (int32_t)i;
        }
    }
    for (size_t w = SORT_RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, x = lo;
            if (j < hi && key_cmp(d, &k[o[j - 1]], &k[o[j]]) > 0) {
                while (i < mid && j < hi)
                    t[x++] = key_cmp(d, &k[o[j]], &k[o[i]]) < 0 ? o[j++] : o[i++];
            }
            while (i < mid) t[x++] = o[i++];
            while (j < hi) t[x++] = o[j++];
        }
        int32_t *y = o;
        o = t;
        t = y;
    }
    return o;
}

/* The n elements at src into dst in key order, and in ord[j] the index in src of the j-th. */
static void sort_into(sorted_list *l, const list_desc *d, void *dst, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i++) d->key(&l->keys[i], src + i * d->size);
    const int32_t *o = sort_keys(d, l->keys, l->ord, l->ktmp, n);
    if (o != l->ord) memcpy(l->ord, o, n * sizeof *o);
    for (size_t j = 0; j < n; j++)
        memcpy((char *)dst + j * d->size, src + (size_t)o[j] * d->size, d->size);
}

/* 8 bytes at p as a big-endian number: numbers ordered as memcmp orders the bytes */
static inline uint64_t lead8(const char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static int cmp_thing(const void *a, const void *b)
{
    const polis_scene_thing *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The scene's strings are NUL-padded to their arrays' ends (polis/types.h), so memcmp over
 * the arrays orders them as strcmp does: one call for an edge's three keys (from, to and kind
 * are adjacent) instead of three. */
static int cmp_node(const void *a, const void *b)
{
    return memcmp(((const polis_scene_node *)a)->id, ((const polis_scene_node *)b)->id,
                  POLIS_SCENE_ID_MAX);
}

#define EDGE_KEY (offsetof(polis_scene_edge, kind) + POLIS_SCENE_KIND_MAX)

static int cmp_edge(const void *a, const void *b)
{
    _Static_assert(offsetof(polis_scene_edge, from) == 0 &&
                       offsetof(polis_scene_edge, to) == POLIS_SCENE_ID_MAX &&
                       offsetof(polis_scene_edge, kind) == 2 * POLIS_SCENE_ID_MAX,
                   "an edge's keys are adjacent arrays");
    return memcmp(a, b, EDGE_KEY);
}

static void key_thing(sort_key *k, const void *v)
{
    *k = (sort_key){
        .a = {(uint64_t)(int64_t)((const polis_scene_thing *)v)->id ^ ((uint64_t)1 << 63)},
        .el = v,
        .whole = KEY_WHOLE};
}

/* A string of at most 16 bytes is all in its two numbers (NUL to the end of its array,
 * types.h). */
static void key_node(sort_key *k, const void *v)
{
    const char *id = ((const polis_scene_node *)v)->id;
    *k = (sort_key){.a = {lead8(id), lead8(id + 8)}, .el = v, .whole = id[16] ? 6u : KEY_WHOLE};
}

static void key_edge(sort_key *k, const void *v)
{
    const polis_scene_edge *e = v;
    *k = (sort_key){.a = {lead8(e->from), lead8(e->from + 8), lead8(e->to), lead8(e->to + 8),
                          lead8(e->kind), lead8(e->kind + 8)},
                    .el = v,
                    .whole =
                        (e->from[16] ? 0u : 1u) | (e->to[16] ? 0u : 2u) | (e->kind[16] ? 0u : 4u)};
}

static bool thing_changed(const void *a, const void *b)
{
    const polis_scene_thing *x = a, *y = b;
    return x->kind != y->kind || memcmp(x->label, y->label, sizeof x->label) != 0;
}

static bool thing_moved(const void *a, const void *b)
{
    const polis_scene_thing *x = a, *y = b;
    return x->x != y->x || x->y != y->y;
}

static bool node_changed(const void *a, const void *b)
{
    const polis_scene_node *x = a, *y = b;
    return memcmp(x->kind, y->kind, sizeof x->kind) != 0 ||
           memcmp(x->label, y->label, sizeof x->label) != 0;
}

static bool edge_changed(const void *a, const void *b)
{
    return ((const polis_scene_edge *)a)->weight != ((const polis_scene_edge *)b)->weight;
}

static void put_thing(rbuf *b, num_memo *memo, const void *v)
{
    (void)memo;
    const polis_scene_thing *t = v;
    if (!rb_room(b, 4 * (INT_MAXLEN + 1) + sizeof t->label + 4)) return;
    char *q = b->p + b->len;
    *q++ = '[';
    q = put_int(q, t->id);
    *q++ = ',';
    q = put_int(q, t->kind);
    *q++ = ',';
    q = put_int(q, t->x);
    *q++ = ',';
    q = put_int(q, t->y);
    *q++ = ',';
    b->len = (size_t)(q - b->p);
    q = put_str_in(q, t->label, sizeof t->label);
    if (q) {
        *q++ = ']';
        b->len = (size_t)(q - b->p);
        return;
    }
    rb_str(b, t->label);
    rb_ch(b, ']');
}

static void put_thing_move(rbuf *b, num_memo *memo, const void *v)
{
    (void)memo;
    const polis_scene_thing *t = v;
    if (!rb_room(b, 3 * (INT_MAXLEN + 1) + 1)) return;
    char *q = b->p + b->len;
    *q++ = '[';
    q = put_int(q, t->id);
    *q++ = ',';
    q = put_int(q, t->x);
    *q++ = ',';
    q = put_int(q, t->y);
    *q++ = ']';
    b->len = (size_t)(q - b->p);
}

static void put_thing_del(rbuf *b, num_memo *memo, const void *v)
{
    (void)memo;
    rb_int(b, ((const polis_scene_thing *)v)->id);
}

static void put_node(rbuf *b, num_memo *memo, const void *v)
{
    (void)memo;
    const polis_scene_node *n = v;
    if (rb_room(b, sizeof n->id + sizeof n->kind + sizeof n->label + 10)) {
        char *q = b->p + b->len;
        *q++ = '[';
        if ((q = put_str_in(q, n->id, sizeof n->id))) *q++ = ',';
        if (q && (q = put_str_in(q, n->kind, sizeof n->kind))) *q++ = ',';
        if (q && (q = put_str_in(q, n->label, sizeof n->label))) {
            *q++ = ']';
            b->len = (size_t)(q - b->p);
            return;
        }
    }
    rb_ch(b, '[');
    rb_str(b, n->id);
    rb_ch(b, ',');
    rb_str(b, n->kind);
    rb_ch(b, ',');
    rb_str(b, n->label);
    rb_ch(b, ']');
}

static void put_node_del(rbuf *b, num_memo *memo, const void *v)
{
    (void)memo;
    rb_str(b, ((const polis_scene_node *)v)->id);
}

/* [from, to, kind] and, unless memo is NULL (a "del"), the weight */
static void put_edge_key(rbuf *b, num_memo *memo, const polis_scene_edge *e)
{
    if (rb_room(b, sizeof e->from + sizeof e->to + sizeof e->kind + FLOAT_MAXLEN + 10)) {
        char *q = b->p + b->len;
        *q++ = '[';
        if ((q = put_str_in(q, e->from, sizeof e->from))) *q++ = ',';
        if (q && (q = put_str_in(q, e->to, sizeof e->to))) *q++ = ',';
        if (q && (q = put_str_in(q, e->kind, sizeof e->kind))) {
            if (memo) {
                *q++ = ',';
                q = put_f32(q, memo, e->weight);
            }
            *q++ = ']';
            b->len = (size_t)(q - b->p);
            return;
        }
    }
    rb_ch(b, '[');
    rb_str(b, e->from);
    rb_ch(b, ',');
    rb_str(b, e->to);
    rb_ch(b, ',');
    rb_str(b, e->kind);
    if (memo) {
        rb_ch(b, ',');
        rb_f32(b, memo, e->weight);
    }
    rb_ch(b, ']');
}

static void put_edge(rbuf *b, num_memo *memo, const void *v) { put_edge_key(b, memo, v); }
static void put_edge_del(rbuf *b, num_memo *memo, const void *v)
{
    (void)memo;
    put_edge_key(b, NULL, v);
}

static const list_desc LISTS[L_COUNT] = {
    [L_THINGS] = {",\"things\":{", sizeof(polis_scene_thing), cmp_thing, key_thing, thing_changed,
                  thing_moved, false, put_thing, put_thing_move, put_thing_del},
    [L_NODES] = {",\"nodes\":{", sizeof(polis_scene_node), cmp_node, key_node, node_changed, NULL,
                 true, put_node, NULL, put_node_del},
    [L_EDGES] = {",\"edges\":{", sizeof(polis_scene_edge), cmp_edge, key_edge, edge_changed, NULL,
                 true, put_edge, NULL, put_edge_del},
};

static const void *scene_list(const polis_scene *s, int which, int32_t *n, int32_t *cap)
{
    switch (which) {
    case L_THINGS: *n = s->n_things, *cap = s->cap_things; return s->things;
    case L_NODES: *n = s->n_nodes, *cap = s->cap_nodes; return s->nodes;
    default: *n = s->n_edges, *cap = s->cap_edges; return s->edges;
    }
}

static void *rec_calloc(polis_recorder *r, size_t n, size_t size)
{
    r->allocs++;
    return calloc(n + 1, size);
}

/* step_raw's bytes: the padded head, put_thing_pairs' most (a count, then a word and the old
 * and the new thing for each changed slot), every agent with every stat changed */
static size_t step_raw_size(int32_t n_agents, size_t n_stats)
{
    return HEAD_PADDED(head_size(n_agents)) + sizeof(uint32_t) + TDIFF_MAX * 4 * sizeof(int32_t) +
           KEPT_FEW * (sizeof(uint32_t) + 2 * sizeof(polis_scene_thing)) +
           ((size_t)n_agents * 7 + 2 * n_stats) * sizeof(int32_t);
}

/* ---- a kept edge list's keys as numbers ---------------------------------------------------- */

/* The changed edges of a kept edge list are sorted and merged by numbers, not strings. Each
 * string an edge holds gets a rank: its place in strcmp order among the strings of its table
 * (one for the ends, one for the kinds), found through a hash of its bytes and held from tick
 * to tick. An edge's key, (from's rank, to's rank, kind's rank) in one number, orders edges as
 * cmp_edge does, and two edges have one key only when their strings are the same. The
 * previous line's edges keep their keys beside them (pkey), valid while the ranks they were
 * made with hold (pgen == gen): a tick ranks the strings of its new edges only. A string
 * ranked before others moves their ranks (gen changes, and the kept keys are made again as
 * they are needed); a full table is emptied. */
#define RANK_BITS 21
#define RANK_HASH1 UINT64_C(0x9E3779B97F4A7C15)
#define RANK_HASH2 UINT64_C(0xC2B2AE3D27D4EB4F)

/* A string held: its first 16 bytes as two numbers, and which string it is. */
typedef struct str_slot {
    uint64_t w0, w1;
    uint32_t tag; /* 0: an empty slot; 1: the string ends in w0, w1; 2: it goes on past them */
    uint32_t idx; /* the string's index */
} str_slot;

typedef struct str_table {
    size_t width;      /* each string's array: POLIS_SCENE_ID_MAX or POLIS_SCENE_KIND_MAX */
    uint32_t max, n;   /* strings at most (<= 2^RANK_BITS), held */
    uint32_t mask;     /* the hash's slots - 1 (a power of two, at least 2 max) */
    int shift;         /* 64 - log2(slots): a hash's top bits pick its slot */
    str_slot *slot;    /* [mask + 1] */
    char *str;         /* [max * width]: the strings, NUL-padded */
    uint32_t *rank;    /* [max]: each string's place among the n in strcmp order */
    uint32_t *by_rank; /* [max]: the strings in that order */
} str_table;

typedef struct edge_pair {
    uint64_t key;
    const char *el;
} edge_pair;

/* The last end ranked at one end of an edge (an edge's attributes come one after the other,
 * with the same ends): its first 16 bytes, when it ends there, and its rank under gen. */
typedef struct rank_memo {
    uint64_t w0, w1;
    uint32_t rank, gen;
} rank_memo;

typedef struct edge_ranks {
    str_table ends, kinds;
    rank_memo last[2];        /* from, to */
    uint32_t gen;             /* the ranks' version: changes when a held string's rank changed */
    uint64_t *pkey;           /* [cap + 1]: prev[i]'s key, made when pgen[i] == gen */
    uint32_t *pgen;           /* [cap + 1] (0: none) */
    uint64_t *nkey;           /* [kslots + 1]: the new element's key of the k-th changed slot */
    edge_pair *pn, *po, *tmp; /* [cap + 1] each: the new and old edges sorted, a sort's buffer */
    uint32_t *count;          /* [ends.max + 1]: a sort's buckets */
} edge_ranks;

static void ranks_gen(edge_ranks *er)
{
    if (++er->gen == 0) er->gen = 1; /* 0 marks a key never made */
}

static bool str_table_alloc(polis_recorder *r, str_table *t, size_t width, uint32_t max)
{
    t->width = width;
    t->max = max < 8 ? 8 : max;
    t->n = 0;
    uint32_t slots = 16;
    t->shift = 60;
    while (slots < 2 * t->max) slots *= 2, t->shift--;
    t->mask = slots - 1;
    t->slot = rec_calloc(r, slots, sizeof *t->slot);
    t->str = rec_calloc(r, (size_t)t->max * width, 1);
    t->rank = rec_calloc(r, t->max, sizeof *t->rank);
    t->by_rank = rec_calloc(r, t->max, sizeof *t->by_rank);
    return t->slot && t->str && t->rank && t->by_rank;
}

static void str_table_free(str_table *t)
{
    free(t->slot);
    free(t->str);
    free(t->rank);
    free(t->by_rank);
}

/* The ranks of a kept edge list of cap elements in kslots slots, allocated with the list. */
static bool ranks_alloc(polis_recorder *r, sorted_list *l, int32_t cap, int32_t kslots)
{
    edge_ranks *er = l->er = rec_calloc(r, 1, sizeof *er);
    if (!er) return false;
    uint32_t most = 1u << 16, c = (uint32_t)cap;
    er->gen = 1;
    er->pkey = rec_calloc(r, (size_t)cap, sizeof *er->pkey);
    er->pgen = rec_calloc(r, (size_t)cap, sizeof *er->pgen);
    er->nkey = rec_calloc(r, (size_t)kslots, sizeof *er->nkey);
    er->pn = rec_calloc(r, (size_t)cap, sizeof *er->pn);
    er->po = rec_calloc(r, (size_t)cap, sizeof *er->po);
    er->tmp = rec_calloc(r, (size_t)cap, sizeof *er->tmp);
    bool ok = er->pkey && er->pgen && er->nkey && er->pn && er->po && er->tmp &&
              str_table_alloc(r, &er->ends, POLIS_SCENE_ID_MAX, c < most / 2 ? 2 * c + 2 : most) &&
              str_table_alloc(r, &er->kinds, POLIS_SCENE_KIND_MAX, c < most ? c + 1 : most);
    return ok && (er->count = rec_calloc(r, er->ends.max + 1, sizeof *er->count));
}

static void ranks_free(edge_ranks *er)
{
    if (!er) return;
    free(er->pkey);
    free(er->pgen);
    free(er->nkey);
    free(er->pn);
    free(er->po);
    free(er->tmp);
    free(er->count);
    str_table_free(&er->ends);
    str_table_free(&er->kinds);
    free(er);
}

/* A string's hash: its first 16 bytes (w0, w1), and the rest when `more`. */
static inline uint64_t str_hash(const char *s, size_t width, uint64_t w0, uint64_t w1, bool more)
{
    uint64_t h = (w0 * RANK_HASH1 + w1) * RANK_HASH2;
    for (size_t b = 16; more && b < width; b += 8) {
        uint64_t w;
        memcpy(&w, s + b, sizeof w);
        h = (h ^ w) * RANK_HASH2;
    }
    return h;
}

/* String s (t->width bytes, NUL-padded, not held; w0, w1 its first 16 bytes, `more` when it
 * goes on past them) into table t, at hash slot i: ranked among the others, whose ranks past
 * it move up one (gen changes; none move when it is the last). A full table is emptied first.
 * Returns its rank. */
static uint32_t str_add(edge_ranks *er, str_table *t, const char *s, uint32_t i, uint64_t w0,
                        uint64_t w1, bool more)
{
    if (t->n == t->max) {
        memset(t->slot, 0, ((size_t)t->mask + 1) * sizeof *t->slot);
        t->n = 0;
        ranks_gen(er);
        i = (uint32_t)(str_hash(s, t->width, w0, w1, more) >> t->shift);
    }
    uint32_t x = t->n++, lo = 0, hi = x;
    memcpy(t->str + (size_t)x * t->width, s, t->width);
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (memcmp(t->str + (size_t)t->by_rank[mid] * t->width, s, t->width) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < x) {
        memmove(t->by_rank + lo + 1, t->by_rank + lo, (size_t)(x - lo) * sizeof *t->by_rank);
        for (uint32_t k = lo + 1; k <= x; k++) t->rank[t->by_rank[k]] = k;
        ranks_gen(er);
    }
    t->by_rank[lo] = x;
    t->rank[x] = lo;
    t->slot[i] = (str_slot){w0, w1, more ? 2u : 1u, x};
    return lo;
}

/* The rank of a string that goes on past its first 16 bytes (str_rank). */
static uint32_t str_rank_long(edge_ranks *er, str_table *t, const char *s, uint64_t w0, uint64_t w1)
{
    for (uint32_t i = (uint32_t)(str_hash(s, t->width, w0, w1, true) >> t->shift);;
         i = (i + 1) & t->mask) {
        const str_slot *e = &t->slot[i];
        if (e->w0 == w0 && e->w1 == w1 && e->tag == 2 &&
            memcmp(t->str + (size_t)e->idx * t->width + 16, s + 16, t->width - 16) == 0)
            return t->rank[e->idx];
        if (!e->tag) return str_add(er, t, s, i, w0, w1, true);
    }
}

/* The rank of string s (t->width bytes, NUL-padded) in table t, added when new: its first 16
 * bytes compared as two numbers (and the rest, when it goes on past them). */
static inline uint32_t str_rank(edge_ranks *er, str_table *t, const char *s)
{
    uint64_t w0, w1;
    memcpy(&w0, s, sizeof w0);
    memcpy(&w1, s + 8, sizeof w1);
    if (s[16]) return str_rank_long(er, t, s, w0, w1);
    for (uint32_t i = (uint32_t)(str_hash(s, t->width, w0, w1, false) >> t->shift);;
         i = (i + 1) & t->mask) {
        const str_slot *e = &t->slot[i];
        if (e->w0 == w0 && e->w1 == w1 && e->tag == 1) return t->rank[e->idx];
        if (!e->tag) return str_add(er, t, s, i, w0, w1, false);
    }
}

/* The rank of end s (a from or a to), m the last one ranked there: its rank again when s is
 * that end, ends in its first 16 bytes and the ranks are those of then. */
static inline uint32_t end_rank(edge_ranks *er, rank_memo *m, const char *s)
{
    uint64_t w0, w1;
    memcpy(&w0, s, sizeof w0);
    memcpy(&w1, s + 8, sizeof w1);
    if (w0 == m->w0 && w1 == m->w1 && !s[16] && m->gen == er->gen) return m->rank;
    uint32_t rank = str_rank(er, &er->ends, s);
    *m = (rank_memo){w0, w1, rank, s[16] ? 0 : er->gen}; /* one that goes on: not kept */
    return rank;
}

/* An edge's key under the ranks of er->gen (made again when ranking one of its strings moved
 * the others' ranks). */
static inline __attribute__((always_inline)) uint64_t edge_key(edge_ranks *er,
                                                               const polis_scene_edge *e)
{
    _Static_assert(3 * RANK_BITS <= 64, "three ranks in a key");
    for (;;) {
        uint32_t gen = er->gen;
        uint64_t k = (uint64_t)end_rank(er, &er->last[0], e->from) << (2 * RANK_BITS) |
                     (uint64_t)end_rank(er, &er->last[1], e->to) << RANK_BITS |
                     str_rank(er, &er->kinds, e->kind);
        if (er->gen == gen) return k;
    }
}

/* An edge as pack_edge writes it, at most */
#define EDGE_PACKED_MAX (1 + 2 * POLIS_SCENE_ID_MAX + POLIS_SCENE_KIND_MAX + sizeof(float))

/* A kept edge list of cap elements in kslots slots whose previous line the writer thread keeps
 * (sorted_list.mirror): the stepping thread's OP_EMIRROR buffer (put_edge_mirror: a start's
 * whole list and slots, then each changed slot's new edge), and the thread's copy of the list,
 * its slots, ranks and buffers (render_edge_mirror). */
static bool mirror_alloc(polis_recorder *r, sorted_list *l, int32_t cap, int32_t kslots)
{
    const size_t size = sizeof(polis_scene_edge), c = (size_t)cap, ks = (size_t)kslots;
    sorted_list *e = r->writer->edges = rec_calloc(r, 1, sizeof *e);
    /* [u32 mode][u32 n_prev][i32 kpos[kslots]][n_prev edges][u32 slots]([i32 slot][u8] edge)* */
    l->mbuf = rec_calloc(
        r, 3 * sizeof(uint32_t) + ks * (2 * sizeof(int32_t) + 1) + 2 * c * EDGE_PACKED_MAX, 1);
    if (!e || !l->mbuf) return false;
    l->mirror = true;
    e->cap = cap;
    e->kslots = kslots;
    e->prev = rec_calloc(r, c, size); /* the previous line's edges, slot kslot[i]'s at i */
    e->copy = rec_calloc(r, c, size); /* prev sorted (a keyframe, a list no longer whole) */
    e->raw = rec_calloc(r, c, size);  /* a line's new edges */
    e->kpos = rec_calloc(r, ks, sizeof(int32_t));
    e->kchg = rec_calloc(r, ks, sizeof(int32_t));
    e->kwhere = rec_calloc(r, ks, sizeof(int32_t));
    e->kslot = rec_calloc(r, c, sizeof(int32_t));
    e->pcur = rec_calloc(r, c, sizeof(const char *));
    e->pprev = rec_calloc(r, c, sizeof(const char *));
    e->keys = rec_calloc(r, c, sizeof(sort_key));
    e->ord = rec_calloc(r, c, sizeof(int32_t));
    e->ktmp = rec_calloc(r, c, sizeof(int32_t));
    e->idx = rec_calloc(r, 3 * (c + 1), sizeof(int32_t));
    e->out = rec_calloc(r, 4 * sizeof(uint32_t) + 2 * (c + 1) * EDGE_PACKED_MAX, 1);
    return e->prev && e->copy && e->raw && e->kpos && e->kchg && e->kwhere && e->kslot && e->pcur &&
           e->pprev && e->keys && e->ord && e->ktmp && e->idx && e->out &&
           ranks_alloc(r, e, cap, kslots);
}

/* The most bytes of agents and stats a step line holds whole (agents_whole) */
#define AGENTS_WHOLE_MAX 4096

/* The buffers of agents_whole for n agents (r->n_stats stats in all). */
static bool agents_whole_alloc(polis_recorder *r, int32_t n)
{
    rec_writer *w = r->writer;
    size_t na = (size_t)n, ns = r->n_stats;
    w->prev_agents = rec_calloc(r, na, sizeof *w->prev_agents);
    w->cur_agents = rec_calloc(r, na, sizeof *w->cur_agents);
    w->prev_stats = rec_calloc(r, ns, sizeof *w->prev_stats);
    w->cur_stats = rec_calloc(r, ns, sizeof *w->cur_stats);
    w->agents_out = rec_calloc(r, 7 * na + 2 * ns, sizeof *w->agents_out);
    w->cur_returns = rec_calloc(r, na, sizeof *w->cur_returns);
    r->key_agents =
        rec_calloc(r, na * (sizeof(polis_scene_agent) + sizeof(double)) + ns * sizeof(int32_t), 1);
    r->agents_whole = w->prev_agents && w->cur_agents && w->prev_stats && w->cur_stats &&
                      w->agents_out && w->cur_returns && r->key_agents;
    return r->agents_whole;
}

/* ---- the scene's source ------------------------------------------------------------------- */

/* What the scene read last says of itself, its kept lists, the rows of a kept layer it
 * rewrote, and the tick it shows: the env's (polis_env_scene_*), or, on the writer thread's
 * recorder of the scene, the copy's it drew (polis_scene_copy_*). */
static inline const polis_scene_said *src_said(const polis_recorder *r)
{
    return r->draws ? polis_scene_copy_said(r->draws) : polis_env_scene_said(r->env);
}

static inline polis_status src_kept(const polis_recorder *r, int32_t list, polis_scene_kept *kp)
{
    return r->draws ? polis_scene_copy_kept(r->draws, list, kp)
                    : polis_env_scene_kept(r->env, list, kp);
}

static inline const uint64_t *src_rows(const polis_recorder *r, int32_t layer, uint64_t *since)
{
    return r->draws ? polis_scene_copy_layer_rows(r->draws, layer, since)
                    : polis_env_scene_layer_rows(r->env, layer, since);
}

static inline int64_t src_tick(const polis_recorder *r)
{
    return r->draws ? r->draw_tick : polis_env_tick(r->env);
}

/* The copies of the previous line's scene, allocated at the first scene (its sizes are fixed
 * from then on). */
static polis_status sized(polis_recorder *r, const polis_scene *s)
{
    const int32_t *d = r->sized_dims; /* most calls: the sizes it was sized for */
    _Static_assert(L_COUNT == 3, "a scene has three lists");
    if (r->sized && s->n_layers == d[0] && s->width == d[1] && s->height == d[2] &&
        s->cap_things == d[3] && s->cap_nodes == d[4] && s->cap_edges == d[5])
        return POLIS_OK;
    int32_t dims[3 + L_COUNT] = {s->n_layers, s->width, s->height};
    for (int i = 0; i < L_COUNT; i++) scene_list(s, i, &(int32_t){0}, &dims[3 + i]);
    if (r->sized) {
        /* a task of the scenario's "vary" may rebuild the env with another map */
        if (memcmp(dims, r->sized_dims, sizeof dims) == 0) return POLIS_OK;
        return rec_fail(r, POLIS_ERR_STATE,
                        "recorder: episode %" PRId64 ": the scene is %dx%d (%d layers), the "
                        "recording's %dx%d (%d layers), or its lists grew: a task that changes "
                        "the map (the scenario's \"vary\") cannot be recorded into the same "
                        "file",
                        r->episode, (int)s->width, (int)s->height, (int)s->n_layers,
                        (int)r->sized_dims[1], (int)r->sized_dims[2], (int)r->sized_dims[0]);
    }
    memcpy(r->sized_dims, dims, sizeof dims);
    r->cells = (size_t)s->n_layers * (size_t)s->width * (size_t)s->height;
    r->n_stats = (size_t)s->n_agents * (size_t)s->n_stats;
    r->prev_tiles = rec_calloc(r, r->cells, sizeof *r->prev_tiles);
    r->tile_ver = rec_calloc(r, (size_t)s->n_layers, sizeof *r->tile_ver);
    r->prev_agents = rec_calloc(r, (size_t)s->n_agents, sizeof *r->prev_agents);
    r->prev_stats = rec_calloc(r, r->n_stats, sizeof *r->prev_stats);
    r->step_raw = rec_calloc(r, step_raw_size(s->n_agents, r->n_stats), 1);
    bool ok = r->prev_tiles && r->tile_ver && r->prev_agents && r->prev_stats && r->step_raw;
    if (ok && r->writer && s->n_agents == r->n_agents &&
        (size_t)s->n_agents * sizeof *s->agents + r->n_stats * sizeof *s->stats <= AGENTS_WHOLE_MAX)
        ok = agents_whole_alloc(r, s->n_agents);
    for (int i = 0; i < L_COUNT; i++) {
        int32_t n, cap;
        scene_list(s, i, &n, &cap);
        r->lists[i].copy = rec_calloc(r, (size_t)cap, LISTS[i].size);
        r->lists[i].raw = rec_calloc(r, (size_t)cap, LISTS[i].size);
        r->lists[i].prev = rec_calloc(r, (size_t)cap, LISTS[i].size);
        r->lists[i].cap = cap;
        r->lists[i].idx = rec_calloc(r, 3 * ((size_t)cap + 1), sizeof(int32_t));
        r->lists[i].ord = rec_calloc(r, (size_t)cap, sizeof(int32_t));
        r->lists[i].keys = rec_calloc(r, (size_t)cap, sizeof(sort_key));
        r->lists[i].ktmp = rec_calloc(r, (size_t)cap, sizeof(int32_t));
        r->lists[i].pcur = rec_calloc(r, (size_t)cap, sizeof(const char *));
        r->lists[i].pprev = rec_calloc(r, (size_t)cap, sizeof(const char *));
        r->lists[i].out =
            rec_calloc(r, 4 * sizeof(uint32_t) + 2 * ((size_t)cap + 1) * LISTS[i].size, 1);
        ok = ok && r->lists[i].copy && r->lists[i].raw && r->lists[i].prev && r->lists[i].idx &&
             r->lists[i].out && r->lists[i].ord && r->lists[i].keys && r->lists[i].ktmp &&
             r->lists[i].pcur && r->lists[i].pprev;
        polis_scene_kept kp;
        if (src_kept(r, i, &kp) == POLIS_OK && kp.slots > 0) {
            sorted_list *l = &r->lists[i];
            l->kslots = kp.slots;
            r->any_kept = true;
            l->kpos = rec_calloc(r, (size_t)kp.slots, sizeof(int32_t));
            l->kchg = rec_calloc(r, (size_t)kp.slots, sizeof(int32_t));
            l->kslot = rec_calloc(r, (size_t)cap, sizeof(int32_t));
            ok = ok && l->kpos && l->kchg && l->kslot;
            if (i == L_EDGES) ok = ok && ranks_alloc(r, l, cap, kp.slots);
            if (i == L_EDGES && r->writer) ok = ok && mirror_alloc(r, l, cap, kp.slots);
        }
    }
    if (!ok) return rec_fail(r, POLIS_ERR_NOMEM, "recorder: out of memory for the scene copy");
    r->sized = true;
    return POLIS_OK;
}

static polis_status check_things(polis_recorder *r)
{
    const polis_scene_thing *t = r->lists[L_THINGS].el;
    for (int32_t i = 1; i < r->lists[L_THINGS].n; i++)
        if (t[i].id == t[i - 1].id)
            return rec_fail(r, POLIS_ERR_INVALID,
                            "recorder: tick %" PRId64 ": two things have id %d in the scene",
                            src_tick(r), (int)t[i].id);
    return POLIS_OK;
}

/* A list with nothing to diff: empty now and at the previous line, not kept in slots (most
 * games have no nodes or edges). */
static inline bool list_idle(const sorted_list *l) { return !l->n && !l->n_prev && !l->kslots; }

/* Reads the scene and puts its things, nodes and edges in key order: as they are when a game
 * appends them sorted (no copy), else a sorted copy, sorted again only when the game's list
 * differs from the one it was sorted from (a social graph's edges rarely change). */
static polis_status scene_in(polis_recorder *r, const polis_scene *s);
static polis_status take_scene(polis_recorder *r, const polis_scene **out)
{
    polis_status st = polis_env_scene_get(r->env, out);
    if (st)
        return rec_fail(r, st, "recorder: tick %" PRId64 ": %s", polis_env_tick(r->env),
                        polis_env_error(r->env));
    return scene_in(r, *out);
}

/* The plugins' copy of what changed in the scene (polis_scene_copy_take) into take_buf after
 * OP_SCENE's head ([u32 mode][u32 0][i64 tick]), for the writer thread to draw; *len: the
 * op's bytes. */
static polis_status take_copy(polis_recorder *r, uint32_t mode, int64_t tick, size_t *len)
{
    const uint32_t head[2] = {mode, 0};
    memcpy(r->take_buf, head, sizeof head);
    memcpy(r->take_buf + sizeof head, &tick, sizeof tick);
    size_t n = 0;
    polis_status st = polis_scene_copy_take(r->takes, r->take_buf + 16, &n);
    if (st) return rec_fail(r, st, "recorder: tick %" PRId64 ": %s", tick, polis_env_error(r->env));
    *len = 16 + n;
    return POLIS_OK;
}

/* A scene read (the env's, or one drawn from a copy) into the recorder's lists. */
static polis_status scene_in(polis_recorder *r, const polis_scene *s)
{
    polis_status st = sized(r, s);
    if (st) return st;
    /* the kernel's record, rewritten in place by each scene; asked for each time: a reset that
     * rebuilds the env (a scenario's "vary") frees it and makes another */
    const polis_scene_said *said = r->said = src_said(r);
    /* no things, nodes or edges now, nor at the previous line, none kept (gather): the lists
     * are as they were */
    if (r->no_lists && !(s->n_things | s->n_nodes | s->n_edges)) return POLIS_OK;
    /* the lists' lengths and elements, read at once (scene_list's switch three times cost more) */
    _Static_assert(L_THINGS == 0 && L_NODES == 1 && L_EDGES == 2, "the lists' order");
    const int32_t ns[L_COUNT] = {s->n_things, s->n_nodes, s->n_edges};
    const char *const els[L_COUNT] = {(const char *)s->things, (const char *)s->nodes,
                                      (const char *)s->edges};
    for (int i = 0; i < L_COUNT; i++) {
        const list_desc *d = &LISTS[i];
        sorted_list *l = &r->lists[i];
        const char *el = els[i];
        l->n = ns[i];
        l->el = el;
        l->same = false;
        if (!l->n && !l->kept) { /* most games' nodes and edges: nothing to sort */
            l->fast = false;
            continue;
        }
        /* where and slots stay as kept_start read them; whether whole, as the scene says */
        l->fast = l->kept && said->kept_whole[i];
        if (l->fast) continue; /* sorted only for a keyframe (sort_kept) */
        if (l->kept) { /* another plugin appended to the list: the previous one in key order */
            if (l->mirror && !l->mpend) {
                l->unmirror = true; /* the writer thread's copy (diff_list) */
            } else {
                sort_into(l, d, l->raw, l->prev, (size_t)l->n_prev);
                memcpy(l->prev, l->raw, (size_t)l->n_prev * d->size);
            }
            l->mpend = false;
            l->n_raw = -1;
            l->kept = false;
        }
        size_t bytes = (size_t)l->n * d->size;
        if (l->n && l->n == l->n_raw && memcmp(el, l->raw, bytes) == 0) {
            l->el = l->copy;
            continue;
        }
        /* the previous line's list (in key order) again, as exploration's groups at most ticks:
         * in order, and nothing for diff_list to compare */
        if (l->n && !l->unmirror && l->n == l->n_prev && memcmp(el, l->prev, bytes) == 0) {
            l->same = true;
            continue;
        }
        /* the same keys in the same order as the list last sorted (survival's mobs moved):
         * its order again, as the sort would find it (it looks only at the keys) */
        int32_t same = 0;
        if (l->n == l->n_raw)
            while (same < l->n && d->cmp(el + (size_t)same * d->size,
                                         (const char *)l->raw + (size_t)same * d->size) == 0)
                same++;
        if (l->n && same == l->n) {
            memcpy(l->raw, el, bytes);
            for (int32_t j = 0; j < l->n; j++)
                memcpy((char *)l->copy + (size_t)j * d->size, el + (size_t)l->ord[j] * d->size,
                       d->size);
            l->el = l->copy;
            continue;
        }
        for (int32_t k = 1; k < l->n; k++)
            if (d->cmp(el + (size_t)(k - 1) * d->size, el + (size_t)k * d->size) > 0) {
                /* a game without things, nodes or edges has no such buffers: n is 0 here */
                memcpy(l->raw, el, bytes);
                l->n_raw = l->n;
                sort_into(l, d, l->copy, el, (size_t)l->n);
                l->el = l->copy;
                break;
            }
    }
    if (!r->any_kept) { /* (a game that keeps a list in slots is never without lists) */
        const sorted_list *ls = r->lists;
        r->no_lists = !(ls[0].n | ls[0].n_prev | ls[1].n | ls[1].n_prev | ls[2].n | ls[2].n_prev);
    }
    return r->lists[L_THINGS].fast ? POLIS_OK : check_things(r);
}

/* Starts reading a kept list by its slots (sorted_list.kept) when the scene's list is all in
 * slots: the previous list becomes the scene's, in its order. Once per episode, or when the
 * list became whole again. */
static void kept_start(polis_recorder *r, int which, const polis_scene *s)
{
    sorted_list *l = &r->lists[which];
    polis_scene_kept kp;
    if (!l->kslots || src_kept(r, which, &kp) != POLIS_OK || !kp.whole || kp.slots != l->kslots)
        return;
    int32_t n, cap;
    const void *el = scene_list(s, which, &n, &cap);
    if (n) memcpy(l->prev, el, (size_t)n * LISTS[which].size);
    l->n_prev = n;
    for (int32_t k = 0; k < kp.slots; k++) {
        l->kpos[k] = kp.where[k];
        if (kp.where[k] >= 0) l->kslot[kp.where[k]] = k;
    }
    l->kseen = src_said(r)->number;
    l->kp = kp; /* its slots and where (the kernel's, rewritten in place) for every scene */
    l->kept = true;
    l->mpend = l->mirror; /* sent to the writer thread with the next changes (put_edge_mirror) */
    if (l->er) ranks_gen(l->er); /* prev's keys are of another list */
}

/* A keyframe's kept lists in key order (a step reads them unsorted), and no two things with
 * one id (checked here for kept things: a step looks only at what changed). */
static polis_status sort_kept(polis_recorder *r, const polis_scene *s)
{
    for (int i = 0; i < L_COUNT; i++) {
        sorted_list *l = &r->lists[i];
        if (!l->fast) continue;
        int32_t cap;
        const void *el = scene_list(s, i, &l->n, &cap);
        /* the writer thread's copy is this scene's list (a step line's put_edge_mirror): sorted
         * there (put_list) */
        l->mkey = l->mirror && !l->mpend && l->kseen == src_said(r)->number;
        l->n_raw = -1;
        if (l->mkey) continue;
        if (!(l->er && !l->mirror && sort_ranked(r, l)))
            sort_into(l, &LISTS[i], l->copy, el, (size_t)l->n);
        l->el = l->copy;
    }
    return check_things(r);
}

/* Remembers a whole scene (after a keyframe) for the next diff. */
static void keep_scene(polis_recorder *r, const polis_scene *s)
{
    if (r->cells) copy_blocks(r->prev_tiles, s->tiles, r->cells * sizeof *s->tiles);
    const polis_scene_said *said = src_said(r);
    for (int32_t l = 0; r->cells && said && l < s->n_layers; l++)
        r->tile_ver[l] = said->layer_ver[l];
    if (s->n_agents) memcpy(r->prev_agents, s->agents, (size_t)s->n_agents * sizeof *s->agents);
    if (r->n_stats) memcpy(r->prev_stats, s->stats, r->n_stats * sizeof *s->stats);
    for (int i = 0; i < L_COUNT; i++) {
        sorted_list *l = &r->lists[i];
        if (l->n) memcpy(l->prev, l->el, (size_t)l->n * LISTS[i].size);
        l->n_prev = l->n;
        l->unmirror = false; /* prev is this list now */
        if (l->kslots) kept_start(r, i, s);
    }
}

/* A keyframe's list (its elements in key order), formatted where the line is written out: an
 * OP_WHOLE from the list's out buffer (diff_list fills it only after the keyframe was emitted,
 * at the next step) */
static void put_list(polis_recorder *r, int which)
{
    sorted_list *l = &r->lists[which];
    if (!l->n) return (void)(l->mkey = false);
    if (l->mkey) { /* the writer thread's copy, sorted there (render_edge_mirror) */
        l->mkey_op[0] = MIRROR_KEY;
        add_op(r, OP_EMIRROR, l->mkey_op, sizeof l->mkey_op);
        l->mkey = false;
        return;
    }
    uint32_t w = (uint32_t)which;
    size_t bytes = (size_t)l->n * LISTS[which].size;
    char *q = l->out + sizeof w;
    memcpy(l->out, &w, sizeof w);
    if (which == L_EDGES) {
        const polis_scene_edge *e = l->el;
        for (int32_t i = 0; i < l->n; i++) q = pack_edge(q, &e[i]);
    } else {
        memcpy(q, l->el, bytes);
        q += bytes;
    }
    add_op(r, OP_WHOLE, l->out, (size_t)(q - l->out));
}

/* A keyframe's scene into the line (its lists sorted first: sort_kept): ",\"tiles\":[...],
 * \"things\":[...],\"agents\":[...],\"nodes\":[...],\"edges\":[...]" */
static void key_scene(polis_recorder *r, const polis_scene *s)
{
    rbuf *b = &r->line;
    RB_LIT(b, ",\"tiles\":[");
    /* the tiles are formatted where the line is written out (no map: no cells to copy) */
    if (r->cells)
        add_op(r, OP_TILES, s->tiles, r->cells * sizeof *s->tiles);
    else
        for (int32_t l = 0; l < s->n_layers; l++) rb_puts(b, l ? ",[]" : "[]");
    RB_LIT(b, "],\"things\":[");
    put_list(r, L_THINGS);
    RB_LIT(b, "],\"agents\":[");
    if (r->agents_whole) { /* formatted by the writer thread, which keeps them for the diff */
        size_t na = (size_t)s->n_agents * sizeof *s->agents, ns = r->n_stats * sizeof *s->stats;
        memcpy(r->key_agents, s->agents, na);
        if (ns) memcpy(r->key_agents + na, s->stats, ns);
        memcpy(r->key_agents + na + ns, r->returns, (size_t)s->n_agents * sizeof *r->returns);
        add_op(r, OP_KEY_AGENTS, r->key_agents, na + ns + (size_t)s->n_agents * sizeof(double));
    } else {
        put_key_agents(b, r->memo, s->agents, s->stats, s->n_agents, (size_t)s->n_stats,
                       r->returns);
    }
    RB_LIT(b, "],\"nodes\":[");
    put_list(r, L_NODES);
    RB_LIT(b, "],\"edges\":[");
    put_list(r, L_EDGES);
    RB_LIT(b, "]");
}

/* A keyframe line: the tick, the state hash and the scene — the scene drawn from copies by the
 * writer thread (OP_KEY_SCENE; s NULL), kept there for the next diff when `keep`. */
static polis_status keyframe(polis_recorder *r, const polis_scene *s, bool keep)
{
    rbuf *b = &r->line;
    polis_status st = r->takes ? POLIS_OK : sort_kept(r, s);
    if (st) return st;
    RB_LIT(b, "{\"t\":\"key\",\"tick\":");
    rb_int(b, polis_env_tick(r->env));
    RB_LIT(b, ",\"hash\":\"");
    put_hash(r);
    RB_LIT(b, "\"");
    if (r->takes) {
        uint32_t head[2] = {keep ? 1u : 0u, 0};
        size_t nr = (size_t)r->n_agents * sizeof *r->returns;
        memcpy(r->key_ret, head, sizeof head);
        memcpy(r->key_ret + sizeof head, r->returns, nr);
        add_op(r, OP_KEY_SCENE, r->key_ret, sizeof head + nr);
    } else {
        key_scene(r, s);
    }
    RB_LIT(b, "}");
    return emit(r);
}

/* src[0 .. n) by key into dst through sort_keys (the keys as its numbers). */
static void sort_edges_by_keys(sorted_list *l, const edge_pair *src, edge_pair *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) l->keys[i] = (sort_key){.a = {src[i].key}, .whole = KEY_WHOLE};
    const int32_t *o = sort_keys(&LISTS[L_EDGES], l->keys, l->ord, l->ktmp, n);
    for (size_t j = 0; j < n; j++) dst[j] = src[o[j]];
}

/* A tick's edges p[0 .. n) by key: counted into t by their from's rank and put in order within
 * each by insertion, or through sort_keys when the ends held are many more than the edges or
 * the insertions move many (many edges share an end). Returns the array that holds the
 * result (p or t). */
static edge_pair *sort_edges(sorted_list *l, edge_pair *p, edge_pair *t, size_t n)
{
    edge_ranks *er = l->er;
    uint32_t nb = er->ends.n, *count = er->count;
    if (n < 2) return p;
    if (nb > 4 * n + 64) {
        sort_edges_by_keys(l, p, t, n);
        return t;
    }
    memset(count, 0, ((size_t)nb + 1) * sizeof *count);
    for (size_t i = 0; i < n; i++) count[(p[i].key >> (2 * RANK_BITS)) + 1]++;
    for (uint32_t b = 0; b < nb; b++) count[b + 1] += count[b];
    for (size_t i = 0; i < n; i++) t[count[p[i].key >> (2 * RANK_BITS)]++] = p[i];
    size_t moved = 0;
    for (size_t i = 1; i < n; i++) {
        if (t[i - 1].key < t[i].key) continue;
        edge_pair x = t[i];
        size_t j = i;
        for (; j > 0 && t[j - 1].key > x.key; j--) t[j] = t[j - 1];
        t[j] = x;
        if ((moved += i - j) > 64 * n) { /* about n^2 / 2 to go: sorted by merging */
            sort_edges_by_keys(l, t, p, n);
            return p;
        }
    }
    return t;
}

/* An OP_LIST's head, [u32 list, adds, moves, dels], in the list's out buffer; returns where
 * its elements go. */
static char *list_op_head(char *out, int which, uint32_t na, uint32_t nm, uint32_t nd)
{
    uint32_t h[4] = {(uint32_t)which, na, nm, nd};
    memcpy(out, h, sizeof h);
    return out + sizeof h;
}

/* One list's member of a step line: one merge of the previous and the current key-sorted
 * lists finds what was added, moved and deleted (in key order), and those elements go into
 * an OP_LIST, formatted where the line is written out ("add", "move", "del", in that order). A
 * list byte for byte as before writes nothing without a merge. Then the current list becomes
 * the previous one. */
static char *merge_core(int which, int32_t *idx, size_t stride, char *out, const char *const *cur,
                        int32_t nc, const char *const *prev, int32_t np)
{
    const list_desc *d = &LISTS[which];
    int32_t *add = idx, *mov = add + stride, *del = mov + stride;
    uint32_t na = 0, nm = 0, nd = 0;
    for (int32_t i = 0, j = 0; i < nc || j < np;) {
        const char *c_el = i < nc ? cur[i] : NULL, *p_el = j < np ? prev[j] : NULL;
        int c = i >= nc ? 1 : j >= np ? -1 : d->cmp(c_el, p_el);
        if (c < 0) {
            add[na++] = i; /* new */
        } else if (c > 0) {
            del[nd++] = j; /* gone */
        } else if (d->changed(c_el, p_el)) {
            /* replaced: added again (a thing's add replaces it; a node or edge is also
             * deleted first) */
            add[na++] = i;
            if (d->del_changed) del[nd++] = j;
        } else if (d->moved && d->moved(c_el, p_el)) {
            mov[nm++] = i;
        }
        if (c <= 0) i++;
        if (c >= 0) j++;
    }
    if (!(na + nm + nd)) return out; /* only bytes past the strings' ends differed */
    char *q = list_op_head(out, which, na, nm, nd);
    for (uint32_t k = 0; k < na; k++) q = el_pack(which, q, cur[add[k]], d->size);
    for (uint32_t k = 0; k < nm; k++) q = el_pack(which, q, cur[mov[k]], d->size);
    for (uint32_t k = 0; k < nd; k++) q = el_pack(which, q, prev[del[k]], d->size);
    return q;
}

/* merge_core into the list's buffers, and its OP_LIST into the line */
static void merge_lists(polis_recorder *r, int which, const char *const *cur, int32_t nc,
                        const char *const *prev, int32_t np)
{
    sorted_list *l = &r->lists[which];
    char *q = merge_core(which, l->idx, (size_t)l->cap + 1, l->out, cur, nc, prev, np);
    if (q != l->out) add_op(r, OP_LIST, l->out, (size_t)(q - l->out));
}

/* Two elements of list `which` byte for byte the same: an edge's strings compared in their
 * first 16 bytes when they end there (NUL-padded, types.h; the rest only when they go on),
 * without a call */
static inline bool el_same(int which, const char *a, const char *b, size_t size)
{
    if (which != L_EDGES) return memcmp(a, b, size) == 0;
    static const size_t at[3] = {offsetof(polis_scene_edge, from), offsetof(polis_scene_edge, to),
                                 offsetof(polis_scene_edge, kind)};
    for (int p = 0; p < 3; p++) {
        uint64_t x[2], y[2];
        memcpy(x, a + at[p], sizeof x);
        memcpy(y, b + at[p], sizeof y);
        if (x[0] != y[0] || x[1] != y[1] || a[at[p] + 16] != b[at[p] + 16]) return false;
        if (a[at[p] + 16]) return memcmp(a, b, size) == 0;
    }
    return memcmp(a + offsetof(polis_scene_edge, weight), b + offsetof(polis_scene_edge, weight),
                  sizeof(float)) == 0;
}

/* The new and the old edges er->pn[0 .. nn), er->po[0 .. no) (their keys made) sorted, merged,
 * and the added and deleted ones (pointed at from add and del) into an OP_LIST at out;
 * returns its end, or out when no edge changed. */
static char *ranked_merge(sorted_list *l, char *out, const char **add, const char **del, size_t nn,
                          size_t no)
{
    edge_ranks *er = l->er;
    const edge_pair *pn = sort_edges(l, er->pn, er->tmp, nn);
    const edge_pair *po = sort_edges(l, er->po, pn == er->pn ? er->tmp : er->pn, no);
    uint32_t na = 0, nd = 0;
    size_t i = 0, j = 0;
    while (i < nn && j < no) {
        if (pn[i].key < po[j].key) {
            add[na++] = pn[i++].el;
        } else if (pn[i].key > po[j].key) {
            del[nd++] = po[j++].el;
        } else { /* the same edge: a new weight is a del and an add */
            if (edge_changed(pn[i].el, po[j].el)) {
                add[na++] = pn[i].el;
                del[nd++] = po[j].el;
            }
            i++, j++;
        }
    }
    while (i < nn) add[na++] = pn[i++].el;
    while (j < no) del[nd++] = po[j++].el;
    if (!(na + nd)) return out;
    char *q = list_op_head(out, L_EDGES, na, 0, nd);
    for (uint32_t k = 0; k < na; k++) q = pack_edge(q, (const void *)add[k]);
    for (uint32_t k = 0; k < nd; k++) q = pack_edge(q, (const void *)del[k]);
    return q;
}

/* A kept edge list's member of a step line as merge_lists writes it, from the new and the old
 * edges of the changed slots kchg[0 .. *nch) (new ones at el[where[slot]], old ones at
 * prev[kpos[slot]]) sorted by their keys as numbers (the section above): the slots put again
 * as they were left out (kchg and *nch keep the others), the new edges' keys made, in nkey[k],
 * the old ones' taken from pkey unless the ranks changed since. Returns the end of the OP_LIST
 * at l->out (l->out itself when no edge changed), or NULL when a table had to be emptied while
 * the keys of one tick were made: the caller sorts by the strings. */
static char *diff_ranked(sorted_list *l, const char *prev, const char *el, const int32_t *where,
                         int32_t *nch)
{
    edge_ranks *er = l->er;
    const size_t size = sizeof(polis_scene_edge);
    size_t nn = 0, no = 0;
    for (int attempt = 0;; attempt++) {
        if (attempt == 3) return NULL;
        uint32_t gen = er->gen;
        int32_t m = 0;
        nn = no = 0;
        for (int32_t k = 0; k < *nch; k++) {
            int32_t slot = l->kchg[k], now = where[slot], at = l->kpos[slot];
            /* the first time, slots put again as they were left out (as diff_kept does) */
            if (!attempt && at >= 0 && now >= 0 &&
                el_same(L_EDGES, prev + (size_t)at * size, el + (size_t)now * size, size))
                continue;
            l->kchg[m] = slot;
            if (now >= 0) {
                const char *e = el + (size_t)now * size;
                er->nkey[m] = edge_key(er, (const polis_scene_edge *)(const void *)e);
                er->pn[nn++] = (edge_pair){er->nkey[m], e};
            }
            if (at >= 0) {
                const char *e = prev + (size_t)at * size;
                if (er->pgen[at] != er->gen) {
                    er->pkey[at] = edge_key(er, (const polis_scene_edge *)(const void *)e);
                    er->pgen[at] = er->gen;
                }
                er->po[no++] = (edge_pair){er->pkey[at], e};
            }
            m++;
        }
        *nch = m;
        if (er->gen == gen) break;
    }
    return ranked_merge(l, l->out, l->pcur, l->pprev, nn, no);
}

/* A kept list's previous edges prev[0 .. n_prev) in key order into its copy, by their keys as
 * numbers (those kept beside them, pkey, reused). False (and nothing done) when a table had to
 * be emptied while they were made. */
static bool sort_ranked_prev(sorted_list *l)
{
    edge_ranks *er = l->er;
    const size_t size = sizeof(polis_scene_edge);
    size_t n = (size_t)l->n_prev;
    for (int attempt = 0;; attempt++) {
        if (attempt == 3) return false;
        uint32_t gen = er->gen;
        for (size_t i = 0; i < n; i++) {
            const char *e = (const char *)l->prev + i * size;
            if (er->pgen[i] != er->gen) {
                er->pkey[i] = edge_key(er, (const polis_scene_edge *)(const void *)e);
                er->pgen[i] = er->gen;
            }
            er->pn[i] = (edge_pair){er->pkey[i], e};
        }
        if (er->gen == gen) break;
    }
    const edge_pair *p = sort_edges(l, er->pn, er->tmp, n);
    for (size_t j = 0; j < n; j++) memcpy((char *)l->copy + j * size, p[j].el, size);
    return true;
}

/* A keyframe's kept edges in key order into the list's copy when the previous list is this
 * scene's (a step line's diff_kept made it so): sort_ranked_prev. False (and nothing done)
 * otherwise. */
static bool sort_ranked(polis_recorder *r, sorted_list *l)
{
    if (l->kseen != src_said(r)->number || l->n_prev != l->n) return false;
    return sort_ranked_prev(l);
}

/* The writer thread's copy of a kept edge list (render_edge_mirror) into its `copy` in key
 * order: by the keys as numbers, or by the strings when the ranks would not hold still. */
static void sort_mirror(sorted_list *l)
{
    if (!sort_ranked_prev(l)) sort_into(l, &LISTS[L_EDGES], l->copy, l->prev, (size_t)l->n_prev);
}

/* The elements of the kept slots listed in slots[0 .. n) that are not empty (at[slot] >= 0:
 * the element at base + at[slot] * size), pointed at from p[] in key order; returns how many. */
static int32_t sort_slots(sorted_list *l, const list_desc *d, const char **p, const char *base,
                          const int32_t *at, const int32_t *slots, int32_t n)
{
    size_t m = 0;
    for (int32_t k = 0; k < n; k++)
        if (at[slots[k]] >= 0) d->key(&l->keys[m++], base + (size_t)at[slots[k]] * d->size);
    const int32_t *o = sort_keys(d, l->keys, l->ord, l->ktmp, m);
    for (size_t j = 0; j < m; j++) p[j] = l->keys[o[j]].el;
    return (int32_t)m;
}

/* A thing into a line's raw values at q, its id, kind and place only when its label is empty
 * (NUL to the end of its array: the rest is zeros); returns the bytes past it. */
static inline char *put_pair_thing(char *q, const polis_scene_thing *t, bool head)
{
    if (head) {
        memcpy(q, t, 4 * sizeof(int32_t));
        return q + 4 * sizeof(int32_t);
    }
    memcpy(q, t, sizeof *t);
    return q + sizeof *t;
}

/* A few changed slots of kept things: each slot's old thing (the recorder's copy) and new one
 * into the line's raw values (OP_PAIRS), compared and formatted where the line is written out
 * (render_pairs). A slot that holds a thing on both sides takes the new one into the copy here;
 * returns true when every changed slot did (the copy is up to date), false when diff_kept is
 * to bring it up to date. */
static bool put_thing_pairs(polis_recorder *r, const polis_scene_thing *el, const int32_t *where,
                            int32_t nch)
{
    sorted_list *l = &r->lists[L_THINGS];
    if (!nch) return true;
    polis_scene_thing *prev = l->prev;
    char *q = r->raw_end, *start = q; /* at most step_raw_size's share */
    uint32_t n = (uint32_t)nch;
    memcpy(q, &n, sizeof n);
    q += sizeof n;
    bool both = true;
    for (int32_t k = 0; k < nch; k++) {
        int32_t slot = l->kchg[k], io = l->kpos[slot], in = where[slot];
        char *has = q;
        q += sizeof(uint32_t);
        if (io >= 0 && in >= 0) {
            polis_scene_thing *o = &prev[io];
            const polis_scene_thing *t = &el[in];
            bool os = !o->label[0], ns = !t->label[0];
            memcpy(has, &(uint32_t){3u | (uint32_t)os << 2 | (uint32_t)ns << 3}, sizeof(uint32_t));
            q = put_pair_thing(q, o, os);
            q = put_pair_thing(q, t, ns);
            if (os && ns) /* both labels all zeros */
                memcpy(o, t, 4 * sizeof(int32_t));
            else
                memcpy(o, t, sizeof *o);
            continue;
        }
        both = false;
        bool os = io >= 0 && !prev[io].label[0], ns = in >= 0 && !el[in].label[0];
        memcpy(has,
               &(uint32_t){(uint32_t)(io >= 0) | (uint32_t)(in >= 0) << 1 | (uint32_t)os << 2 |
                           (uint32_t)ns << 3},
               sizeof(uint32_t));
        if (io >= 0) q = put_pair_thing(q, &prev[io], os);
        if (in >= 0) q = put_pair_thing(q, &el[in], ns);
    }
    add_op(r, OP_PAIRS, start, (size_t)(q - start));
    r->raw_end = q;
    return both;
}

/* An element of a list of `size` bytes copied: a thing's or an edge's size known to the
 * compiler (inline stores, no call) */
static inline void el_copy(void *dst, const void *src, size_t size)
{
    if (size == sizeof(polis_scene_thing))
        memcpy(dst, src, sizeof(polis_scene_thing));
    else if (size == sizeof(polis_scene_edge))
        memcpy(dst, src, sizeof(polis_scene_edge));
    else
        memcpy(dst, src, size);
}

/* The changed slots chg[0 .. nch) of a kept edge list whose previous line the writer thread
 * keeps (sorted_list.mirror): each slot and its new edge (none when cleared), packed, into the
 * line's raw values (OP_EMIRROR: [u32 mode]; for MIRROR_START [u32 n][i32 kpos[kslots]] and the
 * n edges of prev, as kept_start read them; then [u32 slots] and per slot [i32 slot][u8 has an
 * edge] and the edge), diffed against the thread's copy where the line is written out
 * (render_edge_mirror). Nothing is compared or kept here. */
static void put_edge_mirror(polis_recorder *r, sorted_list *l, const char *el, const int32_t *where,
                            const int32_t *chg, int32_t nch)
{
    const size_t size = sizeof(polis_scene_edge);
    char *q = l->mbuf + sizeof(uint32_t);
    uint32_t mode = MIRROR_CHANGES;
    if (l->mpend) {
        mode = MIRROR_START;
        q = set_u32(q, (size_t)l->n_prev);
        memcpy(q, l->kpos, (size_t)l->kslots * sizeof *l->kpos);
        q += (size_t)l->kslots * sizeof *l->kpos;
        for (int32_t i = 0; i < l->n_prev; i++)
            q = pack_edge(q, (const void *)((const char *)l->prev + (size_t)i * size));
        l->mpend = false;
    } else if (!nch) {
        return;
    }
    q = set_u32(q, (size_t)nch);
    for (int32_t k = 0; k < nch; k++) {
        int32_t slot = chg[k], now = where[slot];
        memcpy(q, &slot, sizeof slot);
        q += sizeof slot;
        *q++ = (char)(now >= 0);
        if (now >= 0) q = pack_edge(q, (const void *)(el + (size_t)now * size));
    }
    set_u32(l->mbuf, mode);
    add_op(r, OP_EMIRROR, l->mbuf, (size_t)(q - l->mbuf));
}

/* A kept list's copy of the previous line (prev, kpos, kslot, a kept edge list's keys) takes
 * the new elements of the changed slots kchg[0 .. nch) (slot's at el[where[slot]], none when
 * -1): a new slot's goes last, the last element fills the place of one gone. `ranked`: the new
 * edges' keys are in nkey (diff_ranked). */
static inline __attribute__((always_inline)) void kept_update(sorted_list *l, const list_desc *d,
                                                              const char *el, const int32_t *where,
                                                              int32_t nch, bool ranked)
{
    char *prev = l->prev;
    edge_ranks *er = l->er;
    for (int32_t k = 0; k < nch; k++) {
        int32_t slot = l->kchg[k], at = l->kpos[slot], now = where[slot];
        if (now >= 0) {
            if (at < 0) {
                at = l->n_prev++;
                l->kpos[slot] = at;
                l->kslot[at] = slot;
            }
            el_copy(prev + (size_t)at * d->size, el + (size_t)now * d->size, d->size);
            if (er) er->pkey[at] = er->nkey[k], er->pgen[at] = ranked ? er->gen : 0;
        } else if (at >= 0) { /* the last element fills its place */
            int32_t last = --l->n_prev;
            if (at != last) {
                el_copy(prev + (size_t)at * d->size, prev + (size_t)last * d->size, d->size);
                l->kslot[at] = l->kslot[last];
                l->kpos[l->kslot[at]] = at;
                if (er) er->pkey[at] = er->pkey[last], er->pgen[at] = er->pgen[last];
            }
            l->kpos[slot] = -1;
        }
    }
}

/* The edges' member of a step line (or a keyframe's edges) from its OP_EMIRROR
 * (put_edge_mirror), on the thread that writes the line out, against its copy of the previous
 * line's list (rec_writer.edges): the changed slots' old edges (its copy's) and new ones
 * sorted by their keys as numbers and merged (diff_ranked, as the stepping thread does without
 * a writer thread; by the strings when a rank table had to be emptied), then its copy brought
 * up to date; a list no longer whole merged whole with its copy in key order (then the copy is
 * not read again until the next MIRROR_START); a keyframe's list, its copy in key order. */
static void render_edge_mirror(const polis_recorder *r, rbuf *b, num_memo *memo, const uint8_t *raw)
{
    sorted_list *l = r->writer ? r->writer->edges : NULL;
    if (!l) return; /* cannot happen: put_edge_mirror writes only with a writer thread */
    const list_desc *d = &LISTS[L_EDGES];
    polis_scene_edge *prev = l->prev, *cur = l->raw, *sorted = l->copy;
    uint32_t mode, n;
    memcpy(&mode, raw, sizeof mode);
    raw += sizeof mode;
    if (mode == MIRROR_KEY) {
        sort_mirror(l);
        for (int32_t i = 0; i < l->n_prev; i++) {
            if (i) rb_ch(b, ',');
            d->put_add(b, memo, &sorted[i]);
        }
        return;
    }
    memcpy(&n, raw, sizeof n);
    raw += sizeof n;
    if (mode == MIRROR_WHOLE) {
        sort_mirror(l);
        for (uint32_t i = 0; i < n; i++) {
            raw = unpack_edge(raw, &cur[i]);
            l->pcur[i] = (const char *)&cur[i];
        }
        for (int32_t j = 0; j < l->n_prev; j++) l->pprev[j] = (const char *)&sorted[j];
        char *q = merge_core(L_EDGES, l->idx, (size_t)l->cap + 1, l->out, l->pcur, (int32_t)n,
                             l->pprev, l->n_prev);
        if (q != l->out) render_list(b, memo, (const uint8_t *)l->out);
        return;
    }
    if (mode == MIRROR_START) {
        memcpy(l->kpos, raw, (size_t)l->kslots * sizeof *l->kpos);
        raw += (size_t)l->kslots * sizeof *l->kpos;
        for (int32_t k = 0; k < l->kslots; k++)
            if (l->kpos[k] >= 0) l->kslot[l->kpos[k]] = k;
        for (uint32_t i = 0; i < n; i++) raw = unpack_edge(raw, &prev[i]);
        l->n_prev = (int32_t)n;
        ranks_gen(l->er); /* prev's keys are of another list */
        memcpy(&n, raw, sizeof n);
        raw += sizeof n;
    }
    int32_t nn = 0, nch = (int32_t)n;
    for (int32_t k = 0; k < nch; k++) {
        int32_t slot;
        memcpy(&slot, raw, sizeof slot);
        raw += sizeof slot;
        l->kchg[k] = slot;
        l->kwhere[slot] = *raw++ ? nn : -1;
        if (l->kwhere[slot] >= 0) raw = unpack_edge(raw, &cur[nn++]);
    }
    const char *pc = (const char *)prev, *el = (const char *)cur;
    char *q = diff_ranked(l, pc, el, l->kwhere, &nch);
    bool ranked = q != NULL;
    if (!ranked) {
        int32_t no = sort_slots(l, d, l->pprev, pc, l->kpos, l->kchg, nch);
        int32_t nc = sort_slots(l, d, l->pcur, el, l->kwhere, l->kchg, nch);
        q = merge_core(L_EDGES, l->idx, (size_t)l->cap + 1, l->out, l->pcur, nc, l->pprev, no);
    }
    if (q != l->out) render_list(b, memo, (const uint8_t *)l->out);
    kept_update(l, d, el, l->kwhere, nch, ranked);
}

/* A kept list's member of a step line: the old and the new elements of the slots changed
 * since the previous line, each sorted by key, merged as diff_list merges whole lists (an
 * unchanged slot is the same on both sides, and keys are unique); then prev takes the new
 * elements. */
static void diff_kept(polis_recorder *r, int which, const polis_scene *s)
{
    const list_desc *d = &LISTS[which];
    sorted_list *l = &r->lists[which];
    const polis_scene_kept kp = l->kp; /* read by take_scene for this scene */
    int32_t n, cap;
    const char *el = scene_list(s, which, &n, &cap);
    char *prev = l->prev;
    const polis_scene_said *said = r->said;
    int32_t nch;
    const int32_t *chg = l->kchg;
    if (said->number == l->kseen + 1) { /* the last scene's own slots, as the kernel logged */
        nch = said->n_changed[which];
        chg = said->changed[which];
    } else if (!r->draws) {
        nch = polis_env_scene_kept_changes(r->env, which, l->kseen, l->kchg, l->kslots);
    } else { /* (a copy's scenes are drawn and read every one: not reached) every slot */
        for (nch = 0; nch < l->kslots; nch++) l->kchg[nch] = nch;
    }
    l->kseen = said->number;
    if (l->mirror) { /* the writer thread keeps the list: the new edges go to it */
        put_edge_mirror(r, l, el, kp.where, chg, nch);
        return;
    }
    if (chg != l->kchg) {
        if (nch > 8) /* Exploration's edges: many */
            memcpy(l->kchg, chg, (size_t)nch * sizeof *chg);
        else /* a few (Survival's two or three mobs a tick): not a call */
            for (int32_t k = 0; k < nch; k++) l->kchg[k] = chg[k];
    }
    if (which == L_THINGS && nch <= KEPT_FEW) {
        if (put_thing_pairs(r, (const polis_scene_thing *)(const void *)el, kp.where, nch))
            return; /* prev brought up to date already */
        kept_update(l, d, el, kp.where, nch, false);
        return;
    }
    /* a slot put again as it was (Exploration's edges: 6% of the changed slots at 100 agents,
     * 19% at 8) is the same on both sides: left out of the sorts and the merge (by diff_ranked
     * itself, in the loop that makes the keys) */
    char *q = NULL; /* the edges' keys made as numbers (diff_ranked): its OP_LIST's end */
    if (l->er) {
        q = diff_ranked(l, prev, el, kp.where, &nch);
        if (q && q != l->out) add_op(r, OP_LIST, l->out, (size_t)(q - l->out));
    } else {
        int32_t m = 0;
        for (int32_t k = 0; k < nch; k++) {
            int32_t slot = l->kchg[k], at = l->kpos[slot], now = kp.where[slot];
            if (at < 0 || now < 0 ||
                !el_same(which, prev + (size_t)at * d->size, el + (size_t)now * d->size, d->size))
                l->kchg[m++] = slot;
        }
        nch = m;
    }
    if (!q) {
        const char **po = l->pprev, **pn = l->pcur;
        int32_t no = sort_slots(l, d, po, prev, l->kpos, l->kchg, nch);
        int32_t nn = sort_slots(l, d, pn, el, kp.where, l->kchg, nch);
        merge_lists(r, which, pn, nn, po, no);
    }
    kept_update(l, d, el, kp.where, nch, q != NULL);
}

static void diff_list(polis_recorder *r, int which, const polis_scene *s)
{
    const list_desc *d = &LISTS[which];
    sorted_list *l = &r->lists[which];
    if (l->fast) {
        diff_kept(r, which, s);
        return;
    }
    const char *cur = l->el;
    int32_t nc = l->n, np = l->n_prev;
    if (l->unmirror) { /* no longer whole: diffed against the writer thread's copy */
        char *q = set_u32(l->mbuf, MIRROR_WHOLE);
        q = set_u32(q, (size_t)nc);
        for (int32_t i = 0; i < nc; i++)
            q = pack_edge(q, (const void *)(cur + (size_t)i * d->size));
        add_op(r, OP_EMIRROR, l->mbuf, (size_t)(q - l->mbuf));
        memcpy(l->prev, cur, (size_t)nc * d->size);
        l->n_prev = nc;
        l->unmirror = false;
    } else if (!l->same &&
               !(nc == np && (nc == 0 || memcmp(cur, l->prev, (size_t)nc * d->size) == 0))) {
        for (int32_t i = 0; i < nc; i++) l->pcur[i] = cur + (size_t)i * d->size;
        for (int32_t j = 0; j < np; j++) l->pprev[j] = (const char *)l->prev + (size_t)j * d->size;
        merge_lists(r, which, l->pcur, nc, l->pprev, np);
        memcpy(l->prev, cur, (size_t)nc * d->size);
        l->n_prev = nc;
    }
    if (l->kslots)
        kept_start(r, which, s); /* the list all in slots again: read it by them from now on */
}

/* The members of a step line that say what changed since the previous line; the previous
 * scene becomes this one. Tiles are compared a row at a time, agents and stats a whole
 * record at a time: only what changed is formatted. */
static void diff(polis_recorder *r, const polis_scene *s)
{
    rbuf *b = &r->line;
    size_t w = (size_t)s->width, plane = w * (size_t)s->height;
    /* the first TDIFF_MAX changed tiles as raw values (OP_TDIFF), the rest as text */
    int32_t *tq = (int32_t *)(void *)r->raw_end, *const t0 = tq;
    int32_t nt = 0;
    /* the layers' versions read where the kernel keeps them, not by a call a layer */
    const uint64_t *vers = r->cells ? r->said->layer_ver : NULL;
    for (int32_t l = 0; vers && l < s->n_layers; l++) {
        /* a layer its callbacks said is as it was (the "scene" host API) is not compared */
        uint64_t ver = vers[l], since;
        if (ver == r->tile_ver[l]) continue;
        /* the rows its callbacks said they rewrote since the copy's version: only those */
        const uint64_t *rows = src_rows(r, l, &since);
        if (since != r->tile_ver[l]) rows = NULL;
        r->tile_ver[l] = ver;
        if (!rows && memcmp(s->tiles + (size_t)l * plane, r->prev_tiles + (size_t)l * plane,
                            plane * sizeof *s->tiles) == 0)
            continue; /* most layers of most ticks */
        for (size_t y = 0; y < (size_t)s->height; y++) {
            if (rows) { /* the next row said, or the next word */
                uint64_t left = rows[y / 64] >> (y % 64);
                if (!left) {
                    y |= 63;
                    continue;
                }
                y += (size_t)__builtin_ctzll(left);
                if (y >= (size_t)s->height) break;
            }
            size_t row = (size_t)l * plane + y * w;
            const int32_t *ct = s->tiles + row;
            int32_t *pt = r->prev_tiles + row;
            if (memcmp(ct, pt, w * sizeof *ct) == 0) continue;
            for (size_t x = 0; x < w; x++) {
                if (ct[x] == pt[x]) continue;
                pt[x] = ct[x];
                if (nt < TDIFF_MAX) {
                    tq[0] = l;
                    tq[1] = (int32_t)x;
                    tq[2] = (int32_t)y;
                    tq[3] = ct[x];
                    tq += 4;
                    /* full: into the line here, the rest as text after it */
                    if (++nt == TDIFF_MAX) add_op(r, OP_TDIFF, t0, (size_t)(tq - t0) * sizeof *tq);
                    continue;
                }
                RB_LIT(b, ",[");
                rb_int(b, l);
                rb_item(b, true, (int64_t)x);
                rb_item(b, true, (int64_t)y);
                rb_item(b, true, ct[x]);
                rb_ch(b, ']');
            }
        }
    }
    if (nt > 0 && nt < TDIFF_MAX) add_op(r, OP_TDIFF, t0, (size_t)nt * 4 * sizeof(int32_t));
    if (nt > 0) {
        r->raw_end = (char *)tq;
        rb_ch(b, ']');
    }

    if (!r->no_lists && !list_idle(&r->lists[L_THINGS])) diff_list(r, L_THINGS, s);

    /* agents: changed members only, formatted where the line is written out; or all of them,
     * diffed there too (agents_whole) */
    if (r->agents_whole) {
        size_t na = (size_t)s->n_agents * sizeof *s->agents, ns = r->n_stats * sizeof *s->stats;
        memcpy(r->raw_end, s->agents, na);
        if (ns) memcpy(r->raw_end + na, s->stats, ns);
        add_op(r, OP_AGENTS_WHOLE, r->raw_end, na + ns);
        r->raw_end += na + ns;
    } else {
        int32_t *q0 = (int32_t *)(void *)r->raw_end; /* 4-byte aligned (step_raw) */
        int32_t *q = agents_diff(q0, s->agents, s->stats, r->prev_agents, r->prev_stats,
                                 s->n_agents, (size_t)s->n_stats);
        if (q > q0) add_op(r, OP_AGENTS, q0, (size_t)(q - q0) * sizeof *q);
        r->raw_end = (char *)q;
    }

    /* nodes and edges: a changed label or weight is a del and an add of the same key */
    if (r->no_lists) return;
    if (!list_idle(&r->lists[L_NODES])) diff_list(r, L_NODES, s);
    if (!list_idle(&r->lists[L_EDGES])) diff_list(r, L_EDGES, s);
}

/* ---- scenes drawn from copies on the writer thread ---------------------------------------- */

/* The writer thread's scene failed: said to the stepping thread (at its next hand-over or at
 * close), and nothing from this line on is written. */
static void scene_fail(rec_writer *w, polis_status st, const char *fmt, ...) POLIS_PRINTF(3, 4);
static void scene_fail(rec_writer *w, polis_status st, const char *fmt, ...)
{
    char msg[REC_ERRMAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&w->mu);
    w->scene_status = st;
    memcpy(w->scene_err, msg, sizeof msg);
    pthread_mutex_unlock(&w->mu);
}

/* The part of a line the thread's recorder of the scene (sr) built, formatted into b. */
static void render_sr(polis_recorder *sr, rbuf *b, num_memo *memo)
{
    if (sr->line.oom) {
        scene_fail(sr->writer_of, POLIS_ERR_NOMEM, "recorder: out of memory building a line");
    } else {
        render(sr, b, memo, sr->line.p, sr->line.len, sr->ops, sr->n_ops);
    }
    sr->line.len = 0;
    sr->n_ops = 0;
    sr->ops_len = 0;
}

/* OP_SCENE, on the writer thread: the scene drawn from the line's take (polis_scene_copy_draw),
 * read as the stepping thread reads the env's (scene_in), and for a step line what changed
 * since the previous line (diff), formatted here, in the line. */
static void render_scene(const polis_recorder *r, rbuf *b, num_memo *memo, const uint8_t *raw,
                         size_t len)
{
    rec_writer *w = r->writer;
    polis_recorder *sr = w->sr;
    if (w->scene_status) return;
    uint32_t mode;
    memcpy(&mode, raw, sizeof mode);
    memcpy(&sr->draw_tick, raw + 8, sizeof sr->draw_tick);
    memcpy(sr->take_buf, raw + 16, len - 16); /* aligned, as the take was written */
    const polis_scene *s;
    polis_status st = polis_scene_copy_draw(sr->draws, sr->take_buf, len - 16, &s);
    if (st)
        return scene_fail(w, st, "recorder: tick %" PRId64 ": %s", sr->draw_tick,
                          polis_scene_copy_error(sr->draws));
    if ((st = scene_in(sr, s))) return scene_fail(w, st, "%s", sr->err);
    sr->drawn = s;
    if (mode == SCENE_RESET) return; /* the keyframe after it shows it */
    sr->raw_end = sr->step_raw;
    diff(sr, s);
    render_sr(sr, b, memo);
}

/* OP_KEY_SCENE, on the writer thread: a keyframe's scene, the one drawn last, with the agents'
 * returns the stepping thread sent; kept for the next diff at an episode's start. */
static void render_key_scene(const polis_recorder *r, rbuf *b, num_memo *memo, const uint8_t *raw,
                             size_t len)
{
    rec_writer *w = r->writer;
    polis_recorder *sr = w->sr;
    if (w->scene_status) return;
    uint32_t keep;
    memcpy(&keep, raw, sizeof keep);
    memcpy(sr->returns, raw + 8, len - 8);
    polis_status st = sort_kept(sr, sr->drawn);
    if (st) return scene_fail(w, st, "%s", sr->err);
    key_scene(sr, sr->drawn);
    render_sr(sr, b, memo);
    if (keep) keep_scene(sr, sr->drawn);
}

/* Scenes drawn from copies when the writer thread runs and the game's scenes can be
 * (polis_env_scene_copyable), unless the scenario's "vary" may rebuild the env between
 * episodes (the copy holds the plugins' callbacks) or POLIS_RECORD_COPIES=0 asks for the
 * env's scenes: the stepping thread then only takes the copies (docs/recording.md, "Scenes on
 * the writer thread"). The same recording either way; without memory for it, the env's. */
static void copies_start(polis_recorder *r)
{
    polis_env *env = r->env;
    const char *opt = getenv("POLIS_RECORD_COPIES");
    if (!r->writer || (opt && strcmp(opt, "0") == 0) || !polis_env_scene_copyable(env) ||
        polis_env_n_varied(env) > 0)
        return;
    polis_scene_copy *c = NULL;
    if (polis_scene_copy_open(env, &c) != POLIS_OK) return; /* another reader has it */
    size_t max = polis_scene_copy_max(c), n = (size_t)r->n_agents;
    polis_recorder *sr = calloc(1, sizeof *sr);
    if (sr) {
        sr->env = env;
        sr->draws = c;
        sr->writer_of = r->writer;
        sr->episode = -1;
        sr->n_agents = r->n_agents;
        sr->returns = calloc(n + 1, sizeof *sr->returns);
        sr->memo = calloc(2 * MEMO_SLOTS, sizeof *sr->memo);
        sr->take_buf = malloc(max + 1);
    }
    r->take_buf = malloc(16 + max);
    r->key_ret = malloc(8 + (n + 1) * sizeof *r->returns);
    r->step_raw = calloc(HEAD_PADDED(head_size(r->n_agents)) + 1, 1);
    if (!sr || !sr->returns || !sr->memo || !sr->take_buf || !r->take_buf || !r->key_ret ||
        !r->step_raw) {
        rec_free(sr);
        free(r->take_buf);
        free(r->key_ret);
        free(r->step_raw);
        r->take_buf = r->key_ret = r->step_raw = NULL;
        polis_scene_copy_close(c);
        return;
    }
    r->allocs += 4;
    r->takes = c;
    r->writer->sr = sr;
}

/* ---- episodes ------------------------------------------------------------------------------ */

/* ",\"visibility\":[[observer,target,state],...]": what polis_env_visibility_set changed
 * before this reset or step (a replay makes the same calls before it); nothing when none. */
static void put_visibility(polis_recorder *r, int64_t tick)
{
    int32_t n = 0;
    const polis_visibility_change *c =
        polis_env_visibility_changes(r->env, r->vis_episode, r->vis_tick, &n);
    if (n) {
        rb_puts(&r->line, ",\"visibility\":[");
        for (int32_t i = 0; i < n; i++)
            rb_printf(&r->line, "%s[%d,%d,%d]", i ? "," : "", (int)c[i].observer, (int)c[i].target,
                      (int)c[i].state);
        rb_put(&r->line, "]", 1);
    }
    r->vis_episode = polis_env_episode(r->env);
    r->vis_tick = tick;
}

polis_status polis_recorder_begin_episode(polis_recorder *r, uint64_t seed)
{
    if (!r) return POLIS_ERR_INVALID;
    polis_env *env = r->env;
    if (polis_env_tick(env) != 0)
        return rec_fail(r, POLIS_ERR_STATE,
                        "recorder: begin_episode at tick %" PRId64 ": call it right after "
                        "polis_env_reset",
                        polis_env_tick(env));
    if (r->in_episode)
        return rec_fail(r, POLIS_ERR_STATE,
                        "recorder: episode %" PRId64 " has no end line yet "
                        "(call polis_recorder_end_episode)",
                        r->episode);
    r->episode++;
    r->in_episode = true;
    for (int32_t a = 0; a < r->n_agents; a++) r->returns[a] = 0;
    const polis_scene *s = NULL;
    size_t take_len = 0;
    polis_status st = r->takes ? take_copy(r, SCENE_RESET, 0, &take_len) : take_scene(r, &s);
    if (st) return st;
    rb_printf(&r->line, "{\"t\":\"reset\",\"episode\":%" PRId64 ",\"seed\":%" PRIu64, r->episode,
              seed);
    const char *task = polis_env_task(env); /* what the episode drew (the scenario's "vary") */
    if (task) {
        rb_puts(&r->line, ",\"task\":");
        rb_puts(&r->line, task);
    }
    put_visibility(r, 0);
    /* the events of the reset (world generation) were collected since the last line */
    if (r->events.len) add_op(r, OP_EVENTS, r->events.p, r->events.len);
    if (r->takes) add_op(r, OP_SCENE, r->take_buf, take_len); /* drawn there, no text */
    rb_put(&r->line, "}", 1);
    st = emit(r);
    r->events.len = 0;
    if (st) return st;
    if ((st = keyframe(r, s, true))) return st;
    if (!r->takes) keep_scene(r, s);
    return POLIS_OK;
}

polis_status polis_recorder_msg(polis_recorder *r, int32_t agent, const char *kind,
                                const char *text)
{
    if (!r || !kind || !text) return POLIS_ERR_INVALID;
    if (agent < 0 || agent >= r->n_agents)
        return rec_fail(r, POLIS_ERR_INVALID, "recorder: msg for agent %d (0..%d)", (int)agent,
                        (int)r->n_agents - 1);
    rb_printf(&r->msgs, ",{\"agent\":%d,\"kind\":", (int)agent);
    rb_str(&r->msgs, kind);
    rb_puts(&r->msgs, ",\"text\":");
    rb_str(&r->msgs, text);
    rb_put(&r->msgs, "}", 1);
    return r->msgs.oom ? rec_fail(r, POLIS_ERR_NOMEM, "recorder: out of memory") : POLIS_OK;
}

polis_status polis_recorder_step(polis_recorder *r)
{
    if (!r) return POLIS_ERR_INVALID;
    if (!r->in_episode)
        return rec_fail(r, POLIS_ERR_STATE,
                        "recorder: step outside an episode (call "
                        "polis_recorder_begin_episode after the reset)");
    polis_env *env = r->env;
    const polis_io *io = polis_env_io(env); /* a rebuilding reset moves it */
    const polis_scene *s = NULL;
    int64_t tick = polis_env_tick(env);
    size_t take_len = 0;
    polis_status st = r->takes ? take_copy(r, SCENE_STEP, tick, &take_len) : take_scene(r, &s);
    if (st) return st;
    rbuf *b = &r->line;
    int32_t n = r->n_agents;
    /* the head's values, formatted where the line is written out */
    size_t hs = head_size(n);
    {
        char *q = r->step_raw;
        memcpy(q, &tick, sizeof tick);
        q += sizeof tick;
        if (n == 1) { /* one agent: five stores */
            memcpy(q, io->actions, 4);
            memcpy(q + 4, io->rewards, 4);
            q[8] = (char)io->terminations[0];
            q[9] = (char)io->truncations[0];
            q[10] = (char)io->illegal[0];
            r->returns[0] += io->rewards[0];
        } else if (n <= 8) { /* a few agents: fixed-size moves, not five calls */
            size_t n4 = 4 * (size_t)n;
            copy_small(q, io->actions, n4);
            copy_small(q + n4, io->rewards, n4);
            copy_small(q + 2 * n4, io->terminations, (size_t)n);
            copy_small(q + 2 * n4 + n, io->truncations, (size_t)n);
            copy_small(q + 2 * n4 + 2 * (size_t)n, io->illegal, (size_t)n);
            for (int32_t a = 0; a < n; a++) r->returns[a] += io->rewards[a];
        } else {
            memcpy(q, io->actions, 4 * (size_t)n);
            memcpy(q + 4 * (size_t)n, io->rewards, 4 * (size_t)n);
            q += 8 * (size_t)n;
            memcpy(q, io->terminations, (size_t)n);
            memcpy(q + n, io->truncations, (size_t)n);
            memcpy(q + 2 * (size_t)n, io->illegal, (size_t)n);
            for (int32_t a = 0; a < n; a++) r->returns[a] += io->rewards[a];
        }
        add_op(r, OP_HEAD, r->step_raw, HEAD_PADDED(hs));
        r->raw_end = r->step_raw + HEAD_PADDED(hs);
    }
    put_visibility(r, tick);
    if (r->events.len) add_op(r, OP_EVENTS, r->events.p, r->events.len);
    if (r->takes) /* drawn and diffed by the writer thread, in this place of the line */
        add_op(r, OP_SCENE, r->take_buf, take_len);
    else
        diff(r, s);
    if (r->msgs.len) {
        rb_puts(b, ",\"msgs\":[");
        rb_put(b, r->msgs.p + 1, r->msgs.len - 1);
        rb_put(b, "]", 1);
        r->msgs.len = 0;
    }
    rb_ch(b, '}');
    st = emit(r);
    r->events.len = 0;
    if (st) return st;
    /* a keyframe at every multiple of keyframe_every: one division each keyframe_every ticks
     * (or when the ticks went back, at a new episode), not one a tick */
    int64_t every = r->keyframe_every;
    if ((uint64_t)(tick - r->key_lo) >= (uint64_t)every) r->key_lo = tick - tick % every;
    if (tick == r->key_lo && (st = keyframe(r, s, false))) return st;
    return POLIS_OK;
}

polis_status polis_recorder_end_episode(polis_recorder *r, const char *metrics_json)
{
    if (!r) return POLIS_ERR_INVALID;
    if (!r->in_episode)
        return rec_fail(r, POLIS_ERR_STATE, "recorder: end_episode outside an episode");
    rbuf *b = &r->line;
    rb_printf(b, "{\"t\":\"end\",\"episode\":%" PRId64 ",\"tick\":%" PRId64 ",\"returns\":[",
              r->episode, polis_env_tick(r->env));
    for (int32_t a = 0; a < r->n_agents; a++) {
        if (a) rb_put(b, ",", 1);
        rb_f64(b, r->memo, r->returns[a]);
    }
    rb_puts(b, "],\"metrics\":");
    if (metrics_json && *metrics_json) {
        char *m = one_line(metrics_json, strlen(metrics_json));
        if (!m) {
            b->len = 0;
            return rec_fail(r, POLIS_ERR_INVALID, "recorder: the metrics are not valid JSON");
        }
        rb_puts(b, m);
        cJSON_free(m);
    } else {
        rb_puts(b, "null");
    }
    RB_LIT(b, ",\"hash\":\"");
    put_hash(r);
    RB_LIT(b, "\"}");
    r->in_episode = false;
    r->events.len = 0;
    return emit(r);
}
