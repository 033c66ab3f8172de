/*
 * fuzz_turns.c: libFuzzer target for a session's packed turns as recall
 * reads them (store/turns.c: store_turns_next over session_turns.turns,
 * schema 21; a damaged store could hold anything there).
 *
 * Input: the text, copied to a buffer of exactly its size (no NUL after
 * it) so that a read past the end is a sanitizer report. Every turn read
 * lies inside the text (its speaker too) and the cursor only moves
 * forward; the turns read before the end or a bad turn, written again by
 * store_turn_write (what ingest.c appends), read back as the same turns:
 * the writer and the reader agree on every value the reader accepts.
 */
#include "fuzz.h"
#include "store/recall_read.h"
#include "util/buf.h"

#define MAXT 4096

struct one { struct store_msg_row r; const char *sp; size_t spn; };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    static struct one t[MAXT];
    if (!text)
        return 0;
    memcpy(text, data, size);
    struct turns_cur c = { text, text + size, 0, 0, 0 };
    int n = 0, got;
    while (n < MAXT && (got = store_turns_next(&c, &t[n].r, &t[n].sp, &t[n].spn)) == 1) {
        if (c.p <= text || c.p > text + size)
            abort();
        if (t[n].sp && (t[n].sp < text || t[n].sp + t[n].spn > text + size))
            abort();
        n++;
    }
    /* written again (a speaker cut at a NUL, as SQLite's text would be) */
    struct buf b = BUF_INIT;
    struct turns_cur w = { NULL, NULL, 0, 0, 0 };
    char sp[256];
    for (int i = 0; i < n; i++) {
        const char *s = NULL;
        if (t[i].sp) {
            size_t k = t[i].spn < sizeof sp - 1 ? t[i].spn : sizeof sp - 1;
            memcpy(sp, t[i].sp, k);
            sp[k] = 0;
            t[i].spn = strlen(sp);
            s = sp;
        }
        store_turn_write(&b, &w, t[i].r.row, t[i].r.position, t[i].r.user, t[i].r.at,
                         t[i].r.ntok, s, s ? strlen(s) : 0);
    }
    if (b.err)
        abort();
    struct turns_cur r = { b.p, b.p + b.n, 0, 0, 0 };
    for (int i = 0; i < n; i++) {
        struct store_msg_row x;
        const char *xs;
        size_t xn;
        if (store_turns_next(&r, &x, &xs, &xn) != 1 || x.row != t[i].r.row ||
            x.position != t[i].r.position || x.user != t[i].r.user || x.at != t[i].r.at ||
            x.ntok != t[i].r.ntok || !xs != !t[i].sp || (xs && xn != t[i].spn))
            abort();
    }
    if (n < MAXT && store_turns_next(&r, &(struct store_msg_row){ 0 }, &(const char *){ 0 },
                                     &(size_t){ 0 }) != 0)
        abort();
    buf_release(&b);
    free(text);
    return 0;
}
