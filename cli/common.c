/*
 * common.c: helpers the command files share (cli.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "util/buf.h"
#include "util/fence.h"
#include "util/os.h"

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("cairn: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_open(struct cli_ctx *ctx, unsigned flags, struct cairn **out)
{
    const char *path = cli_db_path(ctx);
    int rc = cli_db_open(path, flags, out);
    if (rc) {
        /* A new user's first `cairn sessions` lands here: say what makes one. */
        cli_error("%s%s", cairn_errmsg(*out),
                  rc == CAIRN_NOTFOUND ? " (cairn add or cairn import creates it)" : "");
        cairn_close(*out);
        *out = NULL;
        return 1;
    }
    return 0;
}

int cli_fail(struct cairn *db, const char *what, int rc)
{
    cli_error("%s: %s", what, db ? cairn_errmsg(db) : cairn_errstr(rc));
    return 1;
}

char *cli_read_file(const char *path, size_t cap, size_t *len)
{
    FILE *f = stdin;
    struct buf b;
    char chunk[65536];
    size_t n;
    buf_init(&b, cap);
    if (path && strcmp(path, "-")) {
        f = fopen(path, "rb");
        if (!f) {
            cli_error("cannot open %s: %s", path, strerror(errno));
            return NULL;
        }
    }
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (buf_add(&b, chunk, n))
            break;
    }
    int err = ferror(f);
    if (f != stdin)
        fclose(f);
    if (b.err == BUF_TOOBIG) {
        cli_error("%s: larger than %zu bytes", path ? path : "stdin", cap);
        return NULL;
    }
    if (err || b.err) {
        cli_error("cannot read %s", path ? path : "stdin");
        buf_release(&b);
        return NULL;
    }
    return buf_detach(&b, len);
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
    size_t nl = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, nl))
        return 0;
    if (a[nl] == '=') {
        *val = a + nl + 1;
        (*i)++;
        return 1;
    }
    if (a[nl])
        return 0;
    if (*i + 1 >= argc) {
        cli_error("%s needs a value", name);
        exit(2);
    }
    *val = argv[*i + 1];
    *i += 2;
    return 1;
}

void cli_json_time_field(struct buf *b, const char *name, int64_t t, int *first)
{
    char ts[40];
    if (t == CAIRN_NO_TIME)
        return;
    cairn_format_time(t, 1, ts, sizeof ts);
    buf_printf(b, "%s\"%s\":\"%s\"", *first ? "" : ",", name, ts);
    *first = 0;
}

void cli_json_str_field(struct buf *b, const char *name, const char *v, int *first)
{
    if (!v || !*v)
        return;
    buf_printf(b, "%s\"%s\":", *first ? "" : ",", name);
    buf_add_json_str(b, v, strlen(v));
    *first = 0;
}

void cli_print_line(const char *s)
{
    struct buf b = BUF_INIT;
    fence_line(&b, s ? s : "", s ? strlen(s) : 0);
    fwrite(b.p, 1, b.n, stdout);
    buf_release(&b);
}

const char *cli_s(long long n)
{
    return n == 1 ? "" : "s";
}

int cli_count_session(void *arg, const struct cairn_session_info *s)
{
    (void)s;
    ++*(size_t *)arg;
    return 0;
}

void cli_recall_intro(struct buf *b, const struct cairn_recall *r, const char *tail)
{
    int mem = 0, note = 0, conv = 0;
    for (size_t i = 0; r && i < r->n_items; i++) {
        if (r->items[i].memory)
            mem = 1;
        else if (r->items[i].note_path)
            note = 1;
        else
            conv = 1;
    }
    const char *part[3];
    int n = 0;
    if (mem)
        part[n++] = "kept memories";
    if (note)
        part[n++] = "notes from the user's Markdown vaults (path:line)";
    if (conv || !n)
        part[n++] = "past conversations";
    buf_reset(b);
    for (int i = 0; i < n; i++)
        buf_printf(b, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", part[i]);
    if (!b->err && b->n)
        b->p[0] = (char)(b->p[0] - 'a' + 'A');
    buf_adds(b, tail);
}

void cli_tiers_when_due(struct cairn *db, const char *what, int quiet)
{
    int due = 0;
    int64_t msgs = 0, terms = 0, rows = 0;
    if (cairn_tier_due(db, &due, &msgs) || !due)
        return;
    if (!quiet)
        fprintf(stderr, "%s: %lld messages: building the term tiers the prompt hook reads "
                "(once; adds keep them; CAIRN_TIER_KEEP=0 skips)\n", what, (long long)msgs);
    int rc = cairn_tier_build(db, &terms, &rows);
    if (rc)
        cli_fail(db, "term tiers", rc);
    else if (!quiet)
        fprintf(stderr, "%s: term tiers: %lld common word%s, %lld row%s\n", what,
                (long long)terms, cli_s(terms), (long long)rows, cli_s(rows));
}

/* A one-shot process (a hook, `cairn recall`): memory it frees is worth
 * keeping for its next arrays rather than handing back. glibc serves an
 * array of 128 KB or more by its own mmap and unmaps it when freed, so each
 * such array is fresh pages, each a fault (the packed postings' matches,
 * ~5.6 MB at a million messages, freed just before the pool's 1.7 MB is
 * populated). From the heap, and with the heap not trimmed, the next arrays
 * reuse their pages: 2,520 -> 1,750 faults a hook at a million
 * (bench/README.md, "The hook at 100,000: fixed costs, faults and five
 * cuts"). Not for `cairn mcp` or `cairn web`, which live long and should
 * give memory back. Advice only: a failed mallopt changes nothing but the
 * faults. */
void cli_one_shot_heap(void)
{
    os_heap_keep();
}

/* The recall's heap faulted in before the store is opened (by its path):
 * SQLite's open, its schema's objects and its page cache take from the
 * same heap, ~60 more traps a hook when they came first (issue 23,
 * hook50); how much, by the store's size, os_heap_reserve_size. A recall
 * that scans the vector file beside the store (PATH-vec) takes ~1.5 MB
 * more at 100,000 vectors (the cosines, 4 bytes a vector; the question's
 * encoder's work; the scan's buffers): a 2 MB page more, or the hybrid
 * hook traps ~160 times more (issue 16, hyb54); and 16 bytes a vector
 * more since hyb55b (the pieces' rows read beside the cosines, 1.5 MB:
 * else ~175 traps more), so two. */
#define CLI_DENSE_RESERVE ((size_t)4 << 20)

int cli_heap_reserve(const char *path, int exact, int dense)
{
    char def[PATH_MAX], vec[PATH_MAX + 8];
    struct stat st;
    if (!path && cli_default_path(def, sizeof def) == CAIRN_OK)
        path = def;
    int scan = path && dense && (size_t)snprintf(vec, sizeof vec, "%s-vec", path) < sizeof vec &&
               stat(vec, &st) == 0;
    size_t n = path && stat(path, &st) == 0 && st.st_size > 0
                   ? os_heap_reserve_size((uint64_t)st.st_size, exact) : 0;
    if (n && scan)
        n += CLI_DENSE_RESERVE;
    if (n)
        os_heap_reserve(n);
    return scan;
}
