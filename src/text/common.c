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
 * their natural form and put through text_tokenize() once, so the table
 * holds what the index holds ("memory" -> "memori").
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

struct one {
    char tok[64];
    int  n;
};

static int first_tok(void *arg, const char *tok, size_t n, size_t start, size_t end, int coloc)
{
    struct one *o = arg;
    if (o->n || n >= sizeof o->tok)
        return 1;
    memcpy(o->tok, tok, n);
    o->tok[n] = 0;
    o->n = (int)n;
    return 1;
}

static int by_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void build(void)
{
    size_t n = sizeof words / sizeof words[0];
    char **t = calloc(n, sizeof *t);
    if (!t)
        return;             /* no table: no word is common (the df rule stays) */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        struct one o = { "", 0 };
        text_tokenize(words[i], strlen(words[i]), 1, first_tok, &o);
        if (o.n && (t[k] = strdup(o.tok)))
            k++;
    }
    qsort(t, k, sizeof *t, by_bytes);
    table = t;
    ntable = k;
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
