/*
 * test_vec_sent.c: a message's sentences as pieces (store/vec_sent.c, the
 * setting embed.sentences; issue 16, multi-hop, branch piece55). The spec,
 * where sentences end, short ones joined, groups and overlapping windows,
 * the long-message condition, the piece cap; and on random bytes, that
 * every piece lies inside the text, starts and ends on no white space and
 * no cut UTF-8 sequence, and that pieces come in order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "internal.h"
#include "store/vectors.h"

/* The pieces of s by spec as "a|b|c". */
static const char *cut(const char *spec, const char *s, size_t pb, int max)
{
    static char out[4096];
    struct vec_sent c;
    size_t off[VEC_MAX_PIECES], len[VEC_MAX_PIECES];
    if (vec_sent_parse(spec, &c))
        return "(bad spec)";
    int n = vec_sent_cut(s, strlen(s), pb, &c, off, len, max);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t k = strlen(out);
        snprintf(out + k, sizeof out - k, "%s%.*s", i ? "|" : "", (int)len[i], s + off[i]);
    }
    return out;
}

static void test_parse(void)
{
    struct vec_sent c;
    T_EQ_INT(vec_sent_parse(NULL, &c), 0);
    T_EQ_INT(c.on, 0);
    T_EQ_INT(vec_sent_parse("off", &c), 0);
    T_EQ_INT(c.on, 0);
    T_EQ_INT(vec_sent_parse("on", &c), 0);
    T_EQ_INT(c.on, 1);
    T_EQ_INT(c.group, 1);
    T_EQ_INT(vec_sent_parse("group=2,overlap,min=4,long=20,only", &c), 0);
    T_CHECK(c.on && c.group == 2 && c.overlap && c.min_words == 4 && c.long_words == 20 &&
            c.only && c.words == 0);
    T_EQ_INT(vec_sent_parse("words=32", &c), 0);
    T_EQ_INT(c.words, 32);
    /* what it does not know turns it off, with -1 */
    static const char *const bad[] = {
        "group=0", "min", "min=", "min=x", "min=-1", "min=4x", "overlap=1", "sentence",
        "group=2,,", "words=100000", "a-very-long-token-that-is-no-key=1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_EQ_INT(vec_sent_parse(bad[i], &c), -1);
        T_EQ_INT(c.on, 0);
    }
    /* cairn_set refuses it with a message */
    struct cairn *db = NULL;
    T_EQ_INT(cairn_open(":memory:", 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "embed.sentences", "group=2,min=3"), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "embed.sentences", "groups=2"), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(db), "embed.sentences") != NULL);
    T_EQ_INT(cairn_set(db, "embed.sentences", NULL), CAIRN_OK);
    cairn_close(db);
}

static void test_cut(void)
{
    const char *t = "Yeah! I adopted two Lab mixes last year. They're great with the kids. "
                    "We walk by the lake.";
    T_EQ_STR(cut("on", t, 448, 16), "Yeah!|I adopted two Lab mixes last year.|"
                                   "They're great with the kids.|We walk by the lake.");
    /* "Yeah!" is joined to the next one */
    T_EQ_STR(cut("min=3", t, 448, 16), "Yeah! I adopted two Lab mixes last year.|"
                                      "They're great with the kids.|We walk by the lake.");
    T_EQ_STR(cut("group=2", t, 448, 16), "Yeah! I adopted two Lab mixes last year.|"
                                        "They're great with the kids. We walk by the lake.");
    T_EQ_STR(cut("group=2,overlap", t, 448, 16),
             "Yeah! I adopted two Lab mixes last year.|"
             "I adopted two Lab mixes last year. They're great with the kids.|"
             "They're great with the kids. We walk by the lake.");
    /* by words: 1 + 7 reach 8; 5 + 5 reach 8 */
    T_EQ_STR(cut("words=8", t, 448, 16), "Yeah! I adopted two Lab mixes last year.|"
                                        "They're great with the kids. We walk by the lake.");
    /* a group that is the whole message again is no piece */
    T_EQ_STR(cut("group=4", t, 448, 16), "");
    T_EQ_STR(cut("words=100", t, 448, 16), "");
    /* one sentence, or one once the short ones are joined */
    T_EQ_STR(cut("on", "I adopted two Lab mixes last year.", 448, 16), "");
    T_EQ_STR(cut("min=3", "Yeah! Sure thing.", 448, 16), "");
    T_EQ_STR(cut("min=3", "I adopted two Lab mixes. Yes!", 448, 16), "");
    T_EQ_STR(cut("min=3", "I adopted two Lab mixes. Yes! We walk a lot.", 448, 16),
             "I adopted two Lab mixes.|Yes! We walk a lot.");
    /* long=N: only a message of N words or more */
    T_EQ_STR(cut("long=19", t, 448, 16), "");
    T_CHECK(strcmp(cut("long=18", t, 448, 16), "") != 0);
    /* where sentences end: a run of marks and closing quotes before a
     * space, or a line; not inside "3.5" */
    T_EQ_STR(cut("on", "It cost 3.5 dollars?! \"Wow.\" Fine\nNext line", 448, 16),
             "It cost 3.5 dollars?!|\"Wow.\"|Fine|Next line");
    T_EQ_STR(cut("on", "  Lead space.   Trail space.  \n\n ", 448, 16),
             "Lead space.|Trail space.");
    /* the cap */
    T_EQ_STR(cut("on", t, 448, 2), "Yeah!|I adopted two Lab mixes last year.");
    T_EQ_STR(cut("on", t, 448, 0), "");
    /* a piece longer than piece_bytes is cut at a word */
    T_EQ_STR(cut("on", "aaaa bbbb cccc dddd eeee ffff gggg. Short one.", 20, 16),
             "aaaa bbbb cccc dddd|Short one.");
}

static int space(char c)
{
    return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* Random texts over an alphabet rich in marks, spaces and UTF-8 sequences. */
static void test_random(void)
{
    static const char *const alpha[] = {
        "a", "b", " ", ".", "!", "?", "\"", "'", ")", "\n", "\t", "\xc3\xa9", "\xe2\x80\x9c",
    };
    static const char *const specs[] = {
        "on", "min=3", "group=2", "group=3,overlap", "words=6", "words=6,overlap,min=2",
        "long=5,min=1",
    };
    uint64_t seed = 0x5e17e5ce;
    char s[600];
    int bad = 0, pieces = 0;
    for (int r = 0; r < 4000; r++) {
        size_t want = t_xorshift(&seed) % (sizeof s - 4), len = 0;
        while (len < want) {
            const char *a = alpha[t_xorshift(&seed) % (sizeof alpha / sizeof alpha[0])];
            memcpy(s + len, a, strlen(a));
            len += strlen(a);
        }
        struct vec_sent c;
        size_t off[VEC_MAX_PIECES], pl[VEC_MAX_PIECES], pb = 16 + t_xorshift(&seed) % 200;
        int max = 1 + (int)(t_xorshift(&seed) % VEC_MAX_PIECES);
        vec_sent_parse(specs[r % (int)(sizeof specs / sizeof specs[0])], &c);
        int n = vec_sent_cut(s, len, pb, &c, off, pl, max);
        if (n < 0 || n > max)
            bad++;
        for (int k = 0; k < n; k++) {
            pieces++;
            if (!pl[k] || off[k] + pl[k] > len || pl[k] > pb || space(s[off[k]]) ||
                ((unsigned char)s[off[k]] & 0xC0) == 0x80 ||
                (off[k] + pl[k] < len && ((unsigned char)s[off[k] + pl[k]] & 0xC0) == 0x80) ||
                (k && off[k] < off[k - 1]) || (k && !c.overlap && off[k] < off[k - 1] + pl[k - 1]))
                bad++;
        }
    }
    T_EQ_INT(bad, 0);
    T_CHECK(pieces > 4000);      /* the texts did get cut */
}

int main(void)
{
    T_RUN(test_parse);
    T_RUN(test_cut);
    T_RUN(test_random);
    return T_DONE();
}
