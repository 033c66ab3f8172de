/*
 * export_jsonl.c: one session as a line of the `cairn add` format, for
 * `cairn export --format jsonl` and `cairn web`'s export, and the session
 * fields that `cairn sessions --json` and `cairn web` also write (cli.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/buf.h"

struct jline { struct buf *b; int nmsg; };

static int jline_message(void *arg, const struct cairn_message_info *m)
{
    struct jline *w = arg;
    int first = 1;
    buf_adds(w->b, w->nmsg++ ? ",{" : "{");
    cli_json_str_field(w->b, "id", m->id, &first);
    cli_json_str_field(w->b, "role", m->role, &first);
    cli_json_str_field(w->b, "speaker", m->speaker, &first);
    buf_adds(w->b, ",\"content\":");
    buf_add_json_str(w->b, m->content, m->content_len);
    cli_json_time_field(w->b, "at", m->at, &first);
    buf_addc(w->b, '}');
    return 0;
}

void cli_json_session_fields(struct buf *b, const struct cairn_session_info *s, int *first)
{
    cli_json_str_field(b, "id", s->id, first);
    cli_json_str_field(b, "source", s->source, first);
    cli_json_str_field(b, "project", s->project, first);
    cli_json_str_field(b, "title", s->title, first);
    cli_json_time_field(b, "started_at", s->started_at, first);
    cli_json_time_field(b, "ended_at", s->ended_at, first);
}

int cli_session_jsonl(struct cairn *db, const struct cairn_session_info *s, struct buf *b)
{
    struct jline w = { b, 0 };
    int first = 1;
    buf_addc(b, '{');
    cli_json_session_fields(b, s, &first);
    if (s->meta && *s->meta)
        buf_printf(b, ",\"meta\":%s", s->meta);   /* stored as a JSON object */
    buf_adds(b, ",\"messages\":[");
    /* The session info strings die with the next step of the outer walk,
     * so copy the id before walking its messages. */
    char *id = strdup(s->id);
    if (!id)
        return CAIRN_NOMEM;
    int rc = cairn_messages(db, id, 0, -1, jline_message, &w);
    free(id);
    if (rc)
        return rc;
    buf_adds(b, "]}\n");
    return b->err ? CAIRN_NOMEM : 0;
}
