/*
 * report.c: what a run prints. A Markdown report (the ranking policy's
 * hash, whether the data is a development set, the data counts, then two
 * primary tables: rows = method x category plus an "all" row over the
 * categories not reported apart, columns = budgets, cells = share of
 * questions with all their evidence packed, then with all of it packed
 * whole (strict); then the "all" row in detail)
 * and an SVG chart of the "all" row against the budget, one line per
 * method, written by hand: no scripts, no external fonts, no libraries.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "../cli.h"

static double pct(size_t a, size_t n)
{
    return n ? 100.0 * (double)a / (double)n : 0.0;
}

/* Category indexes in report order: by name, the ones reported apart last. */
static size_t *cat_order(const struct eval_run *r)
{
    size_t *o = malloc((r->n_cats ? r->n_cats : 1) * sizeof *o);
    if (!o)
        return NULL;
    for (size_t i = 0; i < r->n_cats; i++)
        o[i] = i;
    for (size_t i = 1; i < r->n_cats; i++) {          /* insertion sort: a handful */
        size_t v = o[i], j = i;
        while (j > 0) {
            const struct eval_cat *a = &r->cats[o[j - 1]], *b = &r->cats[v];
            int gt = a->apart != b->apart ? a->apart > b->apart : strcmp(a->name, b->name) > 0;
            if (!gt)
                break;
            o[j] = o[j - 1];
            j--;
        }
        o[j] = v;
    }
    return o;
}

static void budget_label(int b, char *out, size_t n)
{
    if (b % 1000 == 0)
        snprintf(out, n, "%dk", b / 1000);
    else
        snprintf(out, n, "%d", b);
}

static void counts_md(const struct eval_run *r, FILE *f)
{
    const struct eval_counts *k = &r->counts;
    fprintf(f, "%zu conversations, %zu sessions, %zu messages; %zu questions in the files, "
            "%zu scored.\n\n", k->convs, k->sessions, k->messages, k->questions, r->scored);
    fprintf(f, "Evidence ids: %zu read, %zu repaired (malformed, mapped by the documented "
            "rule), %zu unresolved (dropped). Questions left with no evidence: %zu "
            "(not scored", k->ev_ids, k->ev_repaired, k->ev_unresolved, k->q_no_evidence);
    if (k->q_no_evidence_apart)
        fprintf(f, "; %zu of them abstention questions", k->q_no_evidence_apart);
    fprintf(f, ").");
    if (k->photo_turns)
        fprintf(f, " Photo turns indexed with their caption: %zu.", k->photo_turns);
    if (k->fallback_sessions)
        fprintf(f, " Answer sessions with no has_answer turn (all their user turns taken as "
                "evidence): %zu, in %zu questions.", k->fallback_sessions, k->fallback_questions);
    if (k->undated)
        fprintf(f, " Undated sessions: %zu.", k->undated);
    if (k->spans)
        fprintf(f, " Answer spans: %zu, in %zu questions.", k->spans, k->q_spans);
    fprintf(f, "\n\n");
}

enum metric { M_ALL, M_STRICT, M_SPANS };

/* The questions a cell counts for metric m, and how many it scores. */
static size_t cell_hits(const struct eval_cell *c, enum metric m)
{
    return m == M_ALL ? c->all : m == M_STRICT ? c->strict : c->spans;
}

static size_t cell_n(const struct eval_cell *c, enum metric m)
{
    return m == M_SPANS ? c->spans_n : c->n;
}

/* Whether any question of the run came with answer spans: only then do
 * the reports show that metric (the other datasets' stay as they were). */
static int has_spans(const struct eval_run *r)
{
    struct eval_cell t;
    if (!r->n_methods || !r->n_budgets)
        return 0;
    eval_run_total(r, 0, 0, &t);
    return t.spans_n > 0;
}

/* A table's head: method, the row's name, n, one column per budget. */
static void table_head(const struct eval_run *r, const char *rows, FILE *f)
{
    char bl[32];
    fprintf(f, "| method | %s | n |", rows);
    for (size_t b = 0; b < r->n_budgets; b++) {
        budget_label(r->budgets[b], bl, sizeof bl);
        fprintf(f, " %s |", bl);
    }
    fprintf(f, "\n|---|---|---:|");
    for (size_t b = 0; b < r->n_budgets; b++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
}

/* One primary table: rows = method x category plus the "all" row, cells =
 * the share of questions counted by metric m. */
static void primary_table(const struct eval_run *r, const size_t *order, enum metric m_,
                          FILE *f)
{
    table_head(r, "category", f);
    for (size_t m = 0; m < r->n_methods; m++) {
        int printed_all = 0;
        for (size_t ci = 0; ci <= r->n_cats; ci++) {
            const struct eval_cat *cat = ci < r->n_cats ? &r->cats[order[ci]] : NULL;
            if (!printed_all && (!cat || cat->apart)) {
                struct eval_cell t;
                eval_run_total(r, m, 0, &t);
                fprintf(f, "| %s | **all** | %zu |", r->methods[m].name, cell_n(&t, m_));
                for (size_t b = 0; b < r->n_budgets; b++) {
                    eval_run_total(r, m, b, &t);
                    fprintf(f, " **%.1f%%** |", pct(cell_hits(&t, m_), cell_n(&t, m_)));
                }
                fprintf(f, "\n");
                printed_all = 1;
            }
            if (!cat)
                break;
            const struct eval_cell *c0 = &cat->cells[m * r->n_budgets];
            if (m_ == M_SPANS && !c0->spans_n)
                continue;
            fprintf(f, "| %s | %s%s | %zu |", r->methods[m].name, cat->name,
                    cat->apart ? " (apart)" : "", cell_n(c0, m_));
            for (size_t b = 0; b < r->n_budgets; b++) {
                const struct eval_cell *c = &cat->cells[m * r->n_budgets + b];
                fprintf(f, " %.1f%% |", pct(cell_hits(c, m_), cell_n(c, m_)));
            }
            fprintf(f, "\n");
        }
    }
}

/* The "all" questions split by where their evidence is (run.c), when any
 * of them has evidence in an assistant reply. */
static void role_table(const struct eval_run *r, enum metric m_, FILE *f)
{
    table_head(r, "evidence", f);
    for (size_t m = 0; m < r->n_methods; m++) {
        for (int k = 0; k < 2; k++) {
            const struct eval_cat *cat = &r->roles[k];
            const struct eval_cell *c0 = &cat->cells[m * r->n_budgets];
            fprintf(f, "| %s | %s | %zu |", r->methods[m].name, cat->name, cell_n(c0, m_));
            for (size_t b = 0; b < r->n_budgets; b++) {
                const struct eval_cell *c = &cat->cells[m * r->n_budgets + b];
                if (cell_n(c, m_))
                    fprintf(f, " %.1f%% |", pct(cell_hits(c, m_), cell_n(c, m_)));
                else
                    fprintf(f, " – |");
            }
            fprintf(f, "\n");
        }
    }
}

static int has_reply_evidence(const struct eval_run *r)
{
    return r->roles && r->n_methods && r->n_budgets &&
           r->roles[EVAL_ROLE_REPLY].cells[0].n > 0;
}

/* --explain: the missed evidence turns of the "all" questions by where
 * their unit ranked in the whole ranking. Near the top and missed: the
 * packing dropped it; deep or unmatched: the ranking did. */
static void rank_table(const struct eval_run *r, FILE *f)
{
    static const char *const role_name[2] = { "evidence in a reply",
                                              "evidence in user turns only" };
    fprintf(f, "\n### Missed evidence by rank (--explain)\n\nEach evidence turn of a question "
            "not fully recalled, by its unit's place in the whole ranking (a recall of "
            "everything that matches): ranked in the top 10 and missed is packing; deep or "
            "unmatched (no word and no dense hit) is ranking.\n\n"
            "| method | evidence | budget | 1-10 | 11-30 | 31-100 | >100 | unmatched |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (size_t m = 0; m < r->n_methods; m++) {
        for (int k = 0; k < 2; k++) {
            if (!r->roles && k == EVAL_ROLE_REPLY)
                continue;
            for (size_t b = 0; b < r->n_budgets; b++) {
                const size_t *v = r->missed_by_rank[(m * r->n_budgets + b) * 2 + (size_t)k];
                fprintf(f, "| %s | %s | %d |", r->methods[m].name,
                        r->roles ? role_name[k] : "all", r->budgets[b]);
                for (int j = 0; j < EVAL_RANK_BUCKETS; j++)
                    fprintf(f, " %zu |", v[j]);
                fprintf(f, "\n");
            }
        }
    }
}

void eval_report_md(const struct eval_run *r, FILE *f)
{
    size_t *order = cat_order(r);
    if (!order)
        return;
    fprintf(f, "## %s: evidence recall\n\n", r->label);
    fprintf(f, "Ranking policy %s (`cairn --version` prints it: a hash of every tuned ranking "
            "constant, src/recall/policy.c). Data: %s\n\n", cairn_policy_hash(),
            r->dev ? "a **development set**: the ranking's constants were tuned on it, so "
            "expect lower figures on data cairn was not tuned on." :
            "not marked as a development set (`--dev`).");
    if (r->min_rel_score > 0)
        fprintf(f, "Recall with the relative score cut %g (`--min-rel-score`, as the MCP server "
                "asks it).\n\n", r->min_rel_score);
    counts_md(r, f);
    fprintf(f, "### Questions with all their evidence packed\n\n");
    primary_table(r, order, M_ALL, f);
    fprintf(f, "\n### Strict: all their evidence packed whole\n\nEvery evidence turn's "
            "whole text is in the packed text: a turn packed only as an excerpt does not "
            "count.\n\n");
    primary_table(r, order, M_STRICT, f);
    int spans = has_spans(r);
    if (spans) {
        fprintf(f, "\n### Answer spans present\n\nEvery answer span of the question appears "
                "in the packed text (white space runs as one space, case folded); n counts the "
                "questions that have spans.\n\n");
        primary_table(r, order, M_SPANS, f);
    }
    if (has_reply_evidence(r)) {
        fprintf(f, "\n### By where the evidence is\n\nThe questions of \"all\" again: those "
                "with at least one evidence turn in an assistant reply, and those whose "
                "evidence is all in user turns (all their evidence packed%s).\n\n",
                spans ? "; then answer spans present" : "");
        role_table(r, M_ALL, f);
        if (spans) {
            fprintf(f, "\n");
            role_table(r, M_SPANS, f);
        }
    }
    if (r->explain && r->missed_by_rank)
        rank_table(r, f);
    fprintf(f, "\n### The \"all\" row in detail\n\n| method | budget | all | strict |%s any | "
            "mean fraction | mean tokens | hits packed as excerpts | ms per call |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|%s\n", spans ? " spans |" : "",
            spans ? "---:|" : "");
    for (size_t m = 0; m < r->n_methods; m++) {
        for (size_t b = 0; b < r->n_budgets; b++) {
            struct eval_cell t;
            eval_run_total(r, m, b, &t);
            double n = t.n ? (double)t.n : 1.0;
            fprintf(f, "| %s | %d | %.1f%% | %.1f%% |", r->methods[m].name, r->budgets[b],
                    pct(t.all, t.n), pct(t.strict, t.n));
            if (spans)
                fprintf(f, " %.1f%% |", pct(t.spans, t.spans_n));
            fprintf(f, " %.1f%% | %.3f | %.0f | %zu of %zu | %.1f |\n", pct(t.any, t.n),
                    t.frac_sum / n, t.tokens_sum / n, t.excerpt_hits, t.hits, t.ms_sum / n);
        }
    }
    size_t calls = r->scored * r->n_methods * r->n_budgets;
    fprintf(f, "\nTime: loading %.1f s, recall %.1f s (%zu calls, %.1f ms each).\n",
            r->load_ms / 1e3, r->recall_ms / 1e3, calls,
            calls ? r->recall_ms / (double)calls : 0.0);
    free(order);
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

/* One method's line for metric m against the budget; dash: the stroke's
 * dash pattern, or NULL for a solid line. */
static void svg_line(FILE *f, const struct eval_run *r, size_t method, enum metric m,
                     const double *xs, double T, double ph, const char *col, double width,
                     const char *dash)
{
    struct eval_cell t;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%g\"", col, width);
    if (dash)
        fprintf(f, " stroke-dasharray=\"%s\"", dash);
    fprintf(f, " points=\"");
    for (size_t b = 0; b < r->n_budgets; b++) {
        eval_run_total(r, method, b, &t);
        fprintf(f, "%s%.1f,%.1f", b ? " " : "", xs[b],
                T + ph - ph * pct(cell_hits(&t, m), cell_n(&t, m)) / 100.0);
    }
    fprintf(f, "\"/>\n");
}

int eval_report_svg(const struct eval_run *r, const char *path)
{
    static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                          "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f" };
    const double W = 560, H = 340, L = 60, R = 150, T = 44, B = 52;
    const double pw = W - L - R, ph = H - T - B;
    const int spans = has_spans(r);
    char bl[32];
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_error("eval: cannot write %s: %s", path, strerror(errno));
        return 1;
    }
    double lo = log((double)r->budgets[0]), hi = log((double)r->budgets[r->n_budgets - 1]);
    struct eval_cell t;
    eval_run_total(r, 0, 0, &t);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H, W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
    fprintf(f, "<text x=\"%.0f\" y=\"22\" font-size=\"14\" font-weight=\"bold\">", L);
    xml_text(f, r->label);
    fprintf(f, ": all evidence packed (n=%zu)</text>\n", t.n);
    /* grid and y ticks */
    for (int y = 0; y <= 100; y += 20) {
        double py = T + ph - ph * y / 100.0;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n",
                L, py, L + pw, py);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>\n", L - 6,
                py + 4, y);
    }
    /* x ticks at each budget, log scale */
    double *xs = malloc(r->n_budgets * sizeof *xs);
    if (!xs) {
        fclose(f);
        cli_error("eval: out of memory");
        return 1;
    }
    for (size_t b = 0; b < r->n_budgets; b++) {
        xs[b] = hi > lo ? L + pw * (log((double)r->budgets[b]) - lo) / (hi - lo) : L + pw / 2;
        budget_label(r->budgets[b], bl, sizeof bl);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n",
                xs[b], T + ph, xs[b], T + ph + 5);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", xs[b],
                T + ph + 19, bl);
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n",
            L, T + ph, L + pw, T + ph);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n",
            L, T, L, T + ph);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">token budget</text>\n",
            L + pw / 2, H - 12);
    fprintf(f, "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 16 %.1f)\">"
            "recall</text>\n", T + ph / 2, T + ph / 2);
    for (size_t m = 0; m < r->n_methods; m++) {
        const char *col = colors[m % (sizeof colors / sizeof colors[0])];
        svg_line(f, r, m, M_ALL, xs, T, ph, col, 2, NULL);
        /* strict, dashed: all evidence packed whole */
        svg_line(f, r, m, M_STRICT, xs, T, ph, col, 1.5, "5,4");
        /* answer spans, dotted */
        if (spans)
            svg_line(f, r, m, M_SPANS, xs, T, ph, col, 1.5, "1.5,3");
        for (size_t b = 0; b < r->n_budgets; b++) {
            eval_run_total(r, m, b, &t);
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s %d: "
                    "%.1f%%</title></circle>\n", xs[b], T + ph - ph * pct(t.all, t.n) / 100.0,
                    col, r->methods[m].name, r->budgets[b], pct(t.all, t.n));
        }
        double ly = T + 10 + 20.0 * (double)m;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"4\" fill=\"%s\"/>\n",
                L + pw + 16, ly - 4, col);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", L + pw + 36, ly + 1);
        xml_text(f, r->methods[m].name);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">solid: all evidence</text>\n"
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">dashed: strict</text>\n"
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">(packed whole)</text>\n",
            L + pw + 16, T + 20.0 * (double)r->n_methods + 16, L + pw + 16,
            T + 20.0 * (double)r->n_methods + 31, L + pw + 16,
            T + 20.0 * (double)r->n_methods + 45);
    if (spans)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">dotted: answer spans</text>\n"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">(in the packed text)</text>\n",
                L + pw + 16, T + 20.0 * (double)r->n_methods + 60, L + pw + 16,
                T + 20.0 * (double)r->n_methods + 74);
    fprintf(f, "</svg>\n");
    free(xs);
    if (fclose(f)) {
        cli_error("eval: cannot write %s: %s", path, strerror(errno));
        return 1;
    }
    return 0;
}
