/*
 * fuzz_fts_tokenize.c: libFuzzer target for cairn's word splitter on any
 * bytes (text_tokenize, both modes) and for its FTS5 glue: the input is
 * indexed in an in-memory FTS5 table with the "cairn" tokenizer, searched
 * for its own first token, and the index checked by FTS5's
 * integrity-check (which tokenizes again and compares).
 *
 * Every token must be non-empty and span bytes of the input, in order; a
 * query tokenization has no colocated parts.
 */
#include <sqlite3.h>

#include "fuzz.h"
#include "internal.h"
#include "text/tokenize.h"

struct seen {
    size_t n, count, last_start;
    int    for_query;
    char   first[64];
    size_t first_n;
};

static int on_token(void *arg, const char *tok, size_t n, size_t start, size_t end,
                    int colocated)
{
    struct seen *s = arg;
    if (n == 0 || start > end || end > s->n || (colocated && (s->for_query || !s->count)))
        abort();
    if (!colocated && s->count && start < s->last_start)
        abort();                                /* positions go forward */
    for (size_t i = 0; i < n; i++)
        (void)*(volatile const char *)(tok + i); /* the token is readable */
    if (!s->count && n < sizeof s->first) {
        memcpy(s->first, tok, n);
        s->first_n = n;
    }
    s->last_start = colocated ? s->last_start : start;
    s->count++;
    return 0;
}

static sqlite3 *fts_db(void)
{
    static sqlite3 *db;
    if (db)
        return db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK || store_fts_register(db) != SQLITE_OK ||
        sqlite3_exec(db, "CREATE VIRTUAL TABLE t USING fts5(c, tokenize='cairn')",
                     NULL, NULL, NULL) != SQLITE_OK)
        abort();
    return db;
}

static void run_sql(sqlite3 *db, const char *sql, const char *bind, int n)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        abort();
    if (bind)
        sqlite3_bind_text(st, 1, bind, n, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        ;
    if (rc != SQLITE_DONE) {
        fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
        abort();
    }
    sqlite3_finalize(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);       /* exactly size bytes */
    if (!text)
        abort();
    memcpy(text, data, size);
    struct seen s = { .n = size };
    if (text_tokenize(text, size, 0, on_token, &s))
        abort();
    struct seen q = { .n = size, .for_query = 1 };
    if (text_tokenize(text, size, 1, on_token, &q))
        abort();
    if (q.count > s.count)
        abort();                                /* queries only drop parts */

    sqlite3 *db = fts_db();
    run_sql(db, "INSERT INTO t(c) VALUES (?1)", text, (int)size);
    if (s.first_n) {
        /* the token as a quoted FTS5 string (its quotes doubled) */
        char phrase[2 * sizeof s.first + 3];
        size_t k = 0;
        phrase[k++] = '"';
        for (size_t i = 0; i < s.first_n; i++) {
            if (s.first[i] == '"')
                phrase[k++] = '"';
            phrase[k++] = s.first[i];
        }
        phrase[k++] = '"';
        run_sql(db, "SELECT rowid FROM t WHERE t MATCH ?1", phrase, (int)k);
    }
    run_sql(db, "INSERT INTO t(t) VALUES ('integrity-check')", NULL, 0);
    run_sql(db, "DELETE FROM t", NULL, 0);
    free(text);
    return 0;
}
