/*
 * vault.h: the rows of Markdown vaults (schema v13, store/vault.c,
 * docs/VAULTS.md): what the indexer (src/vault/) writes and what recall
 * (recall/notes.c) reads. The only SQL about vaults is in store/vault.c.
 *
 * Functions return CAIRN_OK or an error code with the handle's message.
 */
#ifndef CAIRN_STORE_VAULT_H
#define CAIRN_STORE_VAULT_H

#include <stddef.h>
#include <stdint.h>
#include "internal.h"

struct store_vault {
    int64_t id;
    char   *name, *root, *settings;
    int64_t added_at, indexed_at;        /* indexed_at: CAIRN_NO_TIME if never */
    int64_t docs, sections, bytes;
};
void store_vault_release(struct store_vault *v);

/* A new vault row; CAIRN_INVALID when the name is taken. */
int store_vault_insert(struct cairn *h, const char *name, const char *root,
                       const char *settings, int64_t now, int64_t *id);
/* The vault named name (counts left 0); CAIRN_NOTFOUND. */
int store_vault_find(struct cairn *h, const char *name, struct store_vault *out);
/* Every vault by name, with its counts; free each, then the array. */
int store_vault_all(struct cairn *h, struct store_vault **out, int *n);
int store_vault_set_indexed(struct cairn *h, int64_t vault, int64_t now);
/* Deletes the vault and all its rows (in the caller's transaction: a scrub). */
int store_vault_delete(struct cairn *h, int64_t vault);

/* What the index holds of one file, for the incremental re-index. */
struct store_vdoc {
    int64_t  id;
    char    *path;
    int64_t  size, mtime;
    uint64_t hash;
    int      unreadable;   /* left out as unreadable: read again on every re-index */
    int      skipped;      /* left out (binary, too big, unreadable): no section */
    int      cut;          /* how it was read: VAULT_READ (vault/vault.c), the cut and reader */
    int      seen;         /* the indexer's mark: still in the folder */
};
/* The vault's documents, sorted by path (strcmp); free with _docs_free. */
int store_vault_docs(struct cairn *h, int64_t vault, struct store_vdoc **out, int *n);
void store_vault_docs_free(struct store_vdoc *v, int n);

/* A section to write: text is the raw bytes of the file (cleaned here). */
struct store_vsec_in {
    int         line;
    const char *heading;
    const char *text;
    size_t      len;
    int         part;           /* 0, or its piece's number in its section (md_split) */
};
/* A document to write. Lists (aliases, tags, links) are one item a line. */
struct store_vdoc_in {
    const char *path;
    int64_t     size, mtime;
    uint64_t    hash;
    const char *title, *aliases, *tags, *links;
    const char *names;          /* title and aliases as index tokens, a name a line */
    const struct store_vsec_in *sec;
    int         nsec;
    int         cut;            /* how it was read (vault_docs.cut): VAULT_READ, vault/vault.c */
};
/* Writes document d of vault (replacing doc `id`'s rows, or new when id is
 * 0), its sections cleaned (<private>, secrets) and in vault_fts. Call
 * inside a transaction. */
int store_vault_put(struct cairn *h, int64_t vault, int64_t id, const struct store_vdoc_in *d);
/* A file left out (why: "binary", "too big", "unreadable"): a row with no
 * section, replacing doc id's rows (0: new). */
int store_vault_skip(struct cairn *h, int64_t vault, int64_t id, const char *path, int64_t size,
                     int64_t mtime, const char *why);
/* Only the size and mtime change (the bytes hash as before). */
int store_vault_touch(struct cairn *h, int64_t id, int64_t size, int64_t mtime);
/* Removes document id and its sections from the index and the tables. */
int store_vault_remove_doc(struct cairn *h, int64_t id);
/* Rewrites vault_fts's segments (its deleted terms gone: store/scrub.c). */
int store_vault_optimize(struct cairn *h);

/* ---- What recall reads (recall/notes.c) ---- */
/* 1 when any vault has a section; a store from before v13 has none. */
int store_vault_any(struct cairn *h, int *any);
/* Sections (pieces of a cut one counted each) and their index tokens
 * over every vault, for the average length, and whole sections (a cut
 * one counted once), for IDF. */
int store_vault_totals(struct cairn *h, int64_t *sections, int64_t *tok, int64_t *whole);
/* Every section that matches the FTS5 expression (terms OR'ed), in id
 * order, with its document, index tokens, piece number (part: its
 * section's first piece is id - part) and count of each of the nt phrases
 * (cairn_tf). */
typedef int (*store_vmatch_fn)(void *arg, int64_t sec, int64_t doc, int line, int ntok,
                               int part, const uint16_t *tf);
int store_vault_matches(struct cairn *h, const char *expr, size_t len, int nt,
                        store_vmatch_fn fn, void *arg);
/* Every document's names (its title and aliases as index tokens, a name a
 * line, tokens apart by spaces), for names in a question. */
typedef int (*store_vname_fn)(void *arg, int64_t doc, const char *names);
int store_vault_names(struct cairn *h, store_vname_fn fn, void *arg);
/* Every document's links (pages named by wiki or .md links, one a line,
 * as written), for the link lift. */
int store_vault_links(struct cairn *h, store_vname_fn fn, void *arg);
/* The first section of document doc (a page named without a matching
 * word, or found by its card), its card (line 0) left out. */
int store_vault_first_section(struct cairn *h, int64_t doc, int64_t *sec, int *ntok);
/* For the whole-file baseline (files-bm25): files indexed and their
 * index tokens, and one file's sections joined, as a section of line 1. */
int store_vault_doc_totals(struct cairn *h, int64_t *docs, int64_t *tok);
/* The heading paths of sections secs[0..n) ("Setup > Linux"), one
 * statement for all: fn(arg, i, heading) for each found, in secs' order. */
typedef int (*store_vhead_fn)(void *arg, int i, const char *heading);
int store_vault_headings(struct cairn *h, const int64_t *secs, int n, store_vhead_fn fn,
                         void *arg);
struct store_vsec;
int store_vault_doc_text(struct cairn *h, int64_t doc, struct store_vsec *out);
/* One section to show; strings malloc'd, free with _section_release. */
struct store_vsec {
    char   *vault, *path, *title, *heading, *text;
    int     line;
    int64_t mtime;          /* the file's, ns */
};
int store_vault_section(struct cairn *h, int64_t sec, struct store_vsec *out);
void store_vault_section_release(struct store_vsec *s);

/* ---- Sections' vectors (schema v18, store/vault_vec.c) ---- */
/* Embeds every section that has no vector of the current model and
 * stores it, a chunk a transaction (call outside one); *made: how many.
 * Without a model, or with embedding off on h, does nothing. */
int store_vault_vec_fill(struct cairn *h, int64_t *made);
/* The same with model vm, embedding on or off (`cairn embed --backfill`:
 * the sections a hook's re-index left without a vector). */
struct vec_model;
int store_vault_vec_fill_model(struct cairn *h, struct vec_model *vm, int64_t *made);
/* 1 when any section has a vector (of any model). */
int store_vault_vec_any(struct cairn *h, int *any);
/* Every section's int8 vector of model (dim bytes), with its document and
 * index tokens. */
typedef int (*store_vvec_fn)(void *arg, int64_t sec, int64_t doc, int ntok, const void *v8);
int store_vault_vectors(struct cairn *h, const char *model, int dim, store_vvec_fn fn, void *arg);

#endif
