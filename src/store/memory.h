/*
 * memory.h: what store/memory.c shares with store/memory_io.c (the JSONL
 * export and import of memories). The public API is in cairn.h.
 */
#ifndef CAIRN_STORE_MEMORY_H
#define CAIRN_STORE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

struct cairn;
struct cairn_memory_new;
struct sqlite3_stmt;

/* 1 if t is one of the five memory types. */
int memory_type_valid(const char *t);

/* A memory's fields after cleaning; owns its strings. */
struct memory_row {
    char *type, *text, *scope, *tags, *session, *message;
    int64_t created, updated, expires;   /* expires: CAIRN_NO_TIME for never */
};
/* Validates and cleans the fields into r (type NULL: fact); times are left
 * at 0 and expires at never. On failure r still needs memory_row_release. */
int memory_row_fill(struct cairn *h, struct memory_row *r, const char *type, const char *text,
                    const char *scope, const char *tags, const char *session,
                    const char *message);
void memory_row_release(struct memory_row *r);
/* In a transaction: inserts r, its id into *id. */
int memory_insert(struct cairn *h, const struct memory_row *r, int64_t *id);
/* In a transaction: memory id's columns made r's (a pulled version). */
int memory_update_row(struct cairn *h, int64_t id, const struct memory_row *r);
/* 32 hex digits of 16 random bytes from the OS (getrandom): a memory's
 * global id, or a version's. */
int memory_gid_new(struct cairn *h, char out[33]);
/* In a transaction, before memory id is deleted: the sha256 of its global
 * id joins memories_forgotten, so the next sync pushes its tombstone and
 * no pull brings it back (store/pg_msync.c). */
int memory_sync_forget(struct cairn *h, int64_t id);
/* Which of two versions of a memory is newer, the same on every machine:
 * by updated_at, then rev (its changes), then vid (bytes); <0, 0, >0. */
int memory_version_cmp(int64_t at_a, int64_t rev_a, const char *vid_a, int64_t at_b,
                       int64_t rev_b, const char *vid_b);
/* In a transaction: live memory old is superseded by by (history, link). */
int memory_supersede(struct cairn *h, int64_t old, int64_t by);
/* In a transaction: from links to to (contradicts or related_to), in from's history. */
int memory_link_add(struct cairn *h, int64_t from, int64_t to, const char *kind);

/* The text of column c of st, copied ("" for NULL); NULL on NOMEM. */
char *memory_col_dup(struct sqlite3_stmt *st, int c);
/* Room for one more item of `size` bytes in *items (n used of *cap). */
int memory_grow(struct cairn *h, void **items, size_t *cap, size_t n, size_t size);
/* Steps st to its end, push(h, list, st, arg) for each row, and finalizes
 * it; `what` names the read in an error. */
int memory_rows(struct cairn *h, struct sqlite3_stmt *st,
                int (*push)(struct cairn *, void *, struct sqlite3_stmt *, int), void *list,
                int arg, const char *what);
/* Cleans s (NULL: "") as every stored string is into *out (malloc'd), at
 * most max bytes after cleaning; `what` names the field in the message. */
int memory_clean(struct cairn *h, const char *what, const char *s, size_t max, char **out);
/* cairn_memory_add, with extra(h, new id, arg) run in the same transaction
 * after the insert (store/correction.c adds the correction's row). */
int memory_add_with(struct cairn *h, const struct cairn_memory_new *m,
                    int (*extra)(struct cairn *, int64_t, void *), void *arg, int64_t *id);
/* correction.c: a correction's severity and applies_when, cleaned. */
struct cairn_correction_when;
struct correction_row {
    int severity;
    char *keywords, *paths, *commands;
};
/* Validates and cleans w (NULL: p1, nothing to match) into r; on failure r
 * still needs correction_row_release. */
int correction_row_fill(struct cairn *h, struct correction_row *r,
                        const struct cairn_correction_when *w);
void correction_row_release(struct correction_row *r);
/* In a transaction: r as memory id's correction fields (its counters stay). */
int correction_row_store(struct cairn *h, int64_t id, const struct correction_row *r);
/* memory_vec.c: a memory's vector (schema version 9). */
struct vec_batch;
struct vec_model;
/* hash64 of a memory's text, stored with its vector. */
int64_t memory_text_hash(const char *text);
/* Embeds text with the current model, before the write lock (b empty
 * when there is no model or embedding is off on this handle). */
int memory_vec_make(struct cairn *h, const char *text, struct vec_batch *b);
/* In a transaction: b's vector (if any) as memory id's, made from text. */
int memory_vec_store(struct cairn *h, int64_t id, const char *text, const struct vec_batch *b);
/* Gives every memory whose vector is missing, of another model or of
 * another text one of vm (cairn_embed_backfill, after the messages). */
int memory_vec_backfill(struct cairn *h, struct vec_model *vm);

#endif
