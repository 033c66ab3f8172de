/*
 * cmd_web.c: `cairn web [--port N] [--open]`: the local workbench
 * (docs/WEB.md, cli/web/). Opens the store read-only, starts the server
 * on the loopback addresses with a fresh token, prints the address with
 * the token on stdout, and serves until SIGINT or SIGTERM.
 */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>

#include "cli.h"
#include "web/web.h"

/* The server's page cache, MB: the indexes recall reads on a million
 * messages (docs/WEB.md, "Speed"). */
#define WEB_CACHE_MB "256"

extern char **environ;

/* WEB_TOKEN_LEN hex digits from the kernel's random source. */
static int make_token(char *out)
{
    unsigned char r[WEB_TOKEN_LEN / 2];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return -1;
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    return 0;
}

/* xdg-open URL, not waited for; a missing opener is said, not fatal. */
static void open_browser(const char *url)
{
    pid_t pid;
    char *argv[] = { "xdg-open", (char *)url, NULL };
    if (posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ))
        cli_error("web: cannot run xdg-open; open the address above yourself");
}

int cmd_web(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *port_s = NULL;
    int open_it = 0, rc, sig;
    long port = 0;
    struct web w;
    struct web_server *srv = NULL;
    char err[512], *end;
    sigset_t stop;

    for (int i = 1; i < argc;) {
        if (cli_opt(argc, argv, &i, "--port", &port_s))
            continue;
        if (!strcmp(argv[i], "--open")) {
            open_it = 1;
            i++;
            continue;
        }
        cli_error("web: unknown argument %s", argv[i]);
        return CLI_USAGE;
    }
    if (port_s && ((port = strtol(port_s, &end, 10)) < 0 || port > 65535 || *end || !*port_s)) {
        cli_error("web: --port is 0 (any free port) to 65535, not %s", port_s);
        return CLI_USAGE;
    }
    memset(&w, 0, sizeof w);
    if (make_token(w.token)) {
        cli_error("web: no random bytes for the token");
        return CLI_FAILED;
    }
    w.db_path = cli_db_path(ctx);
    if ((rc = cli_open(ctx, CAIRN_OPEN_READONLY, &w.db)))
        return rc;
    /* one handle for every request: a page cache that holds the indexes
     * recall reads, and every turn's metadata, stay warm between them (a
     * one-shot reader keeps 2 MB and reads the turns it needs) */
    if (cairn_set(w.db, "store.cache_mb", WEB_CACHE_MB) ||
        cairn_set(w.db, "store.keep_turns", "1")) {
        cli_error("web: %s", cairn_errmsg(w.db));
        rc = CLI_FAILED;
        cairn_close(w.db);
        return rc;
    }
    pthread_mutex_init(&w.lock, NULL);
    /* The server's threads inherit this mask: the signals wait for
     * sigwait below, in this thread. */
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (web_start(&w, (unsigned)port, &srv, err, sizeof err)) {
        cli_error("web: %s", err);
        rc = CLI_FAILED;
        goto out;
    }
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/%s/", w.port, w.token);
    printf("%s\n", url);
    fflush(stdout);
    fprintf(stderr, "cairn web: serving %s on 127.0.0.1%s port %u; Ctrl-C stops it\n",
            cairn_path(w.db), w.ipv6 ? " and [::1]" : " (no IPv6 here)", w.port);
    if (open_it) {
        signal(SIGCHLD, SIG_IGN);          /* the opener is never waited for */
        open_browser(url);
    }
    sigwait(&stop, &sig);
    rc = CLI_OK;
out:
    web_stop(srv);
    web_api_free(&w);
    cairn_close(w.db);
    pthread_mutex_destroy(&w.lock);
    return rc;
}
