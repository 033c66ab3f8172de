/*
 * vault.c: cairn_vault_add, _reindex, _rm, _list, _stale (docs/VAULTS.md).
 *
 * The index follows the folder on the write side only: a re-index walks
 * it (walk.c), compares each Markdown file's size and mtime with what the
 * store holds, reads only the files that differ, and keeps a file's rows
 * when its bytes hash as before (a touch, a checkout). Changed files are
 * parsed (text/markdown.c) and written again, files gone from the folder
 * leave the index, all in one transaction a vault. Nothing is written in
 * the folder: files are opened read-only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/vault.h"
#include "text/markdown.h"
#include "text/tokenize.h"
#include "util/buf.h"
#include "util/hash.h"
#include "vault/walk.h"

#define VAULT_MAX_NAME 64

static void note_skip(struct cairn_vault_report *rep, const char *path, const char *why)
{
    size_t n = strlen(rep->skipped);
    if (n + strlen(path) + strlen(why) + 4 >= sizeof rep->skipped)
        return;
    snprintf(rep->skipped + n, sizeof rep->skipped - n, "%s: %s\n", path, why);
}

/* The whole file, at most CAIRN_VAULT_MAX_FILE bytes: 0, 1 too big, -1
 * unreadable, -2 no memory. */
static int read_file(const char *path, char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    if (st.st_size > CAIRN_VAULT_MAX_FILE) {
        close(fd);
        return 1;
    }
    /* one byte more than allowed: a file that grew since the stat */
    char *p = malloc(CAIRN_VAULT_MAX_FILE + 1);
    size_t n = 0;
    if (!p) {
        close(fd);
        return -2;
    }
    for (;;) {
        ssize_t k = read(fd, p + n, CAIRN_VAULT_MAX_FILE + 1 - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            free(p);
            close(fd);
            return -1;
        }
        if (!k || (n += (size_t)k) > CAIRN_VAULT_MAX_FILE)
            break;
    }
    close(fd);
    if (n > CAIRN_VAULT_MAX_FILE) {
        free(p);
        return 1;
    }
    *out = p;
    *len = n;
    return 0;
}

static void join(struct buf *b, char *const *v, int n)
{
    buf_reset(b);
    for (int i = 0; i < n; i++) {
        buf_adds(b, v[i]);
        if (i + 1 < n)
            buf_addc(b, '\n');
    }
}

/* The file's name without its extension: the page name wiki links use. */
static void stem(const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot > base ? (size_t)(dot - base) : strlen(base);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, base, n);
    out[n] = 0;
}

/* What vault_docs.cut holds: the cut and the reader's version in one
 * number (no schema change), 100,000 x MD_READER + NOTE_SPLIT_TOK
 * (200512 since vault33, 100512 since vault32; 512 before it, 0 before
 * schema 25). */
#define VAULT_READ (100000 * MD_READER + NOTE_SPLIT_TOK)

/* Parses and writes one file's bytes as document id (0: new). */
static int put_doc(struct cairn *h, int64_t vault, int64_t id, const struct walk_file *f,
                   const char *text, size_t len, uint64_t hash, int64_t *sections)
{
    struct md_doc d;
    struct buf aliases = BUF_INIT, tags = BUF_INIT, links = BUF_INIT;
    struct store_vsec_in *sec = NULL;
    char name[MD_MAX_VALUE + 1];
    int rc;
    if (md_parse(text, len, &d) || md_split(text, &d, NOTE_SPLIT_TOK))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    stem(f->path, name, sizeof name);
    join(&aliases, d.aliases, d.naliases);
    /* the file's name is the page's name too ([[name]]) */
    if (d.title && strcmp(d.title, name)) {
        if (aliases.n)
            buf_addc(&aliases, '\n');
        buf_adds(&aliases, name);
    }
    join(&tags, d.tags, d.ntags);
    join(&links, d.links, d.nlinks);
    /* the page's card: its names and its path's words, a section of line
     * 0 that recall searches and never shows (recall/notes.c) */
    struct buf card = BUF_INIT, names = BUF_INIT;
    text_name_tokens(d.title ? d.title : name, strlen(d.title ? d.title : name), &names);
    for (const char *a = aliases.p; *a;) {
        const char *nl = strchr(a, '\n');
        size_t n = nl ? (size_t)(nl - a) : strlen(a);
        text_name_tokens(a, n, &names);
        a += n + (nl != NULL);
    }
    buf_adds(&card, d.title ? d.title : name);
    buf_addc(&card, '\n');
    buf_add(&card, aliases.p, aliases.n);
    buf_addc(&card, '\n');
    buf_add(&card, tags.p, tags.n);
    buf_addc(&card, '\n');
    for (const char *p = f->path; *p; p++)
        buf_addc(&card, *p == '/' || *p == '_' || *p == '-' || *p == '.' ? ' ' : *p);
    buf_addc(&card, '\n');
    if (!(sec = calloc((size_t)d.nsec + 1, sizeof *sec))) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    if (aliases.err || tags.err || links.err || card.err || names.err) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    sec[0] = (struct store_vsec_in){ 0, "", card.p, card.n, 0 };
    for (int i = 0; i < d.nsec; i++) {
        sec[i + 1].line = d.sec[i].line;
        sec[i + 1].heading = d.sec[i].heading;
        sec[i + 1].text = text + d.sec[i].off;
        sec[i + 1].len = d.sec[i].len;
        sec[i + 1].part = d.sec[i].part;
    }
    struct store_vdoc_in in = { f->path, f->size, f->mtime, hash, d.title ? d.title : name,
                                aliases.p, tags.p, links.p, names.p, sec, d.nsec + 1,
                                VAULT_READ };
    rc = store_vault_put(h, vault, id, &in);
    *sections += d.nsec;
out:
    buf_release(&card);
    buf_release(&names);
    free(sec);
    buf_release(&aliases);
    buf_release(&tags);
    buf_release(&links);
    md_doc_free(&d);
    return rc;
}

/* A document indexed with another cut of its sections (NOTE_SPLIT_TOK, a
 * store from before schema 25) or by another version of the reader
 * (MD_READER: a store from before branch vault32, whose titles may hold a
 * link's URL, or before vault33, which read a '#' line of a fence in a
 * list item as a heading) is parsed again, whatever its bytes. */
static int recut(const struct store_vdoc *d)
{
    return !d->skipped && d->cut != VAULT_READ;
}

static int walk_err(struct cairn *h, const char *root, int e)
{
    if (e < 0)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    return cairn__err(h, CAIRN_IO, "%s: %s", root, strerror(e));
}

/* Indexes vault v inside the caller's transaction. */
static int index_vault(struct cairn *h, const struct store_vault *v,
                       struct cairn_vault_report *rep)
{
    struct walk w;
    struct store_vdoc *docs = NULL;
    int nd = 0, rc, e;
    if ((e = walk_vault(v->root, v->settings, CAIRN_VAULT_MAX_FILES, &w)))
        return walk_err(h, v->root, e);
    if ((rc = store_vault_docs(h, v->id, &docs, &nd)))
        goto out;
    rep->files += w.n;
    rep->excluded += w.excluded;
    if (w.truncated)
        note_skip(rep, v->root, "more than " "100000" " Markdown files: the rest left out");
    int j = 0;
    for (int i = 0; i < w.n; i++) {
        const struct walk_file *f = &w.f[i];
        while (j < nd && strcmp(docs[j].path, f->path) < 0)
            j++;
        struct store_vdoc *old = j < nd && !strcmp(docs[j].path, f->path) ? &docs[j] : NULL;
        /* unchanged by size and mtime; but a file that could not be read
         * is tried again (a chmod changes neither) */
        if (old && old->size == f->size && old->mtime == f->mtime && !old->unreadable &&
            !recut(old)) {
            old->seen = 1;
            rep->unchanged++;
            continue;
        }
        char path[PATH_MAX], *text = NULL;
        size_t len = 0;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", v->root, f->path) >= sizeof path) {
            rep->unreadable++;
            note_skip(rep, f->path, "path too long");
            continue;
        }
        int r = read_file(path, &text, &len);
        if (r == -2) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
        if (!r && md_is_binary(text, len))
            r = 2;
        if (r) {
            /* left out with a note; its row says so, so that the next
             * re-index and the staleness check see it unchanged */
            static const char *const why[] = { "", "over 4 MB, not indexed",
                                               "binary, not indexed" };
            if (r == 1)
                rep->too_big++;
            else if (r == 2)
                rep->binary++;
            else
                rep->unreadable++;
            note_skip(rep, f->path, r > 0 ? why[r] : "unreadable");
            free(text);
            if (old)
                old->seen = 1;
            if ((rc = store_vault_skip(h, v->id, old ? old->id : 0, f->path, f->size, f->mtime,
                                       r == 1 ? "too big" : r == 2 ? "binary" : "unreadable")))
                goto out;
            continue;
        }
        uint64_t hash = hash64(text, len, 0x7661756c74);   /* "vault" */
        if (old && old->hash == hash && !recut(old)) {
            old->seen = 1;
            rep->unchanged++;
            rc = store_vault_touch(h, old->id, f->size, f->mtime);
        } else {
            if (old) {
                old->seen = 1;
                rep->changed++;
            } else {
                rep->added++;
            }
            rc = put_doc(h, v->id, old ? old->id : 0, f, text, len, hash, &rep->sections);
        }
        free(text);
        if (rc)
            goto out;
    }
    int64_t gone = 0;
    for (int k = 0; k < nd; k++)
        if (!docs[k].seen) {
            if ((rc = store_vault_remove_doc(h, docs[k].id)))
                goto out;
            gone++;
        }
    rep->removed += gone;
    /* what left the index leaves no terms behind in its old segments */
    if ((gone || rep->changed) && (rc = store_vault_optimize(h)))
        goto out;
    rc = store_vault_set_indexed(h, v->id, (int64_t)time(NULL));
out:
    store_vault_docs_free(docs, nd);
    walk_free(&w);
    return rc;
}

static int check_name(struct cairn *h, const char *name)
{
    size_t n = strlen(name);
    if (!n || n > VAULT_MAX_NAME)
        return cairn__err(h, CAIRN_INVALID, "a vault name has 1 to %d bytes", VAULT_MAX_NAME);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == '/' || name[i] == '\\')
            return cairn__err(h, CAIRN_INVALID, "a vault name has no '/' and no control "
                              "character");
    return CAIRN_OK;
}

int cairn_vault_add(struct cairn *h, const char *root, const char *name, const char *excludes,
                    struct cairn_vault_report *rep)
{
    struct cairn_vault_report mine;
    char abs[PATH_MAX];
    struct stat st;
    const char *why;
    int rc;
    if (!rep)
        rep = &mine;
    memset(rep, 0, sizeof *rep);
    if (!root || !*root)
        return cairn__err(h, CAIRN_INVALID, "no folder");
    if (!realpath(root, abs) || stat(abs, &st))
        return cairn__err(h, CAIRN_IO, "%s: %s", root, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cairn__err(h, CAIRN_INVALID, "%s is not a folder", root);
    if (!name || !*name) {
        const char *b = strrchr(abs, '/');
        name = b && b[1] ? b + 1 : "root";
    }
    if ((rc = check_name(h, name)))
        return rc;
    snprintf(rep->name, sizeof rep->name, "%s", name);
    if ((why = walk_check_excludes(excludes)))
        return cairn__err(h, CAIRN_INVALID, "%s", why);
    if ((rc = store_begin(h)))
        return rc;
    struct store_vault v = { 0 };
    if ((rc = store_vault_insert(h, name, abs, excludes, (int64_t)time(NULL), &v.id)))
        goto fail;
    v.name = (char *)name;
    v.root = abs;
    v.settings = (char *)(excludes ? excludes : "");
    if ((rc = index_vault(h, &v, rep)))
        goto fail;
    if ((rc = store_commit(h)))
        return rc;
    return store_vault_vec_fill(h, &rep->vectors);
fail:
    store_rollback(h);
    return rc;
}

static int reindex_one(struct cairn *h, const char *name, struct cairn_vault_report *rep)
{
    struct store_vault v;
    int rc;
    if ((rc = store_begin(h)))
        return rc;
    if ((rc = store_vault_find(h, name, &v))) {
        store_rollback(h);
        return rc;
    }
    rc = index_vault(h, &v, rep);
    store_vault_release(&v);
    if (rc) {
        store_rollback(h);
        return rc;
    }
    return store_commit(h);
}

int cairn_vault_reindex(struct cairn *h, const char *name, struct cairn_vault_report *rep)
{
    struct cairn_vault_report mine;
    if (!rep)
        rep = &mine;
    memset(rep, 0, sizeof *rep);
    if (name && *name) {
        int rc = reindex_one(h, name, rep);
        /* the vectors after the index's transaction: the model runs with
         * no lock held (store/vault_vec.c) */
        return rc ? rc : store_vault_vec_fill(h, &rep->vectors);
    }
    struct store_vault *all;
    int n, rc = store_vault_all(h, &all, &n);
    for (int i = 0; !rc && i < n; i++)
        rc = reindex_one(h, all[i].name, rep);
    for (int i = 0; i < n; i++)
        store_vault_release(&all[i]);
    free(all);
    return rc;
}

static int rm_change(struct cairn *h, void *arg)
{
    return store_vault_delete(h, *(int64_t *)arg);
}

int cairn_vault_rm(struct cairn *h, const char *name)
{
    struct store_vault v;
    int rc;
    if (!name)
        return cairn__err(h, CAIRN_INVALID, "no vault name");
    if ((rc = store_vault_find(h, name, &v)))
        return rc;
    int64_t id = v.id;
    store_vault_release(&v);
    return store_scrub(h, rm_change, &id);
}

void cairn_vault_list_free(struct cairn_vault_info *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free((char *)v[i].name);
        free((char *)v[i].root);
        free((char *)v[i].excludes);
    }
    free(v);
}

int cairn_vault_list(struct cairn *h, struct cairn_vault_info **out, size_t *n)
{
    struct store_vault *all;
    int k, rc;
    *out = NULL;
    *n = 0;
    if ((rc = store_vault_all(h, &all, &k)))
        return rc;
    struct cairn_vault_info *v = k ? calloc((size_t)k, sizeof *v) : NULL;
    if (k && !v)
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
    for (int i = 0; i < k; i++) {
        if (v) {
            /* the strings move over */
            v[i] = (struct cairn_vault_info){ all[i].name, all[i].root, all[i].settings,
                                              all[i].added_at, all[i].indexed_at, all[i].docs,
                                              all[i].sections, all[i].bytes };
        } else {
            store_vault_release(&all[i]);
        }
    }
    free(all);
    if (!rc) {
        *out = v;
        *n = (size_t)k;
    }
    return rc;
}

int cairn_vault_stale(struct cairn *h, const char *name, int max_files, int64_t *changed,
                      int64_t *checked)
{
    struct store_vault v;
    struct store_vdoc *docs = NULL;
    struct walk w;
    int nd = 0, rc, e;
    *changed = *checked = 0;
    if (!name)
        return cairn__err(h, CAIRN_INVALID, "no vault name");
    if (max_files <= 0 || max_files > CAIRN_VAULT_MAX_FILES)
        max_files = CAIRN_VAULT_MAX_FILES;
    if ((rc = store_vault_find(h, name, &v)))
        return rc;
    if ((e = walk_vault(v.root, v.settings, max_files, &w))) {
        rc = walk_err(h, v.root, e);
        store_vault_release(&v);
        return rc;
    }
    if ((rc = store_vault_docs(h, v.id, &docs, &nd)))
        goto out;
    int j = 0;
    for (int i = 0; i < w.n; i++) {
        while (j < nd && strcmp(docs[j].path, w.f[i].path) < 0)
            j++;
        if (j < nd && !strcmp(docs[j].path, w.f[i].path)) {
            docs[j].seen = 1;
            if (docs[j].size != w.f[i].size || docs[j].mtime != w.f[i].mtime ||
                recut(&docs[j]))
                (*changed)++;
        } else {
            /* new, or left out last time (too big, binary): both count */
            (*changed)++;
        }
    }
    for (int k = 0; !w.truncated && k < nd; k++)
        *changed += !docs[k].seen;
    *checked = w.n;
out:
    store_vault_docs_free(docs, nd);
    walk_free(&w);
    store_vault_release(&v);
    return rc;
}
