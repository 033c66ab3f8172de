/*
 * fuzz_eval_sessions.c: libFuzzer target for `cairn eval sessions`
 * (cli/eval/load_sessions.c, spans.c): sessions.jsonl, questions.jsonl and
 * a packed text, cut at NULs (fuzz.h).
 *
 * Checks: the parser accepts (0) or refuses with a message (1), never
 * anything else; an accepted folder has a session, every question an id,
 * a query, evidence that names a session of the folder, and non-empty
 * spans; its sessions load into a store (or are refused by cairn_add_json
 * with a reason); the span metric counts at most the spans it was given,
 * and a span found on its own is found in all the spans joined by line
 * breaks (white space and case are normalised the same way everywhere).
 */
#include <fcntl.h>
#include <sanitizer/common_interface_defs.h>

#include "fuzz.h"
#include "../../cli/cli.h"
#include "../../cli/eval/eval.h"

/* the real stderr: silenced around the calls, given back before a
 * finding so libFuzzer can say what it found */
static int err_fd = 2;

static void fail(void)
{
    dup2(err_fd, 2);
    abort();
}

static void check_spans(const struct eval_q *q, const char *text)
{
    long n = eval_spans_found(text, q->spans, q->n_spans);
    if (n < 0 || (size_t)n > q->n_spans)
        fail();
    size_t len = 1, self = 0;
    for (size_t i = 0; i < q->n_spans; i++) {
        long f = eval_spans_found(q->spans[i], &q->spans[i], 1);
        if (f < 0 || f > 1)
            fail();
        self += (size_t)f;
        len += strlen(q->spans[i]) + 1;
    }
    char *all = malloc(len), *p = all;
    if (!all)
        fail();
    for (size_t i = 0; i < q->n_spans; i++) {
        size_t l = strlen(q->spans[i]);
        memcpy(p, q->spans[i], l);
        p += l;
        *p++ = '\n';
    }
    *p = '\0';
    if (eval_spans_found(all, q->spans, q->n_spans) != (long)self)
        fail();
    free(all);
}

static void check_conv(const struct eval_conv *c, const char *text)
{
    if (!c->n_jsess)
        fail();
    for (size_t i = 0; i < c->n_qs; i++) {
        const struct eval_q *q = &c->qs[i];
        if (!q->id || !q->question || !*q->question || !q->category || !q->n_ev)
            fail();
        for (size_t e = 0; e < q->n_ev; e++) {
            size_t s = 0;
            while (s < c->n_jsess && (!c->jsess[s].id || strcmp(c->jsess[s].id, q->ev[e].session)))
                s++;
            if (s == c->n_jsess)
                fail();
        }
        for (size_t k = 0; k < q->n_spans; k++)
            if (!q->spans[k] || !*q->spans[k])
                fail();
        check_spans(q, text);
    }
    struct cairn *db = NULL;
    if (cairn_open(":memory:", 0, &db))
        fail();
    eval_conv_add(db, c, NULL, "fuzz", NULL);       /* 0, or 1 with a reason */
    cairn_close(db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int null = -1;
    if (null < 0) {
        null = open("/dev/null", O_WRONLY);
        err_fd = dup(2);
        if (null < 0 || err_fd < 0)
            abort();
        /* sanitizer reports go to the real stderr, always */
        __sanitizer_set_report_fd((void *)(intptr_t)err_fd);
        fuzz_tmpdir();
    }
    /* the loader's messages are noise here; libFuzzer's own lines are not,
     * so stderr is silenced only around the call */
    fflush(stderr);
    dup2(null, 2);
    struct fuzz_part p[3];
    fuzz_split(data, size, p, 3);
    char *text = fuzz_strdup(p[2]);
    struct eval_conv c;
    struct eval_counts k;
    memset(&k, 0, sizeof k);
    eval_conv_init(&c);
    c.name = "fuzz";
    int rc = eval_sessions_parse(&c, "fuzz", p[0].p, p[0].n, p[1].p, p[1].n, &k);
    if (rc != 0 && rc != 1)
        fail();
    if (rc == 0)
        check_conv(&c, text);
    eval_conv_free(&c);
    free(text);
    fflush(stderr);
    dup2(err_fd, 2);
    return 0;
}
