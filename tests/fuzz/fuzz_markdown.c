/*
 * fuzz_markdown.c: libFuzzer target for the Markdown note parser
 * (src/text/markdown.c: frontmatter, headings, sections, wiki and .md links) and
 * its binary sniff, on any bytes. Sections must be non-empty byte ranges
 * of the input, in order and not overlapping, with increasing start
 * lines; every list within its cap and every value within MD_MAX_VALUE.
 * The same after md_split at a small cut (the input's first byte): pieces
 * numbered in their section, within the cap.
 * The input's second and third parts (fuzz.h: cut at NULs) are a vault's
 * exclude glob and a path (src/vault/walk.c): the same answer twice, and a
 * path with no glob character matches itself.
 */
#include "fuzz.h"
#include "text/markdown.h"
#include "vault/walk.h"

static void check_value(const char *v)
{
    if (!v || strlen(v) > MD_MAX_VALUE)
        abort();
}

static void fuzz_glob(const struct fuzz_part *g, const struct fuzz_part *n)
{
    char *gs = strndup(g->p, g->n), *ns = strndup(n->p, n->n);
    if (!gs || !ns)
        abort();
    int a = walk_glob(gs, ns);
    if (a != walk_glob(gs, ns))
        abort();
    if (!strpbrk(ns, "*?[") && !walk_glob(ns, ns))
        abort();
    free(gs);
    free(ns);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_part parts[3];
    if (fuzz_split(data, size, parts, 3) == 3)
        fuzz_glob(&parts[1], &parts[2]);
    char *s = malloc(size ? size : 1);      /* exactly size bytes: no terminator */
    if (!s)
        abort();
    memcpy(s, data, size);
    (void)md_is_binary(s, size);
    struct md_doc d;
    if (md_parse(s, size, &d) || md_split(s, &d, size ? 1 + data[0] % 64 : 0)) {
        free(s);
        return 0;
    }
    if (d.nsec > MD_MAX_SECTIONS || d.ntags > MD_MAX_LIST || d.naliases > MD_MAX_LIST ||
        d.nlinks > MD_MAX_LINKS || d.body > size)
        abort();
    size_t end = d.body;
    int line = 0;
    for (int i = 0; i < d.nsec; i++) {
        const struct md_section *x = &d.sec[i];
        if (x->off < end || !x->len || x->off + x->len > size || x->line <= line ||
            x->level < 0 || x->level > MD_MAX_DEPTH || !x->heading || x->part < 0 ||
            (x->part && (!i || d.sec[i - 1].part != x->part - 1 || x->level)))
            abort();
        end = x->off + x->len;
        line = x->line;
    }
    if (d.title)
        check_value(d.title);
    for (int i = 0; i < d.ntags; i++)
        check_value(d.tags[i]);
    for (int i = 0; i < d.naliases; i++)
        check_value(d.aliases[i]);
    for (int i = 0; i < d.nlinks; i++)
        check_value(d.links[i]);
    md_doc_free(&d);
    free(s);
    return 0;
}
