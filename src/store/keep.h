/*
 * keep.h: a message's words for the store's two keepers, the term tiers
 * (store/tier_keep.c) and the packed postings (store/post.c), from one
 * pass of its tokens (store/keep.c). SQLite stores only; both keepers
 * decide alone whether they keep anything.
 */
#ifndef CAIRN_STORE_KEEP_H
#define CAIRN_STORE_KEEP_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

struct cairn;
struct text_toks;

/* The FTS5 tokenizer's document to replay (text_fts_tap): text[0..n)
 * gets rec, text's tokens as text_record made them, instead of a pass of
 * its own, until the next call (rec NULL: none). */
void store_keep_replay(struct cairn *h, const char *text, size_t n, const struct text_toks *rec);
/* Message msg (session sess, ntok index tokens) inserted: its FTS row
 * (store_fts_add with *ins_f), and both keepers' counts from the tokens
 * the FTS5 tokenizer indexes, handed on as it goes (text_fts_tap). rec
 * (not NULL): text's tokens as text_record made them, which the tokenizer
 * replays instead of a pass of its own. */
int store_keep_insert(struct cairn *h, sqlite3_stmt **ins_f, int64_t sess, int64_t msg,
                      const char *text, size_t n, int ntok, const struct text_toks *rec);
/* Message msg's text rewritten in place (its FTS row already is): both
 * keepers count it again, from rec when not NULL (text's tokens as
 * text_record made them), else from one text_tokenize. */
int store_keep_rewrite(struct cairn *h, int64_t sess, int64_t msg, const char *text, size_t n,
                       int ntok, const struct text_toks *rec);

#endif
