/*
 * utf8.h: UTF-8 validation and repair, without allocation.
 *
 * Imports carry invalid UTF-8 (cut multi-byte sequences in half-written
 * lines, Latin-1 pasted text). SQLite and JSON want valid text, so every
 * string is checked on the way in and repaired (bad bytes -> U+FFFD).
 */
#ifndef CAIRN_UTF8_H
#define CAIRN_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence starting at s (1..4), or 0 if the
 * bytes there do not start a valid, complete, shortest-form sequence. */
size_t utf8_valid_prefix(const char *s, size_t n);
/* 1 if all n bytes are valid UTF-8 (no NUL check). */
int utf8_valid(const char *s, size_t n);
/* Decodes one code point at s; returns bytes used (>=1). Invalid bytes
 * decode as U+FFFD, one byte each. */
size_t utf8_decode(const char *s, size_t n, uint32_t *cp);
/* Encodes cp into out (>= 4 bytes), returns the length. */
size_t utf8_encode(uint32_t cp, char *out);

#endif

#ifndef CAIRN_UTF8_REPAIR
#define CAIRN_UTF8_REPAIR
struct buf;
/* Appends s[0..n) to out with every invalid byte and every NUL replaced by
 * U+FFFD. Returns out->err. */
int utf8_repair(const char *s, size_t n, struct buf *out);
/* Line and column (1-based; columns count code points) of byte offset
 * off in text, for error messages. */
void utf8_line_col(const char *text, size_t off, size_t *line, size_t *col);
/* 1 if s[0..n) is valid UTF-8 without NUL bytes (needs no repair). */
int utf8_clean(const char *s, size_t n);
#endif
