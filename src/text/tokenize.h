/*
 * tokenize.h: cairn's word splitter, shared by the FTS5 index and queries.
 *
 * Unicode normalisation (NFKC) and case folding with utf8proc; words split
 * by Unicode category; CJK runs as overlapping character bigrams (a lone
 * CJK character as itself); English Snowball stemming (libstemmer);
 * numbers, versions, file names and code identifiers (snake_case,
 * camelCase, v1.2.3, src/store.c) kept whole and also split into parts
 * (parts are emitted as FTS5 colocated tokens, same position).
 */
#ifndef CAIRN_TOKENIZE_H
#define CAIRN_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

/* Called for each token: the token text (normalised, folded, stemmed; not
 * NUL-terminated), the byte span [start, end) in the input it came from,
 * and colocated=1 when it sits at the same position as the token before
 * (a part of a compound). Returns 0 to go on, non-zero to stop (returned). */
typedef int (*text_token_cb)(void *arg, const char *tok, size_t n,
                             size_t start, size_t end, int colocated);

/* Tokenizes s[0..n). for_query=1 emits only whole tokens, no colocated
 * parts, as FTS5 does for FTS5_TOKENIZE_QUERY. */
int text_tokenize(const char *s, size_t n, int for_query,
                  text_token_cb cb, void *arg);

/* The number of whole tokens text_tokenize emits for s[0..n) (its
 * positions: colocated parts not counted), the length BM25 normalises by.
 * Counted without the stemmer, which changes a token's text, never how
 * many there are. -1 if out of memory. */
int text_count_words(const char *s, size_t n);

/* 1 if tok (as produced by text_tokenize) is an English or Chinese stop
 * word that carries no topic ("the", "what", "did", "我", "的"...). */
int text_is_stopword(const char *tok, size_t n);

/* 1 if tok (as text_tokenize produces it) is an everyday English word
 * that makes a poor page name ("design", "notes", "memory"): common.c,
 * for the gate of vault notes. */
int text_is_common_word(const char *tok, size_t n);

/* A page's name as the vault index keeps it (vault_docs.names): its
 * whole tokens apart by spaces, then a line break, appended to b (a
 * struct buf, util/buf.h); nothing for a name with no token. */
struct buf;
void text_name_tokens(const char *s, size_t n, struct buf *b);

/* The FTS5 tokenizer "cairn" (the same tokenization as text_tokenize),
 * which store_fts_register (store/fts.c) registers on every connection. */
fts5_tokenizer *text_fts_tokenizer(void);

/* A listener beside the FTS5 tokenizer: while cb is set, every token it
 * emits for a document (not a query) goes to cb too, as text_tokenize(s,
 * n, 0, cb, arg) would give it, before FTS5 gets it (cb's return value is
 * ignored). store/keep.c reads a new message's words from the
 * index's own pass instead of tokenizing it a second time. Given as the
 * tokenizer's user data (store_fts_register_tap), it must outlive the
 * connection. */
struct text_toks;
struct text_fts_tap {
    text_token_cb cb;
    void         *arg;
    /* set: a document whose bytes are rtext[0..rn) gets rtoks (text_record
     * made them from those bytes) instead of a pass of its own */
    const char             *rtext;
    size_t                  rn;
    const struct text_toks *rtoks;
};

/* A document's tokens as text_tokenize(s, n, 0, ...) gives them, recorded
 * to be given again (tokens: their text at b + off), and the count
 * text_count_words gives (whole tokens, not the colocated parts). The
 * write path records a message once for its length and hands the record
 * to the FTS5 tokenizer (text_fts_tap) instead of a second pass. */
struct text_tok {
    uint32_t off, n, start, end, colocated;
};
struct text_toks {
    struct text_tok *v;
    size_t           n, cap;
    char            *b;
    size_t           nb, capb;
    int              words;
};
/* A document of more tokens than this is not recorded (text_record -1:
 * the caller counts and the index tokenizes as before), so that a record
 * stays under ~6 MB. */
#define TEXT_TOKS_MAX (256 * 1024)
void text_toks_free(struct text_toks *t);

/* A tokenizer kept between documents, with a stem cache as the FTS5
 * tokenizer's (the same tokens, test_tokenize). NULL if out of memory. */
struct text_tokenizer;
struct text_tokenizer *text_tokenizer_new(void);
void text_tokenizer_free(struct text_tokenizer *t);
/* Records s[0..n) into out (emptied first): 0, or -1 when out of memory,
 * past TEXT_TOKS_MAX tokens or past 4 GB (out is then unusable). */
int text_record(struct text_tokenizer *t, const char *s, size_t n, struct text_toks *out);

#endif
