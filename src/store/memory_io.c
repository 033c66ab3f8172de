/*
 * memory_io.c: memories as JSONL (cairn_memories_export, cairn_memories_import;
 * the format is in docs/MEMORIES.md).
 *
 * One object a line: {"id":N,"type":...,"text":...,"scope":...,"tags":...,
 * "created":ISO,"updated":ISO,"expires":ISO,"session":...,"message":...,
 * "superseded_by":N,"links":[{"kind":K,"to":N}]}, and for a correction
 * "severity":"pN","applies_when":{"keywords":[...],"paths":[...],
 * "commands":[...]} (its counters are what happened in this store, and stay
 * out). Ids are the exporting
 * store's; import gives new ones and maps superseded_by and links through
 * the file's ids. History is not exported: an import starts each memory's
 * history afresh.
 *
 * The import is a parser of untrusted text (fuzz_memories): input, lines
 * and fields are capped, every line is read and checked before anything
 * is written, and an error names its line.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "store/memory.h"
#include "text/correction.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/timeutil.h"

#define IMPORT_MAX_BYTES (64u << 20)
#define IMPORT_MAX_LINES 10000
#define IMPORT_MAX_LINKS 64            /* links of one memory */
#define IMPORT_MAX_WHEN (16u << 10)    /* an applies_when list before cleaning */

static void time_field(struct buf *b, const char *name, int64_t t)
{
    char iso[40];
    if (t == CAIRN_NO_TIME)
        return;
    iso8601_format(t, 1, iso, sizeof iso);
    buf_printf(b, ",\"%s\":\"%s\"", name, iso);
}

static void str_field(struct buf *b, const char *name, const char *v)
{
    buf_printf(b, ",\"%s\":", name);
    buf_add_json_str(b, v, strlen(v));
}

/* "kind:N,kind:N" (outgoing links only: incoming ones are the other
 * memory's outgoing) as a JSON array. */
static void links_field(struct buf *b, const char *links)
{
    int first = 1;
    buf_adds(b, ",\"links\":[");
    for (const char *p = links; *p; ) {
        const char *colon = strchr(p, ':'), *comma = strchr(p, ',');
        size_t n = colon ? (size_t)(colon - p) : 0;
        if (colon && ((n == 10 && !strncmp(p, "supersedes", n)) ||
                      (n == 11 && !strncmp(p, "contradicts", n)) ||
                      (n == 10 && !strncmp(p, "related_to", n)))) {
            buf_printf(b, "%s{\"kind\":\"%.*s\",\"to\":%lld}", first ? "" : ",", (int)n, p,
                       strtoll(colon + 1, NULL, 10));
            first = 0;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    buf_addc(b, ']');
}

static const char *const when_keys[] = { "keywords", "paths", "commands" };

struct items_json {
    struct buf *b;
    int n;
};

static int item_json(const char *item, void *arg)
{
    struct items_json *a = arg;
    if (a->n++)
        buf_addc(a->b, ',');
    buf_add_json_str(a->b, item, strlen(item));
    return 0;
}

/* A correction's severity and applies_when (st: its corrections row, bound
 * to nothing yet); a correction without a row is p1 with none. */
static int correction_fields(struct cairn *h, struct buf *b, sqlite3_stmt *st, int64_t id)
{
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, id);
    int src = sqlite3_step(st), row = src == SQLITE_ROW;
    if (!row && src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "exporting a correction");
    buf_printf(b, ",\"severity\":\"p%d\",\"applies_when\":{", row ? sqlite3_column_int(st, 0) : 1);
    for (int k = 0; k < 3; k++) {
        struct items_json a = { b, 0 };
        buf_printf(b, "%s\"%s\":[", k ? "," : "", when_keys[k]);
        if (row)
            corr_each_item((const char *)sqlite3_column_text(st, 1 + k), item_json, &a);
        buf_addc(b, ']');
    }
    buf_addc(b, '}');
    return CAIRN_OK;
}

int cairn_memories_export(struct cairn *h, char **out, size_t *len)
{
    struct cairn_memories *l;
    struct buf b = BUF_INIT;
    sqlite3_stmt *st = NULL;
    int rc;
    *out = NULL;
    if ((rc = cairn_memory_list(h, NULL, NULL, 1, &l)))
        return rc;
    if ((rc = store_prepare(h, "SELECT severity, keywords, paths, commands FROM corrections "
                               "WHERE memory = ?", &st))) {
        cairn_memories_free(l);
        return rc;
    }
    buf_init(&b, 0);
    /* oldest first, so a file read top to bottom is the order they came in */
    for (size_t i = cairn_memories_count(l); i-- > 0; ) {
        const struct cairn_memory *m = cairn_memories_at(l, i);
        buf_printf(&b, "{\"id\":%lld", (long long)m->id);
        str_field(&b, "type", m->type);
        str_field(&b, "text", m->text);
        str_field(&b, "scope", m->scope);
        str_field(&b, "tags", m->tags);
        time_field(&b, "created", m->created);
        time_field(&b, "updated", m->updated);
        time_field(&b, "expires", m->expires);
        str_field(&b, "session", m->session);
        str_field(&b, "message", m->message);
        if (m->superseded_by)
            buf_printf(&b, ",\"superseded_by\":%lld", (long long)m->superseded_by);
        links_field(&b, m->links);
        if (!strcmp(m->type, "correction") && (rc = correction_fields(h, &b, st, m->id)))
            break;
        buf_adds(&b, "}\n");
    }
    sqlite3_finalize(st);
    cairn_memories_free(l);
    if (rc) {
        buf_release(&b);
        return rc;
    }
    if (b.err) {
        buf_release(&b);
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    }
    *out = buf_detach(&b, len);
    return *out ? CAIRN_OK : cairn__err(h, CAIRN_NOMEM, "out of memory");
}

/* ---- import ---- */

struct imp_link {
    int64_t to;
    const char *kind;               /* static */
};

struct imp {
    int line;
    int64_t file_id, superseded_by, new_id;
    struct memory_row row;
    struct imp_link links[IMPORT_MAX_LINKS];
    int nlinks;
    int expired;
    int has_corr;                   /* severity or applies_when given */
    struct correction_row corr;
};

/* A string member (absent: NULL; present and not a string: an error). */
static int get_str(struct cairn *h, const cJSON *o, const char *k, int line, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return CAIRN_OK;
    if (!cJSON_IsString(v))
        return cairn__err(h, CAIRN_INVALID, "line %d: \"%s\" is not a string", line, k);
    *out = v->valuestring;
    return CAIRN_OK;
}

/* An id member: a positive integer (absent: 0). */
static int get_id(struct cairn *h, const cJSON *o, const char *k, int line, int64_t *out)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
    *out = 0;
    if (!v || cJSON_IsNull(v))
        return CAIRN_OK;
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 9e15 ||
        v->valuedouble != (double)(int64_t)v->valuedouble)
        return cairn__err(h, CAIRN_INVALID, "line %d: \"%s\" is not a positive integer id",
                          line, k);
    *out = (int64_t)v->valuedouble;
    return CAIRN_OK;
}

/* A time member: ISO 8601 text or Unix seconds (absent: def). */
static int get_time(struct cairn *h, const cJSON *o, const char *k, int line, int64_t def,
                    int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    *out = def;
    if (!v || cJSON_IsNull(v))
        return CAIRN_OK;
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e12) {
        *out = (int64_t)v->valuedouble;
        return CAIRN_OK;
    }
    if (cJSON_IsString(v) && iso8601_parse(v->valuestring, out) == 0 && *out != CAIRN_NO_TIME)
        return CAIRN_OK;
    return cairn__err(h, CAIRN_INVALID, "line %d: \"%s\" is not a date (ISO 8601 or Unix "
                      "seconds)", line, k);
}

static int get_links(struct cairn *h, const cJSON *o, struct imp *m)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "links"), *e;
    if (!a || cJSON_IsNull(a))
        return CAIRN_OK;
    if (!cJSON_IsArray(a))
        return cairn__err(h, CAIRN_INVALID, "line %d: \"links\" is not an array", m->line);
    cJSON_ArrayForEach(e, a) {
        const char *kind;
        int64_t to;
        int rc;
        if (m->nlinks == IMPORT_MAX_LINKS)
            return cairn__err(h, CAIRN_INVALID, "line %d: over %d links", m->line,
                              IMPORT_MAX_LINKS);
        if (!cJSON_IsObject(e))
            return cairn__err(h, CAIRN_INVALID, "line %d: a link is not an object", m->line);
        if ((rc = get_str(h, e, "kind", m->line, &kind)) || (rc = get_id(h, e, "to", m->line, &to)))
            return rc;
        if (!to)
            return cairn__err(h, CAIRN_INVALID, "line %d: a link needs \"to\"", m->line);
        if (kind && !strcmp(kind, "contradicts"))
            m->links[m->nlinks].kind = "contradicts";
        else if (kind && !strcmp(kind, "related_to"))
            m->links[m->nlinks].kind = "related_to";
        else if (kind && !strcmp(kind, "supersedes"))
            continue;                   /* made again from superseded_by */
        else
            return cairn__err(h, CAIRN_INVALID, "line %d: link kind must be contradicts, "
                              "related_to or supersedes", m->line);
        m->links[m->nlinks++].to = to;
    }
    return CAIRN_OK;
}

/* One applies_when list: an array of one-line strings, joined a line each. */
static int get_when_list(struct cairn *h, const cJSON *a, const char *k, int line, struct buf *b)
{
    const cJSON *e;
    if (!cJSON_IsArray(a))
        return cairn__err(h, CAIRN_INVALID, "line %d: \"applies_when\".\"%s\" is not an array",
                          line, k);
    cJSON_ArrayForEach(e, a) {
        if (!cJSON_IsString(e) || strchr(e->valuestring, '\n'))
            return cairn__err(h, CAIRN_INVALID, "line %d: an item of \"applies_when\".\"%s\" is "
                              "not a one-line string", line, k);
        buf_printf(b, "%s%s", b->n ? "\n" : "", e->valuestring);
        if (b->n > IMPORT_MAX_WHEN)
            return cairn__err(h, CAIRN_INVALID, "line %d: \"applies_when\".\"%s\" over %u "
                              "bytes", line, k, IMPORT_MAX_WHEN);
    }
    return b->err ? cairn__err(h, CAIRN_NOMEM, "out of memory") : CAIRN_OK;
}

/* A correction's severity ("p0".."p2") and applies_when, cleaned into m->corr. */
static int get_correction(struct cairn *h, const cJSON *o, struct imp *m)
{
    const cJSON *sv = cJSON_GetObjectItemCaseSensitive(o, "severity");
    const cJSON *aw = cJSON_GetObjectItemCaseSensitive(o, "applies_when"), *e;
    struct cairn_correction_when w = { -1, NULL, NULL, NULL };
    struct buf b[3] = { BUF_INIT, BUF_INIT, BUF_INIT };
    const char **lists[] = { &w.keywords, &w.paths, &w.commands };
    int rc = CAIRN_OK;
    if ((!sv || cJSON_IsNull(sv)) && (!aw || cJSON_IsNull(aw)))
        return CAIRN_OK;
    if (strcmp(m->row.type, "correction"))
        return cairn__err(h, CAIRN_INVALID, "line %d: \"severity\" and \"applies_when\" are "
                          "for type correction", m->line);
    if (sv && !cJSON_IsNull(sv)) {
        const char *v = cJSON_IsString(sv) ? sv->valuestring : "";
        if (v[0] != 'p' || v[1] < '0' || v[1] > '2' || v[2])
            return cairn__err(h, CAIRN_INVALID, "line %d: \"severity\" is not p0, p1 or p2",
                              m->line);
        w.severity = v[1] - '0';
    }
    if (aw && !cJSON_IsNull(aw) && !cJSON_IsObject(aw))
        return cairn__err(h, CAIRN_INVALID, "line %d: \"applies_when\" is not an object",
                          m->line);
    const cJSON *obj = cJSON_IsObject(aw) ? aw : NULL;
    cJSON_ArrayForEach(e, obj) {
        int k = 0;
        while (k < 3 && strcmp(e->string, when_keys[k]))
            k++;
        if (k == 3) {
            rc = cairn__err(h, CAIRN_INVALID, "line %d: \"applies_when\" holds keywords, "
                            "paths and commands, not \"%.40s\"", m->line, e->string);
            goto out;
        }
        if ((rc = get_when_list(h, e, when_keys[k], m->line, &b[k])))
            goto out;
        *lists[k] = b[k].n ? b[k].p : "";
    }
    m->has_corr = 1;
    if ((rc = correction_row_fill(h, &m->corr, &w))) {
        char why[400];
        snprintf(why, sizeof why, "%s", cairn_errmsg(h));
        rc = cairn__err(h, rc, "line %d: %s", m->line, why);
    }
out:
    for (int k = 0; k < 3; k++)
        buf_release(&b[k]);
    return rc;
}

static int only_blanks(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return 0;
    return 1;
}

/* Reads one line's object into m. */
static int read_line(struct cairn *h, const char *p, size_t n, struct imp *m, int64_t now)
{
    const char *end = NULL, *type, *text, *scope, *tags, *session, *message;
    int rc;
    cJSON *o = json_parse(p, n, &end);
    if (!o)
        return cairn__err(h, CAIRN_INVALID, "line %d, column %zu: not valid JSON", m->line,
                          (size_t)(end - p) + 1);
    if (!only_blanks(end, (size_t)(p + n - end))) {
        rc = cairn__err(h, CAIRN_INVALID, "line %d, column %zu: text after the object", m->line,
                        (size_t)(end - p) + 1);
        goto out;
    }
    if (!cJSON_IsObject(o)) {
        rc = cairn__err(h, CAIRN_INVALID, "line %d: not a JSON object", m->line);
        goto out;
    }
    if ((rc = get_id(h, o, "id", m->line, &m->file_id)) ||
        (rc = get_id(h, o, "superseded_by", m->line, &m->superseded_by)) ||
        (rc = get_str(h, o, "type", m->line, &type)) ||
        (rc = get_str(h, o, "text", m->line, &text)) ||
        (rc = get_str(h, o, "scope", m->line, &scope)) ||
        (rc = get_str(h, o, "tags", m->line, &tags)) ||
        (rc = get_str(h, o, "session", m->line, &session)) ||
        (rc = get_str(h, o, "message", m->line, &message)) ||
        (rc = get_links(h, o, m)))
        goto out;
    if ((rc = memory_row_fill(h, &m->row, type, text, scope, tags, session, message))) {
        char why[400];
        snprintf(why, sizeof why, "%s", cairn_errmsg(h));
        rc = cairn__err(h, rc, "line %d: %s", m->line, why);
        goto out;
    }
    if ((rc = get_time(h, o, "created", m->line, now, &m->row.created)) ||
        (rc = get_time(h, o, "updated", m->line, m->row.created, &m->row.updated)) ||
        (rc = get_time(h, o, "expires", m->line, CAIRN_NO_TIME, &m->row.expires)))
        goto out;
    if ((rc = get_correction(h, o, m)))
        goto out;
    m->expired = m->row.expires != CAIRN_NO_TIME && m->row.expires <= now;
out:
    cJSON_Delete(o);
    return rc;
}

/* The new id of the memory the file calls file_id (0: none, or skipped). */
static int64_t new_id_of(const struct imp *v, int n, int64_t file_id)
{
    for (int i = 0; i < n; i++)
        if (v[i].file_id == file_id)
            return v[i].expired ? 0 : v[i].new_id;
    return -1;
}

/* Checks that every id a line refers to is in the file and no id twice. */
static int check_refs(struct cairn *h, const struct imp *v, int n)
{
    for (int i = 0; i < n; i++) {
        if (v[i].superseded_by && new_id_of(v, n, v[i].superseded_by) < 0)
            return cairn__err(h, CAIRN_INVALID, "line %d: superseded_by %lld is no id in this "
                              "file", v[i].line, (long long)v[i].superseded_by);
        for (int k = 0; k < v[i].nlinks; k++)
            if (new_id_of(v, n, v[i].links[k].to) < 0)
                return cairn__err(h, CAIRN_INVALID, "line %d: link to %lld, no id in this file",
                                  v[i].line, (long long)v[i].links[k].to);
        for (int j = 0; v[i].file_id && j < i; j++)
            if (v[j].file_id == v[i].file_id)
                return cairn__err(h, CAIRN_INVALID, "line %d: id %lld again (line %d)",
                                  v[i].line, (long long)v[i].file_id, v[j].line);
    }
    return CAIRN_OK;
}

/* In a transaction: the memories, then what refers to them. */
static int write_all(struct cairn *h, struct imp *v, int n, size_t *added)
{
    int rc;
    for (int i = 0; i < n; i++) {
        if (v[i].expired)
            continue;
        if ((rc = memory_insert(h, &v[i].row, &v[i].new_id)) ||
            (v[i].has_corr && (rc = correction_row_store(h, v[i].new_id, &v[i].corr))))
            return rc;
        (*added)++;
    }
    for (int i = 0; i < n; i++) {
        if (v[i].expired)
            continue;
        int64_t by = v[i].superseded_by ? new_id_of(v, n, v[i].superseded_by) : 0;
        if (by > 0 && (rc = memory_supersede(h, v[i].new_id, by)))
            return cairn__err(h, rc, "line %d: superseded_by %lld: %s", v[i].line,
                              (long long)v[i].superseded_by, cairn_errmsg(h));
        for (int k = 0; k < v[i].nlinks; k++) {
            int64_t to = new_id_of(v, n, v[i].links[k].to);
            if (to > 0 && (rc = memory_link_add(h, v[i].new_id, to, v[i].links[k].kind)))
                return cairn__err(h, rc, "line %d: %s", v[i].line, cairn_errmsg(h));
        }
    }
    return CAIRN_OK;
}

int cairn_memories_import(struct cairn *h, const char *json, size_t len, size_t *added)
{
    struct imp *v = NULL;
    int n = 0, line = 0, rc = CAIRN_OK;
    size_t count = 0;
    int64_t now = (int64_t)time(NULL);
    if (len > IMPORT_MAX_BYTES)
        return cairn__err(h, CAIRN_TOOBIG, "memories import: %zu bytes, over %u", len,
                          IMPORT_MAX_BYTES);
    for (size_t off = 0; off < len; ) {
        const char *p = json + off, *nl = memchr(p, '\n', len - off);
        size_t ln = nl ? (size_t)(nl - p) : len - off;
        off += ln + (nl ? 1 : 0);
        line++;
        if (only_blanks(p, ln))
            continue;
        if (n == IMPORT_MAX_LINES) {
            rc = cairn__err(h, CAIRN_TOOBIG, "line %d: over %d memories", line,
                            IMPORT_MAX_LINES);
            goto out;
        }
        struct imp *nv = realloc(v, (size_t)(n + 1) * sizeof *v);
        if (!nv) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
        v = nv;
        memset(&v[n], 0, sizeof v[n]);
        v[n].line = line;
        v[n].row.expires = CAIRN_NO_TIME;
        rc = read_line(h, p, ln, &v[n], now);
        n++;
        if (rc)
            goto out;
    }
    if ((rc = check_refs(h, v, n)) || (rc = store_begin(h)))
        goto out;
    if ((rc = write_all(h, v, n, &count))) {
        store_rollback(h);
        goto out;
    }
    if (!(rc = store_commit(h)) && added)
        *added += count;
out:
    for (int i = 0; i < n; i++) {
        memory_row_release(&v[i].row);
        correction_row_release(&v[i].corr);
    }
    free(v);
    return rc;
}
