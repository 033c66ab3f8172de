/*
 * recall.c: cairn_recall, the public entry point of the pipeline (see
 * recall.h for the stages).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recall/recall.h"
#include "recall/policy.h"
#include "text/tokcount.h"

#define RECALL_DEFAULT_BUDGET 4000

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
        free((char *)r->items[i].note_vault);
        free((char *)r->items[i].note_path);
    }
    free(r->items);
    free((char *)r->query);
    free((char *)r->text);
    free((char *)r->note);
    free(r);
}

/* A block rendered before the conversations' text (the memories, the
 * notes), its items before theirs (they own their strings). */
struct block {
    struct buf *b;
    void       *pool;
    int       (*count)(const void *pool);
    int       (*unpick)(void *pool, struct buf *b);   /* the last one out: tokens, -1 */
    int       (*item)(const void *pool, int j, struct cairn_recall_item *it);
};

/* Block bl goes before r's text, a blank line between them. The budget
 * stays a hard limit: the tokenizer's count of the joined text can differ
 * from the sum at the seam, so the block's items go from the last until
 * it fits. */
static int join_block(struct cairn *h, const struct block *bl, struct cairn_recall *r)
{
    struct buf t = BUF_INIT;
    int tokens;
    for (;;) {
        buf_reset(&t);
        buf_add(&t, bl->b->p, bl->b->n);
        if (r->text && *r->text) {
            buf_addc(&t, '\n');
            buf_adds(&t, r->text);
        }
        if (t.err)
            goto nomem;
        tokens = text_count_tokens(t.p, t.n);
        if (tokens <= r->budget || !bl->count(bl->pool))
            break;
        if (bl->unpick(bl->pool, bl->b) < 0)
            goto nomem;
    }
    int n = bl->count(bl->pool);
    struct cairn_recall_item *items = calloc(r->n_items + (size_t)n, sizeof *items);
    if (!items)
        goto nomem;
    for (int j = 0; j < n; j++) {
        if (bl->item(bl->pool, j, &items[j])) {
            /* the pool's items still borrow: hand over only ours */
            free(r->items);
            r->items = items;
            r->n_items = (size_t)j + 1;
            goto nomem;
        }
    }
    if (r->n_items)
        memcpy(items + n, r->items, r->n_items * sizeof *items);
    free(r->items);
    r->items = items;
    r->n_items += (size_t)n;
    free((char *)r->text);
    r->text = buf_detach(&t, NULL);
    r->tokens = tokens;
    return r->text ? CAIRN_OK : cairn__err(h, CAIRN_NOMEM, "out of memory");
nomem:
    buf_release(&t);
    return cairn__err(h, CAIRN_NOMEM, "out of memory");
}

static int mem_count(const void *pool)
{
    return ((const struct mem_pool *)pool)->norder;
}

static int mem_unpick(void *pool, struct buf *b)
{
    return mem_unpick_last(pool, b);
}

static int mem_item(const void *pool, int j, struct cairn_recall_item *it)
{
    const struct mem_pool *mp = pool;
    const struct rmem *m = &mp->v[mp->order[j]];
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
    return it->session && it->message && it->memory_type ? 0 : -1;
}

/* CAIRN_RECALL_GATE_ONLY: whether cairn_inject_gate (gate.c) fails
 * whatever conversations pack would add. Packing only adds conversation
 * turns and may take back notes (join_block), never adds a memory or a
 * note, so with no memory packed and no packed note that opens the gate,
 * what is left is the question's figures, known before packing. When
 * units matched but pack would have packed none (all already injected),
 * the gate's reason reads "weak match" instead of "nothing recalled". */
static int gate_shut(const struct cairn_recall *r, const struct pool *p,
                     const struct mem_pool *mp, const struct note_pool *np)
{
    if (mp->norder > 0 || r->only_time || gate_cosine_opens(r))
        return 0;
    /* nothing matched: pack reads nothing, and the gate says "nothing
     * recalled" as before */
    int any = 0;
    for (int i = 0; i < p->nu && !any; i++)
        any = p->u[i].score > 0;
    if (!any)
        return 0;
    for (int i = 0; i < np->norder; i++)
        if (np->v[np->order[i]].gate)
            return 0;
    return gate_words(r) != GATE_PASS;
}

static int note_count(const void *pool)
{
    return ((const struct note_pool *)pool)->norder;
}

static int note_unpick(void *pool, struct buf *b)
{
    return notes_unpick_last(pool, b);
}

static int note_item_at(const void *pool, int j, struct cairn_recall_item *it)
{
    return note_item(pool, j, it);
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

/* The second pass (issue 16, multi-hop; dense_feedback): only when
 * dense recall ran (the prompt hook's keyword recall never gets here), and
 * only between people, where the turns that answer a multi-hop question
 * often share no word with it ("What activities does Melanie partake
 * in?": pottery, camping, painting, each in another session). The
 * ranking is made again with the pass's ranks fused in. */
static int second_pass(struct cairn *h, struct pool *p, struct query *q, int use_time,
                       const struct dense_result *dr, int budget, int *ran)
{
    int rc;
    *ran = 0;
    /* below DENSE_PRF_MIN tokens only the most precise units fit, and the
     * pass trades precision for breadth; an English model's vectors give
     * a CJK question no dense rank at all (rank.c) */
    if (DENSE_PRF_W <= 0 || budget < DENSE_PRF_MIN || !p->any_dialog ||
        (dr->cjk >= DENSE_CJK_SHARE && !dr->pol.cjk && DENSE_CJK_W <= 0))
        return CAIRN_OK;
    if ((rc = dense_feedback(h, p, dr)))
        return rc;
    *ran = 1;
    free(p->ord);                   /* the first ranking's order */
    p->ord = NULL;
    if (rank_default(p, q, use_time, dr))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    return CAIRN_OK;
}

/* The question in the named speaker's words (issue 16, persp55;
 * query_first_person, dense_persona): between people, a question about one
 * speaker ("What pets does Melanie have?") is searched again as that
 * speaker would say it ("pets I have"), one more encode, and the ranking
 * is made again with its ranks fused in. Only where dense recall ran (the
 * prompt hook's keyword recall never gets here), and not for a CJK
 * question with an English-only model, which gets no dense rank. */
static int persona_pass(struct cairn *h, struct pool *p, struct query *q, int use_time,
                        const struct dense_result *dr, const char *query, int budget)
{
    const char *name = NULL;
    struct buf b = BUF_INIT;
    int rc = CAIRN_OK, named;
    if (POLICY_GET(PERSP_W) <= 0 || budget < POLICY_GET(PERSP_MIN) || !p->any_dialog ||
        (dr->cjk >= DENSE_CJK_SHARE && !dr->pol.cjk && DENSE_CJK_W <= 0))
        return CAIRN_OK;
    if ((named = rank_named_speaker(p, q, &name)) < 0 ||
        (named && query_first_person(query, strlen(query), name, &b) < 0)) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    if (!named || !b.n)
        goto out;
    if ((rc = dense_persona(h, p, dr, b.p, name)) || !p->persp)
        goto out;
    free(p->ord);                   /* the first ranking's order */
    p->ord = NULL;
    if (rank_default(p, q, use_time, dr))
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
out:
    buf_release(&b);
    return rc;
}

/* The entity pass (issue 16, multi-hop; entity.c): words, so it runs
 * without vectors too (the prompt hook's keyword recall), where the second
 * dense pass did not run: on top of that pass it cost LoCoMo dev's tuned
 * half multi-hop questions at 4k. The ranking is made again with its
 * ranks fused in. */
static int entity_second(struct cairn *h, struct pool *p, struct query *q, int use_time,
                         const struct dense_result *dr, const struct cairn_recall_opts *o)
{
    int rc, changed = 0;
    if ((rc = entity_pass(h, p, q, o, &changed)) || !changed)
        return rc;
    free(p->ord);                   /* the first ranking's order */
    p->ord = NULL;
    if (rank_default(p, q, use_time, dr))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    return CAIRN_OK;
}

/* The dense search, between gather's keyword matches and its sessions
 * (gather_late_fn), with the question's vector from the thread started
 * before gather; its figures go into r as they always did. */
struct dense_late {
    struct cairn *h;
    const char *query;
    const struct cairn_recall_opts *o;
    struct dense_pre *pre;
    struct dense_result *dr;
    struct cairn_recall *r;
    int ran;
};

/* The best cosine's lead over the question's other hits, in their
 * standard deviations: on a store of one project every message is close
 * to every question (devmem dev: best cosines 0.86-0.92 with the answer
 * forgotten), so the best cosine alone opened the gate there. */
static double cosine_lead(const struct dense_result *dr)
{
    double sum = 0, sq = 0, mean, sd;
    int n = dr->n - 1;
    if (n < GATE_COS_Z_HITS)
        return 0;
    for (int i = 1; i <= n; i++)
        sum += dr->hits[i].cos;
    mean = sum / n;
    for (int i = 1; i <= n; i++)
        sq += (dr->hits[i].cos - mean) * (dr->hits[i].cos - mean);
    sd = sqrt(sq / n);
    return sd > 1e-9 ? (dr->hits[0].cos - mean) / sd : 0;
}

static int dense_late(void *arg, const struct dense_result **extra)
{
    struct dense_late *dl = arg;
    struct dense_result *dr = dl->dr;
    int rc;
    dl->ran = 1;
    if ((rc = dense_search_pre(dl->h, dl->query, dl->o, dl->pre, dr)))
        return rc;
    dl->r->dense = dr->status;
    if (dr->n > 0 && (dr->cjk < RECALL_GATE_CJK || dr->pol.cjk)) {
        dl->r->cosine = dr->hits[0].cos;
        dl->r->gate_cosine = dr->pol.gate_cosine;
        dl->r->cosine_z = cosine_lead(dr);
    }
    if (dr->note[0] && !(dl->r->note = strdup(dr->note)))
        return cairn__err(dl->h, CAIRN_NOMEM, "out of memory");
    if (extra)
        *extra = dr->n ? dr : NULL;
    return CAIRN_OK;
}

int cairn_recall(struct cairn *h, const char *query, const struct cairn_recall_opts *opts,
                 struct cairn_recall **out)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    struct query q;
    struct pool p;
    struct dense_result dr;
    struct dense_pre pre = { 0 }, *pp = &pre;   /* pp: o.prep's when it took */
    struct mem_pool mp;
    struct note_pool np;
    struct buf mb = BUF_INIT, nb = BUF_INIT;
    int rc;

    *out = NULL;
    memset(&q, 0, sizeof q);
    memset(&p, 0, sizeof p);
    memset(&dr, 0, sizeof dr);
    memset(&mp, 0, sizeof mp);
    memset(&np, 0, sizeof np);
    if (!query)
        return cairn__err(h, CAIRN_INVALID, "no question");
    /* the first version ends with `flags`: fields added later get defaults */
    rc = cairn__opts(h, &o, sizeof o, opts,
                     offsetof(struct cairn_recall_opts, flags) + sizeof o.flags, "recall options");
    if (rc != CAIRN_OK)
        return rc;
    if (strlen(query) > RECALL_MAX_QUERY)
        return cairn__err(h, CAIRN_TOOBIG, "question longer than %d bytes", RECALL_MAX_QUERY);
    if (o.source < CAIRN_SOURCE_ALL || o.source > CAIRN_SOURCE_NOTES)
        return cairn__err(h, CAIRN_INVALID, "unknown source %d", o.source);
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
    /* `--source notes`: no conversation and no memory is read at all */
    int notes_only = o.source == CAIRN_SOURCE_NOTES;
    int mem_tokens = 0, note_tokens = 0;
    if (!notes_only) {
        /* Dense retrieval: every method but the keyword-only ones. */
        /* (A question that only names a period is answered by the period:
         * its words "what did I do" mean nothing to a vector.) The model's
         * load and the question's encoding run on a thread while gather
         * reads the keyword matches; the search itself runs at gather's
         * call (dense_late), or after it when gather ended early. */
        struct dense_late dl = { h, query, &o, &pre, &dr, r, 0 };
        if (!raw && o.method != CAIRN_METHOD_KEYWORD && !q.only_time) {
            /* or the thread begun before the store opened (cairn_prep) */
            rc = dense_pre_start(h, query, o.flags, prep_take(o.prep, h, query), &pp);
            dl.pre = pp;
            if (rc)
                goto out;
            rc = gather(h, &q, &o, NULL, dense_late, &dl, &p);
            if (!rc && !dl.ran)
                rc = dense_late(&dl, NULL);
        } else {
            rc = gather(h, &q, &o, NULL, NULL, NULL, &p);
        }
        if (rc)
            goto out;
        build_units(&p, raw);
        p.budget = o.budget;
        if (p.nm && !p.u) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
        /* topical segments (issue 16, multi-hop; their BM25 from 8k: SEG_* in policy.h) */
        if (!raw && dr.n && segment_on(o.budget) && (rc = segment_pool(h, &p, &dr)))
            goto out;
        if (raw ? rank_raw_bm25(&p, &q) : rank_default(&p, &q, use_time, dr.n ? &dr : NULL)) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
        int prf = 0;
        if (!raw && dr.n && (rc = persona_pass(h, &p, &q, use_time, &dr, query, o.budget)))
            goto out;
        if (!raw && dr.n && (rc = second_pass(h, &p, &q, use_time, &dr, o.budget, &prf)))
            goto out;
        if (!raw && !prf && (rc = entity_second(h, &p, &q, use_time, dr.n ? &dr : NULL, &o)))
            goto out;
        /* A cut keeps to what matches well: a small store is returned whole
         * only when nothing in it matches. */
        for (int i = 0; o.min_rel_score > 0 && i < p.nu; i++)
            if (p.u[i].score > 0)
                p.all_mode = 0;
        r->only_time = q.only_time;
        if (!raw)
            recall_gate(&p, &q, &r->match, &r->match_weight);
        if (!raw && dr.n) {
            recall_gate_dense(&p, &q, &r->match, &r->match_weight, &r->match_dense);
            r->gate_dense = 1;
        }
        /* Memories first: what they take of the budget, the conversations do
         * not get (memories.c). The raw baseline stays the plain BM25 of the
         * record. */
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
    }
    /* Notes next (notes.c): with conversations, at most NOTE_SHARE of what
     * the memories left. A store with no vault reads nothing more, and its
     * recall is what it was before vaults. */
    /* (the raw method reads notes only when asked for notes alone: its
     * baseline of conversations stays the plain BM25 of the record) */
    if (o.source != CAIRN_SOURCE_CONVERSATIONS && (!raw || notes_only)) {
        /* the sections' vectors were made when the vault was indexed; the
         * question's is the one made here (dense_search's when it ran) */
        struct notes_dense nd = { NULL, 0, NULL, 0 };
        int want = 0;
        if (!raw && o.method != CAIRN_METHOD_KEYWORD && !q.only_time &&
            ((rc = notes_want_dense(h, &want)) || (want && (rc = dense_query_vec(h, query, &dr)))))
            goto out;
        if (want && dr.qv)
            nd = (struct notes_dense){ dr.qv, dr.qdim, dr.model, dr.pol.gate_cosine };
        if ((rc = notes_rank(h, &q, raw, nd.qv ? &nd : NULL, &np)))
            goto out;
        int cap = notes_only ? o.budget : (int)(o.budget * NOTE_SHARE);
        if ((note_tokens = notes_pack(h, &np, &q, cap, o.exclude_items, &nb, &rc)) < 0)
            goto out;
        o.budget -= note_tokens;
    }
    struct pack_src src = pack_src_store(h);
    r->gate_stopped = !raw && !notes_only && (o.flags & CAIRN_RECALL_GATE_ONLY) &&
                      gate_shut(r, &p, &mp, &np);
    if (!notes_only && !r->gate_stopped && (rc = pack(&src, &p, &q, &o, raw, r))) {
        if (rc == CAIRN_NOMEM)
            cairn__err(h, rc, "out of memory");
        goto out;
    }
    struct block notes = { &nb, &np, note_count, note_unpick, note_item_at };
    struct block mems = { &mb, &mp, mem_count, mem_unpick, mem_item };
    if ((np.norder && (rc = join_block(h, &notes, r))) ||
        (mp.norder && (rc = join_block(h, &mems, r))))
        goto out;
    /* The items borrow from the pool, which goes now: copy. */
    for (size_t i = 0; i < r->n_items; i++) {
        struct cairn_recall_item *it = &r->items[i];
        const char *spk = it->speaker;
        if (it->memory) {           /* join_block made them whole */
            if (o.explain && !(it->why = memory_why(&mp, it->memory))) {
                rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
                goto out;
            }
            continue;
        }
        if (it->note_path) {        /* and these */
            if (o.explain) {
                char why[160];
                snprintf(why, sizeof why, "note rank %d, holds %.0f%% of the question's "
                         "weight%s%s", it->rank + 1, it->score * 100,
                         it->note_named ? ", its page is named" : "",
                         it->excerpt ? ", excerpt" : "");
                if (!(it->why = strdup(why))) {
                    rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
                    goto out;
                }
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
    note_pool_free(&np);
    buf_release(&mb);
    buf_release(&nb);
    query_free(&q);
    dense_pre_free(&pre);
    if (pp != &pre)
        dense_pre_free(pp);         /* joined; the prep itself is the caller's */
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
