/*
 * applies.c: does a correction's applies_when match a tool call?
 *
 * Three kinds of item (docs/MEMORIES.md): command patterns, matched word by
 * word against each simple command of a Bash command line; file globs
 * (fnmatch), against a path's name, its end or the whole of it; keywords,
 * whole words without case. The pre-tool hook calls these on every tool
 * call, so they stay a plain pass over capped input: no regex, no
 * allocation beyond one copy of the command.
 */
#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "text/correction.h"

#define MAX_WORDS 512          /* words of a command line we look at */
#define MAX_PATTERN_WORDS 16

int corr_each_item(const char *list, int (*fn)(const char *item, void *arg), void *arg)
{
    char item[CORR_ITEM_MAX + 1];
    const char *p = list ? list : "";
    while (*p) {
        size_t n = strcspn(p, "\n");
        const char *s = p;
        size_t k = n;
        while (k && isspace((unsigned char)*s))
            s++, k--;
        while (k && isspace((unsigned char)s[k - 1]))
            k--;
        int r = 0;
        if (k && k <= CORR_ITEM_MAX) {          /* a longer one was never stored */
            memcpy(item, s, k);
            item[k] = '\0';
            r = fn(item, arg);
        }
        if (r)
            return r;
        p += n;
        if (*p)
            p++;
    }
    return 0;
}

/* ---- commands ---- */

/* Words that run the command after them (with their options): `sudo -u x
 * git push` is a git command. */
static int is_wrapper(const char *w)
{
    static const char *const wrappers[] = { "sudo", "env", "command", "exec", "time",
                                            "nohup", "nice", "doas" };
    for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0]; i++)
        if (!strcmp(w, wrappers[i]))
            return 1;
    return 0;
}

static int is_assignment(const char *w)
{
    if (!isalpha((unsigned char)*w) && *w != '_')
        return 0;
    while (isalnum((unsigned char)*w) || *w == '_')
        w++;
    return *w == '=';
}

/* Cuts line (modified in place) into words; a separator of simple commands
 * (; & | newline parentheses backquote) ends a word and starts a segment:
 * seg[i] is 1 for a segment's first word. Quotes are dropped, not parsed:
 * a separator inside quotes splits too, which can only make a pattern
 * match more often, and a guard should err that way. */
static size_t split_words(char *line, char **words, char *seg, size_t max)
{
    size_t n = 0;
    int new_seg = 1;
    char *w = NULL, *o = line;
    for (char *p = line;; p++) {
        char c = *p;
        int sep = c == ';' || c == '&' || c == '|' || c == '\n' || c == '(' || c == ')' ||
                  c == '`';
        if (c == '\0' || sep || isspace((unsigned char)c)) {
            if (w && n < max) {
                *o++ = '\0';
                words[n] = w;
                seg[n++] = (char)new_seg;
                new_seg = 0;
            }
            w = NULL;
            if (sep)
                new_seg = 1;
            if (c == '\0')
                break;
            continue;
        }
        if (c == '\'' || c == '"' || c == '\\')
            continue;
        if (c == '$' && p[1] == '(') {          /* $( opens a command too */
            new_seg = 1;
            continue;
        }
        if (!w)
            w = o = p;
        *o++ = c;
    }
    return n;
}

/* The simple command starting at word i (a segment's start): the index of
 * its command word, past assignments and wrappers with their options. */
static size_t command_word(char **words, const char *seg, size_t i, size_t n)
{
    while (i < n) {
        if (is_assignment(words[i])) {
            i++;
            continue;
        }
        const char *base = strrchr(words[i], '/');
        base = base && base[1] ? base + 1 : words[i];
        if (!is_wrapper(base))
            return i;
        i++;
        while (i < n && !seg[i] && words[i][0] == '-')
            i++;
    }
    return n;
}

static int word_eq(const char *pat, const char *w)
{
    const char *base = strrchr(w, '/');
    return !fnmatch(pat, w, 0) || (base && base[1] && !fnmatch(pat, base + 1, 0));
}

int corr_command_matches(const char *pattern, const char *command)
{
    char pat[1024], *pw[MAX_PATTERN_WORDS], pseg[MAX_PATTERN_WORDS];
    if (!pattern || !command || strlen(pattern) >= sizeof pat)
        return 0;
    memcpy(pat, pattern, strlen(pattern) + 1);
    size_t np = split_words(pat, pw, pseg, MAX_PATTERN_WORDS);
    if (!np)
        return 0;
    size_t len = strnlen(command, CORR_SUBJECT_MAX);
    char *line = malloc(len + 1), **words = malloc(MAX_WORDS * sizeof *words);
    char *seg = malloc(MAX_WORDS);
    int found = 0;
    if (!line || !words || !seg)
        goto out;
    memcpy(line, command, len);
    line[len] = '\0';
    size_t n = split_words(line, words, seg, MAX_WORDS);
    for (size_t i = 0; i < n && !found; i++) {
        if (!seg[i])
            continue;
        size_t c = command_word(words, seg, i, n), end = i + 1;
        while (end < n && !seg[end])
            end++;
        /* the pattern's first word is the command word, or one of the
         * wrappers and assignments before it ("sudo" matches "sudo ls") */
        for (size_t first = i; first <= c && first < end && !found; first++) {
            if (!word_eq(pw[0], words[first]))
                continue;
            found = 1;
            for (size_t k = 1; k < np && found; k++) {
                int any = 0;
                for (size_t j = first + 1; j < end && !any; j++)
                    any = !fnmatch(pw[k], words[j], 0);
                found = any;
            }
        }
    }
out:
    free(line);
    free(words);
    free(seg);
    return found;
}

/* ---- paths ---- */

int corr_path_matches(const char *glob, const char *path)
{
    if (!glob || !path || !*glob || strnlen(path, CORR_SUBJECT_MAX) == CORR_SUBJECT_MAX)
        return 0;
    /* ** crosses folders; a single * stays within one, as in a shell */
    int flags = strstr(glob, "**") ? 0 : FNM_PATHNAME;
    if (*glob == '/')
        return !fnmatch(glob, path, flags);
    if (!strchr(glob, '/')) {
        const char *base = strrchr(path, '/');
        return !fnmatch(glob, base ? base + 1 : path, 0);
    }
    /* a glob with a folder in it: the path's end, from the start or after a slash */
    for (const char *p = path; p; p = strchr(p, '/')) {
        if (*p == '/')
            p++;
        if (!fnmatch(glob, p, flags))
            return 1;
    }
    return 0;
}

/* ---- keywords ---- */

static int word_char(unsigned char c)
{
    return isalnum(c) || c == '_';
}

int corr_keyword_in(const char *kw, const char *text)
{
    size_t k = kw ? strlen(kw) : 0, n = text ? strnlen(text, CORR_SUBJECT_MAX) : 0;
    int ascii = 1;
    if (!k || k > n)
        return 0;
    for (size_t i = 0; i < k; i++)
        ascii &= (unsigned char)kw[i] < 0x80;
    for (size_t i = 0; i + k <= n; i++) {
        if (strncasecmp(text + i, kw, k))
            continue;
        if (!ascii)
            return 1;
        /* whole word, judged where the keyword itself has a word edge */
        int left = i == 0 || !word_char((unsigned char)text[i - 1]) ||
                   !word_char((unsigned char)kw[0]);
        int right = i + k == n || !word_char((unsigned char)text[i + k]) ||
                    !word_char((unsigned char)kw[k - 1]);
        if (left && right)
            return 1;
    }
    return 0;
}
