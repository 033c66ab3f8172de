/*
 * test_capture_shared.c: the capture parsers against every real sample in
 * ../shared/data/transcripts, compared with the reference extractors
 * (claude-code-samples/extract_turns.py, export-samples/linearize.py).
 *
 * Expected turns come from the stored *.turns.jsonl / *.linearized.jsonl
 * when they exist, else from running the Python reference (python3) on
 * the sample. Role and text must match exactly, in order. Without the
 * shared folder (or python3 for the samples that need it) the test or the
 * sample is a SKIP, never a pass (tests/must-run: CI fails on it).
 */
#include "t.h"
#include "capture/capture.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *root;
static int have_python;
static int files_checked, files_skipped;

struct turn {
    char *role, *text;
};
struct turns {
    struct turn *v;
    size_t n, alloc;
};

static void turns_add(struct turns *t, const char *role, const char *text)
{
    if (t->n == t->alloc) {
        t->alloc = t->alloc ? t->alloc * 2 : 16;
        t->v = realloc(t->v, t->alloc * sizeof(*t->v));
        if (!t->v)
            abort();
    }
    t->v[t->n].role = strdup(role);
    t->v[t->n].text = strdup(text);
    t->n++;
}

static void turns_free(struct turns *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].role);
        free(t->v[i].text);
    }
    free(t->v);
    memset(t, 0, sizeof(*t));
}

/* Reads JSONL rows {role, text} from a stream into t. */
static void read_expected(FILE *f, struct turns *t)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        cJSON *e = cJSON_ParseWithLength(line, (size_t)n);
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "role");
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(e, "text");
        if (cJSON_IsString(r) && cJSON_IsString(x))
            turns_add(t, strcmp(r->valuestring, "human") == 0 ? "user" : r->valuestring,
                      x->valuestring);
        cJSON_Delete(e);
    }
    free(line);
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Shell-quotes s into out (single quotes). */
static void shq(char *out, size_t n, const char *s)
{
    size_t o = 0;
    out[o++] = '\'';
    for (; *s && o + 5 < n; s++) {
        if (*s == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *s;
        }
    }
    out[o++] = '\'';
    out[o] = '\0';
}

static int run_expected(const char *cmd, struct turns *t)
{
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    read_expected(f, t);
    return pclose(f) == 0 ? 0 : -1;
}

static void compare(const char *name, const struct capture_batch *b, const struct turns *exp)
{
    size_t k = 0, got = 0;
    int ok = 1;
    for (size_t i = 0; i < b->n; i++) {
        for (size_t j = 0; j < b->v[i].s.n_messages; j++, got++) {
            const struct cairn_message *m = &b->v[i].s.messages[j];
            if (k >= exp->n) {
                ok = 0;
                continue;
            }
            if (strcmp(m->role, exp->v[k].role) != 0 ||
                strlen(exp->v[k].text) != m->content_len ||
                memcmp(m->content, exp->v[k].text, m->content_len) != 0) {
                if (ok)
                    fprintf(stderr, "%s: message %zu differs:\n  got  %s: %.200s\n  want %s: %.200s\n",
                            name, k, m->role, m->content, exp->v[k].role, exp->v[k].text);
                ok = 0;
            }
            k++;
        }
    }
    if (got != exp->n) {
        fprintf(stderr, "%s: %zu messages, reference has %zu\n", name, got, exp->n);
        ok = 0;
    }
    T_CHECK(ok);
    files_checked++;
}

static void check_claude_code(const char *path)
{
    char exp_path[4096], cmd[12288], q1[4096], q2[4096];
    struct turns exp = { NULL, 0, 0 };
    size_t pl = strlen(path);
    if (pl < 7 || strcmp(path + pl - 6, ".jsonl") != 0 || strstr(path, ".turns.jsonl"))
        return;
    snprintf(exp_path, sizeof(exp_path), "%.*s.turns.jsonl", (int)(pl - 6), path);
    if (file_exists(exp_path)) {
        FILE *f = fopen(exp_path, "r");
        T_CHECK(f != NULL);
        if (!f)
            return;
        read_expected(f, &exp);
        fclose(f);
    } else if (have_python) {
        char script[4096];
        snprintf(script, sizeof(script), "%s/claude-code-samples/extract_turns.py", root);
        shq(q1, sizeof(q1), script);
        shq(q2, sizeof(q2), path);
        snprintf(cmd, sizeof(cmd), "python3 %s %s", q1, q2);
        if (run_expected(cmd, &exp) != 0) {
            T_SKIP("%s: the reference extractor failed on it", path);
            files_skipped++;
            turns_free(&exp);
            return;
        }
    } else {
        T_SKIP("%s: no stored expected turns and no python3 to make them", path);
        files_skipped++;
        return;
    }
    char *data;
    size_t len;
    struct capture_batch b = CAPTURE_BATCH_INIT;
    T_EQ_INT(capture_read_file(path, 0, &data, &len), CAIRN_OK);
    uint64_t next = 0;
    T_EQ_INT(capture_claude_code(data, len, 0, "default", 0, &b, &next), CAIRN_OK);
    T_CHECK(next <= len);
    compare(path, &b, &exp);
    capture_batch_free(&b);
    free(data);
    turns_free(&exp);
}

static void walk(const char *dir, void (*fn)(const char *))
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;
    if (!d)
        return;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof(*names));
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    for (size_t i = 0; i < n; i++) {
        char p[4096];
        struct stat st;
        snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            walk(p, fn);
        else
            fn(p);
        free(names[i]);
    }
    free(names);
}

static void test_claude_code_samples(void)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/claude-code-samples", root);
    walk(dir, check_claude_code);
    snprintf(dir, sizeof(dir), "%s/claude-code", root);
    walk(dir, check_claude_code);
}

static void check_export(const char *path, const char *kind, const char *stored)
{
    struct turns exp = { NULL, 0, 0 };
    if (stored && file_exists(stored)) {
        FILE *f = fopen(stored, "r");
        T_CHECK(f != NULL);
        if (!f)
            return;
        read_expected(f, &exp);
        fclose(f);
    } else if (have_python) {
        char cmd[16384], q1[4096], q2[4096], dir[4096];
        snprintf(dir, sizeof(dir), "%s/export-samples", root);
        shq(q1, sizeof(q1), dir);
        shq(q2, sizeof(q2), path);
        /* linearize.py wants an array; single-conversation files are
         * wrapped in one. */
        snprintf(cmd, sizeof(cmd),
                 "python3 -c 'import sys,json; sys.path.insert(0, sys.argv[1]); import linearize as L; "
                 "d=json.load(open(sys.argv[2], encoding=\"utf-8\")); d=d if isinstance(d, list) else [d]; "
                 "[print(json.dumps(r, ensure_ascii=False)) for r in getattr(L, sys.argv[3])(d)]' %s %s %s",
                 q1, q2, kind);
        if (run_expected(cmd, &exp) != 0) {
            T_SKIP("%s: the reference extractor failed on it", path);
            files_skipped++;
            turns_free(&exp);
            return;
        }
    } else {
        T_SKIP("%s: no stored expected turns and no python3 to make them", path);
        files_skipped++;
        return;
    }
    char *data;
    size_t len;
    struct capture_batch b = CAPTURE_BATCH_INIT;
    T_EQ_INT(capture_read_file(path, 0, &data, &len), CAIRN_OK);
    int rc = strcmp(kind, "claude") == 0 ? capture_claude_ai(data, len, 0, &b)
                                         : capture_chatgpt(data, len, 0, &b);
    T_EQ_INT(rc, CAIRN_OK);
    compare(path, &b, &exp);
    capture_batch_free(&b);
    free(data);
    turns_free(&exp);
}

static void claude_ai_file(const char *p)
{
    size_t n = strlen(p);
    if (n > 5 && strcmp(p + n - 5, ".json") == 0 && !strstr(p, "schema"))
        check_export(p, "claude", NULL);
}

static void chatgpt_file(const char *p)
{
    size_t n = strlen(p);
    if (n > 5 && strcmp(p + n - 5, ".json") == 0)
        check_export(p, "chatgpt", NULL);
}

static void test_export_samples(void)
{
    char p[4096], e[4096];
    snprintf(p, sizeof(p), "%s/export-samples/claude-ai-conversations.sample.json", root);
    snprintf(e, sizeof(e), "%s/export-samples/claude-ai.linearized.jsonl", root);
    check_export(p, "claude", e);
    snprintf(p, sizeof(p), "%s/export-samples/chatgpt-conversations.sample.json", root);
    snprintf(e, sizeof(e), "%s/export-samples/chatgpt.linearized.jsonl", root);
    check_export(p, "chatgpt", e);
    snprintf(p, sizeof(p), "%s/claude-ai-export", root);
    walk(p, claude_ai_file);
    snprintf(p, sizeof(p), "%s/chatgpt-export", root);
    walk(p, chatgpt_file);
}

int main(void)
{
    static const char *const candidates[] = {
        "../shared/data/transcripts", "../../shared/data/transcripts",
        "../../../shared/data/transcripts",
    };
    const char *env = getenv("CAIRN_SHARED_TRANSCRIPTS");
    root = env && *env ? env : NULL;
    for (size_t i = 0; !root && i < sizeof(candidates) / sizeof(candidates[0]); i++)
        if (file_exists(candidates[i]))
            root = candidates[i];
    if (!root) {
        T_SKIP("../shared/data/transcripts not found (or set CAIRN_SHARED_TRANSCRIPTS)");
        return T_DONE();
    }
    have_python = system("python3 -c 'pass' >/dev/null 2>&1") == 0;
    T_RUN(test_claude_code_samples);
    T_RUN(test_export_samples);
    printf("shared samples: %d files compared, %d skipped\n", files_checked, files_skipped);
    T_CHECK(files_checked > 0);
    return T_DONE();
}
