/*
 * test_odd_input.c: no text is lost on odd input (issue 12): json_parse
 * repairs NUL and lone surrogates, keeps big integers exactly, builds the
 * tree cJSON would; cairn_add_json stores the repaired text; repeated
 * message ids with other text are refused; cairn_session_continues.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "cairn.h"
#include "internal.h"
#include "t_store.h"
#include "t_open.h"
#include "util/json.h"

#define FFFD "\xef\xbf\xbd"

/* The string a one-string document decodes to (static buffer). */
static const char *str_of(const char *json, size_t n)
{
    static char out[256];
    cJSON *v = json_parse(json, n, NULL);
    snprintf(out, sizeof out, "%s", cJSON_IsString(v) ? v->valuestring : "(not parsed)");
    cJSON_Delete(v);
    return out;
}
#define STR_OF(lit) str_of(lit, sizeof lit - 1)

static void test_repairs(void)
{
    T_EQ_STR(STR_OF("\"a\\u0000b\""), "a" FFFD "b");
    T_EQ_STR(STR_OF("\"a\0b\""), "a" FFFD "b");                /* raw NUL */
    T_EQ_STR(STR_OF("\"x\\ud83d\""), "x" FFFD);                /* high half alone */
    T_EQ_STR(STR_OF("\"\\ude00y\""), FFFD "y");                /* low half alone */
    T_EQ_STR(STR_OF("\"\\ud83d\\u0041\""), FFFD "A");          /* high, then not low */
    T_EQ_STR(STR_OF("\"\\ud83d\\ud83d\\ude00\""), FFFD "\xf0\x9f\x98\x80");
    T_EQ_STR(STR_OF("\"\\ud83d\\ude00\""), "\xf0\x9f\x98\x80"); /* a pair stays */
    T_EQ_STR(STR_OF("\"\\u00e9\\n\\t\\\"\\\\\\/\""), "\xc3\xa9\n\t\"\\/");
    T_EQ_STR(STR_OF("\"\xff raw\""), "\xff raw");              /* the store repairs it */
    /* cJSON loses all three */
    cJSON *c = cJSON_Parse("\"x\\ud83d\"");
    T_CHECK(c == NULL);
    cJSON_Delete(c);
    /* keys are repaired too */
    cJSON *v = json_parse("{\"k\\u0000\":1}", 13, NULL);
    T_CHECK(v && v->child && !strcmp(v->child->string, "k" FFFD));
    cJSON_Delete(v);
}

static void test_refused(void)
{
    const char *bad[] = { "", "{", "[1,]", "{\"a\" 1}", "\"abc", "\"\\x\"", "\"\\u12\"",
                          "01x", "-", "1.", "1e", "tru", "nul", "[1 2]", "{1:2}", "{\"a\":}" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *end = NULL;
        cJSON *v = json_parse(bad[i], strlen(bad[i]), &end);
        /* "01x" parses as 0, like any prefix value: callers look at *end */
        if (!strcmp(bad[i], "01x")) {
            T_CHECK(v && end == bad[i] + 1);
        } else {
            if (v)
                fprintf(stderr, "accepted: %s\n", bad[i]);
            T_CHECK(v == NULL);
            T_CHECK(end >= bad[i] && end <= bad[i] + strlen(bad[i]));
        }
        cJSON_Delete(v);
    }
    /* nesting is capped */
    size_t n = 3 * JSON_PARSE_MAX_DEPTH;
    char *deep = malloc(n);
    memset(deep, '[', n);
    T_CHECK(json_parse(deep, n, NULL) == NULL);
    free(deep);
}

/* The same tree and the same printed text as cJSON for ordinary JSON. */
static void test_same_as_cjson(void)
{
    const char *docs[] = {
        "{\"id\":\"s1\",\"messages\":[{\"role\":\"user\",\"content\":\"hi \\u00e9\"}],"
        "\"n\":-12.5e3,\"t\":true,\"f\":false,\"z\":null,\"e\":{},\"a\":[],\"d\":1,\"d\":2}",
        " \t\n[1, 2.5, -0, 1e-3, \"\\ud83d\\ude00\", [[[]]], {\"x\": {\"y\": [null]}}]",
        "\xEF\xBB\xBF{\"bom\":1}",
    };
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        cJSON *a = json_parse(docs[i], strlen(docs[i]), NULL), *b = cJSON_Parse(docs[i]);
        char *pa = a ? cJSON_PrintUnformatted(a) : NULL, *pb = b ? cJSON_PrintUnformatted(b) : NULL;
        T_CHECK(pa && pb && !strcmp(pa, pb));
        /* cJSON_Compare looks keys up by name: the first doc's twin "d" fails it
         * even against itself; the printed text above checks it */
        T_CHECK(i == 0 || cJSON_Compare(a, b, 1));
        cJSON_free(pa);
        cJSON_free(pb);
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
    /* the list cJSON's own functions rely on: the first item's prev is the last */
    cJSON *v = json_parse("[1,2,3]", 7, NULL);
    T_CHECK(v && v->child->prev == v->child->next->next);
    cJSON_AddItemToArray(v, cJSON_CreateNumber(4));
    T_EQ_INT(cJSON_GetArraySize(v), 4);
    T_EQ_INT((long long)cJSON_GetArrayItem(v, 3)->valuedouble, 4);
    cJSON_Delete(v);
    /* *end is just past the value, as cJSON_ParseWithLengthOpts sets it */
    const char *end = NULL, *two = "{\"a\":1} {\"b\":2}";
    v = json_parse(two, strlen(two), &end);
    T_CHECK(v && end == two + 7);
    cJSON_Delete(v);
}

static void test_numbers(void)
{
    char buf[32];
    cJSON *v = json_parse("[9007199254740993, 9007199254740992, -12345678901234567890123, "
                          "42, 1.5, 1e300, 123456789012345]", 95, NULL);
    T_CHECK(v != NULL);
    if (!v)
        return;
    T_EQ_STR(json_number_text(cJSON_GetArrayItem(v, 0), buf, sizeof buf), "9007199254740993");
    T_EQ_STR(json_number_text(cJSON_GetArrayItem(v, 1), buf, sizeof buf), "9007199254740992");
    T_EQ_STR(json_number_text(cJSON_GetArrayItem(v, 2), buf, sizeof buf),
             "-12345678901234567890123");
    T_EQ_STR(json_number_text(cJSON_GetArrayItem(v, 3), buf, sizeof buf), "42");
    T_EQ_STR(json_number_text(cJSON_GetArrayItem(v, 4), buf, sizeof buf), "1.5");
    T_EQ_STR(json_number_text(cJSON_GetArrayItem(v, 5), buf, sizeof buf), "1.0000000000000001e+300");
    T_EQ_STR(json_number_text(cJSON_GetArrayItem(v, 6), buf, sizeof buf), "123456789012345");
    T_CHECK(cJSON_IsNumber(cJSON_GetArrayItem(v, 0)));
    cJSON *d = cJSON_Duplicate(v, 1);          /* the kept digits are copied and freed */
    T_EQ_STR(json_number_text(cJSON_GetArrayItem(d, 0), buf, sizeof buf), "9007199254740993");
    cJSON_Delete(d);
    cJSON_Delete(v);
}

static struct cairn *open_tmp(char *dir, size_t n)
{
    struct cairn *h = NULL;
    char path[512];
    snprintf(dir, n, "/tmp/cairn-odd-XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    snprintf(path, sizeof path, "%s/s.db", dir);
    t_open(path, 0, &h);
    T_CHECK(h != NULL);
    return h;
}

static void close_tmp(struct cairn *h, const char *dir)
{
    char cmd[600];
    cairn_close(h);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    T_EQ_INT(system(cmd), 0);
}

/* json_string_decode: json_parse's strings without its repairs, for
 * readers of fixed formats (vocab.json) that refuse a damaged file */
static void test_string_strict(void)
{
    static const struct { const char *in; const char *out; } ok[] = {
        { "\"plain\" tail", "plain" },
        { "\"a\\\"b\\\\c\\/d\\n\"", "a\"b\\c/d\n" },
        { "\"\\u2581the\"", "\xE2\x96\x81the" },
        { "\"\\ud83c\\udf89\"", "\xF0\x9F\x8E\x89" },
        { "\"\"", "" },
    };
    static const char *const bad[] = {
        "\"\\ud83c\"", "\"\\udf89x\"", "\"x\\u0000\"", "\"\\u12\"", "\"\\q\"",
        "\"raw\ttab\"", "\"unterminated", "noquote\"", "\"\\",
    };
    char out[32];
    const char *next;

    for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
        const char *in = ok[i].in, *end = in + strlen(in);
        long n = json_string_decode(in, end, out, sizeof(out), &next);
        T_CHECK(n == (long)strlen(ok[i].out) && memcmp(out, ok[i].out, (size_t)n) == 0);
        T_CHECK(next > in && next[-1] == '"');
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        T_CHECK(json_string_decode(bad[i], bad[i] + strlen(bad[i]), out, sizeof(out), NULL) < 0);
    /* json_parse repairs what is refused here */
    cJSON *v = json_parse("\"\\ud83c\"", 8, NULL);
    T_CHECK(v && cJSON_IsString(v) && strcmp(v->valuestring, "\xEF\xBF\xBD") == 0);
    cJSON_Delete(v);
    /* the cap: a string needing one byte more is refused, not cut */
    T_CHECK(json_string_decode("\"abcd\"", "\"abcd\"" + 6, out, 4, NULL) == 4);
    T_CHECK(json_string_decode("\"abcde\"", "\"abcde\"" + 7, out, 4, NULL) < 0);
    T_CHECK(json_string_decode("\"\\u2581\"", "\"\\u2581\"" + 8, out, 3, NULL) < 0);
}

static void test_add_json(void)
{
    char dir[64];
    struct cairn *h = open_tmp(dir, sizeof dir);
    if (!h)
        return;
    const char nul[] = "{\"id\":\"n\",\"messages\":[{\"role\":\"user\",\"content\":\"before\\u0000after\"},"
                       "{\"role\":\"user\",\"content\":\"raw\0nul\"}]}";
    T_EQ_INT(cairn_add_json(h, nul, sizeof nul - 1, NULL), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM messages WHERE content = 'before" FFFD "after'"), 1);
    T_EQ_INT(count(h, "SELECT count(*) FROM messages WHERE content = 'raw" FFFD "nul'"), 1);

    const char *sur = "{\"id\":\"s\",\"messages\":[{\"role\":\"user\",\"content\":\"cut \\ud83d\"},"
                      "{\"role\":\"assistant\",\"content\":\"kept\"}]}";
    T_EQ_INT(cairn_add_json(h, sur, strlen(sur), NULL), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM messages WHERE content = 'cut " FFFD "'"), 1);
    T_EQ_INT(count(h, "SELECT count(*) FROM messages WHERE content = 'kept'"), 1);

    /* two ids that round to the same double stay two sessions */
    const char *b1 = "{\"id\":9007199254740993,\"messages\":[{\"role\":\"user\",\"content\":\"one\"}]}";
    const char *b2 = "{\"id\":9007199254740992,\"messages\":[{\"role\":\"user\",\"content\":\"two\"}]}";
    T_EQ_INT(cairn_add_json(h, b1, strlen(b1), NULL), CAIRN_OK);
    T_EQ_INT(cairn_add_json(h, b2, strlen(b2), NULL), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM sessions WHERE ext_id IN "
                      "('9007199254740993', '9007199254740992')"), 2);
    /* small numeric ids as before */
    const char *s7 = "{\"id\":7,\"messages\":[{\"id\":1,\"role\":\"user\",\"content\":\"x\"}]}";
    T_EQ_INT(cairn_add_json(h, s7, strlen(s7), NULL), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM sessions WHERE ext_id = '7'"), 1);
    close_tmp(h, dir);
}

static void test_repeated_ids(void)
{
    char dir[64];
    struct cairn *h = open_tmp(dir, sizeof dir);
    if (!h)
        return;
    const char *two = "{\"id\":\"r\",\"messages\":[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"first\"},"
                      "{\"id\":\"m1\",\"role\":\"user\",\"content\":\"second\"}]}";
    T_EQ_INT(cairn_add_json(h, two, strlen(two), NULL), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(h), "message 2 repeats the id \"m1\" of message 1") != NULL);
    T_EQ_INT(count(h, "SELECT count(*) FROM sessions"), 0);      /* nothing half-added */
    /* big numeric message ids that round alike are different ids */
    const char *big = "{\"id\":\"b\",\"messages\":[{\"id\":9007199254740993,\"role\":\"user\","
                      "\"content\":\"a\"},{\"id\":9007199254740992,\"role\":\"user\",\"content\":\"b\"}]}";
    T_EQ_INT(cairn_add_json(h, big, strlen(big), NULL), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM messages"), 2);
    /* the same message twice, or a reply and its longer later form: nothing lost, kept */
    const char *grow = "{\"id\":\"g\",\"messages\":[{\"id\":\"a\",\"role\":\"assistant\",\"content\":\"par\"},"
                       "{\"id\":\"a\",\"role\":\"assistant\",\"content\":\"partial reply\"},"
                       "{\"id\":\"a\",\"role\":\"assistant\",\"content\":\"partial reply\"}]}";
    T_EQ_INT(cairn_add_json(h, grow, strlen(grow), NULL), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM messages m JOIN sessions s ON m.session = s.id "
                      "WHERE s.ext_id = 'g' AND content = 'partial reply'"), 1);
    close_tmp(h, dir);
}

static void test_continues(void)
{
    char dir[64];
    struct cairn *h = open_tmp(dir, sizeof dir);
    if (!h)
        return;
    struct cairn_message m[3] = {
        { .role = "user", .content = "hello", .at = CAIRN_NO_TIME },
        { .role = "assistant", .content = "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", .at = CAIRN_NO_TIME },
        { .role = "user", .content = "more", .at = CAIRN_NO_TIME },
    };
    struct cairn_session s = { .id = "c", .started_at = CAIRN_NO_TIME, .ended_at = CAIRN_NO_TIME,
                               .messages = m, .n_messages = 2 };
    T_EQ_INT(cairn_session_continues(h, "c", &s), 1);           /* no such session */
    T_EQ_INT(cairn_add_session(h, &s, NULL), CAIRN_OK);
    s.n_messages = 3;
    T_EQ_INT(cairn_session_continues(h, "c", &s), 1);           /* grown, masked alike */
    s.n_messages = 1;
    T_EQ_INT(cairn_session_continues(h, "c", &s), 1);           /* an earlier snapshot */
    struct cairn_message other[2] = { m[0], { .role = "assistant", .content = "other",
                                              .at = CAIRN_NO_TIME } };
    s.messages = other;
    s.n_messages = 2;
    T_EQ_INT(cairn_session_continues(h, "c", &s), 0);
    add_chat(h, "chat", 2);                      /* "message 0 of chat", ... */
    T_EQ_INT(cairn_session_continues(h, "chat", &s), 0);
    close_tmp(h, dir);
}

int main(void)
{
    T_RUN(test_repairs);
    T_RUN(test_refused);
    T_RUN(test_same_as_cjson);
    T_RUN(test_numbers);
    T_RUN(test_string_strict);
    T_RUN(test_add_json);
    T_RUN(test_repeated_ids);
    T_RUN(test_continues);
    return T_DONE();
}
