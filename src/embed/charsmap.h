/*
 * charsmap.h: SentencePiece's precompiled character map, applied the way
 * Hugging Face tokenizers' `Precompiled` normalizer applies it.
 *
 * A SentencePiece model (and the tokenizer.json made from it: XLM-R,
 * multilingual-e5, paraphrase-multilingual-MiniLM) carries its normaliser
 * (nmt_nfkc: NFKC plus folding of spaces and removal of control
 * characters) as one binary blob, base64 in tokenizer.json:
 *
 *   u32 LE   trie_size            bytes of the trie that follows (x4)
 *   u32 LE   units[trie_size/4]   a darts-clone double-array trie over the
 *                                 UTF-8 bytes of the source strings
 *   bytes    pool                 the replacement strings, each ending in
 *                                 NUL; a trie value is a byte offset here
 *
 * A unit holds: label (bits 0-7, bit 31 set on value units so they never
 * match a label), has_leaf (bit 8), and the offset to its children (bits
 * 10-31, shifted left by 8 more when bit 9 is set). From a node at pos
 * with unit u the child for byte c is at pos ^ offset(u) ^ c, and a node
 * with has_leaf keeps its value (bits 0-30) at pos ^ offset(u).
 *
 * Hugging Face cuts the text into extended grapheme clusters; a cluster
 * shorter than 6 bytes is looked up whole, and if some prefix of it is a
 * key, the whole cluster becomes the replacement of the SHORTEST such
 * prefix (the first hit of a common-prefix search; SentencePiece itself
 * takes the longest and goes on after it). Otherwise, and for longer
 * clusters, each character is looked up on its own the same way and kept
 * when there is no hit. We do the same; graphemes come from utf8proc.
 *
 * Loading checks the sizes and that the pool is UTF-8; the trie is read
 * lazily, so every position and value is bounds-checked at lookup: a
 * corrupt trie yields "no match" (or a refusal at load), never an
 * out-of-bounds read. A loaded map is read-only and thread-safe.
 */
#ifndef CAIRN_EMBED_CHARSMAP_H
#define CAIRN_EMBED_CHARSMAP_H

#include <stddef.h>
#include <stdint.h>

struct buf;
struct embed_charsmap;

/* Parses a raw blob (copied). NULL with a message in err on failure. */
struct embed_charsmap *embed_charsmap_new(const void *blob, size_t len,
                                          char *err, size_t errlen);
/* The same from its base64 text (tokenizer.json's precompiled_charsmap). */
struct embed_charsmap *embed_charsmap_from_base64(const char *b64, char *err,
                                                  size_t errlen);
void embed_charsmap_free(struct embed_charsmap *m);

/* The replacement for the shortest key that is a prefix of s[0..n), its
 * length in *rlen; NULL when no key is a prefix. */
const char *embed_charsmap_match(const struct embed_charsmap *m, const char *s,
                                 size_t n, size_t *rlen);

/*
 * Code points of up to two byte strings read as one (e5's "query: " and
 * the text), invalid UTF-8 read as U+FFFD (one per bad byte), with the
 * grapheme-cluster state. Set up with embed_cpread_init.
 */
struct embed_cpread {
    const char *s[2];
    size_t      n[2];
    size_t      i;           /* byte position in s[seg] */
    int         seg;
    int         have;        /* `next` holds the following code point */
    uint32_t    next;
    int32_t     gstate;      /* utf8proc grapheme-break state */
};
void embed_cpread_init(struct embed_cpread *r, const char *a, size_t an,
                       const char *b, size_t bn);

/* Reads one grapheme cluster from r and appends its normalised form to out
 * (m NULL: the cluster unchanged). Returns 1, or 0 at the end of input;
 * out->err on failure. */
int embed_charsmap_step(const struct embed_charsmap *m, struct embed_cpread *r,
                        struct buf *out);

#endif
