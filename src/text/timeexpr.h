/*
 * timeexpr.h: time expressions in questions, English and Chinese, to a
 * date range relative to "now".
 *
 * "yesterday", "last week", "two weeks ago", "in March", "last month",
 * "on Tuesday", "over the weekend", "3 days ago", "this year", "2023";
 * "next week", "next Friday";
 * 昨天, 前天, 上周, 上个月, 三月份, 两周前, 去年, 周末, 5月2日. Weeks start
 * on Monday. Calendar arithmetic is in local time (TZ).
 */
#ifndef CAIRN_TIMEEXPR_H
#define CAIRN_TIMEEXPR_H

#include <stddef.h>
#include <stdint.h>

struct time_range {
    int64_t from;      /* Unix seconds, inclusive */
    int64_t to;        /* Unix seconds, exclusive */
    int     only_time; /* 1: the question only asks about the period
                          ("what did I do yesterday?", "上周我做了什么") */
    int     vague;     /* 1: "recently", "lately", "these days", 最近: a
                          leaning towards the recent past, not a period */
    size_t  start, end;/* byte span of the expression in the question */
    size_t  vstart, vend; /* a vague word before it that it replaced
                          ("recently, on 3 June"), else 0, 0 */
};

/* Finds the first time expression in q[0..n) and fills *out. Returns 1 if
 * one was found, 0 if none. `now` is Unix seconds. */
int timeexpr_parse(const char *q, size_t n, int64_t now, struct time_range *out);

/* Every time expression in text[0..n), each read against `at` (the time
 * the text was written: "yesterday" in a message of 5 Dec is 4 Dec), in
 * order, at most `max` of them, from the first TIMEEXPR_SCAN_BYTES bytes
 * only (a pasted log is not a diary). Fills out[] (only_time is not set)
 * and returns how many. Cost: linear in min(n, TIMEEXPR_SCAN_BYTES). */
#define TIMEEXPR_SCAN_BYTES 65536
int timeexpr_scan(const char *text, size_t n, int64_t at, struct time_range *out, int max);

/* For tests: 0 turns off the cheap refusal of places no Chinese rule can
 * start at (the results must be the same either way); 1, the default, on.
 * Not thread-safe. */
void timeexpr_zh_filter(int on);
/* The same for English: the refusal of words no rule begins with, and of
 * "the", "a" or a preposition before such a word. */
void timeexpr_en_filter(int on);

#endif
