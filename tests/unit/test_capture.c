/*
 * test_capture.c: the capture parsers (Claude Code, claude.ai, ChatGPT,
 * Codex) on the fixtures in tests/data/capture and on generated bad
 * input: half-written lines, garbage, wrong field types, a 10 MB line, a
 * line over the cap, invalid UTF-8, deep nesting, empty files. Ends with a
 * speed measurement on a synthetic transcript (CAPTURE_BENCH_MB, default
 * 64; 0 skips it).
 */
#include "t.h"
#include "capture/capture.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FIX "tests/data/capture/"

static char *load(const char *path, size_t *len)
{
    char *d = NULL;
    int rc = capture_read_file(path, 0, &d, len);
    T_EQ_INT(rc, CAIRN_OK);
    if (rc != CAIRN_OK) {
        fprintf(stderr, "cannot read %s (run from the repository root)\n", path);
        exit(1);
    }
    return d;
}

static const struct cairn_message *msg(const struct capture_batch *b, size_t s, size_t i)
{
    static const struct cairn_message none = { "", "", "", "", 0, 0 };
    if (s >= b->n || i >= b->v[s].s.n_messages)
        return &none;
    return &b->v[s].s.messages[i];
}

static int64_t utc(const char *iso)
{
    int64_t t = 0;
    capture_parse_time(iso, strlen(iso), &t);
    return t;
}

/* ---- helpers ------------------------------------------------------------ */

static void test_time(void)
{
    int64_t t;
    T_EQ_INT(capture_parse_time("1970-01-01T00:00:00Z", 20, &t), CAIRN_OK);
    T_EQ_INT(t, 0);
    T_EQ_INT(capture_parse_time("2025-07-01T10:00:00.000Z", 24, &t), CAIRN_OK);
    T_EQ_INT(t, 1751364000);
    const char *s = "2025-07-01T12:00:00.123456+02:00";
    T_EQ_INT(capture_parse_time(s, strlen(s), &t), CAIRN_OK);
    T_EQ_INT(t, 1751364000);
    s = "2025-07-01 05:30-0430";
    T_EQ_INT(capture_parse_time(s, strlen(s), &t), CAIRN_OK);
    T_EQ_INT(t, 1751364000);
    s = "2000-02-29T00:00:00Z";
    T_EQ_INT(capture_parse_time(s, strlen(s), &t), CAIRN_OK);
    T_EQ_INT(t, 951782400);
    /* no zone: local time */
    setenv("TZ", "UTC", 1);
    tzset();
    s = "2023-05-08";
    T_EQ_INT(capture_parse_time(s, strlen(s), &t), CAIRN_OK);
    T_EQ_INT(t, 1683504000);
    static const char *const bad[] = {
        "", "2023", "2023-13-01", "2023-02-29", "2023-05-08T25:00", "2023-05-08X",
        "2023-05-08T10:00:00Zjunk", "2023-05-08T10:00:00.Z", "abcd-ef-gh",
        "2023-05-08T10:00+2",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        T_EQ_INT(capture_parse_time(bad[i], strlen(bad[i]), &t), CAIRN_INVALID);
}

static void test_scanner(void)
{
    const char *j = " {\"a\": [1, -2.5e3, true, null, {\"b\": \"x\\\"y\\\\\"}], \"c\": \"d\"} ";
    const char *end = j + strlen(j);
    struct capture_jval v, k;
    const char *q = capture_json_skip(j, end, &v);
    T_CHECK(q != NULL);
    T_EQ_INT(v.kind, '{');
    struct capture_jiter it;
    capture_jiter_init(&it, v.p, v.p + v.n);
    T_EQ_INT(capture_jiter_next(&it, &k, &v), 1);
    T_CHECK(capture_jval_is(&k, "a"));
    T_EQ_INT(v.kind, '[');
    T_EQ_INT(capture_jiter_next(&it, &k, &v), 1);
    T_CHECK(capture_jval_is(&k, "c"));
    T_CHECK(capture_jval_is(&v, "d"));
    T_EQ_INT(capture_jiter_next(&it, &k, &v), 0);
    static const char *const bad[] = {
        "{", "{\"a\"}", "{\"a\":}", "[1,]", "[1 2]", "\"abc", "\"ab\\\"", "tru", "{\"a\":1,}",
        "-", "{1:2}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *b = bad[i];
        T_CHECK(capture_json_skip(b, b + strlen(b), NULL) == NULL);
    }
    /* nesting over the cap fails cleanly */
    size_t n = 2000;
    char *deep = malloc(2 * n);
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    T_CHECK(capture_json_skip(deep, deep + 2 * n, NULL) == NULL);
    free(deep);
}

static void test_private_text(void)
{
    struct capture_batch b = CAPTURE_BATCH_INIT;
    size_t n;
    const char *s = "a <private>x</private>b<private>y</private> c";
    T_EQ_STR(capture_text(&b, s, strlen(s), 1, &n), "a b c");
    s = "  keep <private>hide this\n and this";
    T_EQ_STR(capture_text(&b, s, strlen(s), 1, &n), "keep");
    s = "<private>all</private>";
    T_EQ_STR(capture_text(&b, s, strlen(s), 1, &n), "");
    T_EQ_INT(n, 0);
    T_EQ_INT(b.counts.private_removed, 4);
    s = "bad \xff\xfe byte \xe2\x82";
    T_EQ_STR(capture_text(&b, s, strlen(s), 0, &n), "bad \xEF\xBF\xBD\xEF\xBF\xBD byte \xEF\xBF\xBD\xEF\xBF\xBD");
    T_EQ_INT(b.counts.utf8_repaired, 1);
    capture_batch_free(&b);
}

/* ---- Claude Code ---------------------------------------------------------- */

static void test_claude_code_fixture(void)
{
    size_t len;
    char *d = load(FIX "cc-session.jsonl", &len);
    struct capture_batch b = CAPTURE_BATCH_INIT;
    uint64_t next = 12345;
    T_EQ_INT(capture_claude_code(d, len, 0, "fallback", 0, &b, &next), CAIRN_OK);
    /* the half-written last line is not consumed */
    const char *half = strstr(d, "{\"type\":\"user\",\"uuid\":\"half\"");
    T_CHECK(half != NULL);
    T_EQ_INT(next, (uint64_t)(half - d));
    T_EQ_INT(b.n, 1);
    const struct cairn_session *s = &b.v[0].s;
    T_EQ_STR(s->id, "sess-1");
    T_EQ_STR(s->source, "claude-code");
    T_EQ_STR(s->project, "/home/u/proj");
    T_EQ_STR(s->title, "Fixture session");
    T_EQ_STR(s->meta, "{\"cwd\":\"/home/u/proj\",\"gitBranch\":\"main\",\"version\":\"2.1.300\"}");
    T_EQ_INT(s->n_messages, 8);
    static const char *const want[][3] = {
        { "u2", "user", "Start the work please" },
        { "msg_A", "assistant", "First part." },
        { "msg_B", "assistant", "Found two files.\nDone." },
        { "u3", "user", "Second question" },
        { "msg_C", "assistant", "Second answer" },
        { "u4", "user", "After compaction" },
        { "q1", "user", "also check tests" },
        { "msg_F", "assistant", "Final answer \xE2\x9C\x93" },
    };
    for (size_t i = 0; i < 8; i++) {
        T_EQ_STR(msg(&b, 0, i)->id, want[i][0]);
        T_EQ_STR(msg(&b, 0, i)->role, want[i][1]);
        T_EQ_STR(msg(&b, 0, i)->content, want[i][2]);
        T_EQ_INT(msg(&b, 0, i)->content_len, strlen(want[i][2]));
    }
    T_EQ_INT(msg(&b, 0, 0)->at, utc("2026-01-01T10:00:01Z"));
    T_EQ_INT(msg(&b, 0, 2)->at, utc("2026-01-01T10:00:07Z"));   /* first record's time */
    /* counters: 1 broken line mid-file + the half line; [1,2,3] is not an
     * object; one unknown type; one blank line */
    T_EQ_INT(b.counts.skipped_bad_json, 2);
    T_EQ_INT(b.counts.skipped_wrong_type, 1);
    T_EQ_INT(b.counts.skipped_unknown_type, 1);
    T_EQ_INT(b.counts.lines_blank, 1);
    T_EQ_INT(b.counts.private_removed, 1);
    T_EQ_INT(b.counts.messages_kept, 8);
    T_CHECK(b.counts.lines_total >= 30);
    capture_batch_free(&b);
    free(d);
}

static void test_claude_code_incremental(void)
{
    size_t len;
    char *d = load(FIX "cc-session.jsonl", &len);
    struct capture_batch b = CAPTURE_BATCH_INIT;
    /* First call sees the file cut in the middle of the "a6" line. */
    const char *a6 = strstr(d, "\"uuid\": \"a6\"");
    T_CHECK(a6 != NULL);
    size_t cut = (size_t)(a6 - d) + 5;
    uint64_t next = 0;
    T_EQ_INT(capture_claude_code(d, cut, 0, NULL, 0, &b, &next), CAIRN_OK);
    T_CHECK(next < cut && d[next - 1] == '\n');
    T_EQ_INT(b.n, 1);
    /* leaf is the last user/assistant record before the cut: u3 */
    T_EQ_INT(b.v[0].s.n_messages, 4);
    T_EQ_STR(msg(&b, 0, 3)->content, "Second question");
    capture_batch_free(&b);

    /* Second call: whole file, from the offset; only new messages. */
    uint64_t next2 = 0;
    T_EQ_INT(capture_claude_code(d, len, next, NULL, 0, &b, &next2), CAIRN_OK);
    T_CHECK(next2 > next);
    T_EQ_INT(b.n, 1);
    T_EQ_INT(b.v[0].s.n_messages, 4);
    T_EQ_STR(msg(&b, 0, 0)->id, "msg_C");
    T_EQ_STR(msg(&b, 0, 3)->id, "msg_F");
    capture_batch_free(&b);

    /* Nothing new: no session. */
    T_EQ_INT(capture_claude_code(d, len, next2, NULL, 0, &b, &next), CAIRN_OK);
    T_EQ_INT(b.n, 0);
    T_EQ_INT(next, next2);
    capture_batch_free(&b);
    free(d);
}

static void add_line(char **p, size_t *n, const char *s)
{
    size_t l = strlen(s);
    *p = realloc(*p, *n + l + 2);
    memcpy(*p + *n, s, l);
    (*p)[*n + l] = '\n';
    *n += l + 1;
    (*p)[*n] = '\0';
}

static void test_claude_code_robust(void)
{
    struct capture_batch b = CAPTURE_BATCH_INIT;
    uint64_t next = 99;
    /* empty input */
    T_EQ_INT(capture_claude_code("", 0, 0, NULL, 0, &b, &next), CAIRN_OK);
    T_EQ_INT(b.n, 0);
    T_EQ_INT(next, 0);
    /* garbage only, no newline at all */
    const char *g = "\x00\x01garbage{{{[[[\"";
    T_EQ_INT(capture_claude_code(g, 14, 0, NULL, 0, &b, &next), CAIRN_OK);
    T_EQ_INT(b.n, 0);
    T_EQ_INT(next, 0);
    T_EQ_INT(b.counts.skipped_bad_json, 1);
    capture_batch_free(&b);

    char *f = NULL;
    size_t n = 0;
    /* wrong types everywhere */
    add_line(&f, &n, "{\"type\":\"user\",\"uuid\":\"w1\",\"parentUuid\":null,\"message\":\"str\"}");
    add_line(&f, &n, "{\"type\":\"user\",\"uuid\":7,\"parentUuid\":\"w1\",\"message\":{\"content\":42}}");
    add_line(&f, &n, "{\"type\":\"user\",\"uuid\":\"w2\",\"parentUuid\":\"w1\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":5}, \"plain string block\"]}}");
    add_line(&f, &n, "{\"type\":3,\"uuid\":\"w3\",\"parentUuid\":\"w2\"}");
    add_line(&f, &n, "{\"type\":\"assistant\",\"uuid\":\"w4\",\"parentUuid\":\"w3\",\"message\":{\"id\":9,\"content\":[{\"type\":\"text\",\"text\":\"ok \xff\xfe reply\"}]}}");
    /* nesting deeper than cJSON accepts, on the chain */
    {
        size_t depth = 1500;
        char *deep = malloc(depth * 2 + 200);
        size_t o = (size_t)snprintf(deep, 200, "{\"type\":\"weird\",\"uuid\":\"w5\",\"parentUuid\":\"w4\",\"x\":");
        memset(deep + o, '[', depth);
        memset(deep + o + depth, ']', depth);
        deep[o + 2 * depth] = '}';
        deep[o + 2 * depth + 1] = '\0';
        add_line(&f, &n, deep);
        free(deep);
    }
    /* a 10 MB prompt */
    size_t big = 10u << 20;
    char *line = malloc(big + 200);
    size_t o = (size_t)snprintf(line, 200, "{\"type\":\"user\",\"uuid\":\"w6\",\"parentUuid\":\"w4\",\"message\":{\"role\":\"user\",\"content\":\"");
    memset(line + o, 'x', big);
    memcpy(line + o + big, "\"}}", 4);
    add_line(&f, &n, line);
    free(line);
    /* NUL byte inside a line */
    {
        const char *z = "{\"type\":\"user\",\"uuid\":\"w7\",\"parentUuid\":\"w6\",\"message\":{\"content\":\"a\0b\"}}";
        size_t zl = 70;
        f = realloc(f, n + zl + 2);
        memcpy(f + n, z, zl);
        f[n + zl] = '\n';
        n += zl + 1;
    }
    T_EQ_INT(capture_claude_code(f, n, 0, "fallback-id", 0, &b, &next), CAIRN_OK);
    T_EQ_INT(next, n);
    T_EQ_INT(b.n, 1);
    T_EQ_STR(b.v[0].s.id, "fallback-id");
    T_EQ_INT(b.v[0].s.n_messages, 3);
    T_EQ_STR(msg(&b, 0, 0)->content, "plain string block");
    T_EQ_STR(msg(&b, 0, 0)->id, "w2");
    T_EQ_STR(msg(&b, 0, 1)->content, "ok \xEF\xBF\xBD\xEF\xBF\xBD reply");
    T_EQ_STR(msg(&b, 0, 1)->id, "w4");   /* message.id not a string: the uuid */
    T_EQ_INT(msg(&b, 0, 2)->content_len, big);
    T_CHECK(b.counts.utf8_repaired >= 1);
    T_CHECK(b.counts.skipped_wrong_type >= 3);
    capture_batch_free(&b);
    free(f);

    /* a line over the cap is skipped and counted, the rest parsed */
    size_t over = CAPTURE_MAX_LINE + 16;
    f = malloc(over + 300);
    n = (size_t)snprintf(f, 300, "{\"type\":\"user\",\"uuid\":\"v1\",\"message\":{\"content\":\"short\"}}\n");
    memset(f + n, ' ', over);
    n += over;
    f[n++] = '\n';
    n += (size_t)snprintf(f + n, 200, "{\"type\":\"user\",\"uuid\":\"v2\",\"parentUuid\":\"v1\",\"message\":{\"content\":\"after\"}}\n");
    T_EQ_INT(capture_claude_code(f, n, 0, NULL, 0, &b, &next), CAIRN_OK);
    T_EQ_INT(b.counts.skipped_too_long, 1);
    T_EQ_INT(b.n, 1);
    T_EQ_INT(b.v[0].s.n_messages, 2);
    T_EQ_STR(msg(&b, 0, 1)->content, "after");
    T_CHECK(b.v[0].s.id == NULL);
    capture_batch_free(&b);
    free(f);

    /* a parent cycle ends the walk */
    const char *cyc = "{\"type\":\"user\",\"uuid\":\"c1\",\"parentUuid\":\"c2\",\"message\":{\"content\":\"one\"}}\n"
                      "{\"type\":\"user\",\"uuid\":\"c2\",\"parentUuid\":\"c1\",\"message\":{\"content\":\"two\"}}\n";
    T_EQ_INT(capture_claude_code(cyc, strlen(cyc), 0, NULL, 0, &b, &next), CAIRN_OK);
    T_EQ_INT(b.n, 1);
    T_EQ_INT(b.v[0].s.n_messages, 2);
    T_EQ_STR(msg(&b, 0, 0)->content, "one");
    capture_batch_free(&b);
}

/* ---- exports ----------------------------------------------------------------- */

static void test_claude_ai(void)
{
    size_t len;
    char *d = load(FIX "claude-ai.json", &len);
    struct capture_batch b = CAPTURE_BATCH_INIT;
    T_EQ_INT(capture_claude_ai(d, len, 0, &b), CAIRN_OK);
    T_EQ_INT(b.n, 2);
    T_EQ_STR(b.v[0].s.id, "ca-1");
    T_EQ_STR(b.v[0].s.title, "Linked chat");
    T_EQ_STR(b.v[0].s.source, "claude.ai");
    T_EQ_INT(b.v[0].s.n_messages, 4);
    T_EQ_STR(msg(&b, 0, 0)->content, "Question one");
    T_EQ_STR(msg(&b, 0, 0)->role, "user");
    T_EQ_STR(msg(&b, 0, 0)->id, "m1");
    T_EQ_INT(msg(&b, 0, 0)->at, utc("2026-02-01T10:00:00Z"));
    T_EQ_STR(msg(&b, 0, 1)->content, "Answer one\ncontinued");
    T_EQ_STR(msg(&b, 0, 2)->content, "Edited follow-up");
    T_EQ_STR(msg(&b, 0, 3)->content, "Edited reply");
    T_EQ_STR(msg(&b, 0, 3)->role, "assistant");
    T_CHECK(b.v[1].s.title == NULL);
    T_EQ_INT(b.v[1].s.n_messages, 2);
    T_EQ_STR(msg(&b, 1, 0)->content, "Flat old export");
    T_EQ_STR(msg(&b, 1, 1)->content, "Flat reply");
    T_EQ_INT(b.counts.lines_total, 4);
    T_EQ_INT(b.counts.skipped_wrong_type, 2);
    capture_batch_free(&b);

    T_EQ_INT(capture_claude_ai(d, len, CAPTURE_OPT_ATTACHMENTS, &b), CAIRN_OK);
    T_EQ_STR(msg(&b, 0, 0)->content, "Question one\n\n[attachment: notes.txt]\npasted notes");
    capture_batch_free(&b);

    /* truncated download: the complete conversations are kept */
    const char *second = strstr(d, "\"ca-2\"");
    T_CHECK(second != NULL);
    T_EQ_INT(capture_claude_ai(d, (size_t)(second - d) + 10, 0, &b), CAIRN_OK);
    T_EQ_INT(b.n, 1);
    T_EQ_INT(b.counts.skipped_bad_json, 1);
    capture_batch_free(&b);
    /* not JSON at all / empty */
    T_EQ_INT(capture_claude_ai("hello", 5, 0, &b), CAIRN_INVALID);
    T_EQ_INT(capture_claude_ai("", 0, 0, &b), CAIRN_INVALID);
    T_EQ_INT(capture_claude_ai("[]", 2, 0, &b), CAIRN_OK);
    T_EQ_INT(b.n, 0);
    /* a single conversation object */
    const char *one = "{\"uuid\":\"x\",\"chat_messages\":[{\"sender\":\"human\",\"text\":\"hi \xc3\x28\"}]}";
    T_EQ_INT(capture_claude_ai(one, strlen(one), 0, &b), CAIRN_OK);
    T_EQ_INT(b.n, 1);
    T_EQ_STR(msg(&b, 0, 0)->content, "hi \xEF\xBF\xBD(");
    capture_batch_free(&b);
    free(d);
}

static void test_chatgpt(void)
{
    size_t len;
    char *d = load(FIX "chatgpt.json", &len);
    struct capture_batch b = CAPTURE_BATCH_INIT;
    T_EQ_INT(capture_chatgpt(d, len, 0, &b), CAIRN_OK);
    T_EQ_INT(b.n, 2);
    const struct cairn_session *s = &b.v[0].s;
    T_EQ_STR(s->id, "cg-1");
    T_EQ_STR(s->title, "ChatGPT fixture");
    T_EQ_STR(s->source, "chatgpt");
    T_EQ_STR(s->meta, "{\"model\":\"gpt-x\"}");
    T_EQ_INT(s->n_messages, 4);
    T_EQ_STR(msg(&b, 0, 0)->content, "First question\n[image]");
    T_EQ_INT(msg(&b, 0, 0)->at, 1760000000);
    T_EQ_STR(msg(&b, 0, 0)->id, "u1");
    T_EQ_STR(msg(&b, 0, 1)->content, "First answer");
    T_EQ_INT(msg(&b, 0, 1)->at, 1760000010);
    T_EQ_STR(msg(&b, 0, 2)->content, "New edit");
    T_EQ_STR(msg(&b, 0, 3)->content, "New reply");
    T_EQ_STR(msg(&b, 0, 3)->role, "assistant");
    /* current_node missing: newest leaf (a2, t=...40); id falls back to "id" */
    T_EQ_STR(b.v[1].s.id, "cg-2");
    T_EQ_INT(b.v[1].s.n_messages, 4);
    T_EQ_STR(msg(&b, 1, 3)->content, "New reply");
    capture_batch_free(&b);
    /* garbage conversations inside the array */
    const char *g = "[1, {\"mapping\": 5}, {\"mapping\": {\"a\": {\"parent\": \"a\", \"message\": null}}, \"current_node\": \"a\"}, {\"bad\": ]";
    T_EQ_INT(capture_chatgpt(g, strlen(g), 0, &b), CAIRN_OK);
    T_EQ_INT(b.n, 0);
    T_EQ_INT(b.counts.skipped_wrong_type, 2);
    T_EQ_INT(b.counts.skipped_bad_json, 1);
    capture_batch_free(&b);
    free(d);
}

/* ---- aider ---------------------------------------------------------------- */

/* A made-up log: two sessions, a noise-only one, aider's own output. */
static const char aider_log[] =
    "# aider chat started at 2026-02-01 09:00:00\n"
    "\n"
    "> Add README.md to the chat? (Y)es/(N)o [Yes]: y\n"
    "> Aider v0.80.0\n"
    "\n"
    "#### /add util.c\n"
    "\n"
    "> Added util.c to the chat\n"
    "\n"
    "#### Rename foo to bar\n"
    "#### <blank>\n"
    "#### in util.c please\n"
    "\n"
    "#### Rename foo to bar\n"
    "#### <blank>\n"
    "#### in util.c please\n"
    "\n"
    "Here is the change:\n"
    "\n"
    "util.c\n"
    "<<<<<<< SEARCH\n"
    "int foo;\n"
    "=======\n"
    "int bar;\n"
    ">>>>>>> REPLACE\n"
    "\n"
    "Tokens: 1.2k sent, 80 received. Cost: $0.01 message, $0.02 session.\n"
    "Applied edit to util.c\n"
    "Commit 1a2b3c4d refactor: rename foo\n"
    "> Tokens: 3k sent, 1k received.\n"
    "\n"
    "#### /ask why bar?\n"
    "\n"
    "Because it reads better.\n"
    "\n"
    "# aider chat started at 2026-02-01 10:00:00\n"
    "\n"
    "> /tokens\n"
    "#### /undo\n"
    "\n"
    "# aider chat started at 2026-02-02 08:30:00\n"
    "\n"
    "#### Add a test\n"
    "\n"
    "Added test_bar.\n"
    "Cost: $0.00 message\n"
    "#### Thanks, and half a lin";

static void test_aider(void)
{
    struct capture_batch b = CAPTURE_BATCH_INIT;
    uint64_t next = 0;
    size_t len = sizeof aider_log - 1;
    T_EQ_INT(capture_aider(aider_log, len, 0, "/p/.aider.chat.history.md", &b, &next), CAIRN_OK);
    T_EQ_INT(next, len - strlen("#### Thanks, and half a lin"));   /* waits for its '\n' */
    T_EQ_INT(b.n, 2);                                    /* 10:00 had no prompt */
    T_EQ_STR(b.v[0].s.id, "aider:/p/.aider.chat.history.md@2026-02-01 09:00:00");
    T_EQ_STR(b.v[0].s.source, "aider");
    T_EQ_INT(b.v[0].s.n_messages, 4);
    T_EQ_STR(msg(&b, 0, 0)->role, "user");
    T_EQ_STR(msg(&b, 0, 0)->content, "Rename foo to bar\n\nin util.c please");
    T_EQ_STR(msg(&b, 0, 1)->role, "assistant");
    T_EQ_STR(msg(&b, 0, 1)->content, "Here is the change:\n\nutil.c\n<<<<<<< SEARCH\nint foo;\n"
                                     "=======\nint bar;\n>>>>>>> REPLACE");
    T_EQ_STR(msg(&b, 0, 2)->content, "/ask why bar?");
    T_EQ_STR(msg(&b, 0, 3)->content, "Because it reads better.");
    /* ids are places in the session: a reply imported mid-write is replaced later */
    T_EQ_STR(msg(&b, 0, 0)->id, "1");
    T_EQ_STR(msg(&b, 0, 3)->id, "4");
    T_EQ_INT(msg(&b, 0, 3)->at, b.v[0].s.started_at);
    T_CHECK(b.v[0].s.started_at != CAIRN_NO_TIME);
    T_EQ_INT(b.v[1].s.n_messages, 2);
    T_EQ_STR(msg(&b, 1, 1)->content, "Added test_bar.");
    capture_batch_free(&b);

    /* incremental: sessions that ended before `from` are not offered again */
    T_EQ_INT(capture_aider(aider_log, len, next, "x", &b, &next), CAIRN_OK);
    T_EQ_INT(b.n, 0);
    capture_batch_free(&b);
    const char *more = "#### Thanks, and half a line\n\nYou're welcome.\n";
    size_t n2 = (size_t)next + strlen(more);
    char *grown = malloc(n2 + 1);
    T_CHECK(grown != NULL);
    memcpy(grown, aider_log, (size_t)next);
    strcpy(grown + next, more);
    uint64_t from = next;
    T_EQ_INT(capture_aider(grown, n2, from, "x", &b, &next), CAIRN_OK);
    T_EQ_INT(next, n2);
    T_EQ_INT(b.n, 1);
    T_EQ_STR(b.v[0].s.id, "aider:x@2026-02-02 08:30:00");
    T_EQ_INT(b.v[0].s.n_messages, 4);
    T_EQ_STR(msg(&b, 0, 3)->content, "You're welcome.");
    capture_batch_free(&b);
    free(grown);

    /* same header time twice: distinct ids; garbage and empty input */
    const char *twice = "# aider chat started at 2026-01-01 00:00:00\n#### a\n"
                        "# aider chat started at 2026-01-01 00:00:00\n#### b\n";
    T_EQ_INT(capture_aider(twice, strlen(twice), 0, "t", &b, NULL), CAIRN_OK);
    T_EQ_INT(b.n, 2);
    T_EQ_STR(b.v[1].s.id, "aider:t@2026-01-01 00:00:00#2");
    capture_batch_free(&b);
    T_EQ_INT(capture_aider("", 0, 0, NULL, &b, NULL), CAIRN_OK);
    T_EQ_INT(b.n, 0);
    T_EQ_INT(capture_aider("#### orphan\nreply\n\xff\n", 20, 0, NULL, &b, NULL), CAIRN_OK);
    T_EQ_INT(b.n, 0);
    capture_batch_free(&b);
}

/* ---- Codex ---------------------------------------------------------------- */

static void test_codex(void)
{
    size_t len;
    char *d = load(FIX "codex-rollout.jsonl", &len);
    struct capture_batch b = CAPTURE_BATCH_INIT;
    T_EQ_INT(capture_codex(d, len, "rollout-x", 0, &b), CAIRN_OK);
    T_EQ_INT(b.n, 1);
    const struct cairn_session *s = &b.v[0].s;
    T_EQ_STR(s->id, "cx-1");
    T_EQ_STR(s->source, "codex");
    T_EQ_STR(s->project, "/home/u/cx");
    T_EQ_STR(s->meta, "{\"cwd\":\"/home/u/cx\",\"gitBranch\":\"dev\",\"version\":\"0.171.0\",\"originator\":\"codex_cli_rs\"}");
    T_EQ_INT(s->n_messages, 3);
    T_EQ_STR(msg(&b, 0, 0)->content, "Refactor the parser");
    T_EQ_STR(msg(&b, 0, 0)->role, "user");
    T_CHECK(msg(&b, 0, 0)->id == NULL);
    T_EQ_INT(msg(&b, 0, 0)->at, utc("2026-03-01T08:00:01Z"));
    T_EQ_STR(msg(&b, 0, 1)->content, "Refactored parser.c.");
    T_EQ_STR(msg(&b, 0, 1)->role, "assistant");
    T_EQ_STR(msg(&b, 0, 2)->content, "Thanks");
    T_EQ_INT(b.counts.skipped_bad_json, 1);
    T_EQ_INT(b.counts.skipped_unknown_type, 1);
    capture_batch_free(&b);
    free(d);

    d = load(FIX "codex-legacy.jsonl", &len);
    T_EQ_INT(capture_codex(d, len, "rollout-y", 0, &b), CAIRN_OK);
    T_EQ_INT(b.n, 1);
    T_EQ_STR(b.v[0].s.id, "legacy-1");
    T_EQ_INT(b.v[0].s.n_messages, 2);
    T_EQ_STR(msg(&b, 0, 1)->content, "Legacy answer");
    T_EQ_INT(msg(&b, 0, 1)->at, CAIRN_NO_TIME);
    capture_batch_free(&b);
    free(d);

    /* robustness: empty, garbage, wrong types, half line, no session_meta */
    T_EQ_INT(capture_codex("", 0, NULL, 0, &b), CAIRN_OK);
    T_EQ_INT(b.n, 0);
    const char *g = "\xff\xfe\n[1]\n{\"type\":\"response_item\",\"payload\":7}\n"
                    "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":9}}\n"
                    "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"ok\"}]}}\n"
                    "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"ro";
    T_EQ_INT(capture_codex(g, strlen(g), "fallback", 0, &b), CAIRN_OK);
    T_EQ_INT(b.n, 1);
    T_EQ_STR(b.v[0].s.id, "fallback");
    T_EQ_INT(b.v[0].s.n_messages, 1);
    T_EQ_STR(msg(&b, 0, 0)->content, "ok");
    T_EQ_INT(b.counts.skipped_bad_json, 2);
    T_EQ_INT(b.counts.skipped_wrong_type, 2);
    capture_batch_free(&b);
}

/* ---- speed ------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A synthetic transcript with the byte mix of a real one (progress, tool
 * results and tool calls dominate; prompts and replies are a few %). */
static char *synth(size_t target, size_t *len, size_t *turns)
{
    size_t cap = target + (1u << 20), n = 0, t = 0;
    char *f = malloc(cap);
    char prev[64] = "root";
    char filler[2049];
    memset(filler, 'a', 2048);
    filler[2048] = '\0';
    for (size_t i = 0; n + 16384 < target; i++) {
        char u[64], a[64], p[64], r[64], a2[64];
        snprintf(u, sizeof(u), "u-%zu", i);
        snprintf(a, sizeof(a), "a-%zu", i);
        snprintf(p, sizeof(p), "p-%zu", i);
        snprintf(r, sizeof(r), "r-%zu", i);
        snprintf(a2, sizeof(a2), "b-%zu", i);
        n += (size_t)snprintf(f + n, cap - n,
            "{\"parentUuid\":\"%s\",\"isSidechain\":false,\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"Question number %zu about the parser\"},\"uuid\":\"%s\",\"timestamp\":\"2026-01-01T10:00:00.000Z\",\"cwd\":\"/p\",\"sessionId\":\"s\",\"gitBranch\":\"main\"}\n"
            "{\"parentUuid\":\"%s\",\"isSidechain\":false,\"type\":\"assistant\",\"message\":{\"id\":\"msg_%zu\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t%zu\",\"name\":\"Bash\",\"input\":{\"command\":\"%.600s\"}}]},\"uuid\":\"%s\",\"timestamp\":\"2026-01-01T10:00:01.000Z\"}\n"
            "{\"parentUuid\":\"%s\",\"isSidechain\":false,\"type\":\"progress\",\"data\":{\"type\":\"bash_progress\",\"output\":\"%s\",\"nested\":{\"a\":[1,2,3,{\"b\":null}]}},\"uuid\":\"%s\",\"timestamp\":\"2026-01-01T10:00:02.000Z\"}\n"
            "{\"parentUuid\":\"%s\",\"isSidechain\":false,\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t%zu\",\"content\":\"%s\\n%s\\\"quoted\\\"\"}]},\"uuid\":\"%s\",\"timestamp\":\"2026-01-01T10:00:03.000Z\"}\n"
            "{\"parentUuid\":\"%s\",\"isSidechain\":false,\"type\":\"assistant\",\"message\":{\"id\":\"msg_%zu\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[{\"type\":\"text\",\"text\":\"Answer %zu: the parser is fixed and \\\"tested\\\".\"}]},\"uuid\":\"%s\",\"timestamp\":\"2026-01-01T10:00:04.000Z\"}\n",
            prev, i, u,
            u, i, i, filler, a,
            a, filler, p,
            p, i, filler, filler, r,
            r, i + 1000000, i, a2);
        snprintf(prev, sizeof(prev), "%s", a2);
        t++;
    }
    *len = n;
    *turns = t;
    return f;
}

static void test_speed(void)
{
    const char *env = getenv("CAPTURE_BENCH_MB");
    long mb = env ? strtol(env, NULL, 10) : 64;
    if (mb <= 0) {
        printf("speed: skipped (CAPTURE_BENCH_MB=0)\n");
        return;
    }
    size_t len, turns;
    char *f = synth((size_t)mb << 20, &len, &turns);
    struct capture_batch b = CAPTURE_BATCH_INIT;
    uint64_t next;
    double t0 = now_s();
    T_EQ_INT(capture_claude_code(f, len, 0, NULL, 0, &b, &next), CAIRN_OK);
    double dt = now_s() - t0;
    T_EQ_INT(b.n, 1);
    T_EQ_INT(b.v[0].s.n_messages, 2 * turns);
    T_EQ_INT(next, len);
    printf("speed: claude-code %.1f MB, %zu turns in %.3f s = %.0f MB/s\n",
           len / 1048576.0, turns, dt, len / 1048576.0 / dt);
    capture_batch_free(&b);

    /* The Stop hook case: a 5 MB transcript re-read from an offset. */
    size_t five = (size_t)5 << 20;
    if (len > five) {
        const char *nl = memchr(f + five - 4096, '\n', 4096);
        size_t l5 = (size_t)(nl - f) + 1;
        t0 = now_s();
        T_EQ_INT(capture_claude_code(f, l5, l5 - 20000, NULL, 0, &b, &next), CAIRN_OK);
        dt = now_s() - t0;
        T_EQ_INT(next, l5);
        T_CHECK(b.n == 1 && b.v[0].s.n_messages < 20);
        printf("speed: incremental parse of a %.1f MB transcript: %.1f ms\n",
               l5 / 1048576.0, dt * 1000);
        capture_batch_free(&b);
    }
    free(f);
}

/* Which kind a file looks like: every fixture as its own kind, and the
 * shapes each kind is known by, in made-up lines. */
static void test_sniff(void)
{
    static const struct { const char *file; int kind; } fixtures[] = {
        { FIX "cc-session.jsonl", CAIRN_IMPORT_CLAUDE_CODE },
        { FIX "cc-replay.jsonl", CAIRN_IMPORT_CLAUDE_CODE },
        { FIX "claude-ai.json", CAIRN_IMPORT_CLAUDE_AI },
        { FIX "chatgpt.json", CAIRN_IMPORT_CHATGPT },
        { FIX "codex-rollout.jsonl", CAIRN_IMPORT_CODEX },
        { FIX "codex-legacy.jsonl", CAIRN_IMPORT_CODEX },
    };
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
        size_t len;
        char *d = load(fixtures[i].file, &len);
        T_EQ_INT(capture_sniff(d, len), fixtures[i].kind);
        free(d);
    }
    static const struct { const char *text; int kind; } cases[] = {
        { "\xEF\xBB\xBF\n# aider chat started at 2025-01-01 10:00:00\n", CAIRN_IMPORT_AIDER },
        { "{\"title\":\"t\",\"mapping\":{},\"current_node\":null}", CAIRN_IMPORT_CHATGPT },
        { "[{\"uuid\":\"c\",\"chat_messages\":[]}]", CAIRN_IMPORT_CLAUDE_AI },
        /* a first conversation that says nothing, then one that does */
        { "[1, {\"x\":1}, {\"current_node\":\"n\"}]", CAIRN_IMPORT_CHATGPT },
        { "garbage\n{\"type\":\"summary\",\"summary\":\"s\",\"leafUuid\":\"u\"}\n",
          CAIRN_IMPORT_CLAUDE_CODE },
        { "{\"timestamp\":\"t\",\"type\":\"event_msg\",\"payload\":{}}", CAIRN_IMPORT_CODEX },
        { "{\"type\":\"message\",\"role\":\"user\",\"content\":[]}", CAIRN_IMPORT_CODEX },
        { "{\"id\":\"s\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n",
          CAIRN_IMPORT_JSONL },
        /* what names no kind */
        { "", 0 }, { "   \n\n", 0 }, { "[]", 0 }, { "[{\"foo\":1}]", 0 }, { "not json", 0 },
        { "{\"type\":\"message\",\"uuid\":\"u\"}", 0 }, { "{\"payload\":{},\"type\":\"x\"}", 0 },
        /* cut short: what was read before the cut still counts */
        { "[{\"title\":\"t\",\"current_node\":\"n\",\"mapping\":{\"a\":", CAIRN_IMPORT_CHATGPT },
        { "{\"sessionId\":\"s\",\"message\":{\"content\":\"unterminated", CAIRN_IMPORT_CLAUDE_CODE },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int k = capture_sniff(cases[i].text, strlen(cases[i].text));
        if (k != cases[i].kind)
            fprintf(stderr, "sniff case %zu: %d, want %d\n", i, k, cases[i].kind);
        T_EQ_INT(k, cases[i].kind);
    }
    T_EQ_INT(capture_sniff(NULL, 0), 0);
}

int main(void)
{
    T_RUN(test_time);
    T_RUN(test_scanner);
    T_RUN(test_private_text);
    T_RUN(test_claude_code_fixture);
    T_RUN(test_claude_code_incremental);
    T_RUN(test_claude_code_robust);
    T_RUN(test_claude_ai);
    T_RUN(test_chatgpt);
    T_RUN(test_codex);
    T_RUN(test_aider);
    T_RUN(test_sniff);
    T_RUN(test_speed);
    return T_DONE();
}
