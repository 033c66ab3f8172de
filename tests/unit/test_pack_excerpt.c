/*
 * test_pack_excerpt.c: excerpts of long messages (src/recall/pack.c).
 *
 * pack_excerpt once looked for the best passage again after every pick,
 * which is quadratic in the passages (a 50 MB paste took minutes); it now
 * sorts them once. The old algorithm is kept here as the reference: on
 * random small inputs (ties in score included) both must give the same
 * excerpt, byte for byte. Then whole recalls: a message longer than the
 * scan cap is recalled as an excerpt of its opening 4 MB, and one under it
 * from anywhere in it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_open.h"
#include "internal.h"
#include "recall/recall.h"
#include "text/tokcount.h"
#include "text/tokenize.h"

/* ---- the old algorithm (main before the fix), verbatim but renamed ---- */

struct opsg { size_t a, b; double score; int keep; };
struct oterm_hits { const struct query *q; double score; char *seen; };

static int opsg_cb(void *arg, const char *tok, size_t n, size_t s, size_t e, int col)
{
    struct oterm_hits *th = arg;
    (void)s, (void)e, (void)col;
    for (int t = 0; t < th->q->nt; t++) {
        if (!th->seen[t] && strlen(th->q->t[t].norm) == n && !memcmp(th->q->t[t].norm, tok, n)) {
            th->seen[t] = 1;
            th->score += th->q->t[t].idf_msg > 0 ? th->q->t[t].idf_msg : 1;
        }
    }
    return 0;
}

static int osplit(const char *s, size_t n, struct opsg **out)
{
    int cap = 16, np = 0;
    struct opsg *v = malloc((size_t)cap * sizeof *v);
    size_t a = 0;
    while (a < n) {
        size_t b = a, best = 0;
        size_t lim = a + 400 < n ? a + 400 : n;
        for (b = a; b < lim; b++) {
            char c = s[b];
            if (c == '\n' && b > a + 40) {
                best = b + 1;
                break;
            }
            if ((c == '.' || c == '?' || c == '!') && b + 1 < n && (s[b + 1] == ' ' || s[b + 1] == '\n') &&
                b > a + 120) {
                best = b + 1;
                break;
            }
            if ((unsigned char)c == 0xE3 && b + 2 < n && (unsigned char)s[b + 1] == 0x80 &&
                (unsigned char)s[b + 2] == 0x82 && b > a + 90) {
                best = b + 3;
                break;
            }
        }
        if (!best) {
            best = lim;
            size_t k = best;
            while (k > a + 200 && k < n && s[k] != ' ' && s[k] != '\n')
                k--;
            if (k > a + 200 && k < n)
                best = k + 1;
            while (best < n && ((unsigned char)s[best] & 0xC0) == 0x80)
                best++;
        }
        if (np == cap) {
            cap *= 2;
            v = realloc(v, (size_t)cap * sizeof *v);
        }
        v[np].a = a;
        v[np].b = best;
        v[np].score = 0;
        v[np].keep = 0;
        np++;
        a = best;
    }
    *out = v;
    return np;
}

static char *old_excerpt(const char *s, size_t n, const struct query *q, int max_tokens)
{
    struct opsg *v = NULL;
    struct buf b = BUF_INIT;
    char *seen = calloc((size_t)(q->nt ? q->nt : 1), 1);
    int np = osplit(s, n, &v);
    if (np <= 0) {
        free(v);
        free(seen);
        return NULL;
    }
    for (int i = 0; i < np; i++) {
        struct oterm_hits th = { q, 0, seen };
        memset(seen, 0, (size_t)(q->nt ? q->nt : 1));
        text_tokenize(s + v[i].a, v[i].b - v[i].a, 1, opsg_cb, &th);
        v[i].score = th.score;
    }
    int used = 0, sep = text_count_tokens(" … ", 5);
    int c0 = text_count_tokens(s + v[0].a, v[0].b - v[0].a);
    if (c0 <= max_tokens / 3 || (np == 1)) {
        v[0].keep = 1;
        used += c0;
    }
    for (;;) {
        int best = -1;
        for (int i = 0; i < np; i++) {
            if (!v[i].keep && v[i].score > 0 && (best < 0 || v[i].score > v[best].score))
                best = i;
        }
        if (best < 0)
            break;
        int c = text_count_tokens(s + v[best].a, v[best].b - v[best].a) + sep;
        if (used + c > max_tokens) {
            v[best].score = 0;
            continue;
        }
        v[best].keep = 1;
        used += c;
    }
    for (int i = 1; i < np; i++) {
        if (v[i].keep || !v[i - 1].keep)
            continue;
        int c = text_count_tokens(s + v[i].a, v[i].b - v[i].a);
        if (used + c <= max_tokens) {
            v[i].keep = 1;
            used += c;
        }
    }
    int last = -2;
    for (int i = 0; i < np; i++) {
        if (!v[i].keep)
            continue;
        if (last != i - 1 && b.n)
            buf_adds(&b, " … ");
        else if (last != i - 1 && i > 0)
            buf_adds(&b, "… ");
        size_t a = v[i].a, e = v[i].b;
        while (e > a && (s[e - 1] == '\n' || s[e - 1] == ' '))
            e--;
        if (b.n && last == i - 1)
            buf_addc(&b, ' ');
        buf_add(&b, s + a, e - a);
        last = i;
    }
    if (last != np - 1 && b.n)
        buf_adds(&b, " …");
    if (b.n && text_count_tokens(b.p, b.n) > max_tokens) {
        size_t k = text_prefix_within(b.p, b.n, max_tokens - 2);
        buf_truncate(&b, k);
        buf_adds(&b, " …");
    }
    if (!b.n) {
        size_t k = text_prefix_within(s, n, max_tokens - 2);
        buf_add(&b, s, k);
        buf_adds(&b, " …");
    }
    free(v);
    free(seen);
    return buf_detach(&b, NULL);
}

/* ---- random inputs ---- */

static const char *const words[] = {
    "the", "deploy", "script", "database", "migration", "timeout", "server", "cache",
    "printed", "worker", "queue", "retry", "memory", "disk", "会议", "数据库", "log",
    "error", "value", "branch", "commit", "release", "index", "123", "a", "of",
};
static const char *const ends[] = { " ", " ", " ", " ", ". ", "? ", "\n", "。", ", ", "  " };

static void random_text(struct buf *b, size_t size, unsigned *seed)
{
    while (b->n < size) {
        buf_adds(b, words[rand_r(seed) % (sizeof words / sizeof *words)]);
        buf_adds(b, ends[rand_r(seed) % (sizeof ends / sizeof *ends)]);
    }
}

static void test_same_as_old(void)
{
    static const char *const questions[] = {
        "what did the deploy script print about the database migration timeout?",
        "server cache memory", "数据库 会议 timeout", "retry queue", "nothing matches zzz",
    };
    unsigned seed = 20261201;
    int same = 0, cases = 0;
    for (int c = 0; c < 1500; c++) {
        struct query q;
        struct buf text = BUF_INIT;
        T_CHECK(query_parse(&q, questions[c % 5], 0, 0) == CAIRN_OK);
        /* weights with ties, and some 0 (counted as 1) */
        for (int t = 0; t < q.nt; t++)
            q.t[t].idf_msg = (double)(rand_r(&seed) % 4) * 0.5;
        random_text(&text, (size_t)(rand_r(&seed) % 20000), &seed);
        int max = 20 + rand_r(&seed) % 600;
        char *a = old_excerpt(text.p ? text.p : "", text.n, &q, max);
        char *b = pack_excerpt(text.p ? text.p : "", text.n, &q, max, 0, 0);
        if (!text.n) {
            same += a == NULL && b == NULL;     /* nothing to cut: both give up */
        } else if (a && b && !strcmp(a, b)) {
            same++;
        } else if (cases < 3) {
            fprintf(stderr, "differs at case %d (max %d):\n old: %s\n new: %s\n", c, max,
                    a ? a : "(null)", b ? b : "(null)");
            cases++;
        }
        free(a);
        free(b);
        buf_release(&text);
        query_free(&q);
    }
    T_EQ_INT(same, 1500);
}

/* ---- whole recalls of huge messages ---- */

static char dir[256], store[300];

/* Session id with one user turn of `size` bytes of filler, the word
 * `needle` in a sentence at byte `at`, and a short reply. */
static void add_big(struct cairn *h, const char *id, size_t size, size_t at, const char *needle)
{
    struct buf t = BUF_INIT;
    unsigned seed = 7;
    char sentence[128];
    snprintf(sentence, sizeof sentence, "The deploy script printed %s at the end.\n", needle);
    buf_init(&t, size + 256);
    while (t.n < at)
        random_text(&t, at, &seed);
    buf_adds(&t, sentence);
    random_text(&t, size, &seed);
    T_CHECK(!t.err);
    struct cairn_message m[2] = { { 0 }, { 0 } };
    m[0].role = "user";
    m[0].content = t.p;
    m[0].at = CAIRN_NO_TIME;
    m[1].role = "assistant";
    m[1].content = "Noted.";
    m[1].at = CAIRN_NO_TIME;
    struct cairn_session s = { 0 };
    s.id = id;
    s.started_at = s.ended_at = CAIRN_NO_TIME;
    s.messages = m;
    s.n_messages = 2;
    T_EQ_INT(cairn_add_session(h, &s, NULL), CAIRN_OK);
    buf_release(&t);
}

/* The recall of `question`: its item from session id, and the text. */
static int recall_has(struct cairn *h, const char *question, const char *id, const char *word,
                      int *excerpt)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    int found = 0;
    o.budget = 2000;
    o.method = CAIRN_METHOD_KEYWORD;
    T_EQ_INT(cairn_recall(h, question, &o, &r), CAIRN_OK);
    if (!r)
        return -1;
    T_CHECK(r->tokens <= 2000);
    T_EQ_INT(cairn_count_tokens(r->text, strlen(r->text)), r->tokens);
    *excerpt = -1;
    for (size_t i = 0; i < r->n_items; i++)
        if (!strcmp(r->items[i].session, id) && !strcmp(r->items[i].role, "user"))
            *excerpt = r->items[i].excerpt;
    found = strstr(r->text, word) != NULL;
    cairn_recall_free(r);
    return found;
}

static void test_big_messages(void)
{
    struct cairn *h = NULL;
    int ex;
    T_EQ_INT(t_open(store, 0, &h), CAIRN_OK);
    if (!h)
        return;
    /* 3 MB, under the cap: the passage near its end is found */
    add_big(h, "three", (size_t)3 << 20, ((size_t)3 << 20) - 5000, "quokkafrost");
    T_EQ_INT(recall_has(h, "what did the deploy script print, quokkafrost?", "three",
                        "quokkafrost", &ex), 1);
    T_EQ_INT(ex, 1);
    /* 6 MB: read up to 4 MB only. A word in its opening is excerpted; one
     * past 4 MB still finds the message (the index holds all of it) but
     * the excerpt comes from the opening */
    add_big(h, "six", (size_t)6 << 20, (size_t)1 << 20, "wombatglass");
    T_EQ_INT(recall_has(h, "what did the deploy script print, wombatglass?", "six",
                        "wombatglass", &ex), 1);
    T_EQ_INT(ex, 1);
    add_big(h, "six-late", (size_t)6 << 20, (size_t)5 << 20, "numbatsteel");
    T_EQ_INT(recall_has(h, "what did the deploy script print, numbatsteel?", "six-late",
                        "numbatsteel", &ex), 0);
    T_EQ_INT(ex, 1);
    cairn_close(h);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/cairn-excerpt-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
                                                                          : "/tmp");
    T_CHECK(mkdtemp(dir) != NULL);
    snprintf(store, sizeof store, "%s/m.db", dir);
    T_RUN(test_same_as_old);
    T_RUN(test_big_messages);
    char p[400];
    const char *const ext[] = { "", "-wal", "-shm", "-vec" };
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s%s", store, ext[i]);
        unlink(p);
    }
    rmdir(dir);
    return T_DONE();
}
