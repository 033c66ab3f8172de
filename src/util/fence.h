/*
 * fence.h: the one way remembered text is handed to a model.
 *
 * Stored text is data written by anyone (a pasted web page, an imported
 * export, a message crafted to be remembered). Every surface that gives
 * memory to a model (the prompt and SessionStart hooks, the MCP tools,
 * the headers recall writes) puts it inside one fence:
 *
 *     INTRO (ours, one line)
 *     <past-conversations>
 *     the text, with every forged or look-alike fence tag neutralised
 *     </past-conversations>
 *
 * and nothing inside can end or open that fence: any '<' (or a look-alike
 * of it: full-width, small, angle brackets, ...) that starts something a
 * reader could take for the fence's tag becomes "&lt;". "Something" is
 * judged loosely, so a near miss is escaped too: any case, whitespace or
 * invisible characters (zero-width, bidi controls, soft hyphens,
 * combining marks) anywhere in it, a '/' or look-alike, any dash or none
 * between the words, letters from other scripts that look like Latin
 * ones (Cyrillic 'а', full-width 'ｐ', mathematical '𝐩', ligatures), the
 * singular, and no closing '>'. docs/SECURITY.md says what this
 * guarantees and what it does not.
 *
 * Names printed around memory (titles, speakers, projects, sources,
 * session ids) go through fence_line: one line, tags neutralised, so a
 * title cannot start a paragraph of its own.
 */
#ifndef CAIRN_FENCE_H
#define CAIRN_FENCE_H

#include <stddef.h>

struct buf;

#define FENCE_OPEN  "<past-conversations>"
#define FENCE_CLOSE "</past-conversations>"

/* Appends intro (our own text, may be NULL or "") and a newline, the
 * opening line, text[0..n) neutralised (fence_escape), a newline unless
 * the text ends with one, and the closing tag without a newline after it.
 * Returns out->err. */
int fence_wrap(struct buf *out, const char *intro, const char *text, size_t n);

/* Appends text[0..n) with every forged or look-alike fence tag
 * neutralised (its '<' becomes "&lt;"), invalid UTF-8 bytes and NULs as
 * U+FFFD; everything else byte for byte. Returns the number of tags
 * neutralised, or -1 if out->err is set. */
long fence_escape(struct buf *out, const char *text, size_t n);

/* Appends s[0..n) as one line: CR, LF, U+0085, U+2028, U+2029, tabs and
 * other control characters become spaces, runs of spaces one space,
 * leading and trailing spaces go, bidi embedding and override controls
 * go; then fence_escape. Returns out->err. */
int fence_line(struct buf *out, const char *s, size_t n);
/* 1 if fence_line would append s[0..n) unchanged (printable ASCII without
 * '<', single inner spaces): the common case, without a copy. */
int fence_line_plain(const char *s, size_t n);

#endif
