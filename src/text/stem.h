/*
 * stem.h: English Snowball stemming, one word at a time.
 *
 * Built with CAIRN_STEM_EN (the Makefile sets it when Debian's archive
 * libstemmer.a is installed, libstemmer-dev), it calls the English
 * UTF-8 stemmer of that archive directly, so the link takes that one
 * language's objects. libstemmer's own entry, sb_stemmer_new, holds a
 * table of every language's functions, which pulls all 30 of them in:
 * libstemmer.so is 10,821 pointers that every process relocates at
 * start (82 pages copied on write), ~2.6 ms of a prompt hook on a
 * paravirtualised host (bench/README.md, "What a process pays before its
 * first query"). Without it, the same through libstemmer's public API.
 */
#ifndef CAIRN_TEXT_STEM_H
#define CAIRN_TEXT_STEM_H

struct stemmer;

/* NULL: no memory. */
struct stemmer *stemmer_new(void);
/* The stem of the n bytes at word, NUL-terminated, its length in *m;
 * valid until the next call. NULL: no memory, or the stemmer failed. */
const char *stemmer_stem(struct stemmer *s, const char *word, int n, int *m);
void stemmer_free(struct stemmer *s);

#endif
