/*
 * test_markdown.c: the Markdown note parser (src/text/markdown.c):
 * frontmatter lists in both forms, ATX and setext headings with their
 * paths and start lines, fenced code kept inside its section, wiki links
 * and links to .md files,
 * caps on hostile sizes, binary detection; long sections cut in pieces at
 * blank lines outside code (md_split).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "text/markdown.h"
#include "text/tokenize.h"
#include "util/buf.h"

static const char *sec_text(const char *s, const struct md_section *x, char *out, size_t cap)
{
    size_t n = x->len < cap - 1 ? x->len : cap - 1;
    memcpy(out, s + x->off, n);
    out[n] = 0;
    return out;
}

static void test_frontmatter(void)
{
    const char *s = "---\n"
                    "title: \"Payments Service\"\n"
                    "tags: [billing, '#stripe', billing]\n"
                    "aliases:\n"
                    "  - Payments\n"
                    "  - \"PSP, the provider\"\n"
                    "other: x\n"
                    "---\n"
                    "We chose Stripe.\n";
    struct md_doc d;
    T_EQ_INT(md_parse(s, strlen(s), &d), 0);
    T_EQ_STR(d.title, "Payments Service");
    T_EQ_INT(d.ntags, 2);
    T_EQ_STR(d.tags[0], "billing");
    T_EQ_STR(d.tags[1], "stripe");
    T_EQ_INT(d.naliases, 2);
    T_EQ_STR(d.aliases[0], "Payments");
    T_EQ_STR(d.aliases[1], "PSP, the provider");
    T_EQ_INT(d.nsec, 1);
    T_EQ_INT(d.sec[0].line, 9);
    T_EQ_INT(d.sec[0].level, 0);
    md_doc_free(&d);

    /* tags as a scalar, words apart; CRLF lines */
    s = "---\r\ntags: alpha beta, gamma\r\n---\r\nbody\r\n";
    T_EQ_INT(md_parse(s, strlen(s), &d), 0);
    T_EQ_INT(d.ntags, 3);
    T_EQ_STR(d.tags[2], "gamma");
    T_EQ_INT(d.sec[0].line, 4);
    md_doc_free(&d);

    /* no closing line: not frontmatter */
    s = "---\ntitle: x\nno end\n";
    T_EQ_INT(md_parse(s, strlen(s), &d), 0);
    T_CHECK(d.title == NULL);
    T_EQ_INT(d.nsec, 1);
    T_EQ_INT(d.sec[0].line, 1);
    md_doc_free(&d);
}

static void test_headings(void)
{
    const char *s = "intro line\n"            /* 1 */
                    "\n"                      /* 2 */
                    "# Setup\n"               /* 3 */
                    "text\n"                  /* 4 */
                    "## Linux ##\n"           /* 5 */
                    "```sh\n"                 /* 6 */
                    "# not a heading\n"       /* 7 */
                    "```\n"                   /* 8 */
                    "Windows\n"               /* 9 */
                    "-------\n"               /* 10 */
                    "see [[Other Page|the other]] and [[Third#Part]]\n" /* 11 */
                    "\n"
                    "- item\n"
                    "---\n"                   /* a rule after a list item, not a heading */
                    "#hashtag is no heading\n"
                    "#\n";                    /* an empty heading */
    struct md_doc d;
    char buf[256];
    T_EQ_INT(md_parse(s, strlen(s), &d), 0);
    T_EQ_INT(d.nsec, 5);
    T_EQ_INT(d.sec[4].level, 1);          /* "#" alone: an empty heading */
    T_EQ_STR(d.sec[4].heading, "");
    T_EQ_STR(d.title, "Setup");
    T_EQ_STR(d.sec[0].heading, "");
    T_EQ_INT(d.sec[0].line, 1);
    T_EQ_STR(d.sec[1].heading, "Setup");
    T_EQ_INT(d.sec[1].line, 3);
    T_EQ_STR(d.sec[2].heading, "Setup > Linux");
    T_EQ_INT(d.sec[2].line, 5);
    T_CHECK(strstr(sec_text(s, &d.sec[2], buf, sizeof buf), "# not a heading") != NULL);
    T_EQ_STR(d.sec[3].heading, "Setup > Windows");
    T_EQ_INT(d.sec[3].line, 9);
    T_EQ_INT(d.sec[3].level, 2);
    T_CHECK(strstr(sec_text(s, &d.sec[3], buf, sizeof buf), "#hashtag") != NULL);
    T_EQ_INT(d.nlinks, 2);
    T_EQ_STR(d.links[0], "Other Page");
    T_EQ_STR(d.links[1], "Third");
    md_doc_free(&d);
}

static void test_caps(void)
{
    /* 10,000 headings: the last section keeps the rest */
    size_t n = 10000 * 8;
    char *s = malloc(n + 1);
    for (int i = 0; i < 10000; i++)
        memcpy(s + i * 8, "# h\nxx\n\n", 8);
    s[n] = 0;
    struct md_doc d;
    T_EQ_INT(md_parse(s, n, &d), 0);
    T_EQ_INT(d.nsec, MD_MAX_SECTIONS);
    T_CHECK(d.sec[d.nsec - 1].off + d.sec[d.nsec - 1].len == n);
    md_doc_free(&d);
    /* a 5000-byte title is cut; 300 tags keep 64 */
    size_t m = 20000;
    char *f = malloc(m);
    size_t k = (size_t)snprintf(f, m, "---\ntitle: ");
    memset(f + k, 'a', 5000);
    k += 5000;
    k += (size_t)snprintf(f + k, m - k, "\ntags: [");
    for (int i = 0; i < 300; i++)
        k += (size_t)snprintf(f + k, m - k, "t%d,", i);
    k += (size_t)snprintf(f + k, m - k, "]\n---\nx\n");
    T_EQ_INT(md_parse(f, k, &d), 0);
    T_EQ_INT((int)strlen(d.title), MD_MAX_VALUE);
    T_EQ_INT(d.ntags, MD_MAX_LIST);
    md_doc_free(&d);
    free(f);
    free(s);
}

/* Links to Markdown files name their page as a wiki link does (the file's
 * name): the link lift reads them (recall/notes.c). Not a URL, an image or
 * another file type; anchors and folders dropped; each page once. */
static void test_md_links(void)
{
    const char *s = "# Prune\n\n"
                    "See [system prune](system_prune.md), [the run docs](../run.md#restart),\n"
                    "[again](./system_prune.md) and [Notes](Some%20Page.markdown).\n"
                    "Not [a site](https://example.com/x.md), [mail](mailto:a@b.md),\n"
                    "[a picture](img.png), [](.md) or [text] (spaced.md).\n"
                    "[[Wiki Page|shown]]\n";
    struct md_doc d;
    T_EQ_INT(md_parse(s, strlen(s), &d), 0);
    T_EQ_INT(d.nlinks, 4);
    T_EQ_STR(d.links[0], "Wiki Page");
    T_EQ_STR(d.links[1], "system_prune");
    T_EQ_STR(d.links[2], "run");
    T_EQ_STR(d.links[3], "Some%20Page");
    md_doc_free(&d);
    /* hostile: 100,000 "](" with no end, and a target longer than a value */
    size_t n = 200000;
    char *h = malloc(n + 600);
    for (size_t i = 0; i < n; i += 2)
        memcpy(h + i, "](", 2);
    memset(h + n, 'a', 590);
    memcpy(h + n + 590, ".md)", 4);
    T_EQ_INT(md_parse(h, n + 594, &d), 0);
    T_EQ_INT(d.nlinks, 0);
    md_doc_free(&d);
    free(h);
}

static void test_binary(void)
{
    T_CHECK(!md_is_binary("plain text é\n", 14));
    T_CHECK(md_is_binary("PNG\0\0\0", 6));
    char junk[400];
    for (int i = 0; i < 400; i++)
        junk[i] = (char)(0x80 + (i * 7) % 64);
    T_CHECK(md_is_binary(junk, sizeof junk));
    /* a Latin-1 note with one accent is text */
    const char *latin1 = "caf\xe9 au lait, a note with a single Latin-1 byte in it\n";
    T_CHECK(!md_is_binary(latin1, strlen(latin1)));
}

/* A paragraph of n words "wK" and a blank line. */
static void para(struct buf *b, int n, int *k)
{
    for (int i = 0; i < n; i++) {
        char w[32];
        snprintf(w, sizeof w, "w%d%s", (*k)++, i % 10 == 9 ? "\n" : " ");
        buf_adds(b, w);
    }
    buf_adds(b, "\n\n");
}

static int line_of(const char *s, size_t off)
{
    int n = 1;
    for (size_t i = 0; i < off; i++)
        n += s[i] == '\n';
    return n;
}

static void test_split(void)
{
    struct buf b = BUF_INIT;
    int k = 0;
    buf_adds(&b, "A page without a heading above its text.\n\n");
    for (int i = 0; i < 6; i++)
        para(&b, 50, &k);
    /* a blank line inside code is no paragraph's end */
    buf_adds(&b, "```\ncode one\n\n\n\ncode two\n```\n\n");
    for (int i = 0; i < 6; i++)
        para(&b, 50, &k);
    /* a long section under a heading stays whole */
    buf_adds(&b, "## Headed\n\n");
    for (int i = 0; i < 8; i++)
        para(&b, 50, &k);
    T_CHECK(!b.err);
    struct md_doc d;
    T_EQ_INT(md_parse(b.p, b.n, &d), 0);
    T_EQ_INT(d.nsec, 2);
    int total = text_count_words(b.p + d.sec[0].off, d.sec[0].len);
    T_CHECK(total > 600);
    /* 0: off */
    T_EQ_INT(md_split(b.p, &d, 0), 0);
    T_EQ_INT(d.nsec, 2);
    T_EQ_INT(md_split(b.p, &d, 200), 0);
    int want = (total + 199) / 200;
    T_EQ_INT(d.nsec, want + 1);
    size_t end = 0;
    for (int i = 0; i < d.nsec; i++) {
        const struct md_section *x = &d.sec[i];
        int n = text_count_words(b.p + x->off, x->len);
        T_CHECK(x->off >= end);
        T_EQ_INT(x->line, line_of(b.p, x->off));
        if (i < want) {
            T_CHECK(n <= 200);
            T_EQ_STR(x->heading, "");
            T_EQ_INT(x->level, 0);
            T_EQ_INT(x->part, i);
            /* a piece starts on a line with text, after a blank one */
            T_CHECK(b.p[x->off] != '\n');
            T_CHECK(i == 0 || (b.p[x->off - 1] == '\n' && b.p[x->off - 2] == '\n'));
            T_CHECK(strncmp(b.p + x->off, "code two", 8) && strncmp(b.p + x->off, "```", 3));
        }
        end = x->off + x->len;
    }
    T_EQ_STR(d.sec[want].heading, "Headed");
    T_CHECK(text_count_words(b.p + d.sec[want].off, d.sec[want].len) > 400);
    T_EQ_INT(d.sec[want].part, 0);
    T_EQ_INT(d.sec[0].line, 1);
    md_doc_free(&d);

    /* one paragraph with no blank line stays whole */
    buf_reset(&b);
    k = 0;
    for (int i = 0; i < 400; i++)
        buf_adds(&b, i % 10 == 9 ? "word\n" : "word ");
    T_EQ_INT(md_parse(b.p, b.n, &d), 0);
    T_EQ_INT(md_split(b.p, &d, 100), 0);
    T_EQ_INT(d.nsec, 1);
    T_EQ_INT((int)d.sec[0].len, (int)b.n);
    md_doc_free(&d);

    /* the cap: pieces stop at MD_MAX_SECTIONS */
    buf_reset(&b);
    for (int i = 0; i < 100; i++)
        para(&b, 5, &k);
    for (int i = 0; i < MD_MAX_SECTIONS - 10; i++)
        buf_adds(&b, "## h\nx\n");
    T_CHECK(!b.err);
    T_EQ_INT(md_parse(b.p, b.n, &d), 0);
    T_EQ_INT(d.nsec, MD_MAX_SECTIONS - 9);
    T_EQ_INT(md_split(b.p, &d, 5), 0);
    T_EQ_INT(d.nsec, MD_MAX_SECTIONS);
    /* the tenth piece holds the rest of the text, up to the first heading */
    T_EQ_INT(d.sec[10].level, 2);
    T_CHECK(d.sec[9].off + d.sec[9].len == d.sec[10].off);
    md_doc_free(&d);
    buf_release(&b);
}

/* A heading's words are what a reader sees: link text, alt text, a wiki
 * link's shown name; never a URL or a link's target (pkgconf's README: a
 * badge's URL made "github", "actions", "workflows" words of its title). */
static const char *vis(const char *s, char *out)
{
    size_t n = md_visible(s, strlen(s), out);
    T_EQ_INT((int)n, (int)strlen(out));
    return out;
}

static void test_visible(void)
{
    char o[512];
    T_EQ_STR(vis("pkgconf [![test](https://github.com/pkgconf/pkgconf/actions/workflows/"
                 "test.yml/badge.svg)](https://github.com/pkgconf/pkgconf/actions/workflows/"
                 "test.yml)", o), "pkgconf test");
    T_EQ_STR(vis("See [the guide](docs/guide.md#setup \"Guide\") now", o), "See the guide now");
    T_EQ_STR(vis("![logo](a(b)c.png) Title", o), "logo Title");
    T_EQ_STR(vis("A [ref link][r1] and [empty][]", o), "A ref link and empty");
    T_EQ_STR(vis("[[Payments Service#Fees|fees]] and [[Other Page]]", o), "fees and Other Page");
    T_EQ_STR(vis("Docs at https://example.com/x/y?z=1 and <https://a.b/c> here", o),
             "Docs at and here");
    T_EQ_STR(vis("<img src=\"https://x/y.svg\" alt=\"x\"> <b>Bold</b>", o), "Bold");
    T_EQ_STR(vis("`[a](b)` stays, a < b > c, x[1] and f(x)", o),
             "`[a](b)` stays, a < b > c, x[1] and f(x)");
    T_EQ_STR(vis("[unclosed (paren](never", o), "[unclosed (paren](never");
    T_EQ_STR(vis("  [![](https://ci/badge.svg)](https://ci)  ", o), "");
    /* deeper than the tracked nesting: text, not lost */
    T_CHECK(strchr(vis("[[[[[[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]]]]]", o), 'x') != NULL);

    /* the title and the heading path are the visible words */
    const char *s = "# pkgconf [![test](https://github.com/p/p/actions/workflows/t.yml/"
                    "badge.svg)](https://github.com/p/p/actions)\n"
                    "intro\n"
                    "## Using [meson](https://mesonbuild.com)\n"
                    "text\n";
    struct md_doc d;
    T_EQ_INT(md_parse(s, strlen(s), &d), 0);
    T_EQ_STR(d.title, "pkgconf test");
    T_EQ_INT(d.nsec, 2);
    T_EQ_STR(d.sec[1].heading, "pkgconf test > Using meson");
    md_doc_free(&d);
    /* a first level-1 heading with no visible word is no title, and no
     * later one takes its place: the file's name names the page */
    s = "# [![](https://ci/badge.svg)](https://ci)\n\nx\n\n# Later\n\ny\n";
    T_EQ_INT(md_parse(s, strlen(s), &d), 0);
    T_CHECK(d.title == NULL);
    md_doc_free(&d);
}

/* Parses s into d and checks its sections, one "LINE HEADING" a line. */
static void parse_expect(const char *s, struct md_doc *d, const char *want)
{
    char got[512];
    size_t w = 0;
    T_EQ_INT(md_parse(s, strlen(s), d), 0);
    for (int i = 0; i < d->nsec && w < sizeof got; i++)
        w += (size_t)snprintf(got + w, sizeof got - w, "%d %s\n", d->sec[i].line, d->sec[i].heading);
    got[w < sizeof got ? w : sizeof got - 1] = 0;
    T_EQ_STR(got, want);
}

/* Fenced code inside list items and block quotes (CommonMark's container
 * indentation): a '#' line in it is code, no heading, and the lines after
 * it keep their numbers. Docker's contributing/set-up-dev-env.md has fences
 * indented 3 columns under "6." whose '#' lines were headings before. */
static void test_fence_in_containers(void)
{
    const char *s = "# Setup\n"                  /* 1 */
                    "\n"                         /* 2 */
                    "6. Make a binary.\n"        /* 3 */
                    "\n"                         /* 4 */
                    "   ```none\n"               /* 5: 3 columns, the item's content */
                    "   # hack/make.sh binary\n" /* 6 */
                    "   ```\n"                   /* 7 */
                    "\n"                         /* 8 */
                    "10. Run it.\n"              /* 9 */
                    "\n"                         /* 10 */
                    "    ```bash\n"              /* 11: 4 columns under "10." */
                    "    # dockerd --help\n"     /* 12 */
                    "\n"                         /* 13: a blank line stays inside */
                    "    ```\n"                  /* 14 */
                    "- item\n"                   /* 15 */
                    "  - nested\n"               /* 16 */
                    "    ~~~\n"                  /* 17: the nested item's content */
                    "    # still code\n"         /* 18 */
                    "    ~~~\n"                  /* 19 */
                    "> quoted:\n"                /* 20 */
                    "> ```\n"                    /* 21 */
                    "> # code in a quote\n"      /* 22 */
                    "> ```\n"                    /* 23 */
                    "## Next\n"                  /* 24 */
                    "text\n";                    /* 25 */
    struct md_doc d;
    char buf[512];
    parse_expect(s, &d, "1 Setup\n24 Setup > Next\n");
    sec_text(s, &d.sec[0], buf, sizeof buf);
    T_CHECK(strstr(buf, "# hack/make.sh binary") != NULL);
    T_CHECK(strstr(buf, "# still code") != NULL);
    md_doc_free(&d);

    /* an unclosed fence ends with its list item: the heading after the
     * list is read; "```x`" (a backtick in the info string) is no fence,
     * indented or not */
    s = "1. step\n"                 /* 1 */
        "   ```\n"                  /* 2 */
        "   # code\n"               /* 3 */
        "# Heading after\n"         /* 4 */
        "  ```x`\n"                 /* 5 */
        "## Sub\n";                 /* 6 */
    parse_expect(s, &d, "1 \n4 Heading after\n6 Heading after > Sub\n");
    md_doc_free(&d);

    /* a fence indented 4 columns outside any list is indented code, not a
     * fence: the '#' line under it at 0 columns is a heading; a quote's
     * fence ends with the quote */
    s = "text\n"                    /* 1 */
        "\n"                        /* 2 */
        "    ```\n"                 /* 3 */
        "# Real\n"                  /* 4 */
        "> ```\n"                   /* 5 */
        "> # code\n"                /* 6 */
        "# Also real\n";            /* 7 */
    parse_expect(s, &d, "1 \n4 Real\n7 Also real\n");
    md_doc_free(&d);
}

int main(void)
{
    T_RUN(test_frontmatter);
    T_RUN(test_headings);
    T_RUN(test_fence_in_containers);
    T_RUN(test_caps);
    T_RUN(test_md_links);
    T_RUN(test_binary);
    T_RUN(test_split);
    T_RUN(test_visible);
    return T_DONE();
}
