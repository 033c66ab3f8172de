/*
 * t_vec.h: vector rows written straight into a test store, as
 * vec_batch_store would (test_hybrid, test_segment), or random ones in
 * bulk (test_veccache, test_vecsketch), and the files beside a store;
 * sets made on the heap freed and their hits compared (test_dense_levels,
 * test_dense_select, test_vecsketch).
 */
#ifndef CAIRN_T_VEC_H
#define CAIRN_T_VEC_H

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "store/vectors.h"

/* Piece `piece` of message msg: v[dim] (dim <= 64), quantised as stored. */
static inline void put_vec(struct cairn *h, const char *model, int64_t msg, int piece,
                           const float *v, int dim)
{
    sqlite3_stmt *st;
    int8_t q[64];
    float sc;
    vec_quantize(v, dim, q, &sc);
    T_EQ_INT(sqlite3_prepare_v2(h->db, "INSERT INTO vectors(model,msg,piece,session,dim,scale,v)"
                                " SELECT ?,id,?,session,?,?,? FROM messages WHERE id = ?", -1,
                                &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, piece);
    sqlite3_bind_int(st, 3, dim);
    sqlite3_bind_double(st, 4, sc);
    sqlite3_bind_blob(st, 5, q, dim, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, msg);
    T_EQ_INT(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
}

/* Random vectors (dim bytes) of pieces first..first+n-1 for every
 * message, in one statement (one transaction), then dated a minute back:
 * a reader writes the cache file only for vectors that stood still for
 * 30 s. */
static inline void t_put_vectors(struct cairn *h, const char *model, int dim, int first, int n)
{
    sqlite3_stmt *st;
    T_EQ_INT(sqlite3_prepare_v2(h->db, "WITH RECURSIVE p(x) AS (SELECT ?1 UNION ALL SELECT x + 1 "
                                "FROM p WHERE x + 1 < ?1 + ?2) INSERT INTO vectors(model, msg, "
                                "piece, session, dim, scale, v) SELECT ?3, m.id, p.x, m.session, "
                                "?4, 1, randomblob(?4) FROM messages m, p", -1, &st, NULL),
             SQLITE_OK);
    sqlite3_bind_int(st, 1, first);
    sqlite3_bind_int(st, 2, n);
    sqlite3_bind_text(st, 3, model, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, dim);
    T_EQ_INT(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE vec_stamp SET changed_at = changed_at - 60", NULL, NULL,
                          NULL), SQLITE_OK);
}

/* A fresh folder TMPDIR/NAME.XXXXXX in dir[dn] and its store's path
 * (memory.db) in store[sn]: 0, or -1 (said on stderr). */
static inline int t_vec_dir(const char *name, char *dir, size_t dn, char *store, size_t sn)
{
    snprintf(dir, dn, "%s/%s.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return -1;
    }
    snprintf(store, sn, "%s/memory.db", dir);
    return 0;
}

/* Removes the store and the files beside it, then the folder. */
static inline void t_vec_rmdir(const char *name, const char *dir, const char *store)
{
    static const char *const side[] = { "", "-wal", "-shm", "-vec", "-vsk" };
    for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s%s", store, side[i]);
        unlink(p);
    }
    if (rmdir(dir) != 0)
        fprintf(stderr, "%s: %s is not empty\n", name, dir);
}

#ifdef CAIRN_RECALL_H
/* Two dense searches' hits the same, bit for bit (a NaN cosine, from a
 * damaged norm, equals its own bits). */
static inline int t_same_hits(const struct dense_hit *x, int nx, const struct dense_hit *y, int ny)
{
    if (nx != ny)
        return 0;
    for (int i = 0; i < nx; i++)
        if (x[i].msg != y[i].msg || x[i].sess != y[i].sess ||
            memcmp(&x[i].cos, &y[i].cos, sizeof x[i].cos) != 0)
            return 0;
    return 1;
}
#endif

#ifdef CAIRN_T_STORE_H
/* A fresh store at path (the caller removes its side files): msgs / 16
 * sessions s0, s1, ... of 16 messages, `pieces` random vectors of model
 * (dim bytes) each. Needs t_store.h and t_open.h first. */
static inline void t_vec_store(const char *path, const char *model, int dim, int msgs,
                               int pieces)
{
    struct cairn *h = NULL;
    unlink(path);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    for (int s = 0; s < msgs / 16; s++) {
        char id[16];
        snprintf(id, sizeof id, "s%d", s);
        add_chat(h, id, 16);
    }
    t_put_vectors(h, model, dim, 0, pieces);
    cairn_close(h);
}
#endif

static inline int t_exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Overwrites p's bytes from `at` to `to` with `byte`, in place (as no
 * cairn writer ever does). */
static inline void t_spoil(const char *p, off_t at, off_t to, int byte)
{
    char b[4096];
    int fd = open(p, O_WRONLY);
    T_CHECK(fd >= 0);
    if (fd < 0)
        return;
    memset(b, byte, sizeof b);
    for (; at < to; at += (off_t)sizeof b) {
        size_t n = to - at < (off_t)sizeof b ? (size_t)(to - at) : sizeof b;
        T_EQ_INT(pwrite(fd, b, n, at), (long long)n);
    }
    close(fd);
}

static inline off_t t_file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? st.st_size : -1;
}

/* Frees a set made on the heap: its four arrays. */
static inline void t_free_set(struct vec_set *s)
{
    free(s->msg);
    free(s->sess);
    free(s->v8);
    free(s->inv_norm);
}

#endif
