/*
 * fuzz_query.c: libFuzzer target for the question parser (query_parse:
 * terms, stop words, the time expression, the first/last cue;
 * query_match_expr; query_first_person) and for the
 * whole read path behind it: cairn_recall of the question on a small
 * in-memory store with tiny-bert vectors, so the FTS5 MATCH expression,
 * the dense side and packing all see it.
 *
 * Input: one byte of options, then the question (a pasted transcript's
 * speaker labels too: "Bart: ...\nBart: ..."). Every term must come
 * from the question, a speaker label needs a colon, and any question must recall cleanly (an FTS5
 * syntax error or a pack over the budget is a bug).
 */
#include "fuzz.h"
#include "cairn.h"
#include "recall/recall.h"
#include "util/buf.h"

static const char store_json[] =
    "{\"id\":\"s1\",\"source\":\"fuzz\",\"project\":\"p\",\"title\":\"Lisbon\","
    "\"started_at\":\"2026-03-02T09:12:00\",\"messages\":["
    "{\"role\":\"user\",\"content\":\"I'm moving to Lisbon in March for the job at Feedzai.\","
    "\"at\":\"2026-03-02T09:12:00\"},"
    "{\"role\":\"assistant\",\"content\":\"Look at Idealista; src/store.c v1.2.3 snake_case \\\"quoted\\\"\"},"
    "{\"role\":\"user\",\"content\":\"\xe6\x88\x91\xe4\xb8\x8a\xe5\x91\xa8\xe5\x8e\xbb\xe4\xba\x86"
    "\xe5\x8c\x97\xe4\xba\xac\xe5\xbc\x80\xe4\xbc\x9a\",\"at\":\"2026-03-20T10:00:00\"}]}";

static struct cairn *open_store(void)
{
    static struct cairn *db;
    if (db)
        return db;
    char model[1024];
    snprintf(model, sizeof model, "%s/embed/tiny-bert", FUZZ_DATA);
    fuzz_tmpdir();
    struct cairn_add_stats st = { 0 };
    if (cairn_open(":memory:", 0, &db) != CAIRN_OK ||
        cairn_set(db, "embed.model", model) != CAIRN_OK ||
        cairn_add_json(db, store_json, sizeof store_json - 1, &st) != CAIRN_OK)
        abort();
    return db;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cairn *db = open_store();
    if (!size)
        return 0;
    unsigned opt = data[0];
    char *text = fuzz_strdup((struct fuzz_part){ (const char *)data + 1, size - 1, 0 });
    size_t n = strlen(text);

    /* the first/last cue: one of the two, maybe by day, never both */
    int ord = query_ordinal(text, n);
    if ((ord & ~(ORD_FIRST | ORD_LAST | ORD_DAY)) || (ord && !(ord & (ORD_FIRST | ORD_LAST))) ||
        ((ord & ORD_FIRST) && (ord & ORD_LAST)))
        abort();

    struct query q;
    if (query_parse(&q, text, 1774747800, opt & 1) == CAIRN_OK) {
        /* a speaker label (a transcript's "Name:") needs a colon */
        int colon = strchr(text, ':') || strstr(text, "\xef\xbc\x9a");
        for (int i = 0; i < q.nt; i++) {
            const char *s = q.t[i].surface;
            if (!*q.t[i].norm || !*s || !strstr(text, s) || (q.t[i].label && !colon))
                abort();
        }
        struct buf expr = BUF_INIT;
        query_match_expr(&q, &expr);
        if (!expr.err && q.nt && !expr.n)
            abort();
        buf_release(&expr);
        query_free(&q);
    }

    /* the question in a speaker's words: never longer than twice the
     * question (each word at most as long, a space before it) */
    struct buf fp = BUF_INIT;
    int fr = query_first_person(text, n, "Lisbon Mia", &fp);
    if (fr < -1 || fr > 1 || (fr == 1 && (!fp.n || fp.n > 2 * n)) || (fr == -1 && !fp.err))
        abort();
    buf_release(&fp);

    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    static const int methods[] = { CAIRN_METHOD_DEFAULT, CAIRN_METHOD_KEYWORD,
                                   CAIRN_METHOD_NO_TIME, CAIRN_METHOD_HYBRID };
    o.method = methods[(opt >> 1) & 3];
    o.budget = (opt & 8) ? 40 : 0;
    o.now = 1774747800;
    o.flags = (opt & 16) ? CAIRN_RECALL_MATCHED_ONLY : 0;
    o.explain = (opt >> 5) & 1;
    o.exclude_items = (opt & 64) ? "s1\t1\n" : NULL;
    int rc = cairn_recall(db, text, &o, &r);
    if (rc == CAIRN_OK) {
        if (r->tokens > r->budget || !r->text)
            abort();
        for (size_t i = 0; i < r->n_items; i++)
            if (!r->items[i].session || !r->items[i].message || !r->items[i].role)
                abort();
        const char *why;
        cairn_inject_gate(r, &why);
    } else if (!(rc == CAIRN_INVALID && n == 0) && rc != CAIRN_TOOBIG) {
        fprintf(stderr, "recall: %s: %s\n", cairn_errstr(rc), cairn_errmsg(db));
        abort();
    }
    cairn_recall_free(r);
    free(text);
    return 0;
}
