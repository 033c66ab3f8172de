/*
 * markdown.c: frontmatter, headings, sections and links of a Markdown
 * note (markdown.h). One pass over the lines; nothing here allocates more
 * than the capped lists and one heading path a section.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/markdown.h"
#include "text/tokenize.h"
#include "util/utf8.h"

int md_is_binary(const char *s, size_t n)
{
    size_t m = n < MD_SNIFF ? n : MD_SNIFF, bad = 0;
    if (memchr(s, 0, m))
        return 1;
    for (size_t i = 0; i < m;) {
        size_t k = utf8_valid_prefix(s + i, m - i);
        if (!k) {
            /* a character cut by the sniff window is not a fault */
            if (m < n && m - i < 4)
                break;
            bad++;
            k = 1;
        }
        i += k;
    }
    /* Latin-1 notes have a few bad bytes; binary data has many */
    return bad * 20 > m;
}

void md_doc_free(struct md_doc *d)
{
    free(d->title);
    for (int i = 0; i < d->ntags; i++)
        free(d->tags[i]);
    for (int i = 0; i < d->naliases; i++)
        free(d->aliases[i]);
    for (int i = 0; i < d->nlinks; i++)
        free(d->links[i]);
    for (int i = 0; i < d->nsec; i++)
        free(d->sec[i].heading);
    free(d->sec);
    memset(d, 0, sizeof *d);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static void trim(const char **s, size_t *n)
{
    while (*n && is_space(**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && is_space((*s)[*n - 1]))
        (*n)--;
}

/* A copy of s[0..n), cut to MD_MAX_VALUE bytes on a character boundary. */
static char *copy_value(const char *s, size_t n)
{
    if (n > MD_MAX_VALUE) {
        n = MD_MAX_VALUE;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = 0;
    }
    return c;
}

/* Adds the trimmed, unquoted s[0..n) to list (distinct, non-empty, capped).
 * -1 on no memory. */
static int add_item(char **list, int *count, int max, const char *s, size_t n, int hash)
{
    trim(&s, &n);
    if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
        s++;
        n -= 2;
        trim(&s, &n);
    }
    if (hash)
        while (n && *s == '#') {
            s++;
            n--;
        }
    if (!n || *count >= max)
        return 0;
    char *c = copy_value(s, n);
    if (!c)
        return -1;
    for (int i = 0; i < *count; i++)
        if (!strcmp(list[i], c)) {
            free(c);
            return 0;
        }
    list[(*count)++] = c;
    return 0;
}

/* "[a, b]", "a, b" or (tags) "a b": the items of a frontmatter value. */
static int add_inline(char **list, int *count, const char *v, size_t n, int hash)
{
    if (n && *v == '[') {
        v++;
        n--;
        const char *close = memchr(v, ']', n);
        if (close)
            n = (size_t)(close - v);
    }
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        /* a quoted item may hold commas */
        while (j < n && is_space(v[j]))
            j++;
        char q = j < n && (v[j] == '"' || v[j] == '\'') ? v[j] : 0;
        if (q) {
            const char *e = memchr(v + j + 1, q, n - j - 1);
            j = e ? (size_t)(e - v) + 1 : n;
        }
        while (j < n && v[j] != ',' && !(hash && !q && v[j] == ' '))
            j++;
        if (add_item(list, count, MD_MAX_LIST, v + i, j - i, hash))
            return -1;
        i = j + 1;
    }
    return 0;
}

/* One line: [start, end) without its line break; next is where the
 * following line starts. */
struct line {
    size_t start, end, next;
};

static void next_line(const char *s, size_t n, size_t at, struct line *l)
{
    const char *nl = memchr(s + at, '\n', n - at);
    l->start = at;
    l->next = nl ? (size_t)(nl - s) + 1 : n;
    l->end = nl ? (size_t)(nl - s) : n;
    if (l->end > l->start && s[l->end - 1] == '\r')
        l->end--;
}

static int line_is(const char *s, const struct line *l, const char *what)
{
    const char *p = s + l->start;
    size_t n = l->end - l->start;
    trim(&p, &n);
    return n == strlen(what) && !memcmp(p, what, n) && s[l->start] == what[0];
}

/* The frontmatter: "---" on the first line, up to a "---" or "..." line.
 * Returns where the body starts (0: none). */
static int frontmatter(const char *s, size_t n, struct md_doc *d, int *lines)
{
    struct line l;
    size_t at = 0;
    if (n >= 3 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
        (unsigned char)s[2] == 0xBF)
        at = 3;                        /* a byte order mark */
    next_line(s, n, at, &l);
    if (!line_is(s, &l, "---"))
        return 0;
    int nl = 1;
    char **list = NULL;
    int *count = NULL, hash = 0;
    for (at = l.next; at < n; at = l.next) {
        next_line(s, n, at, &l);
        nl++;
        if (line_is(s, &l, "---") || line_is(s, &l, "...")) {
            d->body = l.next;
            *lines = nl;
            return 0;
        }
        const char *p = s + l.start;
        size_t len = l.end - l.start;
        if (len && (p[0] == ' ' || p[0] == '\t' || p[0] == '-')) {
            /* a block list's item under the key before */
            trim(&p, &len);
            if (list && len && *p == '-' &&
                add_item(list, count, MD_MAX_LIST, p + 1, len - 1, hash))
                return -1;
            continue;
        }
        list = NULL;
        const char *colon = memchr(p, ':', len);
        if (!colon)
            continue;
        const char *k = p, *v = colon + 1;
        size_t kn = (size_t)(colon - p), vn = len - kn - 1;
        trim(&k, &kn);
        trim(&v, &vn);
#define KEY(name) (kn == sizeof name - 1 && !strncasecmp(k, name, kn))
        if (KEY("title")) {
            char *t = NULL;
            int one = 0;
            if (add_item(&t, &one, 1, v, vn, 0))
                return -1;
            if (t) {
                free(d->title);
                d->title = t;
            }
        } else if (KEY("tags") || KEY("tag") || KEY("aliases") || KEY("alias")) {
            hash = KEY("tags") || KEY("tag");
            list = hash ? d->tags : d->aliases;
            count = hash ? &d->ntags : &d->naliases;
            if (vn && add_inline(list, count, v, vn, hash))
                return -1;
        }
#undef KEY
    }
    /* no closing line: not frontmatter, the whole file is the body */
    for (int i = 0; i < d->ntags; i++)
        free(d->tags[i]);
    for (int i = 0; i < d->naliases; i++)
        free(d->aliases[i]);
    free(d->title);
    d->title = NULL;
    d->ntags = d->naliases = 0;
    return 0;
}

/* The level of an ATX heading line (0: not one) and its text. */
static int atx(const char *s, const struct line *l, const char **t, size_t *tn)
{
    size_t i = l->start, ind = 0;
    while (i < l->end && s[i] == ' ' && ind < 4) {
        i++;
        ind++;
    }
    if (ind > 3)
        return 0;
    int level = 0;
    while (i < l->end && s[i] == '#' && level < 7) {
        i++;
        level++;
    }
    if (!level || level > MD_MAX_DEPTH || (i < l->end && s[i] != ' ' && s[i] != '\t'))
        return 0;
    const char *p = s + i;
    size_t n = l->end - i;
    trim(&p, &n);
    /* a closing run of '#' after a space is not part of the text */
    size_t e = n;
    while (e && p[e - 1] == '#')
        e--;
    if (e < n && (!e || p[e - 1] == ' ' || p[e - 1] == '\t'))
        n = e;
    trim(&p, &n);
    *t = p;
    *tn = n;
    return level;
}

/* Fenced code inside containers (CommonMark 0.31, "Container blocks"): a
 * fence may open in a block quote ("> ```") or in a list item, indented to
 * the item's content ("1. x" then "   ```": 3 columns; "10. x" then
 * "    ```": 4), and ends with its container as well as at its closing
 * fence. The reader keeps the open list items' content columns and the
 * quote depth they are in; nothing else of the containers is read. */
#define MD_LIST_DEPTH 16       /* nested list items tracked; deeper ones read as text */
#define MD_QUOTE_DEPTH 16

struct fence_state {
    int    in;                 /* inside a fenced code block */
    char   c;                  /* its fence's char and run */
    size_t run;
    int    q, ind;             /* its quote depth, its container's content column */
    int    nl, lq;             /* open list items, and the quote depth they are in */
    int    li[MD_LIST_DEPTH];  /* their content columns */
    int    text;               /* the line above was text (a lazy line may follow) */
};

/* Skips spaces and tabs from s[i], counting columns from col (a tab to the
 * next multiple of 4); the first other byte's place. */
static size_t skip_blank(const char *s, size_t i, size_t end, int *col)
{
    for (; i < end && (s[i] == ' ' || s[i] == '\t'); i++)
        *col = s[i] == '\t' ? (*col + 4) & ~3 : *col + 1;
    return i;
}

/* Block quote markers at the start of l, at most max: each up to 3 columns
 * in, '>' and one space or tab. Their count; *at and *col where the
 * quoted content starts. */
static int quote_marks(const char *s, const struct line *l, int max, size_t *at, int *col)
{
    int q = 0;
    size_t i = l->start;
    *col = 0;
    while (q < max) {
        int c = *col;
        size_t j = skip_blank(s, i, l->end, &c);
        if (j >= l->end || s[j] != '>' || c - *col > 3)
            break;
        i = j + 1;
        *col = c + 1;
        if (i < l->end && (s[i] == ' ' || s[i] == '\t')) {
            *col = s[i] == '\t' ? (*col + 4) & ~3 : *col + 1;
            i++;
        }
        q++;
    }
    *at = i;
    return q;
}

/* A list item's marker at s[i] ("-", "+", "*", or 1-9 digits and "." or
 * ")"), then a space, a tab or the line's end: the column its content
 * starts at (CommonMark: the marker's width and 1-4 spaces after it; 1
 * when 5 or more follow, or nothing), and *at where that content is.
 * 0 when s[i] starts no list item. */
static int list_marker(const char *s, size_t i, size_t end, int col, size_t *at)
{
    size_t k = i;
    if (k < end && (s[k] == '-' || s[k] == '+' || s[k] == '*')) {
        k++;
    } else {
        while (k < end && k - i < 9 && s[k] >= '0' && s[k] <= '9')
            k++;
        if (k == i || k >= end || (s[k] != '.' && s[k] != ')'))
            return 0;
        k++;
    }
    if (k < end && s[k] != ' ' && s[k] != '\t')
        return 0;
    int mc = col + (int)(k - i), c = mc;
    size_t j = skip_blank(s, k, end, &c);
    if (j == end || c - mc > 4) {
        *at = k < end ? k + 1 : k;        /* one space is the marker's */
        return mc + 1;
    }
    *at = j;
    return c;
}

/* A fence at s[i]: 3 or more ` or ~ (a backtick fence's info string holds
 * no backtick: "```x`" is inline code). 1 when nothing follows the run (it
 * can close a block), 2 when something does, 0 when it is no fence. */
static int fence_at(const char *s, size_t i, size_t end, char *c, size_t *run)
{
    if (i >= end || (s[i] != '`' && s[i] != '~'))
        return 0;
    size_t k = i;
    while (k < end && s[k] == s[i])
        k++;
    if (k - i < 3 || (s[i] == '`' && memchr(s + k, '`', end - k)))
        return 0;
    *c = s[i];
    *run = k - i;
    for (size_t j = k; j < end; j++)
        if (!is_space(s[j]))
            return 2;
    return 1;
}

/* A line inside a fenced code block, or its opening or closing fence, is
 * code (1), never a heading or a paragraph's end. fs carries the block and
 * the containers from line to line. Linear: a line is read once, and at
 * most MD_LIST_DEPTH markers of it. */
static int code_line(const char *s, const struct line *l, struct fence_state *fs)
{
    size_t at;
    int col, q = quote_marks(s, l, fs->in ? fs->q : MD_QUOTE_DEPTH, &at, &col);
    size_t p = skip_blank(s, at, l->end, &col);
    int empty = p == l->end;
    char lc;
    size_t run;
    if (fs->in) {
        /* the block goes on while its container does: as many quote
         * markers, and a blank line or one indented to the item's content */
        if (q == fs->q && (empty || col >= fs->ind)) {
            if (!empty && col - fs->ind <= 3 && fence_at(s, p, l->end, &lc, &run) == 1 &&
                lc == fs->c && run >= fs->run)
                fs->in = 0;
            return 1;
        }
        fs->in = 0;            /* its container ended: so did the block */
    }
    if (q != fs->lq) {         /* another quote: the list items were in the old one */
        fs->nl = 0;
        fs->lq = q;
    }
    if (empty) {
        fs->text = 0;
        return 0;
    }
    /* the items this line is outside of; a lazy line of a paragraph (text
     * less indented than its item's content) leaves them open */
    int lazy = fs->text && s[p] != '`' && s[p] != '~' && s[p] != '#' && s[p] != '>' &&
               !list_marker(s, p, l->end, col, &at);
    while (!lazy && fs->nl && col < fs->li[fs->nl - 1])
        fs->nl--;
    int base = fs->nl ? fs->li[fs->nl - 1] : 0, ci;
    /* new items ("- x", "1. - x"), each content column the next's base */
    while (col - base <= 3 && fs->nl < MD_LIST_DEPTH &&
           (ci = list_marker(s, p, l->end, col, &at))) {
        fs->li[fs->nl++] = base = ci;
        col = ci;
        p = at;
        if (p == l->end) {
            fs->text = 0;
            return 0;
        }
    }
    int f = col - base <= 3 ? fence_at(s, p, l->end, &lc, &run) : 0;
    if (f) {
        fs->in = 1;
        fs->c = lc;
        fs->run = run;
        fs->q = q;
        fs->ind = base;
        fs->text = 0;
        return 1;
    }
    fs->text = s[p] != '#';
    return 0;
}

/* A setext underline (1: '=', 2: '-'), else 0. */
static int setext(const char *s, const struct line *l)
{
    size_t i = l->start, ind = 0;
    while (i < l->end && s[i] == ' ' && ind < 4) {
        i++;
        ind++;
    }
    if (ind > 3 || i >= l->end || (s[i] != '=' && s[i] != '-'))
        return 0;
    char c = s[i];
    while (i < l->end && s[i] == c)
        i++;
    while (i < l->end && is_space(s[i]))
        i++;
    return i == l->end ? (c == '=' ? 1 : 2) : 0;
}

static int blank(const char *s, size_t a, size_t b)
{
    for (; a < b; a++)
        if (!is_space(s[a]) && s[a] != '\n')
            return 0;
    return 1;
}

/* A line that can be a setext heading's text: not blank, not a list item,
 * quote, table row, fence or heading. */
static int para_line(const char *s, const struct line *l)
{
    const char *p = s + l->start;
    size_t n = l->end - l->start, ind = 0;
    while (ind < n && p[ind] == ' ')
        ind++;
    if (ind > 3 || ind == n)
        return 0;
    p += ind;
    n -= ind;
    if (*p == '>' || *p == '|' || *p == '#' || *p == '`' || *p == '~' || *p == '<')
        return 0;
    if ((*p == '-' || *p == '*' || *p == '+') && (n == 1 || p[1] == ' '))
        return 0;
    size_t k = 0;
    while (k < n && p[k] >= '0' && p[k] <= '9')
        k++;
    if (k && k < n && (p[k] == '.' || p[k] == ')'))
        return 0;
    return 1;
}

struct cutter {
    const char *s;
    struct md_doc *d;
    int cap;
    char *stack[MD_MAX_DEPTH];
    size_t off;        /* the open section */
    int line, level;
    char *heading;
    int h1;            /* a level-1 heading was seen: the title's place is taken */
};

/* Closes the open section at byte `end` (kept when it holds text). */
static int close_section(struct cutter *c, size_t end)
{
    struct md_doc *d = c->d;
    if (blank(c->s, c->off, end) || d->nsec >= MD_MAX_SECTIONS) {
        free(c->heading);
        c->heading = NULL;
        return 0;
    }
    if (d->nsec == c->cap) {
        int nc = c->cap ? c->cap * 2 : 16;
        struct md_section *nv = realloc(d->sec, (size_t)nc * sizeof *nv);
        if (!nv)
            return -1;
        d->sec = nv;
        c->cap = nc;
    }
    struct md_section *x = &d->sec[d->nsec++];
    x->off = c->off;
    x->len = end - c->off;
    x->line = c->line;
    x->level = c->level;
    x->part = 0;
    x->heading = c->heading ? c->heading : strdup("");
    c->heading = NULL;
    return x->heading ? 0 : -1;
}

/* How far a link's target or a reference is looked for: as md_links. */
#define VIS_REACH (2 * MD_MAX_VALUE)
#define VIS_DEPTH 16           /* nested brackets tracked; deeper ones stay text */

/* Where the bracket or parenthesis opened at s[i] closes (nesting counted,
 * no newline crossed), within VIS_REACH bytes; 0 when it does not. */
static size_t vis_close(const char *s, size_t n, size_t i, char o, char c)
{
    size_t lim = i + VIS_REACH < n ? i + VIS_REACH : n;
    int depth = 0;
    for (size_t j = i; j < lim && s[j] != '\n'; j++) {
        if (s[j] == o)
            depth++;
        else if (s[j] == c && !--depth)
            return j;
    }
    return 0;
}

/* The length of a URL scheme ending just before s[i] ("https" of
 * "https://"), 0 when s[i..] is not "://" after one. */
static size_t vis_scheme(const char *s, size_t n, size_t i, size_t from)
{
    if (i + 3 > n || memcmp(s + i, "://", 3))
        return 0;
    size_t b = i;
    while (b > from && (isalnum((unsigned char)s[b - 1]) || s[b - 1] == '+' ||
                        s[b - 1] == '-' || s[b - 1] == '.'))
        b--;
    return b < i && isalpha((unsigned char)s[b]) ? i - b : 0;
}

size_t md_visible(const char *s, size_t n, char *out)
{
    size_t w = 0, open[VIS_DEPTH];
    int depth = 0, deep = 0;
    /* one pass; a '[' is written and remembered, and dropped (marked \1,
     * squeezed out at the end) when its ']' turns out to close a link's
     * text: no byte is moved twice, so the pass stays linear */
    for (size_t i = 0; i < n;) {
        char ch = s[i];
        if (ch == '`') {       /* a code span is shown as written */
            size_t run = 0;
            while (i + run < n && s[i + run] == '`')
                run++;
            size_t j = i + run, end = 0;
            for (size_t k = j; k + run <= n && k < j + VIS_REACH; k++)
                if (!memcmp(s + k, s + i, run) && (k + run == n || s[k + run] != '`')) {
                    end = k;
                    break;
                }
            size_t to = end ? end + run : i + run;
            memcpy(out + w, s + i, to - i);
            w += to - i;
            i = to;
            continue;
        }
        if (ch == '<' && i + 1 < n &&
            (isalpha((unsigned char)s[i + 1]) || s[i + 1] == '/' || s[i + 1] == '!')) {
            /* an HTML tag or an autolink <https://...>: no visible word */
            const char *gt = memchr(s + i, '>', (n - i < VIS_REACH ? n - i : VIS_REACH));
            if (gt && !memchr(s + i, '\n', (size_t)(gt - s) - i)) {
                out[w++] = ' ';
                i = (size_t)(gt - s) + 1;
                continue;
            }
        }
        size_t sch = vis_scheme(s, n, i, 0);
        if (sch && w >= sch) {
            /* a bare URL: its scheme was written already, take it back
             * and skip to the next space or bracket */
            w -= sch;
            i += 3;
            while (i < n && !isspace((unsigned char)s[i]) && s[i] != ']' && s[i] != ')' &&
                   s[i] != '>')
                i++;
            continue;
        }
        if (ch == '[') {
            if (depth < VIS_DEPTH)
                open[depth++] = w;
            else
                deep++;
            out[w++] = ch;
            i++;
            continue;
        }
        if (ch == ']' && deep) {
            deep--;
        } else if (ch == ']' && depth >= 2 && open[depth - 1] == open[depth - 2] + 1 &&
                   i + 1 < n && s[i + 1] == ']') {
            /* a wiki link [[Page|shown]]: the shown name, else the page */
            size_t at = open[depth - 2];
            depth -= 2;
            out[at] = out[at + 1] = 1;
            for (size_t k = at + 2; k < w; k++)
                if (out[k] == '|') {
                    memset(out + at + 2, 1, k + 1 - (at + 2));
                    break;
                }
            i += 2;
            continue;
        } else if (ch == ']' && depth) {
            size_t at = open[--depth], end = 0;
            if (i + 1 < n && s[i + 1] == '(')
                end = vis_close(s, n, i + 1, '(', ')');
            else if (i + 1 < n && s[i + 1] == '[')
                end = vis_close(s, n, i + 1, '[', ']');
            if (end) {         /* a link's text or an image's alt text */
                out[at] = 1;
                if (at && out[at - 1] == '!')
                    out[at - 1] = 1;
                i = end + 1;
                continue;
            }
        }
        out[w++] = ch;
        i++;
    }
    /* squeeze out the dropped bytes and runs of space */
    size_t k = 0;
    for (size_t r = 0; r < w; r++) {
        char c = out[r] == '\t' ? ' ' : out[r];
        if (c == 1 || (c == ' ' && (!k || out[k - 1] == ' ')))
            continue;
        out[k++] = c;
    }
    while (k && out[k - 1] == ' ')
        k--;
    out[k] = 0;
    return k;
}

/* A heading of `level` with text t starts a section at byte off, line. */
static int open_section(struct cutter *c, size_t off, int line, int level, const char *t,
                        size_t tn)
{
    /* past the cap, headings stay inside the last section */
    if (c->d->nsec >= MD_MAX_SECTIONS - 1)
        return 0;
    if (close_section(c, off))
        return -1;
    for (int i = level - 1; i < MD_MAX_DEPTH; i++) {
        free(c->stack[i]);
        c->stack[i] = NULL;
    }
    /* the heading's visible words: a badge's or a link's URL names no
     * section (docs/VAULTS.md, branch vault32) */
    char *vis = malloc(tn + 1);
    if (!vis)
        return -1;
    size_t vn = md_visible(t, tn, vis);
    c->stack[level - 1] = copy_value(vis, vn);
    free(vis);
    if (!c->stack[level - 1])
        return -1;
    size_t len = 0;
    for (int i = 0; i < level; i++)
        if (c->stack[i])
            len += strlen(c->stack[i]) + 3;
    char *h = malloc(len + 1), *w = h;
    if (!h)
        return -1;
    for (int i = 0; i < level; i++) {
        if (!c->stack[i])
            continue;
        if (w != h) {
            memcpy(w, " > ", 3);
            w += 3;
        }
        size_t k = strlen(c->stack[i]);
        memcpy(w, c->stack[i], k);
        w += k;
    }
    *w = 0;
    c->heading = h;
    c->off = off;
    c->line = line;
    c->level = level;
    /* the first level-1 heading is the title; one with no visible word
     * (a badge alone) leaves the file's name to name the page */
    if (level == 1 && !c->h1++ && !c->d->title && *c->stack[0] &&
        !(c->d->title = strdup(c->stack[0])))
        return -1;
    return 0;
}

static int wiki_links(const char *s, size_t from, size_t n, struct md_doc *d)
{
    for (size_t i = from; i + 1 < n && d->nlinks < MD_MAX_LINKS;) {
        const char *o = memchr(s + i, '[', n - i - 1);
        if (!o)
            break;
        i = (size_t)(o - s);
        if (s[i + 1] != '[') {
            i++;
            continue;
        }
        size_t a = i + 2, e = a, lim = a + 2 * MD_MAX_VALUE < n ? a + 2 * MD_MAX_VALUE : n;
        while (e + 1 < lim && !(s[e] == ']' && s[e + 1] == ']') && s[e] != '\n' && s[e] != '[')
            e++;
        if (e + 1 >= lim || s[e] != ']' || s[e + 1] != ']') {
            i = a;
            continue;
        }
        size_t t = a;
        while (t < e && s[t] != '|' && s[t] != '#')
            t++;
        if (add_item(d->links, &d->nlinks, MD_MAX_LINKS, s + a, t - a, 0))
            return -1;
        i = e + 2;
    }
    return 0;
}

/* Links to another Markdown file of the folder, `[text](../x/Page.md#h)`,
 * give their page as a wiki link does: the file's name without its
 * extension, which is an alias of every page (its file's name). A target
 * with a scheme (`https://`, `mailto:`) or of another type is no page.
 * Each "](" is read at most 2 x MD_MAX_VALUE bytes on: linear. */
static int md_links(const char *s, size_t from, size_t n, struct md_doc *d)
{
    for (size_t i = from; i + 1 < n && d->nlinks < MD_MAX_LINKS;) {
        const char *o = memchr(s + i, ']', n - i - 1);
        if (!o)
            break;
        i = (size_t)(o - s) + 1;
        if (s[i] != '(')
            continue;
        size_t a = i + 1, e = a, lim = a + 2 * MD_MAX_VALUE < n ? a + 2 * MD_MAX_VALUE : n;
        int scheme = 0;
        while (e < lim && s[e] != ')' && s[e] != ' ' && s[e] != '\n' && s[e] != '#' &&
               s[e] != '?') {
            scheme |= s[e] == ':';
            e++;
        }
        if (scheme || e == a || e >= lim)   /* a URL, or no end in reach */
            continue;
        size_t ext = e >= a + 3 && !strncasecmp(s + e - 3, ".md", 3) ? 3
                   : e >= a + 9 && !strncasecmp(s + e - 9, ".markdown", 9) ? 9 : 0;
        if (!ext)
            continue;
        size_t b = e - ext;
        while (b > a && s[b - 1] != '/')
            b--;
        if (add_item(d->links, &d->nlinks, MD_MAX_LINKS, s + b, e - ext - b, 0))
            return -1;
        i = e;
    }
    return 0;
}

int md_parse(const char *s, size_t n, struct md_doc *d)
{
    struct cutter c;
    struct line l, prev = { 0, 0, 0 };
    int lines = 0, rc = -1, prev_para = 0;
    struct fence_state fs = { 0 };

    memset(d, 0, sizeof *d);
    memset(&c, 0, sizeof c);
    c.s = s;
    c.d = d;
    if (frontmatter(s, n, d, &lines))
        goto out;
    c.off = d->body;
    c.line = lines + 1;
    int line = lines;
    for (size_t at = d->body; at < n; at = l.next) {
        next_line(s, n, at, &l);
        line++;
        if (code_line(s, &l, &fs)) {
            prev_para = 0;
            continue;
        }
        const char *t;
        size_t tn;
        int level = atx(s, &l, &t, &tn), u;
        if (level) {
            if (open_section(&c, l.start, line, level, t, tn))
                goto out;
            prev_para = 0;
            continue;
        }
        if (prev_para && (u = setext(s, &l))) {
            /* the line above is the heading's text: the section starts there */
            t = s + prev.start;
            tn = prev.end - prev.start;
            trim(&t, &tn);
            if (open_section(&c, prev.start, line - 1, u, t, tn))
                goto out;
            prev_para = 0;
            continue;
        }
        /* a paragraph's first line after a blank one, or any of its lines */
        prev_para = para_line(s, &l);
        prev = l;
    }
    if (close_section(&c, n) || wiki_links(s, d->body, n, d) || md_links(s, d->body, n, d))
        goto out;
    rc = 0;
out:
    free(c.heading);
    for (int i = 0; i < MD_MAX_DEPTH; i++)
        free(c.stack[i]);
    if (rc)
        md_doc_free(d);
    return rc;
}

/* The sections md_split builds. */
struct pieces {
    struct md_section *v;
    int n, cap;
};

/* Appends x's piece [off, end) starting on line; the first piece takes
 * x's heading, the others a copy. */
static int push_piece(struct pieces *p, struct md_section *x, size_t off, size_t end, int line)
{
    if (p->n == p->cap) {
        int nc = p->cap ? p->cap * 2 : 16;
        struct md_section *nv = realloc(p->v, (size_t)nc * sizeof *nv);
        if (!nv)
            return -1;
        p->v = nv;
        p->cap = nc;
    }
    struct md_section *y = &p->v[p->n];
    *y = *x;
    y->off = off;
    y->len = end - off;
    y->line = line;
    y->part = x->heading ? 0 : p->v[p->n - 1].part + 1;
    y->heading = x->heading ? x->heading : strdup(p->v[p->n - 1].heading);
    x->heading = NULL;
    if (!y->heading)
        return -1;
    p->n++;
    return 0;
}

/* Section x as it is, or in pieces of about total/k tokens (k the fewest
 * of at most max_tok): a piece ends after the paragraph that takes it to
 * that size, or before one that would take it past max_tok; at most room
 * pieces more than one. */
static int split_one(const char *s, struct md_section *x, int max_tok, int room, struct pieces *p)
{
    /* only the text before a page's first heading (all of a page without
     * one): a long section under a heading stays whole (docs/VAULTS.md:
     * cutting those put Docker's API pages, whose pieces then hold every
     * word of a question, above the right page). A token has a byte at
     * least: a short section is not counted. */
    int total = room > 0 && !x->level && x->len > (size_t)max_tok
                    ? text_count_words(s + x->off, x->len) : 0;
    if (total < 0)
        return -1;
    if (total <= max_tok)
        return push_piece(p, x, x->off, x->off + x->len, x->line);
    int k = (total + max_tok - 1) / max_tok, target = (total + k - 1) / k;
    int acc = 0, made = 0, line = x->line, start_line = x->line, para_line = x->line;
    int seek = 0, in_para = 0;
    size_t end = x->off + x->len, start = x->off, para = x->off;
    struct fence_state fs = { 0 };
    struct line l;
    for (size_t at = x->off; at <= end; at = l.next, line++) {
        int last = at == end, c;
        if (!last)
            next_line(s, end, at, &l);
        int empty = last || blank(s, l.start, l.end), code = !last && code_line(s, &l, &fs);
        if ((code || !empty) && !in_para) {
            para = l.start;
            para_line = line;
            in_para = 1;
            if (seek) {
                /* the next piece starts on its first line with text */
                start = para;
                start_line = line;
                seek = 0;
            }
        }
        /* a blank line outside code (or the end) ends a paragraph */
        if (code || !empty || !in_para) {
            if (last)
                break;
            continue;
        }
        in_para = 0;
        if ((c = text_count_words(s + para, (last ? end : l.start) - para)) < 0)
            return -1;
        if (acc && acc + c > max_tok && made < room) {
            if (push_piece(p, x, start, para, start_line))
                return -1;
            start = para;
            start_line = para_line;
            made++;
            acc = 0;
        }
        acc += c;
        if (acc >= target && !last && made < room) {
            if (push_piece(p, x, start, l.next, start_line))
                return -1;
            made++;
            acc = 0;
            seek = 1;
        }
        if (last)
            break;
    }
    /* what is left, unless it is only blank lines */
    return seek ? 0 : push_piece(p, x, start, end, start_line);
}

int md_split(const char *s, struct md_doc *d, int max_tok)
{
    struct pieces p = { NULL, 0, 0 };
    int rc = -1;
    if (max_tok <= 0)
        return 0;
    for (int i = 0; i < d->nsec; i++)
        if (split_one(s, &d->sec[i], max_tok, MD_MAX_SECTIONS - p.n - (d->nsec - i), &p))
            goto out;
    free(d->sec);
    d->sec = p.v;
    d->nsec = p.n;
    p.v = NULL;
    p.n = 0;
    rc = 0;
out:
    for (int i = 0; i < p.n; i++)
        free(p.v[i].heading);
    free(p.v);
    if (rc)
        md_doc_free(d);     /* the headings moved to p are NULL there */
    return rc;
}
