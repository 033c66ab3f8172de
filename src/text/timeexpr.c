/*
 * timeexpr.c: finds the first time expression in a question (English or
 * Chinese), or every one in a message (timeexpr_scan, for the dates a
 * message speaks of: store/events.c), and turns it into a local-time
 * range [from, to) relative to "now", plus a guess whether the question
 * asks about nothing but that period ("what did I do yesterday?") or is
 * topical ("what restaurant did I go to last week?"). Recall uses the range
 * as a filter or boost and, for period-only questions, lists the period
 * instead of searching it.
 *
 * How it works: the input is scanned left to right; at every English word
 * start a small lexer reads up to TE_MAXTOK tokens (words, numbers,
 * ordinals, ISO dates, a/b dates) and a list of rules is tried in order;
 * at every non-ASCII character (and digit) the Chinese rules are tried on
 * the raw bytes. The first position with a match wins. Nothing allocates;
 * every rule looks at a bounded number of bytes past a bounded whitespace
 * run, so the scan is linear in the input and invalid UTF-8 just never
 * matches.
 *
 * All calendar arithmetic goes through mktime() with tm_isdst = -1 on
 * out-of-range fields (day 0, month -3, ...), which normalises across
 * month and year ends, leap days and DST changes in the local zone.
 *
 * Decisions (the brief left these open):
 *  - Weeks run Monday..Sunday. "last week"/上周 is the previous calendar
 *    week; "this week"/这周 the current one (whole week, to next Monday).
 *  - "past/last N days|weeks|months|years", "the past week", "the last
 *    week" (with "the"), 最近/过去/近/这 + N + unit are rolling: from N
 *    units before today's midnight up to tomorrow's midnight (today
 *    included). "recently", "lately", 最近, 近期 alone = past 14 days.
 *    "a few" and 几 = 3, "a couple (of)" and "several" = 2 and 3.
 *  - "N days ago" is that one day, "N weeks ago" that Monday..Sunday
 *    week, "N months ago" that calendar month, "N years ago" that year.
 *  - A bare weekday ("on Tuesday", "Tuesday", 周二, 星期二) is the most
 *    recent such day on or before today (today if today is Tuesday).
 *    "last Tuesday" is the most recent Tuesday strictly before today
 *    (a week ago if today is Tuesday). "this Tuesday"/这周二 is the
 *    Tuesday of the current week; 上周二 the Tuesday of last week.
 *  - "the weekend", "over the weekend", "this weekend", 周末, 这周末: the
 *    most recent Saturday 00:00 (today if Saturday, yesterday if Sunday)
 *    to the Monday after. "last weekend"/上周末: the same on Monday..
 *    Friday, but on Saturday/Sunday the weekend before the current one.
 *  - A bare month ("in March", 三月, 3月份) is its most recent occurrence
 *    not in the future (the current month counts). "last March" is the
 *    most recent March strictly before the current month; "this March"
 *    is March of this year. "early/mid/late March" are days 1-10, 11-20,
 *    21-end. A month and day without a year ("May 2", 5月2日) is the most
 *    recent such date on or before today; Feb 29 steps back to a leap
 *    year.
 *  - "May", "March" and three-letter abbreviations are words too, so they
 *    only count as months with context: a preposition ("in May"), last/
 *    this/early/mid/late, or an adjacent day number or year. Weekday
 *    abbreviations ("sun", "wed") are never read.
 *  - "5/2" is ambiguous (fraction, May 2, 5 Feb), so a/b only counts with
 *    "on" before it ("on 5/2") or a year after it ("5/2/2023"). Both <= 12
 *    reads month/day (US and Chinese order); a first part > 12 reads
 *    day/month. ISO "2023-05-02" and "2023-05" always count.
 *  - A bare four-digit number 1970..2099 is a year unless a unit word
 *    follows ("2000 days").
 *  - "last night"/昨晚 = yesterday 18:00 to today 06:00; "this morning"/
 *    今早 = today 00:00-12:00; "this afternoon" 12:00-18:00; "tonight"/
 *    "this evening"/今晚 18:00-24:00; "the other day" and 前几天 = the 7
 *    days before today; "(this) past weekend" = the most recent weekend.
 *    "tomorrow"/明天 is accepted.
 *  - "next week/month/year" is the following calendar one; "next Friday"
 *    the first Friday after today (a week on if today is Friday); "next
 *    weekend" the coming one (the one after, on a weekend day).
 *  - "recently", "lately", "these days", "nowadays", 最近, 近期 set
 *    `vague`: they name a leaning to the recent past, not a period, and
 *    recall treats them so (issue 16).
 *  - "on the 15th" (no month after it) is the most recent 15th on or
 *    before today; without "on" ("the 3rd time") it is no date.
 *  - "between A and B", "(from) A to/until/till/through B" and "A - B",
 *    where A and B are both expressions and B ends after A starts, are one
 *    range from A's start to B's end.
 *  - The span covers a leading preposition and "the" ("in the past 3
 *    days", "on Tuesday") so a caller can cut the whole phrase out.
 *  - only_time: every time expression in the question is taken out, then
 *    English stop words / generic verbs and Chinese function words /
 *    generic verbs are skipped; if any other word, number or CJK
 *    character remains, the question is topical (only_time = 0).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text/timeexpr.h"
#include "util/utf8.h"

/* Today, in local time, which every rule counts from. */
struct te_ctx {
    const char *q;
    size_t n;
    int y, m, d;   /* m is 1..12 */
    int wd;        /* weekday of today, 0 = Monday .. 6 = Sunday */
};

struct te_hit {
    int64_t from, to;
    int vague;     /* "recently", "lately", 最近: a leaning, not a bound */
};

/* Caps on "N units ago" so mktime never sees absurd field values. */
#define TE_MAX_DAYS   36600
#define TE_MAX_WEEKS  5300
#define TE_MAX_MONTHS 1200
#define TE_MAX_YEARS  100
#define TE_MAX_WS     16     /* whitespace bytes allowed between words */

enum { TE_DAY = 1, TE_WEEK, TE_MONTH, TE_YEAR };
enum { TE_BARE, TE_LAST, TE_THIS };
#define TE_PREP_ON 2   /* index + 1 of "on" in en_match's list */

/* ---------------------------------------------------------------- dates */

/* mktime reads the zone again at every call (glibc's tzset: a stat of
 * /etc/localtime, a system call, ~2 a message that names a day; 42,000 in
 * a 20,000-message add, 6% of its CPU): the same fields asked again (the
 * messages of one day share their "yesterday" and "today") are answered
 * from a small cache of the thread's last answers, emptied when $TZ
 * changes (a test, a program switching zones). A change of the file
 * /etc/localtime itself under a running process is not followed, as
 * localtime_r (te_init) does not follow it either. */
#define TE_MK_SLOTS 64
#define TE_MK_TZ 64            /* a longer $TZ is not cached */

struct te_mk_slot { int y, m, d, h, set; int64_t t; };
static _Thread_local struct te_mk_slot te_mk_cache[TE_MK_SLOTS];
static _Thread_local char te_mk_tz[TE_MK_TZ + 1]; /* 1 then $TZ, or 2: unset */

static int64_t te_mk_uncached(int y, int m, int d, int h)
{
    struct tm t;
    memset(&t, 0, sizeof t);
    t.tm_year = y - 1900;
    t.tm_mon = m - 1;
    t.tm_mday = d;
    t.tm_hour = h;
    t.tm_isdst = -1;
    return (int64_t)mktime(&t);
}

static int64_t te_mk(int y, int m, int d, int h)
{
    const char *tz = getenv("TZ");
    if (tz && strlen(tz) >= TE_MK_TZ)
        return te_mk_uncached(y, m, d, h);
    if (tz ? te_mk_tz[0] != 1 || strcmp(te_mk_tz + 1, tz) : te_mk_tz[0] != 2) {
        memset(te_mk_cache, 0, sizeof te_mk_cache);
        te_mk_tz[0] = tz ? 1 : 2;
        snprintf(te_mk_tz + 1, TE_MK_TZ, "%s", tz ? tz : "");
    }
    unsigned k = ((unsigned)y * 2654435761u ^ (unsigned)m * 40503u ^ (unsigned)d * 977u ^
                  (unsigned)h * 31u) % TE_MK_SLOTS;
    struct te_mk_slot *e = &te_mk_cache[k];
    if (!e->set || e->y != y || e->m != m || e->d != d || e->h != h)
        *e = (struct te_mk_slot){ y, m, d, h, 1, te_mk_uncached(y, m, d, h) };
    return e->t;
}

static int te_leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int te_mdays(int y, int m)
{
    static const int md[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    if (m < 1 || m > 12)
        return 0;
    return m == 2 && te_leap(y) ? 29 : md[m - 1];
}

/* [today + a, today + b) in whole days. */
static void te_days(const struct te_ctx *c, struct te_hit *r, int a, int b)
{
    r->from = te_mk(c->y, c->m, c->d + a, 0);
    r->to = te_mk(c->y, c->m, c->d + b, 0);
}

/* Hours relative to today's midnight, e.g. -1,18 .. 0,6 for last night. */
static void te_hours(const struct te_ctx *c, struct te_hit *r,
                     int da, int ha, int db, int hb)
{
    r->from = te_mk(c->y, c->m, c->d + da, ha);
    r->to = te_mk(c->y, c->m, c->d + db, hb);
}

/* The Monday..Sunday week k weeks from the current one (k <= 1). */
static void te_week(const struct te_ctx *c, struct te_hit *r, int k)
{
    int mon = c->d - c->wd + 7 * k;
    r->from = te_mk(c->y, c->m, mon, 0);
    r->to = te_mk(c->y, c->m, mon + 7, 0);
}

static void te_month(struct te_hit *r, int y, int m)
{
    r->from = te_mk(y, m, 1, 0);
    r->to = te_mk(y, m + 1, 1, 0);
}

static void te_year(struct te_hit *r, int y)
{
    r->from = te_mk(y, 1, 1, 0);
    r->to = te_mk(y + 1, 1, 1, 0);
}

/* N units ago: that day, week, month or year. */
static int te_ago(const struct te_ctx *c, struct te_hit *r, int unit, long v)
{
    switch (unit) {
    case TE_DAY:
        if (v > TE_MAX_DAYS) return 0;
        te_days(c, r, (int)-v, (int)-v + 1);
        return 1;
    case TE_WEEK:
        if (v > TE_MAX_WEEKS) return 0;
        te_week(c, r, (int)-v);
        return 1;
    case TE_MONTH:
        if (v > TE_MAX_MONTHS) return 0;
        te_month(r, c->y, c->m - (int)v);
        return 1;
    case TE_YEAR:
        if (v > TE_MAX_YEARS) return 0;
        te_year(r, c->y - (int)v);
        return 1;
    }
    return 0;
}

/* The past N units, rolling: N units before today's midnight up to
 * tomorrow's midnight. A month or year back keeps the day of month,
 * clamped (past month on Mar 31 starts Feb 29 or 28). */
static int te_rolling(const struct te_ctx *c, struct te_hit *r, int unit, long v)
{
    int y = c->y, m = c->m;
    switch (unit) {
    case TE_DAY:
        if (v > TE_MAX_DAYS) return 0;
        r->from = te_mk(c->y, c->m, c->d - (int)v, 0);
        break;
    case TE_WEEK:
        if (v > TE_MAX_WEEKS) return 0;
        r->from = te_mk(c->y, c->m, c->d - 7 * (int)v, 0);
        break;
    case TE_MONTH:
    case TE_YEAR:
        if (unit == TE_MONTH) {
            if (v > TE_MAX_MONTHS) return 0;
            m -= (int)v;
            while (m < 1) {
                m += 12;
                y--;
            }
        } else {
            if (v > TE_MAX_YEARS) return 0;
            y -= (int)v;
        }
        r->from = te_mk(y, m, c->d < te_mdays(y, m) ? c->d : te_mdays(y, m), 0);
        break;
    default:
        return 0;
    }
    r->to = te_mk(c->y, c->m, c->d + 1, 0);
    return 1;
}

/* Weekday x (0 = Monday): most recent on/before today, strictly before
 * today, or in the current week. */
static void te_weekday(const struct te_ctx *c, struct te_hit *r, int x, int mode)
{
    int off;
    if (mode == TE_THIS) {
        off = c->wd - x;
    } else {
        off = (c->wd - x + 7) % 7;
        if (mode == TE_LAST && off == 0)
            off = 7;
    }
    te_days(c, r, -off, -off + 1);
}

/* Saturday 00:00 .. Monday 00:00 of the most recent weekend; with
 * `before_current`, the one before the weekend we are in (if any). */
static void te_weekend(const struct te_ctx *c, struct te_hit *r, int before_current)
{
    int off = (c->wd - 5 + 7) % 7;
    if (before_current && c->wd >= 5)
        off += 7;
    te_days(c, r, -off, -off + 2);
}

/* Month m (1..12), optionally a day in it and a year. part: 0 whole
 * month, 1 early, 2 mid, 3 late. Returns 0 for an impossible date. */
static int te_month_day(const struct te_ctx *c, struct te_hit *r, int m, int day,
                        int year, int mode, int part)
{
    int y = year;
    if (m < 1 || m > 12 || day < 0 || day > 31)
        return 0;
    if (!y) {
        int cmp;   /* <0 if (m, day) is before today, 0 same, >0 after */
        if (day)
            cmp = m != c->m ? m - c->m : day - c->d;
        else
            cmp = m - c->m;
        y = c->y;
        if (mode == TE_BARE && cmp > 0)
            y--;
        else if (mode == TE_LAST && cmp >= 0)
            y--;
        /* Feb 29 without a year: back to the last leap year. */
        for (int i = 0; day && day > te_mdays(y, m) && i < 8; i++)
            y--;
    }
    if (day) {
        if (day > te_mdays(y, m))
            return 0;
        r->from = te_mk(y, m, day, 0);
        r->to = te_mk(y, m, day + 1, 0);
        return 1;
    }
    switch (part) {
    case 1:
        r->from = te_mk(y, m, 1, 0);
        r->to = te_mk(y, m, 11, 0);
        break;
    case 2:
        r->from = te_mk(y, m, 11, 0);
        r->to = te_mk(y, m, 21, 0);
        break;
    case 3:
        r->from = te_mk(y, m, 21, 0);
        r->to = te_mk(y, m + 1, 1, 0);
        break;
    default:
        te_month(r, y, m);
    }
    return 1;
}

/* ---------------------------------------------------------- English lexer */

enum { TK_WORD, TK_NUM, TK_ORD, TK_DATE, TK_SLASH };
enum { SEP_SPACE, SEP_COMMA, SEP_HYPHEN };

struct te_tok {
    size_t s, e;      /* byte span */
    int kind;
    int sep;          /* separator before this token (not for the first) */
    char w[16];       /* TK_WORD: lowercase; "" when too long to be a keyword */
    long v;           /* TK_NUM/TK_ORD value; TK_DATE year */
    int ndig;         /* TK_NUM digit count */
    int a, b, c;      /* TK_DATE month, day (0 = whole month); TK_SLASH a/b/c, c = year or 0 */
};

#define TE_MAXTOK 8

static int te_alpha(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int te_digit(unsigned char ch)
{
    return ch >= '0' && ch <= '9';
}

static int te_alnum(unsigned char ch)
{
    return te_alpha(ch) || te_digit(ch);
}

static unsigned char te_at(const struct te_ctx *c, size_t p)
{
    return p < c->n ? (unsigned char)c->q[p] : 0;
}

/* Reads up to 4 digits at p into *v; returns the digit count (0 if none
 * or too many). */
static int te_digits(const struct te_ctx *c, size_t p, int max, long *v)
{
    int k = 0;
    long x = 0;
    while (te_digit(te_at(c, p + (size_t)k))) {
        if (k == max)
            return 0;
        x = x * 10 + (te_at(c, p + (size_t)k) - '0');
        k++;
    }
    *v = x;
    return k;
}

/* "2023-05-02", "2023-05", "5/2", "5/2/2023" at p (p starts the first
 * digit run, of length k1 with value v1). Returns the end or 0. */
static size_t te_lex_date(const struct te_ctx *c, size_t p, int k1, long v1, struct te_tok *t)
{
    size_t q = p + (size_t)k1;
    unsigned char sep = te_at(c, q);
    long v2 = 0, v3 = 0;
    int k2 = te_digits(c, q + 1, 2, &v2), k3 = 0;
    if (!k2)
        return 0;
    q += 1 + (size_t)k2;
    if (te_at(c, q) == sep && te_digit(te_at(c, q + 1))) {
        k3 = te_digits(c, q + 1, 4, &v3);
        if (!k3)
            return 0;
        q += 1 + (size_t)k3;
    }
    /* Not part of a longer run like 1/2/3/4 or 2023-05-02T10 */
    if (te_alnum(te_at(c, q)) || ((te_at(c, q) == '-' || te_at(c, q) == '/' ||
        te_at(c, q) == '.') && te_digit(te_at(c, q + 1))))
        return 0;
    if (k1 == 4) {
        if (k3 > 2 || v2 < 1 || v2 > 12 || (k3 && (v3 < 1 || v3 > 31)))
            return 0;
        t->kind = TK_DATE;
        t->v = v1;
        t->a = (int)v2;
        t->b = (int)v3;
    } else if (sep == '/' && k1 <= 2) {
        if (k3 && k3 != 4)
            return 0;
        t->kind = TK_SLASH;
        t->a = (int)v1;
        t->b = (int)v2;
        t->c = (int)v3;
    } else {
        return 0;
    }
    return q;
}

/* One token at p (an ASCII letter or digit). Returns its end, 0 if the
 * text there cannot be part of a time expression ("mp3", "3.5", "10:00"). */
static size_t te_lex_one(const struct te_ctx *c, size_t p, struct te_tok *t)
{
    size_t q = p;
    memset(t, 0, sizeof *t);
    t->s = p;
    if (te_alpha(te_at(c, p))) {
        while (te_alpha(te_at(c, q)))
            q++;
        if (te_digit(te_at(c, q)))
            return 0;
        t->kind = TK_WORD;
        if (q - p < sizeof t->w)
            for (size_t i = 0; i < q - p; i++) {
                unsigned char ch = te_at(c, p + i);
                t->w[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
            }
        t->e = q;
        return q;
    }
    long v;
    int k = te_digits(c, p, 9, &v);
    if (!k)
        return 0;
    q = p + (size_t)k;
    unsigned char nx = te_at(c, q);
    if ((nx == '-' || nx == '/') && te_digit(te_at(c, q + 1))) {
        q = te_lex_date(c, p, k, v, t);
        t->e = q;
        return q;
    }
    if ((nx == '.' || nx == ':' || nx == ',') && te_digit(te_at(c, q + 1)))
        return 0;
    if (te_alpha(nx)) {
        char s0 = (char)(te_at(c, q) | 0x20), s1 = (char)(te_at(c, q + 1) | 0x20);
        if (te_alnum(te_at(c, q + 2)))
            return 0;
        if (!((s0 == 's' && s1 == 't') || (s0 == 'n' && s1 == 'd') ||
              (s0 == 'r' && s1 == 'd') || (s0 == 't' && s1 == 'h')))
            return 0;
        t->kind = TK_ORD;
        t->v = v;
        t->e = q + 2;
        return q + 2;
    }
    t->kind = TK_NUM;
    t->v = v;
    t->ndig = k;
    t->e = q;
    return q;
}

/* Tokens from p on, while they are separated by a little whitespace, one
 * comma or one hyphen. Returns the count. */
static int te_lex(const struct te_ctx *c, size_t p, struct te_tok *t, int max)
{
    int nt = 0;
    int sep = SEP_SPACE;
    while (nt < max) {
        size_t e = te_lex_one(c, p, &t[nt]);
        if (!e)
            break;
        t[nt].sep = sep;
        nt++;
        size_t q = e;
        sep = SEP_SPACE;
        if (te_at(c, q) == ',') {
            sep = SEP_COMMA;
            q++;
        } else if (te_at(c, q) == '-') {
            sep = SEP_HYPHEN;
            q++;
        }
        size_t ws = 0;
        while (ws < TE_MAX_WS && (te_at(c, q) == ' ' || te_at(c, q) == '\t' ||
                                  te_at(c, q) == '\n' || te_at(c, q) == '\r')) {
            q++;
            ws++;
        }
        if (sep == SEP_HYPHEN && ws)
            break;
        if (sep == SEP_SPACE && !ws)
            break;
        if (!te_alnum(te_at(c, q)))
            break;
        p = q;
    }
    return nt;
}

/* ---------------------------------------------------------- English rules */

/* Token j is the word w, joined to the one before by a plain space. */
static int tw(const struct te_tok *t, int nt, int j, const char *w)
{
    return j < nt && t[j].kind == TK_WORD && (j == 0 || t[j].sep == SEP_SPACE) &&
           strcmp(t[j].w, w) == 0;
}

static int tw_any(const struct te_tok *t, int nt, int j, const char *const *ws)
{
    for (; *ws; ws++)
        if (tw(t, nt, j, *ws))
            return 1;
    return 0;
}

/* A count at token j: digits, a number word, "a", "a couple of", "a few".
 * Returns tokens used. */
static int en_num(const struct te_tok *t, int nt, int j, long *v)
{
    static const char *const words[] = {
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
        "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
        "seventeen", "eighteen", "nineteen", "twenty", NULL
    };
    if (j >= nt || (j > 0 && t[j].sep != SEP_SPACE))
        return 0;
    if (t[j].kind == TK_NUM) {
        if (t[j].v < 1)
            return 0;
        *v = t[j].v;
        return 1;
    }
    for (int i = 0; words[i]; i++)
        if (tw(t, nt, j, words[i])) {
            *v = i + 1;
            return 1;
        }
    if (tw(t, nt, j, "thirty")) {
        *v = 30;
        return 1;
    }
    if (tw(t, nt, j, "couple")) {
        *v = 2;
        return tw(t, nt, j + 1, "of") ? 2 : 1;
    }
    if (tw(t, nt, j, "few") || tw(t, nt, j, "several")) {
        *v = 3;
        return 1;
    }
    if (tw(t, nt, j, "a") || tw(t, nt, j, "an")) {
        int k = en_num(t, nt, j + 1, v);
        if (k && (tw(t, nt, j + 1, "couple") || tw(t, nt, j + 1, "few")))
            return 1 + k;
        *v = 1;
        return 1;
    }
    return 0;
}

/* A unit word at j; *plural says whether it had an s. */
static int en_unit(const struct te_tok *t, int nt, int j, int *plural)
{
    static const char *const u[] = { "day", "week", "month", "year" };
    static const char *const us[] = { "days", "weeks", "months", "years" };
    for (int i = 0; i < 4; i++) {
        if (tw(t, nt, j, u[i])) {
            *plural = 0;
            return i + 1;
        }
        if (tw(t, nt, j, us[i])) {
            *plural = 1;
            return i + 1;
        }
    }
    return 0;
}

static int en_weekday(const struct te_tok *t, int nt, int j)
{
    static const char *const wd[] = {
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"
    };
    for (int i = 0; i < 7; i++)
        if (tw(t, nt, j, wd[i]))
            return i + 1;
    return 0;
}

/* Month at j (1..12, 0 if none); *ambiguous for words that are also
 * common non-month words. The separator check is the caller's. */
static int en_month_word(const struct te_tok *t, int nt, int j, int *ambiguous)
{
    static const char *const full[] = {
        "january", "february", "march", "april", "may", "june", "july",
        "august", "september", "october", "november", "december"
    };
    static const char *const abbr[] = {
        "jan", "feb", "mar", "apr", "", "jun", "jul", "aug", "sep", "oct", "nov", "dec"
    };
    if (j >= nt || t[j].kind != TK_WORD)
        return 0;
    for (int i = 0; i < 12; i++) {
        if (strcmp(t[j].w, full[i]) == 0) {
            *ambiguous = i == 2 || i == 4;
            return i + 1;
        }
        if (abbr[i][0] && strcmp(t[j].w, abbr[i]) == 0) {
            *ambiguous = 1;
            return i + 1;
        }
    }
    if (strcmp(t[j].w, "sept") == 0) {
        *ambiguous = 1;
        return 9;
    }
    return 0;
}

static int en_day_tok(const struct te_tok *t, int nt, int j)
{
    if (j >= nt || (j > 0 && t[j].sep != SEP_SPACE))
        return 0;
    if ((t[j].kind == TK_NUM && t[j].ndig <= 2) || t[j].kind == TK_ORD)
        return t[j].v >= 1 && t[j].v <= 31 ? (int)t[j].v : 0;
    return 0;
}

static int en_year_tok(const struct te_tok *t, int nt, int j)
{
    if (j >= nt || t[j].kind != TK_NUM || t[j].ndig != 4)
        return 0;
    return t[j].v >= 1970 && t[j].v <= 2099 ? (int)t[j].v : 0;
}

/* [early|mid|late] MONTH [DAY] [,] [YEAR] at j. ctxok: a preposition or
 * last/this came before, so "May"/"March" are safe. */
static int en_month_phrase(const struct te_ctx *c, const struct te_tok *t, int nt,
                           int mode, int ctxok, struct te_hit *r)
{
    int j = 0, part = 0, amb = 0, day = 0, year = 0;
    if (tw(t, nt, 0, "early"))
        part = 1;
    else if (tw(t, nt, 0, "mid"))
        part = 2;
    else if (tw(t, nt, 0, "late"))
        part = 3;
    if (part) {
        j = 1;
        if (nt < 2 || (t[1].sep != SEP_SPACE && !(part == 2 && t[1].sep == SEP_HYPHEN)))
            return 0;
    }
    int m = en_month_word(t, nt, j, &amb);
    if (!m)
        return 0;
    j++;
    if (!part && (day = en_day_tok(t, nt, j)) != 0)
        j++;
    if (j < nt && (t[j].sep == SEP_SPACE || (day && t[j].sep == SEP_COMMA)) &&
        (year = en_year_tok(t, nt, j)) != 0)
        j++;
    if (amb && !ctxok && !part && !day && !year && mode == TE_BARE)
        return 0;
    if (!te_month_day(c, r, m, day, year, mode, part))
        return 0;
    return j;
}

/* The rules, on tokens that start right after any preposition and "the".
 * Returns the tokens used, 0 for no match. */
static int en_core(const struct te_ctx *c, const struct te_tok *t, int nt,
                   int prep, int the, struct te_hit *r)
{
    static const char *const last_w[] = { "last", "previous", NULL };
    static const char *const rolling_w[] = { "past", "last", "previous", NULL };
    long v;
    int k, unit, pl, x;

    if (tw(t, nt, 0, "day") && tw(t, nt, 1, "before") && tw(t, nt, 2, "yesterday")) {
        te_days(c, r, -2, -1);
        return 3;
    }
    if (tw(t, nt, 0, "yesterday")) {
        te_days(c, r, -1, 0);
        return 1;
    }
    if (tw(t, nt, 0, "today")) {
        te_days(c, r, 0, 1);
        return 1;
    }
    if (tw(t, nt, 0, "tomorrow")) {
        te_days(c, r, 1, 2);
        return 1;
    }
    if (tw(t, nt, 0, "tonight")) {
        te_hours(c, r, 0, 18, 1, 0);
        return 1;
    }
    if (tw(t, nt, 0, "last") && tw(t, nt, 1, "night")) {
        te_hours(c, r, -1, 18, 0, 6);
        return 2;
    }
    if (tw(t, nt, 0, "this")) {
        if (tw(t, nt, 1, "morning")) {
            te_hours(c, r, 0, 0, 0, 12);
            return 2;
        }
        if (tw(t, nt, 1, "afternoon")) {
            te_hours(c, r, 0, 12, 0, 18);
            return 2;
        }
        if (tw(t, nt, 1, "evening")) {
            te_hours(c, r, 0, 18, 1, 0);
            return 2;
        }
    }
    if (tw(t, nt, 0, "recently") || tw(t, nt, 0, "lately") || tw(t, nt, 0, "nowadays")) {
        te_rolling(c, r, TE_DAY, 14);
        r->vague = 1;
        return 1;
    }
    if (tw(t, nt, 0, "these") && tw(t, nt, 1, "days")) {
        te_rolling(c, r, TE_DAY, 14);
        r->vague = 1;
        return 2;
    }
    if (the && tw(t, nt, 0, "other") && tw(t, nt, 1, "day")) {
        te_days(c, r, -7, 0);
        return 2;
    }
    /* N units ago */
    if ((k = en_num(t, nt, 0, &v)) != 0 && (unit = en_unit(t, nt, k, &pl)) != 0 &&
        tw(t, nt, k + 1, "ago"))
        return te_ago(c, r, unit, v) ? k + 2 : 0;
    /* past / last N units, rolling */
    if (tw_any(t, nt, 0, rolling_w)) {
        if (tw(t, nt, 0, "past") && tw(t, nt, 1, "weekend")) {
            te_weekend(c, r, 0);   /* "this past weekend" */
            return 2;
        }
        if ((k = en_num(t, nt, 1, &v)) != 0 && (unit = en_unit(t, nt, 1 + k, &pl)) != 0)
            return te_rolling(c, r, unit, v) ? k + 2 : 0;
        if ((unit = en_unit(t, nt, 1, &pl)) != 0 && !pl &&
            (tw(t, nt, 0, "past") || (the && unit != TE_DAY)))
            return te_rolling(c, r, unit, 1) ? 2 : 0;
    }
    /* next week / month / year / weekend / Friday: plans told in a
     * message ("we fly out next week") */
    if (tw(t, nt, 0, "next")) {
        if ((unit = en_unit(t, nt, 1, &pl)) != 0 && !pl && unit != TE_DAY)
            return te_ago(c, r, unit, -1) ? 2 : 0;
        if (tw(t, nt, 1, "weekend")) {
            int off = c->wd >= 5 ? 12 - c->wd : 5 - c->wd;
            te_days(c, r, off, off + 2);
            return 2;
        }
        if ((x = en_weekday(t, nt, 1)) != 0) {
            int off = (x - 1 - c->wd + 7) % 7;
            off = off ? off : 7;
            te_days(c, r, off, off + 1);
            return 2;
        }
    }
    /* the week / month / year before last */
    if ((unit = en_unit(t, nt, 0, &pl)) != 0 && !pl && unit != TE_DAY &&
        tw(t, nt, 1, "before") && tw(t, nt, 2, "last"))
        return te_ago(c, r, unit, 2) ? 3 : 0;
    /* last week / weekend / Tuesday / March */
    if (tw_any(t, nt, 0, last_w)) {
        if ((unit = en_unit(t, nt, 1, &pl)) != 0 && !pl && unit != TE_DAY)
            return te_ago(c, r, unit, 1) ? 2 : 0;
        if (tw(t, nt, 1, "weekend")) {
            te_weekend(c, r, 1);
            return 2;
        }
        if ((x = en_weekday(t, nt, 1)) != 0) {
            te_weekday(c, r, x - 1, TE_LAST);
            return 2;
        }
        if (nt > 1 && t[1].sep == SEP_SPACE &&
            (k = en_month_phrase(c, t + 1, nt - 1, TE_LAST, 1, r)) != 0)
            return 1 + k;
    }
    if (tw(t, nt, 0, "this")) {
        if ((unit = en_unit(t, nt, 1, &pl)) != 0 && !pl && unit != TE_DAY) {
            if (unit == TE_WEEK)
                te_week(c, r, 0);
            else if (unit == TE_MONTH)
                te_month(r, c->y, c->m);
            else
                te_year(r, c->y);
            return 2;
        }
        if (tw(t, nt, 1, "weekend")) {
            te_weekend(c, r, 0);
            return 2;
        }
        if ((x = en_weekday(t, nt, 1)) != 0) {
            te_weekday(c, r, x - 1, TE_THIS);
            return 2;
        }
        if (nt > 1 && t[1].sep == SEP_SPACE &&
            (k = en_month_phrase(c, t + 1, nt - 1, TE_THIS, 1, r)) != 0)
            return 1 + k;
    }
    if (the && tw(t, nt, 0, "weekend")) {
        te_weekend(c, r, 0);
        return 1;
    }
    if ((x = en_weekday(t, nt, 0)) != 0) {
        te_weekday(c, r, x - 1, TE_BARE);
        return 1;
    }
    /* "on the march" is not a month: a preposition vouches for May or
     * March only when it is right before the word. */
    if ((k = en_month_phrase(c, t, nt, TE_BARE, prep && !the, r)) != 0)
        return k;
    /* 2 May, the 2nd of May 2023 */
    if ((x = en_day_tok(t, nt, 0)) != 0) {
        int amb, m, year = 0;
        k = tw(t, nt, 1, "of") ? 2 : 1;
        if (k < nt && t[k].sep == SEP_SPACE && (m = en_month_word(t, nt, k, &amb)) != 0) {
            if (k + 1 < nt && t[k + 1].sep != SEP_HYPHEN &&
                (year = en_year_tok(t, nt, k + 1)) != 0)
                k++;
            return te_month_day(c, r, m, x, year, TE_BARE, 0) ? k + 1 : 0;
        }
    }
    /* "on the 15th" (no month after it): the most recent 15th on or
     * before today; "the 3rd time" has no "on" */
    if (prep == TE_PREP_ON && the && t[0].kind == TK_ORD && t[0].v >= 1 && t[0].v <= 31) {
        int y = c->y, m = c->m;
        if (t[0].v > c->d && --m == 0) {
            m = 12;
            y--;
        }
        if (t[0].v > te_mdays(y, m))
            return 0;
        r->from = te_mk(y, m, (int)t[0].v, 0);
        r->to = te_mk(y, m, (int)t[0].v + 1, 0);
        return 1;
    }
    if (t[0].kind == TK_DATE)
        return te_month_day(c, r, t[0].a, t[0].b, (int)t[0].v, TE_BARE, 0) ? 1 : 0;
    if (t[0].kind == TK_SLASH && (prep == TE_PREP_ON || t[0].c)) {
        int m = t[0].a, d = t[0].b;
        if (m > 12) {
            m = t[0].b;
            d = t[0].a;
        }
        if (t[0].c && (t[0].c < 1970 || t[0].c > 2099))
            return 0;
        return te_month_day(c, r, m, d, t[0].c, TE_BARE, 0) ? 1 : 0;
    }
    if ((x = en_year_tok(t, nt, 0)) != 0 && !en_unit(t, nt, 1, &pl)) {
        te_year(r, x);
        return 1;
    }
    return 0;
}

/* Every word an English expression can begin with: the prepositions and
 * "the" en_match takes, and the first word of every rule of en_core (a
 * number, unit, month or weekday name, or a keyword). Sorted for bsearch.
 * A scan of a message meets a word start every few bytes and most words
 * start nothing: one look-up here (and one on the word after "on the",
 * "a") instead of lexing eight tokens and trying every rule took the scan
 * of the 100,000 bench messages (gen_data.py ingest, 56 MB of text) from
 * 6.2 s to 2.5 s of CPU (medians of 3), with the same 81,783 ranges. */
static const char *const en_starters[] = {
    "a", "an", "apr", "april", "at", "aug", "august", "couple", "day", "days", "dec",
    "december", "during", "early", "eight", "eighteen", "eleven", "feb", "february",
    "few", "fifteen", "five", "for", "four", "fourteen", "friday", "from", "in", "jan",
    "january", "jul", "july", "jun", "june", "last", "late", "lately", "mar", "march",
    "may", "mid", "monday", "month", "months", "next", "nine", "nineteen", "nov",
    "november", "nowadays", "oct", "october", "on", "one", "other", "over", "past",
    "previous", "recently", "saturday", "sep", "sept", "september", "seven",
    "seventeen", "several", "since", "six", "sixteen", "sunday", "ten", "the", "these",
    "thirteen", "thirty", "this", "three", "thursday", "today", "tomorrow", "tonight",
    "tuesday", "twelve", "twenty", "two", "wednesday", "week", "weekend", "weeks",
    "year", "years", "yesterday",
};

static int en_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int en_starter(const char *w)
{
    return bsearch(&w, en_starters, sizeof en_starters / sizeof *en_starters,
                   sizeof *en_starters, en_cmp) != NULL;
}

/* The first two letters of every starter: bit j of en_pair[i] is set when
 * a starter begins with letters i, j ('a' + i), bit 26 when the letter i
 * alone is one ("a"). Most word starts of a message fail it, and then
 * en_match need not lex the word (a memset and a copy) nor search the
 * list: 15% of `cairn add`'s CPU was this scan, two thirds of it in
 * en_match. A filter only: en_starter decides. */
static uint32_t en_pair[26];
static pthread_once_t en_pair_once = PTHREAD_ONCE_INIT;

static void en_pair_build(void)
{
    for (size_t k = 0; k < sizeof en_starters / sizeof *en_starters; k++) {
        const char *w = en_starters[k];
        unsigned b = w[1] ? (unsigned)(w[1] - 'a') : 26;
        en_pair[w[0] - 'a'] |= 1u << b;
    }
}

/* Both English filters (en_pair_may, en_lead_refused) on; test_timeexpr
 * compares the scan with and without them on random text of the rules'
 * words, the commonest words and the separators te_lex reads. */
static int en_filter = 1;

void timeexpr_en_filter(int on)
{
    en_filter = on;
}

/* 0 if no starter can begin with the letters at p (p at a letter). */
static int en_pair_may(const struct te_ctx *c, size_t p)
{
    pthread_once(&en_pair_once, en_pair_build);
    unsigned a = te_at(c, p) | 0x20, b = te_at(c, p + 1);
    unsigned j = te_alpha((unsigned char)b) ? (b | 0x20) - 'a' : 26;
    return (en_pair[a - 'a'] >> j) & 1;
}

/* Where the word after a token ending at e starts when te_lex would read
 * it as the next TK_WORD joined by a plain space (no comma or hyphen, 1 to
 * TE_MAX_WS blanks, letters not followed by a digit), else 0. */
static size_t te_next_word(const struct te_ctx *c, size_t e)
{
    size_t q = e, ws = 0;
    unsigned char ch = te_at(c, q);
    while (ws < TE_MAX_WS && (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')) {
        ch = te_at(c, ++q);
        ws++;
    }
    if (!ws || !te_alpha(ch))
        return 0;
    size_t w = q;
    while (te_alpha(te_at(c, w)))
        w++;
    return te_digit(te_at(c, w)) ? 0 : q;
}

/* 1 when en_match below would refuse a word that only leads ("the", "a",
 * "an", a preposition: t0) because the word after it (after "the" too,
 * behind a preposition) starts no rule: decided by the pair filter
 * before lexing three tokens for it. These are the commonest words of
 * any text; 0 means only "not decided here". */
static int en_lead_refused(const struct te_ctx *c, const struct te_tok *t0)
{
    static const char *const leads[] = {
        "the", "a", "an", "in", "on", "over", "during", "since", "from", "for", "at", NULL
    };
    int k = 0;
    while (leads[k] && strcmp(t0->w, leads[k]))
        k++;
    if (!leads[k])
        return 0;
    size_t q = te_next_word(c, t0->e);
    if (!q)
        return 0;
    if (k >= 3 && (te_at(c, q) | 0x20) == 't' && (te_at(c, q + 1) | 0x20) == 'h' &&
        (te_at(c, q + 2) | 0x20) == 'e' && !te_alpha(te_at(c, q + 3))) {
        size_t q2 = te_next_word(c, q + 3);   /* a preposition, "the", then? */
        return q2 && !en_pair_may(c, q2);
    }
    return !en_pair_may(c, q);
}

/* English at a word start p; returns the end of the expression or 0. */
static size_t en_match(const struct te_ctx *c, size_t p, struct te_hit *r)
{
    struct te_tok t0;
    if (en_filter && te_alpha(te_at(c, p)) && !en_pair_may(c, p))
        return 0;   /* the word there is no starter (en_starter below) */
    if (!te_lex_one(c, p, &t0))
        return 0;   /* te_lex would read no token either */
    if (t0.kind == TK_WORD && (!en_starter(t0.w) || (en_filter && en_lead_refused(c, &t0))))
        return 0;
    static const char *const preps[] = {
        "in", "on", "over", "during", "since", "from", "for", "at", NULL
    };
    struct te_tok t[TE_MAXTOK];
    /* three tokens tell where the rules start (after "on the"), and the
     * word there must be one a rule begins with; only then all of them */
    int nt = te_lex(c, p, t, 3);
    int i = 0, prep = 0, the = 0;
    if (nt == 0)
        return 0;
    for (int j = 0; nt > 1 && preps[j] && !prep; j++)
        if (tw(t, nt, 0, preps[j]) && t[1].sep == SEP_SPACE) {
            prep = j + 1;
            i = 1;
        }
    if (i + 1 < nt && tw(t, nt, i, "the") && t[i + 1].sep == SEP_SPACE) {
        the = 1;
        i++;
    }
    if (i > 0 && t[i].kind == TK_WORD && !en_starter(t[i].w))
        return 0;
    /* "a"/"an" begins only "a week ago", "a few days ago", "a couple of" */
    if (i == 0 && (tw(t, nt, 0, "a") || tw(t, nt, 0, "an")) &&
        !(nt > 1 && t[1].kind == TK_WORD && en_starter(t[1].w)))
        return 0;
    nt = te_lex(c, p, t, TE_MAXTOK);
    int k = en_core(c, t + i, nt - i, prep, the, r);
    if (k <= 0)
        return 0;
    return t[i + k - 1].e;
}

/* ---------------------------------------------------------- Chinese rules */

/* q[p..] starts with s: returns p + strlen(s), else 0. */
static size_t zl(const struct te_ctx *c, size_t p, const char *s)
{
    size_t k = strlen(s);
    if (p > c->n || c->n - p < k || memcmp(c->q + p, s, k) != 0)
        return 0;
    return p + k;
}

/* The first of a NULL-terminated list that matches at p (list longer
 * strings first). *which gets its index. */
static size_t zl_any(const struct te_ctx *c, size_t p, const char *const *l, int *which)
{
    for (int i = 0; l[i]; i++) {
        size_t e = zl(c, p, l[i]);
        if (e) {
            if (which)
                *which = i;
            return e;
        }
    }
    return 0;
}

static const char *const zh_digit[] = {
    "零", "一", "二", "三", "四", "五", "六", "七", "八", "九", NULL
};

static int zh_is_numeral_before(const struct te_ctx *c, size_t p)
{
    /* Every CJK numeral is 3 bytes in UTF-8. */
    if (p >= 1 && te_digit(te_at(c, p - 1)))
        return 1;
    if (p < 3)
        return 0;
    for (int i = 0; zh_digit[i]; i++)
        if (zl(c, p - 3, zh_digit[i]))
            return 1;
    return zl(c, p - 3, "十") || zl(c, p - 3, "两");
}

/* A count at p: ASCII or full-width digits (up to 4), or Chinese numerals
 * up to 99 (十, 十二, 二十三, 两); 几 ("a few") = 3 when allow_ji. */
static size_t zh_num(const struct te_ctx *c, size_t p, long *v, int allow_ji)
{
    size_t e;
    int d, k;
    if (zh_is_numeral_before(c, p))
        return 0;
    if (te_digit(te_at(c, p))) {
        k = te_digits(c, p, 4, v);
        return k ? p + (size_t)k : 0;
    }
    /* full-width digits U+FF10..FF19: EF BC 90..99 */
    if (te_at(c, p) == 0xEF && te_at(c, p + 1) == 0xBC &&
        te_at(c, p + 2) >= 0x90 && te_at(c, p + 2) <= 0x99) {
        long x = 0;
        for (k = 0; k < 4 && te_at(c, p) == 0xEF && te_at(c, p + 1) == 0xBC &&
                    te_at(c, p + 2) >= 0x90 && te_at(c, p + 2) <= 0x99; k++) {
            x = x * 10 + (te_at(c, p + 2) - 0x90);
            p += 3;
        }
        *v = x;
        return p;
    }
    if (allow_ji && (e = zl(c, p, "几")) != 0) {
        *v = 3;
        return e;
    }
    if ((e = zl(c, p, "两")) != 0) {
        *v = 2;
        return e;
    }
    long x = 0;
    if ((e = zl_any(c, p, zh_digit + 1, &d)) != 0) {
        x = d + 1;
        p = e;
        if (!(e = zl(c, p, "十"))) {
            *v = x;
            return p;
        }
        x *= 10;
        p = e;
    } else if ((e = zl(c, p, "十")) != 0) {
        x = 10;
        p = e;
    } else {
        return 0;
    }
    if ((e = zl_any(c, p, zh_digit + 1, &d)) != 0) {
        x += d + 1;
        p = e;
    }
    *v = x;
    return p;
}

/* Weekday character after 周/星期/礼拜: 一..六, 日, 天. 一 followed by
 * 起/些/下/... is "together", "some", "once" etc., not Monday. */
static size_t zh_wdchar(const struct te_ctx *c, size_t p, int *x)
{
    static const char *const wd[] = { "一", "二", "三", "四", "五", "六", "日", "天", NULL };
    static const char *const not_mon[] = {
        "起", "些", "下", "直", "共", "样", "般", "切", "点", "会", "个", "次",
        "遍", "边", "同", "定", "天", "周", "年", "月", NULL
    };
    int i;
    size_t e = zl_any(c, p, wd, &i);
    if (!e)
        return 0;
    if (i == 0 && zl_any(c, e, not_mon, NULL))
        return 0;
    *x = i < 7 ? i : 6;
    return e;
}

static const char *const zh_weekword[] = {
    "个星期", "个礼拜", "个周", "星期", "礼拜", "周", NULL
};

/* month [份] [day 日|号] at p, for year y (0 = most recent). */
static size_t zh_month_day(const struct te_ctx *c, size_t p, int y, struct te_hit *r)
{
    long m, d;
    size_t e = zh_num(c, p, &m, 0), e2;
    if (!e || m < 1 || m > 12 || !(e = zl(c, e, "月")))
        return 0;
    if ((e2 = zl(c, e, "份")) != 0)
        e = e2;
    else if ((e2 = zh_num(c, e, &d, 0)) != 0 && d >= 1 && d <= 31) {
        size_t e3 = zl(c, e2, "日");
        if (!e3)
            e3 = zl(c, e2, "号");
        if (!e3)
            e3 = zl(c, e2, "號");
        if (e3)
            return te_month_day(c, r, (int)m, (int)d, y, TE_BARE, 0) ? e3 : 0;
    }
    return te_month_day(c, r, (int)m, 0, y, TE_BARE, 0) ? e : 0;
}

static size_t zh_match(const struct te_ctx *c, size_t p, struct te_hit *r)
{
    static const char *const last_night[] = { "昨天晚上", "昨晚", "昨夜", NULL };
    static const char *const morning[] = {
        "今天早上", "今天上午", "今天早晨", "今早", "今晨", NULL
    };
    static const char *const tonight[] = { "今天晚上", "今晚", NULL };
    static const char *const this_w[] = { "这", "本", NULL };
    static const char *const this_month[] = { "这个月", "本月", "这月", NULL };
    static const char *const recent_w[] = { "最近", "过去", "近", "这", NULL };
    static const char *const since_w[] = { "以来", "里", "内", NULL };
    static const char *const ago_w[] = { "以前", "之前", "前", NULL };
    static const char *const unit_w[] = {
        "天", "日", "个星期", "星期", "个礼拜", "礼拜", "周", "个月", "年", NULL
    };
    static const int unit_v[] = {
        TE_DAY, TE_DAY, TE_WEEK, TE_WEEK, TE_WEEK, TE_WEEK, TE_WEEK, TE_MONTH, TE_YEAR
    };
    size_t e, e2;
    long v;
    int i, x, yr = 0;

    /* year first: 2023年 [3月 [5日]], 去年, 今年, 前年 */
    if ((e = zl(c, p, "去年")) != 0)
        yr = c->y - 1;
    else if ((e = zl(c, p, "今年")) != 0)
        yr = c->y;
    else if ((e = zl(c, p, "前年")) != 0)
        yr = c->y - 2;
    else if (te_digit(te_at(c, p)) && (p == 0 || !te_digit(te_at(c, p - 1))) &&
             te_digits(c, p, 4, &v) == 4 && (e = zl(c, p + 4, "年")) != 0) {
        if (v < 1970 || v > 2099)
            return 0;
        yr = (int)v;
    }
    if (yr) {
        size_t m0 = e;
        if ((e2 = zl(c, m0, "的")) != 0)
            m0 = e2;
        if ((e2 = zh_month_day(c, m0, yr, r)) != 0)
            return e2;
        te_year(r, yr);
        return e;
    }
    if ((e = zl(c, p, "大前天")) != 0) {
        te_days(c, r, -3, -2);
        return e;
    }
    if ((e = zl(c, p, "前几天")) != 0) {
        te_days(c, r, -7, 0);   /* like "the other day" */
        return e;
    }
    if ((e = zl(c, p, "前天")) != 0) {
        te_days(c, r, -2, -1);
        return e;
    }
    if ((e = zl_any(c, p, last_night, NULL)) != 0) {
        te_hours(c, r, -1, 18, 0, 6);
        return e;
    }
    if ((e = zl(c, p, "昨天")) != 0 || (e = zl(c, p, "昨日")) != 0) {
        te_days(c, r, -1, 0);
        return e;
    }
    if ((e = zl_any(c, p, morning, NULL)) != 0) {
        te_hours(c, r, 0, 0, 0, 12);
        return e;
    }
    if ((e = zl(c, p, "今天下午")) != 0) {
        te_hours(c, r, 0, 12, 0, 18);
        return e;
    }
    if ((e = zl_any(c, p, tonight, NULL)) != 0) {
        te_hours(c, r, 0, 18, 1, 0);
        return e;
    }
    if ((e = zl(c, p, "今天")) != 0 || (e = zl(c, p, "今日")) != 0) {
        te_days(c, r, 0, 1);
        return e;
    }
    if ((e = zl(c, p, "明天")) != 0) {
        te_days(c, r, 1, 2);
        return e;
    }
    /* 上上周, 上上个月 */
    if ((e = zl(c, p, "上上")) != 0) {
        if ((e2 = zl_any(c, e, zh_weekword, NULL)) != 0) {
            te_week(c, r, -2);
            return e2;
        }
        if ((e2 = zl(c, e, "个月")) != 0) {
            te_month(r, c->y, c->m - 2);
            return e2;
        }
    }
    /* 上周, 上周末, 上周二, 上个月; not the 上 of 早上/晚上/马上 */
    if ((e = zl(c, p, "上")) != 0 && !(p >= 3 && (zl(c, p - 3, "早") ||
                                                 zl(c, p - 3, "晚") || zl(c, p - 3, "马")))) {
        if ((e2 = zl_any(c, e, zh_weekword, NULL)) != 0) {
            size_t e3;
            if ((e3 = zl(c, e2, "末")) != 0) {
                te_weekend(c, r, 1);
                return e3;
            }
            if ((e3 = zh_wdchar(c, e2, &x)) != 0) {
                int mon = c->d - c->wd - 7 + x;
                r->from = te_mk(c->y, c->m, mon, 0);
                r->to = te_mk(c->y, c->m, mon + 1, 0);
                return e3;
            }
            if (zl(c, e, "个周"))
                return 0;   /* 上个周 only as 上个周末 */
            te_week(c, r, -1);
            return e2;
        }
        if ((e2 = zl(c, e, "个月")) != 0 || (e2 = zl(c, e, "月")) != 0) {
            te_month(r, c->y, c->m - 1);
            return e2;
        }
    }
    if ((e = zl_any(c, p, this_month, NULL)) != 0) {
        te_month(r, c->y, c->m);
        return e;
    }
    /* 这周, 本周, 这周末, 这周二 */
    if ((e = zl_any(c, p, this_w, NULL)) != 0 &&
        (e2 = zl_any(c, e, zh_weekword, NULL)) != 0) {
        size_t e3;
        if ((e3 = zl(c, e2, "末")) != 0) {
            te_weekend(c, r, 0);
            return e3;
        }
        if ((e3 = zh_wdchar(c, e2, &x)) != 0) {
            te_weekday(c, r, x, TE_THIS);
            return e3;
        }
        if (!zl(c, e, "个周")) {
            te_week(c, r, 0);
            return e2;
        }
    }
    if ((e = zl(c, p, "周末")) != 0) {
        te_weekend(c, r, 0);
        return e;
    }
    /* 周二, 星期二, 礼拜天 */
    if ((e = zl(c, p, "周")) != 0 || (e = zl(c, p, "星期")) != 0 ||
        (e = zl(c, p, "礼拜")) != 0) {
        if ((e2 = zh_wdchar(c, e, &x)) != 0) {
            te_weekday(c, r, x, TE_BARE);
            return e2;
        }
    }
    /* 最近三天, 过去两周, 这几天 (rolling) */
    if ((e = zl_any(c, p, recent_w, NULL)) != 0) {
        size_t n0 = e;
        if ((e2 = zl(c, n0, "的")) != 0)
            n0 = e2;
        if ((e2 = zh_num(c, n0, &v, 1)) != 0 && v >= 1 &&
            (e2 = zl_any(c, e2, unit_w, &i)) != 0) {
            if (!te_rolling(c, r, unit_v[i], v))
                return 0;
            if ((e = zl_any(c, e2, since_w, NULL)) != 0)
                e2 = e;
            return e2;
        }
    }
    if ((e = zl(c, p, "最近一段时间")) != 0 || (e = zl(c, p, "最近")) != 0 ||
        (e = zl(c, p, "近期")) != 0) {
        te_rolling(c, r, TE_DAY, 14);
        r->vague = 1;
        return e;
    }
    /* 三天前, 两个星期前, 3个月之前 */
    if ((e = zh_num(c, p, &v, 1)) != 0 && v >= 1) {
        if ((e2 = zl_any(c, e, unit_w, &i)) != 0 &&
            (e2 = zl_any(c, e2, ago_w, NULL)) != 0)
            return te_ago(c, r, unit_v[i], v) ? e2 : 0;
        if ((e2 = zh_month_day(c, p, 0, r)) != 0)
            return e2;
    }
    return 0;
}

/* 1 if zh_match could match at p; 0 when it cannot, decided cheaply. The
 * scan asks zh_match at every digit and every non-ASCII character, and
 * each ask tried some forty words: a quarter of `cairn add`'s time on
 * English text with numbers in it. Every rule of zh_match begins with one
 * of the words it names or a count read by zh_num, so its first character
 * is one of zh_first (or a full-width digit); and a count in ASCII digits
 * is 1 to 4 digits not after a digit, followed by a CJK character (年, a
 * unit, 月). A rule added to zh_match with a new first character adds it
 * here; test_timeexpr compares the scan with and without this filter on
 * random text made of every character the rules name. */
static int zh_filter = 1;

void timeexpr_zh_filter(int on)
{
    zh_filter = on;
}

static int zh_may_start(const struct te_ctx *c, size_t p)
{
    static const uint32_t zh_first[] = {   /* sorted */
        0x4E00 /* 一 */, 0x4E03 /* 七 */, 0x4E09 /* 三 */, 0x4E0A /* 上 */,
        0x4E24 /* 两 */, 0x4E5D /* 九 */, 0x4E8C /* 二 */, 0x4E94 /* 五 */,
        0x4ECA /* 今 */, 0x516B /* 八 */, 0x516D /* 六 */, 0x51E0 /* 几 */,
        0x524D /* 前 */, 0x5341 /* 十 */, 0x53BB /* 去 */, 0x5468 /* 周 */,
        0x56DB /* 四 */, 0x5927 /* 大 */, 0x660E /* 明 */, 0x661F /* 星 */,
        0x6628 /* 昨 */, 0x6700 /* 最 */, 0x672C /* 本 */, 0x793C /* 礼 */,
        0x8FC7 /* 过 */, 0x8FD1 /* 近 */, 0x8FD9 /* 这 */,
    };
    unsigned char ch = te_at(c, p);
    if (!zh_filter)
        return 1;
    if (te_digit(ch)) {
        size_t k = 0;
        if (p > 0 && te_digit(te_at(c, p - 1)))
            return 0;
        while (k < 5 && te_digit(te_at(c, p + k)))
            k++;
        return k <= 4 && te_at(c, p + k) >= 0x80;
    }
    uint32_t cp;
    utf8_decode(c->q + p, c->n - p, &cp);
    if (cp >= 0xFF10 && cp <= 0xFF19)
        return 1;
    for (size_t lo = 0, hi = sizeof zh_first / sizeof *zh_first; lo < hi;) {
        size_t mid = (lo + hi) / 2;
        if (zh_first[mid] == cp)
            return 1;
        if (zh_first[mid] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* ------------------------------------------------------------- scanning */

/* The first expression starting in [from, upto); 1 with *s, *e set, or 0. */
static int te_find_upto(const struct te_ctx *c, size_t from, size_t upto, struct te_hit *r,
                        size_t *s, size_t *e)
{
    size_t p = from;
    while (p < c->n && p < upto) {
        unsigned char ch = te_at(c, p);
        size_t end = 0;
        r->vague = 0;
        if ((ch >= 0x80 || te_digit(ch)) && zh_may_start(c, p))
            end = zh_match(c, p, r);
        if (!end && te_alnum(ch) && (p == 0 || !te_alnum(te_at(c, p - 1))))
            end = en_match(c, p, r);
        if (end) {
            *s = p;
            *e = end;
            return 1;
        }
        if (ch < 0x80) {
            p++;
        } else {
            uint32_t cp;
            p += utf8_decode(c->q + p, c->n - p, &cp);
        }
    }
    return 0;
}

/* The first expression at or after `from`. */
static int te_find(const struct te_ctx *c, size_t from, struct te_hit *r,
                   size_t *s, size_t *e)
{
    return te_find_upto(c, from, c->n, r, s, e);
}

/* q[a..b) is blank, or a word of ws surrounded by blanks; 1 if so. */
static int te_joined_by(const struct te_ctx *c, size_t a, size_t b, const char *const *ws)
{
    while (a < b && (te_at(c, a) == ' ' || te_at(c, a) == '\t'))
        a++;
    while (b > a && (te_at(c, b - 1) == ' ' || te_at(c, b - 1) == '\t'))
        b--;
    if (b - a > TE_MAX_WS)
        return 0;
    for (int i = 0; ws[i]; i++) {
        size_t k = strlen(ws[i]);
        if (k != b - a)
            continue;
        size_t j = 0;
        while (j < k && (te_at(c, a + j) | 0x20) == ws[i][j])
            j++;
        if (j == k)
            return 1;
    }
    return 0;
}

/* The first expression at or after `from`, as te_find, where "between A
 * and B", "(from) A to B", "A - B" and "A until B" become one range from
 * A's start to B's end ("between August 11 and August 15": 11..16 Aug). */
static int te_find_span(const struct te_ctx *c, size_t from, struct te_hit *r,
                        size_t *s, size_t *e)
{
    static const char *const open_w[] = { "between", NULL };
    static const char *const and_w[] = { "and", NULL };
    static const char *const to_w[] = { "to", "until", "till", "through", "-", NULL };
    struct te_hit r2;
    size_t s2, e2;
    if (!te_find(c, from, r, s, e))
        return 0;
    /* "between" before the first asks for "and"; otherwise a date right
     * after it joined by "to", "until", "-" ("from" needs no check) */
    size_t w = *s;
    int between = 0;
    while (w > 0 && te_at(c, w - 1) == ' ')
        w--;
    if (w >= 7 && te_joined_by(c, w - 7, w, open_w) && (w == 7 || !te_alnum(te_at(c, w - 8))))
        between = 1;
    /* the second starts within a joining word and blanks of the first's
     * end: a bounded look, so a scan of a long text stays linear */
    if (!te_find_upto(c, *e, *e + 2 * TE_MAX_WS + 8, &r2, &s2, &e2) || r2.vague || r->vague ||
        r2.to <= r->from ||
        !te_joined_by(c, *e, s2, between ? and_w : to_w))
        return 1;
    r->to = r2.to;
    *e = e2;
    return 1;
}

/* --------------------------------------------------------- only_time */

/* Words that carry no topic in "what did we talk about last week?". */
static const char *const en_stop[] = {
    "a", "about", "across", "again", "all", "also", "am", "an", "and", "any",
    "anything", "are", "as", "at", "back", "be", "been", "being", "busy", "by",
    "can", "chat", "chats", "chatted", "chatting", "conversation",
    "conversations", "could", "cover", "covered", "d", "did", "didn", "discuss",
    "discussed", "discussing", "discussion", "discussions", "do", "does",
    "doing", "done", "during", "earlier", "else", "ever", "everything",
    "evening", "for", "from", "get", "give", "go", "going", "got", "had",
    "happen", "happened", "happening", "happens", "has", "have", "having",
    "hey", "hi", "i", "in", "is", "it", "just", "let", "list", "ll", "m", "me",
    "mention", "mentioned", "morning", "afternoon", "night", "my", "of", "on",
    "or", "our", "over", "please", "re", "recap", "remember", "remind", "s",
    "said", "say", "saying", "show", "so", "some", "something", "spend",
    "spent", "stuff", "summarise", "summarize", "summary", "t", "talk",
    "talked", "talking", "tell", "that", "the", "there", "these", "thing",
    "things", "this", "those", "time", "to", "topics", "up", "us", "ve", "was",
    "we", "went", "were", "what", "whats", "with", "work", "worked", "working",
    "would", "you", "your", NULL
};

/* Chinese function words and generic verbs, longer first where one is a
 * prefix of another. */
static const char *const zh_stop[] = {
    "我们", "我", "你们", "你", "咱们", "咱", "大家", "都", "做了", "做",
    "干了", "干嘛", "干", "聊天", "聊了", "聊", "说了", "说过", "说", "讨论了",
    "讨论", "谈论", "谈了", "谈", "发生了", "发生", "工作", "忙了", "忙", "了",
    "什么", "啥", "哪些", "些", "事情", "事", "吗", "呢", "吧", "啊", "过",
    "的", "在", "有", "一下", "一些", "关于", "和", "跟", "是", "么", "时候",
    "期间", "那", "这", "请", "帮我", "帮", "告诉", "回顾", "总结", "看看",
    "一起", "内容", "话题", "里", "中", "早上", "晚上", "上午", "下午", "所有",
    "记得", "还", "提到", "提过", "东西", NULL
};

static int en_is_stop(const char *w, size_t k)
{
    for (int i = 0; en_stop[i]; i++)
        if (strlen(en_stop[i]) == k && memcmp(en_stop[i], w, k) == 0)
            return 1;
    return 0;
}

/* 1 if q[a..b) holds a word, number or CJK character that is not a stop
 * word: the question is about something besides the period. */
static int te_has_content(const struct te_ctx *c, size_t a, size_t b)
{
    size_t p = a;
    while (p < b) {
        unsigned char ch = te_at(c, p);
        if (te_alpha(ch)) {
            char w[24];
            size_t k = 0;
            while (p < b && (te_alpha(te_at(c, p)) || te_digit(te_at(c, p)))) {
                unsigned char x = te_at(c, p);
                if (k < sizeof w)
                    w[k] = (char)(x >= 'A' && x <= 'Z' ? x + 32 : x);
                k++;
                p++;
            }
            if (k > sizeof w || !en_is_stop(w, k))
                return 1;
            continue;
        }
        if (te_digit(ch))
            return 1;
        if (ch < 0x80) {
            p++;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_decode(c->q + p, b - p, &cp);
        int cjk = (cp >= 0x3400 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                  (cp >= 0x20000 && cp <= 0x3FFFF);
        if ((cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0xAC00 && cp <= 0xD7AF))
            return 1;   /* kana, hangul */
        if (cjk) {
            struct te_ctx sub = *c;
            size_t e;
            sub.n = b;   /* a stop word must not run past the segment */
            if ((e = zl_any(&sub, p, zh_stop, NULL)) != 0) {
                p = e;
                continue;
            }
            return 1;
        }
        /* Punctuation, symbols, spaces, U+FFFD: no content. Letters and
         * digits of other scripts are content. */
        if ((cp >= 0xFF10 && cp <= 0xFF19) || (cp >= 0xFF21 && cp <= 0xFF3A) ||
            (cp >= 0xFF41 && cp <= 0xFF5A) || (cp >= 0xC0 && cp < 0x2000 && cp != 0xD7 &&
                                               cp != 0xF7))
            return 1;
        p += len;
    }
    return 0;
}

/* ------------------------------------------------------------- entry */

/* Today as seen at `now`; 0 when the time is out of the calendar's range. */
static int te_init(struct te_ctx *c, const char *q, size_t n, int64_t now)
{
    struct tm tm;
    time_t t = (time_t)now;
    if (!q || !localtime_r(&t, &tm))
        return 0;
    c->q = q;
    c->n = n;
    c->y = tm.tm_year + 1900;
    c->m = tm.tm_mon + 1;
    c->d = tm.tm_mday;
    c->wd = (tm.tm_wday + 6) % 7;
    return c->y >= 1900 && c->y <= 9000;
}

int timeexpr_parse(const char *q, size_t n, int64_t now, struct time_range *out)
{
    struct te_ctx c;
    struct te_hit r;
    size_t s, e;

    if (!out)
        return 0;
    memset(out, 0, sizeof *out);
    if (!te_init(&c, q, n, now))
        return 0;

    if (!te_find_span(&c, 0, &r, &s, &e))
        return 0;
    size_t s0 = s, e0 = e;   /* the first, where only_time starts */
    /* a vague word and a date: the date bounds it ("what did she start
     * recently, as mentioned on 3 June?") */
    for (size_t p0 = e; r.vague && p0 < n;) {
        struct te_hit r2;
        size_t s2, e2;
        if (!te_find_span(&c, p0, &r2, &s2, &e2))
            break;
        if (!r2.vague) {
            out->vstart = s;
            out->vend = e;
            r = r2;
            s = s2;
            e = e2;
        }
        p0 = e2;
    }
    out->from = r.from;
    out->to = r.to;
    out->vague = r.vague;
    out->start = s;
    out->end = e;

    /* only_time: take out every expression, see what is left. */
    int content = te_has_content(&c, 0, s0);
    size_t p = e0;
    while (!content) {
        struct te_hit r2;
        size_t s2, e2;
        if (!te_find(&c, p, &r2, &s2, &e2)) {
            content = te_has_content(&c, p, n);
            break;
        }
        content = te_has_content(&c, p, s2);
        p = e2;
    }
    out->only_time = !content;
    return 1;
}

int timeexpr_scan(const char *text, size_t n, int64_t at, struct time_range *out, int max)
{
    struct te_ctx c;
    struct te_hit r;
    size_t s, e, p = 0;
    int k = 0;

    if (!out || max <= 0)
        return 0;
    if (n > TIMEEXPR_SCAN_BYTES)
        n = TIMEEXPR_SCAN_BYTES;
    if (!te_init(&c, text, n, at))
        return 0;
    while (k < max && p < n && te_find_span(&c, p, &r, &s, &e)) {
        memset(&out[k], 0, sizeof out[k]);
        out[k].from = r.from;
        out[k].to = r.to;
        out[k].vague = r.vague;
        out[k].start = s;
        out[k].end = e;
        k++;
        p = e > p ? e : p + 1;   /* every match moves on: the scan stays linear */
    }
    return k;
}
