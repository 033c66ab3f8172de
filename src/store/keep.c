/*
 * keep.c: one pass of a message's tokens for both keepers (store/keep.h).
 *
 * The term tiers and the packed postings each count the words of their
 * own set (util/wordset) in every message a write adds: the tiers to
 * score its matches against their cuts, the postings to append them.
 * Each tokenized the message for itself, beside the FTS5 index's own
 * pass (the most expensive part of an add: folding, stemming). Here the
 * index's tokenizer hands each token to both tallies as it indexes it
 * (text_fts_tap), and then each keeper decides from its tally.
 */
#include "internal.h"
#include "store/keep.h"
#include "store/post.h"
#include "store/tier.h"
#include "text/tokenize.h"
#include "util/wordset.h"

/* The tallies a message's tokens go to: the tiers' (t), the postings' (p);
 * NULL when that keeper keeps nothing now. */
struct keep_sets {
    struct wordset *t, *p;
};

static int count_both(void *arg, const char *tok, size_t n, size_t start, size_t end, int coloc)
{
    struct keep_sets *k = arg;
    if (k->t)
        wordset_count(k->t, tok, n, start, end, coloc);
    if (k->p)
        wordset_count(k->p, tok, n, start, end, coloc);
    return 0;
}

static int begin(struct cairn *h, int64_t sess, int64_t msg, int ntok, int fresh,
                 struct keep_sets *k)
{
    int rc = store_tier_keep_begin(h, sess, msg, fresh, &k->t);
    return rc ? rc : store_post_keep_begin(h, msg, ntok, fresh, &k->p);
}

static int end(struct cairn *h, int64_t sess, int64_t msg, int ntok, int fresh,
               const struct keep_sets *k)
{
    int rc = k->t ? store_tier_keep_end(h, sess, msg, ntok, fresh) : CAIRN_OK;
    return rc || !k->p ? rc : store_post_keep_end(h, sess, msg, ntok, fresh);
}

void store_keep_replay(struct cairn *h, const char *text, size_t n, const struct text_toks *rec)
{
    h->fts_tap.rtext = rec ? text : NULL;
    h->fts_tap.rn = rec ? n : 0;
    h->fts_tap.rtoks = rec;
}

int store_keep_insert(struct cairn *h, sqlite3_stmt **ins_f, int64_t sess, int64_t msg,
                      const char *text, size_t n, int ntok, const struct text_toks *rec)
{
    struct keep_sets k = { NULL, NULL };
    int rc = begin(h, sess, msg, ntok, 1, &k);
    if (rc)
        return rc;
    /* the document the tokenizer replays rec for, and the tallies it
     * hands its tokens to: the tokens text_tokenize would give (tokenize.h) */
    store_keep_replay(h, text, n, rec);
    if (k.t || k.p) {
        h->fts_tap.cb = count_both;
        h->fts_tap.arg = &k;
    }
    rc = store_fts_add(h, ins_f, msg, text, n);
    h->fts_tap = (struct text_fts_tap){ NULL, NULL, NULL, 0, NULL };
    return rc ? rc : end(h, sess, msg, ntok, 1, &k);
}

int store_keep_rewrite(struct cairn *h, int64_t sess, int64_t msg, const char *text, size_t n,
                       int ntok, const struct text_toks *rec)
{
    struct keep_sets k = { NULL, NULL };
    int rc = begin(h, sess, msg, ntok, 0, &k);
    if (rc || (!k.t && !k.p))
        return rc;
    if (rec) {
        for (size_t i = 0; i < rec->n; i++) {
            const struct text_tok *t = &rec->v[i];
            count_both(&k, rec->b + t->off, t->n, t->start, t->end, (int)t->colocated);
        }
    } else if (text_tokenize(text, n, 0, count_both, &k)) {
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    }
    return end(h, sess, msg, ntok, 0, &k);
}
