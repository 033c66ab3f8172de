/*
 * recall.h: the recall pipeline's internal types.
 *
 *   query.c   the question: content terms (same tokenizer as the index),
 *             stop words dropped, a time range read from it
 *   gather.c  candidates: one FTS5 OR query gives, per matching message,
 *             the count of each term; then the messages of the sessions
 *             they sit in, for rounds and windows (metadata only)
 *   dense.c   the question's vector against every stored vector of the
 *             current model in scope: exact top-k by cosine (AVX2)
 *   rank.c    BM25 at several granularities and the dense ranks fused by
 *             reciprocal rank, the time boost, the raw-BM25 baseline
 *   unitrank.c rank.c's keyword scores of one session from its unit row
 *             (store/units.h) and its matches, without its turns (issue
 *             23; a pool gathered over unit rows: recall.units)
 *   entity.c  the entity pass: the rare words the best turns share,
 *             searched again, one more fused ranking (multi-hop)
 *   pack.c    user-first packing into the budget, excerpts, the text; it
 *             reads the texts of the turns it tries in batches (pack_src)
 *   memories.c explicit memories: scored by the same tokenizer, given a
 *             share of the budget, rendered before the conversations
 *   recall.c  the public entry point
 *
 * Recall speaks no SQL: gather, dense and pack read the store only through
 * store/recall_read.h (tests/t/t0503-sql-in-store.sh checks it), and rank,
 * gate and pack work on the in-memory pool below, which the unit tests
 * build by hand (tests/unit/test_recall_pool.c).
 */
#ifndef CAIRN_RECALL_H
#define CAIRN_RECALL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include "internal.h"
#include "util/buf.h"
#include "store/vectors.h"
#include "store/recall_read.h"
#include "store/post.h"
#include "store/units.h"
#include "recall/policy.h"

#define RECALL_MAX_TERMS 64

/* One word's matches in the tier build (recall/tier.c): v, by row, as the
 * walk gives them (as the packed blocks take them: post_encode reads v
 * itself) and, once chosen (tier_choose), its tier: the kept sessions'
 * matches by row and the cut. idx, kv and mark are the choice's scratch,
 * kept for the next word. */
struct tmatches {
    struct post_ent *v;
    int             n, cap;
    struct post_ent *keep;
    int             nkeep, capkeep;
    int            *idx;
    int             capidx;
    struct sort_kv *kv;
    int             capkv;
    unsigned char  *mark;
    int             capmark;
    double          cut;
    struct post_enc enc;         /* the packed blocks, encoded by the walker */
};

/* The word's tier from its matches m->v (by row): the TIER_SESS sessions
 * whose best message scores highest on the word alone (lengths against
 * avg), all their matches into m->keep by row, the cut into m->cut.
 * CAIRN_OK or CAIRN_NOMEM. */
int tier_choose(struct tmatches *m, double avg);

struct qterm {
    char  *norm;        /* token as the index holds it */
    char  *surface;     /* the words of the question it came from */
    double idf_msg;     /* IDF over messages */
    double idf_unit;    /* IDF over rounds / windows */
    int    df_msg;      /* matching messages in scope */
    int    stop;        /* a stop word (kept only when nothing else is) */
    int    label;       /* names who speaks a line of a pasted transcript */
};

struct query {
    const char   *text;
    struct qterm  t[RECALL_MAX_TERMS];
    int           nt;
    int           has_range, only_time;
    int           vague;       /* from..to is a leaning, not a period
                                * ("lately"); has_range is 0 then */
    int           asks_reply;  /* about what the assistant said or did */
    int           asks_summary; /* 1 a summary, 2 the order things came up in
                                 * (query_asks_summary); packed broad */
    int           ordinal;     /* ORD_* bits or 0 (query_ordinal) */
    int64_t       from, to;
    int64_t       now;
};

enum { ROLE_USER = 0, ROLE_ASSISTANT = 1 };

struct rsession {
    int64_t row;
    char   *ext_id, *source, *project, *title;
    char   *strs;          /* gather's one block holding the four (NULL: each
                            * its own allocation, as a pool made by hand) */
    int64_t started_at;
    int     dialog;        /* every turn is a "user": a chat between people */
    int     first_msg, n_msgs;  /* range in the message array */
};

struct rmsg {
    /* 8-byte fields first, then the 4-byte ones: no padding (96 bytes, not
     * 112); the hook loads every turn of the kept sessions, and each page
     * of this array is a page fault in a one-shot process */
    int64_t   row;         /* messages.id */
    char     *speaker;     /* NULL if none */
    char     *ext_id;      /* external id, else the position as text; read by
                            * pack for the turns it tries (NULL before) */
    int64_t   at;          /* message time, else the session's start */
    uint16_t *tf;          /* per query term; NULL when the message matched none */
    double    s_msg;       /* BM25 of the message alone */
    char     *text;        /* filled by pack.c: what is printed for it (whole
                            * or excerpt) */
    int       sess;        /* index into sessions */
    int       position;
    int       role;
    int       event;       /* speaks of a date in the question's range */
    int       ntok;        /* index tokens */
    int       bytes;       /* content length (read with ext_id; -1 before) */
    int       unit;        /* the round it belongs to */
    int       picked;      /* filled by pack.c: 0 no, 1 whole, 2 excerpt */
    float     dense;       /* 1 + cosine when among the dense top-k, else 0 */
    float     prf;         /* the same for the second dense pass (dense_feedback) */
};

struct runit {
    int     sess;
    int     first, last;   /* message index range, inclusive */
    int     head;          /* the message that leads it (a user turn) */
    double  s_round;       /* BM25 of the whole round */
    double  s_window;      /* BM25 of the round with its neighbours */
    double  score;         /* fused */
    int     rank;
    int     in_range;      /* inside the question's time range */
    double  ord_bonus;     /* what order_boost added to score (rank.c) */
};

/* A pool gathered over its sessions' unit rows (gather.c, the setting
 * recall.units; issue 23, "Ranking a big pool without its turns"): its
 * sessions and units are the loaded pool's, index for index (a session's
 * first_msg and n_msgs, a unit's first, last and head are where its turns
 * would sit), but p->m is filled a session at a time, when packing first
 * needs that session (pool_load); until then a turn's slot is zero. What
 * ranking reads of a unit's turns comes from here instead (rank.c,
 * unitrank.c, gate.c: unit_head_*), so every score and order is the
 * loaded pool's. */
/* A match as unitrank.c reads it: its message id, length and counts. */
struct unit_match { int64_t row; int ntok; const uint16_t *tf; };
enum { POOL_UNLOADED, POOL_LOADED, POOL_FAILED };
struct pool_units {
    struct cairn      *h;       /* the store the turns are read from */
    struct store_unit *us;      /* per unit: its row's values */
    uint64_t          *has;     /* per unit: bit t, some turn holds term t */
    int               *ufirst;  /* per session: its first unit (ns + 1) */
    struct unit_match *mt;      /* the matches, by session then row */
    int               *mfirst;  /* per session: its first match (ns + 1) */
    double            *s_reply; /* per match: a reply's own BM25 (0 a head's) */
    int               *munit;   /* per match: its unit */
    double            *s_head;  /* per unit: its head's BM25 alone */
    char              *state;   /* per session: POOL_UNLOADED, _LOADED, _FAILED */
    int                nmt, maxu;   /* matches; the most units of a session */
    int                df[RECALL_MAX_TERMS];  /* per term: the units with its bit */
};

struct pool {
    struct rsession *s;   int ns, cs;
    struct rmsg     *m;   int nm, cm;
    struct runit    *u;   int nu, cu;
    uint16_t        *tf_all;  /* the matches' counts, which m[].tf point into
                               * (gather.c); NULL: each m[].tf is its own */
    int             *ord;  /* units by rank (units_by_rank), or NULL */
    int     ord_tail;      /* units at ord's end not yet ranked: those at
                            * score 0, in pool order, rank -1 (units_rank_all) */
    int64_t total_msgs, total_tok, total_user;  /* whole scope, for IDF */
    int64_t total_bytes;                        /* text in scope */
    int     all_mode;      /* the scope may fit the budget: load it all */
    int     any_dialog, any_assistant;
    /* Sessions left out by gather's pruning (big pools only): per term,
     * the matching messages they held, for the unit IDF's estimate. */
    int     pruned;
    int     pruned_df[RECALL_MAX_TERMS];
    int64_t hit_msgs, hit_units;   /* in all sessions with matches */
    /* pruned: the kept sessions in order and each one's turns, as the
     * pruning read them (session_sizes), so gather sizes the pool without
     * reading those rows again; NULL when the rows did not answer */
    int64_t *kept, *kept_msgs;
    int      nkept;
    int     cite;          /* CAIRN_RECALL_CITE: best session first, ids in headers */
    float   cut_dense;     /* recall_cut: the dense value a hit needs to pass the cut */
    double *ent;           /* per unit, the entity pass's score (entity.c), or NULL */
    double *s_words;       /* per unit, the keyword rankings' fused score before
                            * the dense ones (rank_default, with dense hits only;
                            * the gate, gate.c), or NULL */
    float  *persp;         /* per message, 1 + its cosine to the question in the
                            * named speaker's words (dense_persona), or NULL */
    int    *seg;           /* per message, its topical segment (segment.c), -1
                            * none; NULL: no segments */
    float  *seg_cos;       /* per segment, 1 + the question's cosine to it */
    int     nseg;
    int     budget;        /* the recall's budget in tokens (0: unknown), for
                            * the signals gated by it (rank.c len_rank) */
    int     split;         /* gather loaded half the sessions on a second
                            * thread (load_split; tests read it) */
    int     threads;       /* 2: a pool big enough for a second thread
                            * (gather's recall.split_msgs): rank.c scores
                            * half its units on one; else 0 */
    struct pool_units *pu; /* gathered over unit rows, or NULL: every turn
                            * loaded */
    int     pack_walk;     /* tests: pack walks every scored unit in both
                            * passes, plans its reads up front and orders
                            * every session (before pack53: the reference
                            * its shortcuts are checked against) */
    int     pack_tail;     /* pack's: the place its first pass's tail began
                            * (pass_closed), or -1 (tests read it) */
};

/* A unit's head turn's time (its own, else its session's start), position
 * and message id: from the unit row in a pool gathered over them, else
 * from the turn. */
static inline int64_t unit_head_at(const struct pool *p, int u)
{
    if (p->pu) {
        int64_t at = p->pu->us[u].head_at;
        return at != CAIRN_NO_TIME ? at : p->s[p->u[u].sess].started_at;
    }
    return p->m[p->u[u].head].at;
}

static inline int unit_head_pos(const struct pool *p, int u)
{
    return p->pu ? (int)p->pu->us[u].first_pos : p->m[p->u[u].head].position;
}

static inline int64_t unit_head_row(const struct pool *p, int u)
{
    return p->pu ? p->pu->us[u].first_id : p->m[p->u[u].head].row;
}

/* A match's turn's own BM25 (its s_msg) and whether it is a reply (an
 * assistant's turn), in a pool gathered over unit rows: a turn after its
 * unit's head is a reply (a user turn leads a unit of its own), and a head
 * is one when the row says so. */
static inline double unit_match_s(const struct pool *p, int mi, int *reply)
{
    const struct pool_units *pu = p->pu;
    int u = pu->munit[mi];
    int head = pu->mt[mi].row == pu->us[u].first_id;
    *reply = !head || !pu->us[u].head_user;
    return head ? pu->s_head[u] : pu->s_reply[mi];
}

/* gather.c, for a pool gathered over unit rows: the session holding turn
 * slot i (its index in p->s), and the turns of the sessions si[n] (indices
 * into p->s, any order, repeats allowed) loaded into their slots, each
 * session's row and strings with them; a session whose turns no longer
 * read as its row's (the store changed since gather) is marked
 * POOL_FAILED and left empty. A pool with every turn loaded: nothing to
 * do. CAIRN_OK or a code with the handle's message. */
int pool_sess_of(const struct pool *p, int i);
int pool_load(struct pool *p, const int *si, int n);
/* The strings alone (ext_id, source, project, title: a header's) of the
 * sessions si[n] not loaded nor named yet, their turns left unread; one
 * whose row is gone is marked POOL_FAILED. CAIRN_OK or a code. */
int pool_names(struct pool *p, const int *si, int n);
static inline int pool_state(const struct pool *p, int si)
{
    return p->pu ? p->pu->state[si] : POOL_LOADED;
}

/* query.c */
int  query_parse(struct query *q, const char *text, int64_t now, int use_time);
/* Whether a question asks about what the assistant said or did ("how did
 * we fix it?", "what did you suggest?"): word cues, English, Spanish and
 * German. Reads at most the first few hundred words. */
int  query_asks_reply(const char *text, size_t len);
int  query_asks_summary(const char *text, size_t len);
/* Whether a question asks for the first or the last time something
 * happened ("the very first thing I asked", "what did we last decide"):
 * ORD_FIRST or ORD_LAST, plus ORD_DAY when a day or sitting is what is
 * first or last ("on the last day we..."), or 0. Strict word cues,
 * English and Chinese. */
enum { ORD_FIRST = 1, ORD_LAST = 2, ORD_DAY = 4 };
int  query_ordinal(const char *text, size_t len);
void query_free(struct query *q);
/* The question in the words of the speaker it names (issue 16, persp55):
 * "What pets does Melanie have?" with name "Melanie" -> "pets I have":
 * each word of the name becomes "I" ("Melanie's": "my"), she / her / his
 * the same person's, an opening question word and an auxiliary right
 * before the name go. Into out (reset): 1, or 0 when no word of name is in
 * text or text has more than RECALL_FP_WORDS words (a pasted text, not a
 * question about someone); -1 on no memory. */
#define RECALL_FP_WORDS 48
int  query_first_person(const char *text, size_t len, const char *name, struct buf *out);
/* The FTS5 MATCH expression for the query terms into b ("" if none). */
void query_match_expr(const struct query *q, struct buf *b);
/* s as one FTS5 phrase ("..." with its quotes doubled) appended to b. */
void query_add_phrase(struct buf *b, const char *s);

/* dense.c */
struct dense_hit { int64_t msg, sess; float cos; };
struct dense_result {
    int     status;        /* enum cairn_dense */
    char    note[700];     /* for cairn_recall.note ("" if nothing to say) */
    struct dense_hit *hits;/* best first */
    int     n;
    double  cjk;           /* share of the question's letters that are CJK */
    struct model_policy pol; /* the model's (policy_model), set with model */
    float  *qv;            /* the question's vector (qdim) of model, or NULL */
    int     qdim;
    char    model[VEC_MODEL_ID_MAX];
};
/* The store says whether any vector exists and which sessions are in
 * scope (store/recall_read.h); the vectors come from store/vectors.h. */
int  dense_search(struct cairn *h, const char *query, const struct cairn_recall_opts *o,
                  struct dense_result *r);
/* The question's vector made on a thread of its own (issue 16, the hybrid
 * prompt hook): loading the model and encoding the question are CPU work
 * that reads no store, so recall starts them first and reads the keyword
 * matches meanwhile (recall.c). The thread takes only the process's model
 * (vec_model_current, vec_encode: locked) and h's settings (read only). */
struct dense_pre {
    const struct cairn *h;
    const char *query;
    struct vec_model *vm;  /* the current model, or NULL (why) */
    float  *qv;            /* the question's vector, or NULL: not encoded */
    char    why[600];
    pthread_t tid;
    int     started;       /* a thread runs (or ran) dense_pre_run */
    int     done;          /* vm, qv and why are final */
    /* The scan's cosines too (issue 16, hyb53): the cache file that
     * set_get would map (vec_cache_where, "" none), mapped by the thread
     * on its own and read by pread, each piece's cosine in cos[vset.n]
     * (NULL: not made; dense_search_pre scans as before). Only for a set
     * under DENSE_MT_MIN (one thread, as its scan) and not with the
     * two-stage scan. */
    char    vpath[4200];
    int64_t vstamp;
    struct vec_set vset;
    float  *cos;
    /* the pieces' message then session rows (2 * vset.n), read by pread
     * with the cosines, so the selection touches no page of the mapping
     * (NULL: not read; the mapping's are used) */
    int64_t *ids;
    /* the question as the scan scores it, then the blocks of cos shared
     * with the main thread once it joins (dense.c, cos_share) */
    int8_t  q8[4096];
    float   q_inv;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    int     stage;         /* 0 loading the model, 1 vm final (encoding), 2 cosines
                              shared, 3 the thread's work done */
    atomic_size_t next;    /* the next block to score */
    atomic_int    bad;     /* a read failed (or not wanted): cos not made */
    char    vset_model[VEC_MODEL_ID_MAX];  /* dense_topk_shared's set */
    int     vset_dim;
    /* Started before the store was open (dense_pre_begin: cairn_prep):
     * after encoding, the thread waits for the store's cache file, given
     * by dense_pre_start (PRE_GATE_GO), or stops there (PRE_GATE_STOP). */
    int     gate;          /* PRE_GATE_*; 0: none (vpath given at the start) */
};
enum { PRE_GATE_WAIT = 1, PRE_GATE_GO, PRE_GATE_STOP };
/* Starts the thread when dense_search would embed the question: a model is
 * named or installed and some message has a vector. Not starting is no
 * error (dense_search then does it all itself). flags: the recall's
 * (CAIRN_RECALL_FAST decides dense_sketch_k). early: a thread started
 * before the store opened (dense_pre_begin) on this question with the
 * model h resolves to, or NULL: when the thread is wanted, *pre becomes
 * early and its thread goes on to the store's cosines; else *pre (the
 * caller's) gets a thread of its own, or none, and early's thread stops
 * after its encoding. CAIRN_OK or a code. */
int  dense_pre_start(struct cairn *h, const char *query, unsigned flags, struct dense_pre *early,
                     struct dense_pre **pre);
/* The recall's question longer than this: CAIRN_TOOBIG. */
#define RECALL_MAX_QUERY (64 * 1024)
/* p's thread when the recall on h of query may take it: p started one,
 * on this question, and h resolves the model folder p's settings did,
 * with the same encoder threads; else NULL. Either way p is spent: no
 * later recall takes it (recall/prep.c). */
struct dense_pre *prep_take(struct cairn_prep *p, const struct cairn *h, const char *query);
/* For tests: 2 a recall took p's thread, 1 one passed it by, 0 neither. */
int prep_taken(const struct cairn_prep *p);
/* The thread started with no store open (cairn_prep, recall/prep.c):
 * cfg a handle of settings only (vec_model_current's and vec_encode's),
 * query kept by the caller until dense_pre_free. It loads the model and
 * encodes, then waits at the gate. -1 when no thread started. */
int  dense_pre_begin(const struct cairn *cfg, const char *query, struct dense_pre *pre);
/* dense_topk's hits (allowed, or every session but except) as the prompt
 * hook makes them: every piece's cosine made on a thread from h's cache
 * file, by pread, blocks shared with this one (dense_pre's scan without
 * the encoder), then selected from them when s is that file (*shared 1),
 * else scanned as dense_topk does (*shared 0). For tests. */
int  dense_topk_shared(struct cairn *h, const struct vec_set *s, const float *q,
                       const int64_t *allowed, int n_allowed, int64_t except, int k,
                       struct dense_hit *out, int *shared);
/* Waits for it (if started) and frees what dense_search did not take. */
void dense_pre_free(struct dense_pre *pre);
/* dense_search with the question's vector from pre (NULL or not started:
 * as dense_search): the same hits and notes. */
int  dense_search_pre(struct cairn *h, const char *query, const struct cairn_recall_opts *o,
                      struct dense_pre *pre, struct dense_result *r);
void dense_result_free(struct dense_result *r);
/* The second dense pass (issue 16, multi-hop): the question's vector moved
 * towards the vectors of the lead turns of the best DENSE_PRF_TOP units of
 * the first ranking (p ranked), searched again within the pool's sessions;
 * each hit's 1 + cosine goes into its pool message's prf. Nothing to do
 * (no vectors, no question vector) is no error. 0, or a CAIRN_* code. */
int  dense_feedback(struct cairn *h, struct pool *p, const struct dense_result *r);
/* The question in the named speaker's words (issue 16, persp55): text
 * (query_first_person's) embedded, its unit vector plus PERSP_MIX times
 * the question's searched within the pool's sessions; each hit's 1 +
 * cosine into p->persp (allocated here), with PERSP_ONLY only for turns
 * said by name. No model or no vector is no error. 0, or a CAIRN_* code. */
int  dense_persona(struct cairn *h, struct pool *p, const struct dense_result *r,
                   const char *text, const char *name);
/* The question's vector into r->qv (qdim, model) when dense_search made
 * none (no message has a vector) and a model is current: for the
 * memories' vectors. No vector is no error. */
int  dense_query_vec(struct cairn *h, const char *query, struct dense_result *r);
/* Sets smaller than this are scanned on one thread. A second thread
 * waits for a free core: at load 13 on 2 cores a 100,000-vector scan took
 * 9.7-10.6 ms p50 on two threads against 2.9-3.2 ms on one (bench_dense,
 * 2026-12-05; it was 65,536, so a 100k store's hook paid it). */
#define DENSE_MT_MIN 262144
/* The two-stage dense scan (dense.c, dense_topk_sketch; issue 16, hyb52):
 * the pieces whose sign sketches score best, scored exactly, for recall
 * with CAIRN_RECALL_FAST (the prompt hook, latency first) on a set mapped
 * from its cache file (8,192 vectors and more); 0: the exact scan. 0 by
 * default: on the real 100,000-message store with the host idle (load
 * 1.1-1.4, integ52) the hybrid hook took 46.75 ms wall p50 with K = 2,000
 * against 46.97 with the exact scan (570 runs each, taking turns): the
 * user time it saves (35.6 -> 33.3 ms) goes to the candidates' preads
 * (system 15.3 -> 17.0 ms); it paid only under load (0.71 of main's CPU
 * at load 7-8, hyb52), and it can change the hits, so it is opt-in: the
 * setting recall.sketch (CAIRN_RECALL_SKETCH=2000) turns it on for every
 * recall. Measured on the
 * real 100,000-message store (bench_sketch, 1,069 questions: the hook's
 * prompts and LoCoMo dev's): the top 50 the same set as the exact scan's
 * for 81% of questions at 2,000 (99.5% of the 50 in common), 39% at
 * 1,000 (97.5%), 96% at 4,000 (99.9%); the hook's output the same as
 * the exact scan's on 251 of 251 prompts at 1,000, 2,000 and 4,000. Not
 * in the policy hash (policy.h): `cairn eval` stores are in memory, never
 * with a cache file, so no eval result can move; like DENSE_MT_MIN, a
 * parameter of the scan. */
#define DENSE_SKETCH_FAST 0
/* Exact top-k messages (best piece each) of set by cosine with q (unit
 * or not), sessions limited to the sorted `allowed` (NULL: all). Returns
 * the count written to out[k], or -1 on no memory. */
int  dense_topk(const struct vec_set *s, const float *q, const int64_t *allowed, int n_allowed,
                int k, int threads, struct dense_hit *out);
/* The same over every session but the row except (0: every session):
 * dense_topk's hits with `allowed` all the others. */
int  dense_topk_except(const struct vec_set *s, const float *q, int64_t except, int k,
                       int threads, struct dense_hit *out);
/* The two-stage scan (issue 16, hyb52): the sketches (store/vectors.h,
 * struct vec_sketch) of every piece in scope scored against the question,
 * then the best kc of them (at least k * DENSE_PIECES_MULT) scored
 * exactly, as dense_topk does. Not exact: a piece whose sketch ranks past
 * kc is never scored (kc >= the set's size: every piece, the same hits as
 * dense_topk's on one thread). One thread. sk must be of s. */
int  dense_topk_sketch(const struct vec_set *s, const struct vec_sketch *sk, const float *q,
                       const int64_t *allowed, int n_allowed, int64_t except, int k, int kc,
                       struct dense_hit *out);
/* Candidates the two-stage scan rescores: the setting recall.sketch
 * (CAIRN_RECALL_SKETCH), 0 for the exact scan; without it the default of
 * recall with flags (CAIRN_RECALL_FAST: DENSE_SKETCH_FAST, unless
 * recall.exhaustive). dense_search uses it only on a set mapped from its
 * cache file, unless the setting asks. */
int  dense_sketch_k(const struct cairn *h, unsigned flags);
/* The sketch scan's kernel: for count sketches of `words` 64-bit words
 * one after the other at b, out_s[j] = the sum of the question's 4-bit
 * weights u_d over the bits d set in sketch j, where bit d of
 * planes[p * words + d / 64] is bit p of u_d, and out_c[j] = the bits set
 * in sketch j; exact at every level (scalar, AVX2, avx512 VPOPCNTDQ). */
void dense_sketch_dots(const uint64_t *planes, const uint64_t *b, int words, size_t count,
                       int32_t *out_s, int32_t *out_c);
void dense_sketch_dots_ref(const uint64_t *planes, const uint64_t *b, int words, size_t count,
                           int32_t *out_s, int32_t *out_c);
/* The sketch kernel's level: "scalar", "avx2" or "avx512vpopcntdq"
 * (set by dense_kernel_set: scalar at "scalar", avx2 at avx2 and avxvnni
 * and at avx512vnni without VPOPCNTDQ, VPOPCNTDQ at avx512vnni when the
 * CPU has it). */
const char *dense_sketch_kernel_name(void);
/* The kernels: run-time dispatch, and the scalar references. */
int32_t dense_dot_i8(const int8_t *a, const int8_t *b, int n);
int32_t dense_dot_i8_ref(const int8_t *a, const int8_t *b, int n);
/* The scan's, at the level in use: q (the quantised question) in
 * -127..127, v any int8; the same sum as dense_dot_i8_ref. */
int32_t dense_dot_i8q(const int8_t *q, const int8_t *v, int n);
/* The scan's kernel itself: out[j] = dense_dot_i8q(q, v + j * dim, dim)
 * for count vectors stored one after the other. */
void    dense_dots_i8q(const int8_t *q, const int8_t *v, int dim, size_t count, int32_t *out);
float   dense_dot_f32(const float *a, const float *b, int n);
float   dense_dot_f32_ref(const float *a, const float *b, int n);
/* The scan's level: "scalar", "avx2", "avxvnni" (AVX-VNNI) or
 * "avx512vnni"; the best the CPU has, capped by CAIRN_SIMD. */
const char *dense_kernel_name(void);
/* Tests and benchmarks (not thread-safe): the scan at the level named,
 * NULL the default. -1, and no change, if the CPU or CAIRN_SIMD does not
 * allow that level. */
int     dense_kernel_set(const char *name);

/* entity.c: the entity-driven keyword pass (issue 16, multi-hop). */
struct ent_word {
    char   *norm;          /* as the index holds it */
    char   *surface;       /* as the turn wrote it (the query's phrase) */
    int     df;            /* matching messages in scope */
    double  idf;
    int     ntop;          /* how many of the texts hold it */
    int     last;          /* the last text it was seen in */
};
/* The distinct words of texts[n] (NULL entries skipped), in order, that
 * are ENT_MIN_BYTES bytes or more, no stop word and none of q's terms:
 * at most max into w (malloc'd strings). The count, or -1 on no memory
 * (nothing left to free). */
int  entity_words(const struct query *q, const char *const *texts, int ntexts, struct ent_word *w,
                  int max);
/* With p ranked: reads the lead turns of the best units, picks their rare
 * words, searches them in o's scope and sets p->ent (*changed 1: rank
 * again). Nothing to do is no error. CAIRN_OK or a code with the message. */
int  entity_pass(struct cairn *h, struct pool *p, struct query *q,
                 const struct cairn_recall_opts *o, int *changed);

/* segment.c: topical segments (issue 16, multi-hop). The turns of each
 * of n consecutive unit vectors v[n][dim] into segments: a cut at a gap
 * whose similarity (the mean of the block turns before it against the
 * block after) dips by depth or more below its peaks on both sides,
 * deepest first, no segment shorter than min_len. seg[i]: turn i's
 * segment, 0 up, in order. The count, or -1 on no memory. */
int  segment_cuts(const float *v, int n, int dim, int block, double depth, int min_len,
                  int *seg);
/* Between people, with the question's vector (hybrid recall): cuts each
 * dialog session of p into segments from its turns' stored vectors and
 * sets p->seg, p->seg_cos (else leaves them NULL). Nothing to do is no
 * error. CAIRN_OK or a code with the message. */
int  segment_pool(struct cairn *h, struct pool *p, const struct dense_result *r);
/* Whether a recall of this budget uses segments (policy.h SEG_*: a weight
 * above 0, from SEG_MIN_BUDGET tokens). */
int  segment_on(int budget);

/* gather.c: extra (may be NULL) lists sessions to load besides those the
 * keywords find: the dense hits'. Reads the store (store/recall_read.h)
 * and fills p with metadata only: no text, no ext_id of a message.
 * When late is not NULL, gather calls late(late_arg) once it has read the
 * keyword matches and before it loads any session, and takes extra from
 * its result (recall.c: the dense search waits there for the question's
 * vector, made meanwhile on another thread); an error it returns is
 * gather's. A gather that ends early never calls it. */
typedef int (*gather_late_fn)(void *arg, const struct dense_result **extra);
int  gather(struct cairn *h, struct query *q, const struct cairn_recall_opts *o,
            const struct dense_result *extra, gather_late_fn late, void *late_arg,
            struct pool *p);
void pool_free(struct pool *p);

/* rank.c */
double rank_idf(double n, double df);
/* The learned fusion (issue 16, LRN_* in policy.h): per unit of a chat
 * between people, scores the RRF places throw away, each over the
 * question's best so it reads alike from one question to the next:
 * RANK_LRN_HEAD, _WIN, _WIN2 its BM25s over the best; _COS its cosine
 * over the best dense hit's, _COSZ its z-score among the hits; _SESS its
 * session's best lead-turn BM25 over the best; _LEN ntok / (ntok + 20);
 * _PRF, _ENT the second passes' scores over their best; _DRRF its place
 * among the dense hits as (k + 1) / (k + place + 1), _DMARG that times
 * how far the best hit stands out (its z-score less LRN_MARG_MID). A unit
 * of a user-assistant chat gets zeros (the weights were fitted between
 * people). f: nu * RANK_LRN_NF. Returns 0, or -1 on no memory. */
enum { RANK_LRN_HEAD, RANK_LRN_WIN, RANK_LRN_WIN2, RANK_LRN_COS, RANK_LRN_COSZ,
       RANK_LRN_SESS, RANK_LRN_LEN, RANK_LRN_PRF, RANK_LRN_ENT, RANK_LRN_DRRF,
       RANK_LRN_DMARG, RANK_LRN_NF };
int    rank_lrn_features(const struct pool *p, const double *s_head, const double *s_win,
                         const double *s_win2, double *f);
/* Adds (the sum of w[k] times feature k) / (RRF_K + 1) to each unit's
 * fused score above 0 (a matched unit stays above 0); w all 0: nothing.
 * Returns 0, or -1 on no memory. */
int    rank_learned(struct pool *p, const struct query *q, const double *s_head,
                    const double *s_win, const double *s_win2, const double *w);
/* The segments of p (segment.c; none: nothing added) ranked as units of
 * their own, by the question's cosine to their mean vector (w_dense) and
 * by the BM25 of their turns' counts of q's nt terms (w_unit weights,
 * the average length avg_unit scaled with the segment; w_bm25), each
 * unit adding w / (RRF_K + its segment's place + 1). 0, -1 on no memory. */
int    rank_segments(struct pool *p, int nt, const double *w_unit, double avg_unit,
                     double w_dense, double w_bm25);
/* BM25 of counts tf[nt] in a text of dl tokens, term weights w. */
double rank_bm25(const double *tf, int nt, double dl, double avgdl, const double *w);
/* Its parts, for a caller whose counts are not doubles (gather's pruning
 * scores every match): the length's part of a text of dl tokens, and one
 * term's score; rank_bm25 is the sum of the terms with a count, in order. */
static inline double rank_bm25_norm(double dl, double avgdl)
{
    return BM25_K1 * (1 - BM25_B + BM25_B * dl / (avgdl > 0 ? avgdl : 1));
}
static inline double rank_bm25_term(double w, double tf, double norm)
{
    return w * tf * (BM25_K1 + 1) / (tf + norm);
}
/* BM25F with a second field x[nt] (a named speaker, rank.c SPK_FIELD)
 * that is not length-normalised: tf / norm + x, saturated once. With x
 * all 0 it is rank_bm25. */
double rank_bm25f(const double *tf, const double *x, int nt, double dl, double avgdl,
                  const double *w);
void build_units(struct pool *p, int raw_rounds);
/* dense may be NULL (keyword only: the ranking is exactly the keyword
 * pipeline's). Both return 0, or -1 on no memory (scores then unusable). */
int  rank_default(struct pool *p, struct query *q, int use_time, const struct dense_result *dense);
int  rank_raw_bm25(struct pool *p, struct query *q);
/* The one speaker of the pool's turns the question names (a word of the
 * speaker's name among q's terms, as rank_default counts it): 1 with
 * *name (the pool's string), 0 when none or more than one is named, -1 on
 * no memory. */
int  rank_named_speaker(const struct pool *p, const struct query *q, const char **name);
/* Messages first..last of unit u with up to `span` units on each side of
 * it in the same session (its window). */
void unit_window(const struct pool *p, int u, int span, int *first, int *last);
/* unitrank.c (issue 23 step (c)): one session's
 * keyword scores from its unit row, without its turns. A match: its
 * message id, length and counts (nt). */
struct store_unit;
struct unit_scores {
    double   s_head, s_round, s_win, s_win2;   /* rank.c score_units' four */
    uint64_t has;                             /* bit t: some turn holds term t */
};
/* The units us[nu] of one session's row (flagged STORE_UNITS_IDS_RISE;
 * dialog: flagged STORE_UNITS_DIALOG) and its matches mt[nmt] by row,
 * each a turn of the session, mu[i] match i's unit (us[0] being unit
 * ubase: a pool's pool_units.munit), or mu NULL: each found by
 * store_unit_of. Into out[nu] each unit's scores as
 * score_units computes them over the turns (spk none, the same weights and
 * averages), into s_reply[nmt] a reply's own BM25 (its s_msg; 0 for a
 * head, or in a unit without a term). tfu: nu * nt scratch (or more). 0,
 * or -1 when
 * a match is before the first unit or not in row order. */
int rank_session_units(const struct store_unit *us, int nu, int dialog,
                       const struct unit_match *mt, const int *mu, int ubase, int nmt, int nt,
                       const double *w_msg, const double *w_unit, double avg_msg,
                       double avg_unit, double *tfu, struct unit_scores *out, double *s_reply);
/* Every unit's four scores (and its head's and the matched replies' own
 * BM25, into p->pu) of a pool gathered over unit rows, by
 * rank_session_units a session: rank_default's score_units for it. Every
 * unit's score and ord_bonus are reset, as score_units does. The four
 * arrays' pages are faulted in here, each thread its units' (os_populate),
 * and fill[0..nfill) (the caller's next scratch) half by each. 0, or -1 on
 * no memory. */
int rank_pool_units(struct pool *p, int nt, const double *w_msg, const double *w_unit,
                    double avg_msg, double avg_unit, double *s_head, double *s_round,
                    double *s_win, double *s_win2, void *fill, size_t nfill);
/* Whether each unit's head (its time, else the session's start) lies in
 * [from, to): score_units' in_range for a question with a period, without
 * the turns' events (TIME_EVENTS: a question whose period the events table
 * speaks of needs its turns). */
void rank_session_units_time(const struct store_unit *us, int nu, int64_t started_at,
                             int64_t from, int64_t to, int *in_range);
/* Test entry to rank.c's own scores of every unit of p over its turns
 * (unit_terms, score_units; spk none; in_range with use_time), the
 * reference of rank_session_units and rank_session_units_time. */
void rank_unit_scores(struct pool *p, const struct query *q, int use_time, const double *w_msg,
                      const double *w_unit, double avg_msg, double avg_unit, uint64_t *has,
                      double *s_head, double *s_round, double *s_win, double *s_win2);
/* Units in rank order, computed once when the ranking is final (the
 * pool owns it). The units at score 0 (with no score below 0) come last
 * and every reader stops at them, so their order by time is left for
 * units_rank_all: until then they are in pool order with rank -1. */
const int *units_by_rank(struct pool *p);
/* units_by_rank with the units at score 0 ordered and ranked too (for a
 * reader of the rank of any unit). 0, or -1 on no memory. */
int units_rank_all(struct pool *p);

/* gate.c: the share of the question's IDF weight the best of the top
 * units holds (0..1), and that weight. Needs rank_default's IDFs. */
void recall_gate(struct pool *p, const struct query *q, double *share, double *weight);
/* With dense hits (issue 16, the hybrid hook): share and weight (recall_
 * gate's) raised to what the units the words alone rank best hold
 * (pool.s_words: dense ranks bring up units that share few of the
 * question's words, and push down the ones keyword's gate was tuned on),
 * and into *agree the share over the top units that hold one of the
 * GATE_DENSE_AGREE best dense hits (where the two rankings agree; 0 when
 * none does). */
void recall_gate_dense(struct pool *p, const struct query *q, double *share, double *weight,
                       double *agree);
/* The gate's rule on the words (cairn_inject_gate, and recall.c's check
 * before packing): GATE_PASS, or why not. */
enum { GATE_PASS, GATE_SHARE_LOW, GATE_COMMON_ONLY, GATE_DENSE_DISAGREE };
int gate_words(const struct cairn_recall *r);
/* Whether the best cosine opens the gate alone: at the model's
 * gate_cosine, with a lead of GATE_COS_Z over the other hits. */
int gate_cosine_opens(const struct cairn_recall *r);
/* The IDF weight (idf_msg) of the question's terms that unit u and its
 * window (SPAN_DIALOG or SPAN_UA units each side) hold, each counted once. */
double unit_weight(const struct pool *p, const struct query *q, const struct runit *u);
/* The relative cut: share times the best weight among units that scored
 * (0 when share is 0 or nothing matched a word). */
double recall_cut(struct pool *p, const struct query *q, double share);
/* 1 when unit u gets no budget under the cut (recall_cut's value): it
 * holds less than that weight and none of the best CUT_DENSE_KEEP dense
 * hits. */
int below_cut(const struct pool *p, const struct query *q, const struct runit *u, double cut);

/* pack.c: where pack reads the messages it tries (ext_id, length, text;
 * see store/recall_read.h), in batches: the store, or memory in tests.
 * Each returns CAIRN_OK or an error, and fills what it could. */
struct pack_src {
    int (*meta)(void *arg, struct store_msg_text *v, int n);
    int (*text)(void *arg, struct store_msg_text *v, int n, size_t max);
    void *arg;
    /* The setting recall.reply_lane as given (NULL: the default share). */
    const char *reply_lane;
    /* How many times FETCH_BATCH messages a read asks for (0 or 1: once):
     * more where each read is a round trip (store_read_ahead). */
    int ahead;
};
struct pack_src pack_src_store(struct cairn *h);
/* The first pass's order with session spread (policy.h, PACK_SPREAD_*):
 * the first `top` units of ord that matched, taken greedily by score
 * times decay^k (k: units of their session already taken beyond
 * `nfree`, at most 1 with `step`), then the rest of ord. A new array of
 * p->nu units (the caller frees it), or NULL: out of memory. */
int *pack_spread_order(const struct pool *p, const int *ord, int top, double decay, int nfree,
                       int step);
/* What a session's header costs in the packed text (pack.c: its line,
 * the blank line and a gap mark), and the least that can be from its
 * opening alone (never more than the cost). */
int pack_header_cost(const struct pool *p, int si);
int pack_header_floor(const struct pool *p, int si);
/* The least floor of any session whose time has a four-digit year in any
 * zone, or 0 for si's when it has none (exact33: try_add refuses on it
 * before writing the stamp); never above pack_header_floor. */
int pack_header_least(const struct pool *p, int si);
/* The reply lane's order (pack.c): the assistant messages that match
 * best first, then -1 (one place a reply); with limit > 0 only the places the
 * first `limit` of its fused order fill are computed and the rest of its
 * replies' places are PACK_LANE_LATER (the same order as limit 0 up to
 * them). A new array (the caller frees it), or NULL: out of memory. */
#define PACK_LANE_LATER (-2)
int *pack_replies_by_score(struct pool *p, int every, int limit);
/* The same, its (key, entry) pairs in scratch[0..bytes) when they fit
 * there (8-byte aligned; its bytes are overwritten), else in a block of
 * their own: the same order either way. */
int *pack_replies_in(struct pool *p, int every, int limit, void *scratch, size_t bytes);
/* How many times pack_replies_by_score took its first places without the
 * whole own order (lane_bounded): for the tests, which must reach it. */
long pack_lane_bounded_runs(void);
/* Chooses, reads and renders into r (text, tokens, items borrowing from
 * the pool). CAIRN_NOMEM with no message set (the caller sets it). */
int pack(const struct pack_src *src, struct pool *p, struct query *q,
         const struct cairn_recall_opts *o, int raw, struct cairn_recall *r);
/* An excerpt of s[0..n) within max_tokens: the opening (the passages
 * from the start that fit in lead tokens, at least the first when it is
 * short) and the passages closest to q (malloc'd; NULL on no memory). */
char *pack_excerpt(const char *s, size_t n, const struct query *q, int max_tokens, int lead,
                   int tail);

/* memories.c: the explicit memories a recall may show (docs/MEMORIES.md). */
struct rmem {
    int64_t  id;
    char    *type, *text, *scope;
    int64_t  created, updated;
    int64_t *contra;       /* live memories tied to it by `contradicts` */
    int      ncontra;
    double   score;        /* BM25 over the memories, IDF over memories and messages */
    double   cover;        /* share of the question's weight it holds (0..1) */
    int      in_range;     /* created or changed in the question's period */
    int      pass;         /* above the floor (MEM_FLOOR), or in range for a
                            * question about a period */
    int      picked;       /* 0 no, 1 whole, 2 cut to fit */
    int      rank;         /* place among the memories, 0 = best */
    int      cut_bytes;    /* picked == 2: the bytes of text kept */
    float   *vec;          /* its vector of the text it has (vmodel), or NULL */
    int      dim;
    char    *vmodel;
    double   cos;          /* cosine with the question (has_cos) */
    int      has_cos;
    double   fused;        /* reciprocal-rank fusion of BM25 and cosine */
};
struct mem_pool {
    struct rmem *v;
    int n, cap;
    int *order;            /* picked memories in text order */
    int norder;
};
/* Reads the live memories of o->project's scope and the global ones
 * (store/recall_read.h), at most MEM_SCAN_MAX, with the vectors made from
 * their present text. */
int  mem_load(struct cairn *h, const struct cairn_recall_opts *o, struct mem_pool *mp);
/* Appends one memory (tests build pools by hand); contra "7,9" or "". */
int  mem_push(struct mem_pool *mp, int64_t id, const char *type, const char *text,
              const char *scope, int64_t created, int64_t updated, const char *contra);
/* Gives the last memory pushed a vector v[dim] of model. -1 on no memory. */
int  mem_push_vec(struct mem_pool *mp, const char *model, const float *v, int dim);
/* 1 when some memory has a vector (worth the question's). */
int  mem_any_vec(const struct mem_pool *mp);
void mem_pool_free(struct mem_pool *mp);
/* Scores every memory against q: BM25 with IDFs over the messages in p's
 * scope (total_msgs, the terms' df_msg) and the memories together, and
 * the cosine with qv[qdim] of model (qv NULL: none) for those with a
 * vector of that model; sets cover, in_range, pass and the ranks (by
 * reciprocal-rank fusion of the two). -1 on no memory. */
int  mem_score(struct mem_pool *mp, const struct query *q, const struct pool *p, int use_time,
               const float *qv, int qdim, const char *model);
/* Picks the memories that pass, best first, each contradicting partner
 * right after it, within MEM_SHARE of budget (and MEM_MAX_ITEMS), none of
 * those listed as "\tmemory:ID" in exclude; renders them into b (empty
 * when none). Returns the tokens b costs, or -1 on no memory. */
int  mem_pack(struct mem_pool *mp, int budget, const char *exclude, struct buf *b);
/* Drops the last picked memory and renders the rest into b again. */
int  mem_unpick_last(struct mem_pool *mp, struct buf *b);

/* notes.c: sections of Markdown vaults (docs/VAULTS.md). */
struct rnote {
    int64_t  sec, doc;
    int64_t  first;        /* its section's first piece (md_split): sec if whole */
    int      ntok;
    uint16_t *tf;          /* per query term: a row of the pool's tf_all, or
                            * its tf_zero (a section that matched no term) */
    double   score;        /* BM25 of the section, IDF over sections */
    double   share;        /* of the question's IDF weight it holds (0..1) */
    double   weight;       /* that weight in the gate's units (gate.c) */
    double   held;         /* the IDF weight its page holds (every section
                            * and the card: title, aliases, tags, path) */
    double   gheld;        /* held less the numbers the gate leaves out, an
                            * everyday word at NOTE_GATE_EVERYDAY_W */
    double   gfull;        /* gheld with every word whole: the cosine rule's */
    double   pheld;        /* gheld of its page: each word as much as the
                            * page's section (or card) holding most of it */
    int      card;         /* the page's card (line 0): found, never shown */
    int      oncard;       /* its page's card holds a content word of the question */
    int      named;        /* the question names its page (title or alias) */
    int      part;         /* a word of its page's name is a rare word of the question */
    int      pass;         /* shown: named, or share above NOTE_FLOOR */
    int      gate;         /* passes the injection gate alone */
    int      rank;
    int      picked;       /* 0 no, 1 whole, 2 excerpt */
    char    *shown;        /* the text rendered for it (picked) */
    char    *vault, *path, *title, *heading;
    int      line;
    int64_t  mtime;        /* s */
    int      whole;        /* a whole file (the files-bm25 baseline), doc only */
    int      has_cos;      /* the section has a vector of the question's model */
    double   cos;          /* its cosine with the question */
    double   fused;        /* the order with vectors: share + NOTE_W_DENSE x cosine */
    int      linked;       /* lifted: its page links a top page or is linked from one */
};
struct note_pool {
    struct rnote *v;
    int n, cap;
    /* the matches' counts, nt a match in match order, apart from v: the
     * hook's one-shot process faults in each fresh page it touches, and
     * RECALL_MAX_TERMS counts in every note were 128 of its 296 bytes */
    uint16_t *tf_all;
    int nt;
    uint16_t tf_zero[RECALL_MAX_TERMS];
    int64_t nsec, tok;     /* over every vault (a cut section's pieces each) */
    int64_t nwhole;        /* sections, a cut one once: for IDF */
    int *order;            /* picked notes in text order */
    int norder;
    int dense;             /* the sections' vectors took part */
    double total;          /* the question's IDF weight (its content words) */
    double cos_mean, cos_sd; /* the question's cosines with every section (the
                              * gate's z-score, NOTE_GATE_COS_Z); 0 keyword */
};
/* Scores the sections that match q's terms, and the pages q names: reads
 * the store (store/vault.h); nothing at all when no vault has a section.
 * files: the baseline instead (files-bm25, CAIRN_METHOD_RAW_BM25): plain
 * BM25 over whole files, IDF over files, every file that matches passes. */
/* The question's vector for the sections' (NULL qv: keywords only). */
struct notes_dense {
    const float *qv;
    int          dim;
    const char  *model;
    double       gate_cosine;   /* the model's (0: no cosine gate) */
};
/* 1 in *want when some section has a vector (then the question's is worth
 * making). */
int  notes_want_dense(struct cairn *h, int *want);
/* nd: the question's vector (NULL: keywords only, the ranking exactly as
 * without vectors). */
int  notes_rank(struct cairn *h, const struct query *q, int files, const struct notes_dense *nd,
                struct note_pool *np);
/* The link lift (notes_rank calls it with NOTE_LINK_LIFT when that is
 * above 0): sections of the pages the NOTE_LINK_TOP best pages link to, or
 * that link to them, weigh 1 + w times what they hold, for the order and
 * the floor, not the gate; np re-sorted (ranks not renumbered). */
int  notes_link_lift(struct cairn *h, struct note_pool *np, double w);
/* Picks the notes that pass, best first, at most NOTE_MAX_ITEMS and
 * NOTE_PER_DOC of a page, within cap tokens, none listed as "\tnote:..."
 * in exclude, each cut to its share of what is left (NOTE_PACK_EVEN, else
 * 1/NOTE_PACK_SPLIT) while others wait; reads their text and renders them
 * into b. Returns the tokens
 * b costs, or -1 (CAIRN_* in *rc, with the handle's message). */
int  notes_pack(struct cairn *h, struct note_pool *np, const struct query *q, int cap,
                const char *exclude, struct buf *b, int *rc);
int  notes_unpick_last(struct note_pool *np, struct buf *b);
/* The item of the j-th picked note (its strings malloc'd). -1 on no memory. */
int  note_item(const struct note_pool *np, int j, struct cairn_recall_item *it);
void note_pool_free(struct note_pool *np);

#endif
