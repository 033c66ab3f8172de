/*
 * server.c: the HTTP side of `cairn web` (docs/WEB.md) on libmicrohttpd:
 * two daemons, one on 127.0.0.1 and one on ::1 (never a wildcard
 * address), each with one thread; a request passes the guard (Host,
 * Origin, token: guard.h) before anything is read, and every answer
 * carries the same headers: no caching, no sniffing, no framing, a
 * Content-Security-Policy that allows only the page's own script, and no
 * CORS header at all, so no other origin can read an answer.
 */
#include "web.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mhd.h"

struct web_server {
    struct web *w;
    const struct web_mhd *m;
    struct MHD_Daemon *d4, *d6;
};

/* Per connection: the POST body read so far. */
struct conn {
    struct buf body;
    int too_big;
};

static const char csp[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- answers ---- */

void web_fail(struct web_reply *r, unsigned status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    buf_reset(&r->body);
    buf_adds(&r->body, "{\"error\":");
    buf_add_json_str(&r->body, msg, strlen(msg));
    buf_adds(&r->body, "}\n");
    r->status = status;
    r->type = NULL;
    r->filename[0] = '\0';
}

void web_fail_rc(struct web_reply *r, struct cairn *db, const char *what, int rc)
{
    unsigned st = rc == CAIRN_NOTFOUND ? 404 : rc == CAIRN_TOOBIG ? 413
                : rc == CAIRN_INVALID ? 400 : 500;
    const char *m = db ? cairn_errmsg(db) : "";
    web_fail(r, st, "%s: %s", what, *m ? m : cairn_errstr(rc));
}

const char *web_arg(const struct web_req *q, struct web_reply *r, const char *name, size_t cap)
{
    const struct web_mhd *m = web_mhd_load(NULL, 0);
    const char *v = m->lookup_connection_value(q->conn, MHD_GET_ARGUMENT_KIND, name);
    if (v && strlen(v) > cap) {
        if (!r->status)
            web_fail(r, 413, "%s is longer than %zu bytes",
                     strcmp(name, "q") ? name : "the question", cap);
        return NULL;
    }
    return v;
}

long web_arg_long(const struct web_req *q, struct web_reply *r, const char *name, long def,
                  long lo, long hi)
{
    const char *v = web_arg(q, r, name, 32);
    char *end;
    if (!v || !*v)
        return def;
    long n = strtol(v, &end, 10);
    if (*end || n < lo || n > hi) {
        if (!r->status)
            web_fail(r, 400, "%s must be a number from %ld to %ld", name, lo, hi);
        return def;
    }
    return n;
}

static enum MHD_Result send_reply(const struct web_mhd *m, struct MHD_Connection *c,
                                  struct web_reply *r, double ms)
{
    size_t n;
    char *body = buf_detach(&r->body, &n), timing[64];
    struct MHD_Response *resp =
        m->create_response_from_buffer(n, body ? body : "", body ? MHD_RESPMEM_MUST_FREE
                                                                  : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    m->add_response_header(resp, "Content-Type",
                           r->type ? r->type : "application/json; charset=utf-8");
    m->add_response_header(resp, "Cache-Control", "no-store");
    m->add_response_header(resp, "X-Content-Type-Options", "nosniff");
    m->add_response_header(resp, "X-Frame-Options", "DENY");
    m->add_response_header(resp, "Referrer-Policy", "no-referrer");
    m->add_response_header(resp, "Cross-Origin-Resource-Policy", "same-origin");
    m->add_response_header(resp, "Cross-Origin-Opener-Policy", "same-origin");
    m->add_response_header(resp, "Content-Security-Policy", csp);
    /* What the server spent on this answer: bench/bench_web.py reads it. */
    snprintf(timing, sizeof timing, "app;dur=%.3f", ms);
    m->add_response_header(resp, "Server-Timing", timing);
    if (r->filename[0]) {
        char cd[200];
        snprintf(cd, sizeof cd, "attachment; filename=\"%s\"", r->filename);
        m->add_response_header(resp, "Content-Disposition", cd);
    }
    enum MHD_Result ok = m->queue_response(c, r->status ? r->status : 500, resp);
    m->destroy_response(resp);
    return ok;
}

static void serve_asset(const char *path, struct web_reply *r)
{
    if (!*path || !strcmp(path, "/"))
        path = "/index.html";
    for (size_t i = 0; i < web_n_assets; i++)
        if (!strcmp(path, web_assets[i].path)) {
            buf_add(&r->body, web_assets[i].data, web_assets[i].len);
            r->type = web_assets[i].type;
            r->status = 200;
            return;
        }
    web_fail(r, 404, "no such page");
}

/* ---- the request ---- */

/* Host, Origin, token: a 403 into r when one fails; else the path after
 * the token. Checked before any byte of the store is read. */
static const char *guard(struct web_server *s, struct MHD_Connection *c, const char *url,
                         struct web_reply *r)
{
    const char *host = s->m->lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    const char *origin = s->m->lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    const char *rest;
    if (!web_host_ok(host, s->w->port))
        web_fail(r, 403, "forbidden: the Host header must name this machine's loopback address");
    else if (!web_origin_ok(origin, s->w->port))
        web_fail(r, 403, "forbidden: requests from another origin are refused");
    else if (!(rest = web_token_path(url, s->w->token)))
        web_fail(r, 403, "forbidden: the address lacks this run's token "
                         "(see what cairn web printed)");
    else
        return rest;
    return NULL;
}

static void route(struct web_server *s, struct MHD_Connection *c, const char *rest, int post,
                  struct conn *st, struct web_reply *r)
{
    if (!*rest) {                      /* "/TOKEN": relative links need the slash */
        web_fail(r, 404, "open the address with a slash at its end");
        return;
    }
    if (strncmp(rest, "/api/", 5)) {
        if (post)
            web_fail(r, 405, "the page's files are read with GET");
        else
            serve_asset(rest, r);
        return;
    }
    if (st->too_big) {
        web_fail(r, 413, "the request body is over %d bytes", WEB_BODY_MAX);
        return;
    }
    struct web_req q = { s->w, c, rest + 4, post, st->body.p ? st->body.p : "", st->body.n };
    pthread_mutex_lock(&s->w->lock);
    web_api(&q, r);
    pthread_mutex_unlock(&s->w->lock);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    struct web_server *s = cls;
    struct conn *st = *con_cls;
    struct web_reply r = { 0, BUF_INIT, NULL, "" };
    int post = !strcmp(method, "POST");
    double t0 = now_ms();
    const char *rest;

    if (!st) {                         /* headers read: guard now, body next */
        if (!(st = calloc(1, sizeof *st)))
            return MHD_NO;
        buf_init(&st->body, WEB_BODY_MAX + 1);
        *con_cls = st;
        if (!guard(s, c, url, &r))
            return send_reply(s->m, c, &r, now_ms() - t0);
        if (!post && strcmp(method, "GET") && strcmp(method, "HEAD")) {
            web_fail(&r, 405, "only GET and POST");
            return send_reply(s->m, c, &r, now_ms() - t0);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (!st->too_big && buf_add(&st->body, upload, *upload_size))
            st->too_big = 1;
        *upload_size = 0;
        return MHD_YES;
    }
    buf_addc(&st->body, '\0');         /* a NUL after the body, not counted */
    if (st->body.n)
        st->body.n--;
    if (!(rest = guard(s, c, url, &r)))
        return send_reply(s->m, c, &r, now_ms() - t0);
    route(s, c, rest, post, st, &r);
    return send_reply(s->m, c, &r, now_ms() - t0);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode why)
{
    struct conn *st = *con_cls;
    if (st) {
        buf_release(&st->body);
        free(st);
        *con_cls = NULL;
    }
}

/* One daemon on one loopback address. */
static struct MHD_Daemon *listen_on(struct web_server *s, int v6, unsigned port)
{
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    const struct sockaddr *sa;
    memset(&a4, 0, sizeof a4);
    memset(&a6, 0, sizeof a6);
    a4.sin_family = AF_INET;
    a4.sin_port = htons((uint16_t)port);
    a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a6.sin6_family = AF_INET6;
    a6.sin6_port = htons((uint16_t)port);
    a6.sin6_addr = in6addr_loopback;
    sa = v6 ? (const struct sockaddr *)&a6 : (const struct sockaddr *)&a4;
    return s->m->start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | (v6 ? MHD_USE_IPv6 : 0),
        (uint16_t)port, NULL, NULL, on_request, s,
        MHD_OPTION_SOCK_ADDR, sa,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)WEB_CONN_MAX,
        /* the request line and headers: a huge URL is refused here (414) */
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 << 10),
        MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_NOTIFY_COMPLETED, on_done, s,
        MHD_OPTION_END);
}

int web_start(struct web *w, unsigned port, struct web_server **out, char *err, size_t errlen)
{
    struct web_server *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->w = w;
    if (!(s->m = web_mhd_load(err, errlen)))
        goto fail;
    if (!(s->d4 = listen_on(s, 0, port))) {
        snprintf(err, errlen, "cannot listen on 127.0.0.1 port %u (in use?)", port);
        goto fail;
    }
    const union MHD_DaemonInfo *di = s->m->get_daemon_info(s->d4, MHD_DAEMON_INFO_BIND_PORT);
    w->port = di ? di->port : port;
    /* ::1 on the same port when the machine has IPv6; without it the
     * server still works on 127.0.0.1, the address it prints. */
    s->d6 = listen_on(s, 1, w->port);
    w->ipv6 = s->d6 != NULL;
    *out = s;
    return 0;
fail:
    free(s);
    return -1;
}

void web_stop(struct web_server *s)
{
    if (!s)
        return;
    if (s->d6)
        s->m->stop_daemon(s->d6);
    if (s->d4)
        s->m->stop_daemon(s->d4);
    free(s);
}
