/*
 * markdown.h: a Markdown note cut into what a vault indexes (docs/VAULTS.md).
 *
 * Not a renderer: it finds the YAML frontmatter's `title`, `tags` and
 * `aliases` (inline `[a, b]`, a scalar, or a block list of `- item`), the
 * headings (ATX `## x` and setext `x` over `===` / `---`), and cuts the
 * body into sections, one a heading, each with its heading path ("Setup >
 * Linux") and the line it starts on (1-based, counting the frontmatter), so
 * a recalled passage cites path:line. A fenced code block (``` or ~~~)
 * stays inside its section: a `#` line in it is code, not a heading,
 * also in a list item (indented to the item's content) or a block quote. Wiki
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

/* A ranking constant (in recall/policy.h's table, so the policy hash
 * follows it) defined here because the vault indexer, which cannot see
 * recall/, cuts by it: a section of more than this many index tokens is
 * cut into pieces at blank lines (md_split) when no heading is above it.
 * 0: off. Dev vault, half A: 256 and 512 +1 (q035), half B the same;
 * docs/VAULTS.md. A change to it makes
 * every vault stale (its documents' `cut`, store/vault.c): the next
 * re-index cuts them again. Dev vault: docs/VAULTS.md. */
#define NOTE_SPLIT_TOK 512

/* The reader's version: bumped when what md_parse makes of a page
 * changes, so existing stores read every page again (stamped with the
 * cut into vault_docs.cut by vault/vault.c). 1: a heading's words are its
 * visible text (md_visible), no link's URL (branch vault32). 2: a fence
 * in a list item or a block quote, or indented 1-3 columns, is read as a
 * fence (branch vault33; before, such a backtick fence was taken for
 * inline code and a '#' line in it for a heading). */
#define MD_READER 2

struct md_section {
    size_t off, len;     /* bytes of the input: the heading line to the next heading */
    int    line;         /* 1-based line of its first byte */
    int    level;        /* 1..6, 0 for the text before the first heading */
    char  *heading;      /* the path of headings, " > " between them ("" for level 0) */
    int    part;         /* 0, or the piece's number in its section (md_split) */
};

struct md_doc {
    /* frontmatter title, else the first level-1 heading, else NULL */
    char  *title;
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
/* Cuts the section before a page's first heading (level 0: all of a page
 * without headings) when it holds more than max_tok index tokens
 * (text_count_words) into pieces at blank lines outside fenced code, of
 * about equal size, none over max_tok unless one paragraph is: a long page
 * without headings is then ranked by its best piece, as a page with
 * headings is by its best section (docs/VAULTS.md). Each piece keeps its
 * section's heading path and level, and starts on its own first line (a
 * blank line before it is left in the piece above). s is the buffer d
 * was parsed from. At most MD_MAX_SECTIONS in all: past it, sections stay
 * whole. max_tok 0: nothing cut. Linear in the text. 0, or -1 on no
 * memory (d is then freed). */
int  md_split(const char *s, struct md_doc *d, int max_tok);
/* The visible text of a heading s[0..n) into out (room for n + 1 bytes,
 * NUL-terminated; its length returned): a link's text, an image's alt
 * text, a wiki link's shown name, code spans as written; no link target,
 * reference, URL, autolink or HTML tag; runs of space made one, trimmed.
 * Linear: each bracket's target is looked for at most 512 bytes on. */
size_t md_visible(const char *s, size_t n, char *out);
void md_doc_free(struct md_doc *d);

#endif
