/*
 * pg_read.c: a PostgreSQL server as the store of the read commands, recall
 * and `cairn mcp` (store/pg_read.h, docs/POSTGRES.md "Reading the server").
 *
 * At open, one query reads the sessions the role sees through row-level
 * security (its own, and the non-private ones of projects shared with it)
 * with their counts, into the handle's in-memory SQLite store: sessions
 * and session_stats, so what reads only those (listings, scope totals,
 * sizes, the scope's sessions) runs unchanged. Their local ids follow
 * the server's push order (the first message's seq), and a message's id
 * is its seq: the order the pushing store had, so that recall's ties fall
 * as they do on the SQLite store the sessions came from.
 *
 * Messages stay on the server and are read per question, batched by
 * arrays (`= ANY`, `unnest`), never with SQL built from user text:
 *   - candidates: the postings of the query's lexemes (version 6; before,
 *     `tsv @@ tsquery` with their positions), from which the client counts
 *     each phrase as FTS5's cairn_tf does (same tokenizer, same positions);
 *   - texts for packing.
 *   - vectors of the question's model, for the dense side of recall: read
 *     once a handle and scanned in the client exactly as SQLite's are
 *     (store/vectors.c, recall/dense.c).
 * Every message's metadata (its session, length, position...) is read
 * from a handle's second question once, and again when the server's data
 * moved (store/pg_msgmap.c); the first reads it per question.
 *
 * Explicit memories and corrections (server version 5) are read whole at
 * open into the in-memory store's memories, as a pull adds them
 * (pg_msync_load): memories list, recall and the MCP memory tool read
 * them there unchanged.
 *
 * The handle is read-only: store_begin refuses every write with "use cairn
 * sync" (store/tx.c), and the in-memory store is query_only after the load.
 */
#include <stdlib.h>
#include <string.h>

#include "store/pg.h"
#include "store/pg_msgmap.h"
#include "store/pg_read.h"
#include "text/tokenize.h"
#include "util/buf.h"
#include "util/sort.h"

/* A text read with its message's metadata (pg_msgs_meta), for the
 * pg_msgs_text that follows: by seq, which a rewrite changes, so the text
 * of a seq never changes. */
struct pre {
    int64_t seq;
    char   *text;
    size_t  len;
};

/* A loaded session by its server key, for the candidates' lookup. */
struct skey {
    const char *owner, *sid;
    int64_t     id;
};

struct pg_store {
    struct pgc   pc;
    int          n;         /* sessions loaded: local id i+1 is owner[i], sid[i] */
    char       **owner, **sid;
    struct skey *by_key;    /* the n sessions in (owner, sid) order */
    struct pg_msgmap mm;    /* their messages' metadata (version 3 on) */
    int          asked;     /* pool metadata read per question so far */
    int          checked;   /* the map made current by this question's search */
    struct pre  *pre;       /* the texts the last metadata read brought */
    int          npre;
};

static int cmp_key(const void *a, const void *b)
{
    const struct skey *x = a, *y = b;
    int c = strcmp(x->owner, y->owner);
    return c ? c : strcmp(x->sid, y->sid);
}

/* The local id of the server's session (owner, sid), 0 if not loaded. */
static int64_t sess_id(const struct pg_store *ps, const char *owner, const char *sid)
{
    struct skey k = { owner, sid, 0 };
    const struct skey *f = ps->n ? bsearch(&k, ps->by_key, (size_t)ps->n, sizeof k, cmp_key)
                                 : NULL;
    return f ? f->id : 0;
}

static int64_t sess_of(void *arg, const char *owner, const char *sid)
{
    return sess_id(arg, owner, sid);
}

/* The message map, current (store/pg_msgmap.h), or NULL: read the server
 * per question. From version 7 at a handle's first question (each
 * session's pack: one statement). From version 3 to 6, whose counters
 * rewrite a session's row at every change of its messages, from a
 * handle's second question (one whose pool's metadata was read): there the
 * map is every message's row, and costs a `cairn recall` process, which
 * asks one, more than that question's reads (at 100,000 messages 450 ms a
 * process against ~230). checked: the question's search has just made the
 * map current (its pool's metadata needs no second digest). */
static int msgmap(struct cairn *h, int checked, const struct pg_msgmap **out)
{
    struct pg_store *ps = h->pg;
    int rc;
    *out = NULL;
    if (ps->pc.schema < 3 || (ps->pc.schema < 7 && !ps->asked))
        return CAIRN_OK;
    if (!(checked && ps->mm.loaded) &&
        (rc = pg_msgmap_fresh(&ps->pc, &ps->mm, ps->n, sess_of, ps)))
        return rc;
    *out = &ps->mm;
    return CAIRN_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int nomem(struct cairn *h)
{
    return cairn__err(h, CAIRN_NOMEM, "out of memory");
}

int store_is_server(const char *path)
{
    return path && (!strncmp(path, "postgres://", 11) || !strncmp(path, "postgresql://", 13));
}

static void pre_free(struct pg_store *ps)
{
    for (int i = 0; i < ps->npre; i++)
        free(ps->pre[i].text);
    free(ps->pre);
    ps->pre = NULL;
    ps->npre = 0;
}

void store_server_close(struct cairn *h)
{
    struct pg_store *ps = h->pg;
    if (!ps)
        return;
    pre_free(ps);
    pg_close(&ps->pc);
    pg_msgmap_free(&ps->mm);
    for (int i = 0; i < ps->n; i++) {
        free(ps->owner[i]);
        free(ps->sid[i]);
    }
    free(ps->owner);
    free(ps->sid);
    free(ps->by_key);
    free(ps);
    h->pg = NULL;
}

/* A text[] literal of v[n] (or of v[idx[i] - 1]) for a parameter. */
static void array_text(struct buf *b, char *const *v, const int64_t *idx, int n)
{
    buf_addc(b, '{');
    for (int i = 0; i < n; i++)
        pg_array_elem(b, idx ? v[idx[i] - 1] : v[i], !i);
    buf_addc(b, '}');
}

static void array_ids(struct buf *b, const int64_t *v, int n)
{
    buf_addc(b, '{');
    for (int i = 0; i < n; i++)
        buf_printf(b, "%s%lld", i ? "," : "", (long long)v[i]);
    buf_addc(b, '}');
}

/* The sessions sess[n] (local ids) as three array parameters: owners,
 * ids and local ids, for `unnest($1::text[], $2::text[], $3::bigint[]) AS
 * k(owner, sid, id)`. Ids the handle does not know are dropped. */
struct sess_arrays {
    struct buf owner, sid, id;
};

static int sess_arrays(struct cairn *h, const int64_t *sess, int n, struct sess_arrays *a)
{
    struct pg_store *ps = h->pg;
    int64_t *ok = calloc((size_t)(n > 0 ? n : 1), sizeof *ok);
    int k = 0;
    buf_init(&a->owner, 0);
    buf_init(&a->sid, 0);
    buf_init(&a->id, 0);
    if (!ok)
        return nomem(h);
    for (int i = 0; i < n; i++)
        if (sess[i] >= 1 && sess[i] <= ps->n)
            ok[k++] = sess[i];
    array_text(&a->owner, ps->owner, ok, k);
    array_text(&a->sid, ps->sid, ok, k);
    array_ids(&a->id, ok, k);
    free(ok);
    return a->owner.err || a->sid.err || a->id.err ? nomem(h) : CAIRN_OK;
}

static void sess_arrays_free(struct sess_arrays *a)
{
    buf_release(&a->owner);
    buf_release(&a->sid);
    buf_release(&a->id);
}

#define SESS_UNNEST " unnest($1::text[], $2::text[], $3::bigint[]) AS k(owner, sid, id) "
#define SESS_JOIN   " m.owner = k.owner::name AND m.sid = k.sid "

/* Runs sql with the session arrays as $1-$3 and extra[nx] after them. */
static PGresult *run(struct pg_store *ps, const char *sql, const struct sess_arrays *a,
                     const char *const *extra, int nx)
{
    const char *p[8];
    int np = 0;
    if (a) {
        p[np++] = a->owner.p;
        p[np++] = a->sid.p;
        p[np++] = a->id.p;
    }
    for (int i = 0; i < nx && np < 8; i++)
        p[np++] = extra[i];
    return PQexecParams(ps->pc.c, sql, np, NULL, p, NULL, NULL, 0);
}

static int scope_arrays(struct cairn *h, const struct store_scope *sc, struct sess_arrays *a)
{
    struct store_ids ids = { 0 };
    int rc = store_scope_sessions_sorted(h, sc, &ids);
    if (!rc)
        rc = sess_arrays(h, ids.v, ids.n, a);
    else
        sess_arrays(h, NULL, 0, a);
    free(ids.v);
    return rc;
}

/* ---- open: the sessions the role sees ---- */

static int load_sessions(struct cairn *h, struct pg_store *ps)
{
    sqlite3_stmt *ss = NULL, *st = NULL;
    int rc;
    /* counts as session_stats keeps them; the order is push order (the
     * first message's seq), sessions without messages last */
    PGresult *r = PQexec(ps->pc.c, ps->pc.schema >= 3
        /* version 3 keeps them on the session's row (store/pg.c) */
        ? "SELECT owner, sid, source, project, title, started_at, ended_at, meta, n_msgs, n_tok,"
          " n_user, n_bytes FROM cairn.sessions ORDER BY first_seq NULLS LAST, owner, sid"
        /* an older server: every visible message is read to count it */
        : "SELECT s.owner, s.sid, s.source, s.project, s.title, s.started_at, s.ended_at, s.meta,"
          " count(m.seq), coalesce(sum(m.ntok), 0), count(m.seq) FILTER (WHERE m.role = 'user'),"
          " coalesce(sum(octet_length(m.content)), 0)"
          " FROM cairn.sessions s LEFT JOIN cairn.messages m ON m.owner = s.owner AND"
          " m.sid = s.sid GROUP BY s.owner, s.sid ORDER BY min(m.seq) NULLS LAST, s.owner, s.sid");
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(&ps->pc, r, "read sessions");
    int n = PQntuples(r);
    if (!(ps->owner = calloc((size_t)(n ? n : 1), sizeof *ps->owner)) ||
        !(ps->sid = calloc((size_t)(n ? n : 1), sizeof *ps->sid))) {
        rc = nomem(h);
        goto out;
    }
    if ((rc = store_prepare(h, "INSERT OR IGNORE INTO sessions(id, ext_id, source, project, title,"
                            " started_at, ended_at, meta, stored_at) VALUES (?,?,?,?,?,?,?,?,0)",
                            &ss)) ||
        (rc = store_prepare(h, "INSERT INTO session_stats SELECT ?1, ?2, ?3, ?4, ?5 WHERE "
                            "EXISTS (SELECT 1 FROM sessions WHERE id = ?1)", &st)))
        goto out;
    sqlite3_exec(h->db, "BEGIN", NULL, NULL, NULL);
    for (int i = 0; i < n; i++) {
        if (!(ps->owner[i] = strdup(PQgetvalue(r, i, 0))) ||
            !(ps->sid[i] = strdup(PQgetvalue(r, i, 1)))) {
            rc = nomem(h);
            break;
        }
        ps->n = i + 1;
        /* a session id two owners hold (each its own row on the server)
         * is read as the one pushed first: ext_id is unique here */
        sqlite3_reset(ss);
        sqlite3_bind_int64(ss, 1, i + 1);
        for (int c = 1; c <= 7; c++) {
            if (PQgetisnull(r, i, c))
                sqlite3_bind_null(ss, c + 1);
            else if (c == 5 || c == 6)
                sqlite3_bind_int64(ss, c + 1, strtoll(PQgetvalue(r, i, c), NULL, 10));
            else
                sqlite3_bind_text(ss, c + 1, PQgetvalue(r, i, c), -1, SQLITE_STATIC);
        }
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, i + 1);
        for (int c = 8; c <= 11; c++)
            sqlite3_bind_int64(st, c - 6, strtoll(PQgetvalue(r, i, c), NULL, 10));
        int s1 = sqlite3_step(ss), s2 = s1 == SQLITE_DONE ? sqlite3_step(st) : s1;
        if (s2 != SQLITE_DONE) {
            rc = cairn__sqlerr(h, s2, "load sessions");
            break;
        }
    }
    sqlite3_exec(h->db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
    if (!rc && !(ps->by_key = malloc((size_t)(n ? n : 1) * sizeof *ps->by_key)))
        rc = nomem(h);
    for (int i = 0; !rc && i < n; i++)
        ps->by_key[i] = (struct skey){ ps->owner[i], ps->sid[i], i + 1 };
    if (!rc && n)
        qsort(ps->by_key, (size_t)n, sizeof *ps->by_key, cmp_key);
out:
    if (ss)
        sqlite3_finalize(ss);
    if (st)
        sqlite3_finalize(st);
    PQclear(r);
    return rc;
}

int store_server_open(struct cairn *h, const char *url)
{
    struct pg_store *ps = calloc(1, sizeof *ps);
    int rc;
    if (!ps)
        return nomem(h);
    if ((rc = pg_open(h, url, 0, &ps->pc))) {
        free(ps);
        return rc;
    }
    h->pg = ps;
    /* an older schema reads the same, slower: the next sync migrates it */
    if (ps->pc.schema < 1 || ps->pc.schema > PG_SCHEMA_VERSION) {
        rc = ps->pc.schema > PG_SCHEMA_VERSION
                 ? cairn__err(h, CAIRN_VERSION_TOO_NEW, "server %s has cairn schema version %d; "
                              "this cairn knows up to %d: upgrade cairn", ps->pc.who,
                              ps->pc.schema, PG_SCHEMA_VERSION)
                 : cairn__err(h, CAIRN_NOTFOUND, "server %s has no cairn store (schema version "
                              "%d): `cairn sync --server URL` creates it", ps->pc.who,
                              ps->pc.schema);
        return rc;
    }
    if ((rc = load_sessions(h, ps)) ||
        (ps->pc.schema >= 5 && (rc = pg_msync_load(&ps->pc))))
        return rc;
    /* nothing writes here: the commands that write are refused before */
    sqlite3_exec(h->db, "PRAGMA query_only = 1", NULL, NULL, NULL);
    return CAIRN_OK;
}

const char *store_server_name(const struct cairn *h)
{
    return h->pg ? h->pg->pc.who : NULL;
}

int store_server_schema(const struct cairn *h)
{
    return h->pg ? h->pg->pc.schema : 0;
}

/* ---- candidates ---- */

/* One phrase of the MATCH expression as FTS5 reads it: the tokens of its
 * text (query mode), colocated ones as alternatives of one place. */
struct phrase {
    int    nplace;
    int   *place;          /* place of token i */
    char **tok;
    int    ntok, cap;
};

struct pg_phrases {
    int            nt;
    struct phrase *ph;
};

struct phrase_build {
    struct phrase *p;
    int            err;
};

static int phrase_tok(void *arg, const char *tok, size_t n, size_t start, size_t end,
                      int colocated)
{
    struct phrase_build *b = arg;
    struct phrase *p = b->p;
    (void)start, (void)end;
    if (!colocated || p->nplace == 0)
        p->nplace++;
    if (n == 0)
        return 0;
    if (p->ntok == p->cap) {
        int nc = p->cap ? p->cap * 2 : 4;
        char **nt = realloc(p->tok, (size_t)nc * sizeof *nt);
        int *np = nt ? realloc(p->place, (size_t)nc * sizeof *np) : NULL;
        if (nt)
            p->tok = nt;
        if (!np) {
            b->err = 1;
            return 1;
        }
        p->place = np;
        p->cap = nc;
    }
    if (!(p->tok[p->ntok] = strndup(tok, n))) {
        b->err = 1;
        return 1;
    }
    p->place[p->ntok++] = p->nplace - 1;
    return 0;
}

static void phrases_free(struct phrase *ph, int n)
{
    for (int i = 0; ph && i < n; i++) {
        for (int k = 0; k < ph[i].ntok; k++)
            free(ph[i].tok[k]);
        free(ph[i].tok);
        free(ph[i].place);
    }
    free(ph);
}

/* The phrases of expr ("a" OR "b c", "" inside a phrase is one "), as
 * recall/query.c writes it: nt of them. */
static int parse_phrases(const char *expr, size_t len, int nt, struct phrase *ph)
{
    struct buf t = BUF_INIT;
    size_t i = 0;
    int k = 0, rc = 0;
    while (i < len && k < nt && !rc) {
        while (i < len && expr[i] != '"')
            i++;
        if (i++ >= len)
            break;
        buf_reset(&t);
        while (i < len) {
            if (expr[i] == '"' && (i + 1 >= len || expr[i + 1] != '"'))
                break;
            if (expr[i] == '"')
                i++;
            buf_addc(&t, expr[i++]);
        }
        i++;
        struct phrase_build b = { &ph[k++], 0 };
        if (t.err)
            rc = 1;
        else if (t.n)
            text_tokenize(t.p, t.n, 1, phrase_tok, &b);
        rc = rc || b.err;
    }
    buf_release(&t);
    return rc;
}

/* A tsquery literal: every token of every phrase, OR'ed; and the tokens
 * as a text[] literal (the lexemes whose positions are read). */
static void tsquery_of(const struct phrase *ph, int n, struct buf *q, struct buf *lex)
{
    int any = 0;
    buf_addc(lex, '{');
    for (int i = 0; i < n; i++)
        for (int k = 0; k < ph[i].ntok; k++) {
            const char *s = ph[i].tok[k];
            buf_adds(q, any ? " | '" : "'");
            buf_adds(lex, any ? ",\"" : "\"");
            any = 1;
            for (; *s; s++) {
                if (*s == '\'' || *s == '\\')
                    buf_addc(q, '\\');
                if (*s == '"' || *s == '\\')
                    buf_addc(lex, '\\');
                buf_addc(q, *s);
                buf_addc(lex, *s);
            }
            buf_addc(q, '\'');
            buf_addc(lex, '"');
        }
    buf_addc(lex, '}');
}

/* The positions of one lexeme in one message: "{3,17}" parsed. */
struct lexpos {
    const char *lex;
    int        *pos;
    int         n;
};

static int has_pos(const struct lexpos *lp, int nl, const char *tok, int at)
{
    for (int i = 0; i < nl; i++) {
        if (strcmp(lp[i].lex, tok))
            continue;
        for (int k = 0; k < lp[i].n; k++)
            if (lp[i].pos[k] == at)
                return 1;
    }
    return 0;
}

/* How often phrase p occurs, as FTS5 counts its instances: the positions
 * where one of its first place's tokens stands and every later place has
 * one of its tokens right after. -1: no memory. */
static int phrase_count(const struct phrase *p, const struct lexpos *lp, int nl, uint16_t *out)
{
    int ns = 0, cap = 0, *st = NULL;
    unsigned cnt = 0;
    for (int i = 0; i < nl; i++)
        for (int t = 0; t < p->ntok && p->place[t] == 0; t++) {
            if (strcmp(p->tok[t], lp[i].lex))
                continue;
            if (!lp[i].n)
                break;
            if (ns + lp[i].n > cap) {
                int *nv = realloc(st, (size_t)(cap = 2 * (ns + lp[i].n)) * sizeof *nv);
                if (!nv) {
                    free(st);
                    return -1;
                }
                st = nv;
            }
            memcpy(st + ns, lp[i].pos, (size_t)lp[i].n * sizeof *st);
            ns += lp[i].n;
            break;
        }
    if (ns)
        qsort(st, (size_t)ns, sizeof *st, sort_cmp_int);
    for (int i = 0; i < ns; i++) {
        if (i && st[i] == st[i - 1])
            continue;                    /* colocated alternatives: one start */
        int ok = 1;
        for (int pl = 1; pl < p->nplace && ok; pl++) {
            int here = 0;
            for (int t = 0; t < p->ntok && !here; t++)
                if (p->place[t] == pl)
                    here = has_pos(lp, nl, p->tok[t], st[i] + pl);
            ok = here;
        }
        cnt += (unsigned)ok;
    }
    free(st);
    *out = (uint16_t)(cnt > 65535 ? 65535 : cnt);
    return 0;
}

static int parse_positions(const char *s, int **out, int *n)
{
    int cap = 8, k = 0;
    int *v = malloc((size_t)cap * sizeof *v);
    if (!v)
        return 1;
    while (*s) {
        if (*s < '0' || *s > '9') {
            s++;
            continue;
        }
        if (k == cap) {
            int *nv = realloc(v, (size_t)(cap *= 2) * sizeof *nv);
            if (!nv) {
                free(v);
                return 1;
            }
            v = nv;
        }
        /* a tsvector position is at most 16,383: a larger one (a broken
         * server) is capped, so that start + place cannot overflow */
        long x = strtol(s, (char **)&s, 10);
        v[k++] = x > 1 << 20 ? 1 << 20 : (int)x;
    }
    *out = v;
    *n = k;
    return 0;
}

int pg_phrase_tf(const struct pg_phrases *pp, const char *const *lex, const char *const *pos,
                 int nl, uint16_t *tf)
{
    int rc = 0, any = 0;
    struct lexpos *lp = calloc((size_t)(nl > 0 ? nl : 1), sizeof *lp);
    if (!lp)
        return -1;
    for (int i = 0; i < nl && !rc; i++) {
        lp[i].lex = lex[i];
        rc = parse_positions(pos[i], &lp[i].pos, &lp[i].n) ? -1 : 0;
    }
    for (int t = 0; t < pp->nt && !rc; t++) {
        if (phrase_count(&pp->ph[t], lp, nl, &tf[t]))
            rc = -1;
        any |= tf[t] > 0;
    }
    for (int i = 0; i < nl; i++)
        free(lp[i].pos);
    free(lp);
    return rc ? rc : any;
}

void pg_phrases_free(struct pg_phrases *pp)
{
    if (!pp)
        return;
    phrases_free(pp->ph, pp->nt);
    free(pp);
}

int pg_phrases_parse(const char *expr, size_t len, int nt, struct pg_phrases **out)
{
    struct pg_phrases *pp = calloc(1, sizeof *pp);
    *out = NULL;
    if (!pp || !(pp->ph = calloc((size_t)(nt > 0 ? nt : 1), sizeof *pp->ph))) {
        free(pp);
        return CAIRN_NOMEM;
    }
    pp->nt = nt > 0 ? nt : 0;
    if (parse_phrases(expr, len, pp->nt, pp->ph)) {
        pg_phrases_free(pp);
        return CAIRN_NOMEM;
    }
    *out = pp;
    return CAIRN_OK;
}

/* Hands one message's rows [from, to) of r (its lexemes in column lc, their
 * positions in lc + 1) to fn with its counts, as message row of session
 * sess with ntok index tokens: 0, the callback's value, or CAIRN_NOMEM. */
static int one_match(PGresult *r, int from, int to, int lc, int64_t row, int64_t sess, int ntok,
                     const struct pg_phrases *pp, uint16_t *tf, store_match_fn fn, void *arg)
{
    int nl = to - from, any;
    const char **lex = malloc((size_t)(nl > 0 ? nl : 1) * sizeof *lex);
    const char **pos = malloc((size_t)(nl > 0 ? nl : 1) * sizeof *pos);
    for (int i = 0; lex && pos && i < nl; i++) {
        lex[i] = PQgetvalue(r, from + i, lc);
        pos[i] = PQgetvalue(r, from + i, lc + 1);
    }
    any = lex && pos ? pg_phrase_tf(pp, lex, pos, nl, tf) : -1;
    free(lex);
    free(pos);
    if (any < 0)
        return CAIRN_NOMEM;
    /* a lexeme of a phrase met out of its order matches no phrase: FTS5
     * would not have returned the row */
    return any ? fn(arg, row, sess, ntok, tf) : 0;
}

/* Whether a token of the question is longer than postings hold (the
 * triggers of server version 6 leave lexemes over 512 bytes out). */
static int long_token(const struct pg_phrases *pp)
{
    for (int i = 0; i < pp->nt; i++)
        for (int k = 0; k < pp->ph[i].ntok; k++)
            if (strlen(pp->ph[i].tok[k]) > 512)
                return 1;
    return 0;
}

int pg_term_matches(struct cairn *h, const struct store_scope *sc, const char *expr,
                    size_t expr_len, int nt, store_match_fn fn, void *arg)
{
    struct pg_store *ps = h->pg;
    struct store_ids scope = { 0 };
    struct buf q = BUF_INIT, lex = BUF_INIT;
    PGresult *r = NULL;
    uint16_t *tf = calloc((size_t)(nt > 0 ? nt : 1), sizeof *tf);
    struct pg_phrases *pp = NULL;
    int rc = store_scope_sessions_sorted(h, sc, &scope), found = 0;
    /* a question whose search reads no map leaves none current for its
     * pool's metadata (a flag left by an earlier question is not this
     * one's) */
    ps->checked = 0;
    if (rc)
        goto out;
    if (!tf || pg_phrases_parse(expr, expr_len, nt, &pp)) {
        rc = nomem(h);
        goto out;
    }
    tsquery_of(pp->ph, pp->nt, &q, &lex);
    if (q.err || lex.err) {
        rc = nomem(h);
        goto out;
    }
    if (!q.n || !scope.n)
        goto out;
    /* GIN on tsv finds the candidates (when `@@` is leakproof: see
     * store/pg.c's version 2); then the positions of the query's lexemes in
     * each, one row a lexeme, in the message order
     * FTS5 returns (its rowid: here the push order). The scope is the
     * loaded sessions', checked here: the server's whole set of candidates
     * comes in one round trip, not one lookup per session. */
    const char *p[] = { q.p, lex.p };
    /* Version 6: the postings of the question's lexemes alone, from their
     * index (FTS5's doclists), each message's session and length from the
     * handle's map (store/pg_msgmap.h; a join to messages for them cost
     * 20 times the postings' read). Before, or for a lexeme too long to
     * have postings: each candidate's tsvector, whose query lexemes
     * setweight marks and ts_filter keeps (in C, 3x faster than unnesting
     * every lexeme of each candidate in SQL). */
    const struct pg_msgmap *mm = NULL;
    int post = ps->pc.schema >= 6 && !long_token(pp);
    if (post && (rc = msgmap(h, 0, &mm)))
        goto out;
    if (mm)
        r = PQexecParams(ps->pc.c, "SELECT seq, lexeme, pos FROM cairn.postings"
                         " WHERE lexeme = ANY ($1::text[]) ORDER BY seq, lexeme", 1, NULL,
                         p + 1, NULL, NULL, 0);
    else if (post)      /* no map (yet): each message's key and length joined */
        r = PQexecParams(ps->pc.c, "SELECT m.seq, m.owner, m.sid, m.ntok, p.lexeme,"
                         " p.pos FROM cairn.postings p JOIN cairn.messages m"
                         " ON m.seq = p.seq WHERE p.lexeme = ANY ($1::text[])"
                         " ORDER BY p.seq, p.lexeme", 1, NULL, p + 1, NULL, NULL, 0);
    else
        r = PQexecParams(ps->pc.c, "SELECT m.seq, m.owner, m.sid, m.ntok, u.lexeme,"
                         " u.positions::text FROM cairn.messages m CROSS JOIN LATERAL"
                         " unnest(ts_filter(setweight(m.tsv, 'A', $2::text[]), '{a}')) u"
                         " WHERE m.tsv @@ $1::tsquery ORDER BY m.seq, u.lexeme",
                         2, NULL, p, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = pg_fail(&ps->pc, r, "search");
        r = NULL;
        goto out;
    }
    int n = PQntuples(r);
    for (int i = 0, j; i < n && !rc; i = j) {
        for (j = i + 1; j < n && !strcmp(PQgetvalue(r, j, 0), PQgetvalue(r, i, 0)); j++)
            ;
        int64_t row = strtoll(PQgetvalue(r, i, 0), NULL, 10), sess;
        int ntok;
        if (mm) {
            /* a message the map has not (its session not loaded, or pushed
             * during this question) is left out, as an unloaded session's */
            const struct pg_msg *m = pg_msgmap_find(mm, row);
            sess = m ? m->sess : 0;
            ntok = m ? m->ntok : 0;
        } else {
            sess = sess_id(ps, PQgetvalue(r, i, 1), PQgetvalue(r, i, 2));
            ntok = atoi(PQgetvalue(r, i, 3));
        }
        if (!sess || !bsearch(&sess, scope.v, (size_t)scope.n, sizeof *scope.v, cmp_i64))
            continue;
        rc = one_match(r, i, j, mm ? 1 : 4, row, sess, ntok, pp, tf, fn, arg);
        if (rc == CAIRN_NOMEM)
            nomem(h);
        found = 1;
    }
    /* a candidate in scope: the pool's metadata follows in this question
     * and may use the map this search made current */
    ps->checked = mm && found;
out:
    PQclear(r);
    free(scope.v);
    buf_release(&q);
    buf_release(&lex);
    pg_phrases_free(pp);
    free(tf);
    return rc;
}

/* ---- sessions by time, message metadata ---- */

static int collect(struct cairn *h, PGresult *r, struct store_ids *out)
{
    int rc = CAIRN_OK;
    for (int i = 0; i < PQntuples(r) && !rc; i++)
        rc = store_ids_push(h, out, strtoll(PQgetvalue(r, i, 0), NULL, 10));
    PQclear(r);
    return rc;
}

int pg_range_sessions(struct cairn *h, const struct store_scope *sc, int64_t from, int64_t to,
                      struct store_ids *out)
{
    struct pg_store *ps = h->pg;
    struct sess_arrays a;
    char f[24], t[24];
    int rc = scope_arrays(h, sc, &a);
    if (rc)
        goto out;
    snprintf(f, sizeof f, "%lld", (long long)from);
    snprintf(t, sizeof t, "%lld", (long long)to);
    const char *x[] = { f, t };
    /* a message's time is its own, else its session's start */
    PGresult *r = run(ps, "SELECT k.id FROM" SESS_UNNEST "JOIN cairn.sessions s ON s.owner ="
                          " k.owner::name AND s.sid = k.sid WHERE EXISTS (SELECT 1 FROM"
                          " cairn.messages m WHERE" SESS_JOIN "AND ((m.created_at >= $4 AND"
                          " m.created_at < $5) OR (m.created_at IS NULL AND s.started_at >= $4"
                          " AND s.started_at < $5))) ORDER BY k.id", &a, x, 2);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        rc = pg_fail(&ps->pc, r, "time range");
    else
        rc = collect(h, r, out);
out:
    sess_arrays_free(&a);
    return rc;
}

int pg_event_msgs(struct cairn *h, const struct store_scope *sc, int64_t from, int64_t to,
                  struct store_ids *msgs, struct store_ids *sess)
{
    struct pg_store *ps = h->pg;
    struct store_ids scope = { 0 };
    char f[24], t[24], span[24];
    PGresult *r = NULL;
    int rc = CAIRN_OK;
    /* a server before version 3 has no dates of messages */
    if (ps->pc.schema < 3)
        return CAIRN_OK;
    if ((rc = store_scope_sessions_sorted(h, sc, &scope)))
        return rc;
    snprintf(f, sizeof f, "%lld", (long long)from);
    snprintf(t, sizeof t, "%lld", (long long)to);
    snprintf(span, sizeof span, "%lld", (long long)EVENT_MAX_SPAN);
    const char *p[] = { f, t, span };
    /* as store_event_msgs: no range is longer than EVENT_MAX_SPAN, so one
     * bounded scan of the time index finds every range meeting [from, to) */
    r = PQexecParams(ps->pc.c, "SELECT m.seq, m.owner, m.sid FROM cairn.events e JOIN"
                     " cairn.messages m ON m.owner = e.owner AND m.sid = e.sid AND m.mkey = e.mkey"
                     " WHERE e.t_from > $1::bigint - $3::bigint AND e.t_from < $2::bigint AND"
                     " e.t_to > $1::bigint", 3, NULL, p, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = pg_fail(&ps->pc, r, "event dates");
        r = NULL;
        goto out;
    }
    for (int i = 0; i < PQntuples(r) && !rc; i++) {
        int64_t s = sess_id(ps, PQgetvalue(r, i, 1), PQgetvalue(r, i, 2));
        if (!s || !bsearch(&s, scope.v, (size_t)scope.n, sizeof *scope.v, cmp_i64))
            continue;
        if ((rc = store_ids_push(h, msgs, strtoll(PQgetvalue(r, i, 0), NULL, 10))) == CAIRN_OK)
            rc = store_ids_push(h, sess, s);
    }
out:
    PQclear(r);
    free(scope.v);
    return rc;
}

/* A message's speaker by its seq, for pg_messages_meta's merge. */
struct speaker {
    int64_t     seq;
    const char *name;
};

static int cmp_speaker(const void *a, const void *b)
{
    const struct speaker *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* pg_messages_meta from the handle's map: the sessions in increasing
 * order, each one's messages in position order, as the statements below
 * return them. */
static int map_meta(struct cairn *h, const struct pg_msgmap *mm, const int64_t *sess, int n,
                    int (*fn)(void *arg, const struct store_msg_row *r), void *arg)
{
    int64_t *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    int rc = CAIRN_OK;
    if (!v)
        return nomem(h);
    memcpy(v, sess, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    for (int i = 0; i < n && !rc; i++) {
        if (v[i] < 1 || v[i] > mm->nsess)
            continue;
        for (int k = mm->first[v[i] - 1]; k < mm->first[v[i]] && !rc; k++) {
            const struct pg_msg *g = &mm->msg[k];
            struct store_msg_row m = {
                .row = g->seq, .sess = g->sess, .position = g->position, .user = g->user,
                .speaker = g->speaker, .at = g->at, .ntok = g->ntok,
            };
            rc = fn(arg, &m);
        }
    }
    free(v);
    return rc;
}

int pg_messages_meta(struct cairn *h, const int64_t *sess, int n,
                     int (*fn)(void *arg, const struct store_msg_row *r), void *arg)
{
    struct pg_store *ps = h->pg;
    struct sess_arrays a;
    struct speaker *sp = NULL;
    PGresult *rs = NULL, *r = NULL;
    const struct pg_msgmap *mm;
    int rc = msgmap(h, ps->checked, &mm), ns = 0;
    ps->checked = 0;
    if (rc)
        return rc;
    if (mm)
        return map_meta(h, mm, sess, n, fn, arg);
    /* a server before version 3, or a handle's first question: the pool's
     * sessions' rows */
    ps->asked++;
    if ((rc = sess_arrays(h, sess, n, &a)))
        goto out;
    /* two statements, each on its index (server version 3): the speakers
     * of the few messages that have one, then everything else from
     * messages_meta alone, without a visit to the table's rows */
    rs = run(ps, "SELECT m.seq, m.speaker FROM" SESS_UNNEST "JOIN cairn.messages m ON" SESS_JOIN
                 "WHERE m.speaker IS NOT NULL", &a, NULL, 0);
    if (PQresultStatus(rs) != PGRES_TUPLES_OK) {
        rc = pg_fail(&ps->pc, rs, "load");
        rs = NULL;
        goto out;
    }
    ns = PQntuples(rs);
    if (!(sp = malloc((size_t)(ns ? ns : 1) * sizeof *sp))) {
        rc = nomem(h);
        goto out;
    }
    for (int i = 0; i < ns; i++)
        sp[i] = (struct speaker){ strtoll(PQgetvalue(rs, i, 0), NULL, 10), PQgetvalue(rs, i, 1) };
    qsort(sp, (size_t)ns, sizeof *sp, cmp_speaker);
    r = run(ps, "SELECT m.seq, k.id, m.position, m.role = 'user', m.created_at, m.ntok FROM"
                SESS_UNNEST "JOIN cairn.messages m ON" SESS_JOIN "ORDER BY k.id, m.position",
            &a, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = pg_fail(&ps->pc, r, "load");
        r = NULL;
        goto out;
    }
    for (int i = 0; i < PQntuples(r) && !rc; i++) {
        struct speaker k = { strtoll(PQgetvalue(r, i, 0), NULL, 10), NULL };
        const struct speaker *f = ns ? bsearch(&k, sp, (size_t)ns, sizeof *sp, cmp_speaker) : NULL;
        struct store_msg_row m = {
            .row = k.seq,
            .sess = strtoll(PQgetvalue(r, i, 1), NULL, 10),
            .position = atoi(PQgetvalue(r, i, 2)),
            .user = PQgetvalue(r, i, 3)[0] == 't',
            .speaker = f ? f->name : NULL,
            .at = PQgetisnull(r, i, 4) ? CAIRN_NO_TIME : strtoll(PQgetvalue(r, i, 4), NULL, 10),
            .ntok = atoi(PQgetvalue(r, i, 5)),
        };
        rc = fn(arg, &m);
    }
out:
    PQclear(rs);
    PQclear(r);
    free(sp);
    sess_arrays_free(&a);
    return rc;
}

/* ---- texts ---- */

/* Runs sql with the rows of v[n] as $1 (bigint[]) and extra as $2; the
 * result's rows start with the seq, in any order: *idx[i] is the row of
 * v[i], -1 when the server has none. */
static PGresult *by_rows(struct cairn *h, const struct store_msg_text *v, int n, const char *sql,
                         const char *extra, int **idx, int *rc)
{
    struct pg_store *ps = h->pg;
    struct buf ids = BUF_INIT;
    PGresult *r = NULL;
    *idx = NULL;
    buf_addc(&ids, '{');
    for (int i = 0; i < n; i++)
        buf_printf(&ids, "%s%lld", i ? "," : "", (long long)v[i].row);
    buf_addc(&ids, '}');
    if (ids.err || !(*idx = malloc((size_t)n * sizeof **idx))) {
        *rc = nomem(h);
        goto out;
    }
    const char *p[] = { ids.p, extra };
    r = PQexecParams(ps->pc.c, sql, extra ? 2 : 1, NULL, p, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        *rc = pg_fail(&ps->pc, r, "read message");
        r = NULL;
        goto out;
    }
    /* a few dozen rows a batch: a scan per row is cheaper than a map */
    for (int i = 0; i < n; i++) {
        (*idx)[i] = -1;
        for (int k = 0; k < PQntuples(r); k++)
            if (strtoll(PQgetvalue(r, k, 0), NULL, 10) == v[i].row)
                (*idx)[i] = k;
        if ((*idx)[i] < 0) {
            *rc = cairn__err(h, CAIRN_NOTFOUND, "message %lld vanished", (long long)v[i].row);
            goto out;
        }
    }
    *rc = CAIRN_OK;
out:
    buf_release(&ids);
    return r;
}

/* Texts up to this long come with their metadata: packing reads the texts
 * of the rows whose metadata it just read (store/recall_read.h), and the
 * second round trip of each pair goes (4 a recall at 10,000 messages). */
#define PRE_MAX 65536

int pg_msgs_meta(struct cairn *h, struct store_msg_text *v, int n)
{
    struct pg_store *ps = h->pg;
    int *idx, rc;
    char cap[24];
    if (n <= 0)
        return CAIRN_OK;
    pre_free(ps);
    snprintf(cap, sizeof cap, "%d", PRE_MAX);
    PGresult *r = by_rows(h, v, n, "SELECT seq, coalesce(ext_id, position::text),"
                                   " octet_length(content), CASE WHEN octet_length(content) <="
                                   " $2::integer THEN content END FROM cairn.messages"
                                   " WHERE seq = ANY($1::bigint[])", cap, &idx, &rc);
    if (!rc && !(ps->pre = calloc((size_t)n, sizeof *ps->pre)))
        rc = nomem(h);
    for (int i = 0; i < n && !rc; i++) {
        free(v[i].ext_id);
        if (!(v[i].ext_id = strdup(PQgetvalue(r, idx[i], 1))))
            rc = nomem(h);
        v[i].bytes = atoi(PQgetvalue(r, idx[i], 2));
        if (rc || PQgetisnull(r, idx[i], 3))
            continue;
        struct pre *t = &ps->pre[ps->npre];
        t->len = (size_t)PQgetlength(r, idx[i], 3);
        if (!(t->text = malloc(t->len + 1)))
            rc = nomem(h);
        else {
            memcpy(t->text, PQgetvalue(r, idx[i], 3), t->len + 1);
            t->seq = v[i].row;
            ps->npre++;
        }
    }
    free(idx);
    PQclear(r);
    return rc;
}

/* pg_msgs_text from the texts the metadata brought, when it brought every
 * one asked for: 1, else 0 (read them). The same bytes as the server's
 * left(content, max) cut to max bytes: max characters hold max bytes. */
static int pre_texts(struct cairn *h, struct store_msg_text *v, int n, size_t max, int *rc)
{
    struct pg_store *ps = h->pg;
    int *at = malloc((size_t)n * sizeof *at);
    *rc = CAIRN_OK;
    if (!at)
        return 0;
    for (int i = 0; i < n; i++) {
        at[i] = -1;
        /* a few dozen a batch: a scan is cheaper than a map */
        for (int k = 0; k < ps->npre && at[i] < 0; k++)
            if (ps->pre[k].seq == v[i].row)
                at[i] = k;
        if (at[i] < 0) {
            free(at);
            return 0;
        }
    }
    for (int i = 0; i < n && !*rc; i++) {
        const struct pre *t = &ps->pre[at[i]];
        size_t len = t->len > max ? store_utf8_cut(t->text, max) : t->len;
        free(v[i].text);
        if (!(v[i].text = malloc(len + 1))) {
            *rc = nomem(h);
            break;
        }
        memcpy(v[i].text, t->text, len);
        v[i].text[len] = '\0';
        v[i].len = len;
    }
    free(at);
    return 1;
}

int pg_msgs_text(struct cairn *h, struct store_msg_text *v, int n, size_t max)
{
    int *idx, rc;
    char cap[24];
    if (n <= 0 || pre_texts(h, v, n, max, &rc))
        return n <= 0 ? CAIRN_OK : rc;
    /* a long text's opening only: max characters hold max bytes at least */
    snprintf(cap, sizeof cap, "%zu", max > 0x7fffffff ? (size_t)0x7fffffff : max);
    PGresult *r = by_rows(h, v, n, "SELECT seq, left(content, $2::integer) FROM cairn.messages"
                                   " WHERE seq = ANY($1::bigint[])", cap, &idx, &rc);
    for (int i = 0; i < n && !rc; i++) {
        struct store_msg_text *m = &v[i];
        const char *t = PQgetvalue(r, idx[i], 1);
        size_t len = (size_t)PQgetlength(r, idx[i], 1);
        if (len > max)
            len = store_utf8_cut(t, max);
        free(m->text);
        if (!(m->text = malloc(len + 1))) {
            rc = nomem(h);
            break;
        }
        memcpy(m->text, t, len);
        m->text[len] = '\0';
        m->len = len;
    }
    free(idx);
    PQclear(r);
    return rc;
}

/* ---- vectors ---- */

int pg_any_vectors(struct cairn *h, int *any)
{
    struct pg_store *ps = h->pg;
    PGresult *r = PQexec(ps->pc.c, "SELECT EXISTS (SELECT 1 FROM cairn.vectors)");
    *any = 0;
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(&ps->pc, r, "read vectors");
    *any = PQntuples(r) == 1 && !strcmp(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    return CAIRN_OK;
}

/* A big-endian int8 of a binary result. */
static int64_t be64(const char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | (unsigned char)p[i];
    return (int64_t)v;
}

/* Hands the rows of r (seq int8, owner, sid, v: binary) to fn. */
static int vector_rows(struct cairn *h, PGresult *r,
                       int (*fn)(void *arg, int64_t msg, int64_t sess, const void *v, int bytes),
                       void *arg)
{
    struct pg_store *ps = h->pg;
    for (int i = 0; i < PQntuples(r); i++) {
        if (PQgetlength(r, i, 0) != 8)
            continue;
        int64_t sess = sess_id(ps, PQgetvalue(r, i, 1), PQgetvalue(r, i, 2));
        if (!sess)
            continue;                   /* a session pushed after the open */
        if (fn(arg, be64(PQgetvalue(r, i, 0)), sess, PQgetvalue(r, i, 3),
               PQgetlength(r, i, 3)) < 0)
            return nomem(h);
    }
    return CAIRN_OK;
}

/* as store/vectors.c's other_model: the first model below this one in
 * byte order, else the first above */
static int other_model(struct cairn *h, const char *model, char *other, size_t n)
{
    struct pg_store *ps = h->pg;
    const char *p[] = { model };
    PGresult *r = PQexecParams(ps->pc.c, "SELECT coalesce((SELECT min(model COLLATE \"C\") FROM"
                               " cairn.vectors WHERE model < $1 COLLATE \"C\"), (SELECT"
                               " min(model COLLATE \"C\") FROM cairn.vectors WHERE model > $1"
                               " COLLATE \"C\"), '')", 1, NULL, p, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(&ps->pc, r, "read vectors");
    snprintf(other, n, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return CAIRN_OK;
}

int pg_vectors(struct cairn *h, const char *model, int dim,
               int (*fn)(void *arg, int64_t msg, int64_t sess, const void *v, int bytes),
               void *arg, char *other, size_t n)
{
    struct pg_store *ps = h->pg;
    char d[16];
    snprintf(d, sizeof d, "%d", dim);
    const char *p[] = { model, d };
    /* binary: the int8 or f32 bytes as pushed, 4x fewer than bytea's hex
     * (100,000 512-d vectors: 51 MB, not 205). The order is the SQLite
     * store's (msg, piece): ties in the scan fall the same way. */
    PGresult *r = PQexecParams(ps->pc.c, "SELECT m.seq, v.owner::text, v.sid, v.v"
                               " FROM cairn.vectors v JOIN cairn.messages m ON m.owner = v.owner"
                               " AND m.sid = v.sid AND m.mkey = v.mkey WHERE v.model = $1 AND"
                               " v.dim = $2::integer ORDER BY m.seq, v.piece",
                               2, NULL, p, NULL, NULL, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(&ps->pc, r, "read vectors");
    int rc = vector_rows(h, r, fn, arg);
    PQclear(r);
    return rc ? rc : other_model(h, model, other, n);
}

int pg_vector_index(struct cairn *h, int dim, int *has)
{
    struct pg_store *ps = h->pg;
    char name[64];
    *has = 0;
    if (!ps->pc.has_emb)
        return CAIRN_OK;
    snprintf(name, sizeof name, "cairn.vectors_hnsw_%d", dim);
    const char *p[] = { name };
    PGresult *r = PQexecParams(ps->pc.c, "SELECT to_regclass($1) IS NOT NULL", 1, NULL, p, NULL,
                               NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(&ps->pc, r, "read vectors");
    *has = !strcmp(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    /* the candidates the index walks: more than the 400 asked for, and
     * on past the rows row-level security or the scope filter out
     * (pgvector 0.8's iterative scan) */
    r = PQexec(ps->pc.c, "SELECT set_config('hnsw.ef_search', '800', false),"
                         " set_config('hnsw.iterative_scan', 'relaxed_order', false)");
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(&ps->pc, r, "read vectors");
    PQclear(r);
    return CAIRN_OK;
}

int pg_vector_count(struct cairn *h, const char *model, int dim, int64_t *msgs, char *other,
                    size_t n)
{
    struct pg_store *ps = h->pg;
    char d[16];
    snprintf(d, sizeof d, "%d", dim);
    const char *p[] = { model, d };
    PGresult *r = PQexecParams(ps->pc.c, "SELECT count(*) FROM (SELECT DISTINCT owner, sid, mkey"
                               " FROM cairn.vectors WHERE model = $1 AND dim = $2::integer) x",
                               2, NULL, p, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(&ps->pc, r, "read vectors");
    *msgs = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return other_model(h, model, other, n);
}

int pg_vectors_near(struct cairn *h, const char *model, int dim, const float *q, int k,
                    const int64_t *allowed, int n_allowed,
                    int (*fn)(void *arg, int64_t msg, int64_t sess, const void *v, int bytes),
                    void *arg)
{
    struct pg_store *ps = h->pg;
    struct sess_arrays a;
    struct buf qv = BUF_INIT, sql = BUF_INIT;
    char kk[16];
    PGresult *r = NULL;
    int rc = sess_arrays(h, allowed, allowed ? n_allowed : 0, &a);
    if (rc)
        goto out;
    buf_addc(&qv, '[');
    for (int i = 0; i < dim; i++)
        buf_printf(&qv, "%s%.9g", i ? "," : "", q[i]);
    buf_addc(&qv, ']');
    snprintf(kk, sizeof kk, "%d", k);
    /* dim is ours (an int): in the text, so the planner matches the
     * partial index vectors_hnsw_<dim> (WHERE dim = <dim>) */
    buf_printf(&sql, "SELECT m.seq, v.owner::text, v.sid, v.v FROM (SELECT owner, sid, mkey,"
               " piece, v FROM cairn.vectors WHERE model = $1 AND dim = %d%s ORDER BY"
               " emb::vector(%d) <=> $2::vector(%d) LIMIT $3::integer) v JOIN cairn.messages m"
               " ON m.owner = v.owner AND m.sid = v.sid AND m.mkey = v.mkey"
               " ORDER BY m.seq, v.piece", dim,
               allowed ? " AND (owner, sid) IN (SELECT k.owner::name, k.sid FROM"
                         " unnest($4::text[], $5::text[]) AS k(owner, sid))" : "", dim, dim);
    if (qv.err || sql.err) {
        rc = nomem(h);
        goto out;
    }
    const char *p[5] = { model, qv.p, kk, a.owner.p, a.sid.p };
    r = PQexecParams(ps->pc.c, sql.p, allowed ? 5 : 3, NULL, p, NULL, NULL, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = pg_fail(&ps->pc, r, "search vectors");
        r = NULL;
        goto out;
    }
    rc = vector_rows(h, r, fn, arg);
out:
    PQclear(r);
    sess_arrays_free(&a);
    buf_release(&qv);
    buf_release(&sql);
    return rc;
}

int pg_messages(struct cairn *h, int64_t sess, const char *ext_id, int from, int to,
                cairn_message_cb cb, void *arg)
{
    struct pg_store *ps = h->pg;
    struct sess_arrays a;
    char f[16], t[16];
    int rc = sess_arrays(h, &sess, 1, &a);
    if (rc)
        goto out;
    snprintf(f, sizeof f, "%d", from < 0 ? 0 : from);
    snprintf(t, sizeof t, "%d", to);
    const char *x[] = { f, t };
    PGresult *r = run(ps, "SELECT coalesce(m.ext_id, ''), m.role, m.speaker, m.content,"
                          " m.created_at, m.position FROM" SESS_UNNEST "JOIN cairn.messages m ON"
                          SESS_JOIN "WHERE m.position >= $4::integer AND ($5::integer < 0 OR"
                          " m.position <= $5::integer) ORDER BY m.position", &a, x, 2);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = pg_fail(&ps->pc, r, "read messages");
        goto out;
    }
    for (int i = 0; i < PQntuples(r) && !rc; i++) {
        struct cairn_message_info mi = {
            .session = ext_id,
            .id = PQgetvalue(r, i, 0),
            .role = PQgetvalue(r, i, 1),
            .speaker = PQgetisnull(r, i, 2) ? NULL : PQgetvalue(r, i, 2),
            .content = PQgetvalue(r, i, 3),
            .content_len = (size_t)PQgetlength(r, i, 3),
            .at = PQgetisnull(r, i, 4) ? CAIRN_NO_TIME : strtoll(PQgetvalue(r, i, 4), NULL, 10),
            .position = atoi(PQgetvalue(r, i, 5)),
        };
        int c = cb(arg, &mi);
        if (c)
            rc = c > 0 ? c : CAIRN_ERROR;
    }
    PQclear(r);
out:
    sess_arrays_free(&a);
    return rc;
}
