/*
 * fuzz_pg_tf.c: libFuzzer target for the phrase counts of recall on a
 * server store (store/pg_read.c: pg_phrases_parse, pg_phrase_tf): the
 * MATCH expression recall builds from a question (user text inside its
 * quotes), tokenized again in query mode, and the lexemes and positions
 * a server returns ("{3,17}", tsvector's text form; a hostile or broken
 * server could send anything there).
 *
 * Input: NUL-separated parts: the expression, then lexeme and positions
 * pairs (up to 8). The first byte of the expression picks nt (0-7), which
 * may disagree with the phrases the expression holds. A count never
 * exceeds the positions given, and "any" is exactly "one count is > 0".
 */
#include "fuzz.h"
#include "store/pg_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAXP = 1 + 2 * 8 };
    struct fuzz_part part[MAXP];
    if (!size)
        return 0;
    int np = fuzz_split(data + 1, size - 1, part, MAXP), nt = data[0] & 7, nl = (np - 1) / 2;
    char *expr = fuzz_strdup(part[0]);
    char *lex[8], *pos[8];
    uint16_t tf[8];
    struct pg_phrases *pp;
    for (int i = 0; i < nl; i++) {
        lex[i] = fuzz_strdup(part[1 + 2 * i]);
        pos[i] = fuzz_strdup(part[2 + 2 * i]);
    }
    if (pg_phrases_parse(expr, part[0].n, nt, &pp) != CAIRN_OK)
        abort();                                  /* only on no memory */
    int any = pg_phrase_tf(pp, (const char *const *)lex, (const char *const *)pos, nl, tf);
    if (any < 0)
        abort();
    int seen = 0;
    size_t npos = 0;
    for (int i = 0; i < nl; i++)
        for (const char *s = pos[i]; *s; s++)
            npos += *s >= '0' && *s <= '9' && (s == pos[i] || s[-1] < '0' || s[-1] > '9');
    for (int t = 0; t < nt; t++) {
        if (tf[t] > npos)
            abort();
        seen |= tf[t] > 0;
    }
    if (seen != any)
        abort();
    pg_phrases_free(pp);
    for (int i = 0; i < nl; i++) {
        free(lex[i]);
        free(pos[i]);
    }
    free(expr);
    return 0;
}
