/*
 * timeutil.h: ISO 8601 dates in and out. The library's own callers and
 * the public cairn_parse_time / cairn_format_time (api.c) share these, so
 * util stays free of the public header.
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

#endif
