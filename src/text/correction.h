/*
 * correction.h: the word-level parts of corrections (docs/MEMORIES.md,
 * "Corrections"): whether a correction's applies_when matches a tool call
 * (applies.c) and whether a prompt is shaped like a correction
 * (recognise.c). Plain string work, no store: store/correction.c wraps it
 * for the public API.
 */
#ifndef CAIRN_TEXT_CORRECTION_H
#define CAIRN_TEXT_CORRECTION_H

#include <stddef.h>

struct buf;

/* What the matchers read of a command or path at most: a tool call is
 * untrusted input, and a correction is about its start. */
#define CORR_SUBJECT_MAX 65536

/* 1 if command pattern `pattern` matches a simple command of `command`
 * (cairn.h, cairn_correction_applies). */
int corr_command_matches(const char *pattern, const char *command);
/* 1 if file glob `glob` matches `path`. */
int corr_path_matches(const char *glob, const char *path);
/* 1 if `kw` is a whole word of `text`, ASCII case folded (a keyword with
 * non-ASCII letters, CJK, matches anywhere). */
int corr_keyword_in(const char *kw, const char *text);
/* The longest item of a list (CAIRN_CORRECTION_LIST_MAX). */
#define CORR_ITEM_MAX 1024
/* Calls fn(item, arg) for each non-blank line of list, trimmed and
 * NUL-terminated, until fn returns non-zero; returns that, else 0. */
int corr_each_item(const char *list, int (*fn)(const char *item, void *arg), void *arg);

/* 1 and *rule (a static name) when prompt p (n bytes) is correction-shaped;
 * the command patterns it names go to cmds, one a line. */
int corr_recognise(const char *p, size_t n, const char **rule, struct buf *cmds);

#endif
