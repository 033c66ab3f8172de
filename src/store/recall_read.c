/*
 * recall_read.c: the statements recall reads the store with
 * (store/recall_read.h). The query plans matter more than anywhere else
 * in the store: each statement says which index it relies on and why.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "store/pg_read.h"
#include "store/recall_read.h"
#include "util/buf.h"

/* A session's rounds: its user turns, or every turn between people
 * (session_stats; store_totals.units is their sum, kept by triggers). */
#define UNITS_SQL "CASE WHEN nuser = n THEN n ELSE nuser END"

/* From this many listed sessions, a list covering half its span or more
 * is read by one range scan (ids_dense). */
#define SESS_RANGE_MIN 256

/* The scope of a question, as bound to ?1 and ?2. */
#define SCOPE_JOIN  " JOIN sessions s ON s.id = m.session "
#define SCOPE_WHERE " AND (?1 IS NULL OR s.project = ?1) AND (?2 IS NULL OR s.ext_id <> ?2) "

static void bind_scope(sqlite3_stmt *st, const struct store_scope *sc)
{
    sqlite3_bind_text(st, 1, sc->project, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sc->exclude_session, -1, SQLITE_STATIC);
}

static int64_t col_time(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? CAIRN_NO_TIME
                                                     : sqlite3_column_int64(st, i);
}

static int nomem(struct cairn *h)
{
    return cairn__err(h, CAIRN_NOMEM, "out of memory");
}

/* sess[n] as a JSON array, for "IN (SELECT value FROM json_each(?))":
 * one statement for any number of sessions. The digits by hand: printf
 * cost ~2,000 instructions an id, and the hook writes 500 of them twice. */
static int ids_json(struct cairn *h, const int64_t *sess, int n, struct buf *b)
{
    buf_addc(b, '[');
    for (int i = 0; i < n; i++) {
        char d[24], *e = d + sizeof d, *c = e;
        uint64_t v = sess[i] < 0 ? 0 - (uint64_t)sess[i] : (uint64_t)sess[i];
        do
            *--c = (char)('0' + v % 10);
        while ((v /= 10));
        if (sess[i] < 0)
            *--c = '-';
        if (i)
            *--c = ',';
        buf_add(b, c, (size_t)(e - c));
    }
    buf_addc(b, ']');
    return b->err ? nomem(h) : CAIRN_OK;
}

int store_ids_push(struct cairn *h, struct store_ids *out, int64_t v)
{
    if (out->n == out->cap) {
        int nc = out->cap ? out->cap * 2 : 64;
        int64_t *nv = realloc(out->v, (size_t)nc * sizeof *nv);
        if (!nv)
            return nomem(h);
        out->v = nv;
        out->cap = nc;
    }
    out->v[out->n++] = v;
    return CAIRN_OK;
}

/* Steps st to the end, appending column 0 of each row to out. */
static int collect_ids(struct cairn *h, sqlite3_stmt *st, struct store_ids *out, const char *what)
{
    int src, rc = CAIRN_OK;
    while ((src = sqlite3_step(st)) == SQLITE_ROW)
        if ((rc = store_ids_push(h, out, sqlite3_column_int64(st, 0))))
            return rc;
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, what);
}

int store_scope_totals(struct cairn *h, const struct store_scope *sc, struct store_totals *t)
{
    sqlite3_stmt *st;
    int rc, src;
    memset(t, 0, sizeof *t);
    /* The whole store, or all but one session: the one row of
     * store_totals (schema 14) less that session's session_stats row
     * (ext_id is unique: one row or none, joined once; the same sums as
     * a CTE read five times, whose preparing cost every hook ~0.5 M
     * instructions). A project: one row a session of it (no scan of the
     * messages). */
    if (!sc->project)
        rc = store_prepare(h, "SELECT t.n - coalesce(x.n, 0), t.ntok - coalesce(x.ntok, 0), "
                           "t.nuser - coalesce(x.nuser, 0), t.bytes - coalesce(x.bytes, 0), "
                           "t.units - coalesce(x.units, 0) FROM store_totals t LEFT JOIN "
                           "(SELECT n, ntok, nuser, bytes, " UNITS_SQL " AS units FROM "
                           "session_stats st JOIN sessions s ON s.id = st.session WHERE "
                           "s.ext_id = ?2 AND ?1 IS NULL) x", &st);
    else
        rc = store_prepare(h, "SELECT coalesce(sum(st.n),0), coalesce(sum(st.ntok),0), "
                           "coalesce(sum(st.nuser),0), coalesce(sum(st.bytes),0), "
                           "coalesce(sum(" UNITS_SQL "),0) "
                           "FROM session_stats st JOIN sessions s ON s.id = st.session "
                           "WHERE 1 " SCOPE_WHERE, &st);
    if (rc)
        return rc;
    bind_scope(st, sc);
    if ((src = sqlite3_step(st)) == SQLITE_ROW) {
        t->msgs = sqlite3_column_int64(st, 0);
        t->tok = sqlite3_column_int64(st, 1);
        t->user = sqlite3_column_int64(st, 2);
        t->bytes = sqlite3_column_int64(st, 3);
        t->units = sqlite3_column_int64(st, 4);
    } else if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "scope totals");
    }
    sqlite3_finalize(st);
    return rc;
}

/* The runs of message ids in scope (msg_runs, schema 17) from the one
 * holding row on, in order, with their token counts (schema 19). */
static int runs_from(struct cairn *h, const struct store_scope *sc, int64_t row,
                     sqlite3_stmt **st)
{
    if (!*st) {
        int rc = store_prepare(h, "SELECT first, last, session, lens FROM msg_runs WHERE first >= "
                               "coalesce((SELECT max(first) FROM msg_runs WHERE first <= ?3), 0) "
                               "AND (?1 IS NULL OR session IN (SELECT id FROM sessions WHERE "
                               "project = ?1)) AND (?2 IS NULL OR session IS NOT (SELECT id "
                               "FROM sessions WHERE ext_id = ?2)) ORDER BY first", st);
        if (rc)
            return rc;
        bind_scope(*st, sc);
    }
    sqlite3_reset(*st);
    sqlite3_bind_int64(*st, 3, row);
    return CAIRN_OK;
}

/* Whether a walk over ids (lo, hi] can yield a row: the walk below keeps
 * a match only inside a run of msg_runs from the one holding its first
 * match on, so one whose every run from the one holding lo ends at lo or
 * starts past hi yields nothing. Asked before the FTS5 query because the
 * query would find so only by looking each word up in every segment of
 * the index: a tail above the packed postings' or tiers' upto (none on a
 * store whose every add kept them) was ~4-7 M instructions and 40-90 page
 * reads a prompt hook at 100,000 messages, for no row (issue 23, hook51). */
static int runs_reach(struct cairn *h, int64_t lo, int64_t hi, int *any)
{
    sqlite3_stmt *st = NULL;
    int rc = store_prepare(h, "SELECT EXISTS (SELECT 1 FROM msg_runs WHERE first >= "
                           "coalesce((SELECT max(first) FROM msg_runs WHERE first <= ?1), 0) "
                           "AND first <= ?2 AND last > ?1)", &st), src;
    *any = 1;
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, lo);
    sqlite3_bind_int64(st, 2, hi);
    if ((src = sqlite3_step(st)) == SQLITE_ROW)
        *any = sqlite3_column_int(st, 0);
    else
        rc = cairn__sqlerr(h, src, "message runs");
    sqlite3_finalize(st);
    return rc;
}

/* The count of id row in a run's counts (msg_runs.lens, "12,5,300"), or -1
 * when it has none there (the caller looks it up); rl->at is the id rl->p
 * is at. The ids of a run's matches only go up, so the cursor only moves
 * forward: a run's counts are read once. Never reads outside [p, end):
 * the text comes from the store (tests/fuzz/fuzz_run_lens.c). */
int store_run_len(struct run_lens *rl, int64_t row)
{
    /* a count is a few digits: a loop, not a call to memchr a count */
    while (rl->p && rl->at < row) {
        const char *c = rl->p;
        while (c < rl->end && *c != ',')
            c++;
        rl->p = c < rl->end ? c + 1 : NULL;
        rl->at++;
    }
    if (!rl->p || rl->at != row || rl->p >= rl->end || *rl->p < '0' || *rl->p > '9')
        return -1;
    long v = 0;
    for (const char *c = rl->p; c < rl->end && *c != ','; c++) {
        if (*c < '0' || *c > '9' || v > INT_MAX / 10)
            return -1;
        v = v * 10 + (*c - '0');
    }
    return v <= INT_MAX ? (int)v : -1;
}

/* A message's token count by its id: for a match whose run has no counts. */
static int len_of(struct cairn *h, sqlite3_stmt **st, int64_t row, int *ntok)
{
    int rc;
    if (!*st && (rc = store_prepare(h, "SELECT ntok FROM messages INDEXED BY messages_hit "
                                    "WHERE id = ?1", st)))
        return rc;
    sqlite3_reset(*st);
    sqlite3_bind_int64(*st, 1, row);
    int src = sqlite3_step(*st);
    if (src != SQLITE_ROW)
        return cairn__sqlerr(h, src == SQLITE_DONE ? SQLITE_CORRUPT : src, "message length");
    *ntok = sqlite3_column_int(*st, 0);
    return CAIRN_OK;
}

int store_term_matches(struct cairn *h, const struct store_scope *sc, const char *expr,
                       size_t expr_len, int nt, int want_len, store_match_fn fn, void *arg)
{
    if (h->pg)
        return pg_term_matches(h, sc, expr, expr_len, nt, fn, arg);
    return store_term_matches_in(h, sc, expr, expr_len, nt, NULL, nt, INT64_MIN, INT64_MAX,
                                 want_len, fn, arg);
}

int store_term_matches_in(struct cairn *h, const struct store_scope *sc, const char *expr,
                          size_t expr_len, int np, const int *map, int nt, int64_t lo,
                          int64_t hi, int want_len, store_match_fn fn, void *arg)
{
    if (h->pg)
        return cairn__err(h, CAIRN_INVALID, "term matches by id range: SQLite stores only");
    sqlite3_stmt *st = NULL, *runs = NULL, *len = NULL;
    int rc, src, rsrc = SQLITE_DONE;
    int64_t first = 0, last = -1, sess = 0, prev = INT64_MIN;
    struct run_lens rl = { NULL, NULL, 0 };
    uint16_t *tf = calloc((size_t)(nt > 0 ? nt : 1), sizeof *tf);
    if (!tf)
        return nomem(h);
    /* FTS5 alone, its row ids (ascending) merged with the runs of
     * msg_runs, one row a run of a session's consecutive messages,
     * instead of an index descent a match (~45 of ~60 ms of a common
     * word's matches on 100,000 messages). A caller that wants each
     * match's length (the pruning) reads it from its run's counts
     * (schema 19), else from messages_hit. */
    /* an id range (the term tiers' tail, recall/tier.c): FTS5 seeks to
     * its start and stops at its end */
    int ranged = lo != INT64_MIN || hi != INT64_MAX, any = 1;
    if (lo != INT64_MIN && ((rc = runs_reach(h, lo, hi, &any)) || !any))
        goto out;
    if ((rc = store_prepare(h, ranged ? "SELECT rowid, cairn_tf(messages_fts) FROM messages_fts "
                            "WHERE messages_fts MATCH ?3 AND rowid > ?4 AND rowid <= ?5 "
                            "AND ?1 IS ?1 AND ?2 IS ?2"
                            : "SELECT rowid, cairn_tf(messages_fts) FROM messages_fts "
                            "WHERE messages_fts MATCH ?3 AND ?1 IS ?1 AND ?2 IS ?2", &st)))
        goto out;
    bind_scope(st, sc);
    sqlite3_bind_text(st, 3, expr, (int)expr_len, SQLITE_STATIC);
    if (ranged) {
        sqlite3_bind_int64(st, 4, lo);
        sqlite3_bind_int64(st, 5, hi);
    }
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t row = sqlite3_column_int64(st, 0);
        int ntok = -1;
        /* the run holding row: the cursor moves on while runs end
         * before it, and starts again should row go back */
        if (row < prev || (rsrc == SQLITE_DONE && prev == INT64_MIN)) {
            if ((rc = runs_from(h, sc, row, &runs)))
                break;
            last = -1;
            rsrc = SQLITE_ROW;
        }
        prev = row;
        while (rsrc == SQLITE_ROW && last < row) {
            if ((rsrc = sqlite3_step(runs)) == SQLITE_ROW) {
                first = sqlite3_column_int64(runs, 0);
                last = sqlite3_column_int64(runs, 1);
                sess = sqlite3_column_int64(runs, 2);
                rl.p = want_len ? (const char *)sqlite3_column_text(runs, 3) : NULL;
                rl.end = rl.p ? rl.p + sqlite3_column_bytes(runs, 3) : NULL;
                rl.at = first;
            }
        }
        if (rsrc != SQLITE_ROW && rsrc != SQLITE_DONE) {
            rc = cairn__sqlerr(h, rsrc, "message runs");
            break;
        }
        if (rsrc != SQLITE_ROW || row < first || row > last)
            continue;                     /* out of scope (or no message) */
        if (want_len && (ntok = store_run_len(&rl, row)) < 0 && (rc = len_of(h, &len, row, &ntok)))
            break;
        /* cairn_tf: a little-endian uint16 count per phrase; phrase i
         * counts for term map[i] (map NULL: term i; -1: none) */
        int bytes = sqlite3_column_bytes(st, 1);
        const unsigned char *blob = sqlite3_column_blob(st, 1);
        memset(tf, 0, (size_t)(nt > 0 ? nt : 1) * sizeof *tf);
        for (int i = 0; i < np; i++) {
            int t = map ? map[i] : i;
            uint16_t v = 2 * i + 1 < bytes ? (uint16_t)(blob[2 * i] | blob[2 * i + 1] << 8) : 0;
            if (t >= 0 && t < nt && v > tf[t])
                tf[t] = v;
        }
        if ((rc = fn(arg, row, sess, ntok, tf)))
            break;
    }
    if (!rc && src != SQLITE_DONE && src != SQLITE_ROW)
        rc = cairn__sqlerr(h, src, "search");
out:
    sqlite3_finalize(st);
    sqlite3_finalize(runs);
    sqlite3_finalize(len);
    free(tf);
    return rc;
}

/* Ids per message past which the runs are not held by id (ids left by
 * forgotten sessions): the array would be mostly holes. */
#define STORE_RUNS_SPARSE 4

void store_runs_free(struct store_runs *runs)
{
    free(runs->sess);
    free(runs->ntok);
    memset(runs, 0, sizeof *runs);
}

int store_runs_load(struct cairn *h, int64_t upto, struct store_runs *runs, int *loaded)
{
    sqlite3_stmt *st = NULL;
    int rc, src;
    int64_t lo = 0, msgs = 0;
    memset(runs, 0, sizeof *runs);
    *loaded = 0;
    if (h->pg)
        return CAIRN_OK;
    if ((rc = store_prepare(h, "SELECT coalesce(min(first), 0), (SELECT count(*) FROM messages "
                            "WHERE id <= ?1) FROM msg_runs", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, upto);
    if ((src = sqlite3_step(st)) == SQLITE_ROW) {
        lo = sqlite3_column_int64(st, 0);
        msgs = sqlite3_column_int64(st, 1);
    } else {
        rc = cairn__sqlerr(h, src, "message runs");
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc || lo < 1 || upto < lo || upto - lo >= STORE_RUNS_SPARSE * (msgs + 1024) ||
        upto - lo >= INT32_MAX)
        return rc;
    runs->base = lo;
    runs->n = upto - lo + 1;
    runs->sess = calloc((size_t)runs->n, sizeof *runs->sess);
    runs->ntok = malloc((size_t)runs->n * sizeof *runs->ntok);
    if (!runs->sess || !runs->ntok) {
        store_runs_free(runs);
        return nomem(h);
    }
    if ((rc = store_prepare(h, "SELECT first, last, session, lens FROM msg_runs WHERE first <= ?1 "
                            "ORDER BY first", &st)))
        goto fail;
    sqlite3_bind_int64(st, 1, upto);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t first = sqlite3_column_int64(st, 0), last = sqlite3_column_int64(st, 1);
        int64_t sess = sqlite3_column_int64(st, 2);
        struct run_lens rl = { (const char *)sqlite3_column_text(st, 3), NULL, first };
        rl.end = rl.p ? rl.p + sqlite3_column_bytes(st, 3) : NULL;
        /* the walk's cursor takes a run for its ids first..last: runs of
         * one store never overlap (a run is a session's consecutive ids),
         * and the first to hold an id keeps it, as the cursor would */
        for (int64_t id = first < lo ? lo : first; id <= last && id <= upto; id++) {
            if (runs->sess[id - lo])
                continue;
            runs->sess[id - lo] = sess;
            runs->ntok[id - lo] = store_run_len(&rl, id);
        }
    }
    if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "message runs");
        goto fail;
    }
    sqlite3_finalize(st);
    *loaded = 1;
    return CAIRN_OK;
fail:
    sqlite3_finalize(st);
    store_runs_free(runs);
    return rc;
}

int store_term_matches_runs(struct cairn *h, const struct store_runs *runs, const char *expr,
                            size_t expr_len, int64_t upto, store_match_fn fn, void *arg)
{
    sqlite3_stmt *st = NULL, *len = NULL;
    int rc, src;
    if ((rc = store_prepare(h, "SELECT rowid, cairn_tf(messages_fts) FROM messages_fts "
                            "WHERE messages_fts MATCH ?1 AND rowid <= ?2", &st)))
        return rc;
    sqlite3_bind_text(st, 1, expr, (int)expr_len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, upto);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t row = sqlite3_column_int64(st, 0), at = row - runs->base;
        if (at < 0 || at >= runs->n || !runs->sess[at])
            continue;                     /* in no run: no message */
        int ntok = runs->ntok[at];
        if (ntok < 0 && (rc = len_of(h, &len, row, &ntok)))
            break;
        /* cairn_tf: the phrase's count, little-endian (as above) */
        int bytes = sqlite3_column_bytes(st, 1);
        const unsigned char *blob = sqlite3_column_blob(st, 1);
        uint16_t tf = bytes > 1 ? (uint16_t)(blob[0] | blob[1] << 8) : 0;
        if ((rc = fn(arg, row, runs->sess[at], ntok, &tf)))
            break;
    }
    if (!rc && src != SQLITE_DONE && src != SQLITE_ROW)
        rc = cairn__sqlerr(h, src, "search");
    sqlite3_finalize(st);
    sqlite3_finalize(len);
    return rc;
}

/* From this many sessions on, session_stats is read in order over their
 * span and merged with the list: one range scan instead of a lookup a
 * session (and the list as JSON), 8 ms instead of ~70 ms for 50,000. */
#define SIZE_SCAN_FROM 2048

/* session_sizes (schema 24): 128 sessions a row, each its turns and its
 * rounds as 8 + 8 hex digits (store/schema.c) */
#define SIZES_PER_ROW 128
#define SIZE_DIGITS   16            /* two fields of 8 (store_hex8) */

/* Each lowercase hex digit's value with bit 4 set, 0 for any other byte:
 * a lookup, an AND and an OR a digit, the bit tested once a field. The
 * compares a digit cost ~110 instructions a field, 61,000 fields a hook
 * at a million messages (issue 23, hook28). */
#define HX(c, v) [c] = 16 | (v)
static const unsigned char hex_val[256] = {
    HX('0', 0), HX('1', 1), HX('2', 2), HX('3', 3), HX('4', 4), HX('5', 5), HX('6', 6),
    HX('7', 7), HX('8', 8), HX('9', 9), HX('a', 10), HX('b', 11), HX('c', 12), HX('d', 13),
    HX('e', 14), HX('f', 15),
};
#undef HX

/* The value of n hex digits, or -1 if one is not a digit: the reference
 * for store_hex8 (tests/unit/test_session_sizes.c). */
int64_t store_hex_field(const unsigned char *p, int n)
{
    int64_t v = 0;
    unsigned all = 16;
    for (int i = 0; i < n; i++) {
        unsigned d = hex_val[p[i]];
        all &= d;
        v = v << 4 | (d & 15);
    }
    return all ? v : -1;
}

/*
 * Eight lowercase hex digits at once, as bytes of one 64-bit word (a
 * SIMD-within-a-register of store_hex_field(p, 8), the same value or -1):
 * a field's loop of eight lookups was ~78 instructions, 81,500 fields a
 * hook at a million messages (6.4 M; issue 23, hook30). For bytes below
 * 0x80 (tested first), b + (0x80 - k) sets a byte's top bit exactly when
 * b >= k, with no carry into the next byte; a digit is in [0x30, 0x39], a
 * letter in [0x61, 0x66], and a letter's value is its low nibble + 9. The
 * first digit is the lowest byte (little-endian), the most significant
 * nibble: pairs, then quads, then the two halves are put together.
 */
static inline int64_t hex8(const unsigned char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t top = 0x8080808080808080ull;
    uint64_t x;
    memcpy(&x, p, 8);
    if (x & top)
        return -1;
    uint64_t digit = (x + 0x5050505050505050ull) & ~(x + 0x4646464646464646ull) & top;
    uint64_t letter = (x + 0x1f1f1f1f1f1f1f1full) & ~(x + 0x1919191919191919ull) & top;
    if ((digit | letter) != top)
        return -1;
    uint64_t v = (x & 0x0f0f0f0f0f0f0f0full) + (letter >> 7) * 9;
    v = (v & 0x000f000f000f000full) << 4 | (v >> 8 & 0x000f000f000f000full);
    v = (v & 0x000000ff000000ffull) << 8 | (v >> 16 & 0x000000ff000000ffull);
    return (int64_t)((v & 0xffff) << 16 | (v >> 32 & 0xffff));
#else
    return store_hex_field(p, 8);
#endif
}

int64_t store_hex8(const unsigned char *p)
{
    return hex8(p);
}

/*
 * A slot's sixteen digits at once, its two fields in *a and *b (each
 * hex8's value), 0, or -1 when a byte is not a lowercase hex digit. With
 * SSE2 (every x86-64) one 16-byte register: two hex8 a slot were ~80 of
 * the ~113 instructions a session of the pruning's read of the sizes,
 * 40,767 sessions a prompt hook at a million messages (issue 23,
 * hook52). The signed compares fail bytes with the top bit set (they are
 * negative); a letter's value is its low nibble + 9; each byte pair makes
 * one byte (high nibble first), packed to eight bytes of which the first
 * four, in big-endian order, are the first field. Elsewhere two hex8.
 */
static inline int hex16(const unsigned char *p, int64_t *a, int64_t *b)
{
#if defined(__SSE2__)
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8(0x2f)),
                                  _mm_cmpgt_epi8(_mm_set1_epi8(0x3a), x));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8(0x60)),
                                   _mm_cmpgt_epi8(_mm_set1_epi8(0x67), x));
    if (_mm_movemask_epi8(_mm_or_si128(digit, letter)) != 0xffff)
        return -1;
    __m128i v = _mm_add_epi8(_mm_and_si128(x, _mm_set1_epi8(0x0f)),
                             _mm_and_si128(letter, _mm_set1_epi8(9)));
    v = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0x00ff)), 4),
                     _mm_srli_epi16(v, 8));
    uint64_t y = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(v, v));
    *a = __builtin_bswap32((uint32_t)y);
    *b = __builtin_bswap32((uint32_t)(y >> 32));
    return 0;
#else
    *a = hex8(p);
    *b = hex8(p + 8);
    return *a < 0 || *b < 0 ? -1 : 0;
#endif
}

int store_hex16(const unsigned char *p, int64_t *a, int64_t *b)
{
    return hex16(p, a, b);
}

/*
 * The sizes from session_sizes: the rows of the list's span in order, each
 * session's slot read where the list has one. *whole is 0 when a row the
 * list needs is missing or does not read as 128 slots (then the caller
 * reads session_stats: the answer never depends on the rows). A row a 128
 * sessions instead of a row a session: 5,000 sessions with a match on
 * 100,000 messages are 40 rows, 35,000 of 50,000 on a million 391.
 */
static int sizes_packed(struct cairn *h, const int64_t *sess, int n, int64_t *msgs,
                        int64_t *units, int64_t *each, int *dialogs, int *whole)
{
    sqlite3_stmt *st = NULL;
    int rc, src = SQLITE_DONE, i = 0, d = 0;
    int64_t m = 0, u = 0;
    *whole = 0;
    if ((rc = store_prepare(h, "SELECT blk, sizes FROM session_sizes "
                            "WHERE blk BETWEEN ?1 AND ?2 ORDER BY blk", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, sess[0] / SIZES_PER_ROW);
    sqlite3_bind_int64(st, 2, sess[n - 1] / SIZES_PER_ROW);
    while (i < n && (src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t blk = sqlite3_column_int64(st, 0);
        const unsigned char *p = sqlite3_column_text(st, 1);
        if (sess[i] / SIZES_PER_ROW < blk)
            goto out;                     /* a row it needs is missing */
        if (sess[i] / SIZES_PER_ROW > blk)
            continue;
        if (!p || sqlite3_column_bytes(st, 1) != SIZES_PER_ROW * SIZE_DIGITS)
            goto out;
        /* the ids are not negative (sess[0] >= 0, ascending): the row
         * and the slot by unsigned shifts and masks */
        for (; i < n && (uint64_t)sess[i] / SIZES_PER_ROW == (uint64_t)blk; i++) {
            const unsigned char *f = p + ((uint64_t)sess[i] % SIZES_PER_ROW) * SIZE_DIGITS;
            int64_t a, b;
            if (hex16(f, &a, &b))
                goto out;
            if (each)
                each[i] = a;
            m += a;
            u += b;
            d += a == b && a > 0;
        }
    }
    if (src != SQLITE_DONE && src != SQLITE_ROW) {
        rc = cairn__sqlerr(h, src, "session sizes");
        goto out;
    }
    if (i == n) {
        *msgs = m;
        *units = u;
        *dialogs = d;
        *whole = 1;
    }
out:
    sqlite3_finalize(st);
    return rc;
}

/* The three entry points below in one: each (may be NULL) and *got as
 * store_sessions_size_each says, *dialogs as store_sessions_shape says. */
static int sessions_size(struct cairn *h, const int64_t *sess, int n, int64_t *msgs,
                         int64_t *units, int64_t *each, int *got, int *dialogs)
{
    struct buf ids = BUF_INIT;
    sqlite3_stmt *st = NULL;
    int rc, src = SQLITE_DONE, whole = 0;
    *msgs = *units = 0;
    *got = 0;
    *dialogs = 0;
    if (n <= 0)
        return CAIRN_OK;
    /* packed rows while the span's rows are no more than the list (a few
     * sessions spread over a big store are looked up one by one) */
    if (!h->pg && sess[0] >= 0 && (sess[n - 1] / SIZES_PER_ROW - sess[0] / SIZES_PER_ROW) < n &&
        ((rc = sizes_packed(h, sess, n, msgs, units, each, dialogs, &whole)) || whole)) {
        *got = whole && each;
        return rc;
    }
    if (n >= SIZE_SCAN_FROM) {
        if ((rc = store_prepare(h, "SELECT session, n, " UNITS_SQL " FROM session_stats "
                                "WHERE session BETWEEN ?1 AND ?2 ORDER BY session", &st)))
            goto out;
        sqlite3_bind_int64(st, 1, sess[0]);
        sqlite3_bind_int64(st, 2, sess[n - 1]);
        int i = 0;
        while (i < n && (src = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t s = sqlite3_column_int64(st, 0);
            while (i < n && sess[i] < s)
                i++;                      /* a session without totals: none to add */
            if (i < n && sess[i] == s) {
                *msgs += sqlite3_column_int64(st, 1);
                *units += sqlite3_column_int64(st, 2);
                *dialogs += sqlite3_column_int64(st, 1) == sqlite3_column_int64(st, 2) &&
                            sqlite3_column_int64(st, 1) > 0;
                i++;
            }
        }
        if (i < n && src != SQLITE_DONE)
            rc = cairn__sqlerr(h, src, "session sizes");
        goto out;
    }
    if ((rc = ids_json(h, sess, n, &ids)))
        goto out;
    if ((rc = store_prepare(h, "SELECT coalesce(sum(n), 0), coalesce(sum(" UNITS_SQL "), 0), "
                            "coalesce(sum(nuser = n AND n > 0), 0) "
                            "FROM session_stats WHERE session IN "
                            "(SELECT value FROM json_each(?1))", &st)))
        goto out;
    sqlite3_bind_text(st, 1, ids.p, (int)ids.n, SQLITE_STATIC);
    if ((src = sqlite3_step(st)) == SQLITE_ROW) {
        *msgs = sqlite3_column_int64(st, 0);
        *units = sqlite3_column_int64(st, 1);
        *dialogs = sqlite3_column_int(st, 2);
    } else if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "session sizes");
    }
out:
    if (st)
        sqlite3_finalize(st);
    buf_release(&ids);
    return rc;
}

int store_sessions_size(struct cairn *h, const int64_t *sess, int n, int64_t *msgs,
                        int64_t *units)
{
    int got, dialogs;
    return sessions_size(h, sess, n, msgs, units, NULL, &got, &dialogs);
}

int store_sessions_size_each(struct cairn *h, const int64_t *sess, int n, int64_t *msgs,
                             int64_t *units, int64_t *each, int *got)
{
    int dialogs;
    return sessions_size(h, sess, n, msgs, units, each, got, &dialogs);
}

int store_sessions_shape(struct cairn *h, const int64_t *sess, int n, int64_t *msgs,
                         int64_t *units, int *dialogs)
{
    int got;
    return sessions_size(h, sess, n, msgs, units, NULL, &got, dialogs);
}

int store_range_sessions(struct cairn *h, const struct store_scope *sc, int64_t from, int64_t to,
                         struct store_ids *out)
{
    if (h->pg)
        return pg_range_sessions(h, sc, from, to, out);
    sqlite3_stmt *st;
    int rc;
    /* A message's time is its own, else its session's start: two index
     * range scans, not a scan of every message (~50 ms on 100k) */
    if ((rc = store_prepare(h, "SELECT m.session FROM messages m INDEXED BY messages_time "
                            SCOPE_JOIN " WHERE m.created_at >= ?3 AND m.created_at < ?4 "
                            SCOPE_WHERE " UNION SELECT s.id FROM sessions s WHERE "
                            "s.started_at >= ?3 AND s.started_at < ?4 AND EXISTS (SELECT 1 "
                            "FROM messages m WHERE m.session = s.id AND m.created_at IS NULL) "
                            SCOPE_WHERE, &st)))
        return rc;
    bind_scope(st, sc);
    sqlite3_bind_int64(st, 3, from);
    sqlite3_bind_int64(st, 4, to);
    rc = collect_ids(h, st, out, "time range");
    sqlite3_finalize(st);
    return rc;
}

int store_event_msgs(struct cairn *h, const struct store_scope *sc, int64_t from, int64_t to,
                     struct store_ids *msgs, struct store_ids *sess)
{
    sqlite3_stmt *st;
    int rc, src;
    /* no range is longer than EVENT_MAX_SPAN: one bounded scan of the
     * time index finds every range that meets [from, to) */
    if (h->pg)
        return pg_event_msgs(h, sc, from, to, msgs, sess);
    if ((rc = store_prepare(h, "SELECT e.msg, e.session FROM message_events e "
                            "INDEXED BY message_events_time JOIN sessions s ON s.id = e.session "
                            "WHERE e.t_from > ?3 - ?5 AND e.t_from < ?4 AND e.t_to > ?3 "
                            SCOPE_WHERE, &st)))
        return rc;
    bind_scope(st, sc);
    sqlite3_bind_int64(st, 3, from);
    sqlite3_bind_int64(st, 4, to);
    sqlite3_bind_int64(st, 5, EVENT_MAX_SPAN);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        if ((rc = store_ids_push(h, msgs, sqlite3_column_int64(st, 0))) ||
            (rc = store_ids_push(h, sess, sqlite3_column_int64(st, 1))))
            goto out;
    }
    if (src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "event dates");
out:
    sqlite3_finalize(st);
    return rc;
}

int store_scope_sessions(struct cairn *h, const struct store_scope *sc, struct store_ids *out)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = store_prepare(h, "SELECT s.id FROM sessions s WHERE 1 " SCOPE_WHERE, &st)))
        return rc;
    bind_scope(st, sc);
    rc = collect_ids(h, st, out, "sessions");
    sqlite3_finalize(st);
    return rc;
}

int store_scope_sessions_sorted(struct cairn *h, const struct store_scope *sc,
                                struct store_ids *out)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = store_prepare(h, "SELECT id FROM sessions WHERE (?1 IS NULL OR project = ?1) "
                            "AND (?2 IS NULL OR ext_id <> ?2) ORDER BY id", &st)))
        return rc;
    bind_scope(st, sc);
    rc = collect_ids(h, st, out, "sessions");
    sqlite3_finalize(st);
    return rc;
}

int store_any_vectors(struct cairn *h, int *any)
{
    sqlite3_stmt *st;
    int rc, src;
    *any = 0;
    if (h->pg)
        return pg_any_vectors(h, any);
    if ((rc = store_prepare(h, "SELECT EXISTS (SELECT 1 FROM vectors)", &st)))
        return rc;
    if ((src = sqlite3_step(st)) == SQLITE_ROW)
        *any = sqlite3_column_int(st, 0);
    else if (src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "vectors");
    sqlite3_finalize(st);
    return rc;
}

/* n < 0: every session of the store. */
/* Whether the sorted list sess[n] (strictly ascending) covers at least
 * half of the ids between its ends: then one range scan of `sessions`,
 * each row kept when it is next in the list, reads fewer rows' worth of
 * SQLite than the JSON list (an ephemeral index of the ids, a descent a
 * session and a subquery each: ~5,000 instructions a session at 100,000
 * messages; the exact recall of a common word lists nearly every
 * session). */
static int ids_dense(const int64_t *sess, int n)
{
    if (n < SESS_RANGE_MIN)
        return 0;
    for (int i = 1; i < n; i++)
        if (sess[i] <= sess[i - 1])
            return 0;
    return (uint64_t)sess[n - 1] - (uint64_t)sess[0] < 2 * (uint64_t)n;
}

/* Whether sess[n] is strictly ascending: then the JSON list is walked as
 * the outer loop (json_each(?1) j CROSS JOIN the table ON its id =
 * j.value: SQLite keeps a CROSS JOIN's order, and json_each gives the
 * array's order), a rowid descent a session, in id order without ORDER
 * BY; IN (SELECT value FROM json_each(?1)) ORDER BY id first builds an
 * ephemeral index of the ids, then walks it: a prompt hook's read of its
 * 500 kept sessions' rows 2.44 -> 1.94 M instructions at 100,000
 * messages, of their packed turns 5.75 -> 5.25 M (issue 23, hook52). A
 * list out of order (or with repeats) keeps IN's answer: each row once,
 * in id order. */
static int ids_ascending(const int64_t *sess, int n)
{
    for (int i = 1; i < n; i++)
        if (sess[i] <= sess[i - 1])
            return 0;
    return 1;
}

static int sessions_meta_sql(struct cairn *h, const int64_t *sess, int n,
                             int (*fn)(void *arg, const struct store_session_row *r), void *arg)
{
    struct buf ids = BUF_INIT;
    sqlite3_stmt *st = NULL;
    int rc, src, range = n >= 0 && ids_dense(sess, n), next = 0;
    if (n >= 0 && !range && (rc = ids_json(h, sess, n, &ids)))
        goto out;
    /* `sessions` alone: the turns' count (session_stats) is not read here,
     * the pool is sized from store_sessions_size (a LEFT JOIN a row was
     * ~30 M of 148 M at a million messages; issue 23, exact35) */
    if ((rc = store_prepare(h, n < 0 ? "SELECT id, ext_id, source, project, title, started_at "
                            "FROM sessions ORDER BY id"
                            : range ? "SELECT id, ext_id, source, project, title, started_at "
                            "FROM sessions WHERE id BETWEEN ?1 AND ?2 ORDER BY id"
                            : ids_ascending(sess, n) ? "SELECT s.id, s.ext_id, s.source, "
                            "s.project, s.title, s.started_at FROM json_each(?1) j "
                            "CROSS JOIN sessions s ON s.id = j.value"
                            : "SELECT id, ext_id, source, project, title, started_at "
                            "FROM sessions WHERE id IN (SELECT value FROM json_each(?1)) "
                            "ORDER BY id", &st)))
        goto out;
    if (range) {
        sqlite3_bind_int64(st, 1, sess[0]);
        sqlite3_bind_int64(st, 2, sess[n - 1]);
    } else if (n >= 0) {
        sqlite3_bind_text(st, 1, ids.p, (int)ids.n, SQLITE_STATIC);
    }
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        if (range) {
            /* the rows the list names, in id order, as the IN list gives */
            int64_t id = sqlite3_column_int64(st, 0);
            while (next < n && sess[next] < id)
                next++;
            if (next == n)
                break;
            if (sess[next] != id)
                continue;
            next++;
        }
        struct store_session_row r = {
            .row = sqlite3_column_int64(st, 0),
            .ext_id = (const char *)sqlite3_column_text(st, 1),
            .source = (const char *)sqlite3_column_text(st, 2),
            .project = (const char *)sqlite3_column_text(st, 3),
            .title = (const char *)sqlite3_column_text(st, 4),
            .started_at = col_time(st, 5),
        };
        if (!r.ext_id) {          /* NOT NULL in the schema: no memory */
            rc = nomem(h);
            goto out;
        }
        if ((rc = fn(arg, &r)))
            goto out;
    }
    if (src != SQLITE_DONE && src != SQLITE_ROW)
        rc = cairn__sqlerr(h, src, "load sessions");
out:
    if (st)
        sqlite3_finalize(st);
    buf_release(&ids);
    return rc;
}

/*
 * "store.keep_turns": a long-lived process (`cairn web`) keeps every turn's
 * metadata in memory, in the order store_messages_meta gives it, and serves
 * it from there: the exact recall of a common word reads nearly every turn
 * of the store (~30 of ~50 ms of CPU at 100,000 messages), the same rows
 * each time. The sessions' rows with them (store_sessions_meta: a fifth of
 * a preview's instructions at 100k, one JSON list and a subquery a
 * session). Valid while nothing was committed: PRAGMA data_version moves
 * when another connection commits, the connection's own change count when
 * it writes itself; either drops the copy, and the next recall reads again.
 */
struct store_turns {
    int64_t               version, changes;
    struct store_msg_row *m;       /* by session, then position */
    size_t                n;
    int64_t              *sess;    /* the sessions in order, */
    size_t               *first;   /* where each one's turns begin in m */
    size_t                ns, cs;
    struct store_session_row *s;   /* every session by id (strings owned) */
    size_t                nss, css;
};

void store_turns_free(struct cairn *h)
{
    struct store_turns *t = h->turns;
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free((char *)t->m[i].speaker);
    for (size_t i = 0; i < t->nss; i++) {
        free((char *)t->s[i].ext_id);
        free((char *)t->s[i].source);
        free((char *)t->s[i].project);
        free((char *)t->s[i].title);
    }
    free(t->s);
    free(t->m);
    free(t->sess);
    free(t->first);
    free(t);
    h->turns = NULL;
}

static int data_version(struct cairn *h, int64_t *v)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "PRAGMA data_version", &st);
    if (rc)
        return rc;
    if (sqlite3_step(st) == SQLITE_ROW)
        *v = sqlite3_column_int64(st, 0);
    else
        rc = cairn__sqlerr(h, sqlite3_errcode(h->db), "data version");
    sqlite3_finalize(st);
    return rc;
}

static int turns_push(struct store_turns *t, size_t *cap, const struct store_msg_row *r)
{
    if (t->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4096;
        struct store_msg_row *nm = realloc(t->m, nc * sizeof *nm);
        if (!nm)
            return CAIRN_NOMEM;
        t->m = nm;
        *cap = nc;
    }
    t->m[t->n] = *r;
    t->m[t->n].speaker = NULL;
    if (r->speaker && !(t->m[t->n].speaker = strdup(r->speaker)))
        return CAIRN_NOMEM;
    if (!t->ns || t->sess[t->ns - 1] != r->sess) {
        if (t->ns == t->cs) {
            size_t nc = t->cs ? t->cs * 2 : 256;
            int64_t *ns = realloc(t->sess, nc * sizeof *ns);
            if (!ns)
                return CAIRN_NOMEM;
            t->sess = ns;
            size_t *nf = realloc(t->first, nc * sizeof *nf);
            if (!nf)
                return CAIRN_NOMEM;
            t->first = nf;
            t->cs = nc;
        }
        t->sess[t->ns] = r->sess;
        t->first[t->ns++] = t->n;
    }
    t->n++;
    return CAIRN_OK;
}

static int turns_keep(void *arg, const struct store_msg_row *r)
{
    void **a = arg;
    return turns_push(a[0], a[1], r);
}

static char *dup_or_null(const char *s, int *bad)
{
    char *d = s ? strdup(s) : NULL;
    *bad |= s && !d;
    return d;
}

static int sessions_keep(void *arg, const struct store_session_row *r)
{
    struct store_turns *t = arg;
    int bad = 0;
    if (t->nss == t->css) {
        size_t nc = t->css ? t->css * 2 : 256;
        struct store_session_row *ns = realloc(t->s, nc * sizeof *ns);
        if (!ns)
            return CAIRN_NOMEM;
        t->s = ns;
        t->css = nc;
    }
    struct store_session_row *k = &t->s[t->nss++];
    *k = *r;
    k->ext_id = dup_or_null(r->ext_id, &bad);
    k->source = dup_or_null(r->source, &bad);
    k->project = dup_or_null(r->project, &bad);
    k->title = dup_or_null(r->title, &bad);
    return bad ? CAIRN_NOMEM : CAIRN_OK;
}

static int messages_meta_sql(struct cairn *h, const int64_t *sess, int n,
                             int (*fn)(void *arg, const struct store_msg_row *r), void *arg);

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether the kept copy serves the handle's reads. */
static int keeps(const struct cairn *h)
{
    const char *keep = cairn__setting(h, CAIRN__SET_KEEP_TURNS);
    return keep && strcmp(keep, "0");
}

/* The kept turns, read again if anything was committed since. */
static int turns_fresh(struct cairn *h, struct store_turns **out)
{
    int64_t v = 0, ch = sqlite3_total_changes64(h->db);
    int rc;
    *out = NULL;
    if ((rc = data_version(h, &v)))
        return rc;
    if (h->turns && h->turns->version == v && h->turns->changes == ch) {
        *out = h->turns;
        return CAIRN_OK;
    }
    store_turns_free(h);
    struct store_turns *t = calloc(1, sizeof *t);
    size_t cap = 0;
    void *a[2] = { t, &cap };
    if (!t)
        return nomem(h);
    t->version = v;
    t->changes = ch;
    h->turns = t;
    if ((rc = messages_meta_sql(h, NULL, -1, turns_keep, a)) ||
        (rc = sessions_meta_sql(h, NULL, -1, sessions_keep, t))) {
        store_turns_free(h);
        return rc == CAIRN_NOMEM ? nomem(h) : rc;
    }
    *out = t;
    return CAIRN_OK;
}

int store_read_ahead(const struct cairn *h)
{
    return h->pg ? PG_READ_AHEAD : 1;
}

int store_messages_meta(struct cairn *h, const int64_t *sess, int n,
                        int (*fn)(void *arg, const struct store_msg_row *r), void *arg)
{
    if (h->pg)
        return pg_messages_meta(h, sess, n, fn, arg);
    if (!keeps(h))
        return messages_meta_sql(h, sess, n, fn, arg);
    struct store_turns *t;
    int rc = turns_fresh(h, &t);
    if (rc)
        return rc;
    /* the listed sessions (ascending, as gather gives them) merged with
     * the kept ones */
    size_t j = 0;
    for (int i = 0; i < n; i++) {
        if (i && sess[i] < sess[i - 1])
            j = 0;                    /* not in order: search from the start */
        while (j < t->ns && t->sess[j] < sess[i])
            j++;
        if (j == t->ns || t->sess[j] != sess[i])
            continue;
        size_t end = j + 1 < t->ns ? t->first[j + 1] : t->n;
        for (size_t k = t->first[j]; k < end; k++)
            if ((rc = fn(arg, &t->m[k])))
                return rc;
    }
    return CAIRN_OK;
}

int store_split_ok(const struct cairn *h)
{
    /* a transaction open on h (an add group's, a caller's): h reads its
     * own uncommitted rows, which another connection does not see */
    return !h->pg && !keeps(h) && h->path && h->path[0] && strcmp(h->path, ":memory:") &&
           h->open_reader && h->close_reader && sqlite3_get_autocommit(h->db);
}

int store_sessions_meta(struct cairn *h, const int64_t *sess, int n,
                        int (*fn)(void *arg, const struct store_session_row *r), void *arg)
{
    if (h->pg || !keeps(h))       /* a server store's sessions: read as before */
        return sessions_meta_sql(h, sess, n, fn, arg);
    struct store_turns *t;
    int rc = turns_fresh(h, &t);
    if (rc)
        return rc;
    /* the rows of the listed ids in id order, each once, as the SQL gives
     * them: the list (gather's is sorted; another is sorted first) merged
     * with the kept ones */
    int64_t *v = NULL;
    for (int i = 1; i < n && !v; i++) {
        if (sess[i] < sess[i - 1]) {
            if (!(v = malloc((size_t)n * sizeof *v)))
                return nomem(h);
            memcpy(v, sess, (size_t)n * sizeof *v);
            qsort(v, (size_t)n, sizeof *v, cmp_id);
            sess = v;
        }
    }
    size_t j = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (i && sess[i] == sess[i - 1])
            continue;
        while (j < t->nss && t->s[j].row < sess[i])
            j++;
        if (j < t->nss && t->s[j].row == sess[i])
            rc = fn(arg, &t->s[j]);
    }
    free(v);
    return rc;
}

int store_units_ok(const struct cairn *h)
{
    return !h->pg && !keeps(h);
}

int store_read_begin(struct cairn *h, int *began)
{
    *began = 0;
    if (h->pg || !sqlite3_get_autocommit(h->db))
        return CAIRN_OK;            /* a transaction open already is the one */
    int src = sqlite3_exec(h->db, "BEGIN", NULL, NULL, NULL);
    if (src != SQLITE_OK)
        return cairn__sqlerr(h, src, "begin a read");
    *began = 1;
    return CAIRN_OK;
}

void store_read_end(struct cairn *h, int *began)
{
    /* a read's end: nothing to keep or lose, so an error changes nothing */
    if (*began)
        (void)sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL);
    *began = 0;
}

int store_units_rows(struct cairn *h, const int64_t *sess, int n, int rule,
                     int (*fn)(void *arg, const struct store_units_row *r), void *arg)
{
    struct buf ids = BUF_INIT;
    sqlite3_stmt *st = NULL;
    int rc, src, range = ids_dense(sess, n), next = 0;
    if (!range && (rc = ids_json(h, sess, n, &ids)))
        goto out;
    /* the sessions' starts with their rows and their packed turns' count
     * (n precedes the blob in session_turns' record: its overflow pages
     * are not read); a dense list by one range in id order (as
     * sessions_meta_sql), else the JSON list */
#define UNITS_ROWS_SQL "SELECT s.id, s.started_at, u.rule, u.n, t.n, u.units FROM sessions s " \
                       "LEFT JOIN session_units u ON u.session = s.id " \
                       "LEFT JOIN session_turns t ON t.session = s.id WHERE "
    if ((rc = store_prepare(h, range ? UNITS_ROWS_SQL "s.id BETWEEN ?1 AND ?2 ORDER BY s.id"
                                     : UNITS_ROWS_SQL "s.id IN (SELECT value FROM json_each(?1)) "
                                       "ORDER BY s.id", &st)))
        goto out;
#undef UNITS_ROWS_SQL
    if (range) {
        sqlite3_bind_int64(st, 1, sess[0]);
        sqlite3_bind_int64(st, 2, sess[n - 1]);
    } else {
        sqlite3_bind_text(st, 1, ids.p, (int)ids.n, SQLITE_STATIC);
    }
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (range) {
            while (next < n && sess[next] < id)
                next++;
            if (next == n)
                break;
            if (sess[next] != id)
                continue;
            next++;
        }
        struct store_units_row r = { .sess = id, .started_at = col_time(st, 1) };
        /* valid: the reader's rule and the packed turns' count (a NULL
         * reads as 0: its type asked only then, not twice a row) */
        int64_t un = sqlite3_column_int64(st, 3), tn;
        int ru = sqlite3_column_int(st, 2);
        if (ru == rule && (ru || sqlite3_column_type(st, 2) != SQLITE_NULL) &&
            (tn = sqlite3_column_int64(st, 4)) == un &&
            (tn || sqlite3_column_type(st, 4) != SQLITE_NULL)) {
            r.n = un;
            r.units = sqlite3_column_blob(st, 5);
            r.len = (size_t)sqlite3_column_bytes(st, 5);
            if (!r.units)
                r.len = 0;
        }
        if ((rc = fn(arg, &r)))
            goto out;
    }
    if (src != SQLITE_DONE && src != SQLITE_ROW)
        rc = cairn__sqlerr(h, src, "read unit rows");
out:
    if (st)
        sqlite3_finalize(st);
    buf_release(&ids);
    return rc;
}

/* The rows of st (id, session, position, role, speaker, created_at, ntok
 * of messages_meta, in order) to fn. */
static int meta_rows(struct cairn *h, sqlite3_stmt *st,
                     int (*fn)(void *arg, const struct store_msg_row *r), void *arg)
{
    int rc, src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *role = (const char *)sqlite3_column_text(st, 3);
        int has_speaker = sqlite3_column_type(st, 4) != SQLITE_NULL;
        struct store_msg_row r = {
            .row = sqlite3_column_int64(st, 0),
            .sess = sqlite3_column_int64(st, 1),
            .position = sqlite3_column_int(st, 2),
            .user = role && !strcmp(role, "user"),
            .speaker = has_speaker ? (const char *)sqlite3_column_text(st, 4) : NULL,
            .at = col_time(st, 5),
            .ntok = sqlite3_column_int(st, 6),
        };
        if (!role || (has_speaker && !r.speaker))
            return nomem(h);
        if ((rc = fn(arg, &r)))
            return rc;
    }
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "load");
}

/* A session's turns read from its packed row, before any is given out:
 * a row that does not read whole falls back on messages_meta. */
struct packed {
    struct store_msg_row *r;
    size_t               *spn;     /* each speaker's bytes (r[i].speaker not NUL-ended) */
    size_t                n, cap;
    struct buf            spk;     /* the speaker given out, NUL-terminated */
};

/* The turns of session sess from its packed row p[0..bytes) into k: 1 if
 * the row reads as exactly n turns, 0 if not, CAIRN_NOMEM as -1. A row
 * without the mark (a schema-26 store's text, opened read-only) does not. */
static int packed_read(struct packed *k, int64_t sess, const char *p, int bytes, int64_t n)
{
    k->n = 0;
    if (bytes < 1 || (unsigned char)p[0] != STORE_TURNS_MARK)
        return 0;
    struct turns_cur c = { p + 1, p + bytes, 0, 0, 0 };
    if (n < 0 || n > (bytes - 1) / 4)   /* a turn is at least 4 bytes */
        return 0;
    if ((size_t)n > k->cap) {
        size_t nc = (size_t)n < 256 ? 256 : (size_t)n;
        struct store_msg_row *nr = realloc(k->r, nc * sizeof *nr);
        if (nr)
            k->r = nr;
        size_t *ns = realloc(k->spn, nc * sizeof *ns);
        if (ns)
            k->spn = ns;
        if (!nr || !ns)
            return -1;
        k->cap = nc;
    }
    k->n = store_turns_read(&c, k->r, k->spn, (size_t)n);
    for (size_t i = 0; i < k->n; i++)
        k->r[i].sess = sess;
    return k->n == (size_t)n && c.p == c.end;
}

/* Gives out the turns packed_read read. */
static int packed_give(struct cairn *h, struct packed *k,
                       int (*fn)(void *arg, const struct store_msg_row *r), void *arg)
{
    int rc;
    for (size_t i = 0; i < k->n; i++) {
        struct store_msg_row r = k->r[i];
        if (r.speaker) {
            buf_reset(&k->spk);
            buf_add(&k->spk, r.speaker, k->spn[i]);
            if (k->spk.err)
                return nomem(h);
            r.speaker = k->spk.p;
        }
        if ((rc = fn(arg, &r)))
            return rc;
    }
    return CAIRN_OK;
}

/* The sessions sess[n]: each one's turns from its packed row
 * (session_turns, schema 21: one row a session instead of a row of
 * messages_meta a turn, which cost ~1,600 instructions of SQLite's VM
 * each, ~17,000 of them a hook at 100,000 messages); a session without
 * a whole row (a delete or a rewrite dropped it) from messages_meta as
 * before. In session order, each session once, as the one statement over
 * messages_meta gave them. */
static int messages_packed(struct cairn *h, const int64_t *sess, int n,
                           int (*fn)(void *arg, const struct store_msg_row *r), void *arg)
{
    struct buf ids = BUF_INIT;
    struct packed k = { NULL, NULL, 0, 0, BUF_INIT };
    sqlite3_stmt *st = NULL, *one = NULL;
    int64_t *v = NULL;
    int rc, src;
    for (int i = 1; i < n && !v; i++) {
        if (sess[i] <= sess[i - 1]) {
            if (!(v = malloc((size_t)n * sizeof *v))) {
                rc = nomem(h);
                goto out;
            }
            memcpy(v, sess, (size_t)n * sizeof *v);
            qsort(v, (size_t)n, sizeof *v, cmp_id);
            int u = 0;
            for (int j = 0; j < n; j++)
                if (!u || v[j] != v[u - 1])
                    v[u++] = v[j];
            sess = v;
            n = u;
        }
    }
    /* a dense list by one range scan (ids_dense): the rows of sessions
     * not listed are stepped over below, as the rows below each one are */
    int range = ids_dense(sess, n);
    if ((!range && (rc = ids_json(h, sess, n, &ids))) ||
        (rc = store_prepare(h, range ? "SELECT session, n, turns FROM session_turns WHERE "
                            "session BETWEEN ?1 AND ?2 ORDER BY session"
                            /* sess is ascending here (sorted above): ids_ascending */
                            : "SELECT t.session, t.n, t.turns FROM json_each(?1) j "
                            "CROSS JOIN session_turns t ON t.session = j.value", &st)))
        goto out;
    if (range) {
        sqlite3_bind_int64(st, 1, sess[0]);
        sqlite3_bind_int64(st, 2, sess[n - 1]);
    } else {
        sqlite3_bind_text(st, 1, ids.p, (int)ids.n, SQLITE_STATIC);
    }
    src = sqlite3_step(st);
    for (int i = 0; i < n && !rc; i++) {
        while (src == SQLITE_ROW && sqlite3_column_int64(st, 0) < sess[i])
            src = sqlite3_step(st);
        if (src != SQLITE_ROW && src != SQLITE_DONE) {
            rc = cairn__sqlerr(h, src, "packed turns");
            break;
        }
        const char *p = src == SQLITE_ROW && sqlite3_column_int64(st, 0) == sess[i]
                        ? (const char *)sqlite3_column_blob(st, 2) : NULL;
        int whole = p ? packed_read(&k, sess[i], p, sqlite3_column_bytes(st, 2),
                                    sqlite3_column_int64(st, 1)) : 0;
        if (whole < 0) {
            rc = nomem(h);
            break;
        }
        if (whole) {
            rc = packed_give(h, &k, fn, arg);
            continue;
        }
        if (!one && (rc = store_prepare(h, "SELECT id, session, position, role, speaker, "
                                        "created_at, ntok FROM messages INDEXED BY "
                                        "messages_meta WHERE session = ?1 ORDER BY position",
                                        &one)))
            break;
        sqlite3_reset(one);
        sqlite3_bind_int64(one, 1, sess[i]);
        rc = meta_rows(h, one, fn, arg);
    }
out:
    sqlite3_finalize(st);
    sqlite3_finalize(one);
    buf_release(&ids);
    buf_release(&k.spk);
    free(k.r);
    free(k.spn);
    free(v);
    return rc;
}

/* n < 0: every message of the store. */
static int messages_meta_sql(struct cairn *h, const int64_t *sess, int n,
                             int (*fn)(void *arg, const struct store_msg_row *r), void *arg)
{
    sqlite3_stmt *st = NULL;
    int rc;
    if (n >= 0)
        return messages_packed(h, sess, n, fn, arg);
    /* From messages_meta alone: the table's pages hold the text. The
     * external id and the length are read for the few that pack looks
     * at (store_msgs_meta). The speaker, most often NULL, is only
     * fetched as text when it is not. (The role compared in SQL, `role =
     * 'user'`, cost more in the VM than the call and strcmp save.) */
    if ((rc = store_prepare(h, "SELECT id, session, position, role, speaker, "
                            "created_at, ntok FROM messages INDEXED BY messages_meta "
                            "ORDER BY session, position", &st)))
        return rc;
    rc = meta_rows(h, st, fn, arg);
    sqlite3_finalize(st);
    return rc;
}

/* ---- the texts pack reads ---- */

/* The text's length in bytes, from the record's header through the blob
 * handle *bl (opened on first use, moved to each row after): SQL's
 * length() would read all of a TEXT value to count its characters. */
static int text_bytes(struct cairn *h, int64_t row, sqlite3_blob **bl, int *bytes)
{
    int src = *bl ? sqlite3_blob_reopen(*bl, row)
                  : sqlite3_blob_open(h->db, "main", "messages", "content", row, 0, bl);
    if (src != SQLITE_OK) {
        /* a failed reopen leaves the handle aborted: start afresh next time */
        if (*bl)
            sqlite3_blob_close(*bl);
        *bl = NULL;
        return cairn__sqlerr(h, src, "read message");
    }
    *bytes = sqlite3_blob_bytes(*bl);
    return CAIRN_OK;
}

int store_msgs_meta(struct cairn *h, struct store_msg_text *v, int n)
{
    if (h->pg)
        return pg_msgs_meta(h, v, n);
    sqlite3_stmt *st = NULL;
    sqlite3_blob *bl = NULL;
    int rc = CAIRN_OK;
    if (n <= 0)
        return CAIRN_OK;
    if ((rc = store_prepare(h, "SELECT coalesce(ext_id, CAST(position AS TEXT)) FROM messages "
                            "WHERE id = ?", &st)))
        return rc;
    for (int i = 0; i < n && !rc; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, v[i].row);
        if (sqlite3_step(st) != SQLITE_ROW) {
            rc = cairn__err(h, CAIRN_NOTFOUND, "message %lld vanished", (long long)v[i].row);
            break;
        }
        const unsigned char *t = sqlite3_column_text(st, 0);
        free(v[i].ext_id);
        v[i].ext_id = t ? strdup((const char *)t) : NULL;
        rc = v[i].ext_id ? text_bytes(h, v[i].row, &bl, &v[i].bytes) : nomem(h);
    }
    if (bl)
        sqlite3_blob_close(bl);
    sqlite3_finalize(st);
    return rc;
}

size_t store_utf8_cut(const char *s, size_t n)
{
    /* drop a sequence the cut split (stored text is valid UTF-8) */
    size_t k = n;
    while (k > 0 && n - k < 3 && ((unsigned char)s[k - 1] & 0xC0) == 0x80)
        k--;
    if (k > 0) {
        unsigned char c = (unsigned char)s[k - 1];
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (n - (k - 1) < need)
            n = k - 1;
    }
    return n;
}

/* The first max bytes of a longer text, through SQLite's incremental
 * blob I/O: only the pages that hold them are read, not the whole
 * overflow chain of a 50 MB paste. */
static int load_prefix(struct cairn *h, int64_t row, size_t max, char **text, size_t *len)
{
    sqlite3_blob *bl = NULL;
    int src = sqlite3_blob_open(h->db, "main", "messages", "content", row, 0, &bl);
    int rc = CAIRN_OK;
    if (src != SQLITE_OK) {
        rc = cairn__sqlerr(h, src, "read message");
        goto out;
    }
    size_t n = (size_t)sqlite3_blob_bytes(bl);
    if (n > max)
        n = max;
    if (!(*text = malloc(n + 1))) {
        rc = nomem(h);
        goto out;
    }
    if ((src = sqlite3_blob_read(bl, *text, (int)n, 0)) != SQLITE_OK) {
        free(*text);
        *text = NULL;
        rc = cairn__sqlerr(h, src, "read message");
        goto out;
    }
    n = store_utf8_cut(*text, n);
    (*text)[n] = '\0';
    *len = n;
out:
    if (bl)
        sqlite3_blob_close(bl);
    return rc;
}

int store_msgs_text(struct cairn *h, struct store_msg_text *v, int n, size_t max)
{
    if (h->pg)
        return pg_msgs_text(h, v, n, max);
    sqlite3_stmt *st = NULL;
    int rc = CAIRN_OK;
    for (int i = 0; i < n && !rc; i++) {
        struct store_msg_text *m = &v[i];
        free(m->text);
        m->text = NULL;
        m->len = 0;
        if (m->bytes >= 0 && (size_t)m->bytes > max) {
            rc = load_prefix(h, m->row, max, &m->text, &m->len);
            continue;
        }
        if (!st && (rc = store_prepare(h, "SELECT content FROM messages WHERE id = ?", &st)))
            break;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, m->row);
        if (sqlite3_step(st) != SQLITE_ROW) {
            rc = cairn__err(h, CAIRN_NOTFOUND, "message %lld vanished", (long long)m->row);
            break;
        }
        const char *t = (const char *)sqlite3_column_text(st, 0);
        m->len = (size_t)sqlite3_column_bytes(st, 0);
        if (!(m->text = malloc(m->len + 1))) {
            rc = nomem(h);
            break;
        }
        memcpy(m->text, t ? t : "", m->len);
        m->text[m->len] = '\0';
    }
    if (st)
        sqlite3_finalize(st);
    return rc;
}

int store_recall_memories(struct cairn *h, const char *project, int64_t now, int max,
                          int (*fn)(void *arg, const struct store_memory_row *r), void *arg)
{
    sqlite3_stmt *st;
    int rc, src;
    /* A store without memories (most, and every bench store) answers a
     * one-row probe: preparing the statement below (its correlated
     * union of links) was ~0.5 M instructions of every prompt hook
     * (issue 23, hook30), the probe ~0.05 M. */
    if ((rc = store_prepare(h, "SELECT EXISTS (SELECT 1 FROM memories)", &st)))
        return rc;
    src = sqlite3_step(st);
    int any = src == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (src != SQLITE_ROW)
        return cairn__sqlerr(h, src, "reading memories");
    if (!any)
        return CAIRN_OK;
    /* memories_scope (scope, updated_at) serves both scopes; the partial
     * indexes keep the expiry and supersede tests cheap. The links of
     * each memory come from their primary key and memory_links_dst. */
#define LIVE_X "x.superseded_by IS NULL AND (x.expires_at IS NULL OR x.expires_at > ?2)"
    if ((rc = store_prepare(h, "SELECT m.id, m.type, m.text, m.scope, m.created_at, m.updated_at,"
                            " (SELECT group_concat(o, ',') FROM ("
                            "   SELECT l.dst AS o FROM memory_links l"
                            "   JOIN memories x ON x.id = l.dst"
                            "   WHERE l.src = m.id AND l.kind = 'contradicts' AND " LIVE_X
                            "   UNION SELECT l.src FROM memory_links l"
                            "   JOIN memories x ON x.id = l.src"
                            "   WHERE l.dst = m.id AND l.kind = 'contradicts' AND " LIVE_X
                            "   ORDER BY 1)),"
                            " v.model, v.dim, v.text_hash, v.vec"
                            " FROM memories m LEFT JOIN memory_vectors v ON v.memory = m.id"
                            " WHERE m.superseded_by IS NULL"
                            " AND (m.expires_at IS NULL OR m.expires_at > ?2)"
                            " AND (?1 IS NULL OR m.scope = ?1 OR m.scope = '')"
                            " ORDER BY m.updated_at DESC, m.id DESC LIMIT ?3", &st)))
        return rc;
#undef LIVE_X
    sqlite3_bind_text(st, 1, project, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, now);
    sqlite3_bind_int(st, 3, max);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(st, 6);
        struct store_memory_row r = {
            sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
            (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
            c ? c : "", sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5),
            (const char *)sqlite3_column_text(st, 7), sqlite3_column_blob(st, 10),
            sqlite3_column_int(st, 8), sqlite3_column_int64(st, 9)
        };
        /* a blob that is not dim floats is no vector */
        if (!r.vmodel || !r.vec || r.dim <= 0 ||
            sqlite3_column_bytes(st, 10) != r.dim * (int)sizeof(float))
            r.vmodel = NULL;
        if (!r.type || !r.text || !r.scope) {
            rc = nomem(h);
            break;
        }
        if ((rc = fn(arg, &r)))
            break;
    }
    if (!rc && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "reading memories");
    sqlite3_finalize(st);
    return rc;
}
