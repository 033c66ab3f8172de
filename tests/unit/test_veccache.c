/*
 * test_veccache.c: the vector cache file beside the store
 * (store/veccache.c, vec_set_get in store/vectors.c).
 *
 *  - the first load reads SQLite and writes STORE-vec (0600); the next
 *    connection maps it and sees exactly the same set;
 *  - the file is stale after vectors are added (any path), after
 *    cairn_forget (which removes it at once), after a reindex, and for
 *    another model or dimension; a stale file is never used; vectors that
 *    changed in the last 30 s get no file;
 *  - a truncated, foreign, symlinked or hostile file is ignored and
 *    rebuilt; a damaged body reads no memory outside the mapping;
 *  - CAIRN_VEC_CACHE=0 neither reads nor writes it;
 *  - processes loading while another writes vectors only ever see whole
 *    committed states, and two processes building at once both succeed.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "recall/recall.h"
#include "store/vectors.h"
#include "t_store.h"
#include "t_open.h"
#include "t_vec.h"

enum { D = 16, MSGS = 128, PIECES = 80 };     /* 10,240 vectors: over VEC_CACHE_MIN */
#define MODEL "test-model:1"

static char dir[256], store[300], cache[320];

/* A fresh store: 8 sessions of 16 messages, PIECES vectors each. */
static void fresh_store(void)
{
    unlink(cache);
    t_vec_store(store, MODEL, D, MSGS, PIECES);
}

/* Loads MODEL on a new connection: the piece count, and whether it came
 * from the file (*mapped). */
static int64_t load(int *mapped)
{
    struct cairn *h = NULL;
    const struct vec_set *s = NULL;
    int64_t n = -1;
    if (t_open(store, CAIRN_OPEN_READONLY, &h) == CAIRN_OK &&
        vec_set_get(h, MODEL, D, &s) == CAIRN_OK && s) {
        n = (int64_t)s->n;
        *mapped = s->map != NULL;
    }
    cairn_close(h);
    return n;
}

static void test_roundtrip(void)
{
    struct cairn *a = NULL, *b = NULL;
    const struct vec_set *sa = NULL, *sb = NULL;
    struct stat st;
    fresh_store();
    T_CHECK(!t_exists(cache));
    T_EQ_INT(t_open(store, CAIRN_OPEN_READONLY, &a), CAIRN_OK);
    T_EQ_INT(vec_set_get(a, MODEL, D, &sa), CAIRN_OK);
    T_CHECK(sa && sa->map == NULL);              /* read from SQLite... */
    T_CHECK(stat(cache, &st) == 0);              /* ...and written beside it */
    T_EQ_INT(st.st_mode & 0777, 0600);
    T_EQ_INT(t_open(store, CAIRN_OPEN_READONLY, &b), CAIRN_OK);
    T_EQ_INT(vec_set_get(b, MODEL, D, &sb), CAIRN_OK);
    T_CHECK(sb && sb->map != NULL);              /* mapped */
    if (sa && sb) {
        T_EQ_INT(sb->n, MSGS * PIECES);
        T_EQ_INT(sb->n, sa->n);
        T_EQ_INT(sb->msgs_with, sa->msgs_with);
        T_EQ_INT(sb->msgs_total, MSGS);
        T_EQ_INT(sb->f32, 0);
        T_CHECK(!memcmp(sa->msg, sb->msg, sa->n * sizeof *sa->msg));
        T_CHECK(!memcmp(sa->sess, sb->sess, sa->n * sizeof *sa->sess));
        T_CHECK(!memcmp(sa->inv_norm, sb->inv_norm, sa->n * sizeof *sa->inv_norm));
        T_CHECK(!memcmp(sa->v8, sb->v8, sa->n * D));
    }
    /* a keyword-only message (as the Stop hook adds) leaves the vectors
     * and the file alone; only the message count is read again */
    struct cairn *w = NULL;
    T_EQ_INT(t_open(store, 0, &w), CAIRN_OK);
    add_chat(w, "no-vectors", 2);
    cairn_close(w);
    T_CHECK(t_exists(cache));
    T_EQ_INT(vec_set_get(b, MODEL, D, &sb), CAIRN_OK);
    T_CHECK(sb && sb->map != NULL && sb->msgs_total == MSGS + 2);
    cairn_close(a);
    cairn_close(b);
}

static void test_stale(void)
{
    int mapped = -1;
    struct cairn *h = NULL;
    fresh_store();
    T_EQ_INT(load(&mapped), MSGS * PIECES);
    T_EQ_INT(load(&mapped), MSGS * PIECES);
    T_EQ_INT(mapped, 1);
    /* vectors added outside cairn's transactions (the sqlite3 shell): the
     * file stays but its stamp is old; it is not used, and is rebuilt */
    T_EQ_INT(t_open(store, 0, &h), CAIRN_OK);
    t_put_vectors(h, MODEL, D, PIECES, 1);
    cairn_close(h);
    T_CHECK(t_exists(cache));
    T_EQ_INT(load(&mapped), MSGS * (PIECES + 1));
    T_EQ_INT(mapped, 0);
    T_EQ_INT(load(&mapped), MSGS * (PIECES + 1));
    T_EQ_INT(mapped, 1);
    /* vectors that changed in the last 30 s (a backfill under way): read
     * out of SQLite, but no file is written for them */
    T_EQ_INT(t_open(store, 0, &h), CAIRN_OK);
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE vec_stamp SET changed_at = CAST(strftime('%s') AS "
                          "INTEGER)", NULL, NULL, NULL), SQLITE_OK);
    cairn_close(h);
    unlink(cache);
    T_EQ_INT(load(&mapped), MSGS * (PIECES + 1));
    T_EQ_INT(mapped, 0);
    T_CHECK(!t_exists(cache));
    T_EQ_INT(t_open(store, 0, &h), CAIRN_OK);
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE vec_stamp SET changed_at = changed_at - 31", NULL, NULL,
                          NULL), SQLITE_OK);
    cairn_close(h);
    T_EQ_INT(load(&mapped), MSGS * (PIECES + 1));
    T_CHECK(t_exists(cache));
    /* forget: the file goes with the commit, and the session's vectors
     * are in no set after */
    T_EQ_INT(t_open(store, 0, &h), CAIRN_OK);
    T_EQ_INT(cairn_forget(h, "s0"), CAIRN_OK);
    T_CHECK(!t_exists(cache));
    T_EQ_INT(count(h, "SELECT count(*) FROM vectors"), (MSGS - 16) * (PIECES + 1));
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE vec_stamp SET changed_at = changed_at - 60", NULL, NULL,
                          NULL), SQLITE_OK);
    cairn_close(h);
    T_EQ_INT(load(&mapped), (MSGS - 16) * (PIECES + 1));
    T_EQ_INT(mapped, 0);
    T_EQ_INT(load(&mapped), (MSGS - 16) * (PIECES + 1));
    T_EQ_INT(mapped, 1);
    /* another model or dimension never reads this model's file */
    struct cairn *r = NULL;
    const struct vec_set *s = NULL;
    T_EQ_INT(t_open(store, CAIRN_OPEN_READONLY, &r), CAIRN_OK);
    T_EQ_INT(vec_set_get(r, "other-model:2", D, &s), CAIRN_OK);
    T_CHECK(s && s->n == 0 && s->map == NULL);
    T_EQ_STR(s->other, MODEL);
    T_EQ_INT(vec_set_get(r, MODEL, D * 2, &s), CAIRN_OK);
    T_CHECK(s && s->n == 0 && s->map == NULL);
    cairn_close(r);
    T_EQ_INT(load(&mapped), (MSGS - 16) * (PIECES + 1));
    T_EQ_INT(mapped, 1);
    /* the setting vec.cache "0": not read, and not written */
    t_vec_cache = "0";
    T_EQ_INT(load(&mapped), (MSGS - 16) * (PIECES + 1));
    T_EQ_INT(mapped, 0);
    unlink(cache);
    T_EQ_INT(load(&mapped), (MSGS - 16) * (PIECES + 1));
    T_CHECK(!t_exists(cache));
    t_vec_cache = NULL;
    /* a writer killed before its rename left a temporary file: the next
     * writer removes it once it is old, forget at once (it may hold the
     * forgotten vectors); other names are left alone */
    {
        char t1[400], t2[400], keep[400];
        snprintf(t1, sizeof t1, "%s.Ab12Cd", cache);
        snprintf(t2, sizeof t2, "%s.Ef34Gh", cache);
        snprintf(keep, sizeof keep, "%s.notes", cache);
        FILE *f;
        T_CHECK((f = fopen(t1, "w")) && fclose(f) == 0);
        T_CHECK((f = fopen(t2, "w")) && fclose(f) == 0);
        T_CHECK((f = fopen(keep, "w")) && fclose(f) == 0);
        struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
        T_EQ_INT(utimensat(AT_FDCWD, t1, old, 0), 0);
        unlink(cache);
        T_EQ_INT(load(&mapped), (MSGS - 16) * (PIECES + 1));
        T_CHECK(t_exists(cache));
        T_CHECK(!t_exists(t1));                      /* old: removed by the writer */
        T_CHECK(t_exists(t2));                       /* recent: may be a writer's */
        T_EQ_INT(t_open(store, 0, &h), CAIRN_OK);
        T_EQ_INT(cairn_forget(h, "s1"), CAIRN_OK);
        T_EQ_INT(sqlite3_exec(h->db, "UPDATE vec_stamp SET changed_at = changed_at - 60", NULL,
                              NULL, NULL), SQLITE_OK);
        cairn_close(h);
        T_CHECK(!t_exists(t2));                      /* forget: every one */
        T_CHECK(t_exists(keep));
        unlink(keep);
    }
}

/* reindex deletes every vector in a committed transaction: the file
 * goes. Needs a model: the tiny BERT in the repository. */
static void test_reindex(void)
{
    char model[600];
    const char *root = getenv("CAIRN_TEST_ROOT");
    struct cairn *h = NULL;
    struct cairn_embed_stats es;
    int mapped = -1;
    snprintf(model, sizeof model, "%s/tests/data/embed/tiny-bert", root ? root : ".");
    fresh_store();
    T_EQ_INT(load(&mapped), MSGS * PIECES);
    T_CHECK(t_exists(cache));
    t_model = model;
    T_EQ_INT(t_open(store, 0, &h), CAIRN_OK);
    memset(&es, 0, sizeof es);
    T_EQ_INT(cairn_embed_backfill(h, 1, NULL, NULL, &es), CAIRN_OK);
    T_EQ_INT(es.messages, MSGS);
    T_CHECK(!t_exists(cache));
    T_EQ_INT(count(h, "SELECT count(*) FROM vectors WHERE model = '" MODEL "'"), 0);
    cairn_close(h);
    t_model = "none";
    T_EQ_INT(load(&mapped), 0);
    T_CHECK(!t_exists(cache));                     /* 128 vectors: no file for so few */
}

static void test_hostile(void)
{
    int mapped = -1;
    const int64_t N = MSGS * PIECES;
    fresh_store();
    T_EQ_INT(load(&mapped), N);
    off_t full = t_file_size(cache);
    T_CHECK(full > 512 + N * D);
    /* truncated: ignored, rebuilt whole */
    T_EQ_INT(truncate(cache, full - 1), 0);
    T_EQ_INT(load(&mapped), N);
    T_EQ_INT(mapped, 0);
    T_EQ_INT(t_file_size(cache), full);
    T_EQ_INT(load(&mapped), N);
    T_EQ_INT(mapped, 1);
    /* a header byte changed (the piece count): its hash fails */
    t_spoil(cache, 24, 25, 0x01);
    T_EQ_INT(load(&mapped), N);
    T_EQ_INT(mapped, 0);
    /* only a header: too short */
    T_EQ_INT(truncate(cache, 512), 0);
    T_EQ_INT(load(&mapped), N);
    T_EQ_INT(mapped, 0);
    /* a foreign file of the right size */
    t_spoil(cache, 0, full, 0x5a);
    T_EQ_INT(t_file_size(cache), full);
    T_EQ_INT(load(&mapped), N);
    T_EQ_INT(mapped, 0);
    /* a damaged body with a valid header is read only as values: message
     * ids and norms of garbage, never outside the mapping (ASan) */
    T_EQ_INT(load(&mapped), N);
    T_EQ_INT(mapped, 1);
    {
        t_spoil(cache, 512, full, 0xff);
        struct cairn *h = NULL;
        const struct vec_set *s = NULL;
        T_EQ_INT(t_open(store, CAIRN_OPEN_READONLY, &h), CAIRN_OK);
        T_EQ_INT(vec_set_get(h, MODEL, D, &s), CAIRN_OK);
        T_CHECK(s && s->map != NULL);
        float q[D] = { 1, 0.5f, -0.25f };
        struct dense_hit hits[8];
        int n = s ? dense_topk(s, q, NULL, 0, 8, 2, hits) : -1;
        T_CHECK(n >= 0 && n <= 8);
        cairn_close(h);
    }
    /* a symlink in its place is not followed, and is replaced */
    unlink(cache);
    T_EQ_INT(symlink(store, cache), 0);
    T_EQ_INT(load(&mapped), N);
    T_EQ_INT(mapped, 0);
    struct stat st;
    T_CHECK(lstat(cache, &st) == 0 && S_ISREG(st.st_mode));
    T_EQ_INT(load(&mapped), N);
    T_EQ_INT(mapped, 1);
}

/* Readers in other processes while a writer adds vectors PIECES at a
 * time in transactions: every load is a whole committed state (a multiple
 * of MSGS pieces), from the file or from SQLite, never a torn file. Then
 * two processes with no file build it at once. */
static void test_processes(void)
{
    enum { READERS = 2, ROUNDS = 6 };
    pid_t pid[READERS + 1];
    fresh_store();
    for (int r = 0; r < READERS; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            int bad = 0, mapped;
            for (int i = 0; i < 40; i++) {
                int64_t n = load(&mapped);
                if (n < MSGS * PIECES || n % MSGS)
                    bad = 1;
            }
            _exit(bad);
        }
    }
    pid[READERS] = fork();
    if (pid[READERS] == 0) {
        struct cairn *h = NULL;
        int failed_before = t_failed;
        if (t_open(store, 0, &h) != CAIRN_OK)
            _exit(2);
        for (int i = 0; i < ROUNDS; i++)
            t_put_vectors(h, MODEL, D, PIECES + i * 4, 4);
        cairn_close(h);
        _exit(t_failed > failed_before ? 3 : 0);
    }
    for (int r = 0; r <= READERS; r++) {
        int status = -1;
        waitpid(pid[r], &status, 0);
        T_CHECK(WIFEXITED(status));
        T_EQ_INT(WEXITSTATUS(status), 0);
    }
    int mapped;
    const int64_t N = MSGS * (PIECES + ROUNDS * 4);
    unlink(cache);
    for (int r = 0; r < 2; r++) {
        pid[r] = fork();
        if (pid[r] == 0)
            _exit(load(&mapped) == N ? 0 : 1);
    }
    for (int r = 0; r < 2; r++) {
        int status = -1;
        waitpid(pid[r], &status, 0);
        T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    T_EQ_INT(load(&mapped), N);
    T_EQ_INT(mapped, 1);
}

int main(void)
{
    if (t_vec_dir("cairn-veccache", dir, sizeof dir, store, sizeof store))
        return 1;
    snprintf(cache, sizeof cache, "%s-vec", store);
    T_RUN(test_roundtrip);
    T_RUN(test_stale);
    T_RUN(test_reindex);
    T_RUN(test_hostile);
    T_RUN(test_processes);
    t_vec_rmdir("test_veccache", dir, store);
    return T_DONE();
}
