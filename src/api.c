/*
 * api.c: the handle: open, close, settings, the default store path; the
 * public face of util's ISO 8601 times. (The error plumbing every layer
 * from the store up uses is store/err.c.)
 *
 * Opening does the things every process needs before it can share the
 * file with others: private permissions on a new store, WAL so readers do
 * not block the writer, a busy timeout so a hook, the MCP server and an
 * import can write at once, our tokenizer on the connection, and the
 * schema migrated in one transaction. Any number of processes may do this
 * at once on one new store: every step waits for the others up to the
 * busy timeout (the one SQLite fails at once is retried: store_wal).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "store/post.h"
#include "store/tier.h"
#include "store/vectors.h"
#include "util/os.h"
#include "util/timeutil.h"

/* How long a writer waits for another process's transaction (ms). Imports
 * commit per session, so waits are short; this covers a slow disk. */
#define BUSY_TIMEOUT_MS 15000

const char *cairn_path(const struct cairn *db)
{
    /* a server store: user@host/database, never the URL's password */
    if (db && db->pg)
        return store_server_name(db);
    return db && db->path ? db->path : "";
}

int cairn_default_path(char *out, size_t n)
{
    /* HOME is one of the few variables the library reads: the default
     * places live under it (docs/ARCHITECTURE.md, "Settings"). */
    const char *home = getenv("HOME");
    if (!home || !*home)
        return CAIRN_ERROR;
    int len = snprintf(out, n, "%s/.cairn/memory.db", home);
    return len < 0 || (size_t)len >= n ? CAIRN_TOOBIG : CAIRN_OK;
}

/* The names of the settings, in enum cairn__setting order. */
static const char *const setting_names[CAIRN__NSET] = {
    "recall.exhaustive", "recall.prune_msgs", "recall.reply_lane", "embed.model",
    "embed.model_dir", "embed.threads", "embed.max_pieces", "vec.f32", "vec.cache", "redact",
    "store.cache_mb", "store.keep_turns", "pg.dense", "recall.tier",
    "store.tier_keep", "recall.packed", "store.tier_walk", "store.add_thread",
    "recall.threads", "recall.split_msgs", "recall.units", "recall.sketch",
    "embed.sentences",
};

int cairn_set(struct cairn *db, const char *key, const char *value)
{
    if (!db)
        return CAIRN_INVALID;
    for (int i = 0; key && i < CAIRN__NSET; i++) {
        if (strcmp(key, setting_names[i]))
            continue;
        /* the page cache is the connection's: set now (store/tx.c) */
        if (i == CAIRN__SET_CACHE_MB) {
            char *end;
            long mb = value && *value ? strtol(value, &end, 10) : 0;
            if (value && *value && (*end || mb < 1 || mb > STORE_CACHE_MB_MAX))
                return cairn__err(db, CAIRN_INVALID, "store.cache_mb is 1 to %d, not '%s'",
                                  STORE_CACHE_MB_MAX, value);
            int rc = store_cache_size(db, (int)mb);
            if (rc)
                return rc;
        }
        if (i == CAIRN__SET_EMBED_SENTENCES) {
            struct vec_sent sc;
            if (vec_sent_parse(value, &sc))
                return cairn__err(db, CAIRN_INVALID, "embed.sentences: unknown spec '%s' "
                                  "(on, only, overlap, group=N, words=N, min=N, long=N)", value);
        }
        char *v = value && *value ? strdup(value) : NULL;
        if (value && *value && !v)
            return cairn__err(db, CAIRN_NOMEM, "out of memory");
        free(db->set[i]);
        db->set[i] = v;
        return CAIRN_OK;
    }
    return cairn__err(db, CAIRN_INVALID, "unknown setting '%s'", key ? key : "(null)");
}

/* The folders above the store's path that do not exist yet, each 0700. */
static int make_store_folders(struct cairn *h, const char *path)
{
    char bad[PATH_MAX];
    if (strlen(path) >= PATH_MAX)
        return cairn__err(h, CAIRN_TOOBIG, "path too long: %s", path);
    if (os_mkparents(path, 0700, bad, sizeof bad) != 0)
        return cairn__err(h, CAIRN_IO, "cannot create folder %s: %s", bad, strerror(errno));
    return CAIRN_OK;
}

/* The file name as a URI path ("file:" + the path, with the characters a
 * URI gives a meaning percent-encoded). 0 on success. */
static int file_uri(const char *path, char *out, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    if (n < 6)
        return -1;
    memcpy(out, "file:", 5);
    k = 5;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (k + 4 >= n)
            return -1;
        if (*p == '%' || *p == '?' || *p == '#' || *p < 0x20) {
            out[k++] = '%';
            out[k++] = hex[*p >> 4];
            out[k++] = hex[*p & 15];
        } else {
            out[k++] = (char)*p;
        }
    }
    out[k] = '\0';
    return 0;
}

/*
 * A store this user may read but not write (a 0444 file in a 0555 folder,
 * a backup on read-only media): SQLite reads a WAL store through its -shm
 * file, which it cannot create there, and fails every read with "attempt
 * to write a readonly database". When that happens and no -wal file
 * exists (so every committed change is in the main file), the file is
 * opened again as immutable: read as it is, with no locks and no -shm.
 * That is only safe because nobody can change it without first making it
 * writable; a -wal file that is there may hold commits, so then the open
 * fails and says why instead of reading an old state.
 */
static int open_unwritable(struct cairn *h)
{
    char uri[4200], wal[4200];
    struct stat st;
    int src = store_probe(h);
    if ((src & 0xff) != SQLITE_READONLY && (src & 0xff) != SQLITE_CANTOPEN)
        return CAIRN_OK;                        /* readable, or another error, found later */
    snprintf(wal, sizeof wal, "%s-wal", h->path);
    if (lstat(wal, &st) == 0 && st.st_size > 0)
        return cairn__err(h, CAIRN_IO, "cannot read %s: it is not writable by this user and "
                          "%s holds changes not yet in it; open it once as its owner",
                          h->path, wal);
    if (file_uri(h->path, uri, sizeof uri - 16))
        return cairn__err(h, CAIRN_TOOBIG, "path too long: %s", h->path);
    strcat(uri, "?immutable=1");
    sqlite3_close_v2(h->db);
    h->db = NULL;
    src = sqlite3_open_v2(uri, &h->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                          NULL);
    if (src != SQLITE_OK)
        return cairn__sqlerr(h, src, "cannot open store");
    return CAIRN_OK;
}

/* A new handle on the store at path, its connection set up; the schema
 * is not looked at (cairn_open migrates). */
static int open_reader(struct cairn *h, struct cairn **r)
{
    return cairn_open(h->path, CAIRN_OPEN_READONLY | CAIRN_OPEN_NOCREATE, r);
}

static int connect_store(const char *path, unsigned flags, struct cairn **out)
{
    char def[4096];
    int rc = CAIRN_OK, src;
    struct cairn *h = calloc(1, sizeof *h);
    *out = h;
    if (!h)
        return CAIRN_NOMEM;
    h->readonly = (flags & CAIRN_OPEN_READONLY) != 0;
    h->open_reader = open_reader;
    h->close_reader = cairn_close;
    if (!path || !*path) {
        rc = cairn_default_path(def, sizeof def);
        if (rc)
            return cairn__err(h, rc, "no store path: set CAIRN_DB or HOME");
        path = def;
    }
    h->path = strdup(path);
    if (!h->path)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");

    int is_memory = strcmp(path, ":memory:") == 0, empty = 0;
    if (!is_memory) {
        struct stat st;
        if (stat(path, &st) != 0) {
            if (h->readonly || (flags & CAIRN_OPEN_NOCREATE))
                return cairn__err(h, CAIRN_NOTFOUND, "no store at %s", path);
            rc = make_store_folders(h, path);
            if (rc)
                return rc;
            /* Create the file ourselves so it is 0600 whatever the umask;
             * SQLite gives its -wal and -shm files the same mode. */
            int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (fd < 0 && errno != EEXIST)
                return cairn__err(h, CAIRN_IO, "cannot create %s: %s", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            empty = 1;
        } else if (!S_ISREG(st.st_mode)) {
            return cairn__err(h, CAIRN_IO, "%s is not a regular file", path);
        } else {
            empty = st.st_size == 0;
        }
    }

    int oflags = h->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    src = sqlite3_open_v2(path, &h->db, oflags | SQLITE_OPEN_NOMUTEX, NULL);
    if (src != SQLITE_OK)
        return cairn__sqlerr(h, src, "cannot open store");
    if (h->readonly && !is_memory && (rc = open_unwritable(h)))
        return rc;
    sqlite3_extended_result_codes(h->db, 0);
    sqlite3_busy_timeout(h->db, BUSY_TIMEOUT_MS);
    src = store_fts_register_tap(h->db, &h->fts_tap);
    if (src != SQLITE_OK)
        return cairn__sqlerr(h, src, "cannot register the tokenizer");
    if (!h->readonly && !is_memory) {
        /* Another program's file is refused before WAL changes its header. */
        if ((rc = store_check_foreign(h)))
            return rc;
        /* a new store's pages (tx.c, STORE_PAGE_SIZE); a file another
         * process wrote first keeps its own */
        if (empty && (rc = store_page_size_new(h)))
            return rc;
        if ((rc = store_wal(h, BUSY_TIMEOUT_MS)))
            return rc;
    }
    if ((rc = store_pragmas(h)))
        return rc;
    return vec_watch_commits(h);
}

/* A read-only handle on a store of an older schema (store_migrate says
 * why): a short writable handle migrates it, and then h reads it. */
static int upgrade_for_reader(struct cairn *h, int version)
{
    struct cairn *w = NULL;
    int rc = connect_store(h->path, CAIRN_OPEN_NOCREATE, &w), old;
    if (!rc)
        rc = store_migrate(w, &old);
    if (rc)
        cairn__err(h, rc, "%s needs a schema upgrade (version %d to %d), which failed: %s",
                   h->path, version, CAIRN_SCHEMA_VERSION, cairn_errmsg(w));
    cairn_close(w);
    return rc ? rc : store_check_upgraded(h);
}

int cairn_open(const char *path, unsigned flags, struct cairn **out)
{
    /* a server: an in-memory store holds what it reads (store/pg_read.c) */
    int server = store_is_server(path);
    int old, rc = connect_store(server ? ":memory:" : path, server ? 0 : flags, out);
    if (!rc && server && !(rc = store_migrate(*out, &old)))
        rc = store_server_open(*out, path);
    if (server)
        return rc;
    if (!rc)
        rc = store_migrate(*out, &old);
    if (!rc && old)
        rc = upgrade_for_reader(*out, old);
    /* expired memories go on open (store/memory.c); a reader that holds up
     * their wipe does not fail the open: the next wipe finishes it */
    if (!rc && (rc = memory_purge_expired(*out)) == CAIRN_SCRUB_PENDING)
        rc = CAIRN_OK;
    return rc;
}

void cairn_close(struct cairn *db)
{
    if (!db)
        return;
    store_server_close(db);
    store_turns_free(db);
    if (db->db) {
        store_group_commit(db);      /* documented: close lands a group */
        store_group_free(db);
        store_rollback(db);
        store_tier_keep_drop(db);    /* its statements, before the close */
        store_post_keep_drop(db);
        text_tokenizer_free(db->rec);
        text_toks_free(&db->rec_toks);
        sqlite3_close_v2(db->db);
    }
    for (int i = 0; i < CAIRN__NSET; i++)
        free(db->set[i]);
    free(db->path);
    free(db);
}

int cairn_process_init(void)
{
    /* sqlite3_config answers SQLITE_MISUSE once SQLite is initialised
     * (any open, any sqlite3_initialize): the setting is global, and a
     * library would change it under its embedder, hence the opt-in. */
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK ? CAIRN_OK : CAIRN_ERROR;
}

_Static_assert(CAIRN_NO_TIME == ISO8601_NONE, "util/timeutil.h and cairn.h agree on no time");

int cairn_parse_time(const char *s, int64_t *out)
{
    return iso8601_parse(s, out) == 0 ? CAIRN_OK : CAIRN_INVALID;
}

void cairn_format_time(int64_t t, int utc, char *out, size_t n)
{
    iso8601_format(t, utc, out, n);
}
