/*
 * cmd_model.c: `cairn model list | pull [NAME] | verify [NAME] | rm NAME`
 * (`cairn embed` is cmd_embed.c).
 *
 * The registry and downloader are src/embed/registry.h; this file adds
 * what only a command line has: the progress bar (stderr, on a TTY only)
 * and the npm registry base, taken from CAIRN_NPM_REGISTRY or, failing
 * that, from `npm config get registry`, so no host is written here.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "embed/registry.h"

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

static const struct embed_reg_model *named(const char *name)
{
    const struct embed_reg_model *m = embed_reg_find(name);

    if (!m)
        cli_error("unknown model '%s' (see cairn model list)", name);
    return m;
}

static int model_list(void)
{
    char dir[PATH_MAX];
    size_t i;

    if (embed_reg_models_dir(dir, sizeof(dir)) != 0)
        dir[0] = 0;
    printf("%-38s %4s  %-10s %-9s %s\n", "NAME", "DIM", "STATUS", "CHECKSUMS", "ABOUT");
    for (i = 0; i < embed_reg_count(); i++) {
        const struct embed_reg_model *m = embed_reg_get(i);
        printf("%-38s %4d  %-10s %-9s %s%s\n", m->name, m->dim,
               embed_reg_installed(m) ? "installed" : "-",
               embed_reg_pinned(m) ? "pinned" : "missing", m->about,
               strcmp(m->name, EMBED_REG_DEFAULT) == 0 ? " [default]" : "");
    }
    printf("\nmodels folder: %s (CAIRN_MODEL_DIR)\n", dir[0] ? dir : "(unset)");
    return 0;
}

static int model_pull(const char *name)
{
    const struct embed_reg_model *m = named(name ? name : EMBED_REG_DEFAULT);
    struct bar b = { isatty(2), -2 };
    char err[512], base[1024] = "";
    int rc;

    if (!m)
        return 2;
    if (embed_reg_installed(m)) {
        printf("%s is already installed\n", m->name);
        return 0;
    }
    if (m->source == EMBED_REG_NPM && npm_registry(base, sizeof(base)) != 0) {
        cli_error("no npm registry: set CAIRN_NPM_REGISTRY or install and configure npm");
        return 1;
    }
    rc = embed_reg_pull(m, base[0] ? base : NULL, progress, &b, err, sizeof(err));
    if (b.tty && b.last != -2)
        fputc('\n', stderr);
    if (rc != 0) {
        cli_error("pull %s: %s", m->name, err);
        return 1;
    }
    printf("%s installed and verified\n", m->name);
    return 0;
}

static int model_verify(const char *name)
{
    size_t i;
    int bad = 0, any = 0;

    for (i = 0; i < embed_reg_count(); i++) {
        const struct embed_reg_model *m = embed_reg_get(i);
        char err[512];
        int rc;
        if (name ? strcmp(name, m->name) != 0 : !embed_reg_installed(m))
            continue;
        any = 1;
        rc = embed_reg_verify(m, err, sizeof(err));
        if (rc == 0) {
            printf("%s: ok\n", m->name);
        } else {
            printf("%s: FAILED: %s\n", m->name, err);
            bad = 1;
        }
    }
    if (name && !any)
        return named(name) ? 1 : 2;
    if (!any)
        printf("no models installed\n");
    return bad;
}

int cmd_model(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *sub = argc > 1 ? argv[1] : "list";

    (void)ctx;
    if (!strcmp(sub, "list"))
        return model_list();
    if (!strcmp(sub, "pull"))
        return model_pull(argc > 2 ? argv[2] : NULL);
    if (!strcmp(sub, "verify"))
        return model_verify(argc > 2 ? argv[2] : NULL);
    if (!strcmp(sub, "rm") && argc > 2) {
        const struct embed_reg_model *m = named(argv[2]);
        char err[512];
        if (!m)
            return 2;
        if (embed_reg_remove(m, err, sizeof(err)) != 0) {
            cli_error("rm %s: %s", m->name, err);
            return 1;
        }
        printf("%s removed\n", m->name);
        return 0;
    }
    cli_error("usage: cairn model list | pull [NAME] | verify [NAME] | rm NAME");
    return 2;
}
