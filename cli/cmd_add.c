/*
 * cmd_add.c: `cairn add [FILE|-]`: sessions in the JSON format of
 * docs/FORMAT.md, one object, a JSON array of them, or JSONL (any mix of
 * whitespace-separated objects). Each session is its own transaction: a
 * bad one is reported with its line and column and skipped, the others
 * land, and the exit code says something was wrong. A failure of the
 * store itself (disk full, I/O error) stops the command at once.
 *
 * The input is parsed once: json_scan finds where each session ends
 * without building anything, and cairn_add_json (src/store/ingest.c, the
 * one reader of the session format) parses each session as written.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/json.h"
#include "util/utf8.h"

/* Inputs larger than this are refused rather than read into memory. */
#define ADD_MAX_INPUT ((size_t)4 << 30)

/* The 1-based line of byte off, counting on from the last call (offsets
 * only grow). */
static size_t line_at(const char *text, size_t off, size_t *at, size_t *line)
{
    for (size_t i = *at; i < off; i++)
        *line += text[i] == '\n';
    if (off > *at)
        *at = off;
    return *line;
}

/* The 1-based column (in code points) of byte off within its line. */
static size_t column_at(const char *text, size_t off)
{
    size_t s = off, l, c;
    while (s > 0 && text[s - 1] != '\n')
        s--;
    utf8_line_col(text + s, off - s, &l, &c);
    return c;
}

/* 1 when a failure is the store's, not the session's: a full disk, an I/O
 * error, a lock held past the busy timeout, a damaged file. Every session
 * after it would fail the same way, so the command stops there instead
 * of repeating the message once per session left. */
static int store_failed(int rc)
{
    return rc == CAIRN_IO || rc == CAIRN_BUSY || rc == CAIRN_CORRUPT || rc == CAIRN_NOMEM;
}

int cmd_add(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *path = "-";
    int quiet = 0, bad = 0, stop = 0, rc;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
            quiet = 1;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_error("add: unknown option %s", argv[i]), 2;
        else
            path = argv[i];
    }
    size_t len;
    char *text = cli_read_file(path, ADD_MAX_INPUT, &len);
    if (!text)
        return 1;
    struct cairn *db;
    if ((rc = cli_open(ctx, 0, &db))) {
        free(text);
        return rc;
    }
    spool_drain(db, INT_MAX);            /* hook events that found the store locked */
    struct cairn_add_stats st = { 0 };
    size_t p = 0, docs = 0;
    const char *name = strcmp(path, "-") ? path : "stdin";
    /* JSONL (one session per line) is bounded by lines, so a broken line
     * cannot swallow the next; anything else (one pretty-printed session,
     * an array) is parsed as it comes. The first document decides. */
    int jsonl = -1;
    size_t lc_off = 0, lc_line = 1;
    while (p < len && !stop) {
        while (p < len && (text[p] == ' ' || text[p] == '\n' || text[p] == '\r' ||
                           text[p] == '\t'))
            p++;
        if (p >= len)
            break;
        const char *end = NULL, *eol = memchr(text + p, '\n', len - p);
        size_t lim = jsonl == 1 && eol ? (size_t)(eol - text) - p : len - p;
        int type = json_scan(text + p, lim, &end);
        size_t l, c;
        if (type && jsonl < 0)
            jsonl = !eol || end <= eol;
        if (!type) {
            size_t off = end && end >= text + p ? (size_t)(end - text) : p;
            l = line_at(text, off, &lc_off, &lc_line);
            c = column_at(text, off);
            cli_error("%s:%zu:%zu: malformed JSON; skipping to the next session", name, l, c);
            bad++;
            /* Resume at the next line that opens an object in column 1:
             * the next JSONL record, or nothing in a broken pretty file. */
            size_t q = p;
            for (;;) {
                const char *nl = memchr(text + q, '\n', len - q);
                if (!nl) {
                    q = len;
                    break;
                }
                q = (size_t)(nl - text) + 1;
                if (q < len && (text[q] == '{' || text[q] == '['))
                    break;
            }
            p = q;
            continue;
        }
        size_t start = p;
        p = (size_t)(end - text);
        /* line numbers only for messages, counted forward, never from 0
         * again: recounting per session made a 100k-message add quadratic */
        l = line_at(text, start, &lc_off, &lc_line);
        if (type == cJSON_Array) {
            /* Each session as written (not re-printed from a tree, which
             * would round numeric ids past 2^53); the array was scanned
             * whole, so a broken one adds nothing, and each element is
             * scanned again for its end. */
            const char *q = (const char *)memchr(text + start, '[', p - start) + 1;
            const char *qe = text + p;
            for (int k = 1;; k++) {
                const char *e1 = NULL, *r = q;
                while (r < qe && (unsigned char)*r <= ' ')
                    r++;
                if (*r == ']')
                    break;                       /* [] holds no session */
                json_scan(q, (size_t)(qe - q), &e1);
                docs++;
                if ((rc = cairn_add_json(db, q, (size_t)(e1 - q), &st))) {
                    cli_error("%s:%zu: session %d of the array: %s", name, l, k,
                              cairn_errmsg(db));
                    bad++;
                    stop = store_failed(rc);
                }
                if (stop)
                    break;
                q = memchr(e1, ',', (size_t)(qe - e1));
                if (!q)
                    break;
                q++;
            }
        } else {
            docs++;
            if ((rc = cairn_add_json(db, text + start, p - start, &st))) {
                cli_error("%s:%zu: %s", name, l, cairn_errmsg(db));
                bad++;
                stop = store_failed(rc);
            }
        }
    }
    if (!stop)
        spool_drain(db, INT_MAX);        /* and those that found it locked by this add */
    if (stop)
        cli_error("stopped: the store cannot take more (%s); the sessions before that line "
                  "are stored, that one and the rest of %s are not", cairn_errstr(rc), name);
    if (!quiet)
        printf("added %zu session%s (%zu updated), %zu message%s; %zu already present; "
               "%zu secret%s masked%s\n", st.sessions_added, cli_s(st.sessions_added),
               st.sessions_updated, st.messages_added, cli_s(st.messages_added),
               st.messages_skipped, st.secrets_masked, cli_s(st.secrets_masked),
               bad ? "; some input was refused (see above)" : "");
    if (docs == 0 && !bad)
        cli_error("%s: no sessions in the input", name);
    cairn_close(db);
    free(text);
    return bad ? 1 : 0;
}
