/*
 * t_pool.h: the check of unit tests that build a question's pool two ways
 * (a switch off and on: the term tiers, the packed postings) and need the
 * two to be the same pool. Include after t.h and recall/recall.h.
 */
#ifndef CAIRN_T_POOL_H
#define CAIRN_T_POOL_H

/* Pools a (of query qa) and b (of qb) hold the same messages with the same
 * counts, and the same df and left-out counts for every word. Returns how
 * many of a's messages carry counts, so a caller can check that the
 * comparison compared something. */
static inline int t_pools_same(const struct query *qa, const struct pool *a,
                               const struct query *qb, const struct pool *b)
{
    T_EQ_INT(a->pruned, b->pruned);
    T_EQ_INT(a->nm, b->nm);
    T_EQ_INT(a->ns, b->ns);
    T_EQ_INT(qa->nt, qb->nt);
    for (int t = 0; t < qa->nt && t < qb->nt; t++) {
        T_EQ_INT(qa->t[t].df_msg, qb->t[t].df_msg);
        T_EQ_INT(a->pruned_df[t], b->pruned_df[t]);
    }
    T_EQ_INT(a->hit_msgs, b->hit_msgs);
    T_EQ_INT(a->hit_units, b->hit_units);
    int diff = 0, with = 0;
    for (int i = 0; i < a->nm && i < b->nm; i++) {
        diff += a->m[i].row != b->m[i].row || !a->m[i].tf != !b->m[i].tf;
        with += !!a->m[i].tf;
        for (int t = 0; a->m[i].tf && b->m[i].tf && t < qa->nt; t++)
            diff += a->m[i].tf[t] != b->m[i].tf[t];
    }
    T_EQ_INT(diff, 0);
    return with;
}

#endif
