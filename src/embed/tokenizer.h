/*
 * tokenizer.h: text -> token ids, from a Hugging Face tokenizer.json.
 *
 * Supported (what the sentence models cairn targets use):
 *
 *   WordPiece (bge-small, all-MiniLM):
 *     normalizer     BertNormalizer {clean_text, handle_chinese_chars,
 *                    strip_accents (null = follow lowercase), lowercase}
 *     pre_tokenizer  BertPreTokenizer (split on whitespace, every
 *                    punctuation character is its own word)
 *     model          WordPiece {vocab, unk_token, continuing_subword_prefix,
 *                    max_input_chars_per_word}: greedy longest match; a
 *                    word with no full cover, or longer than the limit,
 *                    becomes one [UNK]
 *   Unigram (multilingual-e5-small, paraphrase-multilingual-MiniLM; XLM-R):
 *     normalizer     Sequence of Precompiled (SentencePiece's charsmap,
 *                    charsmap.h), Replace (String, or Regex " {2,}"),
 *                    Strip, NFC/NFD/NFKC/NFKD; anything else is refused
 *     pre_tokenizer  Metaspace {replacement, prepend_scheme or
 *                    add_prefix_space, split}
 *     model          Unigram {vocab [piece, score], unk_id, byte_fallback}:
 *                    Viterbi, unknowns merged; see tokenizer.c
 *
 *   post_processor   TemplateProcessing / BertProcessing / RobertaProcessing:
 *                    the special ids before and after the sequence
 *   truncation       max_length (also capped by the caller's limit)
 *
 * Not supported, on purpose: added-token matching inside the input text
 * (HF turns a literal "[SEP]" typed by the user into the special token; we
 * tokenize it as text, which is safer for stored memories) and pairs.
 *
 * A loaded tokenizer is read-only: embed_tok_encode may run on several
 * threads at once. Input may be any bytes: invalid UTF-8 decodes as
 * U+FFFD; work per call is bounded by the ids wanted, not by the input
 * length, because tokenizing stops once the ids are full (WordPiece
 * streams; Unigram normalises at most 32 output bytes per wanted id, see
 * tokenizer.c).
 */
#ifndef CAIRN_EMBED_TOKENIZER_H
#define CAIRN_EMBED_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

enum embed_tok_kind { EMBED_TOK_WORDPIECE = 1, EMBED_TOK_UNIGRAM };

struct embed_tok;

/* Loads a tokenizer.json file / text. NULL with a message in err on
 * failure. Free with embed_tok_free. */
struct embed_tok *embed_tok_load(const char *path, char *err, size_t errlen);
struct embed_tok *embed_tok_load_mem(const char *json, size_t len, char *err,
                                     size_t errlen);
void embed_tok_free(struct embed_tok *t);

int embed_tok_kind(const struct embed_tok *t);
/* Number of ids (largest id + 1). */
int embed_tok_vocab_size(const struct embed_tok *t);
/* The truncation max_length of tokenizer.json, or 0 if none. */
int embed_tok_trunc_len(const struct embed_tok *t);
/* The id of a vocabulary entry, or -1. */
int embed_tok_id(const struct embed_tok *t, const char *piece);
/* The text of id, or NULL. */
const char *embed_tok_piece(const struct embed_tok *t, int id);

/*
 * Tokenizes text[0..len) into ids[], special tokens included, truncating
 * the sequence so that the total is at most max_ids (which must leave room
 * for the specials: max_ids >= 2 or so). Returns the number of ids written
 * (>= number of specials), or -1 if max_ids is too small or on no memory.
 */
int embed_tok_encode(const struct embed_tok *t, const char *text, size_t len,
                     int32_t *ids, int max_ids);
/* The same for the text prefix[0..plen) followed by text[0..len) (e.g.
 * e5's "query: "), without copying either. */
int embed_tok_encode2(const struct embed_tok *t, const char *prefix,
                      size_t plen, const char *text, size_t len,
                      int32_t *ids, int max_ids);

#endif
