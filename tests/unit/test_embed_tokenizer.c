/*
 * test_embed_tokenizer.c: tokenizer.json loading and encoding.
 *
 * WordPiece: every case of tests/data/embed/tiny-bert/golden.json (ids
 * from the independent Python reference in tests/tools/make_tiny_bert.py:
 * English, Chinese, emoji, accents, code, control characters, a 100- and a
 * 101-character word, very long input) must match exactly; a few cases are
 * also written out here literally (checked by hand against HF's rules);
 * then invalid UTF-8, tight id limits and hostile tokenizer.json files.
 * Unigram: a tiny hand-made vocabulary whose Viterbi results were worked
 * out by hand. Run from the repository root.
 */
#include "t.h"
#include "embed/tokenizer.h"

#include <cJSON.h>
#include <stdlib.h>
#include <unistd.h>

#define TINY_DIR "tests/data/embed/tiny-bert"

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0) {
        p = malloc((size_t)n + 1);
        if (p && fread(p, 1, (size_t)n, f) == (size_t)n) {
            p[n] = 0;
            *len = (size_t)n;
        } else {
            free(p);
            p = NULL;
        }
    }
    fclose(f);
    return p;
}

/* Encodes s and compares to the piece names in want (space separated). */
static int enc_is(const struct embed_tok *t, const char *s, size_t len,
                  int max_ids, const char *want)
{
    int32_t ids[512];
    char got[4096] = "";
    size_t g = 0;
    int n = embed_tok_encode(t, s, len, ids, max_ids), i;

    for (i = 0; i < n && g < sizeof(got) - 64; i++)
        g += (size_t)snprintf(got + g, sizeof(got) - g, "%s%s", i ? " " : "",
                              embed_tok_piece(t, ids[i]));
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "  got  [%s]\n  want [%s]\n", got, want);
        return 0;
    }
    return 1;
}

static void test_golden(void)
{
    char err[256] = "";
    struct embed_tok *t = embed_tok_load(TINY_DIR "/tokenizer.json", err, sizeof(err));
    size_t len = 0;
    char *text = read_all(TINY_DIR "/golden.json", &len);
    cJSON *root = text ? cJSON_Parse(text) : NULL, *c;
    int max_len, cases = 0, exact = 0;

    T_CHECK(t != NULL);
    T_CHECK(root != NULL);
    if (!t || !root) {
        fprintf(stderr, "  %s\n", err);
        goto out;
    }
    T_EQ_INT(embed_tok_kind(t), EMBED_TOK_WORDPIECE);
    T_EQ_INT(embed_tok_trunc_len(t), 48);
    max_len = cJSON_GetObjectItem(root, "max_length")->valueint;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases")) {
        const char *s = cJSON_GetObjectItem(c, "text")->valuestring;
        cJSON *want = cJSON_GetObjectItem(c, "ids"), *w;
        int32_t ids[64];
        int n = embed_tok_encode(t, s, strlen(s), ids, max_len), i = 0, same;

        same = n == cJSON_GetArraySize(want);
        cJSON_ArrayForEach(w, want) {
            if (!same || ids[i++] != w->valueint)
                same = 0;
        }
        if (!same)
            fprintf(stderr, "  golden mismatch on \"%.40s\" (n=%d)\n", s, n);
        cases++;
        exact += same;
    }
    T_EQ_INT(cases, 17);
    T_EQ_INT(exact, cases);
out:
    cJSON_Delete(root);
    free(text);
    embed_tok_free(t);
}

static void test_literal(void)
{
    char err[256];
    struct embed_tok *t = embed_tok_load(TINY_DIR "/tokenizer.json", err, sizeof(err));
    static const char bad[] = "cat\xff\xfe sat \xe4\xb8 on \xc0\xaf mat";
    static const char nul[] = "cat\0sat";

    T_CHECK(t != NULL);
    if (!t)
        return;
    T_CHECK(enc_is(t, "Hello, world!", 13, 48, "[CLS] hello , world ! [SEP]"));
    T_CHECK(enc_is(t, "unaffable", 9, 48, "[CLS] un ##aff ##able [SEP]"));
    T_CHECK(enc_is(t, "我们爱北京", 15, 48, "[CLS] 我 们 爱 北 京 [SEP]"));
    T_CHECK(enc_is(t, "Café", 5, 48, "[CLS] cafe [SEP]"));
    T_CHECK(enc_is(t, "x+1", 3, 48, "[CLS] x + 1 [SEP]"));
    T_CHECK(enc_is(t, "", 0, 48, "[CLS] [SEP]"));
    T_CHECK(enc_is(t, NULL, 0, 48, "[CLS] [SEP]"));
    /* invalid UTF-8 decodes as U+FFFD, which clean_text drops */
    T_CHECK(enc_is(t, bad, sizeof(bad) - 1, 48, "[CLS] cat sat on mat [SEP]"));
    /* an embedded NUL is dropped too (the length, not the NUL, ends input) */
    T_CHECK(enc_is(t, nul, sizeof(nul) - 1, 48, "[CLS] cat ##s ##a ##t [SEP]"));
    /* HF's classes (hf_unicode.h; t0214 checks them against HF itself):
     * a noncharacter (Cn) is kept, not dropped as a control; U+2E42
     * (Unicode 7) is punctuation but U+2E43 (Unicode 9) is not; U+1DFC
     * (6.0, Mn) is stripped, U+1DFB (10.0, Mn) is not */
    T_CHECK(enc_is(t, "a\xef\xb7\x90" "b", 5, 48, "[CLS] [UNK] [SEP]"));
    T_CHECK(enc_is(t, "a\xe2\xb9\x82" "b", 5, 48, "[CLS] a [UNK] b [SEP]"));
    T_CHECK(enc_is(t, "a\xe2\xb9\x83" "b", 5, 48, "[CLS] [UNK] [SEP]"));
    T_CHECK(enc_is(t, "a\xe1\xb7\xbc" "b", 5, 48, "[CLS] a ##b [SEP]"));
    T_CHECK(enc_is(t, "a\xe1\xb7\xbb" "b", 5, 48, "[CLS] [UNK] [SEP]"));
    /* truncation at the caller's limit, mid-word */
    T_CHECK(enc_is(t, "unaffable cat", 13, 4, "[CLS] un ##aff [SEP]"));
    T_CHECK(enc_is(t, "cat", 3, 3, "[CLS] cat [SEP]"));
    {
        int32_t ids[4];
        T_EQ_INT(embed_tok_encode(t, "cat", 3, ids, 2), -1);   /* no room */
    }
    {
        int32_t ids[8];
        T_EQ_INT(embed_tok_encode2(t, "un", 2, "affable", 7, ids, 8), 5);
        T_EQ_INT(ids[2], embed_tok_id(t, "##aff"));
        T_EQ_INT(embed_tok_encode2(t, NULL, 5, "cat", 3, ids, 8), 3);
    }
    T_EQ_INT(embed_tok_id(t, "[CLS]"), 2);
    T_EQ_INT(embed_tok_id(t, "nope"), -1);
    T_CHECK(embed_tok_piece(t, 100000) == NULL);
    embed_tok_free(t);
}

/* A 10 MB input costs what its first ids cost. */
static void test_huge(void)
{
    char err[256];
    struct embed_tok *t = embed_tok_load(TINY_DIR "/tokenizer.json", err, sizeof(err));
    size_t n = (size_t)10 << 20, i;
    char *s = malloc(n);
    int32_t ids[48];

    T_CHECK(t && s);
    if (!t || !s)
        goto out;
    for (i = 0; i < n; i++)
        s[i] = "cat \xe4\xb8\xad"[i % 7];
    T_EQ_INT(embed_tok_encode(t, s, n, ids, 48), 48);
    T_EQ_INT(ids[1], embed_tok_id(t, "cat"));
    T_EQ_INT(ids[2], embed_tok_id(t, "中"));
    T_EQ_INT(ids[47], embed_tok_id(t, "[SEP]"));
out:
    free(s);
    embed_tok_free(t);
}

static int load_fails(const char *json, const char *want)
{
    char err[256] = "";
    struct embed_tok *t = embed_tok_load_mem(json, strlen(json), err, sizeof(err));
    int ok = t == NULL && strstr(err, want) != NULL;

    if (!ok)
        fprintf(stderr, "  %s -> %s\n", json, t ? "loaded" : err);
    embed_tok_free(t);
    return ok;
}

static void test_hostile(void)
{
    char err[256];

    T_CHECK(load_fails("", "not a JSON object"));
    T_CHECK(load_fails("[]", "not a JSON object"));
    T_CHECK(load_fails("{}", "model.type"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"BPE\"}}", "unsupported tokenizer model"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"WordPiece\"}}", "no vocab"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"a\":-1}}}", "bad id"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"a\":1.5}}}", "bad id"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"a\":99999999}}}", "bad id"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"a\":0,\"b\":0}}}",
                       "used twice"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"a\":0},"
                       "\"unk_token\":\"[UNK]\"}}", "unk_token"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0},"
                       "\"unk_token\":\"[UNK]\"},\"pre_tokenizer\":{\"type\":\"Whitespace\"}}",
                       "BertPreTokenizer"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0},"
                       "\"unk_token\":\"[UNK]\"},\"normalizer\":{\"type\":\"Lowercase\"}}",
                       "unsupported normalizer"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0},"
                       "\"unk_token\":\"[UNK]\"},\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
                       "\"post_processor\":{\"type\":\"BertProcessing\",\"cls\":[\"x\",7],"
                       "\"sep\":[\"y\",0]}}", "outside the vocab"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\"]],\"unk_id\":0}}",
                       "not [piece, score]"));
    T_CHECK(load_fails("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0]],\"unk_id\":5}}",
                       "unk_id"));
    /* finite as a double, -inf as a float: refused (it left Viterbi without
     * a path and the walk back read unset pointers; found by fuzz_tokenizer) */
    T_CHECK(load_fails("{\"model\":{\"type\":\"Unigram\",\"unk_id\":0,\"vocab\":"
                       "[[\"<unk>\",0],[\"a\",-1e39]]},\"pre_tokenizer\":{\"type\":\"Metaspace\"}}",
                       "not [piece, score]"));
    /* Unigram: what we do not implement is refused, never approximated */
#define UNI_MODEL "\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0]],\"unk_id\":0}"
#define UNI_META  "\"pre_tokenizer\":{\"type\":\"Metaspace\"}"
    T_CHECK(load_fails("{" UNI_MODEL "," UNI_META ",\"normalizer\":{\"type\":\"Lowercase\"}}",
                       "unsupported normalizer 'Lowercase'"));
    T_CHECK(load_fails("{" UNI_MODEL "," UNI_META ",\"normalizer\":{\"type\":\"Sequence\","
                       "\"normalizers\":[{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\\\\s+\"},"
                       "\"content\":\" \"}]}}", "unsupported regex"));
    T_CHECK(load_fails("{" UNI_MODEL "," UNI_META ",\"normalizer\":{\"type\":\"Precompiled\","
                       "\"precompiled_charsmap\":null}}", "without a precompiled_charsmap"));
    T_CHECK(load_fails("{" UNI_MODEL "," UNI_META ",\"normalizer\":{\"type\":\"Precompiled\","
                       "\"precompiled_charsmap\":\"CAAAAA==\"}}", "does not fit"));
    T_CHECK(load_fails("{" UNI_MODEL "}", "Unigram needs pre_tokenizer Metaspace"));
    T_CHECK(load_fails("{" UNI_MODEL ",\"pre_tokenizer\":{\"type\":\"Metaspace\","
                       "\"prepend_scheme\":\"sometimes\"}}", "prepend_scheme"));
    T_CHECK(load_fails("{" UNI_MODEL ",\"pre_tokenizer\":{\"type\":\"Metaspace\","
                       "\"replacement\":\"ab\"}}", "one character"));
    T_CHECK(embed_tok_load("/nonexistent/tokenizer.json", err, sizeof(err)) == NULL &&
            strstr(err, "No such file"));
}

/*
 * Unigram, worked by hand. Scores: ▁hello -3, ▁he -2, llo -2 (so
 * "hello" = ▁hello at -3 beats ▁he+llo at -4); o -4; ▁world -4 vs
 * ▁wor -3 + ld -3; "xyz" has no pieces: ▁ then one merged <unk>.
 */
static const char uni_json[] =
    "{\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":["
    "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\" {2,}\"},\"content\":\" \"},"
    "{\"type\":\"NFKC\"}]},"
    "\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"\xe2\x96\x81\"},"
    "\"post_processor\":{\"type\":\"TemplateProcessing\","
    "\"single\":[{\"SpecialToken\":{\"id\":\"<s>\"}},{\"Sequence\":{\"id\":\"A\"}},"
    "{\"SpecialToken\":{\"id\":\"</s>\"}}],"
    "\"special_tokens\":{\"<s>\":{\"ids\":[0]},\"</s>\":{\"ids\":[2]}}},"
    "\"model\":{\"type\":\"Unigram\",\"unk_id\":3,\"vocab\":["
    "[\"<s>\",0],[\"<pad>\",0],[\"</s>\",0],[\"<unk>\",0],"
    "[\"\xe2\x96\x81\",-2],[\"\xe2\x96\x81hello\",-3],[\"\xe2\x96\x81he\",-2],"
    "[\"llo\",-2],[\"l\",-4],[\"o\",-4],[\"\xe2\x96\x81world\",-4],"
    "[\"\xe2\x96\x81wor\",-3],[\"ld\",-3],[\"h\",-5],[\"e\",-5],[\"\xe4\xb8\xad\",-6]]}}";

static void test_unigram(void)
{
    char err[256] = "";
    struct embed_tok *t = embed_tok_load_mem(uni_json, sizeof(uni_json) - 1, err,
                                             sizeof(err));

    T_CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    T_EQ_INT(embed_tok_kind(t), EMBED_TOK_UNIGRAM);
    T_CHECK(enc_is(t, "hello", 5, 32, "<s> \xe2\x96\x81hello </s>"));
    T_CHECK(enc_is(t, "helloo world", 12, 32,
                   "<s> \xe2\x96\x81hello o \xe2\x96\x81world </s>"));
    /* runs squeezed; the trailing space is a last "▁" word, as in HF */
    T_CHECK(enc_is(t, "  hello   world  ", 17, 32,
                   "<s> \xe2\x96\x81hello \xe2\x96\x81world \xe2\x96\x81 </s>"));
    T_CHECK(enc_is(t, "xyz", 3, 32, "<s> \xe2\x96\x81 <unk> </s>"));
    T_CHECK(enc_is(t, "hexyzllo", 8, 32, "<s> \xe2\x96\x81he <unk> llo </s>"));
    /* NFKC: full-width letters fold to ASCII */
    T_CHECK(enc_is(t, "\xef\xbd\x88\xef\xbd\x85\xef\xbd\x8c\xef\xbd\x8c\xef\xbd\x8f", 15, 32,
                   "<s> \xe2\x96\x81hello </s>"));
    T_CHECK(enc_is(t, "hello\xff", 6, 32, "<s> \xe2\x96\x81hello <unk> </s>"));
    /* a NUL in the text is a character (an unknown one), as in HF */
    T_CHECK(enc_is(t, "he\0llo", 6, 32, "<s> \xe2\x96\x81he <unk> llo </s>"));
    T_CHECK(enc_is(t, "hello hello hello", 17, 4,
                   "<s> \xe2\x96\x81hello \xe2\x96\x81hello </s>"));
    T_CHECK(enc_is(t, "", 0, 32, "<s> </s>"));
    {
        /* a prefix runs on into the text; spaces do not eat the budget */
        int32_t ids[8];
        size_t big = (size_t)1 << 20;
        char *sp = malloc(big + 6);
        T_EQ_INT(embed_tok_encode2(t, "hello ", 6, "world", 5, ids, 8), 4);
        T_EQ_INT(ids[1], 5);
        T_EQ_INT(ids[2], 10);
        memset(sp, ' ', big);
        memcpy(sp + big, "hello", 6);
        T_CHECK(enc_is(t, sp, big + 5, 8, "<s> \xe2\x96\x81hello </s>"));
        free(sp);
    }
    embed_tok_free(t);
}

static size_t unhex(const char *h, char *out)
{
    size_t n = 0;
    unsigned v;

    while (h[0] && h[1] && sscanf(h, "%2x", &v) == 1) {
        out[n++] = (char)v;
        h += 2;
    }
    return n;
}

/* One model of a golden.json (see run_golden); returns the cases that
 * match. Cases marked "quirk" (cairn differs from HF on purpose) are
 * counted in *quirks and not compared. */
static int golden_model(const char *dir, const cJSON *m, int *cases, int *quirks)
{
    const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(m, "tokenizer"));
    const char *mname = cJSON_GetStringValue(cJSON_GetObjectItem(m, "name"));
    const cJSON *c;
    char path[1024], err[256] = "";
    struct embed_tok *t;
    int exact = 0, n_cases = 0;

    snprintf(path, sizeof(path), "%s%s%s", file && file[0] == '/' ? "" : dir,
             file && file[0] == '/' ? "" : "/", file ? file : "?");
    t = embed_tok_load(path, err, sizeof(err));
    T_CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "  %s\n", err);
        return 0;
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(m, "cases")) {
        const char *hex = cJSON_GetStringValue(cJSON_GetObjectItem(c, "hex"));
        const cJSON *want = cJSON_GetObjectItem(c, "ids");
        size_t hl = hex ? strlen(hex) : 0;
        char *text;
        int32_t *ids;
        int n, same, i, cap;

        if (cJSON_GetObjectItem(c, "quirk")) {
            (*quirks)++;
            continue;
        }
        /* room for more ids than wanted, cut where a model cuts (bert.c) */
        cap = embed_tok_trunc_len(t) > 0 ? embed_tok_trunc_len(t)
                                         : 2 * cJSON_GetArraySize(want) + 64;
        text = malloc(hl / 2 + 1);
        ids = malloc((size_t)cap * sizeof(*ids));
        n = text && ids ? embed_tok_encode(t, text, unhex(hex ? hex : "", text), ids, cap) : -1;
        same = n == cJSON_GetArraySize(want);
        for (i = 0; same && i < n; i++)
            same = ids[i] == (int32_t)cJSON_GetArrayItem(want, i)->valuedouble;
        if (!same) {
            fprintf(stderr, "  %s / %s:\n   got ", mname,
                    cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")));
            for (i = 0; i < n && i < 60; i++)
                fprintf(stderr, " %s", embed_tok_piece(t, ids[i]));
            fprintf(stderr, "\n   want");
            for (i = 0; i < cJSON_GetArraySize(want) && i < 60; i++)
                fprintf(stderr, " %s", embed_tok_piece(t, (int)cJSON_GetArrayItem(want, i)->valuedouble));
            fprintf(stderr, "\n");
        }
        exact += same;
        n_cases++;
        free(ids);
        free(text);
    }
    fprintf(stderr, "  %s: %d cases, %d mismatches\n", mname, n_cases, n_cases - exact);
    *cases += n_cases;
    embed_tok_free(t);
    return exact;
}

/*
 * Every model of the golden.json in dir ({"models": [{"name", "tokenizer":
 * path, absolute or relative to dir, "cases": [{"name", "hex", "ids",
 * "quirk"?}]}]}): each case's ids exactly. label names the reference.
 */
static void run_golden(const char *label, const char *dir)
{
    char path[1024];
    size_t len = 0;
    char *text;
    cJSON *root, *m;
    int cases = 0, exact = 0, quirks = 0;

    snprintf(path, sizeof(path), "%s/golden.json", dir);
    text = read_all(path, &len);
    root = text ? cJSON_Parse(text) : NULL;
    T_CHECK(root != NULL);
    cJSON_ArrayForEach(m, cJSON_GetObjectItem(root, "models"))
        exact += golden_model(dir, m, &cases, &quirks);
    fprintf(stderr, "  %s golden: %d cases, ids equal %d, quirks %d\n", label, cases,
            exact, quirks);
    T_CHECK(cases > 0);
    T_EQ_INT(exact, cases);
    cJSON_Delete(root);
    free(text);
}

/* run_golden on the folder $var names, or a note that it is skipped. */
static void golden_from_env(const char *label, const char *var, const char *what)
{
    const char *dir = getenv(var);

    if (!dir) {
        fprintf(stderr, "  (%s not set: %s goldens skipped)\n", var, what);
        return;
    }
    run_golden(label, dir);
}

/*
 * SentencePiece models trained by tests/tools/make_spm_unigram.py, ids from
 * sentencepiece (or HF's rule where the two differ, see that script): run
 * by tests/t/t0213-spm-charsmap.sh with CAIRN_SPM_DIR set, skipped here
 * otherwise (python3-sentencepiece is needed to make them).
 */
static void test_spm_golden(void) { golden_from_env("spm", "CAIRN_SPM_DIR", "sentencepiece"); }

/*
 * Ids from Hugging Face's tokenizers itself (tests/tools/hf_tokenize.js):
 * run by tests/t/t0214-hf-tokenizers.sh with CAIRN_HF_DIR set, skipped
 * here otherwise (the npm package is needed).
 */
static void test_hf_golden(void) { golden_from_env("hf", "CAIRN_HF_DIR", "Hugging Face"); }

int main(void)
{
    const char *root = getenv("CAIRN_TEST_ROOT");

    if (root && chdir(root) != 0)
        fprintf(stderr, "cannot cd to %s\n", root);
    T_RUN(test_golden);
    T_RUN(test_literal);
    T_RUN(test_huge);
    T_RUN(test_hostile);
    T_RUN(test_unigram);
    T_RUN(test_spm_golden);
    T_RUN(test_hf_golden);
    return T_DONE();
}
