/*
 * test_opts.c: options structs carry their size (include/cairn.h).
 *
 * cairn_recall and cairn_import_file read only the `size` bytes the caller
 * says its struct has: a struct from its *_INIT macro works, a zeroed one
 * (size 0) or one from a newer header (bigger than the library knows) is
 * CAIRN_INVALID with a message, and one from an older header (only the
 * first version's fields) gets defaults for the rest.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_open.h"
#include "cairn.h"

static char dir[] = "/tmp/cairn-test-opts-XXXXXX";
static struct cairn *db;

static int recall_rc(const struct cairn_recall_opts *o)
{
    struct cairn_recall *r = NULL;
    int rc = cairn_recall(db, "kestrel", o, &r);
    cairn_recall_free(r);
    return rc;
}

static void test_recall_opts(void)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    T_EQ_INT(o.size, sizeof o);
    T_EQ_INT(recall_rc(&o), CAIRN_OK);
    T_EQ_INT(recall_rc(NULL), CAIRN_OK);

    memset(&o, 0, sizeof o);
    T_EQ_INT(recall_rc(&o), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(db), "recall options") != NULL);

    /* a newer header's struct, with fields this library does not know */
    struct { struct cairn_recall_opts o; int later; } big;
    memset(&big, 0, sizeof big);
    big.o = (struct cairn_recall_opts)CAIRN_RECALL_OPTS_INIT;
    big.o.size = sizeof big;
    T_EQ_INT(recall_rc(&big.o), CAIRN_INVALID);

    /* the first version: up to `flags` */
    o = (struct cairn_recall_opts)CAIRN_RECALL_OPTS_INIT;
    o.size = offsetof(struct cairn_recall_opts, flags) + sizeof o.flags;
    T_EQ_INT(recall_rc(&o), CAIRN_OK);
    o.size -= 1;
    T_EQ_INT(recall_rc(&o), CAIRN_INVALID);
    /* the first version's size leaves min_rel_score at its default: a cut
     * beyond it in the caller's memory is never read */
    o = (struct cairn_recall_opts)CAIRN_RECALL_OPTS_INIT;
    o.size = offsetof(struct cairn_recall_opts, flags) + sizeof o.flags;
    o.min_rel_score = 7;
    T_EQ_INT(recall_rc(&o), CAIRN_OK);
    /* the cut is a fraction */
    o = (struct cairn_recall_opts)CAIRN_RECALL_OPTS_INIT;
    o.min_rel_score = 0.5;
    T_EQ_INT(recall_rc(&o), CAIRN_OK);
    o.min_rel_score = 1.5;
    T_EQ_INT(recall_rc(&o), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(db), "min_rel_score") != NULL);
    o.min_rel_score = -0.1;
    T_EQ_INT(recall_rc(&o), CAIRN_INVALID);
    o.min_rel_score = NAN;
    T_EQ_INT(recall_rc(&o), CAIRN_INVALID);
}

static void test_import_opts(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/s.jsonl", dir);
    FILE *f = fopen(path, "w");
    T_CHECK(f != NULL);
    if (!f)
        return;
    fputs("{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"s1\",\"cwd\":\"/tmp\","
          "\"timestamp\":\"2026-05-01T10:00:00Z\","
          "\"message\":{\"role\":\"user\",\"content\":\"the kestrel key\"}}\n", f);
    fclose(f);

    struct cairn_import_opts o = CAIRN_IMPORT_OPTS_INIT;
    struct cairn_import_stats st;
    T_EQ_INT(o.size, sizeof o);
    memset(&o, 0, sizeof o);
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_CODE, path, &o, &st), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(db), "import options") != NULL);
    T_EQ_INT(st.files, 0);
    o.size = sizeof o + 8;
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_CODE, path, &o, &st), CAIRN_INVALID);

    o = (struct cairn_import_opts)CAIRN_IMPORT_OPTS_INIT;
    o.project = "opts";
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_CODE, path, &o, &st), CAIRN_OK);
    T_EQ_INT(st.messages_added, 1);
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    if (!mkdtemp(dir))
        return 1;
    char path[300];
    snprintf(path, sizeof path, "%s/memory.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    if (db) {
        T_RUN(test_import_opts);
        T_RUN(test_recall_opts);
        cairn_close(db);
    }
    char cmd[340];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return T_DONE();
}
