/*
 * test_tokcount.c: the budget token counter and text_prefix_within().
 *
 * Checks the per-kind rules on small strings, that CJK never costs less
 * than one token a character, that bad input (invalid UTF-8, NUL bytes,
 * empty) gets a sane count, and on many random strings that the prefix
 * text_prefix_within() returns ends on a UTF-8 boundary, costs at most the
 * budget, and is the longest such prefix give or take the whitespace
 * preference; and that made-up texts in French, German, Spanish,
 * Portuguese, Polish, Russian, Japanese and Korean
 * (tests/data/tokcount/langs.txt) count at least what the legacy Claude
 * tokenizer, cl100k and o200k count for them (issue 15: the old counter
 * under-counted German and Polish by a third). Prints the counter's
 * throughput (not asserted).
 *
 * Run as `test_tokcount --count` it is instead a filter for
 * tests/tools/tokcount-compare.js: NUL-separated texts on stdin, one count
 * per line on stdout.
 */
#include "text/tokcount.h"
#include "util/utf8.h"
#include "t.h"

#include <stdlib.h>
#include <time.h>

#define S(lit) lit, sizeof(lit) - 1

static int count_mode(void)
{
    size_t cap = 1 << 20, n = 0;
    char *p = malloc(cap);
    int c;

    if (!p)
        return 1;
    while ((c = getchar()) != EOF) {
        if (n + 1 >= cap) {
            char *q = realloc(p, cap * 2);
            if (!q) {
                free(p);
                return 1;
            }
            p = q;
            cap *= 2;
        }
        p[n++] = (char)c;
    }
    size_t a = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || p[i] == '\0') {
            printf("%d\n", text_count_tokens(p + a, i - a));
            a = i + 1;
        }
    }
    free(p);
    return 0;
}

static void test_basics(void)
{
    T_EQ_INT(text_count_tokens(NULL, 0), 0);
    T_EQ_INT(text_count_tokens(S("")), 0);
    T_EQ_INT(text_count_tokens(S("a")), 1);
    T_EQ_INT(text_count_tokens(S(" ")), 0);          /* a lone space is free */
    T_EQ_INT(text_count_tokens(S("\n")), 1);
    T_EQ_INT(text_count_tokens(S("the")), 1);
    T_EQ_INT(text_count_tokens(S("the cat")), 2);
    T_EQ_INT(text_count_tokens(S("123")), 1);
    T_EQ_INT(text_count_tokens(S("1234567")), 3);    /* digits by 3 */
    T_EQ_INT(text_count_tokens(S("!")), 1);
    /* a long word costs more than a short one */
    T_CHECK(text_count_tokens(S("internationalization")) >
            text_count_tokens(S("cat")));
    /* additivity over runs */
    T_EQ_INT(text_count_tokens(S("hello, world")),
             text_count_tokens(S("hello")) + text_count_tokens(S(",")) +
             text_count_tokens(S(" world")));
}

static void test_cjk(void)
{
    /* never under one token a CJK character */
    const char *zh = "我上周去了北京开会";            /* 9 characters */
    T_CHECK(text_count_tokens(zh, strlen(zh)) >= 9);
    T_CHECK(text_count_tokens(S("北")) >= 1);
    const char *ja = "カタカナとひらがな";             /* 9 characters */
    T_CHECK(text_count_tokens(ja, strlen(ja)) >= 9);
    const char *ko = "한국어 문장";                    /* 5 syllables */
    T_CHECK(text_count_tokens(ko, strlen(ko)) >= 5);
    /* CJK in a long run: at least one a character */
    char big[3 * 1000];
    for (int i = 0; i < 1000; i++)
        memcpy(big + 3 * i, "字", 3);
    T_CHECK(text_count_tokens(big, sizeof big) >= 1000);
}

/* Every line of tests/data/tokcount/langs.txt ("LANG CLAUDE CL100K O200K
 * <TAB> TEXT") counts at least the largest of the three references. */
static void test_langs(void)
{
    FILE *f = fopen("tests/data/tokcount/langs.txt", "r");
    char line[4096];
    int lines = 0;

    T_CHECK(f != NULL);
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char lang[8];
        int ref[3], off = 0;
        if (line[0] == '#' ||
            sscanf(line, "%7s %d %d %d\t%n", lang, &ref[0], &ref[1], &ref[2], &off) != 4 || !off)
            continue;
        const char *text = line + off;
        size_t n = strcspn(text, "\n");
        int most = ref[0] > ref[1] ? ref[0] : ref[1];
        most = most > ref[2] ? most : ref[2];
        int ours = text_count_tokens(text, n);
        if (ours < most)
            printf("  %s: ours %d < %d (claude %d, cl100k %d, o200k %d)\n", lang, ours, most,
                   ref[0], ref[1], ref[2]);
        T_CHECK(ours >= most);
        lines++;
    }
    fclose(f);
    T_CHECK(lines >= 9);
}

/* A text in another Latin-script language costs more per ASCII word:
 * after a word with accents, or one of the common non-English words the
 * counter knows (all of them here, so a word lost from its table or an
 * unsorted table fails), a long word costs by its letters; after an
 * English word, or words English shares ("die", "do", "os"), it does not. */
static void test_heat(void)
{
    static const char *const hot[] = {
        "ao", "au", "auch", "auf", "avec", "bei", "cette", "como", "czy", "dans",
        "das", "der", "des", "diese", "dieser", "dla", "ein", "eine", "einen", "elle",
        "est", "esta", "este", "ich", "ist", "jak", "jako", "jest", "kann", "las",
        "les", "leur", "los", "lub", "mit", "nach", "nicht", "nie", "oder", "oraz",
        "ou", "para", "pela", "pelo", "pero", "peut", "przez", "puede", "qui", "sich",
        "sie", "sont", "sur", "tak", "uma", "una", "und", "une", "vom", "wenn",
        "werden", "wird", "ze", "zu", "zum", "zur",
        "Und", "Sie", "Das", "Nie",
    };
    static const char *const cold[] = { "the", "die", "do", "os", "com", "del", "in", "es", "y" };
    const char *w = " Fehlermeldung";           /* 13 letters: 3 cold, 6 hot */
    int base = text_count_tokens(w, strlen(w)), missed = 0;
    char buf[64];

    T_EQ_INT(base, 3);
    for (size_t i = 0; i < sizeof hot / sizeof hot[0]; i++) {
        snprintf(buf, sizeof buf, "%s%s", hot[i], w);
        if (text_count_tokens(buf, strlen(buf)) - text_count_tokens(hot[i], strlen(hot[i])) <= base) {
            printf("  not hot after %s\n", hot[i]);
            missed++;
        }
    }
    T_EQ_INT(missed, 0);
    for (size_t i = 0; i < sizeof cold / sizeof cold[0]; i++) {
        snprintf(buf, sizeof buf, "%s%s", cold[i], w);
        T_EQ_INT(text_count_tokens(buf, strlen(buf)) - text_count_tokens(cold[i], strlen(cold[i])),
                 base);
    }
    /* accents heat too, for 8 ASCII words */
    const char *acc = "Größe a a a a a a a Fehlermeldung", *far = "Größe a a a a a a a a Fehlermeldung";
    T_EQ_INT(text_count_tokens(acc, strlen(acc)) - text_count_tokens(far, strlen(far)), 6 - 3 - 1);
}

static void test_bad_input(void)
{
    T_EQ_INT(text_count_tokens("\xff\xfe", 2), 2);   /* one a bad byte */
    T_CHECK(text_count_tokens("a\0b", 3) >= 2);
    T_CHECK(text_count_tokens("\xe5\x8c", 2) >= 1);  /* cut CJK char */
    T_EQ_INT(text_prefix_within(S("hello"), 0), 0);
    T_EQ_INT(text_prefix_within(S("hello"), -5), 0);
    T_EQ_INT(text_prefix_within(NULL, 0, 10), 0);
    T_EQ_INT(text_prefix_within(S(""), 10), 0);
}

static void test_prefix_simple(void)
{
    const char *t = "the quick brown fox jumps over the lazy dog";
    size_t n = strlen(t);
    T_EQ_INT(text_prefix_within(t, n, 1000), n);
    size_t p = text_prefix_within(t, n, 3);
    T_CHECK(text_count_tokens(t, p) <= 3);
    /* ends before a space, not inside a word */
    T_CHECK(p > 0 && (p == n || t[p] == ' '));
    T_EQ_INT(p, strlen("the quick brown"));          /* a token a word */
    /* CJK cuts between characters */
    const char *zh = "我上周去了北京开会";
    size_t q = text_prefix_within(zh, strlen(zh), 4);
    T_CHECK(q % 3 == 0);
    T_CHECK(q > 0);
    T_CHECK(text_count_tokens(zh, q) <= 4);
    /* one huge word: cut inside it rather than return nothing */
    char w[4000];
    memset(w, 'x', sizeof w);
    size_t r = text_prefix_within(w, sizeof w, 10);
    T_CHECK(r > 0 && r < sizeof w);
    T_CHECK(text_count_tokens(w, r) <= 10);
    T_CHECK(text_count_tokens(w, r + 1) > 10);
}

/* Random strings from a palette of ASCII words, spaces, newlines,
 * punctuation, digits, CJK, other UTF-8 and bad bytes. */
static size_t rand_text(char *out, size_t cap, unsigned *seed)
{
    static const char *const pal[] = {
        "the", " ", "  ", "\n", "quick", "internationalization", ",", ".",
        "{", "}", "12", "2024", "北", "京", "我们", "é", "Привет", "😀",
        "\xff", "\xe5\x8c", "\t", "x", "_", "\0", "()", "    ",
        "ł", "Größe", "naprawiłem", "한국", "слово", "×", "ạ",
    };
    size_t n = 0, parts = (size_t)(rand_r(seed) % 60);
    for (size_t i = 0; i < parts; i++) {
        const char *p = pal[rand_r(seed) % (sizeof pal / sizeof pal[0])];
        size_t len = p[0] ? strlen(p) : 1;
        if (n + len > cap)
            break;
        memcpy(out + n, p, len);
        n += len;
    }
    return n;
}

static int on_boundary(const char *s, size_t n, size_t p)
{
    /* p is a boundary if the decoder, walking from 0, lands on it */
    size_t i = 0;
    uint32_t cp;
    while (i < p)
        i += utf8_decode(s + i, n - i, &cp);
    return i == p;
}

static void test_prefix_random(void)
{
    unsigned seed = 12345;
    char buf[1024];
    int bad_budget = 0, bad_boundary = 0, bad_longest = 0, total = 0;

    for (int iter = 0; iter < 20000; iter++) {
        size_t n = rand_text(buf, sizeof buf, &seed);
        int full = text_count_tokens(buf, n);
        int max = (int)(rand_r(&seed) % (unsigned)(full + 3));
        size_t p = text_prefix_within(buf, n, max);
        total++;
        if (p > n || text_count_tokens(buf, p) > max)
            bad_budget++;
        if (!on_boundary(buf, n, p))
            bad_boundary++;
        if (full <= max && p != n)
            bad_longest++;
        /* not much shorter than the longest fitting prefix: the
         * whitespace preference gives up at most 64 bytes */
        size_t best = 0, i = 0;
        uint32_t cp;
        while (i < n) {
            i += utf8_decode(buf + i, n - i, &cp);
            /* a prefix ending in whitespace is never the one we want */
            if (strchr(" \t\n", buf[i - 1]) == NULL &&
                text_count_tokens(buf, i) <= max)
                best = i;
        }
        if (best > p + 64)
            bad_longest++;
    }
    T_EQ_INT(bad_budget, 0);
    T_EQ_INT(bad_boundary, 0);
    T_EQ_INT(bad_longest, 0);
    T_EQ_INT(total, 20000);
}

/* text_count_tokens_memo counts as text_count_tokens does (exact33: a
 * pack's stamps counted by their shape, digits as '0'): texts from
 * templates whose '#' are random digits (so many share a shape with
 * other digits), among them words that heat the text ("und", accents)
 * and camelCase, and random texts cut to 1-48 bytes (the memo's 40 and
 * past it), through one memo that fills and is overwritten. A counter
 * whose digits cost by their value, or set the heat, fails this; so does
 * a memo keyed on anything less than the whole shape. */
static void test_count_memo(void)
{
    static const char *const tpl[] = {
        "[####-##-## Tue ##:##", "[####-##-## Sat ##:##", "[###-##-## Mon ##:##",
        "[#####-##-## Wed ##:##", "und ## nicht #", "é### dans ##", "x#y#Z#", "#.#.##",
        "Größe ##ab", "rateLimit#PerMinute#", "## 北京 #", "[undated", "  ##\t#\n",
    };
    const int nt = (int)(sizeof tpl / sizeof tpl[0]);
    struct tc_memo m = { 0 };
    unsigned seed = 4242;
    char buf[1024];
    int bad = 0, total = 0;
    for (int iter = 0; iter < 20000; iter++) {
        size_t n;
        if (iter % 4) {
            const char *t = tpl[rand_r(&seed) % (unsigned)nt];
            n = strlen(t);
            for (size_t i = 0; i < n; i++)
                buf[i] = t[i] == '#' ? (char)('0' + rand_r(&seed) % 10) : t[i];
        } else {
            n = rand_text(buf, sizeof buf, &seed);
            n = n < 48 ? n : 1 + (size_t)(rand_r(&seed) % 48);
        }
        bad += text_count_tokens_memo(&m, buf, n) != text_count_tokens(buf, n);
        total++;
    }
    T_EQ_INT(bad, 0);
    T_EQ_INT(total, 20000);
    /* a shape already kept answers without counting: a kept count changed
     * by hand comes back (the memo is used, not bypassed) */
    struct tc_memo k = { 0 };
    int c = text_count_tokens_memo(&k, S("[2024-03-05 Tue 14:07"));
    T_CHECK(c > 0);
    for (int j = 0; j < TC_MEMO; j++)
        if (k.e[j].len)
            k.e[j].cost = c + 100;
    T_EQ_INT(text_count_tokens_memo(&k, S("[1999-12-31 Tue 23:59")), c + 100);
    T_EQ_INT(text_count_tokens_memo(&k, S("[1999-12-31 Wed 23:59")), c);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_speed(void)
{
    /* 32 MB of mixed English, code and Chinese */
    const char *chunk =
        "The meeting moved to Thursday, so I booked the 10:30 train instead.\n"
        "    if (rc != SQLITE_OK) { goto out; }  // retry later\n"
        "我上周去了北京开会，顺便见了老朋友。\n";
    size_t cl = strlen(chunk), n = (size_t)32 << 20;
    char *big = malloc(n);
    T_CHECK(big != NULL);
    if (!big)
        return;
    for (size_t i = 0; i < n; i++)
        big[i] = chunk[i % cl];
    double t0 = now();
    long long sum = 0;
    for (int r = 0; r < 3; r++)
        sum += text_count_tokens(big, n);
    double dt = now() - t0;
    printf("text_count_tokens: %.0f MB/s (%lld tokens per pass)\n",
           3.0 * (double)n / 1e6 / (dt > 0 ? dt : 1e-9), sum / 3);
    t0 = now();
    size_t p = text_prefix_within(big, n, 1 << 30);
    dt = now() - t0;
    printf("text_prefix_within: %.0f MB/s\n", (double)n / 1e6 / (dt > 0 ? dt : 1e-9));
    T_EQ_INT(p, n);
    T_CHECK(sum > 0);
    free(big);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--count") == 0)
        return count_mode();
    T_RUN(test_basics);
    T_RUN(test_cjk);
    T_RUN(test_langs);
    T_RUN(test_heat);
    T_RUN(test_bad_input);
    T_RUN(test_prefix_simple);
    T_RUN(test_prefix_random);
    T_RUN(test_count_memo);
    T_RUN(test_speed);
    return T_DONE();
}
