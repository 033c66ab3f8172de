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
 */
#include <errno.h>
#include <limits.h>
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

/* Adds each session of an array document b[start..end) as written (not
 * re-printed from a tree, which would round numeric ids past 2^53): the
 * array was scanned whole, so a broken one adds nothing. */
static int add_array(struct cairn *db, const char *name, size_t line, const char *q,
                     const char *qe, struct cairn_add_stats *st, size_t *docs, int *bad,
                     struct group *g, size_t *lost_line)
{
    int rc = 0;
    q = (const char *)memchr(q, '[', (size_t)(qe - q)) + 1;
    for (int k = 1;; k++) {
        const char *e1 = NULL, *r = q;
        while (r < qe && (unsigned char)*r <= ' ')
            r++;
        if (*r == ']')
            break;                       /* [] holds no session */
        json_scan(q, (size_t)(qe - q), &e1);
        (*docs)++;
        struct cairn_add_stats pre = *st;
        if ((rc = cairn_add_json(db, q, (size_t)(e1 - q), st))) {
            cli_error("%s:%zu: session %d of the array: %s", name, line, k, cairn_errmsg(db));
            (*bad)++;
        }
        if ((rc = group_step(db, g, line, rc, &pre, st, lost_line)))
            return rc;
        q = memchr(e1, ',', (size_t)(qe - e1));
        if (!q)
            break;
        q++;
    }
    return 0;
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
    struct cairn_add_stats st = { 0 };
    struct group g = { 0 };
    size_t docs = 0, l, c, n, lost_line = 0;
    const char *doc;
    int type, got;
    while (!stop && (got = add_stream_next(&r, &doc, &n, &type, &l, &c)) >= 0) {
        if (!got) {
            cli_error("%s:%zu:%zu: malformed JSON; skipping to the next session", name, l, c);
            bad++;
        } else if (type == cJSON_Array) {
            rc = add_array(db, name, l, doc, doc + n, &st, &docs, &bad, &g, &lost_line);
            stop = rc != 0;
        } else {
            docs++;
            struct cairn_add_stats pre = st;
            if ((rc = cairn_add_json(db, doc, n, &st))) {
                cli_error("%s:%zu: %s", name, l, cairn_errmsg(db));
                bad++;
            }
            rc = group_step(db, &g, l, rc, &pre, &st, &lost_line);
            stop = rc != 0;
        }
    }
    int crc = cairn_add_group(db, 0);    /* the last group, also after a stop */
    if (crc) {
        g.commit_failed = 1;
        rc = group_lost(&g, &st, &lost_line, crc);
        stop = 1;
    }
    if (g.commit_failed)
        cli_error("%s:%zu: %s", name, lost_line, cairn_errmsg(db));
    if (r.err) {
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
