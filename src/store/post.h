/*
 * post.h: packed postings of the common words (schema 26, store/post.c;
 * docs/ARCHITECTURE.md, "Common words' postings packed"). For every word
 * the term tiers keep (an index token in at least TIER_DF_MIN messages
 * when built), every match of it up to post_state.upto, as the FTS5 walk
 * gives it (message, session, count, length), in blocks of up to
 * POST_BLOCK matches: recall decodes a blob instead of stepping an FTS5
 * row and a run of msg_runs a match. SQLite stores only.
 */
#ifndef CAIRN_STORE_POST_H
#define CAIRN_STORE_POST_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

struct cairn;
struct buf;

/* Matches a block (a blob of ~4-6 bytes a match: a few pages). */
#define POST_BLOCK 512
/* An add appends into a word's last block when it holds fewer matches
 * than this, else writes a block of its own (store/post.c, keep_word). */
#define POST_MERGE 64
/* Messages rewritten or deleted since the build (post_dirty) that the
 * reader walks again by FTS5; with more, it walks every word as before
 * until the next build. */
#define POST_DIRTY_MAX 256

/* One match, as store_term_matches gives it. */
struct post_ent {
    int64_t row, sess;
    int32_t tf, ntok;
};

/*
 * The blob: a match after another, each four varints (7 bits a byte, low
 * first, the high bit: more): the row's step from the one before (the
 * block's lo first; at least 1), the session's step from the one before
 * (zigzag; 0 first), the count (1-65535) and the length (0-INT32_MAX).
 * post_blob_put appends e to b (*row, *sess: the match before, updated);
 * post_blob_get decodes at most max matches of p[0..n) into out and
 * returns how many, or -1 when the bytes are not such a list (truncated,
 * a varint too long, a step of 0, a count or length out of range, more
 * than max, a row past INT64_MAX). Never reads outside p[0..n)
 * (tests/fuzz/fuzz_post.c).
 */
void post_blob_put(struct buf *b, int64_t *row, int64_t *sess, const struct post_ent *e);
int post_blob_get(const unsigned char *p, size_t n, int64_t lo, struct post_ent *out, int max);

/* The newest message the postings cover (0: none built, or a store
 * before 26) and the messages rewritten or deleted at or below it, in
 * order (*nd > POST_DIRTY_MAX: too many, *d NULL). */
int store_post_state(struct cairn *h, int64_t *upto, int64_t **d, int *nd);

/* Every match of index token tok[0..n) at or below upto, by row: *v
 * (malloc'd, *nv of them; the caller frees) when its blocks read whole
 * (they chain from 0, each decodes as its count of matches ending at its
 * hi, the counts sum to the word's), else *v NULL: the caller walks it. */
int store_post_read(struct cairn *h, const char *tok, size_t n, struct post_ent **v, int *nv);

/* store_post_read of k tokens, tok[i][0..n[i]) into v[i] and nv[i]
 * (tok[i] NULL: none, v[i] NULL), by two statements for all of them; on
 * an error every v[i] is freed and NULL. */
int store_post_reads(struct cairn *h, const char *const *tok, const size_t *n, int k,
                     struct post_ent **v, int *nv);

/* The row id of session ext_id (0: none, or ext_id NULL). */
int store_session_row(struct cairn *h, const char *ext_id, int64_t *row);

/* Building (recall/tier.c, in its transaction): every word's blocks and
 * the dirty list dropped, upto set; then a word's matches by row. */
int store_post_reset(struct cairn *h, int64_t upto);
int store_post_add_term(struct cairn *h, const char *tok, size_t n, const struct post_ent *v,
                        int nv);
/* store_post_add_term in two steps (branch add34): the blocks encoded with
 * no store (a tier build's walker thread), then written (the build's).
 * post_encode leaves e->nv 0 (nothing to write) for matches not strictly
 * by row or with a count below 1 or a length below 0, as the one step
 * writes nothing for them; e keeps its arrays for the next word. */
struct post_enc_block { int64_t lo, hi; int n; size_t off, len; };
struct post_enc {
    struct buf             data;    /* the blocks' blobs, one after another */
    struct post_enc_block *b;
    int                    nb, capb;
    int                    nv;      /* the word's matches (0: nothing to write) */
    int64_t                hi;      /* its last row */
};
int post_encode(struct post_enc *e, const struct post_ent *v, int nv);
int store_post_put(struct cairn *h, const char *tok, size_t n, const struct post_enc *e);
void post_enc_free(struct post_enc *e);

/*
 * Keeping (the write paths, through store/keep.c): for a new message
 * (fresh) or a rewrite of one of this transaction's, store_post_keep_begin
 * gives the set of packed words (*ws; NULL: nothing to keep) whose tally
 * (wordset_count) its tokens go to, and store_post_keep_end (called only
 * after a set was given) holds a match for each it counted and clears the
 * tally; store_post_keep_flush (store_commit) appends them to the words'
 * last blocks and moves upto; store_post_keep_drop frees the state.
 * Nothing is kept unless every message above upto was (a tail the reader
 * walks instead), nor with "store.tier_keep" "0". A rewrite or delete at
 * or below upto is put in post_dirty by trigger.
 */
struct wordset;
int store_post_keep_begin(struct cairn *h, int64_t msg, int ntok, int fresh, struct wordset **ws);
int store_post_keep_end(struct cairn *h, int64_t sess, int64_t msg, int ntok, int fresh);
int store_post_keep_flush(struct cairn *h);
void store_post_keep_drop(struct cairn *h);

#endif
