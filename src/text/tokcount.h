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

/* Counts of short texts kept by their shape: the text with each ASCII
 * digit as '0'. A run of digits costs by its length alone and leaves the
 * heat as it was (docs/TOKENS.md), so texts of one shape cost the same:
 * a pack's session stamps ("[2024-03-05 Tue 14:07") have a handful of
 * shapes (issue 23, exact33: counting them was 56-63 M of a
 * million-message recall's 1,165-1,310 M instructions). Zero it before
 * use. test_tokcount checks the count against text_count_tokens. */
#define TC_MEMO 8
#define TC_MEMO_LEN 40
struct tc_memo {
    unsigned next;
    struct { unsigned char len; int cost; char key[TC_MEMO_LEN]; } e[TC_MEMO];
};

/* text_count_tokens(s, n), from m when a text of its shape was counted
 * (n up to TC_MEMO_LEN; a longer text is counted). */
int text_count_tokens_memo(struct tc_memo *m, const char *s, size_t n);

/* The longest prefix of s[0..n) that costs at most max_tokens tokens,
 * ending on a UTF-8 boundary (and preferably a word boundary); returns
 * its length in bytes. */
size_t text_prefix_within(const char *s, size_t n, int max_tokens);

#endif
