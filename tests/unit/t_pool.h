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

/* question's keyword pool (budget 1000, flags) gathered twice into q1/p1
 * and q2/p2, set(db, 0) before the first and set(db, 1) before the second
 * (a switch off and on), the time read from the question or not. */
static inline void t_gather_two(struct cairn *db, const char *question, int use_time, int flags,
                                int (*set)(struct cairn *, int), struct query *q1, struct pool *p1,
                                struct query *q2, struct pool *p2)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    o.method = CAIRN_METHOD_KEYWORD;
    o.flags = (unsigned)flags;
    o.budget = 1000;
    T_EQ_INT(query_parse(q1, question, 1800000000, use_time), 0);
    T_EQ_INT(query_parse(q2, question, 1800000000, use_time), 0);
    T_EQ_INT(set(db, 0), CAIRN_OK);
    T_EQ_INT(gather(db, q1, &o, NULL, NULL, NULL, p1), CAIRN_OK);
    T_EQ_INT(set(db, 1), CAIRN_OK);
    T_EQ_INT(gather(db, q2, &o, NULL, NULL, NULL, p2), CAIRN_OK);
}

static inline int t_str_same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* How many sessions of a and b (as many each) differ in row, start, dialog
 * flag, first turn or turn count, and with strings in their four strings. */
static inline int t_sessions_differ(const struct pool *a, const struct pool *b, int strings)
{
    int bad = 0;
    for (int i = 0; i < a->ns && i < b->ns; i++) {
        const struct rsession *x = &a->s[i], *y = &b->s[i];
        bad += x->row != y->row || x->started_at != y->started_at || x->dialog != y->dialog ||
               x->first_msg != y->first_msg || x->n_msgs != y->n_msgs ||
               (strings && (!t_str_same(x->ext_id, y->ext_id) ||
                            !t_str_same(x->source, y->source) ||
                            !t_str_same(x->project, y->project) ||
                            !t_str_same(x->title, y->title)));
    }
    return bad;
}

/* How many turns of a and b differ in row, session, position, role, time,
 * length, speaker or counts (nt), and once ranked in their unit and own
 * BM25 (s_msg, bit for bit). */
static inline int t_turns_differ(const struct pool *a, const struct pool *b, int nt, int ranked)
{
    int bad = 0;
    for (int i = 0; i < a->nm && i < b->nm; i++) {
        const struct rmsg *x = &a->m[i], *y = &b->m[i];
        int tf = (!x->tf) == (!y->tf);
        for (int t = 0; tf && x->tf && t < nt; t++)
            tf = x->tf[t] == y->tf[t];
        bad += x->row != y->row || x->sess != y->sess || x->position != y->position ||
               x->role != y->role || x->at != y->at || x->ntok != y->ntok ||
               !t_str_same(x->speaker, y->speaker) || !tf ||
               (ranked && (x->unit != y->unit || memcmp(&x->s_msg, &y->s_msg, sizeof x->s_msg)));
    }
    return bad;
}

#endif
