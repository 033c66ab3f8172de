/*
 * recognise.c: is a prompt shaped like a correction? (docs/MEMORIES.md,
 * "The recogniser"). A word pass over the prompt's first clauses, no model
 * and no regex engine: the prompt hook runs it on every prompt.
 *
 * Precision first: a wrong candidate costs the user a review, a missed
 * one costs nothing kept. So each rule wants the words that make a
 * sentence a correction, not a mere "no" or "don't": "no, never ...",
 * "don't ... again" (or "anymore", "ever"), "I told you", "stop doing
 * ...", "never ever", and in Chinese 别再 / 不要再 anywhere and 不要 / 别 /
 * 我说过 leading a prompt. Each rule has a name, which the candidate keeps.
 *
 * Besides the verdict, the command patterns the prompt names (a word of a
 * known tool and the words and flags after it, or a backquoted span that
 * starts with one) go to the candidate, so an accepted correction has a
 * --when-command to match without the user typing one.
 */
#include <ctype.h>
#include <string.h>

#include "text/correction.h"
#include "util/buf.h"

#define SCAN_MAX     600     /* bytes of a prompt looked at: corrections lead */
#define PROMPT_MAX   4000    /* longer prompts are pasted material */
#define CMD_WORDS    4       /* words of a command pattern at most */

/* A lower-cased copy of the prompt's start, ASCII only folded. */
struct text {
    char s[SCAN_MAX + 1];
    size_t n;
};

/* The position of word w in t at or after from (whole word), or -1. */
static long find_word(const struct text *t, size_t from, const char *w)
{
    size_t k = strlen(w);
    for (size_t i = from; i + k <= t->n; i++) {
        if (memcmp(t->s + i, w, k))
            continue;
        int left = i == 0 || !isalnum((unsigned char)t->s[i - 1]);
        int right = i + k == t->n || !isalnum((unsigned char)t->s[i + k]);
        if (left && right)
            return (long)i;
    }
    return -1;
}

/* The end of the clause starting at i: . ! ? ; or a line break. */
static size_t clause_end(const struct text *t, size_t i)
{
    while (i < t->n && !strchr(".!?;\n", t->s[i]))
        i++;
    return i;
}

/* 1 if one of words is a whole word of t within [from, to). */
static int any_within(const struct text *t, size_t from, size_t to, const char *const *words)
{
    for (; *words; words++) {
        long p = find_word(t, from, *words);
        if (p >= 0 && (size_t)p < to)
            return 1;
    }
    return 0;
}

static const char *const REPEATS[] = { "again", "anymore", "any more", "ever", NULL };
static const char *const PROHIBIT[] = { "don't", "dont", "do not", "never", NULL };

/* "no, never ...", "no! don't ...": a leading no, then a prohibition in
 * the next clause or the same one. */
static int rule_no(const struct text *t)
{
    size_t i = 0;
    if (!strncmp(t->s, "no", 2) && (t->n == 2 || strchr(",.!;: ", t->s[2])))
        i = 2;
    else if (!strncmp(t->s, "nope", 4) && (t->n == 4 || strchr(",.!;: ", t->s[4])))
        i = 4;
    else
        return 0;
    while (i < t->n && strchr(",.!;: ", t->s[i]))
        i++;
    return any_within(t, i, clause_end(t, i), PROHIBIT);
}

/* "don't ... again", "never ... anymore": a prohibition and a repeat in one clause. */
static int rule_again(const struct text *t)
{
    for (const char *const *w = PROHIBIT; *w; w++)
        for (long p = find_word(t, 0, *w); p >= 0; p = find_word(t, (size_t)p + 1, *w))
            if (any_within(t, (size_t)p, clause_end(t, (size_t)p), REPEATS))
                return 1;
    return 0;
}

/* "I told you", "I already told you", "how many times", "I said not to". */
static int rule_told(const struct text *t)
{
    static const char *const phrases[] = { "i told you", "i already told you",
                                           "i've told you", "i have told you",
                                           "how many times do i", "i said not to",
                                           "i said don't", "i asked you not to", NULL };
    for (const char *const *p = phrases; *p; p++)
        if (find_word(t, 0, *p) >= 0)
            return 1;
    return 0;
}

/* "stop adding ...", "please stop using ...": stop then a verb in -ing. */
static int rule_stop(const struct text *t)
{
    for (long p = find_word(t, 0, "stop"); p >= 0; p = find_word(t, (size_t)p + 1, "stop")) {
        /* a clause's first word, after "please" or "and" at most */
        size_t s = (size_t)p;
        while (s > 0 && t->s[s - 1] == ' ')
            s--;
        int lead = s == 0 || strchr(",.!?;:\n", t->s[s - 1]) ||
                   (s >= 6 && !strncmp(t->s + s - 6, "please", 6)) ||
                   (s >= 3 && !strncmp(t->s + s - 3, "and", 3));
        size_t w = (size_t)p + 5, e = w;
        while (e < t->n && isalpha((unsigned char)t->s[e]))
            e++;
        if (lead && e - w > 4 && !strncmp(t->s + e - 3, "ing", 3))
            return 1;
    }
    return 0;
}

/* "never ever ...", and a prompt that opens with "never" (an order: "never
 * push to main"; "never mind" is not one). */
static int rule_never(const struct text *t)
{
    if (find_word(t, 0, "never ever") >= 0)
        return 1;
    return !strncmp(t->s, "never ", 6) && strncmp(t->s, "never mind", 10);
}

/* The Chinese rules: 别再 / 不要再 anywhere (don't ... again), 不要 / 别 /
 * 我说过 / 我已经说过 / 跟你说过 opening the prompt. */
static int rule_zh(const struct text *t)
{
    static const char *const anywhere[] = { "别再", "不要再", "跟你说过", "我已经说过", "我说过了",
                                            NULL };
    static const char *const leading[] = { "不要", "别", "我说过", "不是让你", NULL };
    for (const char *const *w = anywhere; *w; w++)
        if (strstr(t->s, *w))
            return 1;
    for (const char *const *w = leading; *w; w++)
        if (!strncmp(t->s, *w, strlen(*w)))
            return 1;
    return 0;
}

/* ---- command patterns ---- */

static int known_tool(const char *w, size_t n)
{
    static const char *const tools[] = { "git", "npm", "yarn", "pnpm", "npx", "cargo", "rm",
                                         "docker", "kubectl", "terraform", "pip", "make",
                                         "helm", "gh", "twine", "poetry", "sudo", "chmod",
                                         "curl", "psql", "mysql", NULL };
    for (const char *const *t = tools; *t; t++)
        if (strlen(*t) == n && !memcmp(*t, w, n))
            return 1;
    return 0;
}

static int stop_word(const char *w, size_t n)
{
    static const char *const stops[] = { "here", "again", "in", "on", "to", "without", "unless",
                                         "please", "anymore", "ever", "before", "after", "the",
                                         "this", "that", "it", "when", "for", "and", "or", "but",
                                         "with", "if", "any", "at", "from", "ok", "okay", "now",
                                         NULL };
    for (const char *const *s = stops; *s; s++)
        if (strlen(*s) == n && !memcmp(*s, w, n))
            return 1;
    return 0;
}

static size_t word_len(const char *p, size_t max)
{
    size_t n = 0;
    while (n < max && (isalnum((unsigned char)p[n]) || strchr("-_./=:@", p[n])))
        n++;
    return n;
}

/* Appends the pattern starting at tool word p (n bytes left) to cmds. */
static void add_command(const char *p, size_t n, struct buf *cmds)
{
    size_t i = 0, words = 0, mark = cmds->n;
    if (cmds->n)
        buf_addc(cmds, '\n');
    while (i < n && words < CMD_WORDS) {
        size_t k = word_len(p + i, n - i);
        if (!k || (words && stop_word(p + i, k)))
            break;
        if (words)
            buf_addc(cmds, ' ');
        buf_add(cmds, p + i, k);
        words++;
        i += k;
        if (i >= n || p[i] != ' ')
            break;
        i++;
    }
    if (words < 2)
        buf_truncate(cmds, mark);               /* "git" alone says too little */
}

static void find_commands(const struct text *t, struct buf *cmds)
{
    for (size_t i = 0; i < t->n; ) {
        size_t k = word_len(t->s + i, t->n - i);
        if (!k) {
            i++;
            continue;
        }
        int left = i == 0 || !isalnum((unsigned char)t->s[i - 1]);
        if (left && known_tool(t->s + i, k) && i + k < t->n && t->s[i + k] == ' ') {
            size_t before = cmds->n;
            add_command(t->s + i, t->n - i, cmds);
            if (cmds->n > before)
                return;                         /* the first one is the point */
        }
        i += k;
    }
}

int corr_recognise(const char *p, size_t n, const char **rule, struct buf *cmds)
{
    static const struct { const char *name; int (*fn)(const struct text *); } rules[] = {
        { "no-never", rule_no }, { "dont-again", rule_again }, { "told-you", rule_told },
        { "stop-doing", rule_stop }, { "never", rule_never }, { "zh", rule_zh },
    };
    struct text t;
    *rule = NULL;
    while (n && isspace((unsigned char)*p))
        p++, n--;
    if (!n || n > PROMPT_MAX || *p == '/')
        return 0;                               /* empty, pasted, a slash command */
    size_t lim = n < SCAN_MAX ? n : SCAN_MAX;
    t.n = 0;
    for (size_t i = 0; i < lim; i++) {
        unsigned char c = (unsigned char)p[i];
        /* a typographic apostrophe (U+2019) is ', so "don’t" is "don't" */
        if (c == 0xE2 && i + 2 < lim && (unsigned char)p[i + 1] == 0x80 &&
            (unsigned char)p[i + 2] == 0x99) {
            t.s[t.n++] = '\'';
            i += 2;
            continue;
        }
        t.s[t.n++] = (char)(c < 0x80 ? tolower(c) : c);
    }
    t.s[t.n] = '\0';
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i].fn(&t)) {
            *rule = rules[i].name;
            find_commands(&t, cmds);
            return 1;
        }
    return 0;
}
