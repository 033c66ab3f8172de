/*
 * eval.h: the pieces of `cairn eval` (cli/cmd_eval.c), the evidence-recall
 * harness.
 *
 * A dataset loader (load_*.c) reads benchmark files and hands the runner
 * one "conversation" at a time: the sessions to load into a fresh store
 * and the questions to ask of it, each with its evidence (session id +
 * message id pairs). The runner (run.c) loads the store once, asks every
 * question once per method and budget, writes per-question JSONL and adds
 * up the metrics; report.c prints the Markdown tables and draws the SVG;
 * compare.c pairs two JSONL runs and runs the sign test.
 *
 * Loaders print their own errors (cli_error) and return 1; a callback that
 * returns EVAL_STOP ends a loader early without an error (--limit).
 */
#ifndef CAIRN_EVAL_H
#define CAIRN_EVAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cairn.h"

#define EVAL_STOP 3             /* callback: enough questions, stop quietly */
#define EVAL_MAX_BUDGETS 16
#define EVAL_MAX_METHODS 8
enum { EVAL_ROLE_REPLY, EVAL_ROLE_USER };
/* --explain's rank buckets of a missed evidence turn: its unit ranked
 * 1-10, 11-30, 31-100, past 100, or matched nothing (no rank). */
#define EVAL_RANK_BUCKETS 5
/* The budget of --explain's recall: everything that matches is packed,
 * so every ranked unit shows its rank (the top of --budgets' range). */
#define EVAL_EXPLAIN_BUDGET 1000000
#define EVAL_FILE_CAP ((size_t)1 << 30)   /* 1 GiB per file read whole */

/* One piece of evidence: the turn a question needs. */
struct eval_ev {
    const char *session;
    const char *message;
};

struct eval_q {
    const char *id;
    const char *category;
    const char *question;
    int apart;                  /* left out of "all": adversarial, abstention */
    int64_t now;                /* the time the question is asked */
    struct eval_ev *ev;
    size_t n_ev;
    const char **spans;         /* answer text the packed text should hold, or none */
    size_t n_spans;
};

/* A session kept as the JSON text `cairn add` reads (the sessions loader),
 * so it is parsed and stored exactly as `cairn add` would. */
struct eval_json_sess {
    const char *id;             /* the id as cairn stores it, or NULL */
    const char *json;
    size_t len;
    size_t line;                /* in sessions.jsonl, for errors */
    size_t n_messages;
};

/* One store's worth of data. Every pointer inside is owned by the conv
 * (kept in `keep`) and freed by eval_conv_free. */
struct eval_conv {
    const char *name;
    int msg_ids_unique;         /* message ids are unique in the whole conv */
    struct cairn_session *sess;
    size_t n_sess, a_sess;
    struct eval_json_sess *jsess; /* added after sess */
    size_t n_jsess, a_jsess;
    struct eval_q *qs;
    size_t n_qs, a_qs;
    void **keep;
    size_t n_keep, a_keep;
    int oom;
};

/* What the loaders saw, for the summary: nothing is dropped silently. */
struct eval_counts {
    size_t convs, sessions, messages;
    size_t questions;           /* in the files */
    size_t ev_ids;              /* evidence ids read */
    size_t ev_repaired;         /* malformed ids mapped by the documented rule */
    size_t ev_unresolved;       /* ids that name no turn: dropped */
    size_t q_no_evidence;       /* questions left with none: not scored */
    size_t q_no_evidence_apart; /* of those, abstention-type questions */
    size_t photo_turns;         /* LoCoMo turns with a blip_caption */
    size_t fallback_sessions;   /* LongMemEval answer sessions with no has_answer */
    size_t fallback_questions;  /* questions that used that fallback */
    size_t undated;             /* sessions with no usable date */
    size_t spans;               /* answer spans read */
    size_t q_spans;             /* questions with spans */
};

typedef int (*eval_conv_fn)(void *arg, struct eval_conv *c);

/* data.c: building a conv */
void eval_conv_init(struct eval_conv *c);
void eval_conv_free(struct eval_conv *c);
void *eval_keep(struct eval_conv *c, void *p);       /* NULL-safe; frees p on OOM */
void *eval_calloc(struct eval_conv *c, size_t n, size_t size);
char *eval_strdup(struct eval_conv *c, const char *s);
char *eval_printf(struct eval_conv *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Names c after the folder dir (its last component); returns dir's length
 * without trailing slashes. */
size_t eval_conv_name_dir(struct eval_conv *c, const char *dir);
struct cairn_session *eval_add_session(struct eval_conv *c);
struct eval_q *eval_add_question(struct eval_conv *c);
struct eval_json_sess *eval_add_json_session(struct eval_conv *c);
/* Adds c's sessions to db: all of them, or only those whose id is `only`.
 * *msgs (may be NULL) gets the number of messages handed over. Returns 0,
 * or 1 after printing why, the message starting with `who`. */
int eval_conv_add(struct cairn *db, const struct eval_conv *c, const char *only,
                  const char *who, size_t *msgs);
/* Adds ev to q unless q already has it (evidence lists repeat ids). */
void eval_q_add_ev(struct eval_q *q, const char *session, const char *message);

/* data.c: calls fn on each non-blank line of a JSONL text (each line
 * NUL-terminated in place, leading white space skipped, lineno 1-based);
 * stops on the first non-zero return and returns it. */
typedef int (*eval_line_fn)(void *arg, char *line, size_t len, size_t lineno);
int eval_each_line(char *text, size_t len, eval_line_fn fn, void *arg);

/* data.c: dates. "1:56 pm on 8 May, 2023" (LoCoMo), "March-15-2024"
 * (BEAM), "2023/05/20 (Sat) 02:21" (LongMemEval), else ISO 8601 via
 * cairn_parse_time. Returns 0 or -1. */
int eval_parse_date(const char *s, int64_t *out);

/* data.c: reads a top-level JSON array one element at a time, so a
 * multi-gigabyte file (LongMemEval-M) never sits in memory whole. fn gets
 * each element's bytes (NUL-terminated) and its 1-based index. Returns 0,
 * fn's non-zero return, or 1 after printing why the file is unusable. */
typedef int (*eval_elem_fn)(void *arg, const char *json, size_t len, size_t index);
int eval_json_array_stream(const char *dataset, const char *path, eval_elem_fn fn, void *arg);

/* The loaders. */
int eval_load_locomo(const char *path, struct eval_counts *k, eval_conv_fn fn, void *arg);
int eval_load_beam(const char *dir, struct eval_counts *k, eval_conv_fn fn, void *arg);
int eval_load_longmemeval(const char *path, struct eval_counts *k, eval_conv_fn fn, void *arg);
int eval_load_madial(const char *memory, const char *dialogue, struct eval_counts *k,
                     eval_conv_fn fn, void *arg);
/* load_sessions.c: a folder with sessions.jsonl and questions.jsonl (the
 * format anyone can write for their own history, docs/EVAL.md).
 * eval_sessions_parse reads the two texts into c (name: for messages);
 * returns 0, 1 after printing why the input is unusable, -1 out of memory. */
int eval_load_sessions(const char *dir, struct eval_counts *k, eval_conv_fn fn, void *arg);
int eval_sessions_parse(struct eval_conv *c, const char *name, const char *sessions,
                        size_t slen, const char *questions, size_t qlen, struct eval_counts *k);

/* spans.c: how many of spans[0..n) appear in text, comparing both after
 * whitespace normalisation (every run of white space is one space, none
 * at the ends) and case folding. -1 when out of memory. */
long eval_spans_found(const char *text, const char *const *spans, size_t n);

/* data.c: runs the loader of `dataset` on files. Returns 0, EVAL_STOP, 1
 * after the loader printed an error, or 2 (nothing printed) for an unknown
 * dataset or madial without exactly two files. */
int eval_load(const char *dataset, const char *const *files, size_t n_files,
              struct eval_counts *k, eval_conv_fn fn, void *arg);

/* run.c: one evaluation run. */
struct eval_method {
    const char *name;
    int method;                 /* enum cairn_method */
};

/* Sums for one (category, method, budget) cell. */
struct eval_cell {
    size_t n, all, any, hits, excerpt_hits;
    size_t strict;              /* all evidence packed whole, no excerpt */
    size_t spans_n, spans;      /* questions with spans; with every span in the packed text */
    double frac_sum, tokens_sum, ms_sum;
};

struct eval_cat {
    char *name;
    int apart;
    struct eval_cell *cells;    /* [method * n_budgets + budget] */
};

struct eval_run {
    const char *dataset;
    const char *label;          /* names the run in reports */
    int budgets[EVAL_MAX_BUDGETS];
    size_t n_budgets;
    struct eval_method methods[EVAL_MAX_METHODS];
    size_t n_methods;
    FILE *out;                  /* per-question JSONL, or NULL */
    int lean;                   /* JSONL without question text and retrieved ids */
    long limit;                 /* questions to score, 0: all */
    int quiet;
    int dev;                    /* the data is a development set (--dev) */
    double min_rel_score;       /* --min-rel-score: recall's relative cut, 0: off */
    /* --explain: per question and method, where each evidence turn's unit
     * stands in the whole ranking ("ranks" in --out), and, per budget, the
     * missed evidence turns counted by that rank (the report's table):
     * [(method * n_budgets + budget) * 2 + role][EVAL_RANK_BUCKETS] */
    int explain;
    size_t (*missed_by_rank)[EVAL_RANK_BUCKETS];
    struct eval_counts counts;
    struct eval_cat *cats;
    size_t n_cats;
    /* The questions of "all" again, split by where their evidence is: in
     * an assistant reply (at least one evidence turn), or in user turns
     * only. Reported when any reply holds evidence. */
    struct eval_cat *roles;     /* [EVAL_ROLE_REPLY], [EVAL_ROLE_USER], or NULL */
    size_t scored;
    double load_ms, recall_ms;
    int failed;
};

int eval_run_conv(void *arg, struct eval_conv *c);   /* an eval_conv_fn */
void eval_run_free(struct eval_run *r);
/* Sum of the cells of every category not reported apart. */
void eval_run_total(const struct eval_run *r, size_t method, size_t budget, struct eval_cell *out);

/* report.c */
void eval_report_md(const struct eval_run *r, FILE *f);
int eval_report_svg(const struct eval_run *r, const char *path);

/* inject.c: `cairn eval inject`, the prompt hook's gate measured. */
int eval_inject(int argc, char **argv);
/* `cairn eval vault VAULT_DIR QUERIES.jsonl ...` (load_vault.c). */
int eval_vault(int argc, char **argv);

/* compare.c */
int eval_compare(int argc, char **argv);
/* Exact two-sided sign test: P(|X - n/2| >= |k - n/2|), X ~ Bin(n, 1/2),
 * for `better` and `worse` counts. 1 when both are 0. */
double eval_sign_test(size_t better, size_t worse);

#endif
