/*
 * timeutil.h: ISO 8601 dates in and out, and the session stamps of a
 * pack. The library's own callers and the public cairn_parse_time /
 * cairn_format_time (api.c) share these, so util stays free of the
 * public header.
 */
#ifndef CAIRN_UTIL_TIMEUTIL_H
#define CAIRN_UTIL_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>

/* "No time": the same value as CAIRN_NO_TIME (api.c checks). */
#define ISO8601_NONE INT64_MIN

/* Parses an ISO 8601 date or date-time ("2023-05-08", "2023-05-08T13:56",
 * "2023-05-08 13:56:00.123+02:00", "...Z") into Unix seconds; without a
 * zone the time is local. 0, or -1 when s is not one. */
int iso8601_parse(const char *s, int64_t *out);
/* Formats t as local "YYYY-MM-DDTHH:MM:SS" (utc=0) or UTC
 * "YYYY-MM-DDTHH:MM:SSZ" (utc=1) into out (>= 26 bytes); ISO8601_NONE and
 * a time the C library cannot break down give "". */
void iso8601_format(int64_t t, int utc, char *out, size_t n);

/* The locale's abbreviated day names as strftime's "%a" writes them, each
 * read once when first needed (len 0: not read yet; -1: strftime wrote
 * nothing or too much, so stamps of that day go through strftime). Set
 * to zeros before use; valid while the locale stays the same. */
struct stamp_days {
    char name[7][16];
    signed char len[7];
};

/* The name of day w (0 Sunday) as "%a" writes it, read into d if it was
 * not; its length, or 0 when strftime writes nothing or too much. */
size_t stamp_day(struct stamp_days *d, int w);

/* The times whose stamp has a year of four digits in any zone: years
 * 1000-9999 in UTC, less 2^31 seconds at each end (a zone's offset is a
 * 32-bit count of seconds in a TZif file, at most 24:59:59 in a POSIX
 * rule), and where localtime_r cannot fail (it fails only past int's
 * years). */
#define STAMP_YEAR4_LO (-30610224000LL + 2147483648LL)
#define STAMP_YEAR4_HI (253402300800LL - 2147483648LL - 1)

/* strftime(out, 40, "%Y-%m-%d %a %H:%M", localtime(t)) and its return (0
 * when localtime fails or the stamp does not fit): a pack costs the
 * header of every session it weighs (issue 23, exact33: strftime was 31 M
 * of a million-message recall's 1,165 M instructions). The fields are
 * written by hand for years 1000-9999, the day's name from d; any other
 * year through strftime itself. out holds >= 40 bytes. */
size_t time_stamp_minute(int64_t t, struct stamp_days *d, char *out);

#endif
