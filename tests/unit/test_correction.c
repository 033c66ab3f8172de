/*
 * test_correction.c: corrections (store/correction.c, text/applies.c,
 * util/wilson.c, docs/MEMORIES.md "Corrections"): the Wilson interval
 * against published values, adding a correction with severity and
 * applies_when, its limits, the order of the list, the counters, matching
 * tool calls (commands, globs, keywords), candidates (recurrence, accept,
 * reject wiping the prompt's bytes), rm taking the correction's row along,
 * changing severity and applies_when after the add (cairn_correction_set),
 * export and import carrying them (not the counters) with line-numbered
 * errors, and the migration of a version-8 store.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "t_store.h"
#include "t_open.h"
#include "util/buf.h"
#include "util/wilson.h"

static char dir[] = "/tmp/cairn-test-correction-XXXXXX";

static struct cairn *open_new(const char *name)
{
    char path[300];
    struct cairn *h = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    return h;
}

static int64_t add(struct cairn *h, const char *text, const char *scope, int severity,
                   const char *keywords, const char *paths, const char *commands)
{
    struct cairn_memory_new m = { 0 };
    struct cairn_correction_when w = { severity, keywords, paths, commands };
    int64_t id = 0;
    m.text = text;
    m.scope = scope;
    T_EQ_INT(cairn_correction_add(h, &m, &w, &id), CAIRN_OK);
    return id;
}

static int near(double a, double b)
{
    return fabs(a - b) < 5e-5;
}

/* Published Wilson 95% intervals (Newcombe 1998, table I; Agresti and
 * Coull 1998): 8 of 10, 0 of 10, 10 of 10, 50 of 100, 1 of 3. */
static void test_wilson(void)
{
    static const struct { int64_t k, n; double lo, hi; } cases[] = {
        { 8, 10, 0.4902, 0.9433 }, { 0, 10, 0.0, 0.2775 }, { 10, 10, 0.7225, 1.0 },
        { 50, 100, 0.4038, 0.5962 }, { 1, 3, 0.0615, 0.7923 },
    };
    double lo, hi;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wilson95(cases[i].k, cases[i].n, &lo, &hi);
        T_CHECK(near(lo, cases[i].lo));
        T_CHECK(near(hi, cases[i].hi));
    }
    wilson95(0, 0, &lo, &hi);
    T_CHECK(lo == 0 && hi == 1);
}

static void test_add_list_count(void)
{
    struct cairn *h = open_new("add.db");
    struct cairn_corrections *l;
    int64_t a = add(h, "ask before pushing", "proj", 2, NULL, NULL, "git push");
    int64_t b = add(h, "never force push", "", 0, "force", NULL, "git push --force\ngit push -f");
    int64_t c = add(h, "other project", "elsewhere", 1, NULL, NULL, NULL);
    /* a plain memory of type correction reads as p1 with nothing to match */
    struct cairn_memory_new m = { 0 };
    int64_t d = 0;
    m.type = "correction";
    m.text = "added as a plain memory";
    m.scope = "proj";
    T_EQ_INT(cairn_memory_add(h, &m, &d), CAIRN_OK);
    T_EQ_INT(cairn_corrections_list(h, "proj", &l), CAIRN_OK);
    T_EQ_INT(cairn_corrections_count(l), 3);          /* not the other project's */
    T_EQ_INT(cairn_corrections_at(l, 0)->id, b);      /* p0 first */
    T_EQ_INT(cairn_corrections_at(l, 1)->id, d);      /* then p1 */
    T_EQ_INT(cairn_corrections_at(l, 2)->id, a);
    T_EQ_STR(cairn_corrections_at(l, 0)->commands, "git push --force\ngit push -f");
    T_EQ_INT(cairn_corrections_at(l, 1)->severity, 1);
    T_EQ_STR(cairn_corrections_at(l, 1)->commands, "");
    cairn_corrections_free(l);
    (void)c;
    /* counters, also on the row-less one */
    T_EQ_INT(cairn_correction_count(h, b, CAIRN_CORRECTION_RETRIEVED | CAIRN_CORRECTION_HEEDED),
             CAIRN_OK);
    T_EQ_INT(cairn_correction_count(h, b, CAIRN_CORRECTION_RECURRED), CAIRN_OK);
    T_EQ_INT(cairn_correction_count(h, d, CAIRN_CORRECTION_RETRIEVED), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT retrieved * 100 + heeded * 10 + recurred FROM corrections "
                      "WHERE memory = 2"), 111);
    T_EQ_INT(count(h, "SELECT retrieved FROM corrections WHERE memory = 4"), 1);
    T_EQ_INT(cairn_correction_count(h, 999, CAIRN_CORRECTION_RETRIEVED), CAIRN_NOTFOUND);
    /* a fact is no correction */
    m.type = "fact";
    T_EQ_INT(cairn_memory_add(h, &m, &d), CAIRN_OK);
    T_EQ_INT(cairn_correction_count(h, d, CAIRN_CORRECTION_RETRIEVED), CAIRN_NOTFOUND);
    /* limits */
    struct cairn_correction_when w = { 3, NULL, NULL, NULL };
    m.type = NULL;
    T_EQ_INT(cairn_correction_add(h, &m, &w, NULL), CAIRN_INVALID);
    char many[400] = "";
    for (int i = 0; i < 40; i++)
        strcat(many, "kw\n");
    struct cairn_correction_when w2 = { 1, many, NULL, NULL };
    T_EQ_INT(cairn_correction_add(h, &m, &w2, NULL), CAIRN_INVALID);
    m.type = "fact";
    T_EQ_INT(cairn_correction_add(h, &m, NULL, NULL), CAIRN_INVALID);
    /* rm takes the row along */
    T_EQ_INT(cairn_memory_remove(h, b), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM corrections WHERE memory = 2"), 0);
    cairn_close(h);
}

/* The one correction of h with this id, from the list. */
static const struct cairn_correction *find(const struct cairn_corrections *l, int64_t id)
{
    for (size_t i = 0; i < cairn_corrections_count(l); i++)
        if (cairn_corrections_at(l, i)->id == id)
            return cairn_corrections_at(l, i);
    return NULL;
}

static void test_set(void)
{
    struct cairn *h = open_new("set.db");
    struct cairn_corrections *l;
    int64_t a = add(h, "never force push", "", 1, "force", NULL, "git push --force");
    struct cairn_memory_new m = { 0 };
    int64_t plain = 0, fact = 0;
    m.type = "correction";
    m.text = "a plain one";
    T_EQ_INT(cairn_memory_add(h, &m, &plain), CAIRN_OK);
    m.type = "fact";
    T_EQ_INT(cairn_memory_add(h, &m, &fact), CAIRN_OK);
    T_EQ_INT(cairn_correction_count(h, a, CAIRN_CORRECTION_RETRIEVED), CAIRN_OK);
    /* severity only: the lists stay; "" empties one; the counters stay */
    struct cairn_correction_when w = { 0, NULL, NULL, NULL };
    T_EQ_INT(cairn_correction_set(h, a, &w), CAIRN_OK);
    struct cairn_correction_when w2 = { -1, "", "*.lock", NULL };
    T_EQ_INT(cairn_correction_set(h, a, &w2), CAIRN_OK);
    /* a correction without its row gets one */
    struct cairn_correction_when w3 = { 2, NULL, NULL, "npm publish" };
    T_EQ_INT(cairn_correction_set(h, plain, &w3), CAIRN_OK);
    T_EQ_INT(cairn_corrections_list(h, NULL, &l), CAIRN_OK);
    const struct cairn_correction *c = find(l, a);
    T_CHECK(c && c->severity == 0 && !strcmp(c->keywords, "") && !strcmp(c->paths, "*.lock") &&
            !strcmp(c->commands, "git push --force") && c->retrieved == 1);
    c = find(l, plain);
    T_CHECK(c && c->severity == 2 && !strcmp(c->commands, "npm publish"));
    cairn_corrections_free(l);
    /* refused: a fact, a missing id, a bad severity, too many items */
    T_EQ_INT(cairn_correction_set(h, fact, &w), CAIRN_NOTFOUND);
    T_EQ_INT(cairn_correction_set(h, 999, &w), CAIRN_NOTFOUND);
    struct cairn_correction_when bad = { 3, NULL, NULL, NULL };
    T_EQ_INT(cairn_correction_set(h, a, &bad), CAIRN_INVALID);
    char many[400] = "";
    for (int i = 0; i < 40; i++)
        strcat(many, "kw\n");
    struct cairn_correction_when big = { -1, many, NULL, NULL };
    T_EQ_INT(cairn_correction_set(h, a, &big), CAIRN_INVALID);
    T_EQ_INT(count(h, "SELECT severity FROM corrections WHERE memory = 1"), 0);
    cairn_close(h);
}

static int import_err(struct cairn *h, const char *json, const char *want)
{
    size_t added = 0;
    int rc = cairn_memories_import(h, json, strlen(json), &added);
    if (rc == CAIRN_OK || added || !strstr(cairn_errmsg(h), want)) {
        fprintf(stderr, "import_err: rc %d, added %zu, \"%s\" (wanted \"%s\")\n", rc, added,
                cairn_errmsg(h), want);
        return 0;
    }
    return 1;
}

static void test_export_import(void)
{
    struct cairn *h = open_new("exp.db"), *h2 = open_new("imp.db");
    struct cairn_corrections *l;
    char *out = NULL;
    size_t len = 0, added = 0;
    int64_t a = add(h, "never force push", "proj", 0, "force\nprod", "*.lock", "git push --force");
    struct cairn_memory_new m = { 0 };
    int64_t plain = 0;
    m.type = "correction";
    m.text = "a plain one";
    T_EQ_INT(cairn_memory_add(h, &m, &plain), CAIRN_OK);
    T_EQ_INT(cairn_correction_count(h, a, CAIRN_CORRECTION_RETRIEVED | CAIRN_CORRECTION_HEEDED),
             CAIRN_OK);
    T_EQ_INT(cairn_memories_export(h, &out, &len), CAIRN_OK);
    T_CHECK(strstr(out, "\"severity\":\"p0\",\"applies_when\":{\"keywords\":[\"force\",\"prod\"],"
                        "\"paths\":[\"*.lock\"],\"commands\":[\"git push --force\"]}") != NULL);
    T_CHECK(strstr(out, "\"severity\":\"p1\",\"applies_when\":{\"keywords\":[],\"paths\":[],"
                        "\"commands\":[]}") != NULL);
    T_CHECK(strstr(out, "retrieved") == NULL && strstr(out, "heeded") == NULL);
    T_EQ_INT(cairn_memories_import(h2, out, len, &added), CAIRN_OK);
    T_EQ_INT(added, 2);
    T_EQ_INT(cairn_corrections_list(h2, "proj", &l), CAIRN_OK);
    T_EQ_INT(cairn_corrections_count(l), 2);
    const struct cairn_correction *c = cairn_corrections_at(l, 0);
    T_CHECK(c->severity == 0 && !strcmp(c->keywords, "force\nprod") && !strcmp(c->paths, "*.lock") &&
            !strcmp(c->commands, "git push --force") && c->retrieved == 0 && c->heeded == 0);
    T_EQ_INT(cairn_corrections_at(l, 1)->severity, 1);
    cairn_corrections_free(l);
    free(out);
    /* errors name the line, and nothing is added */
    T_CHECK(import_err(h2, "{\"text\":\"ok\"}\n{\"text\":\"x\",\"severity\":\"p1\"}",
                       "line 2: \"severity\" and \"applies_when\" are for type correction"));
    T_CHECK(import_err(h2, "{\"type\":\"correction\",\"text\":\"x\",\"severity\":\"p3\"}",
                       "line 1: \"severity\" is not p0"));
    T_CHECK(import_err(h2, "{\"type\":\"correction\",\"text\":\"x\",\"severity\":0}",
                       "line 1: \"severity\" is not p0"));
    T_CHECK(import_err(h2, "{\"type\":\"correction\",\"text\":\"x\",\"applies_when\":[]}",
                       "line 1: \"applies_when\" is not an object"));
    T_CHECK(import_err(h2, "\n{\"type\":\"correction\",\"text\":\"x\",\"applies_when\":{\"tools\":[]}}",
                       "line 2: \"applies_when\" holds keywords"));
    T_CHECK(import_err(h2, "{\"type\":\"correction\",\"text\":\"x\",\"applies_when\":{\"paths\":\"a\"}}",
                       "line 1: \"applies_when\".\"paths\" is not an array"));
    T_CHECK(import_err(h2, "{\"type\":\"correction\",\"text\":\"x\",\"applies_when\":"
                           "{\"commands\":[\"a\\nb\"]}}", "line 1: an item of"));
    T_CHECK(import_err(h2, "{\"type\":\"correction\",\"text\":\"x\",\"applies_when\":"
                           "{\"keywords\":[1]}}", "line 1: an item of"));
    struct buf many = BUF_INIT;
    buf_adds(&many, "{\"type\":\"correction\",\"text\":\"x\",\"applies_when\":{\"keywords\":[");
    for (int i = 0; i < 40; i++)
        buf_printf(&many, "%s\"k%d\"", i ? "," : "", i);
    buf_adds(&many, "]}}");
    T_CHECK(import_err(h2, many.p, "line 1: correction keywords: 40 items"));
    buf_release(&many);
    T_EQ_INT(count(h2, "SELECT count(*) FROM memories"), 2);
    cairn_close(h2);
    cairn_close(h);
}

static int applies(const char *keywords, const char *paths, const char *commands,
                   const char *tool, const char *command, const char *path)
{
    struct cairn_correction c;
    memset(&c, 0, sizeof c);
    c.keywords = keywords ? keywords : "";
    c.paths = paths ? paths : "";
    c.commands = commands ? commands : "";
    const char *ps[1] = { path };
    struct cairn_tool_call call = { tool, command, ps, path ? 1 : 0 };
    return cairn_correction_applies(&c, &call);
}

static void test_applies(void)
{
    const char *force = "git push --force";
    T_CHECK(applies(NULL, NULL, force, "Bash", "git push --force", NULL));
    T_CHECK(applies(NULL, NULL, force, "Bash", "git push origin main --force", NULL));
    T_CHECK(applies(NULL, NULL, force, "Bash", "cd x && GIT_SSH=y sudo -E git push --force", NULL));
    T_CHECK(applies(NULL, NULL, force, "Bash", "/usr/bin/git push --force", NULL));
    T_CHECK(applies(NULL, NULL, force, "Bash", "make; git 'push' \"--force\"", NULL));
    T_CHECK(!applies(NULL, NULL, force, "Bash", "git push origin main", NULL));
    T_CHECK(!applies(NULL, NULL, force, "Bash", "git push --force-with-lease", NULL));
    T_CHECK(!applies(NULL, NULL, force, "Bash", "echo git push --force", NULL));
    T_CHECK(!applies(NULL, NULL, force, "Bash", "git status; echo push --force", NULL));
    T_CHECK(applies(NULL, NULL, "npm publish*", "Bash", "npm publish", NULL));
    T_CHECK(applies(NULL, NULL, "rm -rf", "Bash", "x=$(rm -rf /tmp/a)", NULL));
    T_CHECK(!applies(NULL, NULL, force, "Edit", NULL, "/p/git"));
    /* a wrapper as the pattern: found by a fuzz run (fuzz_correction) */
    T_CHECK(applies(NULL, NULL, "sudo", "Bash", "sudo -u root ls", NULL));
    T_CHECK(applies(NULL, NULL, "doas", "Bash", "doas", NULL));
    T_CHECK(!applies(NULL, NULL, "sudo", "Bash", "echo sudo", NULL));
    /* globs */
    T_CHECK(applies(NULL, "*.lock", NULL, "Edit", NULL, "/p/Cargo.lock"));
    T_CHECK(!applies(NULL, "*.lock", NULL, "Edit", NULL, "/p/Cargo.toml"));
    T_CHECK(applies(NULL, "migrations/*.sql", NULL, "Write", NULL, "/p/db/migrations/1.sql"));
    T_CHECK(!applies(NULL, "migrations/*.sql", NULL, "Write", NULL, "/p/migrations/a/1.sql"));
    T_CHECK(applies(NULL, "migrations/**", NULL, "Write", NULL, "/p/migrations/a/1.sql"));
    T_CHECK(applies(NULL, "/etc/*", NULL, "Write", NULL, "/etc/hosts"));
    T_CHECK(!applies(NULL, "/etc/*", NULL, "Write", NULL, "/p/etc/hosts"));
    /* keywords: whole words, any case, in the tool, the command or a path */
    T_CHECK(applies("version", NULL, NULL, "Bash", "bump the VERSION now", NULL));
    T_CHECK(!applies("version", NULL, NULL, "Bash", "cat versions.txt", NULL));
    T_CHECK(applies("webfetch", NULL, NULL, "WebFetch", NULL, NULL));
    T_CHECK(applies("package.json", NULL, NULL, "Edit", NULL, "/p/package.json"));
    T_CHECK(applies("生产", NULL, NULL, "Bash", "deploy 到生产环境", NULL));
    T_CHECK(!applies("", NULL, NULL, "Bash", "anything", NULL));
}

/* Whether the store or its WAL holds mark. */
static int store_holds(struct cairn *h, const char *mark)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cat '%s' '%s-wal' 2>/dev/null | grep -q '%s'", h->path, h->path,
             mark);
    return system(cmd) == 0;
}

static void test_candidates(void)
{
    struct cairn *h = open_new("cand.db");
    struct cairn_corrections *l;
    int64_t c1 = 0, c2 = 0, rec = -1, mem = 0;
    int64_t old = add(h, "never force push", "proj", 0, NULL, NULL, "git push --force");
    T_EQ_INT(cairn_candidate_add(h, "no, stop using tabs qqtabmark", "proj", "s1", "m1",
                                 "stop", "", &c1, &rec), CAIRN_OK);
    T_EQ_INT(rec, 0);
    /* says what correction `old` says: a recurrence */
    T_EQ_INT(cairn_candidate_add(h, "I told you: never git push --force!", "proj", "s2", "m2",
                                 "told", "git push --force", &c2, &rec), CAIRN_OK);
    T_EQ_INT(rec, old);
    T_EQ_INT(count(h, "SELECT recurred FROM corrections WHERE memory = 1"), 1);
    T_EQ_INT(cairn_candidates_list(h, &l), CAIRN_OK);
    T_EQ_INT(cairn_corrections_count(l), 2);
    T_EQ_STR(cairn_corrections_at(l, 1)->rule, "told");
    T_EQ_INT(cairn_corrections_at(l, 1)->recurs, old);
    cairn_corrections_free(l);
    /* accept: a p-something correction with the candidate's provenance */
    struct cairn_correction_when w = { 2, "tabs", NULL, NULL };
    T_EQ_INT(cairn_candidate_accept(h, c1, &w, &mem), CAIRN_OK);
    T_EQ_INT(cairn_corrections_list(h, "proj", &l), CAIRN_OK);
    T_EQ_INT(cairn_corrections_count(l), 2);
    const struct cairn_correction *c = cairn_corrections_at(l, 1);
    T_EQ_INT(c->id, mem);
    T_EQ_INT(c->severity, 2);
    T_EQ_STR(c->keywords, "tabs");
    T_EQ_STR(c->session, "s1");
    T_EQ_STR(c->message, "m1");
    cairn_corrections_free(l);
    T_EQ_INT(cairn_candidate_accept(h, c1, NULL, NULL), CAIRN_NOTFOUND);
    /* accept without w: p1 and the commands the prompt named */
    T_EQ_INT(cairn_candidate_accept(h, c2, NULL, &mem), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT severity FROM corrections ORDER BY memory DESC LIMIT 1"), 1);
    T_EQ_INT(count(h, "SELECT count(*) FROM corrections WHERE commands = 'git push --force'"), 2);
    /* reject wipes the prompt */
    T_EQ_INT(cairn_candidate_add(h, "don't do qqrejectmark again", "proj", "", "", "again", "",
                                 &c1, NULL), CAIRN_OK);
    T_CHECK(store_holds(h, "qqrejectmark"));
    T_EQ_INT(cairn_candidate_reject(h, c1), CAIRN_OK);
    T_CHECK(!store_holds(h, "qqrejectmark"));
    T_EQ_INT(cairn_candidate_reject(h, c1), CAIRN_NOTFOUND);
    T_EQ_INT(cairn_candidate_add(h, " ", "proj", "", "", "x", "", NULL, NULL), CAIRN_INVALID);
    cairn_close(h);
}

/* A store as version 8 left it (memories, no correction tables): the next
 * open migrates it and keeps its memories, a correction among them. */
static void test_migrate_v8(void)
{
    char path[300];
    struct cairn *h;
    sqlite3 *raw;
    struct cairn_memory_new m = { 0 };
    int64_t id = 0;
    snprintf(path, sizeof path, "%s/v8.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    m.type = "correction";
    m.text = "kept through the migration";
    T_EQ_INT(cairn_memory_add(h, &m, &id), CAIRN_OK);
    cairn_close(h);
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, AFTER_V8_DROP "PRAGMA user_version=8", NULL, NULL,
                          NULL), SQLITE_OK);
    sqlite3_close(raw);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(count(h, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(count(h, "SELECT count(*) FROM memories"), 1);
    struct cairn_corrections *l;
    T_EQ_INT(cairn_corrections_list(h, NULL, &l), CAIRN_OK);
    T_EQ_INT(cairn_corrections_count(l), 1);
    cairn_corrections_free(l);
    T_CHECK(add(h, "after", "", 0, NULL, NULL, "rm -rf") == 2);
    cairn_close(h);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_wilson);
    T_RUN(test_add_list_count);
    T_RUN(test_applies);
    T_RUN(test_candidates);
    T_RUN(test_set);
    T_RUN(test_export_import);
    T_RUN(test_migrate_v8);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_correction: could not remove %s\n", dir);
    return T_DONE();
}
