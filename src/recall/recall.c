/*
 * recall.c: cairn_recall, the public entry point of the pipeline (see
 * recall.h for the stages).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recall/recall.h"
#include "recall/policy.h"
#include "text/tokcount.h"

#define RECALL_DEFAULT_BUDGET 4000
#define RECALL_MAX_QUERY      (64 * 1024)

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

void cairn_recall_free(struct cairn_recall *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_items; i++) {
        free((char *)r->items[i].session);
        free((char *)r->items[i].message);
        free((char *)r->items[i].speaker);
        free((char *)r->items[i].why);
        free((char *)r->items[i].memory_type);
    }
    free(r->items);
    free((char *)r->query);
    free((char *)r->text);
    free((char *)r->note);
    free(r);
}

/* The memory block mb goes before the conversations' text, a blank line
 * between them, and its items before theirs (they own their strings). The
 * budget stays a hard limit: the tokenizer's count of the joined text can
 * differ from the sum at the seam, so memories go from the last until it
 * fits. */
static int join_memories(struct cairn *h, struct mem_pool *mp, struct buf *mb,
                         struct cairn_recall *r)
{
    struct buf t = BUF_INIT;
    int tokens;
    for (;;) {
        buf_reset(&t);
        buf_add(&t, mb->p, mb->n);
        if (r->text && *r->text) {
            buf_addc(&t, '\n');
            buf_adds(&t, r->text);
        }
        if (t.err)
            goto nomem;
        tokens = text_count_tokens(t.p, t.n);
        if (tokens <= r->budget || !mp->norder)
            break;
        if (mem_unpick_last(mp, mb) < 0)
            goto nomem;
    }
    struct cairn_recall_item *items = calloc(r->n_items + (size_t)mp->norder, sizeof *items);
    if (!items)
        goto nomem;
    for (int j = 0; j < mp->norder; j++) {
        const struct rmem *m = &mp->v[mp->order[j]];
        struct cairn_recall_item *it = &items[j];
        char msg[40];
        snprintf(msg, sizeof msg, "memory:%lld", (long long)m->id);
        it->session = strdup("");
        it->message = strdup(msg);
        it->memory_type = strdup(m->type);
        it->role = "memory";
        it->at = m->updated;
        it->excerpt = m->picked == 2;
        it->score = m->score;
        it->rank = m->rank;
        it->memory = m->id;
        it->contradicts = m->ncontra > 0;
        if (!it->session || !it->message || !it->memory_type) {
            /* the pool's items still borrow: hand over only ours */
            free(r->items);
            r->items = items;
            r->n_items = (size_t)j + 1;
            goto nomem;
        }
    }
    if (r->n_items)
        memcpy(items + mp->norder, r->items, r->n_items * sizeof *items);
    free(r->items);
    r->items = items;
    r->n_items += (size_t)mp->norder;
    free((char *)r->text);
    r->text = buf_detach(&t, NULL);
    r->tokens = tokens;
    return r->text ? CAIRN_OK : cairn__err(h, CAIRN_NOMEM, "out of memory");
nomem:
    buf_release(&t);
    return cairn__err(h, CAIRN_NOMEM, "out of memory");
}

/* --explain's line for memory id. */
static char *memory_why(const struct mem_pool *mp, int64_t id)
{
    char why[200];
    for (int i = 0; i < mp->n; i++) {
        const struct rmem *m = &mp->v[i];
        if (m->id != id)
            continue;
        char cos[32] = "";
        if (m->has_cos)
            snprintf(cos, sizeof cos, ", cosine %.3f", m->cos);
        snprintf(why, sizeof why, "memory rank %d, score %.4f, holds %.0f%% of the question's "
                 "weight%s%s%s%s", m->rank + 1, m->score, m->cover * 100, cos,
                 m->pass ? (m->in_range ? ", in the question's period" : "")
                         : ", shown with the memory it contradicts",
                 m->picked == 2 ? ", cut" : "", m->ncontra ? ", contradicted" : "");
        return strdup(why);
    }
    return strdup("memory");
}

int cairn_recall(struct cairn *h, const char *query, const struct cairn_recall_opts *opts,
                 struct cairn_recall **out)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    struct query q;
    struct pool p;
    struct dense_result dr;
    struct mem_pool mp;
    struct buf mb = BUF_INIT;
    int rc;

    *out = NULL;
    memset(&q, 0, sizeof q);
    memset(&p, 0, sizeof p);
    memset(&dr, 0, sizeof dr);
    memset(&mp, 0, sizeof mp);
    if (!query)
        return cairn__err(h, CAIRN_INVALID, "no question");
    /* the first version ends with `flags`: fields added later get defaults */
    rc = cairn__opts(h, &o, sizeof o, opts,
                     offsetof(struct cairn_recall_opts, flags) + sizeof o.flags, "recall options");
    if (rc != CAIRN_OK)
        return rc;
    if (strlen(query) > RECALL_MAX_QUERY)
        return cairn__err(h, CAIRN_TOOBIG, "question longer than %d bytes", RECALL_MAX_QUERY);
    if (!(o.min_rel_score >= 0 && o.min_rel_score <= 1))   /* NaN too */
        return cairn__err(h, CAIRN_INVALID, "min_rel_score must be from 0 to 1");
    if (o.budget <= 0)
        o.budget = RECALL_DEFAULT_BUDGET;
    if (o.now == CAIRN_NO_TIME)
        o.now = (int64_t)time(NULL);
    if (o.project && !*o.project)
        o.project = NULL;
    if (o.exclude_session && !*o.exclude_session)
        o.exclude_session = NULL;

    r = calloc(1, sizeof *r);
    if (!r)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    r->query = strdup(query);
    r->budget = o.budget;
    r->range_from = r->range_to = CAIRN_NO_TIME;
    if (!r->query) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    int raw = o.method == CAIRN_METHOD_RAW_BM25;
    int use_time = !raw && o.method != CAIRN_METHOD_NO_TIME;
    if ((rc = query_parse(&q, query, o.now, use_time))) {
        cairn__err(h, rc, "out of memory");
        goto out;
    }
    if (q.has_range) {
        r->range_from = q.from;
        r->range_to = q.to;
    }
    /* Dense retrieval: every method but the keyword-only ones. */
    /* (A question that only names a period is answered by the period:
     * its words "what did I do" mean nothing to a vector.) */
    if (!raw && o.method != CAIRN_METHOD_KEYWORD && !q.only_time) {
        if ((rc = dense_search(h, query, &o, &dr)))
            goto out;
        r->dense = dr.status;
        if (dr.n > 0 && dr.cjk < RECALL_GATE_CJK)
            r->cosine = dr.hits[0].cos;
        if (dr.note[0] && !(r->note = strdup(dr.note))) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
    }
    if ((rc = gather(h, &q, &o, dr.n ? &dr : NULL, &p)))
        goto out;
    build_units(&p, raw);
    if (p.nm && !p.u) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    if (raw ? rank_raw_bm25(&p, &q) : rank_default(&p, &q, use_time, dr.n ? &dr : NULL)) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    /* A cut keeps to what matches well: a small store is returned whole
     * only when nothing in it matches. */
    for (int i = 0; o.min_rel_score > 0 && i < p.nu; i++)
        if (p.u[i].score > 0)
            p.all_mode = 0;
    r->only_time = q.only_time;
    if (!raw)
        recall_gate(&p, &q, &r->match, &r->match_weight);
    /* Memories first: what they take of the budget, the conversations do
     * not get (memories.c). The raw baseline stays the plain BM25 of the
     * record. */
    int mem_tokens = 0;
    if (!raw) {
        if ((rc = mem_load(h, &o, &mp)))
            goto out;
        /* the question's vector, when some memory has one: dense_search's,
         * else one made for them (a store of memories only, or whose
         * messages have no vectors yet) */
        int mem_dense = o.method != CAIRN_METHOD_KEYWORD && !q.only_time && mem_any_vec(&mp);
        if (mem_dense && (rc = dense_query_vec(h, query, &dr)))
            goto out;
        if (mem_score(&mp, &q, &p, use_time, mem_dense ? dr.qv : NULL, dr.qdim, dr.model) ||
            (mem_tokens = mem_pack(&mp, o.budget, o.exclude_items, &mb)) < 0) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
        o.budget -= mem_tokens;
    }
    struct pack_src src = pack_src_store(h);
    if ((rc = pack(&src, &p, &q, &o, raw, r))) {
        if (rc == CAIRN_NOMEM)
            cairn__err(h, rc, "out of memory");
        goto out;
    }
    if (mp.norder && (rc = join_memories(h, &mp, &mb, r)))
        goto out;
    /* The items borrow from the pool, which goes now: copy. */
    for (size_t i = 0; i < r->n_items; i++) {
        struct cairn_recall_item *it = &r->items[i];
        const char *spk = it->speaker;
        if (it->memory) {           /* join_memories made them whole */
            if (o.explain && !(it->why = memory_why(&mp, it->memory))) {
                rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
                goto out;
            }
            continue;
        }
        it->session = dup_or_empty(it->session);
        it->message = dup_or_empty(it->message);
        it->speaker = spk ? strdup(spk) : NULL;
        if (o.explain) {
            char why[160];
            snprintf(why, sizeof why, "rank %d, fused score %.4f%s", it->rank + 1, it->score,
                     it->excerpt ? ", excerpt" : "");
            it->why = strdup(why);
        }
        if (!it->session || !it->message) {
            r->n_items = i + 1;    /* the rest still borrow: do not free them */
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
    }
    if (!r->text)
        r->text = strdup("");
out:
    pool_free(&p);
    mem_pool_free(&mp);
    buf_release(&mb);
    query_free(&q);
    dense_result_free(&dr);
    if (rc) {
        cairn_recall_free(r);
        return rc;
    }
    *out = r;
    return CAIRN_OK;
}

int cairn_count_tokens(const char *text, size_t len)
{
    return text_count_tokens(text, len);
}
