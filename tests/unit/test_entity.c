/*
 * test_entity.c: the entity-driven keyword pass (issue 16, multi-hop;
 * recall/entity.c). The words it takes from the best turns: not the
 * question's, no stop word, counted once per turn that holds them. And in
 * recall: a turn that shares no word with the question, far from any
 * turn that does (no window reaches it), but that names what the best
 * turns share, is ranked and packed, where a turn like it that names
 * nothing of theirs is not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "recall/recall.h"
#include "recall/policy.h"
#include "t_store.h"
#include "t_open.h"

static char dir[] = "/tmp/cairn-test-entity-XXXXXX";

static const struct ent_word *find(const struct ent_word *w, int n, const char *norm)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(w[i].norm, norm))
            return &w[i];
    return NULL;
}

static void test_words(void)
{
    struct query q;
    T_EQ_INT(query_parse(&q, "What hobby does Ana have?", 0, 0), 0);
    const char *texts[] = {
        "I love Zanzibarian pottery, so creative.",
        NULL,
        "Zanzibarian pottery is calming and creative; pottery again.",
        "The weather was fine.",
    };
    struct ent_word w[ENT_CAND];
    int n = entity_words(&q, texts, 4, w, ENT_CAND);
    T_CHECK(n > 0);
    const struct ent_word *z = find(w, n, "zanzibarian");
    T_CHECK(z && z->ntop == 2);                 /* two turns, counted once each */
    T_CHECK(z && !strcmp(z->surface, "Zanzibarian"));
    T_CHECK(find(w, n, "potteri") && find(w, n, "potteri")->ntop == 2);
    T_CHECK(find(w, n, "weather") && find(w, n, "weather")->ntop == 1);
    T_CHECK(!find(w, n, "hobbi"));              /* the question's */
    T_CHECK(!find(w, n, "the") && !find(w, n, "and") && !find(w, n, "so"));
    for (int i = 0; i < n; i++) {
        free(w[i].norm);
        free(w[i].surface);
    }
    /* a full list stops taking words but still counts the ones it has */
    n = entity_words(&q, texts, 4, w, 1);
    T_EQ_INT(n, 1);
    T_EQ_STR(w[0].norm, "love");
    free(w[0].norm);
    free(w[0].surface);
    query_free(&q);
}

static void add(struct cairn *h, const char *sid, int64_t at, const char *const *turns, int n)
{
    struct cairn_message m[16];
    char ids[16][32];
    memset(m, 0, sizeof m);
    for (int i = 0; i < n; i++) {
        snprintf(ids[i], sizeof ids[i], "%s-%d", sid, i);
        m[i].id = ids[i];
        m[i].role = "user";
        m[i].speaker = i % 2 ? "Bo" : "Ana";
        m[i].content = turns[i];
        m[i].at = at + i;
    }
    struct cairn_session s = { 0 };
    s.id = sid;
    s.started_at = at;
    s.ended_at = at + n;
    s.messages = m;
    s.n_messages = (size_t)n;
    T_EQ_INT(cairn_add_session(h, &s, NULL), CAIRN_OK);
}

/* The rank of the item of message id in a keyword recall, -1 if not packed. */
static int rank_of(struct cairn *h, const char *q, int budget, const char *id)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    int rank = -1;
    o.budget = budget;
    o.method = CAIRN_METHOD_KEYWORD;
    if (cairn_recall(h, q, &o, &r) != CAIRN_OK)
        return -2;
    for (size_t i = 0; i < r->n_items; i++)
        if (!strcmp(r->items[i].message, id))
            rank = r->items[i].rank;
    cairn_recall_free(r);
    return rank;
}

static void test_recall(void)
{
    char path[300];
    struct cairn *h = NULL;
    snprintf(path, sizeof path, "%s/recall.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    int64_t t0 = 1700000000;
    const char *a[] = { "My hobby these days is Zanzibarian pottery.", "Nice." };
    const char *b[] = { "The hobby I keep is Zanzibarian pottery at the studio.", "Cool." };
    add(h, "a", t0, a, 2);
    add(h, "b", t0 + 1000, b, 2);
    /* two sessions alike: a turn with the question's word opens them, and
     * eight turns later (past every window) one names the pottery or not */
    const char *far[] = { "Any hobby news?", "Not much.", "The bus was late.", "Again?",
                          "Yes, twice.", "Rain too.", "Typical.", "Indeed.",
                          "I glazed three Zanzibarian bowls today." };
    const char *ctl[] = { "Any hobby news?", "Not much.", "The bus was late.", "Again?",
                          "Yes, twice.", "Rain too.", "Typical.", "Indeed.",
                          "I glazed three ordinary bowls today." };
    add(h, "t", t0 + 2000, far, 9);
    add(h, "c", t0 + 3000, ctl, 9);
    /* filler, so the store cannot fit the budget (and is not read whole):
     * more than 8 bytes a token of it (gather.c) */
    char fill[1200];
    for (int i = 0; i < ENT_MIN * 8 / 900 + 10; i++) {
        char sid[16];
        fill[0] = 0;
        for (int k = 0; k < 20; k++)
            strcat(fill, "quarterly freight tonnage along the river port ");
        snprintf(sid, sizeof sid, "f%d", i);
        const char *one[] = { fill };
        add(h, sid, t0 + 5000 + i, one, 1);
    }
    const char *q = "Which hobby?";
    int rt = rank_of(h, q, ENT_MIN, "t-8"), rc = rank_of(h, q, ENT_MIN, "c-8");
    T_CHECK(rt >= 0);                   /* found through the best turns' words */
    T_EQ_INT(rc, -1);                   /* its twin without them is not */
    /* below ENT_MIN the pass does not run: the far turn is not packed */
    if (ENT_MIN > 1000)
        T_EQ_INT(rank_of(h, q, 1000, "t-8"), -1);
    cairn_close(h);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    T_RUN(test_words);
    T_RUN(test_recall);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return T_DONE();
}
