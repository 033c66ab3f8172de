/*
 * timeutil.c: ISO 8601 dates in and out (iso8601_parse, iso8601_format;
 * the public cairn_parse_time and cairn_format_time in api.c call them).
 * Without a zone a time is local, as a person writing "2023-05-08 13:56"
 * means it; with Z or +HH:MM it is exact. And a packed session header's
 * time (time_stamp_minute), strftime's bytes without strftime.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "util/timeutil.h"

static int digits(const char **s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*s)[i]))
            return 0;
        v = v * 10 + ((*s)[i] - '0');
    }
    *s += n;
    *out = v;
    return 1;
}

static int64_t days_from_civil(int y, int m, int d)
{
    /* Howard Hinnant's algorithm: days since 1970-01-01, proleptic
     * Gregorian, without timegm (not in C11). */
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int iso8601_parse(const char *s, int64_t *out)
{
    int y, mo, d, h = 0, mi = 0, sec = 0;
    if (!s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (!digits(&s, 4, &y) || *s++ != '-' || !digits(&s, 2, &mo) || *s++ != '-' ||
        !digits(&s, 2, &d))
        return -1;
    static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap))
        return -1;
    if (*s == 'T' || *s == 't' || (*s == ' ' && isdigit((unsigned char)s[1]))) {
        s++;
        if (!digits(&s, 2, &h) || *s++ != ':' || !digits(&s, 2, &mi))
            return -1;
        if (*s == ':') {
            s++;
            if (!digits(&s, 2, &sec))
                return -1;
            if (*s == '.' || *s == ',') {
                s++;
                if (!isdigit((unsigned char)*s))
                    return -1;
                while (isdigit((unsigned char)*s))
                    s++;
            }
        }
        if (h > 24 || mi > 59 || sec > 60)
            return -1;
    }
    int zone = 0, has_zone = 0;
    if (*s == 'Z' || *s == 'z') {
        has_zone = 1;
        s++;
    } else if ((*s == '+' || *s == '-') && isdigit((unsigned char)s[1])) {
        int sign = *s++ == '-' ? -1 : 1, zh, zm = 0;
        if (!digits(&s, 2, &zh))
            return -1;
        if (*s == ':')
            s++;
        if (isdigit((unsigned char)*s) && !digits(&s, 2, &zm))
            return -1;
        zone = sign * (zh * 3600 + zm * 60);
        has_zone = 1;
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s)
        return -1;
    if (has_zone) {
        *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - zone;
        return 0;
    }
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    tm.tm_isdst = -1;
    time_t t = mktime(&tm);
    if (t == (time_t)-1 && !(y == 1969 && mo == 12 && d == 31))
        return -1;
    *out = (int64_t)t;
    return 0;
}

void iso8601_format(int64_t t, int utc, char *out, size_t n)
{
    struct tm tm;
    time_t tt = (time_t)t;
    if (n == 0)
        return;
    if (t == ISO8601_NONE) {
        out[0] = '\0';
        return;
    }
    if (utc ? !gmtime_r(&tt, &tm) : !localtime_r(&tt, &tm)) {
        out[0] = '\0';
        return;
    }
    strftime(out, n, utc ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%dT%H:%M:%S", &tm);
}

/* The reference for time_stamp_minute: what it writes is this, byte for
 * byte (test_util compares them across years and zones). */
static size_t stamp_strftime(const struct tm *tm, char *out)
{
    return strftime(out, 40, "%Y-%m-%d %a %H:%M", tm);
}

static char *two(char *o, int v)
{
    o[0] = (char)('0' + v / 10);
    o[1] = (char)('0' + v % 10);
    return o + 2;
}

size_t stamp_day(struct stamp_days *d, int w)
{
    if (w < 0 || w > 6)
        return 0;
    if (d->len[w] == 0) {
        /* "%a" reads only tm_wday: the name of the locale in use now */
        struct tm tm = { .tm_wday = w };
        size_t n = strftime(d->name[w], sizeof d->name[w], "%a", &tm);
        d->len[w] = n ? (signed char)n : -1;
    }
    return d->len[w] > 0 ? (size_t)d->len[w] : 0;
}

size_t time_stamp_minute(int64_t t, struct stamp_days *d, char *out)
{
    struct tm tm;
    time_t tt = (time_t)t;
    if (!localtime_r(&tt, &tm))
        return 0;
    int y = tm.tm_year + 1900, w = tm.tm_wday;
    if (y < 1000 || y > 9999 || w < 0 || w > 6)
        return stamp_strftime(&tm, out);
    size_t dn = stamp_day(d, w);
    /* "YYYY-MM-DD " + name + " HH:MM" and the NUL must fit in 40 */
    if (!dn || 11 + dn + 6 + 1 > 40)
        return stamp_strftime(&tm, out);
    char *o = out;
    o = two(o, y / 100);
    o = two(o, y % 100);
    *o++ = '-';
    o = two(o, tm.tm_mon + 1);
    *o++ = '-';
    o = two(o, tm.tm_mday);
    *o++ = ' ';
    memcpy(o, d->name[w], dn);
    o += dn;
    *o++ = ' ';
    o = two(o, tm.tm_hour);
    *o++ = ':';
    o = two(o, tm.tm_min);
    *o = '\0';
    return (size_t)(o - out);
}
