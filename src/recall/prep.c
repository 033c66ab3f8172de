/*
 * prep.c: a question prepared before its store is open (cairn_prep_start,
 * issue 16, "Hybrid in the hook"). The prompt hook knows its question
 * before cairn_open: the model's load (~2 ms) and the question's encoding
 * (~8.6 ms of CPU with use-lite-en) then run beside the process's open of
 * the store and its keyword work instead of after the open. The thread is
 * dense.c's (dense_pre_begin), made from settings only; a recall adopts
 * it (dense_pre_start) when its handle resolves the same model folder,
 * then it scores the store's vectors as a thread started by the recall
 * would. Which model a handle uses is decided by its settings alone
 * (embed.model, embed.model_dir, and the registry's folders under them:
 * store/vectors.c, vec_model_resolve), never by the store's file, so the
 * folder both resolve to, compared as text, says whether the vector is
 * the one the recall would make.
 */
#include <stdlib.h>
#include <string.h>

#include "recall/recall.h"
#include "store/vectors.h"

struct cairn_prep {
    struct cairn cfg;       /* settings only: no connection (dense_pre_run's h) */
    char *query;
    char  dir[4096];        /* the model folder cfg resolves to */
    struct dense_pre pre;
    int   taken;            /* 2 a recall took its thread, 1 one passed it by */
};

static const int prep_keys[] = { CAIRN__SET_EMBED_MODEL, CAIRN__SET_MODEL_DIR,
                                 CAIRN__SET_EMBED_THREADS };

int cairn_prep_start(const char *query, const struct cairn_prep_opts *opts,
                     struct cairn_prep **out)
{
    struct cairn_prep_opts o = CAIRN_PREP_OPTS_INIT;
    struct cairn_prep *p;
    char err[512];
    *out = NULL;
    if (!query)
        return CAIRN_INVALID;
    if (strlen(query) > RECALL_MAX_QUERY)
        return CAIRN_TOOBIG;
    if (opts) {
        /* as cairn__opts, without a handle to name the error in */
        if (opts->size < sizeof o.size || opts->size > sizeof o)
            return CAIRN_INVALID;
        memcpy(&o, opts, opts->size);
    }
    if (!(p = calloc(1, sizeof *p)))
        return CAIRN_NOMEM;
    const char *v[] = { o.model, o.model_dir, o.threads };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (v[i] && *v[i] && !(p->cfg.set[prep_keys[i]] = strdup(v[i])))
            goto nomem;
    if (!(p->query = strdup(query)))
        goto nomem;
    *out = p;
    /* nothing to load (keyword only, no model installed): no thread, and
     * no recall will take it */
    const char *m = o.model;
    if ((m && (!strcmp(m, "none") || !strcmp(m, "off") || !strcmp(m, "0"))) ||
        vec_model_resolve(&p->cfg, p->dir, sizeof p->dir, err, sizeof err) != 0) {
        p->dir[0] = '\0';
        return CAIRN_OK;
    }
    if (dense_pre_begin(&p->cfg, p->query, &p->pre) != 0)
        p->dir[0] = '\0';
    return CAIRN_OK;
nomem:
    cairn_prep_free(p);
    return CAIRN_NOMEM;
}

struct dense_pre *prep_take(struct cairn_prep *p, const struct cairn *h, const char *query)
{
    char dir[4096], err[512];
    const char *t = cairn__setting(h, CAIRN__SET_EMBED_THREADS);
    const char *pt = p ? p->cfg.set[CAIRN__SET_EMBED_THREADS] : NULL;
    if (!p || p->taken || !p->pre.started || strcmp(p->query, query))
        return NULL;
    p->taken = 1;
    /* another model (or encoder threads): its thread stays at its gate
     * until cairn_prep_free */
    if ((t && pt ? strcmp(t, pt) : t != pt) ||
        vec_model_resolve(h, dir, sizeof dir, err, sizeof err) != 0 || strcmp(dir, p->dir))
        return NULL;
    p->taken = 2;
    return &p->pre;
}

int prep_taken(const struct cairn_prep *p)
{
    return p->taken;
}

void cairn_prep_free(struct cairn_prep *p)
{
    if (!p)
        return;
    dense_pre_free(&p->pre);
    for (size_t i = 0; i < CAIRN__NSET; i++)
        free(p->cfg.set[i]);
    free(p->query);
    free(p);
}
