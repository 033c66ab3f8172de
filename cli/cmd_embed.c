/*
 * cmd_embed.c: `cairn embed [--model NAME|PATH] [--query] TEXT` prints the
 * vector of TEXT as a JSON array; `cairn embed --backfill [--quiet]` gives
 * stored messages with no vector of the current model one (backfill.c,
 * docs/HYBRID.md).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "embed/embed.h"
#include "embed/registry.h"

int cmd_embed(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *spec = NULL, *text = NULL, *v;
    char dir[PATH_MAX], err[512];
    struct embed_model *m;
    float *vec;
    int i = 1, query = 0, d, dim;

    if (argc > 1 && !strcmp(argv[1], "--backfill"))
        return cli_backfill(argc, argv, ctx, 0, 2);   /* argv[1] is --backfill */
    while (i < argc) {
        if (cli_opt(argc, argv, &i, "--model", &v)) {
            spec = v;
        } else if (!strcmp(argv[i], "--query")) {
            query = 1;
            i++;
        } else if (!text) {
            text = argv[i++];
        } else {
            cli_error("usage: cairn embed [--model NAME|PATH] [--query] TEXT");
            return 2;
        }
    }
    if (!text) {
        cli_error("usage: cairn embed [--model NAME|PATH] [--query] TEXT");
        return 2;
    }
    if (embed_reg_resolve(spec, dir, sizeof(dir), err, sizeof(err)) != 0) {
        cli_error("%s", err);
        return 1;
    }
    m = embed_load(dir, err, sizeof(err));
    if (!m) {
        cli_error("cannot load the model in %s: %s", dir, err);
        return 1;
    }
    dim = embed_dim(m);
    vec = malloc((size_t)dim * sizeof(float));
    if (!vec || embed_encode(m, &text, 1, query, vec) != 0) {
        cli_error("embed: %s", vec ? embed_errmsg(m) : "out of memory");
        free(vec);
        embed_free(m);
        return 1;
    }
    putchar('[');
    for (d = 0; d < dim; d++)
        printf("%s%.7g", d ? "," : "", vec[d]);
    printf("]\n");
    free(vec);
    embed_free(m);
    return 0;
}
