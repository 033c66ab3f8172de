/*
 * markdown.h: a Markdown note cut into what a vault indexes (docs/VAULTS.md).
 *
 * Not a renderer: it finds the YAML frontmatter's `title`, `tags` and
 * `aliases` (inline `[a, b]`, a scalar, or a block list of `- item`), the
 * headings (ATX `## x` and setext `x` over `===` / `---`), and cuts the
 * body into sections, one a heading, each with its heading path ("Setup >
 * Linux") and the line it starts on (1-based, counting the frontmatter), so
 * a recalled passage cites path:line. A fenced code block (``` or ~~~)
 * stays inside its section: a `#` line in it is code, not a heading. Wiki
 * links `[[Page]]`, `[[Page|alias]]`, `[[Page#Heading]]` give their page,
 * and so do links to Markdown files, `[text](dir/Page.md#h)`: "Page".
 *
 * Input is untrusted (any file in a folder the user named): every list is
 * capped (MD_MAX_*), each value cut at MD_MAX_VALUE bytes, and the work is
 * linear in the input. The parser does not copy the body: sections are
 * byte ranges of the caller's buffer.
 */
#ifndef CAIRN_MARKDOWN_H
#define CAIRN_MARKDOWN_H

#include <stddef.h>

#define MD_MAX_SECTIONS 4096   /* later headings stay in the last section */
#define MD_MAX_LIST     64     /* tags, aliases */
#define MD_MAX_LINKS    256
#define MD_MAX_VALUE    256    /* bytes of one title, tag, alias or link */
#define MD_MAX_DEPTH    6      /* heading levels */
#define MD_SNIFF        8192   /* bytes looked at for binary content */

struct md_section {
    size_t off, len;     /* bytes of the input: the heading line to the next heading */
    int    line;         /* 1-based line of its first byte */
    int    level;        /* 1..6, 0 for the text before the first heading */
    char  *heading;      /* the path of headings, " > " between them ("" for level 0) */
};

struct md_doc {
    char  *title;                    /* frontmatter title, else the first level-1 heading, else NULL */
    char  *tags[MD_MAX_LIST];   int ntags;    /* without a leading '#' */
    char  *aliases[MD_MAX_LIST]; int naliases;
    char  *links[MD_MAX_LINKS]; int nlinks;   /* distinct linked pages (wiki or .md links) */
    struct md_section *sec;     int nsec;     /* sections with some text; in order */
    size_t body;                     /* where the text after the frontmatter starts */
};

/* 1 when s[0..n) looks binary: a NUL byte, or invalid UTF-8, in its first
 * MD_SNIFF bytes (a cut multi-byte character at that edge is not). */
int  md_is_binary(const char *s, size_t n);
/* Parses s[0..n) into d (zeroed first). 0, or -1 on no memory (d is then
 * freed). */
int  md_parse(const char *s, size_t n, struct md_doc *d);
void md_doc_free(struct md_doc *d);

#endif
