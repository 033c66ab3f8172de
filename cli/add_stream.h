/*
 * add_stream.h: cuts `cairn add`'s input into documents (sessions, or
 * arrays of them) while reading it, through a window that holds the
 * document being read, not the whole input. No printing: errors are in
 * msg. The cut does not depend on the window's size (tests/fuzz/
 * fuzz_add_stream.c checks a 1-byte window against a whole-input one).
 */
#ifndef CAIRN_CLI_ADD_STREAM_H
#define CAIRN_CLI_ADD_STREAM_H

#include <stdio.h>

struct add_stream {
    FILE *f;
    char *b;               /* b[0..len): read and not yet let go */
    size_t cap, len, p;    /* p: where the next document is looked for */
    size_t chunk, max_doc;
    int eof, err, jsonl;   /* jsonl: -1 undecided, 0 no, 1 yes */
    size_t lc_off, lc_line;
    char msg[160];
};

/* chunk: the first read size (the window doubles from it when a document
 * needs more); max_doc: a document larger than this stops the stream. */
void add_stream_init(struct add_stream *s, FILE *f, size_t chunk, size_t max_doc);

/*
 * The next document: 1 with *doc, *n (valid until the next call), *type
 * (cJSON_Object or cJSON_Array), *line where it starts; 0 for a malformed
 * one, *line and *col where it breaks (the stream has skipped to the next
 * line that opens an object or array in column 1); -1 at the end, or on a
 * read failure or a document past max_doc (err set, msg says which).
 */
int add_stream_next(struct add_stream *s, const char **doc, size_t *n, int *type, size_t *line,
                    size_t *col);

void add_stream_free(struct add_stream *s);

#endif
