/*
 * private.h: <private> spans, removed before anything is stored.
 *
 * One function for every write path: cairn_add_session calls it on every
 * string it stores (message text, title, project, speaker, source, meta),
 * so the CLI, MCP save_conversation, the hooks, the importers and
 * cairn_session_update cannot miss it; the capture parsers also call it
 * (through capture_text) to count what they removed.
 *
 * The rule, per string (a message is one string; tags never span two):
 *  - an opening tag is "<private" (any case) followed by '>', '/' or
 *    whitespace, up to the next '>': <private>, <PRIVATE>, <private >,
 *    <private reason="pw">. "<private/>" (self-closing) is removed and
 *    hides nothing. An opening tag with no '>' at all is unclosed.
 *  - a closing tag is "</private" (any case), optional whitespace, '>'.
 *  - tags nest: the span ends at the closing tag that matches the first
 *    opening one, so "<private>a<private>b</private>c</private>" hides a,
 *    b and c.
 *  - an unclosed span hides the rest of the string, so a tag opened in one
 *    message and closed in the next hides the end of the first message;
 *    the second is stored from its start, without the stray closing tag
 *    (a closing tag with no opening one is removed, the text around it
 *    kept).
 * Nothing marks where a span was: private text leaves no trace.
 */
#ifndef CAIRN_PRIVATE_H
#define CAIRN_PRIVATE_H

#include <stddef.h>
#include "util/buf.h"

/*
 * Appends in[0..n) without its private spans and tags to out. Returns the
 * number of spans and stray tags removed (0: out got in unchanged), or -1
 * on allocation failure (out->err tells).
 */
int private_strip(const char *in, size_t n, struct buf *out);

/* 1 if in[0..n) holds a tag private_strip would remove; a quick test that
 * lets clean text skip the copy. */
int private_has_tag(const char *in, size_t n);

#endif
