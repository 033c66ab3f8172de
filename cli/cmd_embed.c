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

int cmd_embed(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *spec = NULL, *text = NULL, *v;
    char dir[PATH_MAX];
    struct cairn_models *r = NULL;
    struct cairn_model *m = NULL;
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
    if (cli_models_open(&r) != CAIRN_OK ||
        cairn_model_resolve(r, spec ? spec : cli_embed_model(), dir, sizeof(dir)) != CAIRN_OK ||
        cairn_model_load(r, dir, &m) != CAIRN_OK) {
        cli_error("%s", cairn_models_errmsg(r));
        cairn_models_close(r);
        return 1;
    }
    cairn_models_close(r);
    dim = cairn_model_dim(m);
    vec = malloc((size_t)dim * sizeof(float));
    if (!vec || cairn_model_encode(m, text, query, vec) != CAIRN_OK) {
        cli_error("embed: %s", vec ? cairn_model_errmsg(m) : "out of memory");
        free(vec);
        cairn_model_free(m);
        return 1;
    }
    putchar('[');
    for (d = 0; d < dim; d++)
        printf("%s%.7g", d ? "," : "", vec[d]);
    printf("]\n");
    free(vec);
    cairn_model_free(m);
    return 0;
}
