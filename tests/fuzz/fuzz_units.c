/*
 * fuzz_units.c: libFuzzer target for a session's units as recall would
 * read them (store/turns.c: store_units_open, store_units_next and
 * store_units_read, checked against each other, over
 * session_units.units, schema 30; a damaged store could hold anything).
 *
 * Input: the row, copied to a buffer of exactly its size so that a read
 * past the end is a sanitizer report. Every unit read lies inside the row
 * and the cursor only moves forward; the units read, written again by
 * store_unit_write (the packer's), read back as the same values. The same
 * bytes as a session's packed turns: store_units_pack writes a row that
 * reads back whole, or none.
 */
#include "fuzz.h"
#include "store/recall_read.h"
#include "store/units.h"
#include "util/buf.h"

#define MAXU 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *row = malloc(size ? size : 1);
    static struct store_unit u[MAXU];
    if (!row)
        return 0;
    memcpy(row, data, size);
    struct units_cur c;
    int nu, flags, n = 0;
    if (!store_units_open(&c, row, size, &nu, &flags)) {
        while (n < MAXU && store_units_next(&c, &u[n]) == 1) {
            if (c.p <= row || c.p > row + size)
                abort();
            n++;
        }
        /* store_units_read (no end checked a varint while a whole unit is
         * left, the row's tail from a copy): the same units and cursor */
        static struct store_unit v[MAXU];
        struct units_cur c2;
        int nu2, flags2;
        if (store_units_open(&c2, row, size, &nu2, &flags2))
            abort();
        if ((int)store_units_read(&c2, v, MAXU) != n || c2.p != c.p || c2.id != c.id ||
            c2.pos != c.pos || c2.at != c.at || c2.left != c.left)
            abort();
        for (int i = 0; i < n; i++)
            if (v[i].first_id != u[i].first_id || v[i].first_pos != u[i].first_pos ||
                v[i].head_at != u[i].head_at || v[i].round_ntok != u[i].round_ntok ||
                v[i].n_turns != u[i].n_turns || v[i].head_user != u[i].head_user ||
                v[i].head_ntok != u[i].head_ntok)
                abort();
        struct buf b = BUF_INIT;
        struct units_cur w = { NULL, NULL, 0, 0, 0, 0 };
        for (int i = 0; i < n; i++)
            store_unit_write(&b, &w, &u[i]);
        if (b.err)
            abort();
        struct units_cur r = { b.p, b.p + b.n, 0, 0, 0, n };
        for (int i = 0; i < n; i++) {
            struct store_unit x;
            if (store_units_next(&r, &x) != 1 || x.first_id != u[i].first_id ||
                x.first_pos != u[i].first_pos || x.head_at != u[i].head_at ||
                x.round_ntok != u[i].round_ntok || x.n_turns != u[i].n_turns ||
                x.head_user != u[i].head_user || x.head_ntok != u[i].head_ntok)
                abort();
        }
        if (store_units_next(&r, &(struct store_unit){ 0 }) != 0)
            abort();
        buf_release(&b);
    }
    /* the bytes as packed turns: a row that reads whole, or none */
    struct turns_cur t = { row, row + size, 0, 0, 0 };
    struct store_msg_row m;
    const char *sp;
    size_t spn;
    int64_t k = 0;
    while (store_turns_next(&t, &m, &sp, &spn) == 1)
        k++;
    struct buf p = BUF_INIT;
    if (!store_units_pack(&p, row, size, k)) {
        int pn = 0, pf;
        struct units_cur pc;
        int64_t turns = 0;
        struct store_unit x;
        if (store_units_open(&pc, p.p, p.n, &pn, &pf))
            abort();
        while (store_units_next(&pc, &x) == 1)
            turns += x.n_turns;
        if (turns != k || pc.left || pc.p != p.p + p.n)
            abort();
    }
    buf_release(&p);
    free(row);
    return 0;
}
