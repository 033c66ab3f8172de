/*
 * tokcount.h: the budget token counter.
 *
 * A budget is counted in these tokens (docs/TOKENS.md says how close they
 * are to a common BPE tokenizer on English, code and Chinese). It must
 * never under-count CJK text, and it must be fast: recall counts every
 * candidate.
 */
#ifndef CAIRN_TOKCOUNT_H
#define CAIRN_TOKCOUNT_H

#include <stddef.h>

/* Tokens that s[0..n) costs. */
int text_count_tokens(const char *s, size_t n);

/* The longest prefix of s[0..n) that costs at most max_tokens tokens,
 * ending on a UTF-8 boundary (and preferably a word boundary); returns
 * its length in bytes. */
size_t text_prefix_within(const char *s, size_t n, int max_tokens);

#endif
