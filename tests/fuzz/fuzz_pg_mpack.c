/*
 * fuzz_pg_mpack.c: libFuzzer target for a session's packed map of
 * messages as a server sends it (server version 7, store/pg_msgmap.c:
 * pg_msgmap_unpack): a hostile or broken server could send any bytes.
 *
 * Input: the pack. The first byte picks how much room the map has (as
 * the client sizes it from the bytes received: n / 25 + 1, or less). A
 * pack never writes past that room, every speaker it keeps lies inside
 * the input, and a pack it accepts holds one message a 25 bytes at most.
 */
#include "fuzz.h"
#include "store/pg_msgmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    const unsigned char *p = data + 1;
    size_t n = size - 1;
    int cap = (int)(n / 25 + 1);
    if (data[0] & 1)
        cap = data[0] >> 1 < cap ? data[0] >> 1 : cap;
    struct pg_msgmap mm = { 0 };
    mm.msg = calloc((size_t)(cap ? cap : 1), sizeof *mm.msg);
    if (!mm.msg)
        return 0;
    int rc = pg_msgmap_unpack(&mm, cap, 7, p, n);
    if (mm.n > cap || (rc == 0 && (size_t)mm.n * 25 > n) || rc < -1 || rc > 0)
        abort();
    for (int i = 0; i < mm.n; i++) {
        if (mm.msg[i].sess != 7)
            abort();
        if (mm.msg[i].speaker && strlen(mm.msg[i].speaker) > n)
            abort();
    }
    pg_msgmap_free(&mm);
    return 0;
}
