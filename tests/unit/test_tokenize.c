/*
 * test_tokenize.c: the word splitter, the stop words and the FTS5
 * tokenizer "cairn".
 *
 * Each case runs text_tokenize() and compares the token stream, written
 * as "tok tok +part +part" (a leading + marks a colocated token), with
 * the expected one; offsets are checked against the original bytes. Then
 * bad input (invalid UTF-8, NUL bytes, 10 MB without a space), the stop
 * word list in natural form, and an in-memory FTS5 table queried with
 * MATCH. Prints the tokenizer's throughput (not asserted).
 */
#include "internal.h"
#include "text/tokenize.h"
#include "t.h"

#include <stdlib.h>
#include <time.h>

struct collect {
    char out[4096];
    size_t n;
    const char *src;
    size_t src_n;
    int bad_span;
    int count;
    int max_len;
};

static int collect_cb(void *arg, const char *tok, size_t n, size_t start,
                      size_t end, int colocated)
{
    struct collect *c = arg;
    if (start >= end || end > c->src_n || n == 0)
        c->bad_span++;
    c->count++;
    if ((int)n > c->max_len)
        c->max_len = (int)n;
    if (c->n + n + 3 < sizeof c->out) {
        if (c->n)
            c->out[c->n++] = ' ';
        if (colocated)
            c->out[c->n++] = '+';
        memcpy(c->out + c->n, tok, n);
        c->n += n;
        c->out[c->n] = '\0';
    }
    return 0;
}

static const char *toks(const char *s, int for_query)
{
    static struct collect c;
    memset(&c, 0, sizeof c);
    c.src = s;
    c.src_n = strlen(s);
    text_tokenize(s, c.src_n, for_query, collect_cb, &c);
    T_EQ_INT(c.bad_span, 0);
    return c.out;
}

static void test_words(void)
{
    T_EQ_STR(toks("Hello, World!", 0), "hello world");
    T_EQ_STR(toks("running runs ran", 0), "run run ran");
    T_EQ_STR(toks("The cats were jumping", 0), "the cat were jump");
    T_EQ_STR(toks("Café STRASSE naïve", 0), "cafe strass naiv");
    T_EQ_STR(toks("don't John’s", 0), "don't john");
    T_EQ_STR(toks("ＡＢＣ ﬁle", 0), "abc file");               /* NFKC */
    T_EQ_STR(toks("Привет мир", 0), "привет мир");
    T_EQ_STR(toks("", 0), "");
    T_EQ_STR(toks("  ... !!! ", 0), "");
}

static void test_compounds(void)
{
    T_EQ_STR(toks("getUserName", 0), "getusername +get +user +name");
    T_EQ_STR(toks("getUserName", 1), "getusername");
    T_EQ_STR(toks("get_user_name", 0), "get_user_name +get +user +name");
    T_EQ_STR(toks("src/store.c", 0), "src/store.c +src +store +c +store.c");
    T_EQ_STR(toks("src/store.c", 1), "src/store.c");
    T_EQ_STR(toks("v1.2.3", 0), "v1.2.3 +v1 +2 +3");
    T_EQ_STR(toks("foo-bar", 0), "foo-bar +foo +bar");
    T_EQ_STR(toks("192.168.0.1", 0), "192.168.0.1 +192 +168 +0 +1");
    T_EQ_STR(toks("$HOME", 0), "$home +home");
    T_EQ_STR(toks("HTTPServer IDs", 0), "httpserver +http +server id");
    T_EQ_STR(toks("user2Name", 0), "user2name +user2 +name");
    T_EQ_STR(toks("1,000,000", 0), "1,000,000 +1 +000 +000");
    T_EQ_STR(toks("~/.bashrc --verbose", 0), "~/.bashrc +bashrc --verbose +verbos");
    /* parts are stemmed, wholes are not */
    T_EQ_STR(toks("running-tests", 0), "running-tests +run +test");
    /* trailing punctuation is not part of a compound */
    T_EQ_STR(toks("See foo. Then C++, or bar:", 0), "see foo then c or bar");
    T_EQ_STR(toks("...and ....foo", 0), "and foo");
    T_EQ_STR(toks("https://a.com/x", 1), "https://a.com/x");
}

static void test_cjk(void)
{
    T_EQ_STR(toks("我上周去了北京开会", 0), "我上 上周 周去 去了 了北 北京 京开 开会");
    T_EQ_STR(toks("北京", 1), "北京");
    T_EQ_STR(toks("北京大", 1), "北京 京大");                 /* 3 chars, 2 bigrams */
    T_EQ_STR(toks("我", 0), "我");
    T_EQ_STR(toks("用Python写代码", 0), "用 python 写代 代码");
    T_EQ_STR(toks("ｶﾀｶﾅ", 0), "カタ タカ カナ");             /* halfwidth -> full */
    T_EQ_STR(toks("２０２３年", 0), "2023 年");
    T_EQ_STR(toks("한국어", 0), "한국 국어");
    /* offsets of a bigram span both characters */
    struct collect c;
    memset(&c, 0, sizeof c);
    const char *s = "去北京";
    c.src = s;
    c.src_n = strlen(s);
    text_tokenize(s, c.src_n, 0, collect_cb, &c);
    T_EQ_INT(c.count, 2);
}

struct spans {
    size_t start[16], end[16];
    int n;
};

static int span_cb(void *arg, const char *tok, size_t n, size_t start,
                   size_t end, int colocated)
{
    struct spans *sp = arg;
    if (sp->n < 16) {
        sp->start[sp->n] = start;
        sp->end[sp->n] = end;
        sp->n++;
    }
    return 0;
}

static int stop_after_two(void *arg, const char *tok, size_t n, size_t start,
                          size_t end, int colocated)
{
    int *k = arg;
    return ++*k >= 2 ? 7 : 0;
}

static void test_offsets(void)
{
    struct spans sp = { { 0 }, { 0 }, 0 };
    const char *s = "  Café getUser 北京";
    text_tokenize(s, strlen(s), 0, span_cb, &sp);
    T_EQ_INT(sp.n, 5);
    T_EQ_INT(sp.start[0], 2);
    T_EQ_INT(sp.end[0], 7);                     /* "Café" is 5 bytes */
    T_EQ_INT(sp.start[1], 8);
    T_EQ_INT(sp.end[1], 15);                    /* getUser */
    T_EQ_INT(sp.start[2], 8);
    T_EQ_INT(sp.end[2], 11);                    /* get */
    T_EQ_INT(sp.start[3], 11);
    T_EQ_INT(sp.end[3], 15);                    /* User */
    T_EQ_INT(sp.start[4], 16);
    T_EQ_INT(sp.end[4], 22);                    /* 北京 */
    /* a non-zero callback return stops and is returned */
    int k = 0;
    T_EQ_INT(text_tokenize("a b c d", 7, 0, stop_after_two, &k), 7);
    T_EQ_INT(k, 2);
}

static void test_bad_input(void)
{
    T_EQ_STR(toks("abc\xff\xfe" "def", 0), "abc def");
    T_EQ_STR(toks("\xe5\x8c" "北京", 0), "北京");       /* cut sequence */
    T_EQ_STR(toks("\xc0\xaf" "x", 0), "x");             /* overlong */
    struct collect c;
    memset(&c, 0, sizeof c);
    c.src = "ab\0cd";
    c.src_n = 5;
    text_tokenize("ab\0cd", 5, 0, collect_cb, &c);
    T_EQ_STR(c.out, "ab cd");
    T_EQ_INT(text_tokenize(NULL, 0, 0, collect_cb, &c), 0);

    /* 10 MB without a space: letters, CJK, and a dotted run */
    size_t n = (size_t)10 << 20;
    char *big = malloc(n);
    T_CHECK(big != NULL);
    if (!big)
        return;
    memset(big, 'a', n);
    memset(&c, 0, sizeof c);
    c.src = big;
    c.src_n = n;
    text_tokenize(big, n, 0, collect_cb, &c);
    T_EQ_INT(c.count, 1);
    T_EQ_INT(c.max_len, 64);
    T_EQ_INT(c.bad_span, 0);
    for (size_t i = 0; i + 3 <= n; i += 3)
        memcpy(big + i, "字", 3);
    memset(&c, 0, sizeof c);
    c.src = big;
    c.src_n = n - n % 3;
    text_tokenize(big, c.src_n, 0, collect_cb, &c);
    T_EQ_INT(c.count, (int)(n / 3) - 1);
    for (size_t i = 0; i < n; i++)
        big[i] = (i & 1) ? '.' : 'x';
    memset(&c, 0, sizeof c);
    c.src = big;
    c.src_n = n;
    text_tokenize(big, n, 0, collect_cb, &c);
    T_EQ_INT(c.count, 1 + (int)(n / 2));       /* whole + every part */
    T_CHECK(c.max_len <= 64);
    /* random bytes never crash and spans stay inside */
    unsigned seed = 99;
    for (size_t i = 0; i < n; i++)
        big[i] = (char)(rand_r(&seed) & 0xff);
    memset(&c, 0, sizeof c);
    c.src = big;
    c.src_n = n;
    text_tokenize(big, n, 0, collect_cb, &c);
    T_EQ_INT(c.bad_span, 0);
    T_CHECK(c.max_len <= 64);
    free(big);
}

static int stop_all(const char *s)
{
    /* every token of s is a stop word */
    struct collect c;
    memset(&c, 0, sizeof c);
    c.src = s;
    c.src_n = strlen(s);
    text_tokenize(s, c.src_n, 1, collect_cb, &c);
    int ok = c.count > 0;
    char *p = c.out;
    while (*p) {
        char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (!text_is_stopword(p, len)) {
            fprintf(stderr, "not a stop word: %.*s\n", (int)len, p);
            ok = 0;
        }
        p += len;
        if (*p)
            p++;
    }
    return ok;
}

static void test_stopwords(void)
{
    T_CHECK(stop_all(
        "a an the and or but if then else so than nor not no yes of to in on "
        "at by for with from about into onto over under as per via up down out "
        "off again further once until while during before after above below "
        "between through because whether ever also just only very too quite "
        "rather really even still yet already is am are was were be been being "
        "have has had having do does did doing done will would shall should "
        "can could may might must ought I me my mine myself you your yours "
        "yourself yourselves he him his himself she her hers herself it its "
        "itself we us our ours ourselves they them their theirs themselves one "
        "ones what which who whom whose when where why how whatever whoever "
        "whenever wherever however this that these those there here all any "
        "both each few more most other others some such own same many much lot "
        "lots every either neither another don't didn't doesn't isn't aren't "
        "wasn't weren't can't cannot couldn't won't wouldn't shouldn't haven't "
        "hasn't hadn't I'm I've I'd I'll you're you've you'd you'll he's she's "
        "it's we're we've they're they've that's what's there's here's let's "
        "ok okay yeah hi hello hey please thanks thank like well oh um uh "
        "What Did The Does"));
    T_CHECK(stop_all("的 了 我 你 是 在 吗 呢 吧 和 也 都 就 这 那 有 不"));
    T_CHECK(stop_all("什么 怎么 我们 你们 他们 这个 那个 没有 可以 因为 所以 但是"));
    T_CHECK(!text_is_stopword("beijing", 7));
    T_CHECK(!text_is_stopword("北京", 6));
    T_CHECK(!text_is_stopword("trip", 4));
    T_CHECK(!text_is_stopword("run", 3));
    T_CHECK(!text_is_stopword("", 0));
    T_CHECK(!text_is_stopword(NULL, 0));
    T_CHECK(!text_is_stopword("thee", 4));
    T_CHECK(!text_is_stopword("th", 2));
}

/* ---- FTS5 ---------------------------------------------------------------- */

static int fts_hits(sqlite3 *db, const char *q, char *ids, size_t cap)
{
    sqlite3_stmt *st = NULL;
    int n = 0;
    ids[0] = '\0';
    if (sqlite3_prepare_v2(db, "SELECT rowid FROM t WHERE t MATCH ?1 ORDER BY rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) {
        size_t len = strlen(ids);
        snprintf(ids + len, cap - len, "%s%lld", n ? "," : "",
                 (long long)sqlite3_column_int64(st, 0));
        n++;
    }
    if (sqlite3_finalize(st) != SQLITE_OK)
        return -1;
    return n;
}

static const char *hits(sqlite3 *db, const char *q)
{
    static char ids[256];
    if (fts_hits(db, q, ids, sizeof ids) < 0)
        return "error";
    return ids;
}

static void test_fts5(void)
{
    sqlite3 *db = NULL;
    T_EQ_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
    T_EQ_INT(store_fts_register(db), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(db, "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cairn')",
                          NULL, NULL, NULL), SQLITE_OK);
    static const char *const rows[] = {
        /* 1 */ "She runs every morning before work.",
        /* 2 */ "我上周去了北京开会，见了很多老朋友。",
        /* 3 */ "The bug is in getUserName in src/store.c, fixed in v1.2.3.",
        /* 4 */ "Running late again, sorry!",
        /* 5 */ "東京で会議があります",
        /* 6 */ "set $HOME and use snake_case_names with foo-bar",
    };
    sqlite3_stmt *ins = NULL;
    T_EQ_INT(sqlite3_prepare_v2(db, "INSERT INTO t(rowid, x) VALUES (?1, ?2)", -1,
                                &ins, NULL), SQLITE_OK);
    for (int i = 0; i < (int)(sizeof rows / sizeof rows[0]); i++) {
        sqlite3_bind_int(ins, 1, i + 1);
        sqlite3_bind_text(ins, 2, rows[i], -1, SQLITE_STATIC);
        T_EQ_INT(sqlite3_step(ins), SQLITE_DONE);
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);

    T_EQ_STR(hits(db, "\"北京\""), "2");
    T_EQ_STR(hits(db, "\"北京开会\""), "2");               /* phrase of bigrams */
    T_EQ_STR(hits(db, "\"上海\""), "");
    T_EQ_STR(hits(db, "\"東京\""), "5");
    T_EQ_STR(hits(db, "running"), "1,4");                   /* stems to run */
    T_EQ_STR(hits(db, "runs"), "1,4");
    T_EQ_STR(hits(db, "\"getUserName\""), "3");
    T_EQ_STR(hits(db, "user"), "3");                        /* camelCase part */
    T_EQ_STR(hits(db, "name"), "3,6");                      /* part of names too */
    T_EQ_STR(hits(db, "\"src/store.c\""), "3");
    T_EQ_STR(hits(db, "store"), "3");
    T_EQ_STR(hits(db, "\"v1.2.3\""), "3");
    T_EQ_STR(hits(db, "\"v1.2.4\""), "");
    T_EQ_STR(hits(db, "\"$HOME\""), "6");
    T_EQ_STR(hits(db, "home"), "6");
    T_EQ_STR(hits(db, "\"foo-bar\""), "6");
    T_EQ_STR(hits(db, "snake"), "6");
    T_EQ_STR(hits(db, "get*"), "3");                        /* prefix query */

    /* highlight() uses the offsets into the original text; a part
     * shares its position with the whole, so the whole is marked */
    sqlite3_stmt *st = NULL;
    T_EQ_INT(sqlite3_prepare_v2(db, "SELECT highlight(t, 0, '[', ']') FROM t "
                                "WHERE t MATCH '\"北京\"'", -1, &st, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    T_EQ_STR((const char *)sqlite3_column_text(st, 0),
             "我上周去了[北京]开会，见了很多老朋友。");
    sqlite3_finalize(st);
    T_EQ_INT(sqlite3_prepare_v2(db, "SELECT highlight(t, 0, '[', ']') FROM t "
                                "WHERE t MATCH 'store'", -1, &st, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    T_EQ_STR((const char *)sqlite3_column_text(st, 0),
             "The bug is in getUserName in [src/store.c], fixed in v1.2.3.");
    sqlite3_finalize(st);

    /* a second registration on the same connection is fine */
    T_EQ_INT(store_fts_register(db), SQLITE_OK);
    sqlite3_close(db);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int count_cb(void *arg, const char *tok, size_t n, size_t start,
                    size_t end, int colocated)
{
    (*(long long *)arg)++;
    return 0;
}

static void test_speed(void)
{
    const char *chunk =
        "The meeting moved to Thursday, so I booked the 10:30 train instead of driving.\n"
        "    if (rc != SQLITE_OK) { goto out; }  // see src/store.c, getUserName()\n"
        "我上周去了北京开会，顺便见了老朋友。\n";
    size_t cl = strlen(chunk), n = (size_t)16 << 20;
    char *big = malloc(n);
    T_CHECK(big != NULL);
    if (!big)
        return;
    for (size_t i = 0; i < n; i++)
        big[i] = chunk[i % cl];
    long long ntok = 0;
    double t0 = now();
    text_tokenize(big, n, 0, count_cb, &ntok);
    double dt = now() - t0;
    printf("text_tokenize: %.1f MB/s, %lld tokens\n",
           (double)n / 1e6 / (dt > 0 ? dt : 1e-9), ntok);
    T_CHECK(ntok > 0);

    /* FTS5 ingest: 20,000 rows of about 500 bytes */
    sqlite3 *db = NULL;
    sqlite3_open(":memory:", &db);
    store_fts_register(db);
    sqlite3_exec(db, "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cairn')",
                 NULL, NULL, NULL);
    sqlite3_stmt *ins = NULL;
    sqlite3_prepare_v2(db, "INSERT INTO t(x) VALUES (?1)", -1, &ins, NULL);
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    t0 = now();
    size_t bytes = 0;
    for (int i = 0; i < 20000; i++) {
        size_t off = ((size_t)i * 7919) % (n - 600);
        while (off > 0 && ((unsigned char)big[off] & 0xC0) == 0x80)
            off++;
        size_t len = 500;
        while (((unsigned char)big[off + len] & 0xC0) == 0x80)
            len++;
        sqlite3_bind_text(ins, 1, big + off, (int)len, SQLITE_STATIC);
        if (sqlite3_step(ins) != SQLITE_DONE)
            break;
        sqlite3_reset(ins);
        bytes += len;
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    dt = now() - t0;
    printf("FTS5 ingest with tokenizer cairn: %.1f MB/s (%zu rows/s)\n",
           (double)bytes / 1e6 / (dt > 0 ? dt : 1e-9),
           (size_t)(20000 / (dt > 0 ? dt : 1e-9)));
    T_CHECK(bytes > 0);
    sqlite3_finalize(ins);
    sqlite3_close(db);
    free(big);
}

static int count_whole_cb(void *arg, const char *tok, size_t n, size_t s, size_t e, int col)
{
    (void)tok, (void)n, (void)s, (void)e;
    if (!col)
        (*(int *)arg)++;
    return 0;
}

/* text_count_words skips the stemmer: the same count as the whole tokens
 * text_tokenize emits for a query (what ntok was computed from before) */
static void test_count_words(void)
{
    static const char *const texts[] = {
        "", "   ", "The running dogs were jumping over fences happily.",
        "getUserName and snake_case_name in src/store/ingest.c at v1.2.3",
        "我们昨天讨论了数据库迁移的问题 and the 中文 mixed with English",
        "don't won't it's John's O'Brien's", "ＦＵＬＬ　ｗｉｄｔｈ ﬁ ligatures",
        "#tag @user $HOME ~/path a.b.c 3.14159 -42 1e10 0x1F",
        "emoji 🎉 party 🎉🎉 ends", "naïve café résumé coöperate",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++) {
        int k = 0;
        T_CHECK(text_tokenize(texts[i], strlen(texts[i]), 1, count_whole_cb, &k) == 0);
        T_CHECK(text_count_words(texts[i], strlen(texts[i])) == k);
    }
    /* random printable text and random bytes */
    unsigned seed = 7;
    char buf[2048];
    for (int r = 0; r < 200; r++) {
        size_t n = (size_t)(rand_r(&seed) % sizeof(buf));
        for (size_t i = 0; i < n; i++)
            buf[i] = r % 2 ? (char)(rand_r(&seed) & 0xff) : (char)(' ' + rand_r(&seed) % 95);
        int k = 0;
        text_tokenize(buf, n, 1, count_whole_cb, &k);
        T_CHECK(text_count_words(buf, n) == k);
    }
}

/* The FTS5 tokenizer keeps recent stems (tokenize.c, STEM_SLOTS): its
 * tokens must be text_tokenize's (no cache) for every document, through
 * many documents on one instance, so that repeats, slot collisions and
 * words longer than a slot all pass through the cache. */
struct fts_col {
    struct collect c;
};

static int fts_col_cb(void *arg, int flags, const char *tok, int n, int start, int end)
{
    return collect_cb(arg, tok, (size_t)n, (size_t)start, (size_t)end,
                      (flags & FTS5_TOKEN_COLOCATED) != 0);
}

static void test_stem_cache(void)
{
    static const char *const words[] = {
        "running", "runs", "ran", "jumping", "happily", "connection", "connections",
        "connected", "the", "a", "is", "generalization", "generalizations",
        "internationalization", "internationalizations", "antidisestablishmentarianism",
        "don't", "John's", "caching", "cached", "caches", "getUserName", "src/store.c",
        "ab", "abc", "Élan", "naïve", "我们", "v1.2.3", "retrying", "retries", "retried",
        "organizational", "organization", "organize", "flies", "flying", "fly",
    };
    fts5_tokenizer *api = text_fts_tokenizer();
    Fts5Tokenizer *t = NULL;
    T_EQ_INT(api->xCreate(NULL, NULL, 0, &t), SQLITE_OK);
    unsigned seed = 5;
    char buf[1024];
    int bad = 0;
    for (int r = 0; r < 3000; r++) {
        size_t n = 0;
        int k = 1 + (int)(rand_r(&seed) % 40);
        for (int i = 0; i < k; i++) {
            char w[48];
            const char *a = words[rand_r(&seed) % (sizeof words / sizeof *words)];
            /* and made-up words, so that the 2,048 slots collide */
            if (rand_r(&seed) % 2)
                snprintf(w, sizeof w, "%s%c%cing", a, 'a' + rand_r(&seed) % 26,
                         'a' + rand_r(&seed) % 26);
            else
                snprintf(w, sizeof w, "%s", a);
            size_t m = strlen(w);
            if (n + m + 1 >= sizeof buf)
                break;
            memcpy(buf + n, w, m);
            n += m;
            buf[n++] = ' ';
        }
        static struct collect want;
        static struct fts_col got;
        memset(&want, 0, sizeof want);
        memset(&got, 0, sizeof got);
        want.src = got.c.src = buf;
        want.src_n = got.c.src_n = n;
        text_tokenize(buf, n, 0, collect_cb, &want);
        T_EQ_INT(api->xTokenize(t, &got.c, FTS5_TOKENIZE_DOCUMENT, buf, (int)n, fts_col_cb),
                 SQLITE_OK);
        if (strcmp(want.out, got.c.out) && !bad++)
            fprintf(stderr, "cached: %s\nplain:  %s\n", got.c.out, want.out);
    }
    api->xDelete(t);
    T_EQ_INT(bad, 0);
}

/* Text r of a run: the fixed texts first, then random bytes, random
 * printable text and runs of the fixed texts' bytes in turn. */
static size_t some_text(int r, unsigned *seed, const char *const *fixed, size_t nf, char *buf,
                        size_t cap, const char **s)
{
    if ((size_t)r < nf) {
        *s = fixed[r];
        return strlen(fixed[r]);
    }
    size_t n = (size_t)(rand_r(seed) % cap);
    for (size_t i = 0; i < n; i++) {
        const char *f = fixed[(i / 53) % nf];
        size_t fl = strlen(f);
        buf[i] = r % 3 == 0 ? (char)(rand_r(seed) & 0xff)
                 : r % 3 == 1 ? (char)(' ' + rand_r(seed) % 95) : fl ? f[i % fl] : ' ';
    }
    *s = buf;
    return n;
}

/* The FTS5 tokenizer's listener (text_fts_tap): while set, a document's
 * tokens reach it as text_tokenize gives them (text, span, colocated),
 * through the index's own pass; a query's never do. Each token folded
 * into a hash with its span. */
struct tap_rec {
    uint64_t h;
    int      count;
};

static int tap_rec_cb(void *arg, const char *tok, size_t n, size_t start, size_t end,
                      int colocated)
{
    struct tap_rec *r = arg;
    char pre[64];
    int k = snprintf(pre, sizeof pre, "|%zu-%zu%c", start, end, colocated ? '+' : ' ');
    r->h = fnv1a64(pre, (size_t)k, r->h);
    r->h = fnv1a64(tok, n, r->h);
    r->count++;
    return 0;
}

static void test_fts_tap(void)
{
    static const char *const fixed[] = {
        "The running dogs were jumping over fences happily.",
        "getUserName and snake_case_name in src/store/ingest.c at v1.2.3",
        "我们昨天讨论了数据库迁移的问题 and the 中文 mixed with English",
        "don't won't it's John's O'Brien's", "ＦＵＬＬ　ｗｉｄｔｈ ﬁ ligatures",
        "#tag @user $HOME ~/path a.b.c 3.14159 -42 1e10 0x1F",
        "emoji 🎉 party 🎉🎉 ends", "naïve café résumé coöperate", "running running runs",
    };
    struct text_fts_tap tap = { NULL, NULL, NULL, 0, NULL };
    sqlite3 *db = NULL;
    sqlite3_stmt *ins = NULL, *q = NULL;
    T_EQ_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
    T_EQ_INT(store_fts_register_tap(db, &tap), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(db, "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cairn')",
                          NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_prepare_v2(db, "INSERT INTO t(rowid, x) VALUES (?1, ?2)", -1, &ins, NULL),
             SQLITE_OK);
    T_EQ_INT(sqlite3_prepare_v2(db, "SELECT count(*) FROM t WHERE t MATCH 'running'", -1, &q,
                                NULL), SQLITE_OK);
    unsigned seed = 11;
    char buf[2048];
    int bad = 0, seen = 0;
    for (int r = 0; r < 400; r++) {
        const char *s;
        size_t n = some_text(r, &seed, fixed, sizeof fixed / sizeof *fixed, buf, sizeof buf, &s);
        struct tap_rec want = { 0xcbf29ce484222325ULL, 0 }, got = want;
        text_tokenize(s, n, 0, tap_rec_cb, &want);
        tap = (struct text_fts_tap){ tap_rec_cb, &got, NULL, 0, NULL };
        sqlite3_reset(ins);
        sqlite3_bind_int(ins, 1, r + 1);
        sqlite3_bind_text(ins, 2, s, (int)n, SQLITE_STATIC);
        T_EQ_INT(sqlite3_step(ins), SQLITE_DONE);
        /* a query while it is set: not a document */
        int before = got.count;
        sqlite3_reset(q);
        T_EQ_INT(sqlite3_step(q), SQLITE_ROW);
        T_EQ_INT(got.count, before);
        tap = (struct text_fts_tap){ NULL, NULL, NULL, 0, NULL };
        bad += want.h != got.h || want.count != got.count;
        seen += got.count;
    }
    T_EQ_INT(bad, 0);
    T_CHECK(seen > 10000);
    sqlite3_finalize(ins);
    sqlite3_finalize(q);
    T_EQ_INT(sqlite3_exec(db, "INSERT INTO t(t) VALUES ('integrity-check')", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(db);
}

/* text_record: the tokens text_tokenize gives (text, span, colocated),
 * words as text_count_words counts them, through one tokenizer for many
 * documents (its stem cache); handed to the FTS5 tokenizer, the index a
 * document gets is the one its own pass gives (the same vocabulary and
 * positions: fts5vocab's instances of two tables compared), and a record
 * of other bytes is not used. */
static void test_record(void)
{
    static const char *const fixed[] = {
        "", "The running dogs were jumping over fences happily.",
        "getUserName and snake_case_name in src/store/ingest.c at v1.2.3",
        "我们昨天讨论了数据库迁移的问题 and the 中文 mixed with English",
        "don't won't it's John's O'Brien's", "ＦＵＬＬ　ｗｉｄｔｈ ﬁ ligatures",
        "#tag @user $HOME ~/path a.b.c 3.14159 -42 1e10 0x1F",
        "emoji 🎉 party 🎉🎉 ends", "naïve café résumé coöperate",
    };
    struct text_tokenizer *tk = text_tokenizer_new();
    struct text_toks rec = { 0 };
    struct text_fts_tap tap = { NULL, NULL, NULL, 0, NULL };
    sqlite3 *db = NULL;
    sqlite3_stmt *ins[2] = { NULL, NULL };
    T_CHECK(tk != NULL);
    T_EQ_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
    T_EQ_INT(store_fts_register_tap(db, &tap), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(db, "CREATE VIRTUAL TABLE a USING fts5(x, tokenize='cairn');"
                          "CREATE VIRTUAL TABLE b USING fts5(x, tokenize='cairn');"
                          "CREATE VIRTUAL TABLE va USING fts5vocab(a, 'instance');"
                          "CREATE VIRTUAL TABLE vb USING fts5vocab(b, 'instance');",
                          NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_prepare_v2(db, "INSERT INTO a(rowid, x) VALUES (?1, ?2)", -1, &ins[0],
                                NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_prepare_v2(db, "INSERT INTO b(rowid, x) VALUES (?1, ?2)", -1, &ins[1],
                                NULL), SQLITE_OK);
    unsigned seed = 23;
    char buf[3000], other[3000];
    int bad = 0, badw = 0, words = 0;
    for (int r = 0; r < 600 && tk; r++) {
        const char *s;
        size_t n = some_text(r, &seed, fixed, sizeof fixed / sizeof *fixed, buf, sizeof buf, &s);
        struct tap_rec want = { 0xcbf29ce484222325ULL, 0 }, got = want;
        text_tokenize(s, n, 0, tap_rec_cb, &want);
        T_EQ_INT(text_record(tk, s, n, &rec), 0);
        for (size_t i = 0; i < rec.n; i++)
            tap_rec_cb(&got, rec.b + rec.v[i].off, rec.v[i].n, rec.v[i].start, rec.v[i].end,
                       (int)rec.v[i].colocated);
        bad += want.h != got.h || want.count != got.count;
        badw += rec.words != text_count_words(s, n);
        words += rec.words;
        /* a: its own pass; b: the record, or (every fifth) a record of
         * other bytes of the same length, which must not be used */
        memcpy(other, s, n);
        if (n && r % 5 == 0)
            other[n / 2] = other[n / 2] == 'q' ? 'z' : 'q';
        for (int t = 0; t < 2; t++) {
            if (t == 1) {
                if (r % 5 == 0 && n)
                    T_EQ_INT(text_record(tk, other, n, &rec), 0);
                tap = (struct text_fts_tap){ NULL, NULL, other, n, &rec };
            }
            sqlite3_reset(ins[t]);
            sqlite3_bind_int(ins[t], 1, r + 1);
            sqlite3_bind_text(ins[t], 2, s, (int)n, SQLITE_STATIC);
            T_EQ_INT(sqlite3_step(ins[t]), SQLITE_DONE);
            tap = (struct text_fts_tap){ NULL, NULL, NULL, 0, NULL };
        }
    }
    T_EQ_INT(bad, 0);
    T_EQ_INT(badw, 0);
    T_CHECK(words > 20000);
    sqlite3_stmt *q = NULL;
    T_EQ_INT(sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM va), (SELECT count(*) FROM "
                                "(SELECT * FROM va EXCEPT SELECT * FROM vb)), (SELECT count(*) "
                                "FROM (SELECT * FROM vb EXCEPT SELECT * FROM va))", -1, &q, NULL),
             SQLITE_OK);
    T_EQ_INT(sqlite3_step(q), SQLITE_ROW);
    T_CHECK(sqlite3_column_int(q, 0) > 20000);
    T_EQ_INT(sqlite3_column_int(q, 1), 0);
    T_EQ_INT(sqlite3_column_int(q, 2), 0);
    sqlite3_finalize(q);
    sqlite3_finalize(ins[0]);
    sqlite3_finalize(ins[1]);
    sqlite3_close(db);
    text_toks_free(&rec);
    text_tokenizer_free(tk);
}

/* The everyday words (common.c), tokenized as one text when first asked:
 * each word's stem is found, the first and the last of the list included
 * (the word boundaries of that one text), and other words are not. */
static int stem_of(void *arg, const char *tok, size_t n, size_t start, size_t end, int coloc)
{
    char *out = arg;
    if (!*out && n < 64) {
        memcpy(out, tok, n);
        out[n] = 0;
    }
    return 0;
}

static void test_common_words(void)
{
    static const char *const yes[] = { "about", "account", "api", "memory", "session",
                                       "troubleshooting", "workflow", "writing", "year",
                                       "Memory", "sessions" };
    static const char *const no[] = { "quarry", "tor", "orbstack", "cookie", "zorblax", "" };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        char st[64] = "";
        text_tokenize(yes[i], strlen(yes[i]), 1, stem_of, st);
        T_CHECK(st[0] && text_is_common_word(st, strlen(st)));
    }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        char st[64] = "";
        text_tokenize(no[i], strlen(no[i]), 1, stem_of, st);
        T_CHECK(!text_is_common_word(st, strlen(st)));
    }
    char big[80];
    memset(big, 'a', sizeof big);
    T_CHECK(!text_is_common_word(big, sizeof big));
}

int main(void)
{
    T_RUN(test_words);
    T_RUN(test_compounds);
    T_RUN(test_cjk);
    T_RUN(test_offsets);
    T_RUN(test_bad_input);
    T_RUN(test_stopwords);
    T_RUN(test_common_words);
    T_RUN(test_count_words);
    T_RUN(test_fts5);
    T_RUN(test_stem_cache);
    T_RUN(test_fts_tap);
    T_RUN(test_record);
    T_RUN(test_speed);
    return T_DONE();
}
