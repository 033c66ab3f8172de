/*
 * run.c: the evaluation loop. For one conversation: a fresh in-memory
 * store, every session added once (stamped with its date), then for each
 * question one cairn_recall per method per budget. A question is recalled
 * ("all") when every evidence turn is among the packed items; an item
 * matches a piece of evidence when its session id and message id both
 * equal the evidence's. "strict" asks more: every evidence turn packed
 * whole, so its whole text is in what recall returns (an excerpt may have
 * left the answer out). Also kept: "any", the fraction found, how many of
 * the found turns were packed only as excerpts, tokens used, time taken.
 * A question that comes with answer spans (the sessions format) is also
 * scored on the text: "spans" when every span is in the packed text
 * (spans.c).
 *
 * Sums go into per-category cells; one JSONL line per question goes to
 * --out. Load time and recall time are summed apart so a slow run says
 * where its time went.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval.h"
#include "../cli.h"
#include "util/buf.h"
#include "util/os.h"

static int cat_init(struct eval_run *r, struct eval_cat *c, const char *name, int apart)
{
    c->name = strdup(name);
    c->apart = apart;
    c->cells = calloc(r->n_methods * r->n_budgets, sizeof *c->cells);
    if (!c->name || !c->cells) {
        free(c->name);
        free(c->cells);
        c->name = NULL;
        c->cells = NULL;
        return -1;
    }
    return 0;
}

static struct eval_cat *category(struct eval_run *r, const char *name, int apart)
{
    for (size_t i = 0; i < r->n_cats; i++)
        if (!strcmp(r->cats[i].name, name) && r->cats[i].apart == apart)
            return &r->cats[i];
    struct eval_cat *nc = realloc(r->cats, (r->n_cats + 1) * sizeof *nc);
    if (!nc)
        return NULL;
    r->cats = nc;
    if (cat_init(r, &r->cats[r->n_cats], name, apart))
        return NULL;
    return &r->cats[r->n_cats++];
}

/* The evidence-role row a question of "all" also counts in. */
static struct eval_cat *role_category(struct eval_run *r, int role)
{
    if (!r->roles) {
        struct eval_cat *v = calloc(2, sizeof *v);
        if (!v || cat_init(r, &v[EVAL_ROLE_REPLY], "evidence in a reply", 0) ||
            cat_init(r, &v[EVAL_ROLE_USER], "evidence in user turns only", 0)) {
            if (v) {
                free(v[0].name);
                free(v[0].cells);
            }
            free(v);
            return NULL;
        }
        r->roles = v;
    }
    return &r->roles[role];
}

/* Whether a message is an assistant reply: cairn_messages' callback. */
struct role_find { const char *id; int found, reply; };

static int role_cb(void *arg, const struct cairn_message_info *m)
{
    struct role_find *f = arg;
    if (!m->id || strcmp(m->id, f->id))
        return 0;
    f->found = 1;
    f->reply = m->role && !strcmp(m->role, "assistant");
    return 1;
}

/* EVAL_ROLE_REPLY when any of q's evidence turns is an assistant message
 * in the store, else EVAL_ROLE_USER. */
static int evidence_role(struct cairn *db, const struct eval_q *q)
{
    for (size_t e = 0; e < q->n_ev; e++) {
        struct role_find f = { q->ev[e].message, 0, 0 };
        cairn_messages(db, q->ev[e].session, 0, -1, role_cb, &f);
        if (f.found && f.reply)
            return EVAL_ROLE_REPLY;
    }
    return EVAL_ROLE_USER;
}

void eval_run_free(struct eval_run *r)
{
    for (size_t i = 0; i < r->n_cats; i++) {
        free(r->cats[i].name);
        free(r->cats[i].cells);
    }
    free(r->cats);
    r->cats = NULL;
    r->n_cats = 0;
    for (int i = 0; r->roles && i < 2; i++) {
        free(r->roles[i].name);
        free(r->roles[i].cells);
    }
    free(r->roles);
    r->roles = NULL;
    free(r->missed_by_rank);
    r->missed_by_rank = NULL;
}

void eval_run_total(const struct eval_run *r, size_t method, size_t budget, struct eval_cell *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < r->n_cats; i++) {
        if (r->cats[i].apart)
            continue;
        const struct eval_cell *c = &r->cats[i].cells[method * r->n_budgets + budget];
        out->n += c->n;
        out->all += c->all;
        out->strict += c->strict;
        out->spans_n += c->spans_n;
        out->spans += c->spans;
        out->any += c->any;
        out->hits += c->hits;
        out->excerpt_hits += c->excerpt_hits;
        out->frac_sum += c->frac_sum;
        out->tokens_sum += c->tokens_sum;
        out->ms_sum += c->ms_sum;
    }
}

static void add_id(struct buf *b, const struct eval_conv *c, const char *session, const char *msg)
{
    if (c->msg_ids_unique) {
        buf_add_json_str(b, msg, strlen(msg));
    } else {
        struct buf t = BUF_INIT;
        buf_printf(&t, "%s#%s", session, msg);
        buf_add_json_str(b, t.p, t.n);
        buf_release(&t);
    }
}

/* --explain: where each evidence turn of q stands in method m's whole
 * ranking. One recall of everything that matches (the budget packs it
 * all; matched-only, so the pool is the one a budgeted recall ranks:
 * loading the whole store would change the unit IDF's estimate) gives
 * every packed turn its unit's rank. rank[e] is 1-based, 0 when the
 * turn's unit matched nothing; score[e] its fused score; in_session its
 * unit's 1-based rank among its session's units. Appends
 * "METHOD":[{"rank":R,"score":S,"in_session":I}|null, ...] to line. Returns 0, or 1
 * after printing the failure. */
static int explain_ranks(struct eval_run *r, struct cairn *db, const struct eval_conv *c,
                         const struct eval_q *q, size_t m, int *rank, struct buf *line)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *res = NULL;
    o.budget = EVAL_EXPLAIN_BUDGET;
    o.now = q->now;
    o.method = r->methods[m].method;
    o.min_rel_score = r->min_rel_score;
    o.flags = CAIRN_RECALL_MATCHED_ONLY;
    if (cairn_recall(db, q->question, &o, &res)) {
        cli_error("eval: %s: question %s: recall failed: %s", c->name, q->id, cairn_errmsg(db));
        return 1;
    }
    buf_printf(line, "%s\"%s\":[", m ? "," : "", r->methods[m].name);
    for (size_t e = 0; e < q->n_ev; e++) {
        const struct cairn_recall_item *hit = NULL;
        for (size_t j = 0; j < res->n_items && !hit; j++) {
            const struct cairn_recall_item *it = &res->items[j];
            if (it->session && it->message && !strcmp(it->session, q->ev[e].session) &&
                !strcmp(it->message, q->ev[e].message))
                hit = it;
        }
        rank[e] = hit && hit->score > 0 ? hit->rank + 1 : 0;
        if (e)
            buf_addc(line, ',');
        /* where it stands inside its own session: 1 = its session's
         * best unit (a session-coverage rule can only reach those) */
        int in_sess = 1, last = -1;
        for (size_t j = 0; rank[e] && j < res->n_items; j++) {
            const struct cairn_recall_item *it = &res->items[j];
            if (it->score <= 0 || !it->session || strcmp(it->session, q->ev[e].session))
                continue;
            /* a unit's messages come together (text order): each unit once */
            if (it->rank + 1 < rank[e] && it->rank != last)
                in_sess++;
            last = it->rank;
        }
        if (rank[e])
            buf_printf(line, "{\"rank\":%d,\"score\":%.5g,\"in_session\":%d}", rank[e], hit->score,
                       in_sess);
        else
            buf_adds(line, "null");
    }
    buf_addc(line, ']');
    cairn_recall_free(res);
    return 0;
}

/* The --explain bucket of a 1-based rank (0: matched nothing). */
static int rank_bucket(int rank)
{
    return !rank ? 4 : rank <= 10 ? 0 : rank <= 30 ? 1 : rank <= 100 ? 2 : 3;
}

/* Asks one question with every method and budget; appends the "runs"
 * object (and with --explain "ranks" before it) to line. role: where its
 * evidence is (EVAL_ROLE_*). Returns 0 or 1 after printing the failure. */
static int ask(struct eval_run *r, struct cairn *db, const struct eval_conv *c,
               const struct eval_q *q, struct eval_cat *cat, struct eval_cat *rcat,
               int role, struct buf *line)
{
    int *found = calloc(q->n_ev, sizeof *found);
    int *ranks = r->explain ? calloc(r->n_methods * q->n_ev + 1, sizeof *ranks) : NULL;
    if (!found || (r->explain && !ranks)) {
        cli_error("eval: out of memory");
        free(found);
        free(ranks);
        return 1;
    }
    if (r->explain) {
        buf_adds(line, ",\"ranks\":{");
        for (size_t m = 0; m < r->n_methods; m++) {
            if (explain_ranks(r, db, c, q, m, ranks + m * q->n_ev, line)) {
                free(found);
                free(ranks);
                return 1;
            }
        }
        buf_addc(line, '}');
    }
    buf_adds(line, ",\"runs\":{");
    for (size_t m = 0; m < r->n_methods; m++) {
        buf_printf(line, "%s\"%s\":{", m ? "," : "", r->methods[m].name);
        for (size_t bi = 0; bi < r->n_budgets; bi++) {
            struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
            struct cairn_recall *res = NULL;
            o.budget = r->budgets[bi];
            o.now = q->now;
            o.method = r->methods[m].method;
            o.min_rel_score = r->min_rel_score;
            double t0 = os_now_ms();
            int rc = cairn_recall(db, q->question, &o, &res);
            double ms = os_now_ms() - t0;
            r->recall_ms += ms;
            if (rc) {
                cli_error("eval: %s: question %s: recall failed: %s", c->name, q->id,
                          cairn_errmsg(db));
                free(found);
                free(ranks);
                return 1;
            }
            size_t hits = 0, ex = 0;
            for (size_t e = 0; e < q->n_ev; e++) {
                found[e] = 0;
                for (size_t j = 0; j < res->n_items; j++) {
                    const struct cairn_recall_item *it = &res->items[j];
                    if (it->session && it->message && !strcmp(it->session, q->ev[e].session) &&
                        !strcmp(it->message, q->ev[e].message)) {
                        /* a turn packed whole anywhere counts as whole */
                        found[e] = found[e] == 1 || !it->excerpt ? 1 : 2;
                    }
                }
                hits += found[e] != 0;
                ex += found[e] == 2;
                if (ranks && !found[e] && !q->apart)
                    r->missed_by_rank[(m * r->n_budgets + bi) * 2 + (size_t)role]
                        [rank_bucket(ranks[m * q->n_ev + e])]++;
            }
            double frac = (double)hits / (double)q->n_ev;
            int strict = hits == q->n_ev && ex == 0;
            long spans = q->n_spans ? eval_spans_found(res->text, q->spans, q->n_spans) : 0;
            if (spans < 0) {
                cli_error("eval: out of memory");
                cairn_recall_free(res);
                free(found);
                free(ranks);
                return 1;
            }
            for (int k = 0; k < 2; k++) {
                struct eval_cat *ck = k ? rcat : cat;
                if (!ck)
                    continue;
                struct eval_cell *cell = &ck->cells[m * r->n_budgets + bi];
                cell->n++;
                cell->all += hits == q->n_ev;
                cell->strict += strict;
                cell->any += hits > 0;
                cell->hits += hits;
                cell->excerpt_hits += ex;
                cell->spans_n += q->n_spans > 0;
                cell->spans += q->n_spans && (size_t)spans == q->n_spans;
                cell->frac_sum += frac;
                cell->tokens_sum += res->tokens;
                cell->ms_sum += ms;
            }
            buf_printf(line, "%s\"%d\":{\"all\":%s,\"strict\":%s,\"any\":%s,\"fraction\":%.4g,"
                       "\"tokens\":%d,\"excerpt_hits\":%zu,\"ms\":%.2f",
                       bi ? "," : "", r->budgets[bi], hits == q->n_ev ? "true" : "false",
                       strict ? "true" : "false", hits ? "true" : "false", frac, res->tokens,
                       ex, ms);
            if (q->n_spans)
                buf_printf(line, ",\"spans\":%s,\"spans_found\":%ld",
                           (size_t)spans == q->n_spans ? "true" : "false", spans);
            buf_adds(line, ",\"missed\":[");
            size_t k = 0;
            for (size_t e = 0; e < q->n_ev; e++) {
                if (found[e])
                    continue;
                if (k++)
                    buf_addc(line, ',');
                add_id(line, c, q->ev[e].session, q->ev[e].message);
            }
            buf_addc(line, ']');
            if (!r->lean) {
                buf_adds(line, ",\"retrieved\":[");
                for (size_t j = 0; j < res->n_items; j++) {
                    if (j)
                        buf_addc(line, ',');
                    add_id(line, c, res->items[j].session ? res->items[j].session : "",
                           res->items[j].message ? res->items[j].message : "");
                }
                buf_addc(line, ']');
                /* each retrieved item's unit rank (0 = best): where the
                 * evidence stood, not only whether it was packed */
                buf_adds(line, ",\"unit_ranks\":[");
                for (size_t j = 0; j < res->n_items; j++)
                    buf_printf(line, "%s%d", j ? "," : "", res->items[j].rank);
                buf_addc(line, ']');
            }
            buf_addc(line, '}');
            cairn_recall_free(res);
        }
        buf_addc(line, '}');
    }
    buf_adds(line, "}}\n");
    free(found);
    free(ranks);
    return 0;
}

static void line_head(const struct eval_run *r, const struct eval_conv *c, const struct eval_q *q,
                      struct buf *line)
{
    char ts[40];
    buf_adds(line, "{\"dataset\":");
    buf_add_json_str(line, r->dataset, strlen(r->dataset));
    buf_adds(line, ",\"conversation\":");
    buf_add_json_str(line, c->name, strlen(c->name));
    buf_adds(line, ",\"question_id\":");
    buf_add_json_str(line, q->id, strlen(q->id));
    buf_adds(line, ",\"category\":");
    buf_add_json_str(line, q->category, strlen(q->category));
    buf_printf(line, ",\"apart\":%s", q->apart ? "true" : "false");
    if (!r->lean) {
        buf_adds(line, ",\"question\":");
        buf_add_json_str(line, q->question, strlen(q->question));
    }
    if (q->now != CAIRN_NO_TIME) {
        cairn_format_time(q->now, 0, ts, sizeof ts);
        buf_printf(line, ",\"now\":\"%s\"", ts);
    }
    buf_adds(line, ",\"evidence\":[");
    for (size_t e = 0; e < q->n_ev; e++) {
        if (e)
            buf_addc(line, ',');
        add_id(line, c, q->ev[e].session, q->ev[e].message);
    }
    buf_addc(line, ']');
}

int eval_run_conv(void *arg, struct eval_conv *c)
{
    struct eval_run *r = arg;
    struct cairn *db = NULL;
    struct buf line = BUF_INIT;
    size_t asked = 0, msgs = 0;
    int rc = 1;
    if (r->limit && r->scored >= (size_t)r->limit)
        return EVAL_STOP;
    if (!c->n_qs)
        return 0;
    /* Embedding (when a model is present) happens in cairn_add_session
     * and counts as load time, with the settings `cairn add` has: no
     * override here, so the table is what a user gets. */
    double t0 = os_now_ms();
    if (cli_db_open(":memory:", 0, &db)) {
        cli_error("eval: cannot open an in-memory store: %s",
                  db ? cairn_errmsg(db) : "out of memory");
        goto out;
    }
    if (eval_conv_add(db, c, NULL, "eval", &msgs))
        goto out;
    double t1 = os_now_ms(), rec0 = r->recall_ms;
    r->load_ms += t1 - t0;
    for (size_t i = 0; i < c->n_qs; i++) {
        const struct eval_q *q = &c->qs[i];
        if (r->limit && r->scored >= (size_t)r->limit)
            break;
        struct eval_cat *cat = category(r, q->category, q->apart);
        if (!cat) {
            cli_error("eval: out of memory");
            goto out;
        }
        int role = evidence_role(db, q);
        struct eval_cat *rcat = q->apart ? NULL : role_category(r, role);
        if (!q->apart && !rcat) {
            cli_error("eval: out of memory");
            goto out;
        }
        buf_reset(&line);
        line_head(r, c, q, &line);
        buf_printf(&line, ",\"ev_in_reply\":%s", role == EVAL_ROLE_REPLY ? "true" : "false");
        if (ask(r, db, c, q, cat, rcat, role, &line))
            goto out;
        if (line.err) {
            cli_error("eval: %s: question %s: output line too large", c->name, q->id);
            goto out;
        }
        if (r->out && fwrite(line.p, 1, line.n, r->out) != line.n) {
            cli_error("eval: cannot write the --out file");
            goto out;
        }
        r->scored++;
        asked++;
    }
    if (!r->quiet)
        fprintf(stderr, "eval: %s: %zu sessions, %zu messages loaded in %.2f s; %zu questions "
                "in %.2f s\n", c->name, c->n_sess + c->n_jsess, msgs, (t1 - t0) / 1e3, asked,
                (r->recall_ms - rec0) / 1e3);
    rc = r->limit && r->scored >= (size_t)r->limit ? EVAL_STOP : 0;
out:
    buf_release(&line);
    cairn_close(db);
    if (rc == 1)
        r->failed = 1;
    return rc;
}
