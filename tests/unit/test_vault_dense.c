/*
 * test_vault_dense.c: dense vectors of note sections (schema v18,
 * store/vault_vec.c, recall/notes.c; docs/VAULTS.md) and the link lift.
 *
 * Without a model: vectors written by hand (dim 4, a made-up model id)
 * and a question vector given to notes_rank, so the mechanism is checked
 * exactly: a section no word of the question finds joins the candidates
 * by its cosine and is shown; a cosine alone opens no gate; a section
 * holding the question's share on fewer rare words than the keyword gate
 * asks passes it when its cosine vouches for it, not when it does not;
 * without the question's vector nothing of that happens. The vectors go
 * with their section (re-index, vault rm) and a v17 store gains the table.
 * A cosine vouches for no section longer than NOTE_GATE_COS_MAXTOK, nor
 * for one whose cosine every section shares (NOTE_GATE_COS_Z: a pad of
 * 400 pages far from the question makes the vouched one stand out).
 * The link lift ranks a linked page above an unlinked one that holds as
 * much. With use-lite-en installed: `vault add` embeds every section, a
 * re-index embeds only what changed (nothing with embedding off, as in a
 * hook; `embed --backfill` then fills it), and recall finds a paraphrase.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "recall/recall.h"
#include "recall/policy.h"
#include "embed/registry.h"
#include "t_store.h"
#include "t_open.h"

#define MODEL "test-model:1"

static char dir[64];

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    T_CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static const char *const fillers[] = {
    "apple banana cherry", "river mountain valley", "violin cello piano",
    "copper iron nickel", "falcon eagle sparrow", "tulip daisy orchid",
    "granite basalt marble", "comet meteor nebula", "walnut almond pecan",
    "saffron cumin thyme", "glacier tundra steppe", "harbor pier jetty",
};

/* NPAD pages under sub/pad/ holding no word of the questions: a
 * vault's worth of sections whose vectors the question is far from, so a
 * section near it stands out among its cosines (NOTE_GATE_COS_Z: one
 * outlier among n stands sqrt(n - 1) standard deviations above the mean;
 * 400 pages put it past where the vouched weight reaches
 * NOTE_GATE_WEIGHT_COS). */
#define NPAD 400
static void pad_pages(const char *sub, const char *words)
{
    char name[96], text[64];
    snprintf(name, sizeof name, "%s/%s%spad", dir, sub, *sub ? "/" : "");
    T_CHECK(mkdir(name, 0700) == 0);
    for (int i = 0; i < NPAD; i++) {
        snprintf(name, sizeof name, "%s%spad/pad%03d.md", sub, *sub ? "/" : "", i);
        snprintf(text, sizeof text, "# Pad %d\n\n%s.\n", i, words);
        put(name, text);
    }
}

/* A vault of twelve filler pages and the pad, and: restart.md (no word of
 * the questions), target.md (one rare word and one common one of the
 * gate's question), and pages holding that common word. */
static void make_vault(void)
{
    char name[32], text[256];
    snprintf(dir, sizeof dir, "/tmp/cairn-vdense-XXXXXX");
    T_CHECK(mkdtemp(dir) != NULL);
    pad_pages("", "quartz pebble gravel");
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof name, "filler%02d.md", i);
        snprintf(text, sizeof text, "# Filler %d\n\n%s %s.\n", i, fillers[i], i < 8 ? "lantern" : "");
        put(name, text);
    }
    put("restart.md", "# Restart policies\n\nUse unless-stopped: the daemon starts it again "
                      "when it exits with an error or the machine boots.\n");
    put("target.md", "# Target\n\nThe zorbulon lantern sits on the shelf.\n");
}

struct vec_ctx {
    struct cairn *h;
    const char *path;          /* the page whose sections get `on` */
    int8_t on[4], off[4];
};

/* Every section (not the cards) a vector: `on` for c->path's, else `off`. */
static void set_vectors(struct vec_ctx *c)
{
    sqlite3_stmt *st;
    T_EQ_INT(sqlite3_exec(c->h->db, "DELETE FROM vault_vectors", NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_prepare_v2(c->h->db, "INSERT INTO vault_vectors(section, model, dim, "
                                "text_hash, vec) SELECT s.id, '" MODEL "', 4, 0, "
                                "CASE WHEN d.path = ?1 THEN ?2 ELSE ?3 END FROM vault_sections s "
                                "JOIN vault_docs d ON d.id = s.doc WHERE s.line > 0", -1, &st,
                                NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, c->path, -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 2, c->on, 4, SQLITE_STATIC);
    sqlite3_bind_blob(st, 3, c->off, 4, SQLITE_STATIC);
    T_EQ_INT(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
}

/* The pool entry of page path's first section, or NULL. */
static const struct rnote *find(struct cairn *h, const struct note_pool *np, const char *path)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT id FROM vault_docs WHERE path = '%s'", path);
    int64_t doc = count(h, sql);
    for (int i = 0; i < np->n; i++)
        if (np->v[i].doc == doc && !np->v[i].card)
            return &np->v[i];
    return NULL;
}

static void rank(struct cairn *h, const char *question, const struct notes_dense *nd,
                 struct note_pool *np)
{
    struct query q;
    T_EQ_INT(query_parse(&q, question, 0, 0), CAIRN_OK);
    T_EQ_INT(notes_rank(h, &q, 0, nd, np), CAIRN_OK);
    query_free(&q);
}

static void test_dense_notes(void)
{
    struct cairn *h = NULL;
    struct note_pool np;
    make_vault();
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    T_EQ_INT(cairn_vault_add(h, dir, "v", NULL, NULL), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM vault_vectors"), 0);   /* no model: none */
    float qv[4] = { 1, 0, 0, 0 };
    struct notes_dense nd = { qv, 4, MODEL, 0.7 };
    struct vec_ctx c = { h, "restart.md", { 127, 0, 0, 0 }, { 0, 127, 0, 0 } };
    set_vectors(&c);

    /* a paraphrase: no word of restart.md, found by its cosine alone */
    const char *para = "have my container come back by itself";
    rank(h, para, NULL, &np);
    T_CHECK(find(h, &np, "restart.md") == NULL);
    note_pool_free(&np);
    rank(h, para, &nd, &np);
    const struct rnote *x = find(h, &np, "restart.md");
    T_CHECK(x != NULL);
    if (x) {
        T_CHECK(x->has_cos && fabs(x->cos - 1) < 1e-6);
        T_EQ_INT(x->pass, 1);
        T_EQ_INT(x->rank, 0);
        T_EQ_INT(x->gate, 0);               /* a cosine alone opens no gate */
    }
    note_pool_free(&np);
    /* another model's vectors are not read */
    struct notes_dense other = { qv, 4, "other-model:2", 0.7 };
    rank(h, para, &other, &np);
    T_CHECK(find(h, &np, "restart.md") == NULL);
    note_pool_free(&np);

    /* the gate: target.md holds the whole question on one rare word and a
     * common one, under the keyword gate's weight and over the one a
     * cosine vouches for (checked first: the premise of what follows) */
    const char *ask = "zorbulon lantern";
    rank(h, ask, NULL, &np);
    x = find(h, &np, "target.md");
    T_CHECK(x != NULL);
    double w = x ? x->held / log(2.0 + (double)np.nsec) : 0;
    T_CHECK(w >= NOTE_GATE_WEIGHT_COS && w < NOTE_GATE_WEIGHT);
    if (x)
        T_EQ_INT(x->gate, 0);
    note_pool_free(&np);
    c.path = "target.md";
    c.on[0] = 102;                          /* cosine 0.80: vouches (>= 0.7 - 0.2) */
    c.on[1] = 76;
    set_vectors(&c);
    rank(h, ask, &nd, &np);
    x = find(h, &np, "target.md");
    T_CHECK(x && x->gate == 1 && x->cos > 0.79 && x->cos < 0.81);
    note_pool_free(&np);
    /* the same cosine for every section: 0.80 stands out from none of
     * the vault's (a z-score of 0), so it vouches for nothing: the
     * weight asked is NOTE_GATE_WEIGHT's (NOTE_GATE_COS_Z) */
    memcpy(c.off, c.on, sizeof c.off);
    set_vectors(&c);
    rank(h, ask, &nd, &np);
    x = find(h, &np, "target.md");
    T_CHECK(x && x->gate == 0 && x->cos > 0.79 && x->cos < 0.81);
    T_CHECK(np.cos_sd < 1e-6);
    note_pool_free(&np);
    memcpy(c.off, (int8_t[4]){ 0, 127, 0, 0 }, sizeof c.off);
    set_vectors(&c);
    struct notes_dense nogate = { qv, 4, MODEL, 0 };   /* a model with no gate_cosine */
    rank(h, ask, &nogate, &np);
    x = find(h, &np, "target.md");
    T_CHECK(x && x->gate == 0);
    note_pool_free(&np);
    c.on[0] = 38;                           /* cosine 0.30: does not */
    c.on[1] = 121;
    set_vectors(&c);
    rank(h, ask, &nd, &np);
    x = find(h, &np, "target.md");
    T_CHECK(x && x->gate == 0);
    note_pool_free(&np);

    /* the vectors go with their sections: a changed title (redact), a
     * changed file, then vault rm */
    set_vectors(&c);
    int64_t before = count(h, "SELECT count(*) FROM vault_vectors");
    T_CHECK(before > 0);
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE vault_docs SET title = 'x' WHERE path = 'filler00.md'",
                          NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM vault_vectors"), before - 1);
    set_vectors(&c);
    put("target.md", "# Target\n\nThe zorbulon lantern moved to the attic.\n");
    struct stat st;
    char path[256];
    snprintf(path, sizeof path, "%s/target.md", dir);
    T_CHECK(stat(path, &st) == 0);
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE vault_docs SET mtime = 1 WHERE path = 'target.md'", NULL,
                          NULL, NULL), SQLITE_OK);
    T_EQ_INT(cairn_vault_reindex(h, "v", NULL), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM vault_vectors"), before - 1);
    T_EQ_INT(count(h, "SELECT count(*) FROM vault_vectors v LEFT JOIN vault_sections s "
                   "ON s.id = v.section WHERE s.id IS NULL"), 0);
    T_EQ_INT(cairn_vault_rm(h, "v"), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM vault_vectors"), 0);
    cairn_close(h);
}

/* The vouched gate and a long section: its vector is of its opening, so a
 * cosine vouches only for a section of at most NOTE_GATE_COS_MAXTOK index
 * tokens. long.md holds the question as target.md does above (its words
 * recur, so its length does not thin them), past that length: no gate;
 * the same page cut under it, the same vector: the gate. */
static void long_page(int repeats)
{
    char *text = malloc((size_t)repeats * 20 + 32);
    T_CHECK(text != NULL);
    if (!text)
        return;
    size_t n = (size_t)sprintf(text, "# Long\n\n");
    for (int i = 0; i < repeats; i++)
        n += (size_t)sprintf(text + n, "zorbulon lantern. ");
    put("long/long.md", text);
    free(text);
}

static void test_long_section(void)
{
    struct cairn *h = NULL;
    struct note_pool np;
    char root[128], name[64], text[256];
    snprintf(root, sizeof root, "%s/long", dir);
    T_CHECK(mkdir(root, 0700) == 0);
    /* "lantern" in the pad too: the question's weight on long.md stays
     * under the keyword gate's with the pad's sections */
    pad_pages("long", "quartz lantern gravel");
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof name, "long/filler%02d.md", i);
        snprintf(text, sizeof text, "# Filler %d\n\n%s %s.\n", i, fillers[i], i < 8 ? "lantern" : "");
        put(name, text);
    }
    float qv[4] = { 1, 0, 0, 0 };
    struct notes_dense nd = { qv, 4, MODEL, 0.7 };
    struct vec_ctx c = { NULL, "long.md", { 102, 76, 0, 0 }, { 0, 127, 0, 0 } };  /* cosine 0.80 */
    const int repeats[2] = { NOTE_GATE_COS_MAXTOK, NOTE_GATE_COS_MAXTOK / 8 };
    for (int k = 0; k < 2; k++) {
        long_page(repeats[k]);
        T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
        T_EQ_INT(cairn_vault_add(h, root, "v", NULL, NULL), CAIRN_OK);
        c.h = h;
        set_vectors(&c);
        rank(h, "zorbulon lantern", &nd, &np);
        const struct rnote *x = find(h, &np, "long.md");
        T_CHECK(x != NULL);
        if (x) {
            /* the premise: the share and weight the cosine vouches for,
             * under the keyword gate's weight, and the cosine */
            double w = x->held / log(2.0 + (double)np.nsec);
            T_CHECK(x->held / np.total >= NOTE_GATE_SHARE);
            T_CHECK(w >= NOTE_GATE_WEIGHT_COS && w < NOTE_GATE_WEIGHT);
            T_CHECK(x->cos > 0.79 && x->cos < 0.81);
            T_EQ_INT(x->ntok > NOTE_GATE_COS_MAXTOK, k == 0);
            T_EQ_INT(x->gate, k == 1);
        }
        note_pool_free(&np);
        cairn_close(h);
    }
}

/* The link lift: two pages hold the question alike; the one the best page
 * links to ranks first once lifted, the other not. */
static void test_link_lift(void)
{
    struct cairn *h = NULL;
    struct note_pool np;
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    put("hub.md", "# Hub\n\nquorvex quorvex quorvex plinth. See [[Beta]].\n");
    put("alpha.md", "# Alpha\n\nquorvex note.\n");
    put("beta.md", "# Beta\n\nquorvex note.\n");
    put("gamma.md", "# Gamma\n\nSee [the alpha page](sub/alpha.md).\n");
    T_EQ_INT(cairn_vault_add(h, dir, "v", NULL, NULL), CAIRN_OK);
    rank(h, "quorvex plinth", NULL, &np);
    const struct rnote *a = find(h, &np, "alpha.md"), *b = find(h, &np, "beta.md");
    T_CHECK(a && b && a->rank < b->rank);          /* by section id: alpha first */
    T_EQ_INT(notes_link_lift(h, &np, 0.3), CAIRN_OK);
    a = find(h, &np, "alpha.md");
    b = find(h, &np, "beta.md");
    /* hub is the best page and links to beta; gamma links to alpha but
     * gamma is no top page, and alpha links to nothing */
    T_CHECK(a && b && b < a && b->linked && !a->linked);
    note_pool_free(&np);
    cairn_close(h);
}

/* A store of v15 gains vault_vectors and its triggers on open. */
static void test_migration(void)
{
    char path[128];
    struct cairn *h = NULL;
    snprintf(path, sizeof path, "%s/v17.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(sqlite3_exec(h->db, MSG_RUNS_LENS_V19_DROP VAULT_VECTORS_V18_DROP
                          "PRAGMA user_version=17;", NULL, NULL, NULL), SQLITE_OK);
    cairn_close(h);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(count(h, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(count(h, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'vault_vectors%'"), 4);
    cairn_close(h);
    unlink(path);
}

/* With use-lite-en: add embeds each section, a re-index only the changed
 * one, and recall (hybrid) finds a paraphrase no word of which is in the
 * page. */
static void test_with_model(void)
{
    const struct embed_reg_model *rm = embed_reg_find("use-lite-en");
    const char *mdir = getenv("CAIRN_TEST_MODEL_DIR");
    if (!mdir || !*mdir)
        mdir = getenv("CAIRN_MODEL_DIR");
    char models[4096];
    if (embed_reg_models_dir(mdir, models, sizeof models) != 0)
        models[0] = '\0';
    if (!rm || !embed_reg_installed(models, rm)) {
        T_SKIP("use-lite-en not installed (cairn model pull use-lite-en; scripts/test.sh fetches it into build/models)");
        return;
    }
    struct cairn *h = NULL;
    struct cairn_vault_report rep;
    t_model = "use-lite-en";
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    t_model = "none";
    T_EQ_INT(cairn_set(h, "embed.model_dir", mdir), CAIRN_OK);
    T_EQ_INT(cairn_vault_add(h, dir, "m", NULL, &rep), CAIRN_OK);
    int64_t secs = count(h, "SELECT count(*) FROM vault_sections WHERE line > 0");
    T_EQ_INT(rep.vectors, secs);
    T_EQ_INT(count(h, "SELECT count(*) FROM vault_vectors WHERE model LIKE 'use-lite-en%'"), secs);
    put("restart.md", "# Restart policies\n\nUse unless-stopped: the daemon starts it again "
                      "when it exits with an error or the machine boots up.\n");
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE vault_docs SET mtime = 1 WHERE path = 'restart.md'", NULL,
                          NULL, NULL), SQLITE_OK);
    T_EQ_INT(cairn_vault_reindex(h, "m", &rep), CAIRN_OK);
    T_EQ_INT(rep.vectors, 1);
    /* a hook's re-index embeds nothing; `cairn embed --backfill` fills it */
    T_EQ_INT(cairn_embed_at_ingest(h, 0), CAIRN_OK);
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE vault_docs SET mtime = 1, hash = 0 WHERE path = "
                          "'restart.md'", NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(cairn_vault_reindex(h, "m", &rep), CAIRN_OK);
    T_EQ_INT(rep.vectors, 0);
    T_EQ_INT(count(h, "SELECT count(*) FROM vault_vectors"), secs - 1);
    struct cairn_embed_stats es;
    memset(&es, 0, sizeof es);
    T_EQ_INT(cairn_embed_backfill(h, 0, NULL, NULL, &es), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM vault_vectors"), secs);
    T_EQ_INT(cairn_embed_at_ingest(h, 1), CAIRN_OK);
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    o.source = CAIRN_SOURCE_NOTES;
    o.budget = 200;
    /* no word of the page (cosine 0.67 with use-lite-en) */
    const char *para = "keep my docker container alive after it crashes or the server is rebooted";
    T_EQ_INT(cairn_recall(h, para, &o, &r), CAIRN_OK);
    T_CHECK(r && r->n_items > 0 && r->items[0].note_path &&
            !strcmp(r->items[0].note_path, "restart.md"));
    cairn_recall_free(r);
    o.method = CAIRN_METHOD_KEYWORD;        /* keywords only: not found */
    T_EQ_INT(cairn_recall(h, para, &o, &r), CAIRN_OK);
    T_CHECK(r && (r->n_items == 0 || strcmp(r->items[0].note_path, "restart.md")));
    cairn_recall_free(r);
    cairn_close(h);
}

int main(void)
{
    T_RUN(test_dense_notes);
    T_RUN(test_link_lift);
    T_RUN(test_long_section);
    T_RUN(test_migration);
    T_RUN(test_with_model);
    if (*dir) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd))
            fprintf(stderr, "could not remove %s\n", dir);
    }
    return T_DONE();
}
