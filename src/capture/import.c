/*
 * import.c: the importers' entry point (cairn_import_file): a file in,
 * whole sessions in the store out.
 *
 * It ties the pure parsers (claude_code.c, chat_export.c, codex.c, aider.c) to the
 * store: reads the file (or, for exports, the conversations.json inside
 * the .zip users download), gives each session its project (project.c)
 * and client, and adds each session in its own transaction, so an import
 * killed at any point leaves whole sessions only, and a rerun completes
 * the rest (adding a message twice is a no-op).
 *
 * The capture state (one row per file) makes the second run cheap: an
 * unchanged file is skipped without being read, and a Claude Code
 * transcript that grew is parsed with the offset of the last complete line
 * seen, so only the new turns are handed to the store (an aider log the
 * same way, by session). The state is
 * written after the sessions are committed: a crash in between only means
 * the same turns are offered again.
 *
 * libzip is not linked: it is dlopen'ed ("libzip.so.4") at the first .zip,
 * so that the hooks, which import transcripts many times a day, do not
 * pay its load time; <zip.h> still gives the types and constants.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>
#include <cjson/cJSON.h>

#include "internal.h"
#include "capture/capture.h"
#include "util/buf.h"
#include "util/dl.h"

int cairn_import_kind_parse(const char *name)
{
    static const struct { const char *n; int k; } kinds[] = {
        { "claude-code", CAIRN_IMPORT_CLAUDE_CODE }, { "claude-ai", CAIRN_IMPORT_CLAUDE_AI },
        { "claude.ai", CAIRN_IMPORT_CLAUDE_AI },     { "chatgpt", CAIRN_IMPORT_CHATGPT },
        { "codex", CAIRN_IMPORT_CODEX },             { "jsonl", CAIRN_IMPORT_JSONL },
        { "aider", CAIRN_IMPORT_AIDER },
    };
    for (size_t i = 0; name && i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(name, kinds[i].n))
            return kinds[i].k;
    return 0;
}

static const char *kind_source(int kind)
{
    switch (kind) {
    case CAIRN_IMPORT_CLAUDE_CODE: return "claude-code";
    case CAIRN_IMPORT_CLAUDE_AI:   return "claude-ai";
    case CAIRN_IMPORT_CHATGPT:     return "chatgpt";
    case CAIRN_IMPORT_CODEX:       return "codex";
    case CAIRN_IMPORT_AIDER:       return "aider";
    }
    return NULL;
}

/* What a file of the kind is, for the messages that name it. */
static const char *kind_what(int kind)
{
    switch (kind) {
    case CAIRN_IMPORT_CLAUDE_CODE: return "a Claude Code transcript";
    case CAIRN_IMPORT_CLAUDE_AI:   return "a claude.ai export";
    case CAIRN_IMPORT_CHATGPT:     return "a ChatGPT export";
    case CAIRN_IMPORT_CODEX:       return "a Codex CLI rollout";
    case CAIRN_IMPORT_AIDER:       return "an aider chat log";
    case CAIRN_IMPORT_JSONL:       return "sessions in the cairn add format";
    }
    return "a file cairn imports";
}

/* ---- .zip exports ------------------------------------------------------ */

/* 1 if the buffer starts like a zip archive (a local file header, or the
 * end record of an empty archive). */
static int is_zip(const char *p, size_t n)
{
    return n >= 4 && p[0] == 'P' && p[1] == 'K' &&
           ((p[2] == 3 && p[3] == 4) || (p[2] == 5 && p[3] == 6));
}

/* The libzip functions we call, resolved once by zl_init. */
static struct {
    zip_t *(*zip_open)(const char *, int, int *);
    zip_int64_t (*zip_get_num_entries)(zip_t *, zip_flags_t);
    const char *(*zip_get_name)(zip_t *, zip_uint64_t, zip_flags_t);
    void (*zip_stat_init)(zip_stat_t *);
    int (*zip_stat_index)(zip_t *, zip_uint64_t, zip_flags_t, zip_stat_t *);
    zip_file_t *(*zip_fopen_index)(zip_t *, zip_uint64_t, zip_flags_t);
    const char *(*zip_strerror)(zip_t *);
    zip_int64_t (*zip_fread)(zip_file_t *, void *, zip_uint64_t);
    const char *(*zip_file_strerror)(zip_file_t *);
    int (*zip_fclose)(zip_file_t *);
    void (*zip_discard)(zip_t *);
} zl;
static int zl_ok;
static char zl_err[400];
static pthread_once_t zl_once = PTHREAD_ONCE_INIT;

static void zl_init(void)
{
    static const char *const names[] = {
        "zip_open", "zip_get_num_entries", "zip_get_name", "zip_stat_init",
        "zip_stat_index", "zip_fopen_index", "zip_strerror", "zip_fread",
        "zip_file_strerror", "zip_fclose", "zip_discard",
    };
    void *sym[11];

    if (!dl_load("libzip.so.4", "libzip4", names, sym, 11, zl_err, sizeof(zl_err)))
        return;
    /* dlsym gives object pointers; POSIX guarantees they convert. */
    zl.zip_open = (__typeof__(zl.zip_open))sym[0];
    zl.zip_get_num_entries = (__typeof__(zl.zip_get_num_entries))sym[1];
    zl.zip_get_name = (__typeof__(zl.zip_get_name))sym[2];
    zl.zip_stat_init = (__typeof__(zl.zip_stat_init))sym[3];
    zl.zip_stat_index = (__typeof__(zl.zip_stat_index))sym[4];
    zl.zip_fopen_index = (__typeof__(zl.zip_fopen_index))sym[5];
    zl.zip_strerror = (__typeof__(zl.zip_strerror))sym[6];
    zl.zip_fread = (__typeof__(zl.zip_fread))sym[7];
    zl.zip_file_strerror = (__typeof__(zl.zip_file_strerror))sym[8];
    zl.zip_fclose = (__typeof__(zl.zip_fclose))sym[9];
    zl.zip_discard = (__typeof__(zl.zip_discard))sym[10];
    zl_ok = 1;
}

/* Reads the conversations.json of an export archive (at any depth; the
 * shortest path wins) into a malloc'd NUL-terminated buffer. */
static int zip_conversations(struct cairn *h, const char *path, char **out, size_t *outlen)
{
    int zerr = 0, rc = CAIRN_OK;
    zip_t *z;
    zip_file_t *zf = NULL;
    char *p = NULL;
    *out = NULL;
    *outlen = 0;
    pthread_once(&zl_once, zl_init);
    if (!zl_ok)
        return cairn__err(h, CAIRN_ERROR, "%s: %s", path, zl_err);
    z = zl.zip_open(path, ZIP_RDONLY, &zerr);
    if (!z)
        return cairn__err(h, CAIRN_INVALID, "%s: not a readable zip archive (libzip error %d)",
                          path, zerr);
    zip_int64_t n = zl.zip_get_num_entries(z, 0), best = -1;
    size_t best_len = 0;
    for (zip_int64_t i = 0; i < n; i++) {
        const char *name = zl.zip_get_name(z, (zip_uint64_t)i, ZIP_FL_ENC_GUESS);
        if (!name)
            continue;
        const char *base = strrchr(name, '/');
        base = base ? base + 1 : name;
        if (strcmp(base, "conversations.json"))
            continue;
        if (best < 0 || strlen(name) < best_len) {
            best = i;
            best_len = strlen(name);
        }
    }
    if (best < 0) {
        rc = cairn__err(h, CAIRN_INVALID, "%s: no conversations.json in the archive", path);
        goto out;
    }
    zip_stat_t zs;
    zl.zip_stat_init(&zs);
    if (zl.zip_stat_index(z, (zip_uint64_t)best, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_SIZE)) {
        rc = cairn__err(h, CAIRN_INVALID, "%s: cannot read the archive's directory", path);
        goto out;
    }
    /* refused before anything is read: the size is the directory's */
    if (zs.size > CAPTURE_MAX_EXPORT) {
        rc = cairn__err(h, CAIRN_TOOBIG, "%s: its conversations.json is %llu MB, over the %zu MB "
                        "cairn reads from an archive (unzip it and import the file)", path,
                        (unsigned long long)(zs.size >> 20), CAPTURE_MAX_EXPORT >> 20);
        goto out;
    }
    /* The directory's size is a claim, not a fact: read no more than it
     * says, and fail cleanly when the data runs short or is corrupt. */
    size_t want = (size_t)zs.size, got = 0;
    p = malloc(want + 1);
    if (!p) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory reading %s", path);
        goto out;
    }
    zf = zl.zip_fopen_index(z, (zip_uint64_t)best, 0);
    if (!zf) {
        rc = cairn__err(h, CAIRN_INVALID, "%s: %s", path, zl.zip_strerror(z));
        goto out;
    }
    while (got < want) {
        zip_int64_t r = zl.zip_fread(zf, p + got, want - got);
        if (r < 0) {
            rc = cairn__err(h, CAIRN_INVALID, "%s: damaged archive: %s", path,
                            zl.zip_file_strerror(zf));
            goto out;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    p[got] = '\0';
    *out = p;
    *outlen = got;
    p = NULL;
out:
    if (zf)
        zl.zip_fclose(zf);
    zl.zip_discard(z);
    free(p);
    return rc;
}

/* ---- Sessions into the store ---------------------------------------- */

/* The last folder resolved, so a directory of one project's transcripts
 * walks the folder tree once. */
struct project_cache {
    char dir[1024];
    struct cairn_project p;
    int valid;
};

static const struct cairn_project *project_for(struct project_cache *c, const char *dir)
{
    if (!dir || !*dir)
        return NULL;
    if (c->valid && !strcmp(c->dir, dir))
        return &c->p;
    if (strlen(dir) >= sizeof c->dir || cairn_project_of(dir, &c->p) != CAIRN_OK)
        return NULL;
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    c->valid = 1;
    return &c->p;
}

/* The session's meta with the git identity added. malloc'd; NULL keeps
 * the old one (no memory, or nothing to add). */
static char *enrich_meta(const char *meta, const struct cairn_project *p, const char *cwd)
{
    if (!p || (!p->git_remote[0] && !p->git_common_dir[0] && !cwd))
        return NULL;
    cJSON *m = meta ? cJSON_Parse(meta) : cJSON_CreateObject();
    char *res = NULL;
    if (!m || !cJSON_IsObject(m))
        goto out;
    if (cwd && !cJSON_HasObjectItem(m, "cwd"))
        cJSON_AddStringToObject(m, "cwd", cwd);
    if (p->git_remote[0] && !cJSON_HasObjectItem(m, "gitRemote"))
        cJSON_AddStringToObject(m, "gitRemote", p->git_remote);
    if (p->git_common_dir[0] && !cJSON_HasObjectItem(m, "gitCommonDir"))
        cJSON_AddStringToObject(m, "gitCommonDir", p->git_common_dir);
    res = cJSON_PrintUnformatted(m);
out:
    cJSON_Delete(m);
    return res;
}

static void add_counts(struct cairn_import_stats *st, const struct capture_counts *c)
{
    st->lines += c->lines_total;
    st->lines_blank += c->lines_blank;
    st->lines_ignored += c->lines_ignored;
    st->bad_json += c->skipped_bad_json;
    st->unknown_type += c->skipped_unknown_type;
    st->wrong_type += c->skipped_wrong_type;
    st->too_long += c->skipped_too_long;
    st->utf8_repaired += c->utf8_repaired;
    st->private_removed += c->private_removed;
    st->messages_dropped += c->messages_dropped;
}

/* Adds every session of the batch. Store refusals of one session are
 * counted and the rest go on; locks, I/O and memory stop the import. */
static int add_batch(struct cairn *h, int kind, struct capture_batch *b,
                     const struct cairn_import_opts *o, struct cairn_import_stats *st,
                     uint64_t total, int refresh)
{
    struct project_cache *pc = calloc(1, sizeof *pc);
    int rc = CAIRN_OK, failed_rc = CAIRN_OK;
    char failed_msg[sizeof h->errmsg];
    if (!pc)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    failed_msg[0] = '\0';
    for (size_t i = 0; i < b->n; i++) {
        struct cairn_session *s = &b->v[i].s;
        struct cairn_add_stats as = { 0 };
        const char *cwd = s->project && *s->project ? s->project : o->cwd;
        const struct cairn_project *p = project_for(pc, cwd);
        char *meta = NULL;
        s->source = kind_source(kind);
        if (o->project && *o->project)
            s->project = o->project;
        else if (p)
            s->project = p->name;
        if (p && (meta = enrich_meta(s->meta, p, s->meta ? NULL : cwd)))
            s->meta = meta;
        st->sessions++;
        rc = cairn_add_session(h, s, &as);
        if (rc == CAIRN_OK && refresh && !as.sessions_added && s->id &&
            (s->title || s->meta)) {
            /* An existing session seen again (the Stop hook): the title and
             * meta now come from the whole transcript. */
            rc = cairn_session_update(h, s->id, s->title, s->meta);
        }
        if (meta)
            cJSON_free(meta);
        if (rc == CAIRN_INVALID || rc == CAIRN_TOOBIG || rc == CAIRN_ERROR) {
            st->sessions_failed++;
            failed_rc = rc;
            snprintf(failed_msg, sizeof failed_msg, "%s", h->errmsg);
            rc = CAIRN_OK;
        } else if (rc) {
            break;
        }
        st->sessions_added += as.sessions_added;
        st->sessions_updated += as.sessions_updated;
        st->messages_added += as.messages_added;
        st->messages_skipped += as.messages_skipped;
        st->secrets_masked += as.secrets_masked;
        if (o->progress)
            o->progress(o->progress_arg, total * (i + 1) / b->n, total);
    }
    free(pc);
    if (!rc && failed_rc)   /* leave the last refusal's reason on the handle */
        cairn__err(h, failed_rc, "%s", failed_msg);
    return rc;
}

/* cairn add format: one session a line; a bad line is counted and skipped. */
static int import_jsonl(struct cairn *h, const char *data, size_t len,
                        const struct cairn_import_opts *o, struct cairn_import_stats *st)
{
    size_t p = 0;
    int rc = CAIRN_OK, failed_rc = CAIRN_OK;
    char failed_msg[sizeof h->errmsg];
    failed_msg[0] = '\0';
    while (p < len) {
        const char *nl = memchr(data + p, '\n', len - p);
        size_t e = nl ? (size_t)(nl - data) : len, q = p;
        st->lines++;
        while (q < e && (data[q] == ' ' || data[q] == '\t' || data[q] == '\r'))
            q++;
        if (q == e) {
            st->lines_blank++;
        } else if (e - q > CAPTURE_MAX_LINE) {
            st->too_long++;
        } else {
            struct cairn_add_stats as = { 0 };
            st->sessions++;
            rc = cairn_add_json(h, data + q, e - q, &as);
            if (rc == CAIRN_INVALID || rc == CAIRN_TOOBIG || rc == CAIRN_ERROR) {
                st->sessions_failed++;
                failed_rc = rc;
                /* h->errmsg may be cut to fit: it is a one-line reason */
                int k = snprintf(failed_msg, 32, "line %zu: ", st->lines);
                snprintf(failed_msg + k, sizeof failed_msg - (size_t)k, "%.*s",
                         (int)(sizeof failed_msg - 40), h->errmsg);
                rc = CAIRN_OK;
            } else if (rc) {
                break;
            }
            st->sessions_added += as.sessions_added;
            st->sessions_updated += as.sessions_updated;
            st->messages_added += as.messages_added;
            st->messages_skipped += as.messages_skipped;
            st->secrets_masked += as.secrets_masked;
        }
        p = e + 1;
        if (o->progress)
            o->progress(o->progress_arg, p > len ? len : p, len);
    }
    if (!rc && failed_rc)
        cairn__err(h, failed_rc, "%s", failed_msg);
    return rc;
}

/* The file name without folders and without ".jsonl". */
static void default_id_of(const char *path, char *out, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t len = strlen(b);
    if (len > 6 && !strcmp(b + len - 6, ".jsonl"))
        len -= 6;
    if (len >= n)
        len = n - 1;
    memcpy(out, b, len);
    out[len] = '\0';
}

/* aider keeps its log in the project folder: the folder is the project,
 * and the log's full path names its sessions (every project's log has
 * the same file name). */
static int import_aider(const char *path, const char *data, size_t len, uint64_t from,
                        struct capture_batch *b, uint64_t *next)
{
    char *full = realpath(path, NULL);
    const char *p = full ? full : path;
    const char *slash = strrchr(p, '/');
    int rc = capture_aider(data, len, from, p, b, next);
    char *dir = rc || !slash ? NULL : capture_strndup(b, p, slash == p ? 1 : (size_t)(slash - p));
    if (!rc && slash && !dir)
        rc = CAIRN_NOMEM;
    for (size_t i = 0; !rc && dir && i < b->n; i++)
        b->v[i].s.project = dir;
    free(full);
    return rc;
}

/*
 * A file that gave no session as `kind`. When it looks like another kind
 * (a .zip looked into), CAIRN_INVALID saying so and which import reads
 * it; else `rc` as it was: CAIRN_OK (a file of that kind with no
 * conversation in it) or CAIRN_INVALID (not that kind at all).
 */
static int wrong_kind(struct cairn *h, int kind, const char *path, const char *data,
                      size_t len, int rc)
{
    char *json = NULL;
    size_t jlen = 0;
    int seen = capture_sniff(data, len);
    if (!seen && is_zip(data, len) && zip_conversations(h, path, &json, &jlen) == CAIRN_OK)
        seen = capture_sniff(json, jlen);
    free(json);
    if (seen && seen != kind)
        return cairn__err(h, CAIRN_INVALID, "%s looks like %s, not %s: cairn import %s %s",
                          path, kind_what(seen), kind_what(kind),
                          seen == CAIRN_IMPORT_JSONL ? "jsonl" : kind_source(seen), path);
    if (rc == CAIRN_INVALID)
        return cairn__err(h, rc, "%s is not %s", path, kind_what(kind));
    return rc;
}

int cairn_import_file(struct cairn *h, int kind, const char *path,
                      const struct cairn_import_opts *opts, struct cairn_import_stats *stats)
{
    struct cairn_import_opts o0 = CAIRN_IMPORT_OPTS_INIT;
    struct cairn_import_stats st0;
    struct capture_batch b;
    struct cairn_capture_state old, now;
    struct stat fs;
    char *data = NULL, defid[256];
    size_t len = 0, file_len = 0;
    uint64_t from = 0, next = 0;
    int rc = CAIRN_OK, have_old = 0;
    unsigned pflags;

    if (!h)
        return CAIRN_ERROR;
    memset(&st0, 0, sizeof st0);
    /* the first version ends with `progress_arg`: fields added later get defaults */
    rc = cairn__opts(h, &o0, sizeof o0, opts,
                     offsetof(struct cairn_import_opts, progress_arg) + sizeof o0.progress_arg,
                     "import options");
    if (rc != CAIRN_OK)
        return rc;
    const struct cairn_import_opts *o = &o0;
    struct cairn_import_stats *st = stats ? stats : &st0;
    capture_batch_init(&b);
    if (!kind_source(kind) && kind != CAIRN_IMPORT_JSONL)
        return cairn__err(h, CAIRN_INVALID, "unknown import kind %d", kind);
    if (!path || !*path)
        return cairn__err(h, CAIRN_INVALID, "no file to import");
    if (stat(path, &fs) != 0)
        return cairn__err(h, CAIRN_IO, "cannot read %s: %s", path, strerror(errno));
    if (!S_ISREG(fs.st_mode))
        return cairn__err(h, CAIRN_IO, "%s is not a regular file", path);

    memset(&old, 0, sizeof old);
    /* --attachments after a plain import: the file is the same, but what
     * is kept of it is not, so it is read again (the messages come back
     * longer, and the store extends them in place). */
    int attach = (o->flags & CAIRN_IMPORT_ATTACHMENTS) && kind == CAIRN_IMPORT_CLAUDE_AI;
    if (!(o->flags & CAIRN_IMPORT_FULL) && !attach) {
        rc = cairn_capture_state_get(h, path, &old);
        if (rc == CAIRN_OK)
            have_old = 1;
        else if (rc != CAIRN_NOTFOUND)
            return rc;
        rc = CAIRN_OK;
    }
    int same_file = have_old && old.inode == (uint64_t)fs.st_ino &&
                    old.dev == (uint64_t)fs.st_dev;
    if (same_file && old.size == (uint64_t)fs.st_size && old.mtime == (int64_t)fs.st_mtime &&
        old.offset == old.size) {
        st->files_unchanged++;
        return CAIRN_OK;
    }
    /* A transcript that only grew is read from where we stopped; one that
     * shrank or was replaced, from the start. */
    int by_offset = kind == CAIRN_IMPORT_CLAUDE_CODE || kind == CAIRN_IMPORT_AIDER;
    if (by_offset && same_file && (uint64_t)fs.st_size >= old.offset)
        from = old.offset;

    rc = capture_read_file(path, 0, &data, &len);
    if (rc) {
        rc = cairn__err(h, rc, "cannot read %s: %s", path,
                        rc == CAIRN_TOOBIG ? "too large" : rc == CAIRN_NOMEM
                        ? "out of memory" : strerror(errno));
        goto out;
    }
    file_len = len;
    if ((kind == CAIRN_IMPORT_CLAUDE_AI || kind == CAIRN_IMPORT_CHATGPT) && is_zip(data, len)) {
        char *json;
        size_t jlen;
        if ((rc = zip_conversations(h, path, &json, &jlen)))
            goto out;
        free(data);
        data = json;
        len = jlen;
    }
    if (from > len)
        from = 0;
    st->files++;
    st->bytes += file_len;
    size_t sessions_before = st->sessions - st->sessions_failed;
    pflags = (o->flags & CAIRN_IMPORT_ATTACHMENTS) ? CAPTURE_OPT_ATTACHMENTS : 0;
    if (o->default_id)
        snprintf(defid, sizeof defid, "%s", o->default_id);
    else
        default_id_of(path, defid, sizeof defid);

    next = len;
    switch (kind) {
    case CAIRN_IMPORT_CLAUDE_CODE:
        rc = capture_claude_code(data, len, from, defid, pflags, &b, &next);
        break;
    case CAIRN_IMPORT_CODEX:
        rc = capture_codex(data, len, defid, pflags, &b);
        break;
    case CAIRN_IMPORT_AIDER:
        rc = import_aider(path, data, len, from, &b, &next);
        break;
    case CAIRN_IMPORT_CLAUDE_AI:
        rc = capture_claude_ai(data, len, pflags, &b);
        break;
    case CAIRN_IMPORT_CHATGPT:
        rc = capture_chatgpt(data, len, pflags, &b);
        break;
    case CAIRN_IMPORT_JSONL:
        rc = import_jsonl(h, data, len, o, st);
        break;
    }
    if (rc == CAIRN_NOMEM) {
        rc = cairn__err(h, rc, "out of memory parsing %s", path);
        goto out;
    }
    if (rc == CAIRN_INVALID) {
        rc = wrong_kind(h, kind, path, data, len, rc);
        goto out;
    }
    if (rc)
        goto out;
    add_counts(st, &b.counts);
    if (kind != CAIRN_IMPORT_JSONL &&
        (rc = add_batch(h, kind, &b, o, st, len,
                        kind == CAIRN_IMPORT_CLAUDE_CODE || kind == CAIRN_IMPORT_CODEX)))
        goto out;
    /* Read whole and nothing in it: perhaps the wrong kind (no state
     * then), else recorded with nothing consumed, never as "unchanged":
     * the next import reads it again, whatever kind it names. */
    int empty = !from && st->sessions - st->sessions_failed == sessions_before;
    if (empty && (rc = wrong_kind(h, kind, path, data, len, CAIRN_OK)))
        goto out;

    /* Remember how far we got. A half-written last line of a transcript is
     * left to the next read (offset < size keeps the file "changed"). */
    memset(&now, 0, sizeof now);
    now.path = path;
    now.session = b.n ? b.v[0].s.id : NULL;
    /* The bytes read are the truth if the file moved while we read it. */
    now.size = (uint64_t)file_len;
    now.offset = empty ? 0 : by_offset ? next : now.size;
    now.inode = (uint64_t)fs.st_ino;
    now.dev = (uint64_t)fs.st_dev;
    now.mtime = (int64_t)fs.st_mtime;
    now.updated_at = CAIRN_NO_TIME;
    if (now.offset > now.size)
        now.offset = now.size;
    rc = cairn_capture_state_set(h, &now);
out:
    capture_batch_free(&b);
    free(data);
    return rc;
}
