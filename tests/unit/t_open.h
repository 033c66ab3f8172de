/*
 * t_open.h: cairn_open for unit tests, with the settings (cairn_set) the
 * test has chosen in t_model, t_vec_cache and t_redact. The library reads
 * no CAIRN_* variable, so a test sets these instead of the environment.
 * Keyword-only by default, as tests/run.sh's CAIRN_EMBED_MODEL=none makes
 * the CLI tests: no test depends on a model the user installed.
 */
#ifndef CAIRN_T_OPEN_H
#define CAIRN_T_OPEN_H

#include "cairn.h"

static const char *t_model = "none";   /* "embed.model" */
static const char *t_vec_cache;        /* "vec.cache" (NULL: default) */
static const char *t_redact;           /* "redact" (NULL: default) */

static inline int t_open(const char *path, unsigned flags, struct cairn **out)
{
    int rc = cairn_open(path, flags, out);
    if (!rc)
        rc = cairn_set(*out, "embed.model", t_model);
    if (!rc)
        rc = cairn_set(*out, "vec.cache", t_vec_cache);
    if (!rc)
        rc = cairn_set(*out, "redact", t_redact);
    return rc;
}

#endif
