/*
 * tokcount.h: the budget token counter.
 *
 * A budget is counted in these tokens (docs/TOKENS.md says how close they
 * are to common BPE tokenizers on English, code, Chinese and seven other
 * languages). It must never under-count, in any language, and it must be
 * fast: recall counts every candidate.
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
