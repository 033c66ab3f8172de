/*
 * tokenizer.c: tokenizer.json loading, the BERT normaliser and
 * pre-tokenizer, WordPiece, and the Unigram (SentencePiece) model.
 *
 * Design: tokenizing streams. Each code point of the input goes through
 * the normaliser (clean, CJK spacing, accent stripping by canonical
 * decomposition minus Mn marks, lower-casing) one at a time, straight into
 * the pre-tokenizer, which hands finished words to the model. Every step
 * of the BERT normaliser is per character, so this gives the same result
 * as normalising the whole string first, without a copy of a possibly huge
 * input; and it stops as soon as the id array is full, so a 10 MB input
 * costs no more than a 512-token one.
 *
 * The vocabulary is an array of pieces indexed by id plus an
 * open-addressing hash (FNV-1a, linear probing) from piece to id.
 *
 * Behaviour follows Hugging Face tokenizers (normalizers/bert.rs,
 * pre_tokenizers/bert.rs, models/wordpiece, models/unigram) and is checked
 * against the library itself by tests/t/t0214-hf-tokenizers.sh; the BERT
 * character classes are HF's own, in hf_unicode.h. The known differences
 * are listed in tokenizer.h and at the Unigram section.
 */
#include "embed/tokenizer.h"

#include "util/buf.h"
#include "util/hash.h"
#include "util/utf8.h"
#include "embed/charsmap.h"
#include "embed/common.h"
#include "embed/hf_unicode.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define TOK_MAX_FILE     ((size_t)64 << 20)   /* tokenizer.json cap */
#define TOK_MAX_VOCAB    (1 << 22)
#define TOK_MAX_SPECIAL  4
#define TOK_WORD_CHARS   100                  /* HF default per-word cap */
#define TOK_MAX_WORD     256                  /* largest per-word cap we honour */
#define TOK_MAX_PIECE    256                  /* longest piece we look up, bytes */
#define TOK_MAX_NORM     8                    /* Unigram normalizer steps */

/* One step of a Unigram tokenizer's normalizer (a flattened Sequence). */
enum tok_norm_kind {
    NORM_PRECOMPILED = 1,   /* SentencePiece charsmap (charsmap.h) */
    NORM_SQUEEZE,           /* Replace Regex " {2,}": space runs -> `with` */
    NORM_REPLACE,           /* Replace String `pat` -> `with` */
    NORM_STRIP,             /* Strip whitespace at the left / right end */
    NORM_NFC, NORM_NFD, NORM_NFKC, NORM_NFKD
};

struct tok_norm {
    int      kind;                    /* enum tok_norm_kind */
    struct embed_charsmap *map;       /* NORM_PRECOMPILED */
    char    *pat, *with;              /* NORM_REPLACE, NORM_SQUEEZE (with only) */
    int      left, right;             /* NORM_STRIP */
};

struct embed_tok {
    int      kind;                    /* enum embed_tok_kind */
    char   **pieces;                  /* [n_ids] piece text by id, NULL in gaps */
    float   *scores;                  /* [n_ids] Unigram log-probs, or NULL */
    int      n_ids;                   /* largest id + 1 */
    uint32_t *slots;                  /* hash: id + 1, 0 = empty */
    uint32_t slot_mask;               /* slot count - 1 (power of two) */
    int      unk_id;                  /* -1 if none */
    int      trunc_len;               /* tokenizer.json truncation, 0 = none */

    /* BertNormalizer flags (WordPiece) */
    int      clean_text, handle_chinese, strip_accents, lowercase;
    /* WordPiece */
    char     prefix[16];              /* continuing_subword_prefix, "##" */
    size_t   prefix_len;
    int      max_word_chars;
    /* Unigram */
    struct tok_norm norm[TOK_MAX_NORM];
    int      n_norm;
    char     meta[8];                 /* Metaspace replacement, "\u2581" */
    size_t   meta_len;
    int      meta_prepend;            /* prepend_scheme always / first */
    int      meta_split;              /* split words before each replacement */
    int      byte_fallback;
    float    min_score;               /* lowest piece score */
    int      max_piece_chars;         /* longest piece, in code points */

    int32_t  pre_ids[TOK_MAX_SPECIAL];  /* special ids before the text */
    int      n_pre;
    int32_t  post_ids[TOK_MAX_SPECIAL]; /* and after it */
    int      n_post;
};

/* ---- vocabulary --------------------------------------------------------- */

/* Only a slot index, never stored: the low bits of the shared FNV-1a. */
static uint32_t tok_hash(const char *s, size_t n)
{
    return (uint32_t)fnv1a64(s, n, FNV1A64_BASIS);
}

static int tok_lookup(const struct embed_tok *t, const char *s, size_t n)
{
    uint32_t i = tok_hash(s, n) & t->slot_mask;

    while (t->slots[i]) {
        const char *p = t->pieces[t->slots[i] - 1];
        /* s may hold a NUL (U+0000 in the text): compare lengths first */
        if (strnlen(p, n + 1) == n && memcmp(p, s, n) == 0)
            return (int)t->slots[i] - 1;
        i = (i + 1) & t->slot_mask;
    }
    return -1;
}

/* Allocates pieces[n_ids] (and scores if want_scores). */
static int tok_alloc_vocab(struct embed_tok *t, int n_ids, int want_scores)
{
    t->n_ids = n_ids;
    t->pieces = calloc((size_t)n_ids, sizeof(*t->pieces));
    if (want_scores)
        t->scores = calloc((size_t)n_ids, sizeof(*t->scores));
    return t->pieces && (!want_scores || t->scores) ? 0 : -1;
}

/* Builds the hash over pieces[]. Returns 0, or -1 with err set. */
static int tok_build_hash(struct embed_tok *t, char *err, size_t errlen)
{
    uint32_t nslots = 16;
    int id;

    while (nslots < (uint32_t)t->n_ids * 2)
        nslots <<= 1;
    t->slots = calloc(nslots, sizeof(*t->slots));
    if (!t->slots) {
        embed_errf(err, errlen, "out of memory");
        return -1;
    }
    t->slot_mask = nslots - 1;
    for (id = 0; id < t->n_ids; id++) {
        const char *p = t->pieces[id];
        uint32_t i;

        if (!p)
            continue;
        i = tok_hash(p, strlen(p)) & t->slot_mask;
        while (t->slots[i]) {
            if (strcmp(t->pieces[t->slots[i] - 1], p) == 0) {
                embed_errf(err, errlen, "vocabulary piece '%.40s' appears twice", p);
                return -1;
            }
            i = (i + 1) & t->slot_mask;
        }
        t->slots[i] = (uint32_t)id + 1;
    }
    return 0;
}

void embed_tok_free(struct embed_tok *t)
{
    int i;

    if (!t)
        return;
    for (i = 0; t->pieces && i < t->n_ids; i++)
        free(t->pieces[i]);
    for (i = 0; i < t->n_norm; i++) {
        embed_charsmap_free(t->norm[i].map);
        free(t->norm[i].pat);
        free(t->norm[i].with);
    }
    free(t->pieces);
    free(t->scores);
    free(t->slots);
    free(t);
}

int embed_tok_kind(const struct embed_tok *t) { return t->kind; }
int embed_tok_vocab_size(const struct embed_tok *t) { return t->n_ids; }
int embed_tok_trunc_len(const struct embed_tok *t) { return t->trunc_len; }

int embed_tok_id(const struct embed_tok *t, const char *piece)
{
    return tok_lookup(t, piece, strlen(piece));
}

const char *embed_tok_piece(const struct embed_tok *t, int id)
{
    return id >= 0 && id < t->n_ids ? t->pieces[id] : NULL;
}

/* ---- loading ------------------------------------------------------------ */

static int json_bool(const cJSON *o, const char *key, int dflt)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);

    if (cJSON_IsBool(j))
        return cJSON_IsTrue(j);
    return dflt;
}

/* 1 and *out set if j is an integer in [0, TOK_MAX_VOCAB). */
static int json_id(const cJSON *j, int *out)
{
    if (!cJSON_IsNumber(j) || !(j->valuedouble >= 0) ||
        j->valuedouble >= TOK_MAX_VOCAB || j->valuedouble != (int)j->valuedouble)
        return 0;
    *out = (int)j->valuedouble;
    return 1;
}

static int tok_load_wordpiece(struct embed_tok *t, const cJSON *model,
                              char *err, size_t errlen)
{
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_token");
    const cJSON *pfx = cJSON_GetObjectItemCaseSensitive(model,
                                                        "continuing_subword_prefix");
    const cJSON *mx = cJSON_GetObjectItemCaseSensitive(model,
                                                       "max_input_chars_per_word");
    const cJSON *e;
    int max_id = -1, id;

    if (!cJSON_IsObject(vocab)) {
        embed_errf(err, errlen, "WordPiece model has no vocab object");
        return -1;
    }
    cJSON_ArrayForEach(e, vocab) {
        if (!json_id(e, &id) || !e->string) {
            embed_errf(err, errlen, "WordPiece vocab: bad id for '%.40s'",
                    e->string ? e->string : "");
            return -1;
        }
        if (id > max_id)
            max_id = id;
    }
    if (max_id < 0 || tok_alloc_vocab(t, max_id + 1, 0) != 0) {
        embed_errf(err, errlen, max_id < 0 ? "WordPiece vocab is empty" : "out of memory");
        return -1;
    }
    cJSON_ArrayForEach(e, vocab) {
        json_id(e, &id);
        if (t->pieces[id]) {
            embed_errf(err, errlen, "WordPiece vocab: id %d used twice", id);
            return -1;
        }
        t->pieces[id] = strdup(e->string);
        if (!t->pieces[id]) {
            embed_errf(err, errlen, "out of memory");
            return -1;
        }
    }
    if (tok_build_hash(t, err, errlen) != 0)
        return -1;
    t->unk_id = cJSON_IsString(unk) ? tok_lookup(t, unk->valuestring,
                                                 strlen(unk->valuestring)) : -1;
    if (t->unk_id < 0) {
        embed_errf(err, errlen, "WordPiece unk_token is missing from the vocab");
        return -1;
    }
    if (cJSON_IsString(pfx)) {
        t->prefix_len = strlen(pfx->valuestring);
        if (t->prefix_len >= sizeof(t->prefix)) {
            embed_errf(err, errlen, "continuing_subword_prefix too long");
            return -1;
        }
        memcpy(t->prefix, pfx->valuestring, t->prefix_len + 1);
    } else {
        memcpy(t->prefix, "##", 3);
        t->prefix_len = 2;
    }
    t->max_word_chars = TOK_WORD_CHARS;
    if (cJSON_IsNumber(mx) && mx->valuedouble >= 1 && mx->valuedouble <= TOK_MAX_WORD)
        t->max_word_chars = (int)mx->valuedouble;
    return 0;
}

static int tok_load_unigram(struct embed_tok *t, const cJSON *model,
                            char *err, size_t errlen);

static int tok_load_normalizer(struct embed_tok *t, const cJSON *norm,
                               char *err, size_t errlen);
static int uni_load_metaspace(struct embed_tok *t, const cJSON *pre, char *err,
                              size_t errlen);

/* Reads the special ids around a single sequence from the post_processor. */
static int tok_load_post(struct embed_tok *t, const cJSON *pp, char *err,
                         size_t errlen)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(pp, "type");
    const char *ty = cJSON_IsString(type) ? type->valuestring : "";

    if (cJSON_IsNull(pp) || !pp)
        return 0;
    if (strcmp(ty, "BertProcessing") == 0 || strcmp(ty, "RobertaProcessing") == 0) {
        const cJSON *cls = cJSON_GetObjectItemCaseSensitive(pp, "cls");
        const cJSON *sep = cJSON_GetObjectItemCaseSensitive(pp, "sep");
        int a, b;
        if (!json_id(cJSON_GetArrayItem(cls, 1), &a) ||
            !json_id(cJSON_GetArrayItem(sep, 1), &b)) {
            embed_errf(err, errlen, "%s: bad cls/sep", ty);
            return -1;
        }
        t->pre_ids[t->n_pre++] = a;
        t->post_ids[t->n_post++] = b;
        return 0;
    }
    if (strcmp(ty, "TemplateProcessing") == 0) {
        const cJSON *single = cJSON_GetObjectItemCaseSensitive(pp, "single");
        const cJSON *specials = cJSON_GetObjectItemCaseSensitive(pp, "special_tokens");
        const cJSON *item;
        int seen_seq = 0;

        cJSON_ArrayForEach(item, single) {
            const cJSON *sp = cJSON_GetObjectItemCaseSensitive(item, "SpecialToken");
            const cJSON *name, *ids, *one;

            if (cJSON_GetObjectItemCaseSensitive(item, "Sequence")) {
                seen_seq = 1;
                continue;
            }
            name = cJSON_GetObjectItemCaseSensitive(sp, "id");
            if (!cJSON_IsString(name)) {
                embed_errf(err, errlen, "TemplateProcessing: bad item");
                return -1;
            }
            ids = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(specials, name->valuestring), "ids");
            if (!cJSON_IsArray(ids)) {
                embed_errf(err, errlen, "TemplateProcessing: no ids for '%.40s'",
                        name->valuestring);
                return -1;
            }
            cJSON_ArrayForEach(one, ids) {
                int id;
                int *n = seen_seq ? &t->n_post : &t->n_pre;
                int32_t *arr = seen_seq ? t->post_ids : t->pre_ids;
                if (!json_id(one, &id) || *n >= TOK_MAX_SPECIAL) {
                    embed_errf(err, errlen, "TemplateProcessing: bad special ids");
                    return -1;
                }
                arr[(*n)++] = id;
            }
        }
        return 0;
    }
    embed_errf(err, errlen, "unsupported post_processor '%.40s'", ty);
    return -1;
}

struct embed_tok *embed_tok_load_mem(const char *json, size_t len, char *err,
                                     size_t errlen)
{
    struct embed_tok *t = calloc(1, sizeof(*t));
    cJSON *root = cJSON_ParseWithLength(json, len);
    const cJSON *model, *mtype, *pre, *trunc;
    int ok = 0, i;

    if (!t) {
        embed_errf(err, errlen, "out of memory");
        goto out;
    }
    t->unk_id = -1;
    if (!cJSON_IsObject(root)) {
        embed_errf(err, errlen, "tokenizer.json is not a JSON object");
        goto out;
    }
    model = cJSON_GetObjectItemCaseSensitive(root, "model");
    mtype = cJSON_GetObjectItemCaseSensitive(model, "type");
    if (!cJSON_IsString(mtype)) {
        embed_errf(err, errlen, "tokenizer.json: model.type missing");
        goto out;
    }
    if (strcmp(mtype->valuestring, "WordPiece") == 0) {
        t->kind = EMBED_TOK_WORDPIECE;
        if (tok_load_wordpiece(t, model, err, errlen) != 0)
            goto out;
    } else if (strcmp(mtype->valuestring, "Unigram") == 0) {
        t->kind = EMBED_TOK_UNIGRAM;
        if (tok_load_unigram(t, model, err, errlen) != 0)
            goto out;
    } else {
        embed_errf(err, errlen, "unsupported tokenizer model '%.40s'",
                mtype->valuestring);
        goto out;
    }
    if (tok_load_normalizer(t, cJSON_GetObjectItemCaseSensitive(root, "normalizer"),
                            err, errlen) != 0)
        goto out;
    pre = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    if (t->kind == EMBED_TOK_WORDPIECE) {
        const cJSON *pt = cJSON_GetObjectItemCaseSensitive(pre, "type");
        if (!cJSON_IsString(pt) || strcmp(pt->valuestring, "BertPreTokenizer") != 0) {
            embed_errf(err, errlen, "WordPiece needs pre_tokenizer BertPreTokenizer");
            goto out;
        }
    } else if (uni_load_metaspace(t, pre, err, errlen) != 0) {
        goto out;
    }
    if (tok_load_post(t, cJSON_GetObjectItemCaseSensitive(root, "post_processor"),
                      err, errlen) != 0)
        goto out;
    for (i = 0; i < t->n_pre; i++)
        if (t->pre_ids[i] >= t->n_ids) {
            embed_errf(err, errlen, "special id %d outside the vocab", t->pre_ids[i]);
            goto out;
        }
    for (i = 0; i < t->n_post; i++)
        if (t->post_ids[i] >= t->n_ids) {
            embed_errf(err, errlen, "special id %d outside the vocab", t->post_ids[i]);
            goto out;
        }
    trunc = cJSON_GetObjectItemCaseSensitive(root, "truncation");
    if (cJSON_IsObject(trunc)) {
        int ml;
        if (json_id(cJSON_GetObjectItemCaseSensitive(trunc, "max_length"), &ml))
            t->trunc_len = ml;
    }
    ok = 1;
out:
    cJSON_Delete(root);
    if (!ok) {
        embed_tok_free(t);
        return NULL;
    }
    return t;
}

struct embed_tok *embed_tok_load(const char *path, char *err, size_t errlen)
{
    struct buf b = BUF_INIT;
    struct embed_tok *t = NULL;
    char chunk[65536];
    size_t n;
    FILE *f = fopen(path, "rb");

    if (!f) {
        embed_errf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    buf_init(&b, TOK_MAX_FILE);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (buf_add(&b, chunk, n) != BUF_OK)
            break;
    if (ferror(f) || b.err) {
        embed_errf(err, errlen, "%s: %s", path,
                b.err == BUF_TOOBIG ? "file larger than 64 MiB" : "read error");
        goto out;
    }
    t = embed_tok_load_mem(b.p, b.n, err, errlen);
out:
    fclose(f);
    buf_release(&b);
#ifdef __GLIBC__
    /* A 17 MB tokenizer.json parses into ~80 MB of small cJSON nodes, freed
     * above; glibc keeps that heap, and a one-shot process (a hook, `cairn
     * embed`) would carry it as resident memory to the end (bench_rss:
     * query peak 168.7 -> 102.6 MiB). Give it back now. */
    malloc_trim(0);
#endif
    return t;
}

/* ---- Unicode classes (as HF's bert.rs defines them) ---------------------- */

/* Rust's char::is_whitespace (the White_Space property). */
static int tok_is_ws(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
           c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/*
 * The classes below are HF's, from the table in hf_unicode.h (Unicode 8.0,
 * as HF's unicode_categories crate has them), not from utf8proc: a
 * character added to Unicode since, or recategorised, is classed as the
 * models were trained with, and an upgrade of the system's utf8proc cannot
 * change which ids a stored text gets.
 */
static int hfu_in(const uint32_t (*r)[2], size_t n, uint32_t c)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c < r[mid][0])
            hi = mid;
        else if (c > r[mid][1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

#define HFU_IN(table, c) hfu_in(table, sizeof(table) / sizeof(table[0]), c)

static int tok_is_cjk(uint32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* Dropped by clean_text: Cc, Cf, Co except \t \n \r (HF keeps Cn), plus
 * U+0000 and U+FFFD. */
static int tok_is_dropped(uint32_t c) { return HFU_IN(hfu_clean_drop, c); }

/* ASCII punctuation (which includes $+<=>^`|~) or a P* category. */
static int tok_is_punct(uint32_t c) { return HFU_IN(hfu_punct, c); }

/* A nonspacing mark (Mn), which strip_accents removes after NFD. */
static int tok_is_mn(uint32_t c) { return HFU_IN(hfu_strip, c); }

/* ---- encoding state ---------------------------------------------------- */

/*
 * The output ids and the word being built. A word is held as UTF-8 plus
 * the byte offset of each of its first max_word_chars+1 characters; past
 * that the word is only counted (it will be [UNK] anyway).
 */
struct tok_run {
    const struct embed_tok *t;
    int32_t *ids;
    int      n, cap;                /* ids used / room for sequence ids */
    int      full;                  /* cap reached: stop */
    char     word[(TOK_MAX_WORD + 2) * 4 + 8];
    int      off[TOK_MAX_WORD + 2];
    size_t   wbytes;
    int      wchars;                /* characters seen, may exceed what is held */
    int      maxw;                  /* max_word_chars */
};

static void run_emit(struct tok_run *r, int id)
{
    if (r->n < r->cap)
        r->ids[r->n++] = id;
    if (r->n >= r->cap)
        r->full = 1;
}

/* WordPiece over the finished word, then clears it. */
static void wp_word(struct tok_run *r)
{
    const struct embed_tok *t = r->t;
    char key[sizeof(r->word) + 16];
    int32_t tmp[TOK_MAX_WORD + 1];
    int ntmp = 0, start = 0, i;

    if (r->wchars == 0)
        return;
    if (r->wchars > r->maxw) {
        run_emit(r, t->unk_id);
        goto done;
    }
    r->off[r->wchars] = (int)r->wbytes;
    while (start < r->wchars) {
        int end = r->wchars, found = -1;
        while (end > start) {
            size_t plen = 0, len = (size_t)(r->off[end] - r->off[start]);
            if (start > 0) {
                memcpy(key, t->prefix, t->prefix_len);
                plen = t->prefix_len;
            }
            memcpy(key + plen, r->word + r->off[start], len);
            found = tok_lookup(t, key, plen + len);
            if (found >= 0)
                break;
            end--;
        }
        if (found < 0) {
            ntmp = 0;
            tmp[ntmp++] = t->unk_id;
            break;
        }
        tmp[ntmp++] = found;
        start = end;
    }
    for (i = 0; i < ntmp; i++)
        run_emit(r, tmp[i]);
done:
    r->wchars = 0;
    r->wbytes = 0;
}

static void wp_add_char(struct tok_run *r, uint32_t c)
{
    if (r->wchars <= r->maxw) {
        r->off[r->wchars] = (int)r->wbytes;
        r->wbytes += utf8_encode(c, r->word + r->wbytes);
    }
    r->wchars++;
}

/* The BERT pre-tokenizer, one normalised character at a time. */
static void bert_pretok(struct tok_run *r, uint32_t c)
{
    if (tok_is_ws(c)) {
        wp_word(r);
    } else if (tok_is_punct(c)) {
        wp_word(r);
        wp_add_char(r, c);
        wp_word(r);
    } else {
        wp_add_char(r, c);
    }
}

/* Lower-casing as Rust's char::to_lowercase, which HF uses: utf8proc's
 * simple mapping, except for the one character whose lower case is two
 * (SpecialCasing.txt: U+0130 -> i + U+0307). */
static void bert_lower(struct tok_run *r, uint32_t c)
{
    if (!r->t->lowercase) {
        bert_pretok(r, c);
    } else if (c == 0x130) {
        bert_pretok(r, 'i');
        bert_pretok(r, 0x307);
    } else {
        bert_pretok(r, (uint32_t)utf8proc_tolower((utf8proc_int32_t)c));
    }
}

/* Accent stripping and lower-casing of one character, then on. */
static void bert_norm_tail(struct tok_run *r, uint32_t c)
{
    utf8proc_int32_t dec[32];
    utf8proc_ssize_t nd, i;
    int last = 0;

    if (!r->t->strip_accents) {
        bert_lower(r, c);
        return;
    }
    nd = utf8proc_decompose_char((utf8proc_int32_t)c, dec, 32, UTF8PROC_DECOMPOSE,
                                 &last);
    if (nd < 1 || nd > 32) {
        dec[0] = (utf8proc_int32_t)c;
        nd = 1;
    }
    for (i = 0; i < nd; i++)
        if (!tok_is_mn((uint32_t)dec[i]))
            bert_lower(r, (uint32_t)dec[i]);
}

static void bert_run(struct tok_run *r, const char *s, size_t len)
{
    const struct embed_tok *t = r->t;
    size_t i = 0;

    while (i < len && !r->full) {
        uint32_t c;
        i += utf8_decode(s + i, len - i, &c);
        if (t->clean_text) {
            if (tok_is_dropped(c))
                continue;
            if (tok_is_ws(c))
                c = ' ';
        }
        if (t->handle_chinese && tok_is_cjk(c)) {
            bert_norm_tail(r, ' ');
            bert_norm_tail(r, c);
            bert_norm_tail(r, ' ');
        } else {
            bert_norm_tail(r, c);
        }
    }
}

static int uni_add_norm(struct embed_tok *t, const cJSON *n, int depth, char *err,
                        size_t errlen);

static int tok_load_normalizer(struct embed_tok *t, const cJSON *norm,
                               char *err, size_t errlen)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(norm, "type");
    const char *ty = cJSON_IsString(type) ? type->valuestring : "";

    if (!norm || cJSON_IsNull(norm))
        return 0;
    if (strcmp(ty, "BertNormalizer") == 0) {
        const cJSON *sa = cJSON_GetObjectItemCaseSensitive(norm, "strip_accents");
        t->clean_text = json_bool(norm, "clean_text", 1);
        t->handle_chinese = json_bool(norm, "handle_chinese_chars", 1);
        t->lowercase = json_bool(norm, "lowercase", 1);
        t->strip_accents = cJSON_IsBool(sa) ? cJSON_IsTrue(sa) : t->lowercase;
        return 0;
    }
    if (t->kind == EMBED_TOK_UNIGRAM)
        return uni_add_norm(t, norm, 0, err, errlen);
    embed_errf(err, errlen, "unsupported normalizer '%.40s'", ty);
    return -1;
}

/* ---- Unigram -------------------------------------------------------------- */

/*
 * SentencePiece Unigram as in HF's models/unigram (XLM-R: 250,002 pieces,
 * <s>=0 <pad>=1 </s>=2 <unk>=3).
 *
 * The steps are Hugging Face's, in its order: the input (invalid UTF-8 as
 * U+FFFD) goes through the normalizer steps of tokenizer.json, then the
 * Metaspace pre-tokenizer, then Viterbi on each word.
 *
 * Normalizer: a Sequence (flattened) of Precompiled (SentencePiece's
 * charsmap, charsmap.h), Replace (a literal String, or the Regex " {2,}"
 * that XLM-R uses to squeeze space runs; other regexes are refused),
 * Strip, and NFC/NFD/NFKC/NFKD (utf8proc). Anything else is refused at
 * load rather than silently tokenized differently.
 *
 * Bounded work: a leading Precompiled step (and a space squeeze right
 * after it) runs streaming, one grapheme at a time, and stops once it has
 * produced `limit` bytes (32 per wanted id: no piece-based tokenizer makes
 * ids from fewer); what it deletes or squeezes does not count, so 1 MB of
 * spaces before a word costs a scan, not a buffer. Later steps work on
 * that bounded text. The cut only changes ids past the ones wanted.
 *
 * Metaspace {replacement, prepend_scheme / add_prefix_space, split}: every
 * ' ' becomes the replacement (U+2581); it is prepended unless the text
 * starts with one ("first" is the same as "always" here: we never split
 * on added tokens); with split, a word starts at each replacement (HF's
 * MergedWithNext), so "a  b" without a squeeze gives "▁a" "▁" "▁b" and a
 * trailing space gives a last "▁" word, as HF does.
 *
 * Segmentation is Viterbi over the piece scores (log-probs): best[i] = the
 * best score of a segmentation of the first i characters; a single
 * character not in the vocab costs min_score - 10 (HF's unk penalty) and
 * becomes unk_id; consecutive unks are merged into one, as HF does.
 * With byte_fallback, an unknown character becomes its UTF-8 bytes as
 * <0xNN> pieces instead.
 */
static int tok_load_unigram(struct embed_tok *t, const cJSON *model,
                            char *err, size_t errlen)
{
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_id");
    const cJSON *e;
    int n = cJSON_GetArraySize(vocab), id = 0;

    if (!cJSON_IsArray(vocab) || n < 1 || n > TOK_MAX_VOCAB) {
        embed_errf(err, errlen, "Unigram model has no vocab array");
        return -1;
    }
    if (tok_alloc_vocab(t, n, 1) != 0) {
        embed_errf(err, errlen, "out of memory");
        return -1;
    }
    t->min_score = 0.0f;
    cJSON_ArrayForEach(e, vocab) {
        const cJSON *p = cJSON_GetArrayItem(e, 0), *s = cJSON_GetArrayItem(e, 1);
        size_t i, chars = 0;

        /* finite as a float too: -1e39 is a double but -inf as a float,
         * and an infinite score leaves Viterbi with no path (fuzz_tokenizer) */
        if (!cJSON_IsString(p) || !cJSON_IsNumber(s) || !isfinite((float)s->valuedouble)) {
            embed_errf(err, errlen, "Unigram vocab entry %d is not [piece, score]", id);
            return -1;
        }
        t->pieces[id] = strdup(p->valuestring);
        if (!t->pieces[id]) {
            embed_errf(err, errlen, "out of memory");
            return -1;
        }
        t->scores[id] = (float)s->valuedouble;
        if (t->scores[id] < t->min_score)
            t->min_score = t->scores[id];
        for (i = 0; p->valuestring[i]; i++)
            if (((unsigned char)p->valuestring[i] & 0xc0) != 0x80)
                chars++;
        if ((int)chars > t->max_piece_chars)
            t->max_piece_chars = (int)chars;
        id++;
    }
    if (tok_build_hash(t, err, errlen) != 0)
        return -1;
    if (!json_id(unk, &t->unk_id) || t->unk_id >= t->n_ids) {
        embed_errf(err, errlen, "Unigram unk_id missing or outside the vocab");
        return -1;
    }
    t->byte_fallback = json_bool(model, "byte_fallback", 0);
    if (t->max_piece_chars > 64)
        t->max_piece_chars = 64;
    return 0;
}

/* A JSON string member, or NULL. */
static const char *json_str(const cJSON *o, const char *key)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(j) ? j->valuestring : NULL;
}

/* Appends the normalizer n (a Sequence is flattened) to t->norm. */
static int uni_add_norm(struct embed_tok *t, const cJSON *n, int depth, char *err,
                        size_t errlen)
{
    const char *ty = json_str(n, "type");
    struct tok_norm *o;

    if (!n || cJSON_IsNull(n))
        return 0;
    if (!ty) {
        embed_errf(err, errlen, "normalizer without a type");
        return -1;
    }
    if (strcmp(ty, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(n, "normalizers"), *e;
        if (!cJSON_IsArray(list) || depth >= 4) {
            embed_errf(err, errlen, "normalizer Sequence: bad or too deep");
            return -1;
        }
        cJSON_ArrayForEach(e, list)
            if (uni_add_norm(t, e, depth + 1, err, errlen) != 0)
                return -1;
        return 0;
    }
    if (t->n_norm >= TOK_MAX_NORM) {
        embed_errf(err, errlen, "more than %d normalizer steps", TOK_MAX_NORM);
        return -1;
    }
    o = &t->norm[t->n_norm];
    if (strcmp(ty, "Precompiled") == 0) {
        const char *b64 = json_str(n, "precompiled_charsmap");
        if (!b64) {
            embed_errf(err, errlen, "Precompiled normalizer without a precompiled_charsmap");
            return -1;
        }
        o->map = embed_charsmap_from_base64(b64, err, errlen);
        if (!o->map)
            return -1;
        o->kind = NORM_PRECOMPILED;
    } else if (strcmp(ty, "Replace") == 0) {
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(n, "pattern");
        const char *lit = json_str(pat, "String"), *re = json_str(pat, "Regex");
        const char *with = json_str(n, "content");
        if (!with || (!lit && !re) || (lit && !*lit)) {
            embed_errf(err, errlen, "Replace normalizer: bad pattern or content");
            return -1;
        }
        if (re && strcmp(re, " {2,}") != 0) {
            embed_errf(err, errlen, "Replace normalizer: unsupported regex '%.40s' "
                       "(only \" {2,}\")", re);
            return -1;
        }
        o->kind = lit ? NORM_REPLACE : NORM_SQUEEZE;
        o->pat = lit ? strdup(lit) : NULL;
        o->with = strdup(with);
        if ((lit && !o->pat) || !o->with) {
            embed_errf(err, errlen, "out of memory");
            return -1;
        }
    } else if (strcmp(ty, "Strip") == 0) {
        o->kind = NORM_STRIP;
        o->left = json_bool(n, "strip_left", 0);
        o->right = json_bool(n, "strip_right", 0);
    } else if (strcmp(ty, "NFC") == 0) {
        o->kind = NORM_NFC;
    } else if (strcmp(ty, "NFD") == 0) {
        o->kind = NORM_NFD;
    } else if (strcmp(ty, "NFKC") == 0) {
        o->kind = NORM_NFKC;
    } else if (strcmp(ty, "NFKD") == 0) {
        o->kind = NORM_NFKD;
    } else {
        embed_errf(err, errlen, "unsupported normalizer '%.40s' for a Unigram model", ty);
        return -1;
    }
    t->n_norm++;
    return 0;
}

static int uni_load_metaspace(struct embed_tok *t, const cJSON *pre, char *err,
                              size_t errlen)
{
    const char *ty = json_str(pre, "type"), *rep = json_str(pre, "replacement");
    const char *scheme = json_str(pre, "prepend_scheme");

    if (!ty || strcmp(ty, "Metaspace") != 0) {
        embed_errf(err, errlen, "Unigram needs pre_tokenizer Metaspace, not '%.40s'",
                   ty ? ty : "none");
        return -1;
    }
    if (!rep)
        rep = "\xe2\x96\x81";
    t->meta_len = strlen(rep);
    if (t->meta_len == 0 || utf8_valid_prefix(rep, t->meta_len) != t->meta_len) {
        embed_errf(err, errlen, "Metaspace replacement must be one character");
        return -1;
    }
    memcpy(t->meta, rep, t->meta_len + 1);
    if (scheme) {
        if (strcmp(scheme, "always") != 0 && strcmp(scheme, "first") != 0 &&
            strcmp(scheme, "never") != 0) {
            embed_errf(err, errlen, "Metaspace: unknown prepend_scheme '%.20s'", scheme);
            return -1;
        }
        t->meta_prepend = strcmp(scheme, "never") != 0;
    } else {
        t->meta_prepend = json_bool(pre, "add_prefix_space", 1);
    }
    t->meta_split = json_bool(pre, "split", 1);
    return 0;
}

/* Viterbi over one word (UTF-8, with U+2581 already in place). */
static int uni_word(struct tok_run *r, const char *w, size_t wlen)
{
    const struct embed_tok *t = r->t;
    int nch = 0, i, j, rc = -1;
    int *off = NULL, *back_id = NULL, *back_pos = NULL, *out = NULL;
    double *best = NULL;
    double unk_score = (double)t->min_score - 10.0;
    size_t k;

    for (k = 0; k < wlen; k++)
        if (((unsigned char)w[k] & 0xc0) != 0x80)
            nch++;
    if (nch == 0)
        return 0;
    off = malloc(sizeof(int) * (size_t)(nch + 1));
    back_id = malloc(sizeof(int) * (size_t)(nch + 1));
    back_pos = malloc(sizeof(int) * (size_t)(nch + 1));
    out = malloc(sizeof(int) * (size_t)(nch + 1));
    best = malloc(sizeof(double) * (size_t)(nch + 1));
    if (!off || !back_id || !back_pos || !out || !best)
        goto out;
    for (k = 0, i = 0; k < wlen; k++)
        if (((unsigned char)w[k] & 0xc0) != 0x80)
            off[i++] = (int)k;
    off[nch] = (int)wlen;
    best[0] = 0.0;
    for (i = 1; i <= nch; i++)
        best[i] = -INFINITY;
    for (i = 0; i < nch; i++) {
        int has_single = 0;
        if (best[i] == -INFINITY)
            continue;
        for (j = i + 1; j <= nch && j - i <= t->max_piece_chars; j++) {
            size_t len = (size_t)(off[j] - off[i]);
            int id;
            if (len > TOK_MAX_PIECE)
                break;
            id = tok_lookup(t, w + off[i], len);
            if (id < 0)
                continue;
            if (j == i + 1)
                has_single = 1;
            if (best[i] + t->scores[id] > best[j]) {
                best[j] = best[i] + t->scores[id];
                back_id[j] = id;
                back_pos[j] = i;
            }
        }
        if (!has_single && best[i] + unk_score > best[i + 1]) {
            best[i + 1] = best[i] + unk_score;
            back_id[i + 1] = -1;           /* unknown character */
            back_pos[i + 1] = i;
        }
    }
    /* Every position is reachable (a character without a piece costs the
     * finite unk_score); if that ever fails, one unknown, not a walk
     * through unset back-pointers. */
    if (best[nch] == -INFINITY) {
        run_emit(r, t->unk_id);
        rc = 0;
        goto out;
    }
    /* Walk back, then emit forwards, merging runs of unknowns. */
    {
        int n = 0, prev_unk = 0;
        for (i = nch; i > 0; i = back_pos[i])
            out[n++] = i;
        while (n-- > 0) {
            int end = out[n], start = back_pos[end], id = back_id[end];
            if (id >= 0) {
                run_emit(r, id);
                prev_unk = 0;
            } else if (t->byte_fallback) {
                int b;
                for (b = off[start]; b < off[end]; b++) {
                    char name[8];
                    int bid;
                    snprintf(name, sizeof(name), "<0x%02X>", (unsigned char)w[b]);
                    bid = tok_lookup(t, name, strlen(name));
                    run_emit(r, bid >= 0 ? bid : t->unk_id);
                }
            } else if (!prev_unk) {
                run_emit(r, t->unk_id);
                prev_unk = 1;
            }
            if (r->full)
                break;
        }
    }
    rc = 0;
out:
    free(off); free(back_id); free(back_pos); free(out); free(best);
    return rc;
}

/* Squeezes the space runs in b->p[from..n) (b->p[from-1] counts too). */
static void squeeze_spaces(struct buf *b, size_t from)
{
    size_t w = from, i;

    for (i = from; i < b->n; i++) {
        if (b->p[i] == ' ' && w > 0 && b->p[w - 1] == ' ')
            continue;
        b->p[w++] = b->p[i];
    }
    buf_truncate(b, w);
}

static int is_ws_at(const char *s, size_t n, size_t *k)
{
    uint32_t c;

    *k = utf8_decode(s, n, &c);
    return tok_is_ws(c);
}

/* One normalizer step over in[0..n), appended to out. */
static void uni_norm_step(const struct tok_norm *o, const char *in, size_t n,
                          struct buf *out)
{
    size_t i = 0, k;

    switch (o->kind) {
    case NORM_PRECOMPILED: {
        struct embed_cpread rd;
        embed_cpread_init(&rd, in, n, NULL, 0);
        while (!out->err && embed_charsmap_step(o->map, &rd, out))
            ;
        break;
    }
    case NORM_SQUEEZE:
        while (i < n) {
            for (k = i; k < n && in[k] == ' '; k++)
                ;
            if (k - i >= 2)
                buf_adds(out, o->with);
            else
                buf_add(out, in + i, k > i ? k - i : 1);
            i = k > i ? k : i + 1;
        }
        break;
    case NORM_REPLACE: {
        size_t plen = strlen(o->pat);
        while (i < n) {
            const char *hit = memmem(in + i, n - i, o->pat, plen);
            size_t end = hit ? (size_t)(hit - in) : n;
            buf_add(out, in + i, end - i);
            if (hit)
                buf_adds(out, o->with);
            i = hit ? end + plen : n;
        }
        break;
    }
    case NORM_STRIP: {
        size_t end = n, last = 0;
        while (o->left && i < n && is_ws_at(in + i, n - i, &k))
            i += k;
        if (o->right) {
            for (end = i, k = i; k < n; ) {
                size_t step;
                int ws = is_ws_at(in + k, n - k, &step);
                k += step;
                if (!ws)
                    last = k;
            }
            end = last > i ? last : i;
        }
        buf_add(out, in + i, end - i);
        break;
    }
    default: {                               /* the Unicode normal forms */
        utf8proc_uint8_t *nf = NULL;
        int flags = UTF8PROC_STABLE |
            (o->kind == NORM_NFC || o->kind == NORM_NFKC ? UTF8PROC_COMPOSE
                                                         : UTF8PROC_DECOMPOSE) |
            (o->kind == NORM_NFKC || o->kind == NORM_NFKD ? UTF8PROC_COMPAT : 0);
        utf8proc_ssize_t m = n ? utf8proc_map((const utf8proc_uint8_t *)in,
                                              (utf8proc_ssize_t)n, &nf, flags) : 0;
        if (m < 0)
            out->err = BUF_NOMEM;            /* the input is valid UTF-8 */
        else
            buf_add(out, nf, (size_t)m);
        free(nf);
    }
    }
}

/* Metaspace over the normalised p[0..n), each word into Viterbi. */
static int uni_words(struct tok_run *r, const char *p, size_t n)
{
    const struct embed_tok *t = r->t;
    struct buf word = BUF_INIT;
    size_t k;
    int rc = -1;

    if (n > 0 && t->meta_prepend && p[0] != ' ' &&
        !(n >= t->meta_len && memcmp(p, t->meta, t->meta_len) == 0))
        buf_add(&word, t->meta, t->meta_len);
    for (k = 0; k < n && !r->full; k++) {
        int is_meta = p[k] == ' ' ||
                      (n - k >= t->meta_len && memcmp(p + k, t->meta, t->meta_len) == 0);
        if (!is_meta) {
            buf_addc(&word, p[k]);
            continue;
        }
        if (t->meta_split && word.n > 0) {
            if (word.err || uni_word(r, word.p, word.n) != 0)
                goto out;
            buf_reset(&word);
        }
        buf_add(&word, t->meta, t->meta_len);
        if (p[k] != ' ')
            k += t->meta_len - 1;
    }
    if (word.err || (!r->full && word.n > 0 && uni_word(r, word.p, word.n) != 0))
        goto out;
    rc = 0;
out:
    buf_release(&word);
    return rc;
}

static int uni_run(struct tok_run *r, const char *pre, size_t plen,
                   const char *s, size_t len)
{
    const struct embed_tok *t = r->t;
    struct buf a = BUF_INIT, b = BUF_INIT, tmp;
    struct embed_cpread rd;
    const struct embed_charsmap *map0 = NULL;
    size_t limit = (size_t)r->cap * 32 + 64;
    int first = 0, squeeze0 = 0, i, rc = -1;

    /* The streaming head: a leading charsmap, and a " " squeeze after it. */
    if (t->n_norm > 0 && t->norm[0].kind == NORM_PRECOMPILED)
        map0 = t->norm[first++].map;
    if (first < t->n_norm && t->norm[first].kind == NORM_SQUEEZE &&
        strcmp(t->norm[first].with, " ") == 0) {
        squeeze0 = 1;
        first++;
    }
    embed_cpread_init(&rd, pre, plen, s, len);
    while (a.n < limit && !a.err) {
        size_t at = a.n;
        if (!embed_charsmap_step(map0, &rd, &a))
            break;
        if (squeeze0)
            squeeze_spaces(&a, at);
    }
    for (i = first; i < t->n_norm && !a.err; i++) {
        buf_reset(&b);
        uni_norm_step(&t->norm[i], a.p, a.n, &b);
        tmp = a;
        a = b;
        b = tmp;
    }
    if (a.err || b.err)
        goto out;
    rc = uni_words(r, a.p, a.n);
out:
    buf_release(&a);
    buf_release(&b);
    return rc;
}

/* ---- encode ------------------------------------------------------------- */

int embed_tok_encode2(const struct embed_tok *t, const char *prefix,
                      size_t plen, const char *text, size_t len,
                      int32_t *ids, int max_ids)
{
    struct tok_run *r;
    int i, n;

    if (max_ids < t->n_pre + t->n_post + 1)
        return -1;
    r = malloc(sizeof(*r));
    if (!r)
        return -1;
    r->t = t;
    r->ids = ids + t->n_pre;
    r->n = 0;
    r->cap = max_ids - t->n_pre - t->n_post;
    r->full = 0;
    r->wbytes = 0;
    r->wchars = 0;
    r->maxw = t->max_word_chars > 0 ? t->max_word_chars : TOK_WORD_CHARS;
    if (r->maxw > TOK_MAX_WORD)
        r->maxw = TOK_MAX_WORD;
    if (!prefix)
        plen = 0;
    if (!text)
        len = 0;
    if (t->kind == EMBED_TOK_WORDPIECE) {
        /* the stream simply runs on from the prefix into the text */
        bert_run(r, prefix ? prefix : "", plen);
        bert_run(r, text ? text : "", len);
        if (!r->full)
            wp_word(r);
    } else if (uni_run(r, prefix ? prefix : "", plen, text ? text : "", len) != 0) {
        free(r);
        return -1;
    }
    for (i = 0; i < t->n_pre; i++)
        ids[i] = t->pre_ids[i];
    n = t->n_pre + r->n;
    for (i = 0; i < t->n_post; i++)
        ids[n++] = t->post_ids[i];
    free(r);
    return n;
}

int embed_tok_encode(const struct embed_tok *t, const char *text, size_t len,
                     int32_t *ids, int max_ids)
{
    return embed_tok_encode2(t, NULL, 0, text, len, ids, max_ids);
}
