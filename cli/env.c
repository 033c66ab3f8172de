/*
 * env.c: the one place where the environment becomes the library's
 * settings. The library reads no CAIRN_* variable itself (but CAIRN_BLAS,
 * process-wide: docs/ARCHITECTURE.md, "Settings"): every store handle the
 * CLI opens gets these variables as cairn_set settings, the model
 * commands get the models folder and endpoint as arguments, and the store
 * path $CAIRN_DB is resolved here. The CLI's own variables (hooks, MCP,
 * log) are read by the code they steer.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Variable -> setting (cairn.h, cairn_set). An unset or empty variable
 * leaves the setting at its default, as an empty one always did. */
static const struct { const char *env, *key; } env_settings[] = {
    { "CAIRN_REDACT",            "redact" },
    { "CAIRN_EMBED_MODEL",       "embed.model" },
    { "CAIRN_MODEL_DIR",         "embed.model_dir" },
    { "CAIRN_EMBED_THREADS",     "embed.threads" },
    { "CAIRN_EMBED_MAX_PIECES",  "embed.max_pieces" },
    { "CAIRN_EMBED_SENTENCES",   "embed.sentences" },
    { "CAIRN_VEC_F32",           "vec.f32" },
    { "CAIRN_VEC_CACHE",         "vec.cache" },
    { "CAIRN_RECALL_EXHAUSTIVE", "recall.exhaustive" },
    { "CAIRN_RECALL_PRUNE_MSGS", "recall.prune_msgs" },
    { "CAIRN_REPLY_LANE",        "recall.reply_lane" },
    { "CAIRN_PG_DENSE",          "pg.dense" },
    { "CAIRN_RECALL_TIER",       "recall.tier" },
    { "CAIRN_TIER_KEEP",         "store.tier_keep" },
    { "CAIRN_RECALL_PACKED",     "recall.packed" },
    { "CAIRN_TIER_WALK",         "store.tier_walk" },
    { "CAIRN_ADD_THREAD",        "store.add_thread" },
    { "CAIRN_RECALL_THREADS",    "recall.threads" },
    { "CAIRN_RECALL_SPLIT_MSGS", "recall.split_msgs" },
    { "CAIRN_RECALL_UNITS",      "recall.units" },
    { "CAIRN_RECALL_SKETCH",     "recall.sketch" },
};

static const char *env_value(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

const char *cli_db_path(const struct cli_ctx *ctx)
{
    if (ctx->db_path && *ctx->db_path)
        return ctx->db_path;
    return env_value("CAIRN_DB");
}

int cli_default_path(char *out, size_t n)
{
    const char *env = env_value("CAIRN_DB");
    if (env)
        return (size_t)snprintf(out, n, "%s", env) < n ? CAIRN_OK : CAIRN_TOOBIG;
    return cairn_default_path(out, n);
}

int cli_db_open(const char *path, unsigned flags, struct cairn **out)
{
    int rc = cairn_open(path, flags, out);
    for (size_t i = 0; !rc && i < sizeof env_settings / sizeof env_settings[0]; i++) {
        const char *v = env_value(env_settings[i].env);
        if (v)
            rc = cairn_set(*out, env_settings[i].key, v);
    }
    return rc;
}

const char *cli_embed_model(void)
{
    return env_value("CAIRN_EMBED_MODEL");
}

/* The variable's value that cli_db_open would give setting key. */
static const char *setting_env(const char *key)
{
    for (size_t i = 0; i < sizeof env_settings / sizeof env_settings[0]; i++)
        if (!strcmp(env_settings[i].key, key))
            return env_value(env_settings[i].env);
    return NULL;
}

void cli_prep_opts(struct cairn_prep_opts *o)
{
    o->model = setting_env("embed.model");
    o->model_dir = setting_env("embed.model_dir");
    o->threads = setting_env("embed.threads");
}

/* The Hugging Face hub's public address, as huggingface_hub defaults to
 * it: a model pulls out of the box; CAIRN_HF_ENDPOINT (or HF_ENDPOINT)
 * points at a mirror instead. Every file is pinned and verified whatever
 * serves it (embed/registry.c). */
#define HF_DEFAULT_ENDPOINT "https://huggingface.co"

int cli_models_open(struct cairn_models **out)
{
    const char *hf = env_value("CAIRN_HF_ENDPOINT");
    if (!hf)
        hf = env_value("HF_ENDPOINT");
    return cairn_models_open(env_value("CAIRN_MODEL_DIR"), hf ? hf : HF_DEFAULT_ENDPOINT, out);
}
