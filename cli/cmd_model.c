/*
 * cmd_model.c: `cairn model list | pull [NAME] | verify [NAME] | rm NAME`
 * (`cairn embed` is cmd_embed.c).
 *
 * The registry and downloader are the library's (cairn.h, "Embedding
 * models"); this file adds what only a command line has: the progress bar
 * (stderr, on a TTY only) and the npm registry base, taken from
 * CAIRN_NPM_REGISTRY or, failing that, from `npm config get registry`, so
 * no host is written here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

struct bar {
    int tty;
    int last;
};

static void progress(void *ud, const char *file, uint64_t done, uint64_t total)
{
    struct bar *b = ud;
    int pct;

    if (!b->tty)
        return;
    pct = total ? (int)(done * 100 / total) : -1;
    if (pct == b->last && pct >= 0)
        return;
    b->last = pct;
    if (total) {
        int i, fill = pct / 4;
        fprintf(stderr, "\r  %-22.22s [", file);
        for (i = 0; i < 25; i++)
            fputc(i < fill ? '#' : ' ', stderr);
        fprintf(stderr, "] %3d%% %7.1f MB", pct, (double)done / 1e6);
    } else {
        fprintf(stderr, "\r  %-22.22s %7.1f MB", file, (double)done / 1e6);
    }
    fflush(stderr);
}

/* The npm registry base: env, else npm's own configuration. */
static int npm_registry(char *out, size_t n)
{
    const char *e = getenv("CAIRN_NPM_REGISTRY");
    FILE *p;
    size_t len;

    if (e && *e)
        return (size_t)snprintf(out, n, "%s", e) < n ? 0 : -1;
    p = popen("npm config get registry 2>/dev/null", "r");
    if (!p)
        return -1;
    if (!fgets(out, (int)n, p))
        out[0] = 0;
    pclose(p);
    len = strlen(out);
    while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r' || out[len - 1] == ' '))
        out[--len] = 0;
    return strncmp(out, "http://", 7) == 0 || strncmp(out, "https://", 8) == 0 ? 0 : -1;
}

/* The model called name, or 0 after printing why (unknown name). */
static int named(struct cairn_models *r, const char *name, struct cairn_model_info *out)
{
    if (cairn_models_find(r, name, out) == CAIRN_OK)
        return 1;
    cli_error("%s", cairn_models_errmsg(r));
    return 0;
}

static int model_list(struct cairn_models *r)
{
    const char *dir = cairn_models_dir(r);
    struct cairn_model_info m;

    printf("%-38s %4s  %-10s %-9s %s\n", "NAME", "DIM", "STATUS", "CHECKSUMS", "ABOUT");
    for (size_t i = 0; cairn_models_get(r, i, &m) == CAIRN_OK; i++)
        printf("%-38s %4d  %-10s %-9s %s%s\n", m.name, m.dim, m.installed ? "installed" : "-",
               m.pinned ? "pinned" : "missing", m.about, m.is_default ? " [default]" : "");
    printf("\nmodels folder: %s (CAIRN_MODEL_DIR)\n", dir[0] ? dir : "(unset)");
    return 0;
}

/* The default model's name. */
static const char *default_name(struct cairn_models *r)
{
    struct cairn_model_info m;

    for (size_t i = 0; cairn_models_get(r, i, &m) == CAIRN_OK; i++)
        if (m.is_default)
            return m.name;
    return "";
}

static int model_pull(struct cairn_models *r, const char *name)
{
    struct cairn_model_info m;
    struct bar b = { isatty(2), -2 };
    char base[1024] = "";
    int rc;

    if (!named(r, name ? name : default_name(r), &m))
        return 2;
    if (m.installed) {
        printf("%s is already installed\n", m.name);
        return 0;
    }
    if (!strcmp(m.source, "npm") && npm_registry(base, sizeof(base)) != 0) {
        cli_error("no npm registry: set CAIRN_NPM_REGISTRY or install and configure npm");
        return 1;
    }
    rc = cairn_model_pull(r, m.name, base[0] ? base : NULL, progress, &b);
    if (b.tty && b.last != -2)
        fputc('\n', stderr);
    if (rc != CAIRN_OK) {
        cli_error("pull %s: %s", m.name, cairn_models_errmsg(r));
        return 1;
    }
    printf("%s installed and verified\n", m.name);
    return 0;
}

static int model_verify(struct cairn_models *r, const char *name)
{
    struct cairn_model_info m, unused;
    int bad = 0, any = 0;

    for (size_t i = 0; cairn_models_get(r, i, &m) == CAIRN_OK; i++) {
        if (name ? strcmp(name, m.name) != 0 : !m.installed)
            continue;
        any = 1;
        if (cairn_model_verify(r, m.name) == CAIRN_OK) {
            printf("%s: ok\n", m.name);
        } else {
            printf("%s: FAILED: %s\n", m.name, cairn_models_errmsg(r));
            bad = 1;
        }
    }
    if (name && !any)
        return named(r, name, &unused) ? 1 : 2;
    if (!any)
        printf("no models installed\n");
    return bad;
}

static int model_rm(struct cairn_models *r, const char *name)
{
    struct cairn_model_info m;

    if (!named(r, name, &m))
        return 2;
    if (cairn_model_remove(r, m.name) != CAIRN_OK) {
        cli_error("rm %s: %s", m.name, cairn_models_errmsg(r));
        return 1;
    }
    printf("%s removed\n", m.name);
    return 0;
}

int cmd_model(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *sub = argc > 1 ? argv[1] : "list";
    struct cairn_models *r = NULL;
    int rc = 2;

    (void)ctx;
    if (cli_models_open(&r) != CAIRN_OK) {
        cli_error("model: %s", cairn_models_errmsg(r));
        cairn_models_close(r);
        return 1;
    }
    if (!strcmp(sub, "list"))
        rc = model_list(r);
    else if (!strcmp(sub, "pull"))
        rc = model_pull(r, argc > 2 ? argv[2] : NULL);
    else if (!strcmp(sub, "verify"))
        rc = model_verify(r, argc > 2 ? argv[2] : NULL);
    else if (!strcmp(sub, "rm") && argc > 2)
        rc = model_rm(r, argv[2]);
    else
        cli_error("usage: cairn model list | pull [NAME] | verify [NAME] | rm NAME");
    cairn_models_close(r);
    return rc;
}
