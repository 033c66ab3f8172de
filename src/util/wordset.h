/*
 * wordset.h: a fixed set of short strings (index tokens), each with its
 * index in the order added, found by hash (FNV-1a, open addressing). The
 * write paths that keep per-word state (store/tier_keep.c, store/post.c)
 * look every token of a new message up in one, and count the set's words
 * the message holds in it (the tally: wordset_count, one pass of the
 * tokens for both, store/keep.c).
 */
#ifndef CAIRN_UTIL_WORDSET_H
#define CAIRN_UTIL_WORDSET_H

#include <stddef.h>
#include <stdint.h>

struct wordset {
    char     *arena;             /* the words' bytes, back to back */
    size_t    used, bytes;
    size_t   *off, *len;         /* word i: arena + off[i], len[i] bytes */
    int32_t  *slot;              /* index + 1, 0 empty */
    size_t    mask;
    int       n, max;
    /* the tally of the message being read: word i's count in it (0: not
     * in it), and the words it holds, in the order met */
    int32_t  *tf;
    int      *in;
    int       nin;
};

/* Room for max words of bytes bytes in all: 0, or -1 (out of memory or
 * max out of range; s is then empty, and wordset_free is still fine). */
int wordset_init(struct wordset *s, int64_t max, size_t bytes);
void wordset_free(struct wordset *s);
/* Word t[0..n)'s index, or -1. */
int wordset_find(const struct wordset *s, const char *t, size_t n);
/* Adds t[0..n): its index (s->n - 1 after), or -1 when it is there
 * already or there is no room. */
int wordset_add(struct wordset *s, const char *t, size_t n);
/* Word i's bytes (*n of them). */
const char *wordset_word(const struct wordset *s, int i, size_t *n);

/* A text_token_cb (text/tokenize.h; arg: the set): a token of the set
 * counted in the tally (up to 65535, where cairn_tf saturates too);
 * returns 0. wordset_count_clear empties the tally for the next message
 * (the words in s->in[0..nin) had counts s->tf[...]). */
int wordset_count(void *arg, const char *tok, size_t n, size_t start, size_t end, int coloc);
void wordset_count_clear(struct wordset *s);

#endif
