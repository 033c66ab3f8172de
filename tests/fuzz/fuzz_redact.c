/*
 * fuzz_redact.c: libFuzzer target for what every stored string goes
 * through: <private> stripping (src/mask/private.c) and secret masking
 * (src/mask/redact.c), on any bytes.
 *
 * Checks, besides no crash, leak or undefined behaviour:
 *  - private_strip leaves no tag private_has_tag sees, never grows the
 *    text, and stripping its output again changes nothing;
 *  - masking is idempotent: masking the masked text masks nothing more and
 *    returns the same bytes;
 *  - every byte outside "[REDACTED:...]" markers is copied in order: the
 *    output with its markers removed is a subsequence of the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mask/private.h"
#include "mask/redact.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Is out (markers skipped) a subsequence of in? */
static int kept_in_order(const char *in, size_t n, const char *out, size_t m)
{
    size_t i = 0;
    for (size_t j = 0; j < m; j++) {
        if (out[j] == '[' && m - j > 10 && memcmp(out + j, "[REDACTED:", 10) == 0) {
            const char *e = memchr(out + j, ']', m - j);
            if (e) {
                j = (size_t)(e - out);
                continue;
            }
        }
        while (i < n && in[i] != out[j])
            i++;
        if (i == n)
            return 0;
        i++;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    struct buf p = BUF_INIT, p2 = BUF_INIT, r = BUF_INIT, r2 = BUF_INIT;

    int k = private_strip(in, size, &p);
    if (k < 0)
        goto out;
    if (p.n > size || (p.n && private_has_tag(p.p, p.n)))
        abort();
    if (k == 0 && (p.n != size || (size && memcmp(p.p, in, size))))
        abort();
    if (private_strip(p.p ? p.p : "", p.n, &p2) != 0 || p2.n != p.n
        || (p.n && memcmp(p2.p, p.p, p.n)))
        abort();

    int m = redact_text(in, size, &r, NULL);
    if (m < 0)
        goto out;
    if (m == 0 && (r.n != size || (size && memcmp(r.p, in, size))))
        abort();
    if (redact_text(r.p ? r.p : "", r.n, &r2, NULL) != 0 || r2.n != r.n
        || (r.n && memcmp(r2.p, r.p, r.n)))
        abort();
    if (!kept_in_order(in, size, r.p ? r.p : "", r.n))
        abort();
out:
    buf_release(&p);
    buf_release(&p2);
    buf_release(&r);
    buf_release(&r2);
    return 0;
}
