/*
 * common.c: everyday English words that make poor page names, for
 * text_is_common_word() (the gate of vault notes, recall/notes.c).
 *
 * A page called "Design", "Memory" or "Launch" is named by countless
 * prompts that are not about it; one called "Tor" or "OrbStack" is named
 * only by the prompts that are (claude-recall measured that a loose gate
 * fired on about 45% of prompts, mostly wrong, and that word choice, not
 * a threshold, fixed it). In a big vault such words are frequent and the
 * section frequency says so (NOTE_NAME_DF); in a small one everything is
 * rare, so this list says it instead. The words are the generic nouns and
 * verbs of notes and work (plans, ideas, setup, meetings), written in
 * their natural form and put through text_tokenize() once, as one text,
 * so the table holds what the index holds ("memory" -> "memori"). The
 * gate of notes also counts such a word of a question less (policy.h,
 * NOTE_GATE_EVERYDAY_W).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "text/tokenize.h"

static const char *const words[] = {
    "about", "account", "action", "activity", "admin", "agenda", "api", "app", "archive",
    "area", "article", "backlog", "backup", "book", "bookmark", "brainstorm", "budget",
    "bug", "build", "calendar", "change", "changelog", "chat", "check", "checklist", "client",
    "code", "company", "config", "configuration", "contact", "content", "context", "cost",
    "daily", "dashboard", "data", "database", "date", "day", "debug", "decision", "default",
    "deploy", "design", "dev", "development", "diary", "doc", "docs", "document", "draft",
    "email", "error", "event", "example", "faq", "feature", "feedback", "file", "finance",
    "fix", "flow", "format", "friend", "general", "goal", "guide", "health", "help",
    "history", "home", "howto", "idea", "ideas", "inbox", "index", "info", "install",
    "issue", "journal", "key", "launch", "learning", "library", "life", "link", "links",
    "list", "log", "main", "manual", "map", "meeting", "memory", "message", "method", "misc",
    "model", "money", "month", "name", "network", "new", "news", "next", "note", "notes",
    "old", "overview", "page", "people", "person", "personal", "plan", "planning", "policy",
    "post", "price", "priority", "problem", "process", "product", "profile", "project",
    "question", "questions", "quote", "read", "reading", "readme", "recipe", "reference",
    "release", "report", "research", "resource", "review", "roadmap", "rule", "schedule",
    "script", "search", "security", "server", "service", "session", "settings", "setup",
    "spec", "start", "status", "story", "strategy", "summary", "support", "system", "task",
    "tasks", "team", "template", "test", "testing", "thought", "thoughts", "time", "tip",
    "tips", "todo", "tool", "tools", "topic", "travel", "troubleshooting", "tutorial",
    "update", "usage", "user", "version", "week", "weekly", "wiki", "work", "workflow",
    "writing", "year",
};

static char **table;
static size_t ntable;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The words are tokenized as one text (a tokenizer's call costs a stemmer
 * made and freed: 186 calls were 1.3 M instructions of every prompt hook
 * with a vault); each word's first token is its entry, as a call of its
 * own would give it. */
struct all {
    const size_t *off;     /* each word's first byte in the text; off[n]: its end */
    size_t n, cur;
    char **t;
    size_t k;
    int taken;             /* word cur has its entry */
};

static int word_tok(void *arg, const char *tok, size_t n, size_t start, size_t end, int coloc)
{
    struct all *a = arg;
    while (a->cur < a->n && start >= a->off[a->cur + 1]) {
        a->cur++;
        a->taken = 0;
    }
    if (a->cur >= a->n || a->taken)
        return 0;
    a->taken = 1;
    if (n >= 64)
        return 0;           /* as text_is_common_word's key: never found */
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, tok, n);
        c[n] = 0;
        a->t[a->k++] = c;
    }
    return 0;
}

static int by_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void build(void)
{
    size_t n = sizeof words / sizeof words[0], len = 0;
    char **t = calloc(n, sizeof *t), *text = NULL;
    size_t *off = calloc(n + 1, sizeof *off);
    if (!t || !off)
        goto out;           /* no table: no word is common (the df rule stays) */
    for (size_t i = 0; i < n; i++)
        len += strlen(words[i]) + 1;
    if (!(text = malloc(len + 1)))
        goto out;
    len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t w = strlen(words[i]);
        off[i] = len;
        memcpy(text + len, words[i], w);
        text[len + w] = ' ';
        len += w + 1;
    }
    off[n] = len;
    text[len] = 0;
    struct all a = { off, n, 0, t, 0, 0 };
    text_tokenize(text, len, 1, word_tok, &a);
    qsort(t, a.k, sizeof *t, by_bytes);
    table = t;
    ntable = a.k;
    t = NULL;
out:
    free(t);
    free(off);
    free(text);
}

int text_is_common_word(const char *tok, size_t n)
{
    char key[64];
    if (n >= sizeof key)
        return 0;
    pthread_once(&once, build);
    memcpy(key, tok, n);
    key[n] = 0;
    const char *k = key;
    return table && bsearch(&k, table, ntable, sizeof *table, by_bytes) != NULL;
}
