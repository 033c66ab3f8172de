/*
 * query.c: a question becomes content terms and maybe a time range.
 *
 * Terms come from the same tokenizer as the index, so "running" meets
 * "runs" and 北京 meets 我上周去了北京开会. A whole question must be able
 * to match (OR semantics, weighted by IDF later): several peers AND every
 * term and find nothing for a natural question. Stop words are dropped,
 * unless nothing else is left. The MATCH expression quotes each term's
 * surface words, not the stemmed form, because FTS5 tokenizes the query
 * again and stemming a stem is not always the identity.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recall/policy.h"
#include "recall/recall.h"
#include "text/tokenize.h"
#include "text/timeexpr.h"

struct collect {
    struct query *q;
    const char   *text;
    size_t        skip_from, skip_to;   /* the time expression's span */
    size_t        skip2_from, skip2_to; /* a vague word it replaced */
};

static int add_term(void *arg, const char *tok, size_t n, size_t start, size_t end,
                    int colocated)
{
    struct collect *c = arg;
    struct query *q = c->q;
    if (colocated || n == 0)
        return 0;
    if ((start >= c->skip_from && end <= c->skip_to) ||
        (start >= c->skip2_from && end <= c->skip2_to))
        return 0;                               /* part of "last week" etc. */
    for (int i = 0; i < q->nt; i++) {
        if (strlen(q->t[i].norm) == n && !memcmp(q->t[i].norm, tok, n))
            return 0;
    }
    if (q->nt >= RECALL_MAX_TERMS)
        return 0;
    struct qterm *t = &q->t[q->nt];
    memset(t, 0, sizeof *t);
    t->norm = strndup(tok, n);
    t->surface = strndup(c->text + start, end - start);
    if (!t->norm || !t->surface) {
        free(t->norm);
        free(t->surface);
        return 1;
    }
    t->stop = text_is_stopword(tok, n);
    q->nt++;
    return 0;
}

/* ---- questions about what the assistant said or did ----
 *
 * "How did we fix it?", "what did you suggest?", "what was the cause you
 * found?", "¿qué me dijiste?": the answer is in a reply, not in what the
 * user said, so pack.c gives replies a lane of their own (REPLY_CUE_*).
 * The cues are words, English first, with Spanish and German second-
 * person past forms; a question that has none is packed user-first as
 * before. Found on devmem-dev's questions (docs/EVAL.md says so); on BEAM
 * dev they fire for 5 of 32 questions answered in a reply and 2 of 147
 * answered in user turns. */

#define CUE_MAX_WORDS 400       /* a long prompt: its opening is enough */

static int word_is(const char *w, size_t n, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strlen(list[i]) == n && !memcmp(list[i], w, n))
            return 1;
    return 0;
}

/* A past tense a question uses for what was done: "fixed", "said". */
static int is_past(const char *w, size_t n)
{
    static const char *const irregular[] = {
        "said", "told", "found", "gave", "wrote", "made", "chose", "built", "did", "put",
        "set", "came", "meant", "thought", "got", "ran", "took", "showed", "left", "kept",
        "went", "saw", "knew", "broke", "brought", NULL
    };
    /* -ed forms that are not about what was done, or not past at all */
    static const char *const not_past[] = {
        "discussed", "talked", "mentioned", "embed", "proceed", "succeed", "exceed",
        "speed", "indeed", NULL
    };
    if (word_is(w, n, irregular))
        return 1;
    return n >= 5 && w[n - 2] == 'e' && w[n - 1] == 'd' && !word_is(w, n, not_past);
}

/* The question's opening words, lower-cased, into buf (a word too long
 * for a cue has length 0: it matches none); returns how many. Bytes over
 * 0x7f are letters ("dijiste", "qué"). */
static int cue_words(const char *text, size_t len, char buf[][16], size_t *wl,
                     unsigned char *joined)
{
    int nw = 0;
    for (size_t i = 0; i < len && nw < CUE_MAX_WORDS;) {
        unsigned char c = (unsigned char)text[i];
        if (!(c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '\'')) {
            i++;
            continue;
        }
        size_t n = 0;
        for (; i < len; i++) {
            c = (unsigned char)text[i];
            if (!(c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
                break;
            if (n < 16)
                buf[nw][n] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            n++;
        }
        if (n >= 16)
            n = 0;                        /* too long for a cue word: matches none */
        if (joined)                       /* "first-class": one word, not two */
            joined[nw] = i + 1 < len && text[i] == '-' && text[i + 1] != ' ';
        if (i < len && text[i] == '\'')
            i++;                          /* "what's": the s is a word of its own */
        wl[nw++] = n;
    }
    return nw;
}

int query_asks_reply(const char *text, size_t len)
{
    static const char *const aux[] = { "did", "have", "had", NULL };
    static const char *const who[] = { "you", "we", NULL };
    static const char *const wrong[] = { "wrong", "missing", NULL };
    static const char *const cause[] = { "cause", "problem", "issue", "fix", NULL };
    char buf[CUE_MAX_WORDS][16];
    size_t wl[CUE_MAX_WORDS];
    int nw = cue_words(text, len, buf, wl, NULL);
#define W(k, list) ((k) < nw && word_is(buf[k], wl[k], list))
    for (int i = 0; i < nw; i++) {
        const char *w = buf[i];
        size_t n = wl[i];
        if (W(i, aux) && W(i + 1, who))
            return 1;                     /* "did you", "have we" */
        if (W(i, who) && ((i + 1 < nw && is_past(buf[i + 1], wl[i + 1])) ||
                          (i + 2 < nw && is_past(buf[i + 2], wl[i + 2]))))
            return 1;                     /* "you said", "we then fixed" */
        if (n == 4 && !memcmp(w, "your", 4))
            return 1;                     /* "your diagnosis", "your first plan" */
        if (n == 9 && !memcmp(w, "according", 9) && i + 2 < nw && wl[i + 2] == 3 &&
            !memcmp(buf[i + 2], "you", 3))
            return 1;
        if (n == 4 && !memcmp(w, "what", 4) && i + 2 < nw &&
            ((wl[i + 1] == 3 && !memcmp(buf[i + 1], "was", 3)) ||
             (wl[i + 1] == 4 && !memcmp(buf[i + 1], "were", 4))) &&
            (W(i + 2, wrong) || (wl[i + 2] == 3 && !memcmp(buf[i + 2], "the", 3) &&
                                  W(i + 3, cause))))
            return 1;                     /* "what was wrong", "what was the cause" */
        if (n == 4 && !memcmp(w, "what", 4) && i + 1 < nw && wl[i + 1] == 6 &&
            !memcmp(buf[i + 1], "caused", 6))
            return 1;
        /* Spanish second person preterite: "dijiste", "corregiste" */
        if (n >= 6 && (!memcmp(w + n - 4, "aste", 4) || !memcmp(w + n - 4, "iste", 4)))
            return 1;
        /* German: "hast du", "du hast", "hattest du" */
        if (((n == 4 && !memcmp(w, "hast", 4)) || (n == 7 && !memcmp(w, "hattest", 7))) &&
            i + 1 < nw && wl[i + 1] == 2 && !memcmp(buf[i + 1], "du", 2))
            return 1;
        if (n == 2 && !memcmp(w, "du", 2) && i + 1 < nw && wl[i + 1] == 4 &&
            !memcmp(buf[i + 1], "hast", 4))
            return 1;
    }
#undef W
    return 0;
}

/* ---- questions that ask for a summary ----
 *
 * "Can you summarize how my project progressed?", "give me an overview of
 * what we covered": what answers it is spread over the whole history, a
 * little in each round (BEAM dev: 5 to 16 evidence turns, user turns and
 * replies, ranked down to past the 100th unit), so pack.c packs it broad
 * rather than deep (PACK_SUM_*). The cue is a verb that asks for one
 * ("summarize", "recap"), or a noun that names one followed by what it is
 * of ("a summary of", "resumen de"): "the paper-summary tool" names a
 * thing, not the request (devmem dev). English, with Spanish and German;
 * not "resume" or "résumé" (a CV). Returns 1 for a summary. A question
 * about the order in which things came up asks about the whole history
 * too, but about what was brought up, the user's turns (BEAM dev's
 * event-ordering questions: 2 to 12 user turns from all over the chat):
 * 2, packed broad without replies. 0 for any other question. */
int query_asks_summary(const char *text, size_t len)
{
    static const char *const verb[] = {
        "summarize", "summarise", "summarizing", "summarising", "recap", "resumir",
        "resúmeme", "zusammenfassen", NULL
    };
    static const char *const noun[] = {
        "summary", "overview", "recap", "resumen", "zusammenfassung", NULL
    };
    static const char *const of[] = { "of", "de", "del", "von", "der", "des", NULL };
    char buf[CUE_MAX_WORDS][16];
    size_t wl[CUE_MAX_WORDS];
    int nw = cue_words(text, len, buf, wl, NULL);
    static const char *const order[] = { "order", NULL };
    static const char *const in[] = { "in", NULL };
    static const char *const which[] = { "which", "what", NULL };
    static const char *const to[] = { "to", "that", "for", NULL };
    int order_cue = 0;
#define W(k, list) ((k) < nw && word_is(buf[k], wl[k], list))
    for (int i = 0; i < nw; i++) {
        if (W(i, verb) || (W(i, noun) && W(i + 1, of)))
            return 1;
        /* the order things came up in is a question about all of it too:
         * "the order in which I brought up...", "in what order", "list
         * in order" (not "in order to") */
        if ((W(i, order) && W(i + 1, in) && W(i + 2, which)) ||
            (W(i, in) && W(i + 1, which) && W(i + 2, order)) ||
            (W(i, in) && W(i + 1, order) && !W(i + 2, to)))
            order_cue = 1;
    }
#undef W
    return order_cue ? 2 : 0;
}

/* ---- questions about the first or the last time ----
 *
 * "What was the very first thing I asked you to build?", "the first piece
 * of documentation I pasted", "when did Joanna first watch...", "what did
 * we last decide about caching?", "the most recent error": the answer is
 * the earliest (latest) of the turns about the topic, which the words
 * alone rank anywhere (devmem dev: 11th to 52nd). rank.c (ORD_TOP) then
 * prefers the earliest (latest) of the best-ranked units. Strict, because
 * a wrong cue reorders a good ranking: "first" or "last" counts only as
 * "the very first", "the first/last time", "the first/last <thing> ..."
 * with a noun of order (ORD_NOUNS), or right after who does it ("I first
 * wanted", "did Joanna first watch"); not "first place", "first-class",
 * "at last", "last name", "last week" (a period: timeexpr.c), "his first
 * screenplay" (a kind, not an order). Also "earliest", "initially",
 * "originally", "to begin with", "at the start/beginning" (not "of March":
 * a period), "latest", "most recent(ly)", "finally"; Chinese 第一次, 最早,
 * 最初, 最后一次 (not 最近: a vague period, W_TIME_VAGUE). English and
 * Chinese only. ORD_DAY is added when the order is of a day or a sitting
 * ("on the last day we worked on X"): then the sessions are ordered, and
 * which turn of that session answers is left to the words. */
int query_ordinal(const char *text, size_t len)
{
    static const char *const first[] = { "first", NULL };
    static const char *const last[] = { "last", NULL };
    static const char *const very[] = { "very", NULL };
    static const char *const the[] = { "the", NULL };
    /* "his first screenplay", "my first sprint": a kind, not an order */
    static const char *const det[] = {
        "the", "a", "an", "my", "our", "your", "his", "her", "their", "its", NULL
    };
    static const char *const nouns[] = {
        "time", "times", "thing", "things", "day", "session", "sitting", "step", "steps",
        "version", "plan", "piece", "message", "question", "request", "prompt", "error",
        "bug", "problem", "issue", "change", "fix", "idea", "attempt", "commit", "decision",
        "task", "feature", "suggestion", "approach", "draft", "conversation", "chat", NULL
    };
    /* "the last day we worked on the frontend": the day is the order, what
     * was said in it the topic */
    static const char *const days[] = {
        "day", "session", "sitting", "conversation", "chat", NULL
    };
    static const char *const subj[] = { "i", "we", "you", "he", "she", "they", NULL };
    static const char *const aux[] = { "did", "do", "does", "have", "has", "had", NULL };
    static const char *const first_w[] = {
        "earliest", "initially", "originally", NULL
    };
    static const char *const last_w[] = { "latest", "finally", NULL };
    static const char *const most[] = { "most", NULL };
    static const char *const recent[] = { "recent", "recently", NULL };
    static const char *const to[] = { "to", NULL };
    static const char *const begin[] = { "begin", "start", NULL };
    static const char *const with[] = { "with", NULL };
    static const char *const at[] = { "at", "in", NULL };
    static const char *const start[] = { "start", "beginning", NULL };
    static const char *const of[] = { "of", NULL };
    static const char *const this[] = { "the", "this", "our", "my", NULL };
    static const char *const project[] = {
        "project", "conversation", "conversations", "chat", "chats", "work", "session", NULL
    };
    static const char *const zh_first[] = { "第一次", "最早", "最初", NULL };
    static const char *const zh_last[] = { "最后一次", "最後一次", NULL };
    size_t scan = len < 4096 ? len : 4096;      /* the opening is enough */
    for (int k = 0; zh_first[k]; k++)
        if (memmem(text, scan, zh_first[k], strlen(zh_first[k])))
            return ORD_FIRST;
    for (int k = 0; zh_last[k]; k++)
        if (memmem(text, scan, zh_last[k], strlen(zh_last[k])))
            return ORD_LAST;
    char buf[CUE_MAX_WORDS][16];
    size_t wl[CUE_MAX_WORDS];
    unsigned char joined[CUE_MAX_WORDS];
    int nw = cue_words(text, len, buf, wl, joined);
#define W(k, list) ((k) >= 0 && (k) < nw && word_is(buf[k], wl[k], list))
    for (int i = 0; i < nw; i++) {
        int which = W(i, first) ? ORD_FIRST : W(i, last) ? ORD_LAST : 0;
        if (which && !joined[i]) {
            /* "the very first", "the first time", "the last thing we..." */
            if (W(i - 1, very) || ((W(i - 1, the) && W(i + 1, nouns))))
                return which | (W(i + 1, days) ? ORD_DAY : 0);
            /* "I first wanted", "did Joanna first watch", "did we last decide" */
            if (W(i - 1, subj) || (W(i - 2, aux) && !W(i - 1, det)))
                return which;
            continue;
        }
        if (W(i, first_w) || (W(i, to) && W(i + 1, begin) && W(i + 2, with)))
            return ORD_FIRST;
        /* "at the start", "at the beginning of the project"; not "at the
         * start of March" (a period the time parser reads) */
        if (W(i, at) && W(i + 1, this) && W(i + 2, start) &&
            (!W(i + 3, of) || (W(i + 4, this) && W(i + 5, project)) || W(i + 4, project)))
            return ORD_FIRST;
        if (W(i, last_w) || (W(i, most) && W(i + 1, recent)))
            return ORD_LAST;
    }
#undef W
    return 0;
}

/* ---- who is talking: a question that is a transcript ----
 *
 * "Bart: I'm doing a magic show!\nBart: what should I wear?": a pasted
 * dialogue's lines begin with who says them, and what is recalled for it
 * is about that person (rank.c, LABEL_OTHER). A label is the text before
 * the first ':' (or '：') of a line: at most LABEL_MAX bytes and
 * LABEL_WORDS words, no sentence punctuation, a name's shape (a capital or
 * a non-ASCII letter first, not all capitals: "INFO:" is a log level), not
 * a role or log word ("User:", "Error:"), and heading at least two lines
 * (a speaker who speaks twice). Only the first LABEL_LINES lines are read:
 * a pasted log of a million lines costs no more than its opening. */

#define LABEL_MAX    40
#define LABEL_WORDS  3
#define LABEL_LINES  200
#define LABEL_KINDS  8

static int label_cb(void *arg, const char *tok, size_t n, size_t s, size_t e, int col)
{
    struct query *q = arg;
    for (int i = 0; i < q->nt && !col; i++)
        if (strlen(q->t[i].norm) == n && !memcmp(q->t[i].norm, tok, n))
            q->t[i].label = 1;
    return 0;
}

/* Whether s[0..n) has a name's shape and is not a role or log word. */
static int name_shaped(const char *s, size_t n)
{
    static const char *const roles[] = {
        "user", "assistant", "human", "ai", "bot", "system", "me", "you", "q", "a",
        "question", "answer", "error", "warning", "note", "info", "debug", "trace",
        "fatal", "tip", "todo", "fixme", "example", "output", "input", "result",
        "response", "prompt", "step", "hint", "summary", "update", "re", "fwd",
        "subject", "from", "to", "cc", "date", "time", "source", "file", "line", NULL
    };
    unsigned char c0 = (unsigned char)s[0];
    if (!(c0 >= 0x80 || (c0 >= 'A' && c0 <= 'Z')))
        return 0;
    int lower = 0;
    char low[LABEL_MAX + 1];
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        lower |= c >= 'a' && c <= 'z';
        low[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    if (c0 < 0x80 && n > 1 && !lower)
        return 0;
    low[n] = 0;
    for (int i = 0; roles[i]; i++)
        if (!strcmp(low, roles[i]))
            return 0;
    return 1;
}

/* The label that opens line [a, b), through *len; 0 if none. */
static int line_label(const char *s, size_t a, size_t b, size_t *len)
{
    int words = 0, in_word = 0;
    for (size_t i = a; i < b && i - a <= LABEL_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ':' || (c == 0xEF && i + 2 < b && (unsigned char)s[i + 1] == 0xBC &&
                         (unsigned char)s[i + 2] == 0x9A)) {
            size_t n = i;
            while (n > a && (s[n - 1] == ' ' || s[n - 1] == '\t'))
                n--;
            *len = n - a;
            return words > 0 && words <= LABEL_WORDS && name_shaped(s + a, n - a);
        }
        if (c == '.' || c == '?' || c == '!' || c == ',' || c == '"' || c == '(' ||
            c == '[' || c == '/' || c == '=' ||
            (c == 0xE3 && i + 1 < b && (unsigned char)s[i + 1] == 0x80))  /* 。、「 */
            return 0;
        if (c == ' ' || c == '\t') {
            in_word = 0;
        } else if (!in_word) {
            in_word = 1;
            words++;
        }
    }
    return 0;
}

/* Marks the terms that are the transcript's speaker labels (qterm.label). */
static int mark_labels(struct query *q, const char *text, size_t n)
{
    struct { size_t at, len; int lines; } k[LABEL_KINDS];
    int nk = 0, lines = 0;
    for (size_t a = 0; a < n && lines < LABEL_LINES; lines++) {
        size_t b = a, len, i = a;
        while (b < n && text[b] != '\n')
            b++;
        while (i < b && (text[i] == ' ' || text[i] == '\t'))
            i++;
        if (line_label(text, i, b, &len)) {
            int j = 0;
            while (j < nk && !(k[j].len == len && !memcmp(text + k[j].at, text + i, len)))
                j++;
            if (j == nk && nk < LABEL_KINDS) {
                k[nk].at = i;
                k[nk].len = len;
                k[nk++].lines = 0;
            }
            if (j < nk)
                k[j].lines++;
        }
        a = b + 1;
    }
    for (int j = 0; j < nk; j++)
        if (k[j].lines >= 2 && text_tokenize(text + k[j].at, k[j].len, 1, label_cb, q))
            return CAIRN_NOMEM;
    return 0;
}

/* A copy of text in which one '-' leading a word of at least
 * QUERY_DASH_MIN bytes is a space (policy.h): "the -vec file" asks for
 * "vec". The offsets are text's, so a term's surface and the time
 * expression's span are the same in both. */
static char *undashed(const char *text, size_t n)
{
    char *p = malloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, text, n + 1);
    for (size_t i = 0; QUERY_DASH_MIN > 0 && i < n; i++) {
        if (text[i] != '-' || (i && !strchr(" \t\n\r(\"'`[{", text[i - 1])))
            continue;
        size_t k = i + 1;
        while (k < n && ((text[k] >= 'a' && text[k] <= 'z') || (text[k] >= 'A' && text[k] <= 'Z') ||
                         (text[k] >= '0' && text[k] <= '9') || (unsigned char)text[k] >= 0x80))
            k++;
        if (k - i > (size_t)QUERY_DASH_MIN)   /* the word after the dash */
            p[i] = ' ';
    }
    return p;
}

int query_parse(struct query *q, const char *text, int64_t now, int use_time)
{
    struct collect c = { q, text, 0, 0, 0, 0 };
    size_t n = strlen(text);
    memset(q, 0, sizeof *q);
    q->text = text;
    q->now = now;
    if (use_time) {
        struct time_range tr;
        if (timeexpr_parse(text, n, now, &tr)) {
            /* "lately" in a topical question is a leaning (policy.h) */
            q->vague = tr.vague && !tr.only_time;
            q->has_range = !q->vague;
            q->only_time = tr.only_time;
            q->from = tr.from;
            q->to = tr.to;
            c.skip_from = tr.start;
            c.skip_to = tr.end;
            c.skip2_from = tr.vstart;
            c.skip2_to = tr.vend;
        }
    }
    q->asks_reply = query_asks_reply(text, n);
    q->asks_summary = query_asks_summary(text, n);
    q->ordinal = use_time ? query_ordinal(text, n) : 0;
    char *plain = undashed(text, n);
    if (!plain)
        return CAIRN_NOMEM;
    c.text = plain;
    int trc = text_tokenize(plain, n, 1, add_term, &c);
    free(plain);
    if (trc)
        return CAIRN_NOMEM;
    /* Keep stop words only when the question has nothing else. */
    int content = 0;
    for (int i = 0; i < q->nt; i++)
        content += !q->t[i].stop;
    if (content || q->has_range || q->vague) {
        /* a period with only stop words around it ("what did I do last
         * week?") is a question about the period, not about "I" and "do" */
        int k = 0;
        for (int i = 0; i < q->nt; i++) {
            if (q->t[i].stop) {
                free(q->t[i].norm);
                free(q->t[i].surface);
            } else {
                q->t[k++] = q->t[i];
            }
        }
        q->nt = k;
    }
    if (mark_labels(q, text, n))
        return CAIRN_NOMEM;
    /* a pasted transcript's "when did you last see it?" is a line of the
     * talk, not what the user asks of the memory (MADial zh: 最后一次) */
    for (int i = 0; i < q->nt && q->ordinal; i++)
        if (q->t[i].label)
            q->ordinal = 0;
    return CAIRN_OK;
}

void query_free(struct query *q)
{
    for (int i = 0; i < q->nt; i++) {
        free(q->t[i].norm);
        free(q->t[i].surface);
    }
    q->nt = 0;
}

void query_add_phrase(struct buf *b, const char *s)
{
    buf_addc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            buf_addc(b, '"');
        buf_addc(b, *s);
    }
    buf_addc(b, '"');
}

void query_match_expr(const struct query *q, struct buf *b)
{
    for (int i = 0; i < q->nt; i++) {
        if (i)
            buf_adds(b, " OR ");
        query_add_phrase(b, q->t[i].surface);
    }
}

/* ---- the question in the named speaker's words (issue 16, persp55) -- */

/* A word's bytes: letters, digits, bytes over 0x7f; an apostrophe or a
 * hyphen inside a word ("Melanie's", "self-care") keeps it whole. */
static int fp_letter(unsigned char c)
{
    return c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9');
}

/* ASCII case-folded equality. */
static int fp_eq(const char *a, size_t n, const char *b)
{
    size_t m = strlen(b);
    if (m != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x >= 'A' && x <= 'Z')
            x += 32;
        if (y >= 'A' && y <= 'Z')
            y += 32;
        if (x != y)
            return 0;
    }
    return 1;
}

/* Whether w (n bytes) is one of the words of name (two bytes or more). */
static int fp_names(const char *w, size_t n, const char *name)
{
    if (n < 2)
        return 0;
    for (const char *s = name; *s;) {
        while (*s && !fp_letter((unsigned char)*s))
            s++;
        const char *e = s;
        while (*e && fp_letter((unsigned char)*e))
            e++;
        if ((size_t)(e - s) == n) {
            char tmp[64];
            if (n < sizeof tmp) {
                memcpy(tmp, s, n);
                tmp[n] = '\0';
                if (fp_eq(w, n, tmp))
                    return 1;
            }
        }
        s = e;
    }
    return 0;
}

static int word_is_ci(const char *w, size_t n, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (fp_eq(w, n, list[i]))
            return 1;
    return 0;
}

int query_first_person(const char *text, size_t len, const char *name, struct buf *out)
{
    /* the question's frame: an opening question word, and an auxiliary
     * right before the name ("What did Caroline paint?"), go */
    static const char *const wh[] = {
        "what", "which", "who", "whom", "whose", "where", "when", "why", "how", NULL
    };
    static const char *const aux[] = {
        "does", "do", "did", "is", "was", "are", "were", "has", "have", "had", "will",
        "would", "can", "could", "should", "might", "may", NULL
    };
    /* her / his / she / he: the named person, once the name is turned */
    static const char *const third[][2] = {
        { "she", "I" }, { "he", "I" }, { "her", "my" }, { "his", "my" }, { "him", "me" },
        { "herself", "myself" }, { "himself", "myself" }, { "hers", "mine" },
        { NULL, NULL }
    };
    struct { size_t a, n; } w[RECALL_FP_WORDS];
    int nw = 0, named = 0;
    if (!name || !*name)
        return 0;
    for (size_t i = 0; i < len;) {
        if (!fp_letter((unsigned char)text[i])) {
            i++;
            continue;
        }
        if (nw == RECALL_FP_WORDS)
            return 0;                 /* a pasted text, not a question about someone */
        size_t a = i;
        while (i < len && (fp_letter((unsigned char)text[i]) ||
                           ((text[i] == '\'' || text[i] == '-') && i + 1 < len &&
                            fp_letter((unsigned char)text[i + 1]))))
            i++;
        w[nw].a = a;
        w[nw++].n = i - a;
    }
    for (int k = 0; k < nw; k++) {
        size_t n = w[k].n;
        const char *s = text + w[k].a;
        if (n > 2 && s[n - 2] == '\'' && (s[n - 1] == 's' || s[n - 1] == 'S'))
            n -= 2;
        named |= fp_names(s, n, name);
    }
    if (!named)
        return 0;
    buf_reset(out);
    for (int k = 0; k < nw; k++) {
        const char *s = text + w[k].a;
        size_t n = w[k].n, base = n;
        int poss = n > 2 && s[n - 2] == '\'' && (s[n - 1] == 's' || s[n - 1] == 'S');
        if (poss)
            base = n - 2;
        const char *put = NULL;
        if (fp_names(s, base, name)) {
            put = poss ? "my" : "I";
        } else if (k == 0 && word_is_ci(s, n, wh)) {
            continue;
        } else if (k + 1 < nw && word_is_ci(s, n, aux)) {
            const char *t = text + w[k + 1].a;
            size_t tn = w[k + 1].n;
            if (tn > 2 && t[tn - 2] == '\'')
                tn -= 2;
            if (fp_names(t, tn, name))
                continue;             /* "did Caroline" -> "I" */
        } else {
            for (int j = 0; third[j][0]; j++)
                if (fp_eq(s, n, third[j][0]))
                    put = third[j][1];
        }
        if (out->n)
            buf_addc(out, ' ');
        if (put)
            buf_adds(out, put);
        else
            buf_add(out, s, n);
    }
    return out->err ? -1 : out->n > 0;
}
