/*
 * guard.h: what `cairn web` checks before it reads anything for a request
 * (docs/WEB.md): the run's token, the Host header (DNS rebinding: a page
 * of evil.example whose name now points at 127.0.0.1 sends its own name)
 * and the Origin header (another page in the browser). Pure functions on
 * strings, so a fuzz target drives them (tests/fuzz/fuzz_web_guard.c).
 */
#ifndef CAIRN_WEB_GUARD_H
#define CAIRN_WEB_GUARD_H

#include <stddef.h>

/* Bytes of the token as text: 128 random bits in hex. */
#define WEB_TOKEN_LEN 32

/* 1 when host is the loopback name and port the server listens on:
 * "127.0.0.1:P", "[::1]:P" or "localhost:P" (no port only for P 80). */
int web_host_ok(const char *host, unsigned port);
/* 1 when origin is absent (NULL: a same-origin GET sends none) or
 * "http://" and a host web_host_ok accepts; "null" and anything else 0. */
int web_origin_ok(const char *origin, unsigned port);
/* The part of url after "/TOKEN" when url starts with "/" and the token
 * (compared in constant time), followed by "/" or its end; else NULL.
 * "/TOKEN" gives "", "/TOKEN/api/x" gives "/api/x". */
const char *web_token_path(const char *url, const char *token);

#endif
