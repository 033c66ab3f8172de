/*
 * cmd_add.c: `cairn add [FILE|-]`: sessions in the JSON format of
 * docs/FORMAT.md, one object, a JSON array of them, or JSONL (any mix of
 * whitespace-separated objects). Each session is whole or absent: a bad
 * one is reported with its line and column and skipped, the others land,
 * and the exit code says something was wrong. A failure of the store
 * itself (disk full, I/O error) stops the command at once.
 *
 * The input is parsed once: json_scan finds where each session ends
 * without building anything, and cairn_add_json (src/store/ingest.c, the
 * one reader of the session format) parses each session as written.
 *
 * The input is read as a stream (add_stream.c) through a window that
 * holds the session being read, not the whole input: a 655 MB JSONL file
 * is added in the memory of its largest session. A JSON array is one
 * document and is read whole.
 *
 * Sessions are committed in groups (cairn_add_group): up to ADD_GROUP_N
 * sessions or ADD_GROUP_MS of writing a transaction, each session still
 * whole or absent. A store failure rolls back the open group, so the
 * message at the stop names the first line not stored.
 *
 * Two threads (add_piped): a second thread reads the input and prepares
 * each session (cairn_prepare_json: the JSON, masking, the messages'
 * tokens and dates, all that needs no store) up to ADD_AHEAD sessions
 * (and ADD_AHEAD_BYTES) ahead, while this one writes (cairn_add_prepared) and reports every step
 * in the input's order, as one thread does (add_serial, with
 * CAIRN_ADD_THREAD=0 or the setting "store.add_thread" "0").
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "add_stream.h"
#include "cli.h"
#include "util/json.h"

/* One document (a session, or an array of them) larger than this is
 * refused rather than read into memory. */
#define ADD_MAX_DOC ((size_t)4 << 30)
#define ADD_CHUNK ((size_t)1 << 16)
/* A group's bounds: 64 sessions (20 messages each in the bench file) or
 * a quarter of a second holding the write lock, whichever comes first.
 * Adding 100 bench sessions: 1,288 M instructions one transaction a
 * session, 972 M in groups (bench/README.md); a hook that finds the lock
 * held spools its event. */
#define ADD_GROUP_N 64
#ifndef ADD_GROUP_MS              /* a bench under valgrind sets it higher */
#define ADD_GROUP_MS 250
#endif

/* 1 when a failure is the store's, not the session's: a full disk, an I/O
 * error, a lock held past the busy timeout, a damaged file. Every session
 * after it would fail the same way, so the command stops there instead
 * of repeating the message once per session left. */
static int store_failed(int rc)
{
    return rc == CAIRN_IO || rc == CAIRN_BUSY || rc == CAIRN_CORRUPT || rc == CAIRN_NOMEM;
}

/* The open group: where its first session began, since when, the
 * counts before it (printed if it is lost), and whether its commit
 * failed (no session's message said why). */
struct group {
    size_t line, n;
    struct timespec t0;
    struct cairn_add_stats st0;
    int commit_failed;
};

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The group is lost: its sessions from g->line on are not stored, and
 * the counts go back to what they were before it. */
static int group_lost(struct group *g, struct cairn_add_stats *st, size_t *lost_line, int rc)
{
    *lost_line = g->line;
    *st = g->st0;
    g->n = 0;
    return rc;
}

/* After an add at `line` that returned rc (*pre: the counts before it):
 * keeps the group's bookkeeping and commits it when it is full or old.
 * Returns 0, or a store failure (then *lost_line says where the sessions
 * not stored begin if that is before `line`). */
static int group_step(struct cairn *db, struct group *g, size_t line, int rc,
                      const struct cairn_add_stats *pre, struct cairn_add_stats *st,
                      size_t *lost_line)
{
    size_t pending = cairn_add_pending(db);
    if (rc && g->n && !pending)          /* the failure took the group with it */
        return group_lost(g, st, lost_line, rc);
    if (rc)
        return store_failed(rc) ? rc : 0;
    if (!g->n && pending) {
        g->line = line;
        g->st0 = *pre;
        clock_gettime(CLOCK_MONOTONIC, &g->t0);
    }
    g->n = pending;
    if (g->n && (g->n >= ADD_GROUP_N || ms_since(&g->t0) >= ADD_GROUP_MS)) {
        if ((rc = cairn_add_commit(db))) {
            g->commit_failed = 1;
            return group_lost(g, st, lost_line, rc);
        }
        g->n = 0;
    }
    return 0;
}

/* The sessions of an array document b[start..end), each as written (not
 * re-printed from a tree, which would round numeric ids past 2^53): the
 * array was scanned whole, so a broken one gives none. */
struct arr_it {
    const char *q, *qe;
};

static void arr_init(struct arr_it *it, const char *doc, const char *qe)
{
    it->q = (const char *)memchr(doc, '[', (size_t)(qe - doc)) + 1;
    it->qe = qe;
}

/* 1 with [*s, *e) the next session, 0 after the last. */
static int arr_next(struct arr_it *it, const char **s, const char **e)
{
    const char *r = it->q, *e1 = NULL;
    if (!r)
        return 0;
    while (r < it->qe && (unsigned char)*r <= ' ')
        r++;
    if (*r == ']')
        return 0;                        /* [] holds no session */
    json_scan(it->q, (size_t)(it->qe - it->q), &e1);
    *s = it->q;
    *e = e1;
    it->q = memchr(e1, ',', (size_t)(it->qe - e1));
    if (it->q)
        it->q++;
    return 1;
}

/* The add's state, on the writing thread. */
struct adder {
    struct cairn *db;
    const char *name;
    struct cairn_add_stats st;
    struct group g;
    size_t docs, lost_line;
    int bad;
};

/* One session, found at `line` (k > 0: the k-th of an array there): its
 * JSON doc[0..n) added, or (doc NULL) pr, prepared by the reading thread.
 * Returns 0, or a store failure (group_step). */
static int add_one(struct adder *a, size_t line, int k, struct cairn_prepared *pr,
                   const char *doc, size_t n)
{
    struct cairn_add_stats pre = a->st;
    int rc = doc ? cairn_add_json(a->db, doc, n, &a->st) : cairn_add_prepared(a->db, pr, &a->st);
    a->docs++;
    if (rc && k)
        cli_error("%s:%zu: session %d of the array: %s", a->name, line, k, cairn_errmsg(a->db));
    else if (rc)
        cli_error("%s:%zu: %s", a->name, line, cairn_errmsg(a->db));
    a->bad += rc != 0;
    return group_step(a->db, &a->g, line, rc, &pre, &a->st, &a->lost_line);
}

static void bad_doc(struct adder *a, size_t line, size_t col)
{
    cli_error("%s:%zu:%zu: malformed JSON; skipping to the next session", a->name, line, col);
    a->bad++;
}

/* One thread: reads, parses and writes each session in turn. Returns 0,
 * or the store failure that stopped it. */
static int add_serial(struct adder *a, struct add_stream *r)
{
    size_t l, c, n;
    const char *doc, *s, *e;
    int type, got, rc = 0;
    while (!rc && (got = add_stream_next(r, &doc, &n, &type, &l, &c)) >= 0) {
        if (!got) {
            bad_doc(a, l, c);
        } else if (type == cJSON_Array) {
            struct arr_it it;
            arr_init(&it, doc, doc + n);
            for (int k = 1; !rc && arr_next(&it, &s, &e); k++)
                rc = add_one(a, l, k, NULL, s, (size_t)(e - s));
        } else {
            rc = add_one(a, l, 0, NULL, doc, n);
        }
    }
    return rc;
}

/* ---- two threads: one reads and prepares, the other writes ---------- */

/* The input's steps in its order: a malformed document (line, col), a
 * prepared session (k > 0: the k-th of an array at line), the end. */
enum { ITEM_BAD, ITEM_SESSION, ITEM_END };
struct item {
    int kind, k;
    size_t line, col;
    struct cairn_prepared *pr;
    size_t bytes;                        /* cairn_prepared_bytes(pr), when queued */
};

/* A few sessions ahead: memory stays a few sessions', not the input's,
 * and the writer seldom waits. And at most ADD_AHEAD_BYTES of them
 * (cairn_prepared_bytes; one session always goes in, whatever its size):
 * a prepared session may hold up to 64 MB of token records, and eight
 * such would be 512 MB (issue 23, add33). */
#define ADD_AHEAD 8
#define ADD_AHEAD_BYTES ((size_t)64 << 20)

/* Sessions the writer is done with, handed back for the reader to free:
 * freeing a session (its JSON tree, texts and token records, ~5% of the
 * writer's instructions) needs no store, and memory is best freed by the
 * thread whose malloc arena it came from (bench/README.md, add35). Full,
 * the writer frees them itself. */
#define ADD_DONE (2 * ADD_AHEAD)

struct pipeline {
    pthread_mutex_t mu;
    pthread_cond_t can_put, can_take;
    struct item q[ADD_AHEAD];
    size_t head, n;
    /* the queued and the done sessions' (cairn_prepared_bytes) */
    size_t bytes;
    struct cairn_prepared *done[ADD_DONE];
    size_t done_bytes[ADD_DONE], ndone;
    int stop;                            /* the writer stopped: the reader ends */
    struct add_stream *r;
    struct cairn_preparer *pp;
};

/* Frees the sessions the writer handed back (p->mu held: it is released
 * while they are freed, and held again on return). */
static void free_done(struct pipeline *p)
{
    struct cairn_prepared *d[ADD_DONE];
    size_t nd = p->ndone, b = 0;
    for (size_t i = 0; i < nd; i++) {
        d[i] = p->done[i];
        b += p->done_bytes[i];
    }
    p->ndone = 0;
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < nd; i++)
        cairn_prepared_free(d[i]);
    pthread_mutex_lock(&p->mu);
    p->bytes -= b;
}

/* Queues it for the writer; -1 (it freed) once the writer has stopped.
 * Frees what the writer is done with first, and while it waits. */
static int put(struct pipeline *p, struct item it)
{
    size_t b = cairn_prepared_bytes(it.pr);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->ndone) {
            free_done(p);
            continue;
        }
        if (!(p->n == ADD_AHEAD || (p->n && p->bytes + b > ADD_AHEAD_BYTES)) || p->stop)
            break;
        pthread_cond_wait(&p->can_put, &p->mu);
    }
    int stop = p->stop;
    if (!stop) {
        it.bytes = b;
        p->q[(p->head + p->n) % ADD_AHEAD] = it;
        p->n++;
        p->bytes += b;
        pthread_cond_signal(&p->can_take);
    }
    pthread_mutex_unlock(&p->mu);
    if (stop)
        cairn_prepared_free(it.pr);
    return stop ? -1 : 0;
}

static struct item take(struct pipeline *p)
{
    pthread_mutex_lock(&p->mu);
    while (!p->n)
        pthread_cond_wait(&p->can_take, &p->mu);
    struct item it = p->q[p->head];
    p->head = (p->head + 1) % ADD_AHEAD;
    p->n--;
    pthread_cond_signal(&p->can_put);
    pthread_mutex_unlock(&p->mu);
    return it;
}

/* The writer is done with it: back to the reader to free (its bytes stay
 * counted until then), or freed here when the list is full. */
static void give_back(struct pipeline *p, struct item it)
{
    if (!it.pr)
        return;
    pthread_mutex_lock(&p->mu);
    int mine = p->ndone == ADD_DONE;
    if (mine) {
        p->bytes -= it.bytes;
    } else {
        p->done[p->ndone] = it.pr;
        p->done_bytes[p->ndone++] = it.bytes;
        pthread_cond_signal(&p->can_put);
    }
    pthread_mutex_unlock(&p->mu);
    if (mine)
        cairn_prepared_free(it.pr);
}

/* The reading thread: the stream cut into sessions, each prepared
 * (cairn_prepare_json: JSON, masking, tokens, dates) and queued in the
 * input's order; then the end. It prints nothing: the writer reports
 * every step in order, as add_serial does. */
static void *reader_main(void *arg)
{
    struct pipeline *p = arg;
    size_t l, c, n;
    const char *doc, *s, *e;
    int type, got, stop = 0;
    while (!stop && (got = add_stream_next(p->r, &doc, &n, &type, &l, &c)) >= 0) {
        if (!got) {
            stop = put(p, (struct item){ ITEM_BAD, 0, l, c, NULL, 0 });
        } else if (type == cJSON_Array) {
            struct arr_it it;
            arr_init(&it, doc, doc + n);
            for (int k = 1; !stop && arr_next(&it, &s, &e); k++)
                stop = put(p, (struct item){ ITEM_SESSION, k, l, 0,
                                             cairn_prepare_json(p->pp, s, (size_t)(e - s)), 0 });
        } else {
            stop = put(p, (struct item){ ITEM_SESSION, 0, l, 0,
                                         cairn_prepare_json(p->pp, doc, n), 0 });
        }
    }
    if (!stop)
        put(p, (struct item){ ITEM_END, 0, 0, 0, NULL, 0 });
    return NULL;
}

/* add_serial's work in two threads: this one writes session N while the
 * reader prepares N + 1 and on. The same rows and messages, in the same
 * order (tests/t/t0236-add-thread.sh). Returns 0, or the store failure
 * that stopped it; *ended: the input was read to its end (a read error
 * ahead of a stop is not the add's). -1: no thread (add serially). */
static int add_piped(struct adder *a, struct add_stream *r, struct cairn_preparer *pp,
                     int *ended)
{
    struct pipeline p = { .r = r, .pp = pp };
    pthread_t t;
    int rc = 0;
    *ended = 0;
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.can_put, NULL);
    pthread_cond_init(&p.can_take, NULL);
    if (pthread_create(&t, NULL, reader_main, &p)) {
        rc = -1;
        goto out;
    }
    while (!rc) {
        struct item it = take(&p);
        if (it.kind == ITEM_END) {
            *ended = 1;
            break;
        }
        if (it.kind == ITEM_BAD)
            bad_doc(a, it.line, it.col);
        else
            rc = add_one(a, it.line, it.k, it.pr, NULL, 0);
        give_back(&p, it);
    }
    pthread_mutex_lock(&p.mu);
    p.stop = 1;
    pthread_cond_broadcast(&p.can_put);
    pthread_mutex_unlock(&p.mu);
    pthread_join(t, NULL);
    for (; p.n; p.n--, p.head = (p.head + 1) % ADD_AHEAD)
        cairn_prepared_free(p.q[p.head].pr);   /* read past a stop */
    for (size_t i = 0; i < p.ndone; i++)
        cairn_prepared_free(p.done[i]);        /* handed back after the reader's last put */
out:
    pthread_cond_destroy(&p.can_take);
    pthread_cond_destroy(&p.can_put);
    pthread_mutex_destroy(&p.mu);
    return rc;
}

int cmd_add(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *path = "-";
    int quiet = 0, bad = 0, rc = 0, stop = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
            quiet = 1;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_error("add: unknown option %s", argv[i]), 2;
        else
            path = argv[i];
    }
    struct add_stream r;
    const char *name = strcmp(path, "-") ? path : "stdin";
    FILE *f = stdin;
    if (strcmp(path, "-") && !(f = fopen(path, "rb"))) {
        cli_error("cannot open %s: %s", path, strerror(errno));
        return 1;
    }
    add_stream_init(&r, f, ADD_CHUNK, ADD_MAX_DOC);
    struct cairn *db = NULL;
    if ((rc = cli_open(ctx, 0, &db)))
        goto out;
    spool_drain(db, INT_MAX);            /* hook events that found the store locked */
    cairn_add_group(db, 1);
    struct adder a = { .db = db, .name = name };
    struct cairn_preparer *pp = NULL;
    int ended = 1;
    if ((rc = cairn_preparer_new(db, &pp))) {
        cli_error("add: %s", cairn_errmsg(db));
        rc = 1;
        goto out;
    }
    if (!pp || (rc = add_piped(&a, &r, pp, &ended)) < 0)
        rc = add_serial(&a, &r);
    cairn_preparer_free(pp);
    stop = rc != 0;
    bad = a.bad;
    struct cairn_add_stats st = a.st;
    struct group g = a.g;
    size_t docs = a.docs, lost_line = a.lost_line;
    int crc = cairn_add_group(db, 0);    /* the last group, also after a stop */
    if (crc) {
        g.commit_failed = 1;
        rc = group_lost(&g, &st, &lost_line, crc);
        stop = 1;
    }
    if (g.commit_failed)
        cli_error("%s:%zu: %s", name, lost_line, cairn_errmsg(db));
    if (r.err && ended) {
        cli_error("cannot read %s: %s", name, r.msg);
        bad++;
    }
    if (!stop)
        spool_drain(db, INT_MAX);        /* and those that found it locked by this add */
    if (stop && lost_line) {
        cli_error("stopped: the store cannot take more (%s); the sessions before line %zu "
                  "are stored, those from it on in %s are not", cairn_errstr(rc), lost_line,
                  name);
        bad++;
    } else if (stop) {
        cli_error("stopped: the store cannot take more (%s); the sessions before that line "
                  "are stored, that one and the rest of %s are not", cairn_errstr(rc), name);
    }
    if (!quiet)
        printf("added %zu session%s (%zu updated), %zu message%s; %zu already present; "
               "%zu secret%s masked%s\n", st.sessions_added, cli_s(st.sessions_added),
               st.sessions_updated, st.messages_added, cli_s(st.messages_added),
               st.messages_skipped, st.secrets_masked, cli_s(st.secrets_masked),
               bad ? "; some input was refused (see above)" : "");
    if (docs == 0 && !bad)
        cli_error("%s: no sessions in the input", name);
    if (!stop && st.messages_added)
        cli_tiers_when_due(db, "add", quiet);
    rc = bad ? 1 : 0;
out:
    cairn_close(db);
    if (f != stdin)
        fclose(f);
    add_stream_free(&r);
    return rc;
}
