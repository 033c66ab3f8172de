/*
 * policy.h: every tuned constant of the ranking, in one place, each with
 * what it was measured on. A change to any of them is a new ranking
 * policy: cairn_policy_hash() (policy.c) hashes their names and values,
 * and every `cairn eval` report and `cairn --version` prints that hash,
 * so a figure can be matched to the policy that produced it.
 *
 * A constant added here goes into CAIRN_POLICY below too (test_policy
 * checks the table against this file).
 */
#ifndef CAIRN_RECALL_POLICY_H
#define CAIRN_RECALL_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "store/vectors.h"      /* VEC_DEFAULT_PIECES: what gets embedded */
#include "text/markdown.h"       /* NOTE_SPLIT_TOK: how the vault indexer cuts sections */

/* ---- BM25 and fusion (rank.c) ---- */

#define BM25_K1 1.2
#define BM25_B  0.75
#define RRF_K   60.0

/* A question's word written with one leading '-' ("the -vec file next to
 * the store", "-exec") is the word for the question's terms (query.c):
 * the index holds "-vec" whole only where the text writes it apart, and
 * "vec" in every "STORE-vec", so the whole form found 1 section of the
 * dev vault and its IDF was missing from every section's share (dev
 * query q012, docs/VAULTS.md). Only before a word of at least
 * QUERY_DASH_MIN bytes: "-p", "-it" stay flags. A run of two ("--budget")
 * is a long option, kept whole. 0: off. */
#define QUERY_DASH_MIN  3

/*
 * Weights of the fused rankings, in RRF units, measured with `cairn eval`
 * on LoCoMo dev (chats between people) and BEAM dev (user-assistant):
 *  - windows matter most between people, where a turn is one short line:
 *    a window of 2 turns each side at 1.6 plus one of 5 at 1.0 took LoCoMo
 *    dev from 75.3/86.7% to 82.0/91.2% at 2k/8k;
 *  - in user-assistant chats a unit is already a round with its replies:
 *    one round each side at 0.8, no wide window (BEAM dev moved within
 *    one question either way).
 */
#define W_HEAD          1.0
#define W_ROUND         0.6
#define W_WIN_DIALOG    1.6
#define SPAN_DIALOG     2
#define W_WIN2_DIALOG   1.0
#define SPAN2_DIALOG    5
#define W_WIN_UA        0.8
#define SPAN_UA         1
#define W_TIME          1.0
/* Issue 16, event dates (store/events.c): 1, a unit counts as inside the
 * question's period when one of its turns speaks of a date in it
 * ("yesterday" in a turn of 5 Dec, for "what did Sam do on December 4?"),
 * as well as when it was said then; 0, only its own time counts. */
#define TIME_EVENTS     1
/* Vague words ("lately", "recently", "these days", 最近) name no period:
 * a unit of the last 14 days gets this share of W_TIME (0: the word is
 * only dropped from the terms), never the hard range that pushed the
 * evidence of "why had Evan been going through a tough time lately?" from
 * rank 3 to 95. A question about nothing but the recent past ("what did
 * we do lately?") still lists the period. */
#define W_TIME_VAGUE    0.5
/* A question about the first or the last time something happened
 * (query_ordinal: "the very first thing I asked", "what did we last
 * decide"): of the ORD_TOP best units, the earliest (latest) gets
 * W_ORDINAL rank-1 shares, the next half that, and so on (rank.c
 * order_boost); ORD_BY_DAY 1: for "the first/last day (sitting) we...",
 * the units of one session share its place and the words order them. 0
 * (ORD_TOP or W_ORDINAL): off. devmem dev, cairn, all evidence at
 * 1k/2k/4k/8k (spans the same on the odd half), tuned on odd question
 * ids: off 82.5 / 92.5 / 95.0 / 95.0; top 30 or 40: no change (the
 * evidence of "the very first thing I asked" ranks 52nd); top 60 and 100
 * (w 2, 4) alike: by turn w 2 85.0 / 97.5 / 97.5 / 97.5, w 4 and 8
 * 87.5 / 97.5 / 97.5 / 97.5; by day w 2 and 4 85.0 / 95.0 / 97.5 / 97.5.
 * Even ids, held
 * out: off 72.5 / 77.5 / 90.0 / 97.5; by turn w 2 the same, w 4 8k 95.0
 * ("on the last day we worked on the frontend": the day's last turns
 * pushed its first out); by day w 2 (chosen) 72.5 / 77.5 / 92.5 / 97.5.
 * ORD_BY_DAY was added after that held-out question was seen, so the odd
 * half alone would pick by turn at w 4. LoCoMo, BEAM, MADial dev: the same
 * per-question results at every budget. */
#define ORD_TOP         60
#define W_ORDINAL       2.0
#define ORD_BY_DAY      1
/* A question that only names a period ("what did I do last week?"): the
 * units inside it get this, above any fused score, and come in order. */
#define W_ONLY_TIME     10.0
/* A turn by someone other than the speaker(s) the question names keeps
 * this share of its fused score (LoCoMo dev: 155 of 168 multi-hop
 * evidence turns are by the speaker the question names; 1.0 -> 0.6 gave
 * +2 points at 2k, +1.7 at 8k). Only questions that name a speaker of the
 * store are affected. */
#define SPK_OTHER       0.6
/* Ranking a turn within its session (issue 16, multi-hop; rank.c
 * rank_bm25f, len_rank), SPK_FIELD off, W_LEN_DIALOG on from 8k only
 * (below): of LoCoMo dev's multi-hop evidence
 * turns missed at 2k, 118 of 146 match the question by the named person's
 * name alone and 74% of the turns of their session ranked above them are
 * shorter (docs/ARCHITECTURE.md, "Multi-hop: ranking a turn within its
 * session").
 *  - SPK_FIELD 1: a named speaker's occurrence is a BM25F field of its own,
 *    not length-normalised. LoCoMo dev, use-lite-en, all evidence at
 *    1k/2k/4k/8k, all 760: 77.2/83.8/89.2/93.0 -> 77.5/83.8/89.3/93.2
 *    (adversarial 4k -0.9, single-hop 2k -0.5): noise.
 *  - W_LEN_DIALOG: between people, the matched units by their lead turn's
 *    length, longest first, as one more fused ranking. At every budget,
 *    0.5: tuned
 *    (conv-30, conv-42) 74.3/82.9/89.3/92.5 -> 74.3/83.6/89.3/92.5, held
 *    out 79.0/84.4/89.2/93.3 -> 78.3/84.0/88.8/93.5; with SPK_FIELD 1,
 *    all 760 76.8/84.3/89.3/93.8 (multi-hop 31.7/44.4/62.0/74.6 ->
 *    31.0/47.9/62.7/78.2) but adversarial 1k 76.8 -> 75.1 and 4k 97.5 ->
 *    96.2, and the multi-hop gain mostly the tuned half's. */
#define SPK_FIELD       0
/* The length prior gated by budget (issue 16, branch rank28): only from
 * LEN_DIALOG_MIN_BUDGET tokens, where a longer turn costs the budget
 * less. Chosen on the tuned half (conv-30, conv-42) alone, 0.1 to 1.0
 * from 4k and 8k; 0.25 from 8k: tuned 8k 92.5 -> 92.9 (1 better, 0
 * worse), held out, run once, 93.3 -> 94.0 (multi-hop 78.7 -> 81.9, 3
 * better, 0 worse), 1k-4k identical (docs/ARCHITECTURE.md, "Multi-hop:
 * a length prior from 8k"). */
#define W_LEN_DIALOG    0.25
#define LEN_DIALOG_MIN_BUDGET 8000
/* A question that is a pasted transcript ("Bart: ...\nBart: ...", two
 * lines or more headed by a short name; query.c): a unit whose lead turn
 * neither names nor is said by one of those speakers keeps this share of
 * its fused score, when some unit does. 1.0: off. */
#define LABEL_OTHER     0.4
/* Dense rankings, in RRF units, measured with `cairn eval` (use-lite-en;
 * docs/HYBRID.md has the sweeps):
 *  - between people a unit is one turn: its cosine at 1.0 took LoCoMo dev
 *    from 76.3/82.0/86.8/91.2% to 77.0/83.6/87.9/91.8% at 1k/2k/4k/8k
 *    (0.5 and 2.0 both did worse at 2k);
 *  - in user-assistant chats the replies carry what the user's short turn
 *    lacks: on BEAM dev the lead turn's cosine helps at 1k and hurts at
 *    4k/8k, the best reply piece's the reverse; 0.15 and 0.7 beat keyword
 *    at every budget (42.5/53.1/61.5/71.5 -> 44.1/54.2/63.7/73.2). */
#define W_DENSE_HEAD_DIALOG 1.0
#define W_DENSE_HEAD    0.15
#define W_DENSE_REPLY   0.7
/*
 * The second dense pass (issue 16, multi-hop; dense.c dense_feedback,
 * recall.c second_pass): between people, from DENSE_PRF_MIN tokens, the
 * question's unit vector plus DENSE_PRF_MIX times the mean unit vector of
 * the lead turns of the DENSE_PRF_TOP best units of the first ranking is
 * searched again (DENSE_TOPK, the pool's sessions), and each unit's lead
 * turn's cosine to it joins the fusion at DENSE_PRF_W (0: off). Tuned on
 * LoCoMo dev's odd conversations (use-lite-en, multi-hop at 1k/2k/4k/8k):
 * off 22.9/35.4/54.2/62.5; top 5 mix 1.0 weight 0.5 29.2/41.7/56.2/64.6,
 * weight 1.0 27.1/45.8/58.3/66.7 (weight 1.5 and top 10 or mix 0.5 no
 * better); at 1k/2k it cost single-hop 1.9 points and temporal 1.6 at 2k,
 * so it starts at 4k (single-hop there -0.7). Even conversations, held
 * out, are in docs/ARCHITECTURE.md "Multi-hop: a second dense pass".
 */
#define DENSE_PRF_TOP   5
#define DENSE_PRF_MIX   1.0
#define DENSE_PRF_W     1.0
#define DENSE_PRF_MIN   4000
/*
 * The question in the named speaker's words (issue 16, persp55; recall.c
 * persona_pass, dense.c dense_persona, query.c query_first_person): a
 * question about a person is asked in the third person ("What pets does
 * Melanie have?") and answered by that person's turns in the first ("I
 * adopted two Lab mixes"). Between people, when the question names one
 * speaker of the pool, it is rewritten in that speaker's words ("pets I
 * have"), embedded, and its unit vector plus PERSP_MIX times the
 * question's is searched in the pool's sessions (PERSP_TOPK hits); each
 * hit's cosine (only the named speaker's turns with PERSP_ONLY) is one more
 * fused ranking at PERSP_W (0: off), from PERSP_MIN tokens of budget;
 * PERSP_REPL of the question's own dense head weight goes where the pass
 * ran. Tuned on LoCoMo dev conv-30, conv-42 (use-lite-en, all evidence
 * 1k/2k/4k/8k): off 74.3/82.9/89.3/92.9, multi-hop 22.9/37.5/60.4/68.8;
 * weight 2, every budget, every turn (not only the named speaker's: that
 * cost adversarial questions 15 points at 1k), the rewritten vector alone
 * 77.5/85.4/89.6/95.0, multi-hop 25.0/52.1/64.6/77.1. Held out once
 * (conv-26, conv-41, conv-43): 79.0/84.4/89.2/94.0 -> 81.7/87.1/90.4/94.2.
 * Every variant: docs/ARCHITECTURE.md "Multi-hop: the question in the
 * speaker's words".
 */
#define PERSP_W         2.0
#define PERSP_MIX       0.0
#define PERSP_ONLY      0
#define PERSP_TOPK      100
#define PERSP_MIN       0
#define PERSP_REPL      0.0
/* A build for tuning only (make CFLAGS=-DCAIRN_PERSP_TUNE): each constant
 * read through POLICY_GET (the PERSP_X above, SEG_W_BM25 and
 * SEG_MIN_BUDGET below) comes from the environment variable CAIRN_ and its
 * name when set, so variants run without a rebuild; the shipped library
 * reads the constants. */
#ifdef CAIRN_PERSP_TUNE
double policy_tune(const char *name, double value);
#define POLICY_GET(name) policy_tune(#name, (name))
#else
#define POLICY_GET(name) (name)
#endif
/* Questions mostly in CJK script: an English-only model's vectors mean
 * little there, so dense ranks count this share; a model whose registry
 * entry says it covers CJK (multilingual-e5-small, the multilingual
 * MiniLM) keeps its full weight. Chosen, not tuned: no multilingual model
 * can be fetched on the machines the dev sets were measured on. */
#define DENSE_CJK_SHARE 0.3
#define DENSE_CJK_W     0.0
/* The entity-driven keyword pass (issue 16, multi-hop; entity.c, recall.c
 * entity_second): the lead turns of the ENT_TOP best units of the first
 * ranking are read (ENT_READ_MAX bytes each); their words of ENT_MIN_BYTES
 * bytes or more that are no stop word, not in the question and held by
 * ENT_MIN_TOP of those turns or more (at most ENT_CAND words read) are
 * searched in the scope; the ENT_TERMS that weigh most (IDF over messages
 * times the turns holding them), found in two messages or more and with
 * an IDF of ENT_MIN_IDF or more, score each unit (BM25 of its best message
 * over them): one more fused ranking at ENT_W_DIALOG between people and
 * ENT_W_UA in user-assistant chats (0: off there), from ENT_MIN tokens of
 * budget, when the second dense pass did not run (keyword recall, no
 * vectors, a CJK question, a user-assistant store). More than
 * ENT_MAX_MATCHES matches of its words skips the pass (a cost bound).
 * Tuned on LoCoMo dev's conv-30 and conv-42 (keyword), the others held
 * out: keyword all evidence at 8k, tuned 91.4 -> 92.1%, held out 91.0 ->
 * 92.1% (multi-hop 60.4 -> 64.6 and 68.1 -> 72.3%); ENT_MIN 4000 gained
 * on the tuned half and cost the held-out half's single-hop and temporal
 * questions at 4k (4 of them, multi-hop 0), so 8000 was chosen after that
 * check. In user-assistant chats it cost devmem and BEAM (ENT_W_UA 0).
 * docs/ARCHITECTURE.md, "Multi-hop: an entity-driven keyword pass", has
 * the figures and what was tried. */
#define ENT_TOP         5
#define ENT_READ_MAX    4096
#define ENT_MIN_BYTES   3
#define ENT_MIN_TOP     2
#define ENT_CAND        48
#define ENT_TERMS       4
#define ENT_MIN_IDF     2.0
#define ENT_W_DIALOG    1.0
#define ENT_W_UA        0.0
#define ENT_MIN         8000
#define ENT_MAX_MATCHES 20000

/* Topical segments (issue 16, multi-hop; segment.c, rank.c
 * rank_segments, seg_lift), their BM25 on from 8k (deep57, below), the
 * rest off: between people, in hybrid recall, from
 * SEG_MIN_BUDGET tokens, each session's turns are cut into runs on one
 * topic from their vectors (the mean of SEG_BLOCK turns before a gap
 * against SEG_BLOCK after it; a cut in a valley of that similarity
 * SEG_DEPTH deep, no segment under SEG_MIN turns). Segments are ranked as
 * units of their own, by the question's cosine to their mean vector
 * (SEG_W_DENSE) and by the BM25 of their turns (SEG_W_BM25), each unit
 * taking its segment's place; SEG_LIFT adds that share of the best fused
 * score among a unit's segment's other units. 0: off. The values below
 * are the tuned half's choice (LoCoMo dev conv-30, conv-42, use-lite-en)
 * with SEG_W_DENSE 1.0: tuned 2k/4k/8k 82.9/89.3/92.9 -> 83.6/89.6/94.6;
 * held out (conv-26, conv-41, conv-43) 84.4/89.2/94.0 -> 84.4/89.4/94.0
 * with adversarial -2.0 at 2k and 4k. The BM25 and the lift did worse
 * on the tuned half. docs/ARCHITECTURE.md, "Multi-hop: topical segments",
 * has every figure.
 * deep57, with the question in the speaker's words on (persp55): the
 * segments' BM25 alone at 1.5, from 8k only (SEG_MIN_BUDGET), where a pack
 * holds ~150-200 turns and the multi-hop evidence it misses ranks ~150th
 * to 300th. Tuned half at 8k 95.0 -> 96.1% (3 better, 0 worse; multi-hop
 * 77.1 -> 83.3); held out, run once, 94.2 -> 94.6 (7 / 5; multi-hop 78.7
 * -> 81.9, temporal 100 -> 98.9: one question); 1k-4k identical.
 * docs/ARCHITECTURE.md, "Multi-hop at 8k". SEG_W_BM25 0: off,
 * main's bytes. In the tuning build (CAIRN_PERSP_TUNE) CAIRN_SEG_W_BM25
 * and CAIRN_SEG_MIN_BUDGET override the two. */
#define SEG_W_DENSE     0.0
#define SEG_W_BM25      1.5
#define SEG_LIFT        0.0
#define SEG_BLOCK       5
#define SEG_DEPTH       0.2
#define SEG_MIN         3
#define SEG_MIN_BUDGET  8000

/* The learned fusion (issue 16, branch rank49; rank.c rank_learned),
 * off: between people, each matched unit's fused score gains (the sum of
 * LRN_W_x times feature x) / (RRF_K + 1), the features each over the
 * question's best (recall.h RANK_LRN_*): its lead turn's BM25 (HEAD), its
 * windows' (WIN, WIN2), its cosine (COS, and its z-score among the dense
 * hits, COSZ), its session's best lead-turn BM25 (SESS), its length (LEN:
 * ntok / (ntok + 20)), the second passes' scores (PRF, ENT), its place
 * among the dense hits (DRRF) and that times how far the best hit stands
 * out (DMARG: a per-question weight on dense, its z-score less
 * LRN_MARG_MID, the tuned half's median). All 0: today's RRF. Tuned on
 * LoCoMo dev conv-30 and conv-42, use-lite-en, all evidence at
 * 1k/2k/4k/8k (74.3/82.9/89.3/92.9): a logistic pairwise fit of the
 * features cost the tuned half 2-6 points at 2k (the ranks it fits ignore
 * a turn's cost in the budget); a coordinate search of the weights on the
 * tuned half's own eval chose WIN2 0.5, SESS 1, LEN 1, PRF 0.25, DMARG 1:
 * tuned 76.1/83.6/90.4/94.3, held out (conv-26, -41, -43) 79.0/84.4/89.2/
 * 94.0 -> 78.1/84.6/89.4/93.3 (multi-hop 8k 81.9 -> 77.7, adversarial 1k
 * 74.3 -> 70.4). docs/ARCHITECTURE.md, "Multi-hop: a learned fusion",
 * has every figure. */
#define LRN_W_HEAD      0.0
#define LRN_W_WIN       0.0
#define LRN_W_WIN2      0.0
#define LRN_W_COS       0.0
#define LRN_W_COSZ      0.0
#define LRN_W_SESS      0.0
#define LRN_W_LEN       0.0
#define LRN_W_PRF       0.0
#define LRN_W_ENT       0.0
#define LRN_W_DRRF      0.0
#define LRN_W_DMARG     0.0
#define LRN_MARG_MID    3.0

/* ---- the relevance gate (gate.c, the prompt hook) ---- */

/* How many of the best units are looked at. */
#define GATE_TOP 3
/*
 * Gate thresholds (see cairn.h), measured with `cairn eval inject` at 1,000
 * tokens (fires with memory / fires without / all evidence when it fires):
 *   LoCoMo dev 760 q:  share 0.5 weight 1.0: 53.8 / 28.2 / 86.3%
 *                      share 0.6 weight 1.5: 33.3 /  7.9 / 93.7%  (chosen)
 *                      share 0.7 weight 2.0: 15.8 /  2.0 / 95.8%
 *   BEAM dev 179 q:    share 0.6 weight 1.5: 49.7 / 40.8 / 55.1%
 * (BEAM's "without" store keeps the chat's other sessions on the same
 * project, so firing there is often still useful.) Injection must be
 * confident: a wrong injection costs the user more than a missed one, who
 * still has the recall tool.
 */
#define CAIRN_GATE_SHARE  0.6
#define CAIRN_GATE_WEIGHT 1.5
/*
 * A question term written like code (ECONNRESET, keepAlive, snake_case,
 * x86_64; gate.c) weighs this many times its IDF in the gate: in a coding
 * history "how did we fix the ECONNRESET error last week?" holds one rare
 * term, and one rare term alone is under 1.0 of CAIRN_GATE_WEIGHT's units
 * (idf of one message in N is below log(N + 2)), so the gate refused the
 * question its memory answers whole ("only common words are shared").
 * `cairn eval inject`, keyword, 1,000 tokens (fires with memory / fires
 * without / all evidence when it fires), weight 1.0 -> 2.0:
 *   LoCoMo dev 760 q:  33.3 / 7.9 / 93.7%  ->  33.7 / 8.3 / 93.4%
 *   BEAM dev 179 q:    49.7 / 40.8 / 55.1% ->  49.7 / 40.8 / 55.1%
 *   devmem dev 80 q:   61.2 / 46.2 / 57.1% ->  62.5 / 45.0 / 58.0%
 * (devmem: real coding-assistant histories; tests/t/t0217-hook-gate-code.sh
 * has the ECONNRESET case on a made-up one.)
 */
#define GATE_CODE_W 2.0
/* The relative cut (cairn_recall_opts.min_rel_score, gate.c) judges words;
 * a unit holding one of this many best dense hits passes it whatever its
 * words. At cut 0.2, 4000 tokens: 5 keeps a one-fact MCP recall on a coding
 * store at 494 tokens with vectors; 15: 1204 tokens; all 50: 3268. (Chats
 * between people are not cut at all: MADial en dev lost 31 points to it
 * with 5 kept, 21 with 15; docs/MCP.md.) */
#define CUT_DENSE_KEEP 5
/*
 * The best cosine, when dense recall took part (issue: "the best cosine
 * match as part of the gate"), opens the gate at the model's gate_cosine
 * (its registry entry, embed/registry.c; struct model_policy below). With
 * use-lite-en it barely tells a question with its answer in memory from
 * one without (LoCoMo dev cosine deciles 0.45..0.65 with, 0.43..0.62
 * without); at 0.7 it adds 2.6 points of firing with memory and 1.2
 * without (35.0 / 9.2%), at 0.6 it would add 16.7 / 11.5: use-lite-en's
 * entry says 0.7. Other models put unrelated pairs elsewhere (e5 near
 * 0.7), and nobody measured them here: their entries say 0, cosine opens
 * nothing. The prompt hook asks for keyword recall unless
 * CAIRN_INJECT_DENSE=1, so by default it is unused. Since gate55 the
 * cosine also needs a lead of GATE_COS_Z over the question's other hits
 * (above).
 */
/*
 * The gate with dense hits (issue 16, "hybrid in the hook"; gate55,
 * docs/HYBRID.md "The prompt hook"). Dense ranks push down units keyword's
 * gate was tuned on and bring up units that share few of the question's
 * words, so recall_gate_dense (gate.c) judges the units the words alone
 * rank best too; judging more units passes more weak matches, with memory
 * and without, so a match under GATE_DENSE_WEIGHT passes only when one of
 * the top units holding one of the GATE_DENSE_AGREE best dense hits holds
 * GATE_AGREE_SHARE of the question. Tuned on LoCoMo dev less conv-26, -41,
 * -43 (280 q; fires with memory / without / all evidence when it fires;
 * the middle rows simulated from main's hybrid run, `eval inject --out`):
 *   keyword                       97 / 26 / 88 of 97
 *   hybrid, main's gate          101 / 27 / 93 of 101
 *   words' units judged too      117 / 38 / 108 of 117 (with the cosine)
 *   this gate, as built           98 / 23 / 93 of 98
 * held out (480 q): keyword 159 / 37 / 151, main 168 / 44 / 158, this gate
 * 162 / 34 / 152; devmem dev (80 q): 52 / 38 / 38, 54 / 41 / 42, 54 / 39 /
 * 42 (docs/HYBRID.md, "A gate for dense ranks").
 */
#define GATE_DENSE_WEIGHT 1.75
#define GATE_DENSE_AGREE  5
#define GATE_AGREE_SHARE  0.5
/* The best cosine opens the gate (at the model's gate_cosine, below) only
 * GATE_COS_Z standard deviations above the question's other dense hits
 * (at least GATE_COS_Z_HITS of them; recall.c cosine_lead): on a store of
 * one project every message is close to every question (best cosines
 * 0.86-0.92 with the answer forgotten). Simulated with the rule above,
 * devmem dev's tuned half (40 q): no lead needed 31 / 24 (with / without
 * memory), 3.0: 29 / 21, 3.5: 28 / 21, 4.0: 28 / 20; LoCoMo's tuned part
 * 98 / 24 at 0 and 3.0, 98 / 23 at 3.5, 96 / 23 at 4.0. As the only
 * opening (no cosine floor) the lead told memory from none no better than
 * the cosine (LoCoMo tuned, z >= 4.5: 120 / 52 with the words' rule). */
#define GATE_COS_Z       3.5
#define GATE_COS_Z_HITS  10
/* Questions mostly in CJK script give an English-only model's cosine no
 * say in the gate (as in rank.c's fusion; recall.c); a model whose entry
 * says it covers CJK keeps it. */
#define RECALL_GATE_CJK       0.3

/* ---- dense candidates (dense.c) ---- */

/* Messages the dense ranking hands to fusion: RRF (k = 60) gives rank 100
 * less than a third of rank 1's weight; deeper ranks only grow the pool. */
#define DENSE_TOPK        50
/* Pieces kept per scan, before they are grouped into messages. */
#define DENSE_PIECES_MULT 4

/* ---- pruning on big stores, CAIRN_RECALL_FAST only (gather.c) ---- */

#define GATHER_PRUNE_MSGS 10000
#define GATHER_KEEP       500

/* Term tiers (recall/tier.c, schema 22; the pruned path only): a word in
 * at least TIER_DF_MIN messages when `cairn reindex --tiers` runs gets a
 * tier, every match of it in the TIER_SESS sessions whose best message
 * scores highest on it alone, and the pruned recall reads that instead of
 * its whole posting list (a walk of ~1.3 us a match: 1.3 ms at this df).
 * TIER_SESS above GATHER_KEEP: a question's other words and the store's
 * average length at recall move a session across the line. TIER_ON 0
 * (or recall.tier "0", CAIRN_RECALL_TIER=0) walks every word as before. */
#define TIER_ON      1
#define TIER_DF_MIN  1000
#define TIER_SESS    1000
/* Tiers kept by the write paths (store/tier_keep.c, schema 23): a new
 * message's match of a tiered word enters its tier when it scores, alone,
 * at least the build's last kept session (lengths against the build's
 * average) or its session is in the tier already; df and upto follow.
 * TIER_KEEP 0: a build leaves them as built (the tail walked), as
 * "store.tier_keep" "0" (CAIRN_TIER_KEEP=0) does for one handle. */
#define TIER_KEEP    1
/* Built without a manual step: `cairn add` and `cairn import` (not the
 * hooks, whose time is the user's) build the tiers after their last
 * commit once the store holds TIER_AUTO_MSGS messages (where the pruned
 * recall starts, GATHER_PRUNE_MSGS) and none were built, or it has grown
 * TIER_AUTO_GROW times since the last build (which refreshes the cuts,
 * the average length and the words that became common since): at 2.0
 * the builds of a growing store cost at most twice the last one, ~0.1-0.2
 * ms of CPU a message (100,000 on a loaded machine: 12-18 s; bench/README
 * "Term tiers kept"). cairn_tier_due says when. */
#define TIER_AUTO_MSGS 10000
#define TIER_AUTO_GROW 2.0
/* The commonest word is read from its tier only when its df is at least
 * this times the others' (their df, else TIER_DF_MIN). At 1.0 walking the
 * others with its counts cost more than a plain walk (a million messages,
 * "the migration that failed on the staging database": 216 -> 289 ms),
 * and the sessions the others bring in lack its matches outside its tier:
 * 100k store, 70 bench questions x 2 budgets, odd / even halves, answers
 * identical to the walk's 51/70, 48/70 at 1.0 and 69/70, 67/70 at 3.0 (of
 * the exact answer's items 90.4 / 89.5% kept at 1.0, 92.2 / 91.5% at 3.0,
 * 92.2 / 92.0% by the walk). */
#define TIER_SHARE   3.0

/* ---- packing (pack.c) ---- */

/* How many of the best rounds keep their replies in the first pass. On
 * BEAM dev (user-assistant chats with long code replies) 1 beat 2 and 3
 * at every budget: replies are long, and 78% of the evidence there is in
 * what the user said. Leftover budget makes more rounds whole later. */
#define PACK_FULL_ROUNDS 1

/* Session spread (issue 16, multi-hop; `pack_spread_order` in pack.c): between
 * people, from PACK_SPREAD_MIN to below PACK_SPREAD_MAX tokens, the first
 * pass takes the best PACK_SPREAD_TOP units in the order of their score
 * times PACK_SPREAD_DECAY for each unit of their session already taken
 * beyond the first PACK_SPREAD_FREE (PACK_SPREAD_STEP 1: one factor for
 * all of them): a session the pack already holds gives way to the best
 * unit of one it does not. 1.0: off, as shipped. Tuned on LoCoMo dev
 * conv-30 and conv-42, conv-26/41/43 held out (cairn hybrid, all
 * evidence at 1k/2k/4k/8k): no setting gained on both halves. Step 0.9
 * after 1 unit: tuned 74.3/82.9/89.3/92.5 -> 74.6/82.1/89.3/92.5%
 * (multi-hop 1k 22.9 -> 29.2), held out 79.0/84.4/89.2/93.3 ->
 * 77.7/84.0/89.0/93.3% (multi-hop 1k 36.2 -> 33.0); graded 0.93 a unit:
 * all 760 77.2/83.8 -> 74.6/81.7%. Why: the missed multi-hop turns rank
 * deep inside their own sessions, so a session's best unit is rarely the
 * evidence (docs/ARCHITECTURE.md, "Multi-hop: session spread"). */
#define PACK_SPREAD_DECAY 1.0
#define PACK_SPREAD_FREE  1
#define PACK_SPREAD_STEP  1
#define PACK_SPREAD_TOP   300
#define PACK_SPREAD_MIN   1000
#define PACK_SPREAD_MAX   8000

/* A round whose replies run longer than this many messages (an agent's
 * steps after one prompt: Claude Code writes one message per step) is
 * split: each reply after the first leads a unit of its own. No dev set
 * of people's chats or of one-reply rounds has such runs, so their
 * figures do not move; set from the Claude Code sample sessions. */
#define UNIT_MAX_REPLIES 4
/* Caps on one turn and one reply in the first pass, as shares of the
 * budget (floors 200 and 150 tokens): a pasted log or a long reply is cut
 * to its opening and the passages closest to the question. Measured on
 * BEAM dev: 0.25/0.17 gave 36/44/51/64% at 1k/2k/4k/8k, 0.06/0.05 gives
 * 43/53/62/72%; LoCoMo (short turns) is unchanged. */
#define PACK_CAP_TURN  0.06
#define PACK_CAP_REPLY 0.05
#define PACK_FLOOR_TURN  200
#define PACK_FLOOR_REPLY 150
/* The reply lane (a share of the budget kept for the replies that match
 * best on their own, from 4k tokens on): measured on BEAM dev it cost 3 to
 * 6 points at 4k and 8k, so it is off unless CAIRN_REPLY_LANE sets a share. */
#define REPLY_LANE_SHARE 0.0
#define REPLY_LANE_MIN   4000

/* The lane's share for a question about what the assistant said or did
 * (query_asks_reply: "how did we fix...", "what did you suggest..."), at
 * every budget. Tuned on devmem dev (80 questions on real coding-assistant
 * histories, 38 answered in a reply). Replies by their own BM25 only,
 * shares 0.3 / 0.5 / 0.7 gave answer spans at 2k / 8k of 65.0 / 87.5,
 * 67.5 / 88.8, 68.8 / 88.8; with the round's rank fused in (W_REPLY_ROUND),
 * 0.5 gave 70.0 / 90.0 and 0.6 70.0 / 91.2 (the shipped figures,
 * docs/results/devmem.md). On BEAM dev the cue fires for 7 of 179
 * questions; user-only evidence moved by one question at 1k. */
#define REPLY_CUE_SHARE  0.6
/* The weight of a reply's round rank beside its own BM25 rank when the
 * lane orders replies (pack.c pack_replies_by_score). */
#define W_REPLY_ROUND    1.0
/*
 * The lane's first replies are this many that match the question best on
 * their own (BM25 of the message alone), before the fused order above: a
 * coding assistant's answer ("the correct attribute is
 * `models.DEFAULT_MODEL_NAME`") often follows a user turn that pasted a
 * traceback and shares few of the question's words, so its round ranks
 * 20th and the fused order put it 9th in the lane, past what 2k holds,
 * while its own BM25 was the best of all replies. devmem dev at 2k, of
 * the 5 questions the lane missed, the evidence reply was the best alone
 * in 1, 2nd or 3rd in 2 (14th and 25th in the others). Tuned on the odd
 * questions (all evidence / answer spans at 1k/2k/4k/8k), 0 (before):
 * 80.0/90.0/95.0/95.0 both; 1: 82.5/92.5/95.0/95.0 both; 2 and 3: 80.0/
 * 92.5/95.0/95.0. Held out (even), spans 65.0/70.0/85.0/95.0: 1 unchanged
 * (all evidence too); 3: 70.0/75.0/85.0/92.5. Also tried: the own rank's
 * RRF k at 5/15/30 instead of 60 (odd 2k 87.5: long replies that repeat
 * the question's words came first, as with BM25 alone), W_REPLY_ROUND
 * 0.25/0.5/0.75 (odd 2k 87.5/90.0/92.5, even 1k -1 each). BEAM dev
 * (the cue opens the lane for 7 of 179 questions): one user-only question
 * lost at 1k (all and strict), 0 better; LoCoMo and MADial identical.
 */
#define REPLY_LANE_OWN_TOP 1
/*
 * Below REPLY_LANE_OWN_MAX tokens, every REPLY_LANE_OWN_EVERY-th place of
 * the lane after the first (places 3, 6, 9... from 0) goes to the best
 * reply by its own BM25 not yet placed, the rest keep the fused order
 * (pack.c pack_replies_by_score). devmem dev at 2k, of the 4 questions the
 * cue opened the lane for whose evidence reply was not packed at all, 2
 * had it 2nd or 3rd of all replies alone (storm-es#2, auryn#2) in a round
 * ranked 45th and 19th (the turn before it pasted an error or asked in
 * other words), so the fused order put it 10th and 8th in the lane, past
 * the ~5 replies 1,200 tokens hold (each with its turn); the other 2 were
 * 14th or deeper alone. devmem dev answer spans, odd (tuned) / even (held out)
 * at 1k/2k/4k/8k, 0 (before): 34/38/39/39 / 26/29/35/38 of 40. Every 2, 3
 * at every budget: odd unchanged, even +2 at 1k and 2k (auryn#2,
 * storm-es#2), -1 at 8k (klima#4: the own order's long pasted replies
 * took the 8k lane's places); every 4 and 5: even +2 at 2k only, -1 at
 * 8k; every 8: -1 at 8k only. From 4k on the lane holds 10 or more
 * replies and the fused order already reaches them: below 4k only (3):
 * even +2 at 1k and 2k, 0 worse, odd unchanged (this limit was chosen
 * after the even 8k loss was seen: the even half is not clean for it).
 * The odd half never moved: it only says the change costs it nothing.
 * Also tried, to reach reworded questions: a reply's dense rank among the
 * replies fused into the lane's order (weight 0.5 / 1.0, with and without
 * replies that only the dense ranking found): odd -2/-1 at 2k and -1 at
 * 1k, 4k, 8k, even +1 at 1k/2k and -2 at 8k (USE-lite is English-only;
 * the German and Spanish replies' cosines ranked other replies first).
 */
#define REPLY_LANE_OWN_EVERY 3
#define REPLY_LANE_OWN_MAX   4000
/*
 * A question about what the assistant said or did (query_asks_reply, the
 * cue that opens the reply lane): the replies of the best round
 * (PACK_FULL_ROUNDS) may take this share of the budget each instead of
 * PACK_CAP_REPLY's. A long reply cut to 5% keeps the lines that match the
 * question and loses the ones after them, where the fix or the command
 * often is: on devmem dev at 8k, 4 questions had their evidence packed but
 * not their answer spans, all as excerpts. Tuned on devmem dev's odd
 * questions (answer spans at 1k/2k/4k/8k): 0 (off) 60.0/72.5/87.5/92.5,
 * 0.15 60.0/80.0/92.5/95.0 (evidence found unchanged), 0.3 62.5/80.0/92.5/
 * 95.0 (evidence found at 1k: one question fewer); held out (even): 0
 * 65.0/67.5/80.0/90.0, 0.15 65.0/65.0/80.0/95.0 (evidence found at 4k: two
 * questions fewer, 95.0 -> 90.0). Not for other questions: at 0.15 for every
 * question BEAM dev's user-only evidence lost 2 to 6 points at 2k-8k (the
 * best round's reply displaces the lowest-ranked user turns). BEAM dev,
 * LoCoMo and MADial are unchanged (the cue is rare there; no replies
 * between people).
 */
#define PACK_CAP_TOP   0.15
/* The smallest excerpt worth making, in tokens. */
#define PACK_MIN_EXCERPT 40
/*
 * An excerpt of an assistant reply gives this share of its tokens to the
 * reply's opening, in order, before the passages that share the question's
 * words (pack.c reply_lead; user turns and notes: none). A coding
 * assistant's reply opens with what it found and what it does ("The error
 * is due to X. We need to add Y.") and goes on with code that repeats the
 * question's identifiers; the excerpt picked those lines and lost the
 * answer. devmem dev at 1k/2k, before: 12 questions had their evidence
 * packed and not their answer spans, 11 of them with a span in the reply's
 * first 500 characters. Tuned on the odd questions (answer spans at
 * 1k/2k/4k/8k): 0 (before) 60.0/80.0/92.5/95.0, 0.25 unchanged, 0.5
 * 62.5/87.5/92.5/95.0, 0.75 67.5/87.5/95.0/95.0, 1.0 (the opening as far
 * as it fits, the matching passages in what is left) 80.0/90.0/95.0/95.0,
 * spans now present for every odd question whose evidence is packed; the
 * opening also kept when it is longer than a third of the excerpt (it was
 * dropped: 0.75 then gave 72.5 at 1k, 1.0 80.0). Held out (even):
 * 65.0/65.0/80.0/95.0 -> 65.0/70.0/85.0/92.5 (2k: +2, 4k: +2, 8k: -1,
 * 1k: +1 -1; the two lost spans sit in the reply's closing summary).
 * Evidence found: unchanged but for one question more at 1k.
 */
#define PACK_REPLY_LEAD  1.0
/*
 * An excerpt of an assistant reply of PACK_REPLY_TAIL_MIN tokens or more
 * also keeps the reply's closing lines, as many of its last passages as
 * fit in this share of its tokens, beside the opening (pack.c reply_tail;
 * the lead fills what is left). A coding assistant ends a long reply with
 * a summary of what it changed ("2. We've added a `parse_json_safely`
 * function..."), which the opening-first excerpt lost: devmem dev at 8k,
 * one held-out question had its evidence packed and its span in the
 * reply's last 600 characters. devmem dev answer spans at 1k/2k/4k/8k,
 * odd (tuned) / even (held out), before: 80.0/90.0/95.0/95.0 /
 * 65.0/70.0/85.0/92.5. Share 0.1 to 0.5 with no minimum cost small
 * excerpts their opening (0.2: odd 72.5 at 1k, evidence found -1; 0.5:
 * odd 70.0/87.5/90.0/95.0); from 300 tokens, 0.25: odd unchanged, even
 * 8k 90.0 (-1); 0.4 and 0.5: odd unchanged, even 8k 95.0 (+1, 0 worse);
 * from 500 tokens nothing moves. No odd question has a span in a closing
 * summary, so the odd half only says what it costs (nothing at 0.4 from
 * 300). BEAM dev (all, strict), LoCoMo dev (all, strict), MADial zh/en:
 * identical per question at every budget.
 */
#define PACK_REPLY_TAIL      0.4
#define PACK_REPLY_TAIL_MIN  300
/*
 * Reply snippets (issue 15): in user-assistant stores, from PACK_SNIP_MIN
 * tokens on, a round whose lead turn the first pass packs also gives its
 * best reply, as an excerpt of PACK_MIN_EXCERPT tokens around the
 * question's words, when that reply matches the question better than the
 * turn that asked (BM25 of each message alone): the round's answer is in
 * the reply. Only the first budget / PACK_SNIP_EVERY rounds the pass
 * packs do, so at 8k about 16 snippets (640 tokens) displace the lowest-
 * ranked user turns. A snippet grows later (the reply lane, leftover
 * budget) like any reply. Chosen on BEAM dev, odd chats (cap 40 or 60,
 * one snippet per 250 to 700 tokens, from 1k or 4k): evidence in a reply
 * 6.7/6.7/6.7/6.7 -> 6.7/6.7/26.7/26.7% at 1k/2k/4k/8k, user-only evidence
 * unchanged; below 4k every snippet cost user turns (one per 400 tokens
 * from 1k: -1.3 and -2.7 points at 1k/2k on odd chats). Even chats and
 * devmem are reported apart (docs/results, README).
 */
#define PACK_SNIP_MIN   4000
#define PACK_SNIP_EVERY 500
/*
 * Reply pairs (issue 15): below PACK_SNIP_MIN, the first budget /
 * PACK_PAIR_EVERY rounds the first pass packs (the best round, whole,
 * among them) give the same snippet of their best reply, and pay for it:
 * the turn of a round that will give one is cut to PACK_PAIR_TURN of the
 * turn cap (0.6 of 200 tokens), so the pair costs about what the turn
 * did and the rounds ranked last are not crowded out. Why: on BEAM dev at
 * 1k / 2k, 6 of the 11 reply-evidence questions with 1 to 4 evidence
 * turns had the user turn of a round ranked 2nd to 23rd packed and its
 * reply, the evidence, dropped (the other 5: 4 questions about what the
 * assistant recommended whose rounds rank 15th to 55th, the words
 * paraphrased; 21 of the 32 are summaries of 4 to 16 turns). Snippets
 * alone, one per 400 tokens, cost user-only evidence 1 to 3 questions.
 * Tuned on the odd chats (all evidence, cairn, reply / user-only, at
 * 1k and 2k, +better -worse): every 400, turn 0.7: reply +1 / +2, user
 * -0 / -1; every 250, turn 0.7 and 0.5: reply +2 / +3, user -2 / -1;
 * every 300, turn 0.6: reply +1 / +2, user +1-0 / +1-1 (keyword +2 / +2,
 * user +1-1 / 0). Held out (even chats) at 300 / 0.6: reply 0 / 0, user
 * -1 / 0 (cairn), 0 / 0 (keyword); by chats 1-5 and 6-10 the reply gain
 * is on both halves (+1 each, cairn 2k and keyword). devmem dev: cairn
 * answer spans 2k +1, keyword all evidence +1 / +3, none worse. Strict
 * (whole turns) loses 1 to 2 per budget: a paired turn is an excerpt
 * more often. PACK_PAIR_EVERY 0 turns it off.
 */
#define PACK_PAIR_EVERY 300
#define PACK_PAIR_TURN  0.6

/*
 * A question that asks for a summary (query_asks_summary: "summarize",
 * "overview", ...) in a user-assistant store is packed broad, not deep:
 * each ranked round gives its lead turn cut to PACK_SUM_TURN tokens and
 * its best reply (the one that matches best alone, else its first) cut to
 * PACK_SUM_REPLY, no round keeps its replies whole, no reply lane; leftover
 * budget widens the replies, best round first. What answers "how did my
 * project progress" is a little of every round: on BEAM dev the 20 summary
 * questions have 5 to 16 evidence turns each, user turns and replies,
 * ranked down to past the 100th unit, and at 8k user-first packing holds
 * about 30 rounds. PACK_SUMMARY 0 turns it off (measured in docs/EVAL.md).
 */
#define PACK_SUMMARY    1
#define PACK_SUM_MIN    4000
#define PACK_SUM_TURN   40
#define PACK_SUM_REPLY  40
/*
 * A question about the order things came up in ("the order in which I
 * brought up...", query_asks_summary 2) is packed broad too, its turns
 * only (replies from the budget left). BEAM dev, its 20 event-ordering
 * questions (user turns only): evidence in user turns 76.2 / 87.8 ->
 * 83.0 / 93.9% at 4k / 8k (10 and 9 better, 0 worse); chosen on the odd
 * chats (with replies as for a summary 78.4 / 91.9, turns only 83.8 /
 * 93.2%), even held out (75.3 / 87.7 -> 82.2 / 94.5%). Strict (every turn
 * whole) loses: user-only 63.9 / 81.6 -> 61.2 / 74.8%, the turns are now
 * 40-token excerpts. 0 turns it off (summaries keep PACK_SUMMARY).
 */
#define PACK_SUM_ORDER  1

struct policy_const {
    const char *name;
    double value;
};

/* ---- explicit memories in recall (memories.c, docs/MEMORIES.md) ---- */

/* Memories are rendered first and take at most this share of the budget
 * (the rest goes to conversations): what the user chose to keep comes
 * before what was said, but never crowds the record out. */
#define MEM_SHARE       0.2
/* A memory is recalled only when it holds more than this share of the
 * question's IDF weight (its content words, weighted over messages and
 * memories together), so an unrelated question gets none: one shared
 * common word is not enough, the rare words of the question must be in
 * it. Chosen, not tuned (no dev set has memories). */
#define MEM_FLOOR       0.5
/* Or when its vector is as close to the question's as the prompt hook's
 * gate asks of a turn (the model's gate_cosine; none for a model not
 * measured): a memory can be shown for a question that shares no word
 * with it. */
/* A memory's contradicting partner may take the share up by this much of
 * it again, so that a conflict is shown whole at small budgets too. */
#define MEM_PAIR_EXTRA  0.5
/* At most this many memories in one recall (contradicting partners
 * included), and a memory cut to fit keeps at least this many tokens. */
#define MEM_MAX_ITEMS   8
#define MEM_MIN_CUT     16
/* Recall reads at most this many live memories (the most recently
 * changed) and tokenizes them on every question: the bound on its cost. */
#define MEM_SCAN_MAX    2000

/* ---- notes: sections of Markdown vaults (notes.c, docs/VAULTS.md) ---- */

/* NOTE_SPLIT_TOK (text/markdown.h, where the vault indexer reads it; in
 * the table below): a page's text before its first heading longer than
 * that many index tokens is indexed as pieces cut at blank lines. */

/* With conversations in the same recall, notes take at most this share
 * of the budget (after the memories'); `--source notes` gives them all
 * of it. Chosen, not tuned. */
#define NOTE_SHARE      0.5
/* A section is shown when it holds more than this share of the question's
 * IDF weight (IDF over sections), as a memory (MEM_FLOOR), when the
 * question names its page, or when it passes NOTE_GATE_*_MANY below. */
#define NOTE_FLOOR      0.5
/* At most this many sections in one recall, this many of one page (one:
 * a note is cited as path:line, and a second section of a page kept a
 * next page out; branch vault26, docs/VAULTS.md), and a section cut to
 * fit keeps at least this many tokens. */
#define NOTE_MAX_ITEMS  6
#define NOTE_PER_DOC    1
#define NOTE_MIN_CUT    24
/* A section takes at most 1/NOTE_PACK_SPLIT of the notes' budget while a
 * next passing section waits (notes_pack): the right page is often the
 * second or third, and a long first section would fill the budget alone
 * (dev queries, half A: 19 -> 23 of 34; docs/VAULTS.md). */
#define NOTE_PACK_SPLIT 3
/* 1: a section takes at most an even share of what is left of the notes'
 * budget, shared with the passing sections after it that can still be
 * shown (up to NOTE_MAX_ITEMS, NOTE_PER_DOC of a page), rather than the
 * fixed 1/NOTE_PACK_SPLIT: the right page ranked fifth is shown as an
 * excerpt instead of left out by longer excerpts of the first four
 * (branch vault26). 0: the fixed cap, as before. */
#define NOTE_PACK_EVEN  1
/* The notes' block over its budget once counted as one text: its last
 * section is cut by the overshoot and NOTE_RECUT_MARGIN tokens more
 * instead of dropped (0: dropped, as before). */
#define NOTE_RECUT_MARGIN 4
/* Packing reads at most this many candidate sections (each one read is a
 * statement and its text): the bound on its cost. */
#define NOTE_READS_MAX  24
/* A one-word page name is distinctive (it names the page alone, for the
 * gate) only when that word is in at most this many sections and has at
 * least NOTE_NAME_MIN_LEN bytes: "tor" or "orbstack", not "design". A
 * name of two words or more is distinctive as a phrase. */
#define NOTE_NAME_DF    3
#define NOTE_NAME_MIN_LEN 3
/* A page whose name (title, an alias, its file's name taken apart at
 * '-', '_', '.') holds one of the question's words that is in at most
 * NOTE_NAME_PART_DF sections (and of NOTE_NAME_MIN_LEN bytes, not an
 * everyday word) passes the gate with a section holding NOTE_GATE_SHARE
 * of the question, whatever its weight: "install AgentRecall with npx"
 * and seeds/002-agentrecall-readme.md. 0: off. Dev queries, half A: 5 to
 * 40 the same (+1), 80 a false fire (docs/VAULTS.md). */
#define NOTE_NAME_PART_DF 10
/* A commoner word of the question (in more than NOTE_NAME_PART_DF
 * sections) counts as the rare word of a page's name when at least this
 * share of the sections holding it are in the pages whose names hold it:
 * the topic word of a family of pages ("openblas"). 0 turns it off. */
#define NOTE_NAME_PART_CONC 0.5

/* A section passes the injection gate alone when it holds this share of
 * the question's IDF weight and this weight (the gate's units, gate.c),
 * with its page's card (title, aliases, tags, path), a word in a section
 * longer than the average counting less unless it recurs (notes.c). */
#define NOTE_GATE_SHARE  0.5
#define NOTE_GATE_WEIGHT 1.5
/* A section whose page's card (title, aliases, tags, path) holds none of
 * the question's words (numbers the gate leaves out aside) passes those
 * two rules (this one and NOTE_GATE_*_MANY) only with this weight, the
 * longer question's (about two rare words): on a page about something
 * else the question's words stand in passing ("the tests pass locally but
 * fail in CI" on a page about Windows builds: common words and one rare
 * one reach 1.5), where a page about the question's topic names part of
 * it. Branch vault28, dev half A (docs/VAULTS.md): 1.75 is the strictest
 * value in steps of 0.05 that keeps A's fires in both recalls (keyword to
 * 1.8; with use-lite-en, 1.8 loses q023). NOTE_GATE_WEIGHT or less: off. */
#define NOTE_GATE_WEIGHT_OFFPAGE 1.75
/* A word of the card counts for that only at this weight in the gate's
 * units (IDF over log(2 + sections)): "docker", in half of the dev vault's
 * sections and in every Docker page's path, names no page (dev query
 * q053 fired on a wrong page by it). Half A: 0.2 to 0.3 keep A's fires and
 * quiet q053; 0.35 loses q015 ("recall" in its page's name, 0.35). 0: any
 * word of the card. */
#define NOTE_GATE_CARD_W 0.3
/* An everyday word of the question (text_is_common_word: "api", "test",
 * "session", "workflow") is no card word when this is 0: the name rules
 * already say such a word names no page, and a folder or a title holding
 * it ("api/v1.24.md") does not make a page the question's topic (branch
 * vault31: "the API returns 500 ..." fired on Docker's api/v1.24.md at
 * 1.51). Dev set keyword and use-lite-en: no line of a graded query
 * moved. 1: it counts, the rule before. */
#define NOTE_GATE_CARD_EVERYDAY 0
/* ... and it counts this much of its IDF in what a section holds of the
 * question for the gate (its share and weight; the question's total keeps
 * it whole): four common words and one rare one on a page about Windows
 * builds reached 1.80, "test" among them. Branch vault31 (docs/VAULTS.md):
 * 1 (off) to 0.85 leave that fire, 0.8 quiets it and keeps every graded
 * query, 0.75 loses B's q066 (1.65 on its page, "set" and "develop"
 * everyday stems of it: 1.49 at 0.75, 1.52 at 0.8, 1.5 asked), 0.5 and 0
 * lose more of A and B. The cosine rule (with
 * vectors) reads every word whole: applied there too, 0.8 lost A's q019,
 * whose section a cosine vouches for. 1: off. */
#define NOTE_GATE_EVERYDAY_W 0.8
/* A section whose heading path holds a rare word of the question (one of
 * at least NOTE_GATE_HEAD in the gate's units: its IDF over log(2 +
 * sections), content, NOTE_NAME_MIN_LEN bytes, not an everyday word), a
 * word its text holds too, passes the gate with NOTE_GATE_SHARE of the
 * question, whatever its weight: the heading says what the section is
 * about, as a page's name says what the page is ("mount a tmpfs inside a
 * container" and "### Mount tmpfs (--tmpfs)"). At most NOTE_HEAD_READS
 * sections' headings are read, best first. 0 turns it off. */
#define NOTE_GATE_HEAD  0.55
#define NOTE_HEAD_READS 24
/* The gate's share and weight leave out a question's number ("line 12")
 * found in more than this many sections; ranking counts it. 0: off. */
#define NOTE_GATE_NUM_DF 10
/* A longer question is answered by a section holding fewer of its words
 * but more rare ones: a section passes the gate too (and is shown) when it
 * holds NOTE_GATE_SHARE_MANY of the question's IDF weight and
 * NOTE_GATE_WEIGHT_MANY of it in the gate's units (about two rare words).
 * 0: off. Dev queries, half A: see docs/VAULTS.md. The share was 0.4
 * (q029's section held 0.46) until branch vault24: the must-not-fire
 * prompts' sections never reach a weight of 1.5 at any share, and dev
 * query q004's right section holds 0.38 at 2.21; 0.3 to 0.38 gain it and
 * nothing else, 0.25 fires q035 on a wrong page. Chosen for a half-B
 * query (half A moves at no value), so B is not held out for it. */
#define NOTE_GATE_SHARE_MANY  0.35
#define NOTE_GATE_WEIGHT_MANY 1.75
/* A page is about the question when its sections (and card) hold at least
 * NOTE_GATE_PAGE_SHARE of the question between them, each word counted as
 * much as the section holding most of it does, and NOTE_GATE_PAGE_WEIGHT
 * of it in the gate's units (about two rare words more than one section
 * needs to pass alone): a section of it holding NOTE_GATE_SHARE of the
 * question passes the gate, whatever its own weight (branch vault33, dev
 * query q019: one section of its page holds two of its five words at
 * 1.32, off the page (1.75 asked), the page's other sections the other
 * three: the page 0.97 of the question at 2.29). The must-not-fire prompts'
 * pages: a long page holding 0.82 at 2.35 (x006), short questions whose
 * page holds all of them on commoner words at 1.45-1.89 (n034, m014,
 * m002). Tried on the dev vault (keyword; docs/VAULTS.md): share 0.85 to
 * 0.95 at weight 2.0 and weight 1.9 to 2.2 at share 0.9 gain q019 alone
 * and fire on no must-not-fire prompt; share 0.8 fires x006, weight 2.3
 * loses q019, weight 1.75 (a section weight of 1.2 asked besides) fires
 * m002. Chosen on one query: a thin base. 0: off. */
#define NOTE_GATE_PAGE_SHARE  0.9
#define NOTE_GATE_PAGE_WEIGHT 2.0

/* With the sections' vectors (a model installed when the vault was
 * indexed, and recall with vectors; notes.c): the best NOTE_DENSE_TOPK
 * sections by cosine join the candidates, a section whose cosine is at
 * least NOTE_DENSE_FLOOR is shown, and the order is its share of the
 * question's weight plus NOTE_W_DENSE times its cosine. A cosine alone
 * opens no gate; a section holding NOTE_GATE_SHARE of the question passes
 * it with less weight than NOTE_GATE_WEIGHT (down to NOTE_GATE_WEIGHT_COS,
 * by NOTE_GATE_COS_Z below) when its cosine is at least the model's
 * gate_cosine less NOTE_GATE_COS_BELOW. */
#define NOTE_DENSE_TOPK      10
#define NOTE_DENSE_FLOOR     0.5
#define NOTE_W_DENSE         0.5
#define NOTE_GATE_COS_BELOW  0.2
#define NOTE_GATE_WEIGHT_COS 1.0
/* ... and only for a section of at most this many index tokens: its
 * vector is of its opening (about 128 tokens, store/vault_vec.c), four
 * times that is still mostly what the vector saw. 0: no limit. */
#define NOTE_GATE_COS_MAXTOK 512
/* ... and the weight it needs is NOTE_GATE_WEIGHT less NOTE_GATE_COS_Z
 * times how far the cosine stands above the question's own cosines with
 * every section of the vaults (its z-score: the cosine less their mean,
 * over their standard deviation), never under NOTE_GATE_WEIGHT_COS. A
 * small model's cosines of unrelated short texts run high (use-lite-en:
 * everyday prompts reach 0.50-0.67 with some section, and their mean over
 * the dev vault's sections is 0.29-0.59 from one question to the next), so
 * an absolute cosine says little; a section that stands out among the
 * question's cosines does. Chosen on half A of the dev queries and
 * nofire-more.jsonl with use-lite-en: 0.02 loses A's q019 (its right
 * section 4.15 deviations out at a weight of 1.40), 0.025 to 0.05 keep
 * A and fire on none of the 8 everyday prompts the rule let through at
 * 0, 0.06 fires on one again. 0: the weight NOTE_GATE_WEIGHT_COS at any
 * cosine over the floor, the rule before branch vault30 (docs/VAULTS.md). */
#define NOTE_GATE_COS_Z      0.03
/* Wiki links and links to .md files: a section of a page linked from the
 * NOTE_LINK_TOP best pages, or linking to one, holds 1 + NOTE_LINK_LIFT
 * times its weight for the order and the floor (not the gate). 0: off,
 * the switch's shipped position: on the dev vault (134 pages with 706
 * links) 0.1 and 0.3 changed nothing with vectors and 0.3 lost 2 right
 * pages without them, 0.6 lost 4 (docs/VAULTS.md). */
#define NOTE_LINK_TOP  2
#define NOTE_LINK_LIFT 0.0

/* The table of every constant above, in this file's order, then each
 * known model's policy ("model:NAME:cjk", "model:NAME:gate_cosine"). */
const struct policy_const *policy_table(size_t *n);

/*
 * Per model (its registry entry, embed/registry.h): whether its vectors
 * cover CJK text, and the cosine that opens the gate alone. The constants
 * above were measured with use-lite-en, an English model; the registry
 * says, model by model, what they may assume. A model the registry does
 * not know (a folder of the user's) is taken as English-only, and its
 * cosine opens nothing: its scale was never measured (known = 0).
 */
struct model_policy {
    int    known, cjk;
    double gate_cosine;     /* 0: cosine opens no gate */
};
/* model: a vector model id ("NAME:HASH", store/vectors.c) or NULL. */
void policy_model(const char *model, struct model_policy *out);
/* FNV-1a (64-bit) over each "name=value;" (value as %.17g). */
uint64_t policy_hash(const struct policy_const *t, size_t n);

/* X(name) for every constant above: policy.c's table. */
#define CAIRN_POLICY(X) \
    X(BM25_K1) \
    X(BM25_B) \
    X(RRF_K) \
    X(QUERY_DASH_MIN) \
    X(W_HEAD) \
    X(SPK_FIELD) \
    X(W_LEN_DIALOG) \
    X(LEN_DIALOG_MIN_BUDGET) \
    X(W_ROUND) \
    X(W_WIN_DIALOG) \
    X(SPAN_DIALOG) \
    X(W_WIN2_DIALOG) \
    X(SPAN2_DIALOG) \
    X(W_WIN_UA) \
    X(SPAN_UA) \
    X(W_TIME) \
    X(TIME_EVENTS) \
    X(W_TIME_VAGUE) \
    X(ORD_TOP) \
    X(W_ORDINAL) \
    X(ORD_BY_DAY) \
    X(W_ONLY_TIME) \
    X(SPK_OTHER) \
    X(LABEL_OTHER) \
    X(W_DENSE_HEAD_DIALOG) \
    X(W_DENSE_HEAD) \
    X(W_DENSE_REPLY) \
    X(DENSE_PRF_TOP) \
    X(DENSE_PRF_MIX) \
    X(DENSE_PRF_W) \
    X(DENSE_PRF_MIN) \
    X(PERSP_W) \
    X(PERSP_MIX) \
    X(PERSP_ONLY) \
    X(PERSP_TOPK) \
    X(PERSP_MIN) \
    X(PERSP_REPL) \
    X(DENSE_CJK_SHARE) \
    X(DENSE_CJK_W) \
    X(ENT_TOP) \
    X(ENT_READ_MAX) \
    X(ENT_MIN_BYTES) \
    X(ENT_MIN_TOP) \
    X(ENT_CAND) \
    X(ENT_TERMS) \
    X(ENT_MIN_IDF) \
    X(ENT_W_DIALOG) \
    X(ENT_W_UA) \
    X(ENT_MIN) \
    X(ENT_MAX_MATCHES) \
    X(SEG_W_DENSE) \
    X(SEG_W_BM25) \
    X(SEG_LIFT) \
    X(SEG_BLOCK) \
    X(SEG_DEPTH) \
    X(SEG_MIN) \
    X(SEG_MIN_BUDGET) \
    X(LRN_W_HEAD) \
    X(LRN_W_WIN) \
    X(LRN_W_WIN2) \
    X(LRN_W_COS) \
    X(LRN_W_COSZ) \
    X(LRN_W_SESS) \
    X(LRN_W_LEN) \
    X(LRN_W_PRF) \
    X(LRN_W_ENT) \
    X(LRN_W_DRRF) \
    X(LRN_W_DMARG) \
    X(LRN_MARG_MID) \
    X(GATE_TOP) \
    X(CAIRN_GATE_SHARE) \
    X(CAIRN_GATE_WEIGHT) \
    X(GATE_CODE_W) \
    X(GATE_DENSE_WEIGHT) \
    X(GATE_DENSE_AGREE) \
    X(GATE_AGREE_SHARE) \
    X(GATE_COS_Z) \
    X(GATE_COS_Z_HITS) \
    X(CUT_DENSE_KEEP) \
    X(DENSE_TOPK) \
    X(DENSE_PIECES_MULT) \
    X(GATHER_PRUNE_MSGS) \
    X(GATHER_KEEP) \
    X(TIER_ON) \
    X(TIER_DF_MIN) \
    X(TIER_SESS) \
    X(TIER_KEEP) \
    X(TIER_AUTO_MSGS) \
    X(TIER_AUTO_GROW) \
    X(TIER_SHARE) \
    X(PACK_FULL_ROUNDS) \
    X(PACK_SPREAD_DECAY) \
    X(PACK_SPREAD_FREE) \
    X(PACK_SPREAD_STEP) \
    X(PACK_SPREAD_TOP) \
    X(PACK_SPREAD_MIN) \
    X(PACK_SPREAD_MAX) \
    X(UNIT_MAX_REPLIES) \
    X(PACK_CAP_TURN) \
    X(PACK_CAP_REPLY) \
    X(PACK_FLOOR_TURN) \
    X(PACK_FLOOR_REPLY) \
    X(REPLY_LANE_SHARE) \
    X(REPLY_LANE_MIN) \
    X(REPLY_CUE_SHARE) \
    X(W_REPLY_ROUND) \
    X(REPLY_LANE_OWN_EVERY) \
    X(REPLY_LANE_OWN_MAX) \
    X(REPLY_LANE_OWN_TOP) \
    X(PACK_CAP_TOP) \
    X(PACK_MIN_EXCERPT) \
    X(PACK_REPLY_LEAD) \
    X(PACK_REPLY_TAIL) \
    X(PACK_REPLY_TAIL_MIN) \
    X(PACK_SNIP_MIN) \
    X(PACK_SNIP_EVERY) \
    X(PACK_PAIR_EVERY) \
    X(PACK_PAIR_TURN) \
    X(PACK_SUMMARY) \
    X(PACK_SUM_MIN) \
    X(PACK_SUM_TURN) \
    X(PACK_SUM_REPLY) \
    X(PACK_SUM_ORDER) \
    X(RECALL_GATE_CJK) \
    X(VEC_DEFAULT_PIECES) \
    X(NOTE_SPLIT_TOK) \
    X(MEM_SHARE) \
    X(MEM_FLOOR) \
    X(MEM_PAIR_EXTRA) \
    X(MEM_MAX_ITEMS) \
    X(MEM_MIN_CUT) \
    X(MEM_SCAN_MAX) \
    X(NOTE_SHARE) \
    X(NOTE_FLOOR) \
    X(NOTE_MAX_ITEMS) \
    X(NOTE_PER_DOC) \
    X(NOTE_MIN_CUT) \
    X(NOTE_PACK_SPLIT) \
    X(NOTE_PACK_EVEN) \
    X(NOTE_RECUT_MARGIN) \
    X(NOTE_READS_MAX) \
    X(NOTE_NAME_DF) \
    X(NOTE_NAME_MIN_LEN) \
    X(NOTE_NAME_PART_DF) \
    X(NOTE_NAME_PART_CONC) \
    X(NOTE_GATE_SHARE) \
    X(NOTE_GATE_WEIGHT) \
    X(NOTE_GATE_HEAD) \
    X(NOTE_HEAD_READS) \
    X(NOTE_GATE_NUM_DF) \
    X(NOTE_GATE_SHARE_MANY) \
    X(NOTE_GATE_WEIGHT_MANY) \
    X(NOTE_GATE_PAGE_SHARE) \
    X(NOTE_GATE_PAGE_WEIGHT) \
    X(NOTE_GATE_WEIGHT_OFFPAGE) \
    X(NOTE_GATE_CARD_W) \
    X(NOTE_GATE_CARD_EVERYDAY) \
    X(NOTE_GATE_EVERYDAY_W) \
    X(NOTE_DENSE_TOPK) \
    X(NOTE_DENSE_FLOOR) \
    X(NOTE_W_DENSE) \
    X(NOTE_GATE_COS_BELOW) \
    X(NOTE_GATE_WEIGHT_COS) \
    X(NOTE_GATE_COS_Z) \
    X(NOTE_GATE_COS_MAXTOK) \
    X(NOTE_LINK_TOP) \
    X(NOTE_LINK_LIFT)

#endif
