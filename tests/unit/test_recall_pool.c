/*
 * test_recall_pool: ranking, the gate and packing on pools built by hand,
 * with no database (recall reads the store only through
 * store/recall_read.h; pack reads texts through a struct pack_src, here
 * one over memory that counts its calls).
 *
 * Expected scores are written as numbers, not as policy.h's names, so a
 * changed constant fails here and has to be changed here too, on purpose.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "t.h"
#include "recall/recall.h"
#include "text/tokcount.h"
#include "text/tokenize.h"
#include "util/buf.h"
#include "util/sort.h"
#include "util/timeutil.h"

#define CAP 128
#define EPS 1e-12

struct tpool {
    struct pool  p;
    struct query q;
    const char  *text[CAP];
};

/* ---- building pools ---- */

struct tok_first { char *out; };

static int first_tok(void *arg, const char *tok, size_t n, size_t s, size_t e, int col)
{
    struct tok_first *f = arg;
    f->out = strndup(tok, n);
    return 1;
}

/* A word as the index holds it (folded, stemmed). */
static char *norm_of(const char *word)
{
    struct tok_first f = { NULL };
    text_tokenize(word, strlen(word), 1, first_tok, &f);
    return f.out;
}

static void tp_init(struct tpool *t, const char *const *terms)
{
    memset(t, 0, sizeof *t);
    t->p.s = calloc(CAP, sizeof *t->p.s);
    t->p.m = calloc(CAP, sizeof *t->p.m);
    t->p.cs = t->p.cm = CAP;
    for (int i = 0; terms && terms[i]; i++) {
        t->q.t[i].norm = norm_of(terms[i]);
        t->q.t[i].surface = strdup(terms[i]);
        t->q.nt++;
    }
}

static void tp_session(struct tpool *t, const char *ext, int64_t started)
{
    struct rsession *s = &t->p.s[t->p.ns++];
    s->row = t->p.ns;
    s->ext_id = strdup(ext);
    s->source = strdup("chat");
    s->title = strdup(ext);
    s->started_at = started;
    s->dialog = 1;
    s->first_msg = t->p.nm;
}

struct tf_count { const struct query *q; int ntok; uint16_t tf[RECALL_MAX_TERMS]; int any; };

static int count_cb(void *arg, const char *tok, size_t n, size_t s, size_t e, int col)
{
    struct tf_count *c = arg;
    c->ntok++;
    for (int t = 0; t < c->q->nt; t++)
        if (strlen(c->q->t[t].norm) == n && !memcmp(c->q->t[t].norm, tok, n)) {
            c->tf[t]++;
            c->any = 1;
        }
    return 0;
}

/* A message of the last session; its counts come from its text, as the
 * index would give them. */
static int tp_msg(struct tpool *t, int role, const char *speaker, const char *text, int64_t at)
{
    struct rsession *s = &t->p.s[t->p.ns - 1];
    int i = t->p.nm++;
    struct rmsg *m = &t->p.m[i];
    struct tf_count c = { &t->q, 0, { 0 }, 0 };
    text_tokenize(text, strlen(text), 0, count_cb, &c);
    m->row = i + 1;
    m->sess = t->p.ns - 1;
    m->position = s->n_msgs++;
    m->role = role;
    m->speaker = speaker ? strdup(speaker) : NULL;
    m->at = at;
    m->ntok = c.ntok;
    m->bytes = -1;
    if (c.any) {
        m->tf = calloc((size_t)t->q.nt, sizeof *m->tf);
        memcpy(m->tf, c.tf, (size_t)t->q.nt * sizeof *m->tf);
    }
    if (role == ROLE_ASSISTANT)
        s->dialog = 0;
    t->text[i] = text;
    return i;
}

/* The scope's totals are the pool's own; units built. */
static void tp_finish(struct tpool *t, int raw)
{
    struct pool *p = &t->p;
    for (int i = 0; i < p->nm; i++) {
        p->total_msgs++;
        p->total_tok += p->m[i].ntok;
        p->total_user += p->m[i].role == ROLE_USER;
        p->total_bytes += (int64_t)strlen(t->text[i]);
        for (int k = 0; k < t->q.nt; k++)
            t->q.t[k].df_msg += p->m[i].tf && p->m[i].tf[k];
    }
    for (int i = 0; i < p->ns; i++) {
        p->any_dialog |= p->s[i].dialog;
        p->any_assistant |= !p->s[i].dialog;
    }
    build_units(p, raw);
}

static void tp_free(struct tpool *t)
{
    pool_free(&t->p);
    query_free(&t->q);
}

/* ---- texts from memory ---- */

struct memsrc {
    struct tpool *t;
    int meta_calls, text_calls;
    int reads[CAP];
};

static int mem_meta(void *arg, struct store_msg_text *v, int n)
{
    struct memsrc *ms = arg;
    char id[32];
    ms->meta_calls++;
    for (int j = 0; j < n; j++) {
        int i = (int)v[j].row - 1;
        snprintf(id, sizeof id, "m%d", i + 1);
        free(v[j].ext_id);
        v[j].ext_id = strdup(id);
        v[j].bytes = (int)strlen(ms->t->text[i]);
    }
    return CAIRN_OK;
}

static int mem_text(void *arg, struct store_msg_text *v, int n, size_t max)
{
    struct memsrc *ms = arg;
    ms->text_calls++;
    for (int j = 0; j < n; j++) {
        int i = (int)v[j].row - 1;
        size_t len = strlen(ms->t->text[i]);
        free(v[j].text);
        v[j].len = len < max ? len : max;
        v[j].text = strndup(ms->t->text[i], v[j].len);
        ms->reads[i]++;
    }
    return CAIRN_OK;
}

static void result_free(struct cairn_recall *r)
{
    free(r->items);
    free((char *)r->text);
    memset(r, 0, sizeof *r);
}

/* pack_src.ahead of the packs below (a server's source reads further). */
static int pack_ahead;

/* Packs t's ranked pool with options o. */
static int pack_opts(struct tpool *t, struct memsrc *ms, const struct cairn_recall_opts *o,
                     struct cairn_recall *r)
{
    memset(ms, 0, sizeof *ms);
    ms->t = t;
    memset(r, 0, sizeof *r);
    struct pack_src src = { mem_meta, mem_text, ms, NULL, pack_ahead };
    return pack(&src, &t->p, &t->q, o, 0, r);
}

/* Ranks t's pool and packs it into budget tokens. */
static int pack_mem(struct tpool *t, struct memsrc *ms, int budget, const char *exclude,
                    struct cairn_recall *r)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    o.budget = budget;
    o.exclude_items = exclude;
    return pack_opts(t, ms, &o, r);
}

/* Packing changes the pool (picks, texts): start each pack afresh. */
static void unpack(struct tpool *t)
{
    for (int i = 0; i < t->p.nm; i++) {
        free(t->p.m[i].text);
        free(t->p.m[i].ext_id);
        t->p.m[i].text = t->p.m[i].ext_id = NULL;
        t->p.m[i].picked = 0;
        t->p.m[i].bytes = -1;
    }
}

static int item_of(const struct cairn_recall *r, const char *msg)
{
    for (size_t i = 0; i < r->n_items; i++)
        if (!strcmp(r->items[i].message, msg))
            return (int)i;
    return -1;
}

/* ---- BM25 and units ---- */

static void test_bm25_formula(void)
{
    T_CHECK(fabs(rank_idf(10, 1) - log(1 + 9.5 / 1.5)) < EPS);
    T_CHECK(rank_idf(10, 0) == 0);
    T_CHECK(fabs(rank_idf(3, 5) - log(1 + 0.5 / 5.5)) < EPS);   /* df > n: n = df */
    double tf[2] = { 1, 0 }, w[2] = { 2, 5 };
    /* k1 = 1.2, b = 0.75: at the average length tf = 1 scores w */
    T_CHECK(fabs(rank_bm25(tf, 2, 10, 10, w) - 2.0) < EPS);
    T_CHECK(fabs(rank_bm25(tf, 2, 20, 10, w) - 2 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2))) < EPS);
    tf[1] = 3;
    T_CHECK(fabs(rank_bm25(tf, 2, 5, 10, w) - (2 * 2.2 / (1 + 1.2 * 0.625) +
                                                5 * 3 * 2.2 / (3 + 1.2 * 0.625))) < EPS);
    /* BM25F: no second field is BM25; a speaker occurrence alone scores
     * the same at any length; with the text's count, tf / norm + 1 */
    double none[2] = { 0, 0 }, spk[2] = { 1, 0 }, zero[2] = { 0, 0 };
    T_CHECK(fabs(rank_bm25f(tf, none, 2, 5, 10, w) - rank_bm25(tf, 2, 5, 10, w)) < EPS);
    T_CHECK(fabs(rank_bm25f(zero, spk, 2, 5, 10, w) - 2.0) < EPS);
    T_CHECK(fabs(rank_bm25f(zero, spk, 2, 80, 10, w) - 2.0) < EPS);
    tf[1] = 0;
    double f = 1 / (0.25 + 0.75 * 2) + 1;
    T_CHECK(fabs(rank_bm25f(tf, spk, 2, 20, 10, w) - 2 * f * 2.2 / (f + 1.2)) < EPS);
}

static void test_units(void)
{
    struct tpool t;
    tp_init(&t, NULL);
    tp_session(&t, "ua", 1000);
    tp_msg(&t, ROLE_USER, NULL, "one", 1000);
    tp_msg(&t, ROLE_ASSISTANT, NULL, "two", 1000);
    tp_msg(&t, ROLE_ASSISTANT, NULL, "three", 1000);
    tp_msg(&t, ROLE_USER, NULL, "four", 1000);
    tp_msg(&t, ROLE_ASSISTANT, NULL, "five", 1000);
    tp_session(&t, "people", 2000);
    tp_msg(&t, ROLE_USER, "Ann", "a", 2000);
    tp_msg(&t, ROLE_USER, "Ben", "b", 2000);
    tp_msg(&t, ROLE_USER, "Ann", "c", 2000);
    tp_msg(&t, ROLE_USER, "Ben", "d", 2000);
    tp_finish(&t, 0);
    /* rounds: a user turn and its replies; between people, every turn */
    T_EQ_INT(t.p.nu, 2 + 4);
    T_EQ_INT(t.p.u[0].first, 0);
    T_EQ_INT(t.p.u[0].last, 2);
    T_EQ_INT(t.p.u[1].head, 3);
    T_EQ_INT(t.p.u[1].last, 4);
    T_EQ_INT(t.p.u[2].first, 5);
    T_EQ_INT(t.p.u[2].last, 5);
    T_EQ_INT(t.p.m[4].unit, 1);
    /* the baseline pairs the people's turns */
    build_units(&t.p, 1);
    T_EQ_INT(t.p.nu, 2 + 2);
    T_EQ_INT(t.p.u[2].first, 5);
    T_EQ_INT(t.p.u[2].last, 6);
    T_EQ_INT(t.p.u[3].first, 7);
    T_EQ_INT(t.p.u[3].last, 8);
    tp_free(&t);
}

/* An agent's run of replies after one prompt: past 4 replies (the policy's
 * UNIT_MAX_REPLIES) each reply after the first leads its own unit, so
 * the one that matches is ranked and packed alone; a shorter run stays one
 * round, and the baseline keeps whole rounds. */
static void test_units_reply_runs(void)
{
    static const char *const terms[] = { "propagator", NULL };
    struct tpool t;
    tp_init(&t, terms);
    tp_session(&t, "agent", 1000);
    tp_msg(&t, ROLE_USER, NULL, "continue the implementation", 1000);
    for (int i = 0; i < 6; i++)
        tp_msg(&t, ROLE_ASSISTANT, NULL, i == 4 ? "the propagator is set here" : "next step",
               1000);
    tp_msg(&t, ROLE_USER, NULL, "thanks", 1000);
    for (int i = 0; i < 4; i++)
        tp_msg(&t, ROLE_ASSISTANT, NULL, "short run", 1000);
    tp_finish(&t, 0);
    /* prompt + first reply, then 5 replies alone, then a round of 5 */
    T_EQ_INT(t.p.nu, 1 + 5 + 1);
    T_EQ_INT(t.p.u[0].first, 0);
    T_EQ_INT(t.p.u[0].last, 1);
    T_EQ_INT(t.p.u[4].head, 5);
    T_EQ_INT(t.p.u[4].last, 5);
    T_EQ_INT(t.p.m[5].unit, 4);
    T_EQ_INT(t.p.u[6].head, 7);
    T_EQ_INT(t.p.u[6].last, 11);
    /* the matching reply leads the best unit */
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    T_EQ_INT(units_by_rank(&t.p)[0], 4);
    build_units(&t.p, 1);
    T_EQ_INT(t.p.nu, 2);
    T_EQ_INT(t.p.u[0].last, 6);
    tp_free(&t);
}

/* Questions about what the assistant said or did (query_asks_reply), and
 * questions about what the user said, which must not look like them. */
static void test_asks_reply(void)
{
    static const char *const yes[] = {
        "How did we fix the flaky login test?",
        "What did you suggest for the cache?",
        "Which default-model constant did you say was correct?",
        "The stock screen showed object ids. What was the cause you found?",
        "What exact model identifier did you tell me to use?",
        "What was your diagnosis?",
        "Why, according to you, did the planner drop those steps?",
        "The Edit button led to a 404. What was wrong?",
        "What was the cause of the crash?",
        "What caused the errors about reading 'path' of undefined?",
        "¿Cómo me dijiste que borrara el historial?",
        "Welche Version hast du empfohlen?",
        "we then fixed it how?",
        NULL
    };
    static const char *const no[] = {
        "Where did I want the stylesheets to live?",
        "What did I ask to add to the navigation bar on January 9th?",
        "How would you suggest I set up lazy loading?",
        "What is the amount offered for the position we discussed?",
        "Do you need the paste buffer?",
        "Which libraries are used in this project?",
        "When does my first sprint end?",
        "",
        NULL
    };
    for (int i = 0; yes[i]; i++) {
        int got = query_asks_reply(yes[i], strlen(yes[i]));
        T_EQ_INT(got, 1);
        if (!got)
            fprintf(stderr, "  not taken for a question about a reply: %s\n", yes[i]);
    }
    for (int i = 0; no[i]; i++) {
        int got = query_asks_reply(no[i], strlen(no[i]));
        T_EQ_INT(got, 0);
        if (got)
            fprintf(stderr, "  taken for a question about a reply: %s\n", no[i]);
    }
    /* a long prompt is read up to its first few hundred words, and a word
     * too long for a cue matches none */
    char *big = malloc(100000);
    T_CHECK(big != NULL);
    if (big) {
        memset(big, 'x', 99999);
        big[99999] = 0;
        memcpy(big + 2, "ed", 2);
        T_CHECK(!query_asks_reply(big, strlen(big)));
        for (int i = 0; i < 99990; i += 6)
            memcpy(big + i, "word  ", 6);
        memcpy(big + 90000, "did you", 7);
        T_CHECK(!query_asks_reply(big, strlen(big)));
        free(big);
    }
}

/* Questions that ask for a summary (query_asks_summary), and questions
 * that must not look like them ("resume" is a CV). */
static void test_asks_summary(void)
{
    static const char *const yes[] = {
        "Can you give me a comprehensive summary of how my project progressed?",
        "Can you summarize how I approached the issues over time?",
        "Summarise what we covered about triangles",
        "Give me an overview of the deployment work",
        "quick recap of the auth changes?",
        "¿Me das un resumen de lo que hicimos?",
        "Kannst du das zusammenfassen?",
        "Can you list the order in which I brought up the features?",
        "In what order did we add the tests?",
        "Can you list in order how I brought up each step?",
        NULL
    };
    static const char *const no[] = {
        "How can I improve my resume for ATS?",
        "What did you suggest for the cache?",
        "Which summary statistics did we log?",
        "Which LangChain function did I want the paper-summary tool's agent built with?",
        "I asked for a chain class to get better summaries. Which one?",
        "What did I change in order to fix the login?",
        "Which order of the columns did we pick?",
        "",
        NULL
    };
    for (int i = 0; yes[i]; i++) {
        int got = query_asks_summary(yes[i], strlen(yes[i]));
        T_EQ_INT(got, strstr(yes[i], "order") ? 2 : 1);
        if (!got)
            fprintf(stderr, "  not taken for a summary: %s\n", yes[i]);
    }
    for (int i = 0; no[i]; i++) {
        int got = query_asks_summary(no[i], strlen(no[i]));
        T_EQ_INT(got, 0);
        if (got)
            fprintf(stderr, "  taken for a summary: %s\n", no[i]);
    }
}

/* Questions about the first or the last time (query_ordinal), and
 * questions whose "first" or "last" is no such thing. */
static void test_ordinal_cue(void)
{
    static const char *const first[] = {
        "What was the very first thing I asked you to build?",
        "What was your very first plan for structuring the crawler project?",
        "On the first day of the inventory work in July, where were the files?",
        "what was the first piece of documentation I pasted in?",
        "When did Joanna first watch Eternal Sunshine?",
        "I first wanted a React front end. What did I use instead?",
        "What was the first error we hit with the websocket?",
        "When was the first time we talked about caching?",
        "What did we initially pick for the queue?",
        "Which database did I originally want?",
        "What was the earliest version of the parser?",
        "what did we do to begin with?",
        "What did I ask for at the start of the project?",
        "我第一次去北京是什么时候？",
        NULL
    };
    static const char *const last[] = {
        "What did we last decide about caching?",
        "When was the last time I ran the migration?",
        "On the last day we worked on the frontend, what did I want?",
        "What was the most recent error in the build?",
        "What did we most recently change in the config?",
        "What is the latest plan for the release?",
        "Which library did we finally use?",
        "我们最后一次讨论缓存是什么时候？",
        NULL
    };
    static const char *const no[] = {
        "Is the first-class citizen pattern used here?",
        "What kind of dance piece did Gina's team perform to win first place?",
        "What genre is Joanna's first screenplay?",
        "When did John have his first firefighter call-out?",
        "How long has Nate had his first two turtles?",
        "When does my first sprint end?",
        "How many days between finishing my first draft and the deadline?",
        "What did the first part cover, and what did the later one add?",
        "At last, the tests pass: what did we change?",
        "What is my last name in the config?",
        "What did I do last week?",
        "What did Melanie see during the camping trip last year?",
        "At the start of March I asked for a chain class. Which one?",
        "Was the first half of September a good month?",
        "Which improvement happened first: the quiz or the test?",
        "What tokens-per-minute caps did OpenAI report, first with gpt-4 and later gpt-4o?",
        "Where are the links in the PDF final?",
        "What should I read first?",
        "我最近在忙什么？",
        "",
        NULL
    };
    for (int i = 0; first[i]; i++) {
        int got = query_ordinal(first[i], strlen(first[i]));
        T_EQ_INT(got & ~ORD_DAY, ORD_FIRST);
        T_EQ_INT(!!(got & ORD_DAY), !!strstr(first[i], "first day"));
        if ((got & ~ORD_DAY) != ORD_FIRST)
            fprintf(stderr, "  not taken for a first: %s\n", first[i]);
    }
    for (int i = 0; last[i]; i++) {
        int got = query_ordinal(last[i], strlen(last[i]));
        T_EQ_INT(got & ~ORD_DAY, ORD_LAST);
        T_EQ_INT(!!(got & ORD_DAY), !!strstr(last[i], "last day"));
        if ((got & ~ORD_DAY) != ORD_LAST)
            fprintf(stderr, "  not taken for a last: %s\n", last[i]);
    }
    /* query_parse reads it with time on, not off, and not in a pasted
     * transcript, where it is a line of the talk */
    struct query q;
    T_EQ_INT(query_parse(&q, last[0], 1000, 1), 0);
    T_EQ_INT(q.ordinal, ORD_LAST);
    query_free(&q);
    T_EQ_INT(query_parse(&q, last[0], 1000, 0), 0);
    T_EQ_INT(q.ordinal, 0);
    query_free(&q);
    T_EQ_INT(query_parse(&q, "Bart: 我丢了玩具\nAssistant: 你最后一次看到它是在哪里？\n"
                         "Bart: 在公园", 1000, 1), 0);
    T_EQ_INT(q.ordinal, 0);
    query_free(&q);
    for (int i = 0; no[i]; i++) {
        int got = query_ordinal(no[i], strlen(no[i]));
        T_EQ_INT(got, 0);
        if (got)
            fprintf(stderr, "  taken for an ordinal: %s\n", no[i]);
    }
}

/* Three user-assistant sessions of one round each: the question's terms
 * in the first's user turn, one of them in the second's reply, none in
 * the third. */
static void ua_pool(struct tpool *t)
{
    static const char *const terms[] = { "zebra", "quokka", NULL };
    tp_init(t, terms);
    tp_session(t, "s1", 1000);
    tp_msg(t, ROLE_USER, NULL, "tell me about the zebra and the quokka", 1000);
    tp_msg(t, ROLE_ASSISTANT, NULL, "sure, here is what I know", 1000);
    tp_session(t, "s2", 2000);
    tp_msg(t, ROLE_USER, NULL, "hello there", 2000);
    tp_msg(t, ROLE_ASSISTANT, NULL, "the zebra is striped", 2000);
    tp_session(t, "s3", 3000);
    tp_msg(t, ROLE_USER, NULL, "nothing relevant at all", 3000);
    tp_msg(t, ROLE_ASSISTANT, NULL, "nothing here either", 3000);
    tp_finish(t, 0);
}

static void test_rank_granularity(void)
{
    struct tpool t;
    ua_pool(&t);
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    /* s1: first by its turn (w 1.0), its round (0.6) and its window (0.8);
     * s2: second by round and window only; s3: nothing */
    T_CHECK(fabs(t.p.u[0].score - (1.0 + 0.6 + 0.8) / 61) < EPS);
    T_CHECK(fabs(t.p.u[1].score - (0.6 + 0.8) / 62) < EPS);
    T_CHECK(t.p.u[2].score == 0);
    T_CHECK(t.p.m[0].s_msg > 0);
    T_CHECK(t.p.m[3].s_msg > 0);             /* the reply alone, for the reply lane */
    T_CHECK(t.p.u[1].s_round > 0);
    const int *ord = units_by_rank(&t.p);
    T_CHECK(ord != NULL);
    T_EQ_INT(ord[0], 0);
    T_EQ_INT(ord[1], 1);
    T_EQ_INT(ord[2], 2);
    T_EQ_INT(t.p.u[1].rank, 1);
    /* the IDFs the gate uses: over messages in scope */
    T_CHECK(fabs(t.q.t[0].idf_msg - log(1 + (6 - 2 + 0.5) / 2.5)) < EPS);
    T_CHECK(fabs(t.q.t[1].idf_msg - log(1 + (6 - 1 + 0.5) / 1.5)) < EPS);
    /* the baseline: BM25 of whole rounds, nothing fused */
    T_EQ_INT(rank_raw_bm25(&t.p, &t.q), 0);
    T_CHECK(t.p.u[0].score > t.p.u[1].score && t.p.u[1].score > 0 && t.p.u[2].score == 0);
    tp_free(&t);
}

/* The units at score 0 are left unranked by units_by_rank (every reader
 * of the order stops at them) and ranked by units_rank_all; both against
 * a brute force of the order they must end in: score, highest first,
 * then time, latest first, then pool order (rank.c's two stable passes). */
static const struct pool *g_rank_pool;

static int cmp_rank_ref(const void *a, const void *b)
{
    const struct pool *p = g_rank_pool;
    int x = *(const int *)a, y = *(const int *)b;
    double sx = p->u[x].score, sy = p->u[y].score;
    int64_t tx = p->m[p->u[x].head].at, ty = p->m[p->u[y].head].at;
    if (sx != sy)
        return sx > sy ? -1 : 1;
    if (tx != ty)
        return tx > ty ? -1 : 1;
    return (x > y) - (x < y);
}

static void test_rank_zero_tail(void)
{
    static const char *const terms[] = { "zebra", NULL };
    /* session start, and the times of its two rounds; zebra in three */
    static const int64_t at[8][2] = { { 5000, 5100 }, { 1000, 1200 }, { 5000, 5100 },
                                      { 3000, 3000 }, { 9000, 9500 }, { 4000, 4100 },
                                      { 7000, 7000 }, { 2000, 2500 } };
    static const int zebra[8] = { 0, 1, 0, 0, 1, 0, 1, 0 };
    struct tpool t;
    tp_init(&t, terms);
    for (int s = 0; s < 8; s++) {
        char ext[16];
        snprintf(ext, sizeof ext, "s%d", s);
        tp_session(&t, ext, at[s][0]);
        for (int r = 0; r < 2; r++) {
            tp_msg(&t, ROLE_USER, NULL, zebra[s] && r ? "what about the zebra" : "hello there",
                   at[s][r]);
            tp_msg(&t, ROLE_ASSISTANT, NULL, "an answer", at[s][r]);
        }
    }
    tp_finish(&t, 0);
    struct pool *p = &t.p;
    T_EQ_INT(p->nu, 16);
    T_EQ_INT(rank_default(p, &t.q, 1, NULL), 0);
    int ref[16], npos = 0;
    for (int u = 0; u < p->nu; u++) {
        ref[u] = u;
        npos += p->u[u].score > 0;
    }
    g_rank_pool = p;
    qsort(ref, (size_t)p->nu, sizeof *ref, cmp_rank_ref);
    T_EQ_INT(npos, 6);                       /* both rounds of the three */
    const int *ord = units_by_rank(p);
    T_CHECK(ord != NULL);
    if (!ord)
        goto out;
    T_EQ_INT(p->ord_tail, 10);
    for (int r = 0; r < npos; r++) {
        T_EQ_INT(ord[r], ref[r]);
        T_EQ_INT(p->u[ord[r]].rank, r);
    }
    for (int r = npos; r < p->nu; r++) {
        T_EQ_INT(p->u[ord[r]].rank, -1);
        if (r > npos)
            T_CHECK(ord[r] > ord[r - 1]);    /* pool order until ranked */
    }
    T_EQ_INT(units_rank_all(p), 0);
    T_CHECK(units_by_rank(p) == ord);        /* the same order, completed */
    for (int r = 0; r < p->nu; r++) {
        T_EQ_INT(ord[r], ref[r]);
        T_EQ_INT(p->u[ord[r]].rank, r);
    }
    T_EQ_INT(units_rank_all(p), 0);          /* once */
    /* a pool that may be packed whole is ranked whole at once */
    free(p->ord);
    p->ord = NULL;
    p->all_mode = 1;
    ord = units_by_rank(p);
    T_CHECK(ord != NULL);
    for (int r = 0; ord && r < p->nu; r++) {
        T_EQ_INT(ord[r], ref[r]);
        T_EQ_INT(p->u[ord[r]].rank, r);
    }
out:
    tp_free(&t);
}

/* units_by_rank of a big pool on two threads (rank.c, units_by_rank_two:
 * the keys, the merge from both ends and the ranks each split in two)
 * against the one thread's order and the brute force's (score, time,
 * pool order): many ties of both, a run of equal scores across the
 * middle place, every scored unit in one half, none scored, a score
 * below 0 (the whole pool sorted by the one thread's way). */
static void rank_two_case(int nu, int nscores, int ntimes, int zero_pct, int where, int neg)
{
    struct pool p;
    memset(&p, 0, sizeof p);
    p.nu = p.nm = nu;
    p.u = calloc((size_t)nu, sizeof *p.u);
    p.m = calloc((size_t)nu, sizeof *p.m);
    int *ref = malloc((size_t)nu * sizeof *ref), *one = malloc((size_t)nu * sizeof *one);
    int *rank1 = malloc((size_t)nu * sizeof *rank1);
    T_CHECK(p.u && p.m && ref && one && rank1);
    if (!p.u || !p.m || !ref || !one || !rank1)
        goto out;
    unsigned x = (unsigned)(nu * 31 + nscores * 7 + where);
    int npos = 0;
    for (int u = 0; u < nu; u++) {
        x = x * 1103515245u + 12345u;
        int half = u < nu / 2 ? 1 : 2;
        int zero = (int)((x >> 8) % 100) < zero_pct || (where && where != half);
        p.u[u].head = u;
        p.m[u].at = 1000 + (int64_t)((x >> 4) % (unsigned)ntimes);
        p.u[u].score = zero ? 0 : 0.5 + (double)((x >> 16) % (unsigned)nscores) / 64;
        npos += !zero;
        ref[u] = u;
    }
    if (neg)
        p.u[nu / 3].score = -0.25;
    g_rank_pool = &p;
    qsort(ref, (size_t)nu, sizeof *ref, cmp_rank_ref);
    /* the one thread's order */
    p.threads = 1;
    const int *ord = units_by_rank(&p);
    T_CHECK(ord != NULL);
    if (!ord)
        goto out;
    int tail1 = p.ord_tail;
    for (int i = 0; i < nu; i++) {
        one[i] = ord[i];
        rank1[i] = p.u[i].rank;
    }
    free(p.ord);
    p.ord = NULL;
    for (int i = 0; i < nu; i++)
        p.u[i].rank = -7;
    p.threads = 2;
    ord = units_by_rank(&p);
    T_CHECK(ord != NULL);
    if (!ord)
        goto out;
    T_EQ_INT(p.ord_tail, tail1);
    int bad_ord = 0, bad_rank = 0, bad_ref = 0, scored = nu - p.ord_tail;
    for (int i = 0; i < nu; i++) {
        bad_ord += ord[i] != one[i];
        bad_rank += p.u[i].rank != rank1[i];
    }
    for (int i = 0; i < scored; i++)
        bad_ref += ord[i] != ref[i] || p.u[ord[i]].rank != i;
    for (int i = scored; i < nu; i++)
        bad_ref += p.u[ord[i]].rank != -1 || (i > scored && ord[i] < ord[i - 1]);
    T_EQ_INT(bad_ord, 0);
    T_EQ_INT(bad_rank, 0);
    T_EQ_INT(bad_ref, 0);
    T_EQ_INT(scored, neg ? nu : npos);
out:
    free(p.ord);
    free(p.u);
    free(p.m);
    free(ref);
    free(one);
    free(rank1);
}

static void test_rank_two(void)
{
    rank_two_case(70001, 40, 9, 30, 0, 0);     /* runs of equal scores everywhere */
    rank_two_case(65536, 3, 2, 10, 0, 0);      /* long runs: one across the middle */
    rank_two_case(131073, 5000, 1000, 60, 0, 0);
    rank_two_case(70000, 40, 9, 30, 1, 0);     /* every scored unit in the front */
    rank_two_case(70000, 40, 9, 30, 2, 0);     /* and in the back */
    rank_two_case(65537, 40, 9, 100, 0, 0);    /* none scored */
    rank_two_case(70001, 40, 9, 30, 0, 1);     /* a score below 0: all sorted */
}

static void test_rank_dense(void)
{
    struct tpool t;
    struct dense_result dr;
    memset(&dr, 0, sizeof dr);
    dr.n = 1;
    ua_pool(&t);
    t.p.m[4].dense = 1.5f;     /* s3's user turn */
    t.p.m[5].dense = 1.6f;     /* s3's reply */
    T_EQ_INT(rank_default(&t.p, &t.q, 1, &dr), 0);
    /* keyword ranks unchanged; s3 found by meaning alone: head 0.15, reply 0.7 */
    T_CHECK(fabs(t.p.u[0].score - (1.0 + 0.6 + 0.8) / 61) < EPS);
    T_CHECK(fabs(t.p.u[1].score - (0.6 + 0.8) / 62) < EPS);
    T_CHECK(fabs(t.p.u[2].score - (0.15 + 0.7) / 61) < EPS);
    /* a question mostly in CJK: the dense ranks weigh nothing */
    dr.cjk = 0.5;
    T_EQ_INT(rank_default(&t.p, &t.q, 1, &dr), 0);
    T_CHECK(t.p.u[2].score == 0);
    /* the second pass's ranks count between people only */
    dr.cjk = 0;
    t.p.m[4].dense = t.p.m[5].dense = 0;
    t.p.m[4].prf = 1.9f;
    T_EQ_INT(rank_default(&t.p, &t.q, 1, &dr), 0);
    T_CHECK(t.p.u[2].score == 0);
    tp_free(&t);
}

/* The second dense pass (dense_feedback): between people its ranks join
 * the fusion at 1.0, unless an English model meets a CJK question. */
/* Two sessions of Ann's between people, the first about a kite, the
 * second not (and a reply of Bob's with `bob`), for the second passes'
 * tests; dr a dense result of one hit, no CJK. */
static void kite_pool(struct tpool *t, const char *const *terms, int bob, struct dense_result *dr)
{
    memset(dr, 0, sizeof *dr);
    dr->n = 1;
    tp_init(t, terms);
    tp_session(t, "s1", 1000);
    tp_msg(t, ROLE_USER, "Ann", "I flew my kite", 1000);
    tp_session(t, "s2", 2000);
    tp_msg(t, ROLE_USER, "Ann", "the wind on the hill was perfect", 2000);
    if (bob)
        tp_msg(t, ROLE_USER, "Bob", "it was", 2000);
    tp_finish(t, 0);
}

static void test_rank_feedback(void)
{
    static const char *const terms[] = { "kite", NULL };
    struct tpool t;
    struct dense_result dr;
    kite_pool(&t, terms, 0, &dr);
    T_EQ_INT(rank_default(&t.p, &t.q, 1, &dr), 0);
    T_CHECK(t.p.u[1].score == 0);           /* before the pass: nothing */
    t.p.m[1].prf = 1.4f;
    T_EQ_INT(rank_default(&t.p, &t.q, 1, &dr), 0);
    T_CHECK(fabs(t.p.u[0].score - (1.0 + 1.6 + 1.0) / 61) < EPS);
    T_CHECK(fabs(t.p.u[1].score - 1.0 / 61) < EPS);
    dr.cjk = 0.5;
    T_EQ_INT(rank_default(&t.p, &t.q, 1, &dr), 0);
    T_CHECK(t.p.u[1].score == 0);
    tp_free(&t);
}

/* The question in the named speaker's words (issue 16, persp55): the one
 * speaker the question names (rank_named_speaker), and the pass's cosines
 * (p->persp) joining the fusion at PERSP_W between people, none for a CJK
 * question with an English model, none before the pass. */
static void test_rank_persona(void)
{
    static const char *const one[] = { "kite", "ann", NULL };
    static const char *const two[] = { "ann", "bob", NULL };
    static const char *const none[] = { "kite", NULL };
    const char *const *terms[] = { one, two, none };
    const char *name;
    for (int k = 0; k < 3; k++) {
        struct tpool t;
        tp_init(&t, terms[k]);
        tp_session(&t, "s1", 1000);
        tp_msg(&t, ROLE_USER, "Ann", "I flew my kite", 1000);
        tp_msg(&t, ROLE_USER, "Bob", "nice", 1000);
        tp_finish(&t, 0);
        T_EQ_INT(rank_named_speaker(&t.p, &t.q, &name), k == 0);
        T_CHECK(k == 0 ? name && !strcmp(name, "Ann") : name == NULL);
        tp_free(&t);
    }

    struct tpool t;
    struct dense_result dr;
    kite_pool(&t, one, 1, &dr);
    T_EQ_INT(rank_default(&t.p, &t.q, 1, &dr), 0);
    double before[3];
    for (int u = 0; u < 3; u++)
        before[u] = t.p.u[u].score;
    t.p.persp = calloc((size_t)t.p.nm, sizeof *t.p.persp);
    T_CHECK(t.p.persp != NULL);
    if (!t.p.persp) {
        tp_free(&t);
        return;
    }
    t.p.persp[1] = 1.4f;                /* Ann's wind turn, best */
    t.p.persp[2] = 1.2f;                /* Bob's turn, second */
    T_EQ_INT(rank_default(&t.p, &t.q, 1, &dr), 0);
    T_CHECK(fabs(t.p.u[0].score - before[0]) < EPS);
    T_CHECK(fabs(t.p.u[1].score - before[1] - PERSP_W / 61) < EPS);
    /* Bob is not named: SPK_OTHER of what the ranking gives him */
    T_CHECK(fabs(t.p.u[2].score - before[2] - SPK_OTHER * PERSP_W / 62) < EPS);
    T_CHECK(PERSP_W > 0);               /* shipped on: the checks above checked something */
    dr.cjk = 0.5;                       /* an English model, a CJK question: no dense rank */
    T_EQ_INT(rank_default(&t.p, &t.q, 1, &dr), 0);
    double cjk1 = t.p.u[1].score;
    free(t.p.persp);
    t.p.persp = NULL;
    T_EQ_INT(rank_default(&t.p, &t.q, 1, &dr), 0);
    T_CHECK(fabs(t.p.u[1].score - cjk1) < EPS);
    tp_free(&t);
}

/* The learned fusion's features (rank_lrn_features) on a pool built by
 * hand, the scores given: each over the question's best, the dense hits'
 * places and spread; a user-assistant unit gets none. rank_learned adds
 * the weighted sum in rank-1 units to the matched units only, and with
 * every weight 0 adds nothing. */
static void test_rank_learned(void)
{
    static const char *const terms[] = { "kite", NULL };
    struct tpool t;
    tp_init(&t, terms);
    tp_session(&t, "s1", 1000);
    tp_msg(&t, ROLE_USER, "Ann", "I flew my kite on the hill", 1000);      /* 7 tokens */
    tp_msg(&t, ROLE_USER, "Bob", "nice", 1000);
    tp_session(&t, "s2", 2000);
    tp_msg(&t, ROLE_USER, "Ann", "the kite broke", 2000);
    tp_session(&t, "s3", 3000);
    tp_msg(&t, ROLE_USER, NULL, "a question", 3000);
    tp_msg(&t, ROLE_ASSISTANT, NULL, "an answer", 3000);
    tp_finish(&t, 0);
    T_EQ_INT(t.p.nu, 4);
    double head[4] = { 4.0, 0.0, 2.0, 1.0 }, win[4] = { 1.0, 2.0, 0.5, 1.0 };
    double win2[4] = { 0.0, 0.0, 0.0, 0.0 };
    double f[4 * RANK_LRN_NF];
    t.p.m[0].dense = 1.5f;     /* cosines 0.5, 0.25 and 0.75 (unit 3: a chat */
    t.p.m[2].dense = 1.25f;    /* with an assistant, counted among the hits */
    t.p.m[3].dense = 1.75f;    /* but given no feature) */
    T_EQ_INT(rank_lrn_features(&t.p, head, win, win2, f), 0);
    const double *a = f, *b = f + RANK_LRN_NF, *c = f + 2 * RANK_LRN_NF, *d = f + 3 * RANK_LRN_NF;
    T_CHECK(fabs(a[RANK_LRN_HEAD] - 1.0) < EPS && fabs(c[RANK_LRN_HEAD] - 0.5) < EPS);
    T_CHECK(fabs(a[RANK_LRN_WIN] - 0.5) < EPS && fabs(b[RANK_LRN_WIN] - 1.0) < EPS);
    T_CHECK(a[RANK_LRN_WIN2] == 0);
    /* the session's best turn: s1's is unit 0's 4.0, s2's 2.0 */
    T_CHECK(fabs(b[RANK_LRN_SESS] - 1.0) < EPS && fabs(c[RANK_LRN_SESS] - 0.5) < EPS);
    T_CHECK(fabs(a[RANK_LRN_LEN] - 7.0 / 27) < EPS);
    /* cosines over the best hit's (0.75), z-scores over the three hits
     * (mean 0.5, sd sqrt(1/24)) */
    double sd = sqrt(1.0 / 24);
    T_CHECK(fabs(a[RANK_LRN_COS] - 0.5 / 0.75) < 1e-6);
    T_CHECK(fabs(a[RANK_LRN_COSZ]) < 1e-6);
    T_CHECK(fabs(c[RANK_LRN_COSZ] + 0.25 / sd) < 1e-5);
    T_CHECK(b[RANK_LRN_COS] == 0 && b[RANK_LRN_DRRF] == 0);
    /* places among the hits: unit 3 first, unit 0 second, unit 2 third */
    T_CHECK(fabs(a[RANK_LRN_DRRF] - 61.0 / 62) < EPS);
    T_CHECK(fabs(c[RANK_LRN_DRRF] - 61.0 / 63) < EPS);
    double marg = 0.25 / sd - 3.0;  /* the best hit's z-score less LRN_MARG_MID */
    T_CHECK(fabs(a[RANK_LRN_DMARG] - marg * 61.0 / 62) < 1e-4);
    for (int k = 0; k < RANK_LRN_NF; k++)
        T_CHECK(d[k] == 0);     /* a user-assistant unit */
    /* the sum: all 0 adds nothing; a weight adds its share of rank 1 */
    double w[RANK_LRN_NF] = { 0 };
    double before[4] = { 0.05, 0.0, 0.002, 0.01 };
    for (int u = 0; u < 4; u++)
        t.p.u[u].score = before[u];
    T_EQ_INT(rank_learned(&t.p, &t.q, head, win, win2, w), 0);
    for (int u = 0; u < 4; u++)
        T_CHECK(t.p.u[u].score == before[u]);
    w[RANK_LRN_HEAD] = 0.5;
    w[RANK_LRN_WIN] = -2.0;
    T_EQ_INT(rank_learned(&t.p, &t.q, head, win, win2, w), 0);
    T_CHECK(fabs(t.p.u[0].score - (0.05 + (0.5 * 1.0 - 2.0 * 0.5) / 61)) < EPS);
    T_CHECK(t.p.u[1].score == 0);           /* matched nothing: stays out */
    /* pushed below 0 by a negative weight: still ranked, last */
    T_CHECK(t.p.u[2].score > 0 && t.p.u[2].score < 1e-6);
    T_CHECK(t.p.u[3].score == 0.01);        /* user-assistant: unchanged */
    tp_free(&t);
}

/* Unit 0 ranks first on every keyword ranking of a store of one-turn
 * sessions (turn 1.0, window 1.6, wide window 1.0) and keeps `share` of
 * it; unit 1, second on each, keeps all of its own. */
static void check_demoted(struct tpool *t, double share)
{
    T_EQ_INT(rank_default(&t->p, &t->q, 1, NULL), 0);
    T_CHECK(fabs(t->p.u[0].score - share * (1.0 + 1.6 + 1.0) / 61) < EPS);
    if (share < 1) {
        T_CHECK(fabs(t->p.u[1].score - (1.0 + 1.6 + 1.0) / 62) < EPS);
        const int *ord = units_by_rank(&t->p);
        T_EQ_INT(ord[0], 1);
    }
    tp_free(t);
}

static void test_rank_speaker(void)
{
    static const char *const terms[] = { "Alice", "kite", NULL };
    struct tpool t;
    tp_init(&t, terms);
    tp_session(&t, "s1", 1000);
    tp_msg(&t, ROLE_USER, "Bob", "kite", 1000);
    tp_session(&t, "s2", 2000);
    tp_msg(&t, ROLE_USER, "Alice", "a kite today", 2000);
    tp_finish(&t, 0);
    /* Bob's short turn is first, but the question names Alice: the
     * others' turns are demoted (x 0.6) */
    check_demoted(&t, 0.6);
}

/* The question as query_parse makes it (the terms, the labels), on an
 * empty pool. */
static void tp_init_q(struct tpool *t, const char *question)
{
    tp_init(t, NULL);
    T_EQ_INT(query_parse(&t->q, question, CAIRN_NO_TIME, 0), CAIRN_OK);
}

static int term_label(const struct query *q, const char *word)
{
    char *n = norm_of(word);
    int r = -1;
    for (int i = 0; i < q->nt; i++)
        if (!strcmp(q->t[i].norm, n))
            r = q->t[i].label;
    free(n);
    return r;
}

/* A question that is a pasted transcript names who speaks each line. */
static void test_query_labels(void)
{
    struct query q;
    T_EQ_INT(query_parse(&q, "Bart: 我要表演魔术！\nBart: 我要穿什么？", CAIRN_NO_TIME, 0), 0);
    T_EQ_INT(term_label(&q, "Bart"), 1);
    T_EQ_INT(term_label(&q, "魔术"), 0);
    query_free(&q);
    /* a full-width colon, a name of two words; Bob speaks once: no label */
    T_EQ_INT(query_parse(&q, "Mary Jane：kite\nBob: kite?\n  Mary Jane：the red kite",
                         CAIRN_NO_TIME, 0), 0);
    T_EQ_INT(term_label(&q, "Mary"), 1);
    T_EQ_INT(term_label(&q, "Jane"), 1);
    T_EQ_INT(term_label(&q, "Bob"), 0);
    T_EQ_INT(term_label(&q, "kite"), 0);
    query_free(&q);
    /* not transcripts: one line, roles, log levels, sentences, lower case */
    static const char *const no[] = {
        "Bart: what did I say about the kite?",
        "User: the kite\nAssistant: a kite\nUser: which kite?",
        "Error: kite failed\nError: kite failed again",
        "WARN: kite low\nWARN: kite lower",
        "Why did it fail? Kite: none\nWhy did it fail? Kite: none",
        "bart: kite\nbart: kite again",
        NULL
    };
    for (int i = 0; no[i]; i++) {
        T_EQ_INT(query_parse(&q, no[i], CAIRN_NO_TIME, 0), 0);
        int any = 0;
        for (int t = 0; t < q.nt; t++)
            any |= q.t[t].label;
        if (any)
            fprintf(stderr, "taken for a transcript: %s\n", no[i]);
        T_CHECK(!any);
        query_free(&q);
    }
}

/* The question's terms and their surfaces, "norm|surface" apart by
 * spaces, into out. */
static void terms_of(const char *question, char *out, size_t n)
{
    struct query q;
    size_t k = 0;
    T_EQ_INT(query_parse(&q, question, CAIRN_NO_TIME, 0), 0);
    out[0] = 0;
    for (int t = 0; t < q.nt && k < n; t++)
        k += (size_t)snprintf(out + k, n - k, "%s%s|%s", t ? " " : "", q.t[t].norm,
                              q.t[t].surface);
    query_free(&q);
}

/* One '-' leading a word of QUERY_DASH_MIN bytes or more is not part of
 * it: "the -vec file" asks for "vec" (the index holds "-vec" whole only
 * where the text writes it apart); a short flag and a long option stay
 * whole, and a hyphen inside a word is the index's compound. */
static void test_query_dash(void)
{
    char got[512];
    terms_of("what is in the -vec file?", got, sizeof got);
    T_EQ_STR(got, "vec|vec file|file");
    terms_of("(-running) tests", got, sizeof got);
    T_EQ_STR(got, "run|running test|tests");
    terms_of("docker run -p 80 --rm", got, sizeof got);
    T_EQ_STR(got, "docker|docker run|run -p|-p 80|80 --rm|--rm");
    terms_of("a STORE-vec file, x-vec", got, sizeof got);
    T_EQ_STR(got, "store-vec|STORE-vec file|file x-vec|x-vec");
}

/* Two one-turn sessions: Lisa's memory, the better match, then a turn
 * about Bart (by speaker, or NULL: naming him in its text). */
static void two_people(struct tpool *t, const char *question, const char *speaker,
                       const char *text)
{
    tp_init_q(t, question);
    tp_session(t, "s1", 1000);
    tp_msg(t, ROLE_USER, NULL, "Lisa flew a kite, a red kite", 1000);
    tp_session(t, "s2", 2000);
    tp_msg(t, ROLE_USER, speaker, text, 2000);
    tp_finish(t, 0);
}

static void test_rank_label(void)
{
    static const char *const bart = "Bart: I flew my kite!\nBart: a red kite";
    static const char *const about = "Bart flew a kite at the beach with his father";
    struct tpool t;
    /* memories of two people, the question Bart's words (MADial's
     * shape): Lisa's does not name who speaks in the question, x 0.4 */
    two_people(&t, bart, NULL, about);
    check_demoted(&t, 0.4);
    /* Bart is also a speaker of the store: the speaker rule (x 0.6)
     * judges, the two are not stacked */
    two_people(&t, bart, "Bart", "my kite broke");
    check_demoted(&t, 0.6);
    /* the same store and words, not a transcript: nothing demoted */
    two_people(&t, "I flew my kite! a red kite", NULL, about);
    check_demoted(&t, 1.0);
}

static void test_rank_time(void)
{
    struct tpool t;
    ua_pool(&t);
    t.q.has_range = 1;
    t.q.from = 1500;
    t.q.to = 3500;                /* s2 and s3 */
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    T_CHECK(fabs(t.p.u[0].score - (1.0 + 0.6 + 0.8) / 61) < EPS);
    T_CHECK(fabs(t.p.u[1].score - ((0.6 + 0.8) / 62 + 1.0 / 61)) < EPS);
    T_CHECK(t.p.u[2].score == 0);             /* a boost, never a match by itself */
    T_CHECK(t.p.u[1].in_range && t.p.u[2].in_range && !t.p.u[0].in_range);
    /* without the time method: no boost (units are marked afresh) */
    for (int u = 0; u < t.p.nu; u++)
        t.p.u[u].in_range = 0;
    T_EQ_INT(rank_default(&t.p, &t.q, 0, NULL), 0);
    T_CHECK(fabs(t.p.u[1].score - (0.6 + 0.8) / 62) < EPS);
    /* a question that only names a period: the period is the answer */
    t.q.only_time = 1;
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    T_CHECK(fabs(t.p.u[2].score - 10.0) < EPS);
    tp_free(&t);
}

/* A question about the first (last) time: the earliest (latest) of the
 * units the words chose comes first, even when the words rank it last
 * (the words prefer "zebra" said more often: s3, s2, s1 without the cue,
 * s1 first for ORD_FIRST); it gains W_ORDINAL rank-1 shares, the next in
 * time order half that; a unit the words did not choose gains nothing. */
static void ordinal_pool(struct tpool *t, int forward)
{
    static const char *const terms[] = { "zebra", NULL };
    static const char *const text[] = {
        "a zebra", "a zebra and a zebra", "a zebra, a zebra and a zebra"
    };
    tp_init(t, terms);
    for (int i = 0; i < 3; i++) {
        char id[8];
        snprintf(id, sizeof id, "s%d", i + 1);
        tp_session(t, id, 1000 * (i + 1));
        tp_msg(t, ROLE_USER, NULL, text[forward ? i : 2 - i], 1000 * (i + 1));
    }
    tp_session(t, "s4", 4000);
    tp_msg(t, ROLE_USER, NULL, "nothing relevant", 4000);
    tp_finish(t, 0);
}

static void test_rank_ordinal(void)
{
    for (int ord = ORD_FIRST; ord <= ORD_LAST; ord++) {
        struct tpool t;
        /* the words rank against the cue: the most "zebra" away from it */
        ordinal_pool(&t, ord == ORD_FIRST);
        double before[4];
        T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
        for (int u = 0; u < 4; u++)
            before[u] = t.p.u[u].score;
        int want = ord == ORD_FIRST ? 0 : 2, next = 1, far = ord == ORD_FIRST ? 2 : 0;
        T_CHECK(before[want] < before[next] && before[next] < before[far]);
        t.q.ordinal = ord;
        T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
        const int *o = units_by_rank(&t.p);
        T_CHECK(o != NULL);
        if (o)
            T_EQ_INT(o[0], want);
        T_CHECK(fabs(t.p.u[want].score - before[want] - W_ORDINAL / 61) < EPS);
        T_CHECK(fabs(t.p.u[next].score - before[next] - W_ORDINAL / 61 / 2) < EPS);
        T_CHECK(t.p.u[3].score == 0);           /* a preference, never a match */
        /* without the time method the cue is not read */
        T_EQ_INT(rank_default(&t.p, &t.q, 0, NULL), 0);
        T_CHECK(fabs(t.p.u[want].score - before[want]) < EPS);
        tp_free(&t);
    }
}

/* ORD_DAY ("on the first day we..."): the units of the first session
 * share its place, whatever their position, and the words order them. */
static void test_rank_ordinal_day(void)
{
    static const char *const terms[] = { "zebra", NULL };
    if (!ORD_BY_DAY) {
        T_SKIP("ORD_BY_DAY is 0 in policy.h: days are not ordered apart");
        return;
    }
    struct tpool t;
    tp_init(&t, terms);
    tp_session(&t, "s1", 1000);
    tp_msg(&t, ROLE_USER, NULL, "a zebra", 1000);
    tp_msg(&t, ROLE_USER, NULL, "a zebra, a zebra and a zebra", 1000);
    tp_session(&t, "s2", 2000);
    tp_msg(&t, ROLE_USER, NULL, "a zebra and a zebra", 2000);
    tp_finish(&t, 0);
    double before[3];
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    for (int u = 0; u < 3; u++)
        before[u] = t.p.u[u].score;
    t.q.ordinal = ORD_FIRST | ORD_DAY;
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    T_CHECK(fabs(t.p.u[0].score - before[0] - W_ORDINAL / 61) < EPS);
    T_CHECK(fabs(t.p.u[1].score - before[1] - W_ORDINAL / 61) < EPS);
    T_CHECK(fabs(t.p.u[2].score - before[2] - W_ORDINAL / 61 / 2) < EPS);
    /* the words still order the first day's units */
    T_EQ_INT(t.p.u[0].score > t.p.u[1].score, before[0] > before[1]);
    T_CHECK(t.p.u[1].score > t.p.u[2].score && t.p.u[0].score > t.p.u[2].score);
    tp_free(&t);
}

/* The length prior (len_rank): from LEN_DIALOG_MIN_BUDGET tokens the
 * matched units between people get one more fused ranking, longest lead
 * turn first; below it, and for a turn that matched nothing, nothing is
 * added. */
static void test_rank_length_gate(void)
{
    static const char *const terms[] = { "kite", NULL };
    if (W_LEN_DIALOG <= 0) {
        T_SKIP("W_LEN_DIALOG is 0 in policy.h: no length prior");
        return;
    }
    struct tpool t;
    tp_init(&t, terms);
    tp_session(&t, "s1", 1000);
    tp_msg(&t, ROLE_USER, NULL, "a kite!", 1000);
    tp_msg(&t, ROLE_USER, NULL, "we flew the red kite on the beach all afternoon with the kids", 1000);
    tp_session(&t, "s2", 2000);     /* out of the first session's windows */
    tp_msg(&t, ROLE_USER, NULL, "nothing about it at all, only a much longer turn of other words", 2000);
    tp_finish(&t, 0);
    double off[3], below[3];
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);         /* budget 0 */
    for (int u = 0; u < 3; u++)
        off[u] = t.p.u[u].score;
    t.p.budget = LEN_DIALOG_MIN_BUDGET - 1;
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    for (int u = 0; u < 3; u++)
        below[u] = t.p.u[u].score;
    t.p.budget = LEN_DIALOG_MIN_BUDGET;
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    for (int u = 0; u < 3; u++)
        T_CHECK(fabs(below[u] - off[u]) < EPS);
    /* the long turn ranks first, the short one second, the third matched
     * nothing and gets nothing */
    T_CHECK(fabs(t.p.u[1].score - off[1] - W_LEN_DIALOG / (RRF_K + 1)) < EPS);
    T_CHECK(fabs(t.p.u[0].score - off[0] - W_LEN_DIALOG / (RRF_K + 2)) < EPS);
    T_CHECK(fabs(t.p.u[2].score - off[2]) < EPS);
    tp_free(&t);
}

/* ---- the gate ---- */

/* Four sessions of one turn: "music" in each, "xylophone" (IDF 3) in the
 * last alone. */
static void gate_pool(struct tpool *t)
{
    static const char *const terms[] = { "xylophone", "music", NULL };
    tp_init(t, terms);
    for (int i = 0; i < 4; i++) {
        char ext[8];
        snprintf(ext, sizeof ext, "s%d", i);
        tp_session(t, ext, 1000 * (i + 1));
        tp_msg(t, ROLE_USER, NULL, i == 3 ? "xylophone music" : "music", 1000);
    }
    tp_finish(t, 0);
    t->q.t[0].idf_msg = 3.0;
    t->q.t[1].idf_msg = 1.0;
}

static void test_gate(void)
{
    struct tpool t;
    double share, weight;
    gate_pool(&t);
    /* the unit that holds both terms is 4th: the gate looks at the top 3 */
    double sc[4] = { 0.9, 0.8, 0.7, 0.6 };
    for (int u = 0; u < 4; u++)
        t.p.u[u].score = sc[u];
    recall_gate(&t.p, &t.q, &share, &weight);
    T_CHECK(fabs(share - 0.25) < EPS);
    T_CHECK(fabs(weight - 1.0 / log(1.0 + 4 + 1.0)) < EPS);
    /* 3rd: it counts */
    free(t.p.ord);
    t.p.ord = NULL;
    t.p.u[3].score = 0.75;
    recall_gate(&t.p, &t.q, &share, &weight);
    T_CHECK(fabs(share - 1.0) < EPS);
    T_CHECK(fabs(weight - 4.0 / log(6.0)) < EPS);
    /* a unit with no score is never a match */
    free(t.p.ord);
    t.p.ord = NULL;
    for (int u = 0; u < 4; u++)
        t.p.u[u].score = u == 3 ? 0 : sc[u];
    t.p.u[0].score = 0;
    t.p.u[1].score = 0;
    t.p.u[2].score = 0;
    recall_gate(&t.p, &t.q, &share, &weight);
    T_CHECK(share == 0 && weight == 0);
    /* a question about the first time: the earliest units lead by the
     * first/last preference alone (ord_bonus), the one the words rank best
     * is 4th; it is judged all the same, the order being no judgement */
    double words[4] = { 0.3, 0.2, 0.1, 0.6 };
    for (int u = 0; u < 4; u++) {
        t.p.u[u].ord_bonus = u < 3 ? 0.6 : 0;
        t.p.u[u].score = words[u] + t.p.u[u].ord_bonus;   /* 0.9 0.8 0.7 0.6 */
    }
    free(t.p.ord);
    t.p.ord = NULL;
    recall_gate(&t.p, &t.q, &share, &weight);
    T_CHECK(fabs(share - 0.25) < EPS);          /* not cued: the top 3 alone */
    t.q.ordinal = ORD_FIRST;
    recall_gate(&t.p, &t.q, &share, &weight);
    T_CHECK(fabs(share - 1.0) < EPS);
    t.q.ordinal = 0;
    for (int u = 0; u < 4; u++)
        t.p.u[u].ord_bonus = 0;

    /* the decisions on those figures: share >= 0.6 and weight >= 1.5 */
    struct cairn_recall r;
    const char *why = NULL;
    memset(&r, 0, sizeof r);
    T_EQ_INT(cairn_inject_gate(&r, &why), 0);
    T_EQ_STR(why, "nothing recalled");
    r.n_items = 1;
    r.match = 0.25;
    r.match_weight = 4.0 / log(6.0);
    T_EQ_INT(cairn_inject_gate(&r, &why), 0);
    r.match = 0.59;
    T_EQ_INT(cairn_inject_gate(&r, &why), 0);
    r.match = 0.6;
    T_EQ_INT(cairn_inject_gate(&r, &why), 1);
    T_EQ_STR(why, "strong match on distinctive words");
    r.match_weight = 1.49;
    T_EQ_INT(cairn_inject_gate(&r, &why), 0);
    T_EQ_STR(why, "weak match: only common words are shared");
    r.match_weight = 1.5;
    T_EQ_INT(cairn_inject_gate(&r, &why), 1);
    r.match = 0;
    r.cosine = 0.7;
    /* a cosine opens it only at the model's measured threshold
     * (recall/policy.h: 0.7 for use-lite-en; 0 for a model not measured) */
    r.gate_cosine = 0;
    r.cosine_z = GATE_COS_Z;
    T_EQ_INT(cairn_inject_gate(&r, &why), 0);
    r.gate_cosine = 0.7;
    T_EQ_INT(cairn_inject_gate(&r, &why), 1);
    T_EQ_STR(why, "close in meaning (cosine)");
    /* ... and only well ahead of the question's other hits (GATE_COS_Z):
     * on a store of one project every message is close to every question */
    r.cosine_z = GATE_COS_Z - 0.01;
    T_EQ_INT(cairn_inject_gate(&r, &why), 0);
    r.cosine_z = GATE_COS_Z;
    r.cosine = 0.69;
    T_EQ_INT(cairn_inject_gate(&r, &why), 0);
    r.only_time = 1;
    T_EQ_INT(cairn_inject_gate(&r, &why), 1);
    r.only_time = 0;
    r.cosine = 0;

    /* with dense hits (gate_dense) a match under GATE_DENSE_WEIGHT passes
     * only where the dense hits agree (match_dense); keyword's is as above */
    r.match = 0.6;
    r.match_weight = 1.5;
    T_EQ_INT(cairn_inject_gate(&r, &why), 1);
    r.gate_dense = 1;
    T_EQ_INT(cairn_inject_gate(&r, &why), 0);
    T_EQ_STR(why, "weak match: few distinctive words, and the closest in meaning are elsewhere");
    r.match_dense = GATE_AGREE_SHARE;
    T_EQ_INT(cairn_inject_gate(&r, &why), 1);
    r.match_dense = 0;
    r.match_weight = GATE_DENSE_WEIGHT;
    T_EQ_INT(cairn_inject_gate(&r, &why), 1);
    r.match = 0.59;                             /* the share still rules */
    r.match_dense = 1;
    T_EQ_INT(cairn_inject_gate(&r, &why), 0);
    tp_free(&t);
}

/* recall_gate_dense: the units the words alone rank best are judged too,
 * and the agreement is the share of a top unit holding a best dense hit. */
static void test_gate_dense(void)
{
    struct tpool t;
    double share, weight, agree;
    gate_pool(&t);
    /* fused: the unit holding both terms is 4th (dense hits ranked the
     * others up); by the words alone it is first */
    double sc[4] = { 0.9, 0.8, 0.7, 0.6 }, wsc[4] = { 0.1, 0.2, 0.3, 0.5 };
    for (int u = 0; u < 4; u++)
        t.p.u[u].score = sc[u];
    recall_gate(&t.p, &t.q, &share, &weight);
    T_CHECK(fabs(share - 0.25) < EPS);
    /* no dense hit: nothing to agree with, the figures stay */
    recall_gate_dense(&t.p, &t.q, &share, &weight, &agree);
    T_CHECK(fabs(share - 0.25) < EPS && agree == 0);
    /* the keyword rankings' scores, as rank_default keeps them with dense
     * hits (freed by pool_free) */
    t.p.s_words = malloc(4 * sizeof *t.p.s_words);
    T_CHECK(t.p.s_words != NULL);
    memcpy(t.p.s_words, wsc, sizeof wsc);
    /* dense hits on units 0 and 3: the words' best unit raises the share
     * to 1; unit 0 (fused top, a dense hit) agrees with its quarter */
    t.p.m[t.p.u[0].head].dense = 1.6f;
    t.p.m[t.p.u[3].head].dense = 1.5f;
    recall_gate_dense(&t.p, &t.q, &share, &weight, &agree);
    T_CHECK(fabs(share - 1.0) < EPS);
    T_CHECK(fabs(weight - 4.0 / log(6.0)) < EPS);
    T_CHECK(fabs(agree - 0.25) < EPS);
    /* the words' best unit also fused top: it agrees, share 1 */
    free(t.p.ord);
    t.p.ord = NULL;
    t.p.u[3].score = 0.95;
    recall_gate_dense(&t.p, &t.q, &share, &weight, &agree);
    T_CHECK(fabs(agree - 1.0) < EPS);
    /* a unit the words did not match (s_words 0) is never judged by them */
    free(t.p.ord);
    t.p.ord = NULL;
    t.p.u[3].score = 0.6;
    t.p.s_words[3] = 0;
    share = 0.25;
    weight = 1.0 / log(6.0);
    recall_gate_dense(&t.p, &t.q, &share, &weight, &agree);
    T_CHECK(fabs(share - 0.25) < EPS);
    tp_free(&t);
}

/* ---- packing ---- */

static char *words(const char *w, int n)
{
    size_t k = strlen(w) + 1;
    char *s = malloc(k * (size_t)n + 1), *p = s;
    for (int i = 0; i < n; i++) {
        memcpy(p, w, k - 1);
        p[k - 1] = ' ';
        p += k;
    }
    *p = '\0';
    return s;
}

static void test_pack_whole_store(void)
{
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    ua_pool(&t);
    t.p.all_mode = 1;
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    T_EQ_INT(pack_mem(&t, &ms, 1000, NULL, &r), CAIRN_OK);
    /* it fits: every turn, verbatim, oldest session first, one read */
    T_EQ_INT(r.n_items, 6);
    for (size_t i = 0; i < r.n_items; i++)
        T_EQ_INT(r.items[i].excerpt, 0);
    T_EQ_STR(r.items[0].message, "m1");
    T_EQ_STR(r.items[5].message, "m6");
    T_EQ_STR(r.items[0].session, "s1");
    T_CHECK(strstr(r.text, "user: tell me about the zebra and the quokka\n"
                           "assistant: sure, here is what I know\n") != NULL);
    T_CHECK(strstr(r.text, "assistant: nothing here either\n") != NULL);
    T_EQ_INT(r.tokens, text_count_tokens(r.text, strlen(r.text)));
    T_EQ_INT(ms.meta_calls, 1);
    T_EQ_INT(ms.text_calls, 1);
    int tokens = r.tokens;
    result_free(&r);
    unpack(&t);
    /* one token short: not everything, and still within the budget */
    T_EQ_INT(pack_mem(&t, &ms, tokens - 1, NULL, &r), CAIRN_OK);
    T_CHECK(r.n_items < 6 && r.n_items > 0);
    T_CHECK(r.tokens <= tokens - 1);
    result_free(&r);
    tp_free(&t);
}

/* One session of three rounds: short questions, a short first reply and
 * long replies after. */
static void rounds_pool(struct tpool *t, char **long_reply)
{
    static const char *const terms[] = { "zebra", NULL };
    tp_init(t, terms);
    *long_reply = words("stripes", 300);
    tp_session(t, "s1", 1000);
    tp_msg(t, ROLE_USER, NULL, "zebra zebra zebra facts?", 1000);
    tp_msg(t, ROLE_ASSISTANT, NULL, "they are striped", 1000);
    tp_msg(t, ROLE_USER, NULL, "zebra zebra habitat?", 1000);
    tp_msg(t, ROLE_ASSISTANT, NULL, *long_reply, 1000);
    tp_msg(t, ROLE_USER, NULL, "zebra diet?", 1000);
    tp_msg(t, ROLE_ASSISTANT, NULL, *long_reply, 1000);
    tp_finish(t, 0);
    rank_default(&t->p, &t->q, 1, NULL);
}

static void test_pack_user_first(void)
{
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    char *long_reply;
    int saw_heads_only = 0, saw_reply = 0;
    rounds_pool(&t, &long_reply);
    const int *ord = units_by_rank(&t.p);
    T_EQ_INT(ord[0], 0);
    T_EQ_INT(ord[1], 1);
    T_EQ_INT(ord[2], 2);
    for (int budget = 20; budget <= 900; budget += 3) {
        T_EQ_INT(pack_mem(&t, &ms, budget, NULL, &r), CAIRN_OK);
        /* the hard limit, on the text as counted */
        T_CHECK(r.tokens <= budget);
        T_EQ_INT(r.tokens, text_count_tokens(r.text, strlen(r.text)));
        int h1 = item_of(&r, "m1") >= 0, r1 = item_of(&r, "m2") >= 0;
        int h2 = item_of(&r, "m3") >= 0, r2 = item_of(&r, "m4") >= 0;
        int h3 = item_of(&r, "m5") >= 0, r3 = item_of(&r, "m6") >= 0;
        /* a reply only with its question; the best round's before any
         * other's; the other rounds' replies only once every question is in */
        T_CHECK(!r1 || h1);
        T_CHECK(!r2 || h2);
        T_CHECK(!r3 || h3);
        T_CHECK(!(r2 || r3) || (h1 && r1 && h2 && h3));
        T_CHECK(!h2 || h1);
        if (h1 && h2 && h3 && !r2 && !r3)
            saw_heads_only = 1;
        if (r2) {
            saw_reply = 1;
            /* a long reply is an excerpt, within its cap (5% of the
             * budget, at least 150 tokens) */
            int k = item_of(&r, "m4");
            T_EQ_INT(r.items[k].excerpt, 1);
        }
        /* each message is read once, in a few batches */
        for (int i = 0; i < t.p.nm; i++)
            T_CHECK(ms.reads[i] <= 1);
        T_CHECK(ms.text_calls <= 3);
        result_free(&r);
        unpack(&t);
    }
    T_CHECK(saw_heads_only);
    T_CHECK(saw_reply);
    /* a message the caller already has is never packed */
    T_EQ_INT(pack_mem(&t, &ms, 900, "s1\tm1\n", &r), CAIRN_OK);
    T_EQ_INT(item_of(&r, "m1"), -1);
    T_CHECK(item_of(&r, "m3") >= 0);
    result_free(&r);
    tp_free(&t);
    free(long_reply);
}

/* Reply snippets (issue 15): thirty rounds whose questions fill the budget
 * (one in five names the zebra); in round 22 the user only says "go on"
 * and the assistant's reply holds the answer. From PACK_SNIP_MIN tokens on, a round packed early whose
 * reply matches better than its question gives that reply as a short
 * excerpt around the question's words; below it, the first rounds only
 * (PACK_PAIR_EVERY), their turns cut shorter. */
static void test_pack_reply_snippet(void)
{
    static const char *const terms[] = { "zebra", "quokka", NULL };
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    char *filler = words("lorem ipsum dolor sit amet.", 40);
    char *reply = words("stripes and more stripes.", 120);
    size_t n = 2 * strlen(reply) + 200;
    char *answer = malloc(n);
    char *turns[30];
    snprintf(answer, n, "%s\nThe zebra and the quokka share one burrow at night.\n%s", reply,
             reply);
    tp_init(&t, terms);
    tp_session(&t, "s1", 1000);
    for (int i = 0; i < 30; i++) {
        size_t tn = strlen(filler) + 64;
        turns[i] = malloc(tn);
        snprintf(turns[i], tn, "%s question %d? %s", i % 5 ? "another" : i ? "zebra" : "zebra and quokka", i, filler);
        tp_msg(&t, ROLE_USER, NULL, i == 22 ? "go on" : turns[i], 1000);
        tp_msg(&t, ROLE_ASSISTANT, NULL, i == 22 ? answer : reply, 1000);
    }
    tp_finish(&t, 0);
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    int total = 0;
    for (int i = 0; i < t.p.nm; i++)
        total += text_count_tokens(t.text[i], strlen(t.text[i]));
    T_CHECK(total > 12000);
    /* the answer's round ranks high (its reply), but after the round that
     * names both (whose replies the first pass packs anyway) */
    T_CHECK(units_by_rank(&t.p) != NULL);
    T_CHECK(t.p.u[22].rank > 0 && t.p.u[22].rank < 8);
    T_EQ_INT(pack_mem(&t, &ms, 4000, NULL, &r), CAIRN_OK);    /* PACK_SNIP_MIN */
    T_CHECK(r.tokens <= 4000);
    int k = item_of(&r, "m46");
    T_CHECK(k >= 0);
    if (k >= 0) {
        T_EQ_INT(r.items[k].excerpt, 1);
        T_EQ_STR(r.items[k].role, "assistant");
    }
    T_CHECK(item_of(&r, "m45") >= 0);           /* with the turn that asked */
    T_CHECK(strstr(r.text, "The zebra and the quokka share one burrow at night.") != NULL);
    /* replies that match no better than their question give no snippet */
    T_EQ_INT(item_of(&r, "m4"), -1);
    int snip = text_count_tokens(t.p.m[45].text, strlen(t.p.m[45].text));
    /* PACK_MIN_EXCERPT (40), widened by the few tokens the budget has
     * left (the reply's opening comes first: PACK_REPLY_LEAD), far from
     * the lane's 150 below */
    T_CHECK(snip <= 60);
    result_free(&r);
    unpack(&t);
    /* a question about what the assistant said opens the reply lane,
     * which widens the snippet to the lane's cap for a reply (5% of the
     * budget, at least 150 tokens) rather than leaving it at 40 */
    t.q.asks_reply = 1;
    T_EQ_INT(pack_mem(&t, &ms, 4000, NULL, &r), CAIRN_OK);
    T_CHECK(r.tokens <= 4000);
    T_CHECK(item_of(&r, "m46") >= 0);
    int wide = t.p.m[45].text ? text_count_tokens(t.p.m[45].text, strlen(t.p.m[45].text)) : 0;
    T_CHECK(wide > 100 && wide <= 200);
    T_EQ_INT(r.tokens, text_count_tokens(r.text, strlen(r.text)));
    t.q.asks_reply = 0;
    result_free(&r);
    unpack(&t);
    /* below PACK_SNIP_MIN, reply pairs: the first 3000 / PACK_PAIR_EVERY
     * rounds packed (round 22 among them) give the snippet too, with
     * their turn; a reply no better than its question still gives none */
    int every = PACK_PAIR_EVERY > 0 ? PACK_PAIR_EVERY : 1;
    T_CHECK(t.p.u[22].rank < 3000 / every);
    T_EQ_INT(pack_mem(&t, &ms, 3000, NULL, &r), CAIRN_OK);
    T_CHECK(r.tokens <= 3000);
    k = item_of(&r, "m46");
    T_CHECK(k >= 0);
    if (k >= 0)
        T_EQ_INT(r.items[k].excerpt, 1);
    T_CHECK(item_of(&r, "m45") >= 0);
    T_EQ_INT(item_of(&r, "m4"), -1);
    T_CHECK(t.p.m[45].text && text_count_tokens(t.p.m[45].text, strlen(t.p.m[45].text)) <= 60);
    result_free(&r);
    unpack(&t);
    /* and a reply of a round ranked past them gives none */
    T_EQ_INT(pack_mem(&t, &ms, 1000, NULL, &r), CAIRN_OK);
    T_CHECK(r.tokens <= 1000);
    if (t.p.u[22].rank >= 1000 / every)
        T_EQ_INT(item_of(&r, "m46"), -1);
    result_free(&r);
    tp_free(&t);
    for (int i = 0; i < 30; i++)
        free(turns[i]);
    free(filler);
    free(reply);
    free(answer);
}

/* A source whose reads are round trips (a server store: pack_src.ahead,
 * store_read_ahead) reads further ahead, every ranked round's replies
 * among what it plans: the same text, items and tokens at every budget,
 * with and without the reply lane, in fewer reads. */
static void test_pack_read_ahead(void)
{
    static const char *const terms[] = { "zebra", "quokka", NULL };
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r0, r1;
    char *filler = words("lorem ipsum dolor sit amet.", 30);
    char *reply = words("stripes and the zebra again.", 60);
    char *turns[40];
    tp_init(&t, terms);
    tp_session(&t, "s1", 1000);
    for (int i = 0; i < 40; i++) {
        size_t tn = strlen(filler) + 64;
        turns[i] = malloc(tn);
        snprintf(turns[i], tn, "%s question %d? %s", i % 3 ? "another" : "zebra quokka", i, filler);
        tp_msg(&t, ROLE_USER, NULL, turns[i], 1000);
        tp_msg(&t, ROLE_ASSISTANT, NULL, i % 4 ? reply : "a quokka", 1000);
        tp_msg(&t, ROLE_ASSISTANT, NULL, reply, 1000);
    }
    tp_finish(&t, 0);
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    static const int budgets[] = { 500, 1000, 3000, 4000, 8000 };
    int fewer = 0;
    for (int lane = 0; lane < 2; lane++)
        for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
            t.q.asks_reply = lane;
            pack_ahead = 0;
            T_EQ_INT(pack_mem(&t, &ms, budgets[b], NULL, &r0), CAIRN_OK);
            int calls0 = ms.meta_calls + ms.text_calls;
            unpack(&t);
            pack_ahead = 8;
            T_EQ_INT(pack_mem(&t, &ms, budgets[b], NULL, &r1), CAIRN_OK);
            int calls1 = ms.meta_calls + ms.text_calls;
            unpack(&t);
            T_EQ_STR(r1.text, r0.text);
            T_EQ_INT((int)r1.n_items, (int)r0.n_items);
            T_EQ_INT(r1.tokens, r0.tokens);
            T_CHECK(calls1 <= calls0);
            /* read ahead 8 x FETCH_BATCH = 128 turns, every turn planned:
             * the 120 read in one meta and one text call (pack53: the
             * plan's table losing places as it grows reads 4 to 46) */
            T_EQ_INT(calls1, 2);
            fewer += calls1 < calls0;
            result_free(&r0);
            result_free(&r1);
        }
    T_CHECK(fewer >= 5);
    pack_ahead = 0;
    t.q.asks_reply = 0;
    tp_free(&t);
    for (int i = 0; i < 40; i++)
        free(turns[i]);
    free(filler);
    free(reply);
}

/* r's items as one string (they borrow from the pool: read before
 * unpack), each item's session, message, rank and excerpt flag */
static char *items_sig(const struct cairn_recall *r)
{
    size_t cap = 64 * r->n_items + 1, len = 0;
    char *s = malloc(cap);
    s[0] = '\0';
    for (size_t i = 0; i < r->n_items && len < cap; i++)
        len += (size_t)snprintf(s + len, cap - len, "%.20s/%.20s/%d/%d\n", r->items[i].session,
                                r->items[i].message, r->items[i].rank, r->items[i].excerpt);
    return s;
}

/* pack's shortcuts (pack53) against its walk (p->pack_walk, the code
 * before them): the first pass's tail, where only the open sessions'
 * units are tried once every other one is refused on the least header
 * floor (pass_closed, pass_tail, their heads read ahead); the reads
 * planned as the pass goes (plan_to); the second pass over the rounds
 * whose lead turn is packed (picked_ranks); the sessions ordered from
 * the picked turns (session_order). Random pools of up to 40 sessions
 * (user-assistant or between people, some without a four-digit year's
 * time), random texts naming the question's words or not, budgets from
 * 30 to 1,500 tokens, the reply lane, citations and a server's read
 * ahead on and off: the same text, tokens and items. A tail that kept a
 * session not open, dropped an open one's unit or took them out of rank
 * order fails it, as does a second pass that missed a packed round. */
static void test_pack_walk(void)
{
    static const char *const terms[] = { "zebra", "quokka", "ferry", NULL };
    static const char *const vocab[] = { "zebra", "quokka", "ferry", "lorem", "ipsum", "dolor",
                                         "the", "harbour", "and", "timetable", "a", "storm",
                                         "delayed", "we", "fixed", "it", "later", "again" };
    static const int budgets[] = { 30, 45, 60, 80, 120, 200, 350, 600, 1000, 1500 };
    unsigned seed = 53;
    int tails = 0, compared = 0, none_year4 = 0;
    for (int round = 0; round < 24; round++) {
        struct tpool t;
        char *texts[CAP];
        int nt = 0;
        tp_init(&t, terms);
        int dialog = round % 4 == 3, nsess = 8 + round % 33;
        for (int si = 0; si < nsess && t.p.nm + 4 <= CAP; si++) {
            char ext[16];
            snprintf(ext, sizeof ext, "s%d", si);
            seed = seed * 1103515245u + 12345u;
            int64_t at = 1700000000 + (int64_t)(seed >> 8) % 40000000;
            if (round % 3 == 2 && (seed >> 4) % 4 == 0) {
                at = si % 2 ? CAIRN_NO_TIME : -40000000000LL;   /* no four-digit year */
                none_year4++;
            }
            tp_session(&t, ext, at);
            if ((seed >> 6) % 3 == 0) {
                /* no title nor source: the header costs its floor */
                struct rsession *ts = &t.p.s[t.p.ns - 1];
                free(ts->title);
                free(ts->source);
                ts->title = ts->source = NULL;
            }
            int nmsg = 2 + (int)((seed >> 20) % 3);
            for (int j = 0; j < nmsg; j++) {
                seed = seed * 1103515245u + 12345u;
                int nw = 2 + (int)((seed >> 10) % (j % 2 ? 90 : 30));
                size_t cap = (size_t)nw * 12 + 1, len = 0;
                char *txt = malloc(cap);
                for (int w = 0; w < nw; w++) {
                    seed = seed * 1103515245u + 12345u;
                    const char *v = vocab[(seed >> 12) % (sizeof vocab / sizeof *vocab)];
                    len += (size_t)snprintf(txt + len, cap - len, "%s%s", w ? " " : "", v);
                }
                texts[nt++] = txt;
                int role = dialog || j % 2 == 0 ? ROLE_USER : ROLE_ASSISTANT;
                tp_msg(&t, role, dialog ? (j % 2 ? "Ann" : "Bo") : NULL, txt, at == CAIRN_NO_TIME ? at : at + 60 * j);
            }
        }
        tp_finish(&t, 0);
        T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
        for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++)
            for (int v = 0; v < 8; v++) {
                struct memsrc ms;
                struct cairn_recall r0, r1;
                struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
                o.budget = budgets[b];
                o.flags = v & 1 ? CAIRN_RECALL_CITE : 0;
                t.q.asks_reply = !!(v & 2);
                pack_ahead = v & 4 ? 8 : 0;
                t.p.pack_walk = 0;
                T_EQ_INT(pack_opts(&t, &ms, &o, &r0), CAIRN_OK);
                tails += t.p.pack_tail >= 0;
                char *sig0 = items_sig(&r0);
                unpack(&t);
                t.p.pack_walk = 1;
                T_EQ_INT(pack_opts(&t, &ms, &o, &r1), CAIRN_OK);
                T_EQ_INT(t.p.pack_tail, -1);
                char *sig1 = items_sig(&r1);
                unpack(&t);
                T_EQ_STR(r0.text, r1.text);
                T_EQ_INT(r0.tokens, r1.tokens);
                T_EQ_INT((int)r0.n_items, (int)r1.n_items);
                T_EQ_STR(sig0, sig1);
                compared += r0.n_items > 0;
                free(sig0);
                free(sig1);
                result_free(&r0);
                result_free(&r1);
            }
        pack_ahead = 0;
        tp_free(&t);
        for (int i = 0; i < nt; i++)
            free(texts[i]);
    }
    /* the shortcuts were taken, and the walk compared with something */
    T_CHECK(tails >= 100);
    T_CHECK(compared >= 1000);
    T_CHECK(none_year4 >= 20);
}

/* A summary question (issue 15): sixty rounds, each user turn and reply
 * naming the topic once in a long text. User-first packing fills 4000
 * tokens with the best rounds' turns and one round's replies; a summary
 * question gets each ranked round's turn and best reply, both cut short
 * (PACK_SUM_TURN, PACK_SUM_REPLY), so most rounds come back with their
 * reply; a question about the order things came up in gets the turns cut
 * short, without replies first. Below PACK_SUM_MIN the question is packed
 * as any other. */
static void test_pack_summary(void)
{
    static const char *const terms[] = { "zebra", NULL };
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    char *filler = words("lorem ipsum dolor sit amet.", 30);
    char *rfill = words("stripes and more stripes.", 60);
    char *turns[60], *replies[60];
    tp_init(&t, terms);
    tp_session(&t, "s1", 1000);
    for (int i = 0; i < 60; i++) {
        size_t tn = strlen(filler) + 64, rn = strlen(rfill) + 64;
        turns[i] = malloc(tn);
        replies[i] = malloc(rn);
        snprintf(turns[i], tn, "step %d of the zebra project. %s", i, filler);
        snprintf(replies[i], rn, "For step %d the zebra needs this. %s", i, rfill);
        tp_msg(&t, ROLE_USER, NULL, turns[i], 1000);
        tp_msg(&t, ROLE_ASSISTANT, NULL, replies[i], 1000);
    }
    tp_finish(&t, 0);
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    int counts[3][2] = { { 0, 0 } };    /* [asks_summary][turns, replies] */
    for (int sum = 0; sum < 3; sum++) {
        t.q.asks_summary = sum;
        T_EQ_INT(pack_mem(&t, &ms, PACK_SUM_MIN, NULL, &r), CAIRN_OK);
        T_CHECK(r.tokens <= PACK_SUM_MIN);
        T_EQ_INT(r.tokens, text_count_tokens(r.text, strlen(r.text)));
        for (size_t j = 0; j < r.n_items; j++) {
            int reply = !strcmp(r.items[j].role, "assistant");
            counts[sum][reply]++;
            /* a reply only with the turn that asked it */
            if (reply) {
                char id[16];
                snprintf(id, sizeof id, "m%d", atoi(r.items[j].message + 1) - 1);
                T_CHECK(item_of(&r, id) >= 0);
            }
        }
        if (sum) {
            for (int i = 0; i < t.p.nm; i++) {
                if (!t.p.m[i].text || t.p.m[i].picked != 2)
                    continue;
                int c = text_count_tokens(t.p.m[i].text, strlen(t.p.m[i].text));
                T_CHECK(c <= (t.p.m[i].role == ROLE_USER ? PACK_SUM_TURN : 4000));
            }
        }
        result_free(&r);
        unpack(&t);
    }
    T_CHECK(counts[0][1] <= 2);                 /* user first: one round's reply */
    T_CHECK(counts[1][1] >= 30);                /* broad: most rounds' replies */
    T_CHECK(counts[1][0] >= counts[0][0]);      /* and no fewer turns */
    /* the order things came up in: broad over the turns, replies only
     * from the budget left */
    T_CHECK(counts[2][0] >= 50 && counts[2][0] > counts[0][0]);
    T_CHECK(counts[2][1] < counts[1][1]);
    /* below PACK_SUM_MIN nothing changes */
    t.q.asks_summary = 0;
    T_EQ_INT(pack_mem(&t, &ms, PACK_SUM_MIN / 2, NULL, &r), CAIRN_OK);
    char *plain = strdup(r.text);
    result_free(&r);
    unpack(&t);
    t.q.asks_summary = 1;
    T_EQ_INT(pack_mem(&t, &ms, PACK_SUM_MIN / 2, NULL, &r), CAIRN_OK);
    T_CHECK(plain && !strcmp(plain, r.text));
    free(plain);
    result_free(&r);
    tp_free(&t);
    for (int i = 0; i < 60; i++) {
        free(turns[i]);
        free(replies[i]);
    }
    free(filler);
    free(rfill);
}

/* Issue 15: a question about what the assistant said or did gives the
 * best round's replies PACK_CAP_TOP of the budget (15%) instead of
 * PACK_CAP_REPLY's 5%: the fix that comes after the lines that match the
 * question is in. Any other question keeps the reply at 5%. */
static void test_pack_top_reply(void)
{
    static const char *const terms[] = { "zebra", NULL };
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    char *filler = words("stripes and more stripes.", 60);
    char *other = words("lorem ipsum dolor sit amet.", 30);
    size_t n = strlen(filler) + 200;
    char *reply = malloc(n);
    snprintf(reply, n, "The zebra build failed at the link step.\n%s\nThe fix: link with the "
             "quagga library.", filler);
    tp_init(&t, terms);
    tp_session(&t, "s1", 1000);
    tp_msg(&t, ROLE_USER, NULL, "how did you fix the zebra build?", 1000);
    tp_msg(&t, ROLE_ASSISTANT, NULL, reply, 1000);
    for (int i = 0; i < 12; i++) {
        tp_msg(&t, ROLE_USER, NULL, i == 6 ? "a zebra, again, and again and again" : other, 1000);
        tp_msg(&t, ROLE_ASSISTANT, NULL, other, 1000);
    }
    tp_finish(&t, 0);
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    T_CHECK(units_by_rank(&t.p) != NULL);
    T_EQ_INT(t.p.u[0].rank, 0);
    int rt = text_count_tokens(reply, strlen(reply));
    T_CHECK(rt > 250 && rt < 560);              /* over 5% of 4000, under 15% */
    t.q.asks_reply = 1;
    T_EQ_INT(pack_mem(&t, &ms, 4000, NULL, &r), CAIRN_OK);
    T_CHECK(r.tokens <= 4000);
    int k = item_of(&r, "m2");
    T_CHECK(k >= 0);
    if (k >= 0)
        T_EQ_INT(r.items[k].excerpt, 0);
    T_CHECK(strstr(r.text, "The fix: link with the quagga library.") != NULL);
    result_free(&r);
    unpack(&t);
    /* not about the assistant: the reply is cut to 5% of the budget */
    t.q.asks_reply = 0;
    T_EQ_INT(pack_mem(&t, &ms, 4000, NULL, &r), CAIRN_OK);
    k = item_of(&r, "m2");
    T_CHECK(k >= 0);
    if (k >= 0)
        T_EQ_INT(r.items[k].excerpt, 1);
    T_CHECK(strstr(r.text, "quagga") == NULL);
    result_free(&r);
    tp_free(&t);
    free(filler);
    free(other);
    free(reply);
}

static void test_pack_excerpt_choice(void)
{
    static const char *const terms[] = { "aardvark", NULL };
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    char *filler = words("lorem ipsum dolor sit amet.", 40);
    size_t n = 2 * strlen(filler) + 200;
    char *turn = malloc(n);
    snprintf(turn, n, "%s\nThe aardvark lives in burrows and eats ants at night.\n%s",
             filler, filler);
    tp_init(&t, terms);
    tp_session(&t, "s1", 1000);
    tp_msg(&t, ROLE_USER, NULL, turn, 1000);
    tp_msg(&t, ROLE_USER, NULL, "an aardvark?", 1000);
    tp_finish(&t, 0);
    rank_default(&t.p, &t.q, 1, NULL);
    int whole = text_count_tokens(turn, strlen(turn));
    T_CHECK(whole > 400 && whole < 590);
    /* budget 1000: a turn may take 6% of it, at least 200 tokens */
    T_EQ_INT(pack_mem(&t, &ms, 1000, NULL, &r), CAIRN_OK);
    int k = item_of(&r, "m1");
    T_CHECK(k >= 0);
    if (k >= 0) {
        T_EQ_INT(r.items[k].excerpt, 1);
        /* the turn's text runs to the next turn's line */
        const char *line = strstr(r.text, "user: lorem");
        const char *end = line ? strstr(line, "\nuser: an aardvark?") : NULL;
        T_CHECK(line != NULL && end != NULL);
        if (line && end) {
            int cost = text_count_tokens(line, (size_t)(end - line)) + 1;
            T_CHECK(cost <= 200);
            /* the opening, then the passage with the question's word */
            T_CHECK(strncmp(line, "user: lorem ipsum dolor sit amet. lorem", 39) == 0);
            const char *gap = strstr(line, " … ");
            const char *hit = strstr(line, "The aardvark lives in burrows");
            T_CHECK(gap && hit && gap < hit && hit < end);
        }
    }
    T_CHECK(r.tokens <= 1000);
    result_free(&r);
    unpack(&t);
    /* budget 10000: 6% is 600 tokens, and the turn fits whole */
    T_EQ_INT(pack_mem(&t, &ms, 10000, NULL, &r), CAIRN_OK);
    k = item_of(&r, "m1");
    T_CHECK(k >= 0 && !r.items[k].excerpt);
    result_free(&r);
    tp_free(&t);
    free(turn);
    free(filler);
}

/* The reply lane's pool: 16 rounds whose turns repeat the question's
 * words and whose long replies hold one of them, then a round whose user
 * turn pasted an error log that shares none of them (m33) and whose reply
 * (m34) answers; the caller adds to it, then tp_finish and ranks. */
struct lane_fix {
    char *filler, *log;
    char turns[16][400], replies[16][2400];
};

static void lane_fix_init(struct tpool *t, struct lane_fix *f)
{
    static const char *const terms[] = { "zebra", "quokka", NULL };
    f->filler = words("the burrow service reads its config at start and logs it.", 30);
    f->log = words("error 42 at line 7 of burrow.c in read_config, retrying now.", 40);
    tp_init(t, terms);
    tp_session(t, "s1", 1000);
    for (int i = 0; i < 16; i++) {
        snprintf(f->turns[i], sizeof f->turns[i], "round %d: the zebra and the quokka burrow, "
                 "how do they share it, zebra quokka?", i);
        snprintf(f->replies[i], sizeof f->replies[i], "The zebra burrow. %s", f->filler);
        tp_msg(t, ROLE_USER, NULL, f->turns[i], 1000);
        tp_msg(t, ROLE_ASSISTANT, NULL, f->replies[i], 1000);
    }
    tp_msg(t, ROLE_USER, NULL, f->log, 1000);
    tp_msg(t, ROLE_ASSISTANT, NULL, "The quokka flag must be set before the zebra one: "
           "quokka first, then zebra.", 1000);
}

/* Message x's round ranks below the 16 rounds, and x matches better alone
 * than their replies. */
static void lane_fix_check(const struct tpool *t, int x)
{
    for (int i = 0; i < 32; i++) {
        T_CHECK(t->p.u[t->p.m[i].unit].score > t->p.u[t->p.m[x].unit].score);
        if (t->p.m[i].role == ROLE_ASSISTANT)
            T_CHECK(t->p.m[i].s_msg < t->p.m[x].s_msg);
    }
}

static void lane_fix_free(struct tpool *t, struct lane_fix *f)
{
    tp_free(t);
    free(f->filler);
    free(f->log);
}

/* A question about what the assistant said: the reply that matches it
 * best alone leads the reply lane (REPLY_LANE_OWN_TOP), though its round
 * ranks last (its user turn pasted an error that shares none of the
 * question's words) and the fused order put it past what the lane holds. */
static void test_lane_own_top(void)
{
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    static struct lane_fix f;
    lane_fix_init(&t, &f);
    tp_finish(&t, 0);
    t.q.asks_reply = 1;
    rank_default(&t.p, &t.q, 1, NULL);
    /* its round ranks last; its reply matches best alone */
    lane_fix_check(&t, 33);
    T_EQ_INT(pack_mem(&t, &ms, 1000, NULL, &r), CAIRN_OK);
    T_CHECK(r.tokens <= 1000);
    T_CHECK(item_of(&r, "m34") >= 0);
    T_CHECK(strstr(r.text, "The quokka flag must be set before the zebra one") != NULL);
    result_free(&r);
    lane_fix_free(&t, &f);
}

/* Below REPLY_LANE_OWN_MAX, every REPLY_LANE_OWN_EVERY-th place of the
 * reply lane goes to the best reply by its own BM25 not yet placed. Two
 * replies answer (both after a pasted log, so their rounds rank last); the
 * best leads the lane (REPLY_LANE_OWN_TOP), the second came after every
 * other round's reply in the fused order, past what the lane holds at 1k. */
static void test_lane_own_every(void)
{
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    static struct lane_fix f;
    lane_fix_init(&t, &f);
    tp_msg(&t, ROLE_USER, NULL, f.log, 1000);
    tp_msg(&t, ROLE_ASSISTANT, NULL, "Then close the zebra gate and restart the quokka pen.",
           1000);
    tp_finish(&t, 0);
    t.q.asks_reply = 1;
    rank_default(&t.p, &t.q, 1, NULL);
    /* both rounds rank below every other; the two replies match best
     * alone, m36 second */
    lane_fix_check(&t, 33);
    lane_fix_check(&t, 35);
    T_CHECK(t.p.m[35].s_msg < t.p.m[33].s_msg);
    T_EQ_INT(pack_mem(&t, &ms, 1000, NULL, &r), CAIRN_OK);
    T_CHECK(r.tokens <= 1000);
    T_CHECK(item_of(&r, "m34") >= 0);
    T_CHECK(item_of(&r, "m36") >= 0);
    T_CHECK(strstr(r.text, "Then close the zebra gate and restart the quokka pen.") != NULL);
    result_free(&r);
    lane_fix_free(&t, &f);
}

/* One round: a question on the aardvark table and its reply, ranked. */
static void reply_pool(struct tpool *t, const char *reply)
{
    static const char *const terms[] = { "aardvark", NULL };
    tp_init(t, terms);
    tp_session(t, "s1", 1000);
    tp_msg(t, ROLE_USER, NULL, "why does the aardvark table fail?", 1000);
    tp_msg(t, ROLE_ASSISTANT, NULL, reply, 1000);
    tp_finish(t, 0);
    rank_default(&t->p, &t->q, 1, NULL);
}

/* A reply cut to an excerpt keeps its opening first (PACK_REPLY_LEAD):
 * the answer is in the sentence after "I looked", which holds none of the
 * question's words, while the code after it repeats them on every line.
 * Picking the matching lines alone filled the excerpt with the code. */
static void test_pack_reply_lead(void)
{
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    struct buf reply = BUF_INIT;
    buf_adds(&reply, "I looked at the burrow logs you sent me this morning.\n"
                     "The fix is to set quokka_mode to strict in the config file, then restart "
                     "the burrow service so that the new mode is read at start and the old "
                     "cache is cleared.\n");
    for (int i = 0; i < 30; i++)
        buf_adds(&reply, "    total = load(aardvark, table, mode, idx) # the aardvark table\n");
    buf_adds(&reply, "Let me know if the aardvark table loads now.");
    reply_pool(&t, reply.p);
    /* budget 1000: a reply may take 150 tokens, the reply is longer */
    T_CHECK(text_count_tokens(reply.p, reply.n) > 400);
    T_EQ_INT(pack_mem(&t, &ms, 1000, NULL, &r), CAIRN_OK);
    int k = item_of(&r, "m2");
    T_CHECK(k >= 0 && r.items[k].excerpt);
    T_CHECK(strstr(r.text, "assistant: I looked at the burrow logs") != NULL);
    T_CHECK(strstr(r.text, "set quokka_mode to strict") != NULL);
    /* what is left still goes to the lines that match */
    T_CHECK(strstr(r.text, "load(aardvark, table") != NULL);
    T_CHECK(r.tokens <= 1000);
    result_free(&r);
    tp_free(&t);
    buf_release(&reply);
}

/* A long reply cut to an excerpt with room keeps its closing lines beside
 * its opening (PACK_REPLY_TAIL): a coding assistant ends with a summary of
 * what it changed, here a line that holds none of the question's words,
 * after code that repeats them. With the opening alone the excerpt ran out
 * inside the code. A small excerpt (under PACK_REPLY_TAIL_MIN) keeps its
 * opening first, as before. */
static void test_pack_reply_tail(void)
{
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    struct buf reply = BUF_INIT;
    buf_adds(&reply, "I looked at the burrow logs you sent me this morning.\n");
    for (int i = 0; i < 80; i++)
        buf_adds(&reply, "    total = load(aardvark, table, mode, idx) # the aardvark table\n");
    buf_adds(&reply, "These changes add a safe_quokka_parse helper so that a bad burrow "
                     "file no longer stops the whole run.\n");
    reply_pool(&t, reply.p);
    /* budget 8000: a reply may take 400 tokens, the reply is longer */
    T_CHECK(text_count_tokens(reply.p, reply.n) > 1000);
    T_EQ_INT(pack_mem(&t, &ms, 8000, NULL, &r), CAIRN_OK);
    int k = item_of(&r, "m2");
    T_CHECK(k >= 0 && r.items[k].excerpt);
    T_CHECK(strstr(r.text, "assistant: I looked at the burrow logs") != NULL);
    T_CHECK(strstr(r.text, "add a safe_quokka_parse helper") != NULL);
    T_CHECK(r.tokens <= 8000);
    result_free(&r);
    unpack(&t);
    /* budget 1000: 150 tokens, the opening first and no closing */
    T_EQ_INT(pack_mem(&t, &ms, 1000, NULL, &r), CAIRN_OK);
    k = item_of(&r, "m2");
    T_CHECK(k >= 0 && r.items[k].excerpt);
    T_CHECK(strstr(r.text, "assistant: I looked at the burrow logs") != NULL);
    T_CHECK(strstr(r.text, "safe_quokka_parse") == NULL);
    result_free(&r);
    tp_free(&t);
    buf_release(&reply);
}

/* Two matching sessions: the older holds one of the question's words,
 * the newer both, at its third message (position 2). */
static void cite_pool(struct tpool *t)
{
    static const char *const terms[] = { "zebra", "quokka", NULL };
    tp_init(t, terms);
    tp_session(t, "old", 1000);
    tp_msg(t, ROLE_USER, NULL, "hello", 1000);
    tp_msg(t, ROLE_ASSISTANT, NULL, "hi, what can I do", 1000);
    tp_msg(t, ROLE_USER, NULL, "one question on the zebra", 1000);
    tp_msg(t, ROLE_ASSISTANT, NULL, "an answer", 1000);
    tp_session(t, "new", 2000);
    tp_msg(t, ROLE_USER, NULL, "some filler first", 2000);
    tp_msg(t, ROLE_ASSISTANT, NULL, "fine", 2000);
    tp_msg(t, ROLE_USER, NULL, "the zebra and the quokka, both", 2000);
    tp_msg(t, ROLE_ASSISTANT, NULL, "noted", 2000);
    tp_session(t, "none", 3000);
    tp_msg(t, ROLE_USER, NULL, "nothing relevant at all", 3000);
    tp_msg(t, ROLE_ASSISTANT, NULL, "nothing here either", 3000);
    tp_finish(t, 0);
    rank_default(&t->p, &t->q, 1, NULL);
}

/* Every item's position is its message's place in its session, and the
 * items come in the text's order (each session's header before its items). */
static void check_items_follow_text(const struct tpool *t, const struct cairn_recall *r)
{
    const char *prev = r->text;
    for (size_t i = 0; i < r->n_items; i++) {
        const struct cairn_recall_item *it = &r->items[i];
        int m = atoi(it->message + 1) - 1;      /* "m7" is message 6 */
        T_EQ_INT(it->position, m - t->p.s[t->p.m[m].sess].first_msg);
        char hdr[64];
        snprintf(hdr, sizeof hdr, "· %s", it->session);
        const char *h = strstr(r->text, hdr);
        T_CHECK(h != NULL && h >= prev - 1);    /* never back to an earlier block */
        if (h && (i == 0 || strcmp(it->session, r->items[i - 1].session)))
            prev = h;
    }
}

/* CAIRN_RECALL_CITE: the best session first, its id in the header; the
 * items carry positions; min_rel_score leaves out what scores far below
 * the best. */
static void test_pack_cite(void)
{
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    cite_pool(&t);
    o.budget = 1000;
    /* by default: oldest first, no ids */
    T_EQ_INT(pack_opts(&t, &ms, &o, &r), CAIRN_OK);
    T_CHECK(r.n_items >= 2);
    T_EQ_STR(r.items[0].session, "old");
    T_CHECK(strstr(r.text, "session_id") == NULL);
    check_items_follow_text(&t, &r);
    int k = item_of(&r, "m7");
    T_CHECK(k >= 0 && r.items[k].position == 2);
    result_free(&r);
    unpack(&t);
    /* CITE: the session holding the best unit first, named in its header */
    o.flags = CAIRN_RECALL_CITE;
    T_EQ_INT(pack_opts(&t, &ms, &o, &r), CAIRN_OK);
    T_CHECK(r.n_items >= 2);
    T_EQ_STR(r.items[0].session, "new");
    T_CHECK(strncmp(r.text, "[1970-01-01 Thu 00:33 · chat · new · session_id \"new\"]\n", 55) == 0);
    const char *a = strstr(r.text, "session_id \"new\""), *b = strstr(r.text, "session_id \"old\"");
    T_CHECK(a && b && a < b);
    check_items_follow_text(&t, &r);
    T_EQ_INT(r.tokens, text_count_tokens(r.text, strlen(r.text)));
    T_CHECK(item_of(&r, "m3") >= 0);
    result_free(&r);
    unpack(&t);
    /* the cut: "old" holds the common one of two words, under half the
     * best's IDF weight though its fused score is 98% of the best's */
    const struct runit *uo = &t.p.u[t.p.m[2].unit], *un = &t.p.u[t.p.m[6].unit];
    T_CHECK(uo->score > 0.95 * un->score);
    T_CHECK(unit_weight(&t.p, &t.q, uo) < 0.5 * unit_weight(&t.p, &t.q, un));
    o.min_rel_score = 0.5;
    T_EQ_INT(pack_opts(&t, &ms, &o, &r), CAIRN_OK);
    T_CHECK(item_of(&r, "m7") >= 0);
    for (size_t i = 0; i < r.n_items; i++)
        T_EQ_STR(r.items[i].session, "new");
    result_free(&r);
    unpack(&t);
    /* a lower cut keeps it */
    o.min_rel_score = 0.2;
    T_EQ_INT(pack_opts(&t, &ms, &o, &r), CAIRN_OK);
    T_CHECK(item_of(&r, "m3") >= 0);
    result_free(&r);
    unpack(&t);
    /* a unit the vectors found is not the cut's to judge */
    o.min_rel_score = 0.5;
    t.p.m[3].dense = 1.4f;
    T_EQ_INT(pack_opts(&t, &ms, &o, &r), CAIRN_OK);
    T_CHECK(item_of(&r, "m3") >= 0);
    result_free(&r);
    tp_free(&t);
}

/* The reply lane's order computed for its first places only (limit)
 * against the whole (limit 0): the same replies in the same places, then
 * PACK_LANE_LATER, at least `limit` places computed; many ties (own
 * scores and unit ranks from small sets), with and without the own
 * order's every-th places. A prefix taken by selection and not sorted
 * again, or the loop not stopping where the sorted places end, fails. */
static void test_lane_prefix(void)
{
    static const double own[] = { 0, 0.5, 0.25, 0.125, 2.0, 1e-3 };
    unsigned seed = 20261205;
    long bounded = pack_lane_bounded_runs();
    for (int round = 0; round < 10; round++) {
        /* both of the sort's paths; from round 4 enough replies for the
         * own order's first places alone (lane_bounded), the units' ranks
         * from a wide set (few replies past its bound) or from 40 (many:
         * it gives up), own scores from 6 or from 200 values */
        int n = round < 2 ? 300 : round < 4 ? 9000 : 30000;
        int nrank = round >= 4 && round % 2 ? n / 3 : 40;
        int nown = round >= 8 ? 200 : 6;
        struct pool p;
        memset(&p, 0, sizeof p);
        p.nu = p.nm = n;
        p.u = calloc((size_t)n, sizeof *p.u);
        p.m = calloc((size_t)n, sizeof *p.m);
        p.ord = calloc((size_t)n, sizeof *p.ord);
        T_CHECK(p.u && p.m && p.ord);
        if (!p.u || !p.m || !p.ord)
            goto next;
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            p.u[i].head = p.u[i].first = p.u[i].last = i;
            p.u[i].rank = (int)((seed >> 9) % (unsigned)nrank);     /* ranked: no completion */
            p.m[i].unit = i;
            p.m[i].role = (seed >> 16) % 4 ? ROLE_ASSISTANT : ROLE_USER;
            seed = seed * 1103515245u + 12345u;
            p.m[i].s_msg = nown == 6 ? own[(seed >> 20) % 6] : (double)((seed >> 12) % 200) / 64;
            p.ord[i] = i;
        }
        for (int every = 0; every <= 3; every += every ? 2 : 1) {    /* 0, 1, 3 */
            int *all = pack_replies_by_score(&p, every, 0);
            T_CHECK(all != NULL);
            int nrep = 0;
            while (all && nrep < n && all[nrep] >= 0)
                nrep++;
            static const int limits[] = { 1, 2, 5, 17, 100, 512, 5000 };
            for (size_t l = 0; all && l < sizeof limits / sizeof *limits; l++) {
                int *part = pack_replies_by_score(&p, every, limits[l]);
                T_CHECK(part != NULL);
                if (!part)
                    continue;
                int j = 0, bad = 0;
                while (j < nrep && part[j] >= 0) {
                    bad += part[j] != all[j];
                    j++;
                }
                T_EQ_INT(bad, 0);
                T_CHECK(j >= (limits[l] < nrep ? limits[l] : nrep));
                for (int r = j; r <= nrep; r++)
                    bad += part[r] != (r < nrep ? PACK_LANE_LATER : -1);
                T_EQ_INT(bad, 0);
                free(part);
            }
            /* the pairs in a caller's scratch (pack's planned places' free
             * end, pack54): in it when it holds n + 1 pairs, in a block of
             * their own when one short (the pairs past it untouched), the
             * same order both ways, at a limit and whole */
            size_t need = ((size_t)n + 1) * sizeof(struct sort_kv), guard = 4096;
            unsigned char *sc = malloc(need + guard);
            T_CHECK(sc != NULL);
            for (int l = 0; sc && all && l < 2; l++) {
                for (int fit = 0; fit < 2; fit++) {
                    size_t bytes = fit ? need : need - sizeof(struct sort_kv);
                    memset(sc, 0xbe, need + guard);
                    int *part = pack_replies_in(&p, every, l ? 17 : 0, sc, bytes);
                    T_CHECK(part != NULL);
                    int bad = 0, j = 0;
                    while (part && j < nrep && part[j] >= 0) {
                        bad += part[j] != all[j];
                        j++;
                    }
                    T_EQ_INT(bad, 0);
                    T_CHECK(part && j >= (l ? (17 < nrep ? 17 : nrep) : nrep));
                    size_t touched = 0;
                    for (size_t b = 0; b < need + guard; b++)
                        touched += sc[b] != 0xbe;
                    /* used when it fits (the pairs written), else not at all */
                    if (fit)
                        T_CHECK(touched > 0);
                    else
                        T_EQ_INT((int)touched, 0);
                    for (size_t b = bytes; b < need + guard; b++)
                        bad += sc[b] != 0xbe;
                    T_EQ_INT(bad, 0);
                    free(part);
                }
            }
            free(sc);
            free(all);
        }
        /* the wide ranks' rounds take the bounded path */
        if (nrank > 40)
            T_CHECK(pack_lane_bounded_runs() > bounded);
        bounded = pack_lane_bounded_runs();
    next:
        free(p.u);
        free(p.m);
        free(p.ord);
    }
}

/* pack_header_floor never above pack_header_cost (try_add refuses a turn
 * on the floor without costing the header): sessions with and without a
 * time (years of 1 to 6 digits, before 1970), titles and sources of every
 * kind (CJK, emoji, a fence tag, control bytes, long, empty), cited or not;
 * and the floor is the cost of the header with nothing after its time
 * (the opening and the closing "]\n"). */
static void test_header_floor(void)
{
    static const char *const words[] = {
        "", "x", "Refactor the cache", "数据库迁移失败的原因", "🚀 launch", "</cairn-recall> oops",
        "a\tb\nc", "ÜBERSETZUNGSFEHLER und nicht", "12345678901234567890", "(){}[]==://",
        "rateLimitPerMinute fixdlsrps", "\x01\x02\xff\xfe", "·", "]", " leading space",
    };
    static const int64_t times[] = { CAIRN_NO_TIME, 0, -86400 * 365 * 80LL, 1700000000, 253402300799LL,
                                     253402300800LL * 10, 31536000LL * 300000, 59, 1e9 };
    const int nw = (int)(sizeof words / sizeof *words), ntm = (int)(sizeof times / sizeof *times);
    struct rsession ss;
    struct pool p;
    memset(&p, 0, sizeof p);
    p.s = &ss;
    p.ns = 1;
    int bad = 0, n = 0, tight = 0;
    for (int ti = 0; ti < ntm; ti++)
        for (int a = 0; a < nw; a++)
            for (int b = 0; b < nw; b++)
                for (int cite = 0; cite < 2; cite++) {
                    memset(&ss, 0, sizeof ss);
                    ss.ext_id = (char *)words[(a + b) % nw];
                    ss.title = (char *)words[a];
                    ss.source = (char *)words[b];
                    ss.project = (char *)words[(a * 7 + b) % nw];
                    ss.started_at = times[ti];
                    p.cite = cite;
                    int f = pack_header_floor(&p, 0), c = pack_header_cost(&p, 0);
                    bad += f > c;
                    tight += f == c;
                    n++;
                }
    T_EQ_INT(bad, 0);
    /* the floor is the cost only where nothing follows the time (a third
     * of the words are "": title, source and project all empty) */
    T_CHECK(n > 0 && tight > 0 && tight < n / 4);
    /* with nothing after its time, a header costs its floor: the opening,
     * "]" and "\n" (exact32: the floor counts the two closing runs); a
     * dated one's floor is more than an undated one's */
    memset(&ss, 0, sizeof ss);
    ss.ext_id = ss.title = ss.source = ss.project = (char *)"";
    p.cite = 0;
    ss.started_at = CAIRN_NO_TIME;
    int undated = pack_header_floor(&p, 0);
    T_EQ_INT(pack_header_cost(&p, 0), undated);
    ss.started_at = 1700000000;
    T_EQ_INT(pack_header_cost(&p, 0), pack_header_floor(&p, 0));
    T_CHECK(pack_header_floor(&p, 0) > undated);
    /* a title, however short, adds to the cost and not to the floor */
    ss.title = (char *)"x";
    T_CHECK(pack_header_cost(&p, 0) > pack_header_floor(&p, 0));
}

/* pack_header_least never above pack_header_floor (exact33: try_add
 * refuses on it before writing the stamp): 4,000 random times from years
 * 1000 to 9999 and past both ends, in zones with odd offsets (Monrovia's
 * -0:44:30, Chatham's +12:45, a POSIX rule with seconds); 0 outside the
 * four-digit years and for a session without a time; and equal to the
 * floor for this century's times (the C locale's day names cost alike),
 * so it refuses what the floor does there. */
static void test_header_least(void)
{
    static const char *const zones[] = { "UTC", "Africa/Monrovia", "Pacific/Chatham",
                                         "XST-5:30:15XDT,M3.5.0,M10.5.0/3", "America/New_York" };
    struct rsession ss;
    struct pool p;
    memset(&p, 0, sizeof p);
    memset(&ss, 0, sizeof ss);
    ss.ext_id = ss.title = ss.source = ss.project = (char *)"";
    p.s = &ss;
    p.ns = 1;
    unsigned seed = 99;
    int above = 0, outside = 0, tight = 0, now = 0, n = 0;
    for (int z = 0; z < 5; z++) {
        setenv("TZ", zones[z], 1);
        tzset();
        for (int i = 0; i < 800; i++) {
            seed = seed * 1103515245u + 12345u;
            uint64_t r = ((uint64_t)seed << 20) ^ (uint64_t)seed * 2654435761u;
            int64_t t = i % 4 == 0 ? 1600000000LL + (int64_t)(r % 400000000ULL)
                        : -40000000000LL + (int64_t)(r % 300000000000ULL);
            ss.started_at = t;
            int l = pack_header_least(&p, 0), f = pack_header_floor(&p, 0);
            above += l > f;
            outside += (l > 0) != (t >= STAMP_YEAR4_LO && t <= STAMP_YEAR4_HI);
            if (i % 4 == 0) {
                tight += l == f;
                now++;
            }
            n++;
        }
    }
    T_EQ_INT(above, 0);
    T_EQ_INT(outside, 0);
    T_EQ_INT(tight, now);
    T_CHECK(n == 4000);
    ss.started_at = CAIRN_NO_TIME;
    T_EQ_INT(pack_header_least(&p, 0), 0);
    setenv("TZ", "UTC", 1);
    tzset();
}

/* A session refused on its floor is weighed again against the room of a
 * later try (exact32: try_add keeps each session's floor for the pack):
 * the whole store does not fit, pack_everything takes s1's long turn and
 * refuses s2's on s2's floor (7 tokens of room left after it, 8 needed),
 * then takes everything back; the ranked pass, the budget whole again,
 * packs s2's matching turn. A pack that kept "refused" instead of the
 * floor would leave it out. */
static void test_pack_floor_kept(void)
{
    static const char *const terms[] = { "zebra", NULL };
    struct tpool t;
    struct memsrc ms;
    struct cairn_recall r;
    char *filler = words("stripes", 60);
    tp_init(&t, terms);
    tp_session(&t, "s1", 1000);
    tp_msg(&t, ROLE_USER, NULL, filler, 1000);
    tp_session(&t, "s2", 2000);
    tp_msg(&t, ROLE_USER, NULL, "zebra zebra", 2000);
    tp_finish(&t, 0);
    t.p.all_mode = 1;
    T_EQ_INT(rank_default(&t.p, &t.q, 1, NULL), 0);
    /* s1's header and line (the text, its newline and "user:"), then
     * s2's floor and 7 */
    int budget = pack_header_cost(&t.p, 0) + text_count_tokens(filler, strlen(filler)) + 3 +
                 pack_header_floor(&t.p, 1) + 7;
    T_EQ_INT(pack_mem(&t, &ms, budget, NULL, &r), CAIRN_OK);
    int s2 = 0;
    for (size_t i = 0; i < r.n_items; i++)
        s2 += strcmp(r.items[i].session, "s2") == 0;
    T_EQ_INT(s2, 1);
    T_CHECK(r.n_items < 2);          /* not the whole store */
    result_free(&r);
    free(filler);
    tp_free(&t);
}

/* units_by_rank against its definition: by score, ties the more recent
 * first, then pool order; many ties of both (scores and times from small
 * sets, zeros among them), a pool under and one over the sort's 4,096
 * (merge and radix paths), and negative scores (sorted with the rest). */
static void test_rank_order(void)
{
    static const double scores[] = { 0, 0, 0.5, 0.25, 0.125, 1e-9, -0.0 };
    unsigned seed = 20261203;
    for (int round = 0; round < 6; round++) {
        int n = round % 2 ? 9000 : 60 + round * 20, neg = round >= 4;
        struct pool p;
        memset(&p, 0, sizeof p);
        p.nu = p.nm = n;
        p.u = calloc((size_t)n, sizeof *p.u);
        p.m = calloc((size_t)n, sizeof *p.m);
        T_CHECK(p.u && p.m);
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            p.u[i].head = p.u[i].first = p.u[i].last = i;
            p.u[i].score = scores[(seed >> 8) % 7] * (neg && (seed >> 20) % 3 == 0 ? -1 : 1);
            p.m[i].at = 1700000000 + (int64_t)((seed >> 12) % 5) * 86400;
        }
        const int *o = units_by_rank(&p);
        T_CHECK(o != NULL);
        /* the units at 0 unranked, after the rest (none with a score
         * below 0: those sort them all), until units_rank_all */
        int bad = 0, npos = 0;
        for (int i = 0; i < n; i++)
            npos += p.u[i].score > 0;
        if (neg)
            npos = n;
        T_EQ_INT(p.ord_tail, n - npos);
        for (int r = 0; o && r < n; r++)
            bad += r < npos ? !neg && p.u[o[r]].score == 0 : p.u[o[r]].rank != -1;
        T_EQ_INT(bad, 0);
        /* every unit once, and the tail in pool order (exact35 gathers it
         * at the array's front in the pass that picks the scored ones) */
        char *seen = calloc((size_t)n, 1);
        T_CHECK(seen != NULL);
        for (int r = 0; o && seen && r < n; r++) {
            bad += o[r] < 0 || o[r] >= n || seen[o[r]];
            if (o[r] >= 0 && o[r] < n)
                seen[o[r]] = 1;
            bad += r > npos && o[r] <= o[r - 1];
        }
        free(seen);
        T_EQ_INT(bad, 0);
        T_EQ_INT(units_rank_all(&p), 0);
        bad = 0;
        for (int r = 0; o && r + 1 < n; r++) {
            const struct runit *a = &p.u[o[r]], *b = &p.u[o[r + 1]];
            int64_t ta = p.m[a->head].at, tb = p.m[b->head].at;
            bad += a->score < b->score ||
                   (a->score == b->score && (ta < tb || (ta == tb && o[r] > o[r + 1])));
            bad += a->rank != r;
        }
        T_EQ_INT(bad, 0);
        pool_free(&p);
    }
}

/* Session spread (pack_spread_order): the orders worked out by hand from
 * its definition. Units (session, score), in rank order: A 1.0, A 0.9,
 * A 0.8, B 0.6, C 0.3, B 0.2, D 0 (matched nothing). */
static void test_pack_spread(void)
{
    struct runit u[7] = {
        { .sess = 0, .score = 1.0 }, { .sess = 0, .score = 0.9 }, { .sess = 0, .score = 0.8 },
        { .sess = 1, .score = 0.6 }, { .sess = 2, .score = 0.3 }, { .sess = 1, .score = 0.2 },
        { .sess = 3, .score = 0 },
    };
    struct pool p = { .u = u, .nu = 7, .ns = 4 };
    static const int ord[7] = { 0, 1, 2, 3, 4, 5, 6 };
    static const struct { double decay; int nfree, step, top; int want[7]; } c[] = {
        { 1.0, 1, 1, 300, { 0, 1, 2, 3, 4, 5, 6 } },   /* off: the ranking */
        /* step: A's 2nd and 3rd at 0.45 and 0.4, B's 2nd at 0.1 */
        { 0.5, 1, 1, 300, { 0, 3, 1, 2, 4, 5, 6 } },
        /* graded: A's 3rd at 0.8 x 0.25 = 0.2 falls behind C's 0.3 */
        { 0.5, 1, 0, 300, { 0, 3, 1, 4, 2, 5, 6 } },
        /* two free units a session: A's 2nd at 0.9 beats B */
        { 0.5, 2, 1, 300, { 0, 1, 3, 2, 4, 5, 6 } },
        /* only the first 2 reordered, the rest in rank order */
        { 0.5, 1, 1, 2, { 0, 1, 2, 3, 4, 5, 6 } },
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        int *o = pack_spread_order(&p, ord, c[k].top, c[k].decay, c[k].nfree, c[k].step);
        T_CHECK(o != NULL);
        for (int i = 0; o && i < 7; i++)
            T_CHECK(o[i] == c[k].want[i]);
        free(o);
    }
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    unsetenv("CAIRN_REPLY_LANE");
    T_RUN(test_bm25_formula);
    T_RUN(test_units);
    T_RUN(test_units_reply_runs);
    T_RUN(test_rank_order);
    T_RUN(test_asks_reply);
    T_RUN(test_asks_summary);
    T_RUN(test_ordinal_cue);
    T_RUN(test_rank_granularity);
    T_RUN(test_rank_zero_tail);
    T_RUN(test_rank_two);
    T_RUN(test_rank_dense);
    T_RUN(test_rank_feedback);
    T_RUN(test_rank_persona);
    T_RUN(test_rank_learned);
    T_RUN(test_rank_speaker);
    T_RUN(test_query_labels);
    T_RUN(test_query_dash);
    T_RUN(test_rank_label);
    T_RUN(test_rank_time);
    T_RUN(test_rank_ordinal);
    T_RUN(test_rank_ordinal_day);
    T_RUN(test_rank_length_gate);
    T_RUN(test_gate);
    T_RUN(test_gate_dense);
    T_RUN(test_pack_whole_store);
    T_RUN(test_pack_floor_kept);
    T_RUN(test_pack_user_first);
    T_RUN(test_pack_reply_snippet);
    T_RUN(test_pack_read_ahead);
    T_RUN(test_pack_walk);
    T_RUN(test_pack_top_reply);
    T_RUN(test_pack_summary);
    T_RUN(test_pack_excerpt_choice);
    T_RUN(test_pack_reply_lead);
    T_RUN(test_pack_reply_tail);
    T_RUN(test_lane_own_top);
    T_RUN(test_lane_own_every);
    T_RUN(test_lane_prefix);
    T_RUN(test_header_floor);
    T_RUN(test_header_least);
    T_RUN(test_pack_cite);
    T_RUN(test_pack_spread);
    return T_DONE();
}
