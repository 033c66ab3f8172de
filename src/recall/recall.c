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
    }
    free(r->items);
    free((char *)r->query);
    free((char *)r->text);
    free((char *)r->note);
    free(r);
}

int cairn_recall(struct cairn *h, const char *query, const struct cairn_recall_opts *opts,
                 struct cairn_recall **out)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    struct query q;
    struct pool p;
    struct dense_result dr;
    int rc;

    *out = NULL;
    memset(&q, 0, sizeof q);
    memset(&p, 0, sizeof p);
    memset(&dr, 0, sizeof dr);
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
    struct pack_src src = pack_src_store(h);
    if ((rc = pack(&src, &p, &q, &o, raw, r))) {
        if (rc == CAIRN_NOMEM)
            cairn__err(h, rc, "out of memory");
        goto out;
    }
    /* The items borrow from the pool, which goes now: copy. */
    for (size_t i = 0; i < r->n_items; i++) {
        struct cairn_recall_item *it = &r->items[i];
        const char *spk = it->speaker;
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
