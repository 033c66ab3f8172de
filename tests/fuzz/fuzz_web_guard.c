/*
 * fuzz_web_guard.c: libFuzzer target for what `cairn web` checks before it
 * reads anything (cli/web/guard.c): the Host and Origin headers and the
 * token at the start of the path, on any bytes.
 *
 * Input: two bytes of port, then three parts cut at NULs: a Host, an
 * Origin, a URL path. Checks: a Host accepted is exactly one of the three
 * loopback names with this port (no port only for 80), compared
 * case-insensitively; an Origin accepted is "http://" and an accepted Host;
 * a path passes the token only when it starts with "/" and the token and
 * goes on with "/" or ends, and what it gives is that rest.
 */
#include <strings.h>

#include "fuzz.h"
#include "../../cli/web/guard.h"

static const char token[] = "0123456789abcdef0123456789abcdef";

/* The reference: one of the names, exactly, with the port. */
static int expect_host(const char *h, unsigned port)
{
    static const char *const names[] = { "127.0.0.1", "[::1]", "localhost" };
    char want[64];
    for (size_t i = 0; i < 3; i++) {
        snprintf(want, sizeof want, "%s:%u", names[i], port);
        if (!strcasecmp(h, want) && !strncmp(h + strlen(names[i]), want + strlen(names[i]), 8))
            return 1;
        if (port == 80 && !strcasecmp(h, names[i]))
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_part p[3];
    if (size < 2)
        return 0;
    unsigned port = (unsigned)data[0] << 8 | data[1];
    fuzz_split(data + 2, size - 2, p, 3);
    char *host = strndup(p[0].p, p[0].n), *origin = strndup(p[1].p, p[1].n);
    char *url = strndup(p[2].p, p[2].n);
    if (!host || !origin || !url)
        abort();

    if (web_host_ok(host, port) != expect_host(host, port))
        abort();
    int o = web_origin_ok(origin, port);
    if (o != (!strncasecmp(origin, "http://", 7) && expect_host(origin + 7, port)))
        abort();
    if (!web_origin_ok(NULL, port))          /* no Origin: a same-origin GET */
        abort();

    const char *rest = web_token_path(url, token);
    int want = url[0] == '/' && !strncmp(url + 1, token, 32) && (url[33] == '\0' || url[33] == '/');
    if (!!rest != want || (rest && rest != url + 33))
        abort();
    /* The token itself, with a path after it, always passes. */
    char ok[64];
    snprintf(ok, sizeof ok, "/%s/api", token);
    if (web_token_path(ok, token) != ok + 33)
        abort();
    free(host);
    free(origin);
    free(url);
    return 0;
}
