/*
 * memory_md.c: the Markdown view of the memories (docs/MEMORIES.md),
 * `cairn memories export --markdown` and the MCP `memory` tool's list:
 *
 *     # Memories
 *
 *     ## Global
 *
 *     ### Preferences
 *
 *     - #3 · 2026-12-01 · [style] two spaces, never tabs
 *     - #5 · 2026-11-30 · **contradicts #7** the API is v2
 *
 * Live memories only (a superseded one is history, as in `memories list`),
 * grouped by scope (global first, then projects by name) and by type in
 * the order types are listed, oldest first in a group. A memory's later
 * lines are indented so that it stays one list item.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "util/buf.h"

static const char *const type_order[] = { "correction", "decision", "preference", "procedure",
                                          "fact" };
static const char *const type_heading[] = { "Corrections", "Decisions", "Preferences",
                                            "Procedures", "Facts" };

static int type_rank(const char *t)
{
    for (int i = 0; i < 5; i++)
        if (!strcmp(t, type_order[i]))
            return i;
    return 5;
}

static int cmp_md(const void *a, const void *b)
{
    const struct cairn_memory *x = *(const struct cairn_memory *const *)a;
    const struct cairn_memory *y = *(const struct cairn_memory *const *)b;
    int c = (*x->scope != 0) - (*y->scope != 0);        /* global first */
    if (!c)
        c = strcmp(x->scope, y->scope);
    if (!c)
        c = type_rank(x->type) - type_rank(y->type);
    if (!c)
        c = x->id < y->id ? -1 : x->id > y->id;
    return c;
}

/* " · **contradicts #7, #9**" from links "supersedes:3,contradicts:7,contradicted_by:9". */
static void add_conflicts(struct buf *b, const char *links)
{
    int n = 0;
    for (const char *s = links; s && *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        const char *colon = memchr(s, ':', len);
        if (colon && ((colon - s == 11 && !memcmp(s, "contradicts", 11)) ||
                      (colon - s == 15 && !memcmp(s, "contradicted_by", 15)))) {
            buf_adds(b, n++ ? ", #" : " · **contradicts #");
            buf_add(b, colon + 1, len - (size_t)(colon + 1 - s));
        }
        s = e ? e + 1 : s + len;
    }
    if (n)
        buf_adds(b, "**");
}

/* The text as one list item: each later line indented by two spaces. */
static void add_item_text(struct buf *b, const char *t)
{
    for (; *t; t++) {
        buf_addc(b, *t);
        if (*t == '\n' && t[1])
            buf_adds(b, "  ");
    }
}

static void add_memory(struct buf *b, const struct cairn_memory *m)
{
    char ts[16] = "undated";
    struct tm tm;
    time_t tt = (time_t)m->updated;
    if (localtime_r(&tt, &tm))
        strftime(ts, sizeof ts, "%Y-%m-%d", &tm);
    buf_printf(b, "- #%lld · %s", (long long)m->id, ts);
    if (*m->tags)
        buf_printf(b, " · [%s]", m->tags);
    add_conflicts(b, m->links);
    buf_addc(b, ' ');
    add_item_text(b, m->text);
    buf_addc(b, '\n');
}

int cairn_memories_markdown(struct cairn *h, const char *scope, char **out, size_t *len)
{
    struct cairn_memories *l = NULL;
    const struct cairn_memory **v = NULL;
    struct buf b = BUF_INIT;
    int rc;
    *out = NULL;
    if (len)
        *len = 0;
    if ((rc = cairn_memory_list(h, scope, NULL, 0, &l)))
        return rc;
    size_t n = cairn_memories_count(l);
    if (!(v = malloc((n ? n : 1) * sizeof *v))) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = cairn_memories_at(l, i);
    qsort(v, n, sizeof *v, cmp_md);
    buf_adds(&b, "# Memories\n");
    if (!n)
        buf_adds(&b, "\nNone kept.\n");
    for (size_t i = 0; i < n; i++) {
        const struct cairn_memory *m = v[i];
        int new_scope = !i || strcmp(m->scope, v[i - 1]->scope);
        if (new_scope) {
            buf_adds(&b, *m->scope ? "\n## Project " : "\n## Global\n");
            if (*m->scope) {
                buf_add(&b, m->scope, strcspn(m->scope, "\r\n"));
                buf_addc(&b, '\n');
            }
        }
        if (new_scope || type_rank(m->type) != type_rank(v[i - 1]->type)) {
            int t = type_rank(m->type);
            buf_printf(&b, "\n### %s\n\n", t < 5 ? type_heading[t] : m->type);
        }
        add_memory(&b, m);
    }
    if (b.err) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    *out = buf_detach(&b, len);
out:
    buf_release(&b);
    free(v);
    cairn_memories_free(l);
    return rc;
}
