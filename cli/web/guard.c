/*
 * guard.c: the token, Host and Origin checks of `cairn web` (guard.h).
 */
#include "guard.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* 1 when s is exactly name, then ":port" (or nothing, for port 80). */
static int is_host(const char *s, size_t n, const char *name, unsigned port)
{
    size_t k = strlen(name);
    char tail[16];
    if (n < k || strncasecmp(s, name, k))
        return 0;
    if (n == k)
        return port == 80;
    int t = snprintf(tail, sizeof tail, ":%u", port);
    return t > 0 && n - k == (size_t)t && !memcmp(s + k, tail, (size_t)t);
}

static int host_ok_n(const char *s, size_t n, unsigned port)
{
    return is_host(s, n, "127.0.0.1", port) || is_host(s, n, "[::1]", port) ||
           is_host(s, n, "localhost", port);
}

int web_host_ok(const char *host, unsigned port)
{
    return host && host_ok_n(host, strlen(host), port);
}

int web_origin_ok(const char *origin, unsigned port)
{
    static const char scheme[] = "http://";
    if (!origin)
        return 1;
    size_t n = strlen(origin);
    if (n <= sizeof scheme - 1 || strncasecmp(origin, scheme, sizeof scheme - 1))
        return 0;
    return host_ok_n(origin + sizeof scheme - 1, n - (sizeof scheme - 1), port);
}

const char *web_token_path(const char *url, const char *token)
{
    unsigned char diff = 0;
    size_t n = strlen(token);
    if (!url || url[0] != '/' || n != WEB_TOKEN_LEN)
        return NULL;
    /* Every byte compared whatever the first difference: the time taken
     * says nothing of how much of a guess was right. A short url stops at
     * its NUL, which differs from every token byte. */
    for (size_t i = 0; i < n; i++) {
        diff |= (unsigned char)(url[1 + i] ^ token[i]);
        if (!url[1 + i])
            return NULL;
    }
    if (diff)
        return NULL;
    const char *rest = url + 1 + n;
    return *rest == '\0' || *rest == '/' ? rest : NULL;
}
