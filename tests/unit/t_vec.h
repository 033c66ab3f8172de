/*
 * t_vec.h: one vector row written straight into a test store, as
 * vec_batch_store would (test_hybrid, test_segment).
 */
#ifndef CAIRN_T_VEC_H
#define CAIRN_T_VEC_H

#include <sqlite3.h>

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

#endif
