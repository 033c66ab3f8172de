/*
 * spool.c: hook events that found the store locked, kept until a later
 * process can save them (docs/CAPTURE.md).
 *
 * A save hook waits for the store's lock only briefly (it must not hold
 * Claude Code up), so a long `cairn add` or import can make it give up.
 * For Stop that costs nothing: the next Stop of the session reads the
 * transcript from the stored offset and saves the turns. SessionEnd has no
 * next hook, and its turn was lost. So a hook that finds the store locked
 * writes its event here instead: one small file per transcript in the
 * folder STORE-spool beside the store, and the next save hook or `cairn
 * add` / `cairn import` (any session, any project) imports the transcript
 * from its offset, which saves the turns that event would have.
 *
 * Each file is written whole under a temporary name (O_EXCL, O_NOFOLLOW)
 * and renamed into place, so a drainer never reads half of one; its name
 * is a hash of the transcript's path, so a session's later events replace
 * its earlier one instead of piling up. A drainer claims a file by renaming
 * it to a name of its own before importing, so two processes never import
 * the same one; a claim whose process died goes back. The folder is
 * bounded: at most SPOOL_MAX files (CAIRN_SPOOL_MAX) of at most
 * SPOOL_MAX_BYTES each; past that the event is dropped with a line in
 * cairn.log, as it was before the spool existed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "cli.h"
#include "util/sha256.h"

#define SPOOL_MAX       256           /* files, one per transcript */
#define SPOOL_MAX_BYTES ((size_t)16384)
#define SPOOL_EXT       ".json"
#define SPOOL_CLAIM     ".claim."     /* .claim.<pid>.<name> while imported */

static int spool_path(const struct cairn *db, char *out, size_t n)
{
    const char *store = cairn_path(db);
    if (!*store || !strcmp(store, ":memory:"))
        return -1;
    return (size_t)snprintf(out, n, "%s-spool", store) >= n ? -1 : 0;
}

static int spool_max(void)
{
    const char *v = getenv("CAIRN_SPOOL_MAX");
    char *end;
    long x = v && *v ? strtol(v, &end, 10) : -1;
    return v && *v && !*end && x >= 0 && x <= 100000 ? (int)x : SPOOL_MAX;
}

/* The spooled files now in dir (not claims, not temporary files). */
static int spool_count(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && strstr(e->d_name, SPOOL_EXT))
            n++;
    closedir(d);
    return n;
}

/* Writes text to dir/name through a temporary file renamed into place. */
static int write_whole(const char *dir, const char *name, const char *text)
{
    char tmp[4300], final[4300];
    snprintf(final, sizeof final, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.tmp.%ld.%s", dir, (long)getpid(), name);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    size_t n = strlen(text);
    int ok = write(fd, text, n) == (ssize_t)n && fsync(fd) == 0;
    ok &= close(fd) == 0;
    if (!ok || rename(tmp, final) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

int spool_put(const struct cairn *db, const char *event, const char *sid, const char *tp,
              const char *cwd, const char *project)
{
    char dir[4096], name[64], hex[65];
    unsigned char dig[32];
    struct sha256 h;
    struct stat st;
    char *text = NULL;
    int rc = -1;
    if (spool_path(db, dir, sizeof dir))
        return -1;
    /* a folder of our own, not a link to somewhere else */
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        goto fail;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        goto fail;
    }
    sha256_init(&h);
    sha256_update(&h, tp, strlen(tp));
    sha256_final(&h, dig);
    sha256_hex(dig, hex);
    snprintf(name, sizeof name, "%.16s" SPOOL_EXT, hex);
    char final[4200];
    snprintf(final, sizeof final, "%s/%s", dir, name);
    if (access(final, F_OK) != 0 && spool_count(dir) >= spool_max()) {
        cli_log("hook %s: session %s: the spool is full (%d events in %s); this turn is "
                "not saved until `cairn import claude-code`", event, sid ? sid : "?",
                spool_max(), dir);
        return -1;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "event", event);
    cJSON_AddStringToObject(o, "session_id", sid ? sid : "");
    cJSON_AddStringToObject(o, "transcript_path", tp);
    cJSON_AddStringToObject(o, "cwd", cwd ? cwd : "");
    cJSON_AddStringToObject(o, "project", project ? project : "");
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!text || strlen(text) > SPOOL_MAX_BYTES) {
        errno = text ? EFBIG : ENOMEM;
        goto fail;
    }
    if (write_whole(dir, name, text))
        goto fail;
    rc = 0;
    goto out;
fail:
    cli_log("hook %s: session %s: cannot spool the event in %s: %s", event, sid ? sid : "?",
            dir, strerror(errno));
out:
    cJSON_free(text);
    return rc;
}

/* The spooled event in path as import options; 0 on success. The strings
 * point into *j, which the caller deletes. */
static int read_event(const char *path, cJSON **j, const char **tp,
                      struct cairn_import_opts *o)
{
    char text[SPOOL_MAX_BYTES + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, text, SPOOL_MAX_BYTES);
    close(fd);
    if (n <= 0)
        return -1;
    *j = cJSON_ParseWithLength(text, (size_t)n);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(*j, "transcript_path");
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return -1;
    *tp = v->valuestring;
    *o = (struct cairn_import_opts)CAIRN_IMPORT_OPTS_INIT;
    v = cJSON_GetObjectItemCaseSensitive(*j, "session_id");
    o->default_id = cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
    v = cJSON_GetObjectItemCaseSensitive(*j, "cwd");
    o->cwd = cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
    v = cJSON_GetObjectItemCaseSensitive(*j, "project");
    o->project = cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
    return 0;
}

/* A claim left by a process that died gets its old name back. */
static void reclaim(const char *dir, const char *claim)
{
    char *end;
    long pid = strtol(claim + strlen(SPOOL_CLAIM), &end, 10);
    if (*end != '.' || pid <= 0 || pid == (long)getpid() ||
        kill((pid_t)pid, 0) == 0 || errno != ESRCH)
        return;
    char from[4300], to[4300];
    snprintf(from, sizeof from, "%s/%s", dir, claim);
    snprintf(to, sizeof to, "%s/%s", dir, end + 1);
    if (rename(from, to) != 0)
        unlink(from);
}

/* Imports the claimed event at path. 1 when it is done with (saved, or
 * its transcript is gone), 0 when it must wait (the store is still
 * locked, or failed). */
static int drain_one(struct cairn *db, const char *path)
{
    cJSON *j = NULL;
    const char *tp;
    struct cairn_import_opts o;
    struct cairn_import_stats st;
    struct stat sb;
    int done = 1;
    if (read_event(path, &j, &tp, &o)) {
        cli_log("spool: %s is not a spooled event; removed", path);
        goto out;
    }
    if (stat(tp, &sb) != 0) {
        cli_log("spool: session %s: transcript %s is gone; event dropped",
                o.default_id ? o.default_id : "?", tp);
        goto out;
    }
    memset(&st, 0, sizeof st);
    int rc = cairn_import_file(db, CAIRN_IMPORT_CLAUDE_CODE, tp, &o, &st);
    if (rc) {
        cli_log("spool: session %s: %s: %s", o.default_id ? o.default_id : "?",
                cairn_errstr(rc), cairn_errmsg(db));
        done = rc != CAIRN_BUSY && rc != CAIRN_IO && rc != CAIRN_NOMEM;
    } else if (st.sessions_failed) {
        cli_log("spool: session %s: not saved: %s", o.default_id ? o.default_id : "?",
                cairn_errmsg(db));
    }
out:
    cJSON_Delete(j);
    return done;
}

int spool_drain(struct cairn *db, int max)
{
    char dir[4096];
    DIR *d;
    struct dirent *e;
    int drained = 0;
    if (spool_path(db, dir, sizeof dir) || !(d = opendir(dir)))
        return 0;                        /* nothing was ever spooled: the usual case */
    while (drained < max && (e = readdir(d))) {
        const char *name = e->d_name;
        if (!strncmp(name, SPOOL_CLAIM, strlen(SPOOL_CLAIM))) {
            reclaim(dir, name);
            continue;
        }
        if (name[0] == '.' || !strstr(name, SPOOL_EXT))
            continue;
        char from[4300], claim[4400];
        snprintf(from, sizeof from, "%s/%s", dir, name);
        snprintf(claim, sizeof claim, "%s/" SPOOL_CLAIM "%ld.%s", dir, (long)getpid(), name);
        if (rename(from, claim) != 0)
            continue;                    /* another process took it */
        if (!drain_one(db, claim)) {
            /* back for the next one; a newer event of the same transcript
             * says the same (import from the stored offset) */
            if (rename(claim, from) != 0)
                unlink(claim);
            break;
        }
        unlink(claim);
        drained++;
    }
    closedir(d);
    return drained;
}
