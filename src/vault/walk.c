/*
 * walk.c: a vault folder's Markdown files and its .gitignore rules
 * (walk.h). Reads directories and stats files; opens only .gitignore
 * files, read-only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vault/walk.h"
#include "util/utf8.h"

struct walk_rule {
    char *base;        /* the folder of its .gitignore, relative ("" the root) */
    char *pat;
    int   negate, dir_only, anchored;
};

void walk_free(struct walk *w)
{
    for (int i = 0; i < w->n; i++)
        free(w->f[i].path);
    free(w->f);
    for (int i = 0; i < w->nr; i++) {
        free(w->r[i].base);
        free(w->r[i].pat);
    }
    free(w->r);
    memset(w, 0, sizeof *w);
}

/* A class "[...]" at g (after '['): 1 when c is in it; *end past ']'. A
 * class without its ']' is a literal '['. */
static int glob_class(const char *g, char c, const char **end)
{
    const char *p = g;
    int neg = *p == '!' || *p == '^', in = 0;
    if (neg)
        p++;
    for (int first = 1; *p && (*p != ']' || first); first = 0) {
        char lo = *p, hi = lo;
        if (p[1] == '-' && p[2] && p[2] != ']') {
            hi = p[2];
            p += 3;
        } else {
            p++;
        }
        if (c >= lo && c <= hi)
            in = 1;
    }
    if (*p != ']') {
        *end = NULL;
        return 0;
    }
    *end = p + 1;
    return in != neg;
}

/*
 * Matching as a set of positions: at[i] is 1 when the pattern read so far
 * can end at name[i]. Each pattern element moves the set along in one
 * pass over the name, so a hostile pattern costs O(pattern x name) and
 * no backtracking can go wrong: backtracking to the last star alone (the
 * first version) lost the '**' when a '*' came after it, so a rule "docs",
 * "**", "*.tmp" joined by slashes refused docs/a/b.tmp, and it let "a",
 * "**", "b" joined by slashes take a/xb.
 *   '*'   any run without '/';        '**'  any run;
 *   '**' + '/'  nothing, or a run ending in '/' (zero or more folders);
 *   '?'   one byte but '/';   [...]  a class (never '/');   else itself.
 */
int walk_glob(const char *g, const char *s)
{
    size_t n = strlen(s);
    unsigned char buf[2][PATH_MAX + 1], *at = buf[0], *nx = buf[1];

    if (n > PATH_MAX)
        return 0;                     /* no such name on this system */
    memset(at, 0, n + 1);
    at[0] = 1;
    while (*g) {
        int any = 0;
        memset(nx, 0, n + 1);
        if (*g == '*') {
            while (*g == '*')
                any++, g++;
            if (any > 1 && *g == '/') {            /* zero or more folders */
                g++;
                for (size_t i = 0, seen = 0; i <= n; i++) {
                    nx[i] = at[i] || (seen && s[i - 1] == '/');
                    seen |= at[i];
                }
            } else {
                for (size_t i = 0, seen = 0; i <= n; i++) {
                    if (any == 1 && i > 0 && s[i - 1] == '/')
                        seen = 0;                  /* '*' stops at '/' */
                    seen |= at[i];
                    nx[i] = (unsigned char)seen;
                }
            }
        } else {
            const char *end = g + 1;
            for (size_t i = 0; i < n; i++) {
                int ok;
                if (!at[i])
                    continue;
                if (*g == '?')
                    ok = s[i] != '/';
                else if (*g == '[' && (ok = glob_class(g + 1, s[i], &end), end))
                    ok = ok && s[i] != '/';
                else
                    ok = *g == s[i], end = g + 1;
                nx[i + 1] = (unsigned char)ok;
            }
            if (*g == '[')                          /* where the class ends */
                glob_class(g + 1, 0, &end);
            g = end ? end : g + 1;
        }
        unsigned char *t = at;
        at = nx;
        nx = t;
    }
    return at[n];
}

static int add_rule(struct walk *w, const char *base, const char *line, size_t n)
{
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\r' || line[n - 1] == '\t'))
        n--;
    if (!n || *line == '#' || n > WALK_MAX_PATTERN || w->nr >= WALK_MAX_RULES)
        return 0;
    struct walk_rule r = { 0 };
    if (*line == '!') {
        r.negate = 1;
        line++;
        n--;
    }
    if (n && line[n - 1] == '/') {
        r.dir_only = 1;
        n--;
    }
    if (n && *line == '/') {
        r.anchored = 1;
        line++;
        n--;
    }
    if (!n)
        return 0;
    if (memchr(line, '/', n))
        r.anchored = 1;
    if (w->nr == w->cr) {
        int nc = w->cr ? w->cr * 2 : 16;
        struct walk_rule *nv = realloc(w->r, (size_t)nc * sizeof *nv);
        if (!nv)
            return -1;
        w->r = nv;
        w->cr = nc;
    }
    if (!(r.base = strdup(base)) || !(r.pat = strndup(line, n))) {
        free(r.base);
        return -1;
    }
    w->r[w->nr++] = r;
    return 0;
}

static int add_rules(struct walk *w, const char *base, const char *text, size_t n)
{
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(text + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - text) : n;
        if (add_rule(w, base, text + i, e - i))
            return -1;
        i = e + 1;
    }
    return 0;
}

/* dir/.gitignore's rules, when there is one (its first WALK_MAX_IGNORE bytes). */
static int read_ignore(struct walk *w, const char *dir, const char *base)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/.gitignore", dir) >= sizeof path)
        return 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    char *text = NULL;
    ssize_t k = 0;
    int reg = !fstat(fd, &st) && S_ISREG(st.st_mode);
    if (reg && (text = malloc(WALK_MAX_IGNORE)))
        k = read(fd, text, WALK_MAX_IGNORE);
    close(fd);
    int rc = k > 0 ? add_rules(w, base, text, (size_t)k) : 0;
    free(text);
    if (!text && reg)
        return -1;                    /* no memory for it */
    return rc;
}

/* 1 when rel (relative to the root) is excluded: the last rule that
 * matches decides. */
static int excluded(const struct walk *w, const char *rel, int is_dir)
{
    int out = 0;
    for (int i = 0; i < w->nr; i++) {
        const struct walk_rule *r = &w->r[i];
        size_t bl = strlen(r->base);
        const char *q = rel;
        if (bl) {
            if (strncmp(rel, r->base, bl) || rel[bl] != '/')
                continue;
            q = rel + bl + 1;
        }
        if (r->dir_only && !is_dir)
            continue;
        if (!r->anchored) {
            const char *slash = strrchr(q, '/');
            q = slash ? slash + 1 : q;
        }
        if (walk_glob(r->pat, q))
            out = !r->negate;
    }
    return out;
}

static int is_markdown(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && dot != name && (!strcasecmp(dot, ".md") || !strcasecmp(dot, ".markdown"));
}

static int add_file(struct walk *w, const char *rel, const struct stat *st)
{
    if (w->n == w->cap) {
        int nc = w->cap ? w->cap * 2 : 64;
        struct walk_file *nv = realloc(w->f, (size_t)nc * sizeof *nv);
        if (!nv)
            return -1;
        w->f = nv;
        w->cap = nc;
    }
    struct walk_file *f = &w->f[w->n];
    if (!(f->path = strdup(rel)))
        return -1;
    f->size = st->st_size;
    f->mtime = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    w->n++;
    return 0;
}

static int walk_dir(struct walk *w, const char *dir, const char *rel, int depth, int max)
{
    if (read_ignore(w, dir, rel))
        return -1;
    DIR *d = opendir(dir);
    if (!d)
        return 0;            /* unreadable below the root: left out */
    struct dirent *e;
    int rc = 0;
    while (!rc && !w->truncated && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX], sub[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path ||
            (size_t)snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name) >=
                sizeof sub || !utf8_valid(e->d_name, strlen(e->d_name))) {
            w->odd++;
            continue;
        }
        struct stat st;
        if (lstat(path, &st))
            continue;
        int is_dir = S_ISDIR(st.st_mode);
        if (!is_dir && !(S_ISREG(st.st_mode) && is_markdown(e->d_name)))
            continue;
        if (excluded(w, sub, is_dir)) {
            w->excluded++;
            continue;
        }
        if (is_dir) {
            if (depth + 1 >= WALK_MAX_DEPTH) {
                w->odd++;
                continue;
            }
            rc = walk_dir(w, path, sub, depth + 1, max);
        } else if (w->n >= max) {
            w->truncated = 1;
        } else {
            rc = add_file(w, sub, &st);
        }
    }
    closedir(d);
    return rc;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct walk_file *)a)->path, ((const struct walk_file *)b)->path);
}

int walk_vault(const char *root, const char *excludes, int max_files, struct walk *w)
{
    memset(w, 0, sizeof *w);
    DIR *d = opendir(root);
    if (!d)
        return errno ? errno : EIO;
    closedir(d);
    if (excludes && add_rules(w, "", excludes, strlen(excludes)))
        goto nomem;
    if (walk_dir(w, root, "", 0, max_files))
        goto nomem;
    if (w->n)
        qsort(w->f, (size_t)w->n, sizeof *w->f, by_path);
    return 0;
nomem:
    walk_free(w);
    return -1;
}

const char *walk_check_excludes(const char *ex)
{
    int lines = 0;
    for (const char *p = ex; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n > WALK_MAX_PATTERN)
            return "an exclude pattern is longer than 256 bytes";
        if (++lines > 64)
            return "more than 64 exclude patterns";
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)p[i] < 0x20 && p[i] != '\t')
                return "an exclude pattern holds a control character";
        p = nl ? nl + 1 : p + n;
    }
    return NULL;
}
