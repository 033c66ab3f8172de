/*
 * test_recall_memories: explicit memories in recall (src/recall/memories.c,
 * docs/MEMORIES.md). On pools built by hand: the relevance floor, the order,
 * the share of the budget, contradicting memories shown together and
 * flagged, the hook's exclusion list, a memory cut to fit. Through a store
 * (cairn_recall): memories come first in the text and the items, marked;
 * the budget stays a hard limit; scope, supersede and removal are obeyed;
 * and a store with no memory that matches recalls byte for byte what it
 * recalled before any memory was added. Vectors: the fusion on a pool,
 * and with the tiny test model the vectors add, edit, undo, backfill and
 * reindex leave; the migration of a version-8 store.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "t_open.h"
#include "t_store.h"
#include "recall/recall.h"
#include "store/memory.h"
#include "recall/policy.h"
#include "text/tokcount.h"
#include "text/tokenize.h"

static char dir[] = "/tmp/cairn-test-recall-mem-XXXXXX";

/* ---- pools by hand ---- */

static int first_tok(void *arg, const char *tok, size_t n, size_t s, size_t e, int col)
{
    *(char **)arg = strndup(tok, n);
    return 1;
}

static void query_of(struct query *q, const char *const *words)
{
    memset(q, 0, sizeof *q);
    for (int i = 0; words[i]; i++) {
        char *norm = NULL;
        text_tokenize(words[i], strlen(words[i]), 1, first_tok, &norm);
        q->t[i].norm = norm;
        q->t[i].surface = strdup(words[i]);
        q->nt++;
    }
}

static void test_floor_and_order(void)
{
    static const char *const words[] = { "basil", "watering", NULL };
    struct query q;
    struct pool p = { 0 };
    struct mem_pool mp = { 0 };
    struct buf b = BUF_INIT;
    query_of(&q, words);
    p.total_msgs = 100;      /* neither word is in the record: both rare */
    T_EQ_INT(mem_push(&mp, 1, "fact", "the shed key is under the stone", "", 10, 10, ""), 0);
    T_EQ_INT(mem_push(&mp, 2, "procedure", "basil needs watering at dawn", "", 20, 20, ""), 0);
    T_EQ_INT(mem_push(&mp, 3, "fact", "basil is a herb", "", 30, 30, ""), 0);
    T_EQ_INT(mem_push(&mp, 4, "preference", "watering the basil: twice, never basil leaves wet",
                      "", 40, 40, ""), 0);
    T_EQ_INT(mem_score(&mp, &q, &p, 1, NULL, 0, NULL), 0);
    /* one word of two, and the commoner one: under the floor */
    T_EQ_INT(mp.v[0].pass, 0);
    T_EQ_INT(mp.v[2].pass, 0);
    T_CHECK(mp.v[2].cover > 0.3 && mp.v[2].cover < 0.5);
    T_EQ_INT(mp.v[1].pass, 1);
    T_EQ_INT(mp.v[3].pass, 1);
    /* the two that pass rank before the others, by score */
    T_CHECK(mp.v[1].rank < 2 && mp.v[3].rank < 2);
    int best = mp.v[1].score > mp.v[3].score ? 1 : 3;
    T_EQ_INT(mp.v[best].rank, 0);
    int tok = mem_pack(&mp, 4000, NULL, &b);
    T_CHECK(tok > 0);
    T_EQ_INT(mp.norder, 2);
    T_EQ_INT(mp.order[0], best);
    T_EQ_INT(mp.order[1], 4 - best);
    buf_addc(&b, '\0');
    T_CHECK(strncmp(b.p, best == 3 ? "[memory #4 · preference · " : "[memory #2 · procedure · ",
                    best == 3 ? 28 : 27) == 0);
    T_CHECK(strstr(b.p, "] basil needs watering at dawn\n") != NULL);
    T_CHECK(strstr(b.p, "shed") == NULL);
    T_EQ_INT(tok, text_count_tokens(b.p, strlen(b.p)) + 1);
    /* the hook's "never twice" list leaves a memory out */
    tok = mem_pack(&mp, 4000, "s1\t3\n\tmemory:4\n", &b);
    T_EQ_INT(mp.norder, 1);
    T_EQ_INT(mp.order[0], 1);
    /* an unrelated question gets none */
    static const char *const other[] = { "invoice", "deadline", NULL };
    query_free(&q);
    query_of(&q, other);
    T_EQ_INT(mem_score(&mp, &q, &p, 1, NULL, 0, NULL), 0);
    T_EQ_INT(mem_pack(&mp, 4000, NULL, &b), 0);
    T_EQ_INT(mp.norder, 0);
    T_EQ_INT((int)b.n, 0);
    query_free(&q);
    mem_pool_free(&mp);
    buf_release(&b);
}

static void test_share_and_cut(void)
{
    static const char *const words[] = { "zebra", NULL };
    struct query q;
    struct pool p = { 0 };
    struct mem_pool mp = { 0 };
    struct buf b = BUF_INIT;
    char big[4000];
    query_of(&q, words);
    big[0] = '\0';
    for (int i = 0; i < 120; i++)
        strcat(big, "zebra stripes run ");
    for (int i = 1; i <= 12; i++)
        T_EQ_INT(mem_push(&mp, i, "fact", "a zebra fact", "", i, i, ""), 0);
    T_EQ_INT(mem_score(&mp, &q, &p, 1, NULL, 0, NULL), 0);
    /* at most MEM_MAX_ITEMS, newest first among equals */
    int tok = mem_pack(&mp, 4000, NULL, &b);
    T_CHECK(tok > 0 && tok <= 800);
    T_EQ_INT(mp.norder, 8);
    T_EQ_INT((int)mp.v[mp.order[0]].id, 12);
    /* at most a fifth of the budget */
    tok = mem_pack(&mp, 200, NULL, &b);
    T_CHECK(tok > 0 && tok <= 40);
    T_CHECK(mp.norder < 8);
    tok = mem_pack(&mp, 30, NULL, &b);
    T_EQ_INT(tok, 0);
    mem_pool_free(&mp);
    /* a long memory is cut to what is left of the share */
    T_EQ_INT(mem_push(&mp, 1, "fact", big, "", 1, 1, ""), 0);
    T_EQ_INT(mem_score(&mp, &q, &p, 1, NULL, 0, NULL), 0);
    tok = mem_pack(&mp, 1000, NULL, &b);
    T_CHECK(tok > 100 && tok <= 200);
    T_EQ_INT(mp.norder, 1);
    T_EQ_INT(mp.v[0].picked, 2);
    buf_addc(&b, '\0');
    T_CHECK(strstr(b.p, "run…\n") != NULL || strstr(b.p, "…\n") != NULL);
    query_free(&q);
    mem_pool_free(&mp);
    buf_release(&b);
}

static void test_contradictions(void)
{
    static const char *const words[] = { "deploy", "friday", NULL };
    struct query q;
    struct pool p = { 0 };
    struct mem_pool mp = { 0 };
    struct buf b = BUF_INIT;
    query_of(&q, words);
    p.total_msgs = 10;
    T_EQ_INT(mem_push(&mp, 5, "decision", "we deploy on friday", "", 50, 50, "9"), 0);
    T_EQ_INT(mem_push(&mp, 7, "fact", "coffee is in the kitchen", "", 70, 70, ""), 0);
    T_EQ_INT(mem_push(&mp, 9, "correction", "never ship on a weekday's end", "", 90, 90, "5"), 0);
    T_EQ_INT(mem_score(&mp, &q, &p, 1, NULL, 0, NULL), 0);
    T_EQ_INT(mp.v[2].pass, 0);          /* below the floor on its own */
    T_CHECK(mem_pack(&mp, 300, NULL, &b) > 0);
    T_EQ_INT(mp.norder, 2);             /* shown with the one that passed */
    T_EQ_INT(mp.order[0], 0);
    T_EQ_INT(mp.order[1], 2);
    buf_addc(&b, '\0');
    T_CHECK(strstr(b.p, "[memory #5 · decision · ") != NULL);
    T_CHECK(strstr(b.p, " · contradicts #9] we deploy on friday\n") != NULL);
    T_CHECK(strstr(b.p, " · contradicts #5] never ship") != NULL);
    /* the partner the hook already showed: the flag still names it */
    T_CHECK(mem_pack(&mp, 300, "\tmemory:9", &b) > 0);
    T_EQ_INT(mp.norder, 1);
    buf_addc(&b, '\0');
    T_CHECK(strstr(b.p, "contradicts #9") != NULL);
    /* dropping the last one */
    T_CHECK(mem_pack(&mp, 300, NULL, &b) > 0);
    T_CHECK(mem_unpick_last(&mp, &b) > 0);
    T_EQ_INT(mp.norder, 1);
    query_free(&q);
    mem_pool_free(&mp);
    buf_release(&b);
}

/* A memory that shares no word with the question passes on its vector
 * alone, ranks by the fused ranks, and a vector of another model or of
 * another size is not compared. */
/* a vector model id as store/vectors.c makes it: the measured model's */
#define M1 "use-lite-en:0123456789abcdef"

static void test_dense(void)
{
    static const char *const words[] = { "indentation", NULL };
    struct query q;
    struct pool p = { 0 };
    struct mem_pool mp = { 0 };
    struct buf b = BUF_INIT;
    const float qv[3] = { 1, 0, 0 }, near[3] = { 0.9f, 0.3f, 0 }, far[3] = { 0, 1, 0 };
    query_of(&q, words);
    T_EQ_INT(mem_push(&mp, 1, "preference", "two spaces, never tabs", "", 1, 1, ""), 0);
    T_EQ_INT(mem_push_vec(&mp, M1, near, 3), 0);
    T_EQ_INT(mem_push(&mp, 2, "fact", "the kettle is broken", "", 2, 2, ""), 0);
    T_EQ_INT(mem_push_vec(&mp, M1, far, 3), 0);
    T_EQ_INT(mem_push(&mp, 3, "fact", "tabs in makefiles", "", 3, 3, ""), 0);
    T_EQ_INT(mem_push_vec(&mp, "m2", qv, 3), 0);
    T_EQ_INT(mem_push(&mp, 4, "fact", "indentation: see the style guide", "", 4, 4, ""), 0);
    T_EQ_INT(mem_any_vec(&mp), 1);
    T_EQ_INT(mem_score(&mp, &q, &p, 1, qv, 3, M1), 0);
    T_EQ_INT(mp.v[0].has_cos, 1);
    T_CHECK(mp.v[0].cos > 0.94 && mp.v[0].cos < 0.96);
    T_EQ_INT(mp.v[0].pass, 1);              /* by its vector */
    T_EQ_INT(mp.v[1].pass, 0);              /* cosine 0, no word */
    T_EQ_INT(mp.v[2].has_cos, 0);           /* another model's vector */
    T_EQ_INT(mp.v[2].pass, 0);
    T_EQ_INT(mp.v[3].pass, 1);              /* by its words */
    /* one ranking each: the fused scores tie, the newer leads */
    T_EQ_INT(mp.v[3].rank, 0);
    T_EQ_INT(mp.v[0].rank, 1);
    T_EQ_INT(mem_pack(&mp, 1000, NULL, &b) > 0, 1);
    T_EQ_INT(mp.norder, 2);
    /* without the question's vector, words only */
    T_EQ_INT(mem_score(&mp, &q, &p, 1, NULL, 0, NULL), 0);
    T_EQ_INT(mp.v[0].pass, 0);
    T_EQ_INT(mp.v[0].has_cos, 0);
    /* a model the registry does not know: its cosine scale was never
     * measured, so a vector alone passes nothing (recall/policy.h) */
    struct mem_pool mp2 = { 0 };
    T_EQ_INT(mem_push(&mp2, 1, "preference", "two spaces, never tabs", "", 1, 1, ""), 0);
    T_EQ_INT(mem_push_vec(&mp2, "my-model:1", near, 3), 0);
    T_EQ_INT(mem_score(&mp2, &q, &p, 1, qv, 3, "my-model:1"), 0);
    T_EQ_INT(mp2.v[0].has_cos, 1);
    T_EQ_INT(mp2.v[0].pass, 0);
    mem_pool_free(&mp2);
    /* a question vector of another size compares nothing */
    const float q4[4] = { 1, 0, 0, 0 };
    T_EQ_INT(mem_score(&mp, &q, &p, 1, q4, 4, M1), 0);
    T_EQ_INT(mp.v[0].has_cos, 0);
    query_free(&q);
    mem_pool_free(&mp);
    buf_release(&b);
}

/* ---- through the store ---- */

static void add_session(struct cairn *h, const char *id, const char *project,
                        const char *const *texts, int64_t t0)
{
    struct cairn_message m[8];
    int n = 0;
    for (; texts[n]; n++) {
        memset(&m[n], 0, sizeof m[n]);
        m[n].role = n % 2 ? "assistant" : "user";
        m[n].content = texts[n];
        m[n].at = t0 + n * 60;
    }
    struct cairn_session s = { 0 };
    s.id = id;
    s.project = project;
    s.started_at = t0;
    s.ended_at = CAIRN_NO_TIME;
    s.messages = m;
    s.n_messages = (size_t)n;
    T_EQ_INT(cairn_add_session(h, &s, NULL), CAIRN_OK);
}

static struct cairn_recall *recall(struct cairn *h, const char *qtext, int budget,
                                   const char *project)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    o.budget = budget;
    o.now = 1770000000;
    o.project = project;
    o.explain = 1;
    T_EQ_INT(cairn_recall(h, qtext, &o, &r), CAIRN_OK);
    return r;
}

static int64_t remember(struct cairn *h, const char *type, const char *text, const char *scope,
                        int64_t replaces)
{
    struct cairn_memory_new m = { 0 };
    int64_t id = 0;
    m.type = type;
    m.text = text;
    m.scope = scope;
    m.replaces = replaces;
    T_EQ_INT(cairn_memory_add(h, &m, &id), CAIRN_OK);
    return id;
}

/* two sessions of test_store and test_gate_only */
static const char *const s1[] = {
    "which compressor should the backup job use?",
    "zstd at level 19 keeps the nightly backup small",
    "and the retention of the backup archives?",
    "keep thirty days of archives, then prune",
    NULL };
static const char *const s2[] = {
    "the garden needs a new hose", "buy a hose of twenty metres", NULL };

static void test_store(void)
{
    char path[256];
    struct cairn *h = NULL;
    snprintf(path, sizeof path, "%s/r.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    add_session(h, "s1", "ops", s1, 1760000000);
    add_session(h, "s2", "home", s2, 1761000000);

    const char *qs[] = { "backup compressor", "garden hose", "retention archives" };
    const int budgets[] = { 60, 400 };
    char *before[3][2];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            struct cairn_recall *r = recall(h, qs[i], budgets[j], NULL);
            before[i][j] = strdup(r->text);
            cairn_recall_free(r);
        }
    /* unrelated memories, a superseded and a removed one: nothing changes */
    int64_t a = remember(h, "fact", "the backup compressor is lz4", "ops", 0);
    remember(h, "fact", "the printer is on the second floor", "", 0);
    remember(h, "fact", "tea over coffee", "", 0);
    int64_t gone = remember(h, "fact", "garden hose colour is green", "", 0);
    T_EQ_INT(cairn_memory_remove(h, gone), CAIRN_OK);
    int64_t b = remember(h, "fact", "the backup compressor is zstd", "ops", a);
    T_EQ_INT(cairn_memory_remove(h, b), CAIRN_OK);        /* a is live again */
    T_EQ_INT(cairn_memory_remove(h, a), CAIRN_OK);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            struct cairn_recall *r = recall(h, qs[i], budgets[j], NULL);
            T_EQ_STR(r->text, before[i][j]);
            for (size_t k = 0; k < r->n_items; k++)
                T_EQ_INT((int)r->items[k].memory, 0);
            cairn_recall_free(r);
            free(before[i][j]);
        }

    /* a memory that matches: first, marked, within the budget */
    int64_t m1 = remember(h, "decision", "backups use the zstd compressor at level 19", "ops", 0);
    struct cairn_recall *r = recall(h, "backup compressor", 400, NULL);
    char head[80];
    snprintf(head, sizeof head, "[memory #%lld · decision · ", (long long)m1);
    T_CHECK(strncmp(r->text, head, strlen(head)) == 0);
    T_CHECK(strstr(r->text, "] backups use the zstd compressor at level 19\n\n[") != NULL);
    T_CHECK(r->n_items > 1);
    T_EQ_INT((int)r->items[0].memory, (int)m1);
    T_EQ_STR(r->items[0].memory_type, "decision");
    T_EQ_STR(r->items[0].role, "memory");
    T_EQ_STR(r->items[0].session, "");
    T_CHECK(r->items[0].why && strstr(r->items[0].why, "memory rank 1") != NULL);
    T_EQ_INT((int)r->items[1].memory, 0);
    T_CHECK(r->tokens <= r->budget);
    T_EQ_INT(r->tokens, text_count_tokens(r->text, strlen(r->text)));
    T_EQ_INT(cairn_inject_gate(r, NULL), 1);
    cairn_recall_free(r);
    /* the budget holds at every size */
    for (int bud = 20; bud <= 200; bud += 7) {
        r = recall(h, "backup compressor", bud, NULL);
        T_CHECK(r->tokens <= bud);
        T_EQ_INT(r->tokens, text_count_tokens(r->text, strlen(r->text)));
        cairn_recall_free(r);
    }
    /* scope: another project's question does not see it, the global scope does */
    r = recall(h, "backup compressor", 400, "home");
    T_CHECK(strstr(r->text, "[memory #") == NULL);
    cairn_recall_free(r);
    r = recall(h, "backup compressor", 400, "ops");
    T_CHECK(strstr(r->text, "[memory #") != NULL);
    cairn_recall_free(r);
    /* superseded: only the replacement */
    int64_t m2 = remember(h, "decision", "backups use the xz compressor", "ops", m1);
    r = recall(h, "backup compressor", 400, NULL);
    T_CHECK(strstr(r->text, "zstd compressor at level 19\n") == NULL);
    T_CHECK(strstr(r->text, "xz compressor") != NULL);
    cairn_recall_free(r);
    /* a contradiction: both, flagged */
    int64_t m3 = remember(h, "fact", "backups are never compressed", "", 0);
    T_EQ_INT(cairn_memory_link(h, m3, m2, "contradicts"), CAIRN_OK);
    r = recall(h, "backup compressor", 400, NULL);
    char f2[64], f3[64];
    snprintf(f2, sizeof f2, "contradicts #%lld] backups use the xz", (long long)m3);
    snprintf(f3, sizeof f3, "contradicts #%lld] backups are never", (long long)m2);
    T_CHECK(strstr(r->text, f2) != NULL);
    T_CHECK(strstr(r->text, f3) != NULL);
    T_CHECK(r->n_items > 2 && r->items[0].contradicts && r->items[1].contradicts);
    cairn_recall_free(r);
    /* the raw baseline has none */
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    o.method = CAIRN_METHOD_RAW_BM25;
    T_EQ_INT(cairn_recall(h, "backup compressor", &o, &r), CAIRN_OK);
    T_CHECK(strstr(r->text, "[memory #") == NULL);
    cairn_recall_free(r);
    cairn_close(h);
}

/* CAIRN_RECALL_GATE_ONLY (the prompt hook's recall): the gate answers
 * what it answers without it, with the same reason; a prompt it cannot
 * pass for stops before the conversations are packed; one it passes for
 * gets the same text; a memory that matches is never stopped. */
static void test_gate_only(void)
{
    char path[256];
    struct cairn *h = NULL;
    static const char *const s3[] = {
        "what should we do about the new thing", "we could look at it again next week", NULL };
    static const char *const qs[] = {
        "zstd level 19 for the nightly backup compressor?", "retention of the backup archives",
        "should we look at the new thing next week", "what about the garden", "keep it small",
        "twenty metres of hose", "an unrelated question about quantum chromodynamics",
    };
    snprintf(path, sizeof path, "%s/g.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    add_session(h, "s1", "ops", s1, 1760000000);
    add_session(h, "s2", "home", s2, 1760100000);
    add_session(h, "s3", "misc", s3, 1760200000);
    int stopped = 0, passed = 0;
    for (int mem = 0; mem < 2; mem++) {
        if (mem)
            remember(h, "fact", "the garden hose is twenty metres long", "", 0);
        for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
            struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
            struct cairn_recall *r0 = NULL, *r1 = NULL;
            const char *why0 = NULL, *why1 = NULL;
            o.budget = 400;
            o.now = 1770000000;
            o.flags = CAIRN_RECALL_MATCHED_ONLY | CAIRN_RECALL_FAST;
            T_EQ_INT(cairn_recall(h, qs[i], &o, &r0), CAIRN_OK);
            o.flags |= CAIRN_RECALL_GATE_ONLY;
            T_EQ_INT(cairn_recall(h, qs[i], &o, &r1), CAIRN_OK);
            if (!r0 || !r1) {
                cairn_recall_free(r0);
                cairn_recall_free(r1);
                continue;
            }
            int g0 = cairn_inject_gate(r0, &why0), g1 = cairn_inject_gate(r1, &why1);
            T_EQ_INT(g1, g0);
            T_EQ_STR(why1, why0);
            T_EQ_INT(r0->gate_stopped, 0);
            if (g0) {
                passed++;
                T_EQ_INT(r1->gate_stopped, 0);
                T_EQ_STR(r1->text, r0->text);
                T_EQ_INT((int)r1->n_items, (int)r0->n_items);
            } else if (r1->gate_stopped) {
                stopped++;
                T_EQ_INT((int)r1->n_items, 0);    /* no memory, no note here */
                T_EQ_STR(r1->text, "");
                T_CHECK(r0->n_items > 0);          /* what it did not pack */
            }
            /* a matching memory comes first and opens the gate: never stopped */
            if (mem && r1->n_items && r1->items[0].memory)
                T_EQ_INT(r1->gate_stopped, 0);
            cairn_recall_free(r0);
            cairn_recall_free(r1);
        }
    }
    T_CHECK(stopped > 0);
    T_CHECK(passed > 0);
    cairn_close(h);
}

/* A store of memories only: they are recalled, and the prompt hook's gate
 * lets them in. */
static void test_memories_only(void)
{
    char path[256];
    struct cairn *h = NULL;
    snprintf(path, sizeof path, "%s/m.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    remember(h, "preference", "indent with two spaces, never tabs", "", 0);
    struct cairn_recall *r = recall(h, "tabs or spaces for indent?", 400, NULL);
    T_CHECK(strstr(r->text, "never tabs\n") != NULL);
    T_EQ_INT((int)r->n_items, 1);
    T_EQ_INT(cairn_inject_gate(r, NULL), 1);
    cairn_recall_free(r);
    r = recall(h, "what is the capital of peru", 400, NULL);
    T_EQ_STR(r->text, "");
    T_EQ_INT((int)r->n_items, 0);
    cairn_recall_free(r);
    cairn_close(h);
}

/* With a model (the tiny test BERT): add and edit store a vector of the
 * text they write; undo leaves one of another text, which recall does not
 * use and backfill makes again; a handle that does not embed adds none,
 * and backfill and reindex give every memory one; recall uses it. */
static void test_vectors(void)
{
    char path[256];
    struct cairn *h = NULL;
    const char *saved = t_model;
    struct cairn_embed_stats st;
    const char *fresh = "SELECT count(*) FROM memory_vectors v JOIN memories m ON m.id = v.memory";
    snprintf(path, sizeof path, "%s/v.db", dir);
    t_model = "tests/data/embed/tiny-bert";
    if (access(t_model, R_OK)) {
        T_SKIP("no %s (run from the repository root)", t_model);
        t_model = saved;
        return;
    }
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    int64_t a = remember(h, "fact", "the staging server is called kestrel", "", 0);
    T_EQ_INT(count(h, fresh), 1);
    T_EQ_INT(count(h, "SELECT dim * 4 = length(vec) FROM memory_vectors"), 1);
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT text_hash FROM memory_vectors WHERE memory = %lld",
             (long long)a);
    int64_t h1 = count(h, sql);
    T_EQ_INT(cairn_memory_update(h, a, "the staging server is called osprey"), CAIRN_OK);
    int64_t h2 = count(h, sql);
    T_CHECK(h1 != h2);
    T_EQ_INT(h2 == memory_text_hash("the staging server is called osprey"), 1);
    /* recall: the memory's own words as the question, cosine 1 */
    struct cairn_recall *r = recall(h, "the staging server is called osprey", 400, NULL);
    T_CHECK(r->n_items == 1 && r->items[0].why && strstr(r->items[0].why, "cosine 1.000"));
    cairn_recall_free(r);
    /* undo: the text goes back, its vector is of the other text: unused */
    T_EQ_INT(cairn_memory_undo(h, a), CAIRN_OK);
    r = recall(h, "the staging server is called kestrel", 400, NULL);
    T_CHECK(r->n_items == 1 && r->items[0].why && !strstr(r->items[0].why, "cosine"));
    cairn_recall_free(r);
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_embed_backfill(h, 0, NULL, NULL, &st), CAIRN_OK);
    T_EQ_INT(count(h, sql) == memory_text_hash("the staging server is called kestrel"), 1);
    r = recall(h, "the staging server is called kestrel", 400, NULL);
    T_CHECK(r->n_items == 1 && r->items[0].why && strstr(r->items[0].why, "cosine 1.000"));
    cairn_recall_free(r);
    /* not embedding on this handle: no vector until a backfill */
    T_EQ_INT(cairn_embed_at_ingest(h, 0), CAIRN_OK);
    remember(h, "fact", "lunch is at one", "", 0);
    T_EQ_INT(count(h, fresh), 1);
    T_EQ_INT(cairn_embed_backfill(h, 0, NULL, NULL, &st), CAIRN_OK);
    T_EQ_INT(count(h, fresh), 2);
    T_EQ_INT(cairn_embed_backfill(h, 1, NULL, NULL, &st), CAIRN_OK);
    T_EQ_INT(count(h, fresh), 2);
    /* removing a memory removes its vector */
    T_EQ_INT(cairn_memory_remove(h, a), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM memory_vectors"), 1);
    cairn_close(h);
    t_model = saved;
}

/* A version-8 store (memories, no vectors) is migrated: its memories stay
 * and get vectors from a backfill. */
static void test_migrate_v8(void)
{
    char path[256];
    struct cairn *h = NULL;
    sqlite3 *raw = NULL;
    snprintf(path, sizeof path, "%s/v8.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    remember(h, "decision", "ship on tuesdays", "", 0);
    cairn_close(h);
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, AFTER_V8_DROP "PRAGMA user_version=8", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(raw);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(count(h, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(count(h, "SELECT count(*) FROM memory_vectors"), 0);
    struct cairn_recall *r = recall(h, "when do we ship", 400, NULL);
    T_CHECK(strstr(r->text, "ship on tuesdays") != NULL);
    cairn_recall_free(r);
    cairn_close(h);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_floor_and_order);
    T_RUN(test_share_and_cut);
    T_RUN(test_contradictions);
    T_RUN(test_dense);
    T_RUN(test_store);
    T_RUN(test_memories_only);
    T_RUN(test_gate_only);
    T_RUN(test_vectors);
    T_RUN(test_migrate_v8);
    char cmd[320];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd))
        return 1;
    return T_DONE();
}
