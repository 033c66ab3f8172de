/*
 * fuzz_markdown.c: libFuzzer target for the Markdown note parser
 * (src/text/markdown.c: frontmatter, headings, sections, wiki links) and
 * its binary sniff, on any bytes. Sections must be non-empty byte ranges
 * of the input, in order and not overlapping, with increasing start
 * lines; every list within its cap and every value within MD_MAX_VALUE.
 */
#include "fuzz.h"
#include "text/markdown.h"

static void check_value(const char *v)
{
    if (!v || strlen(v) > MD_MAX_VALUE)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size ? size : 1);      /* exactly size bytes: no terminator */
    if (!s)
        abort();
    memcpy(s, data, size);
    (void)md_is_binary(s, size);
    struct md_doc d;
    if (md_parse(s, size, &d)) {
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
            x->level < 0 || x->level > MD_MAX_DEPTH || !x->heading)
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
