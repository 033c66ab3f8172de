/*
 * test_timeexpr.c: time expressions (EN/ZH) to local date ranges, spans,
 * the only_time guess, negatives and bad input; "next ...", vague words,
 * and every mention in a message read against its own time (timeexpr_scan). Most checks run with
 * TZ=UTC at fixed "now" values; one group runs under Asia/Shanghai to
 * show the calendar is local. Ranges are compared as text
 * "YYYY-MM-DD[ HH:MM]..YYYY-MM-DD[ HH:MM]" so a failure reads plainly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "t.h"
#include "text/timeexpr.h"

static void set_tz(const char *tz)
{
    setenv("TZ", tz, 1);
    tzset();
}

static int64_t at(int y, int m, int d, int h)
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

static void fmt1(int64_t ts, char *out, size_t n)
{
    time_t t = (time_t)ts;
    struct tm tm;
    if (!localtime_r(&t, &tm)) {
        snprintf(out, n, "?");
        return;
    }
    if (tm.tm_hour || tm.tm_min)
        strftime(out, n, "%Y-%m-%d %H:%M", &tm);
    else
        strftime(out, n, "%Y-%m-%d", &tm);
}

/* The range found in q as "from..to", or "none". */
static const char *range(const char *q, int64_t now)
{
    static char out[80];
    char a[32], b[32];
    struct time_range r;
    if (!timeexpr_parse(q, strlen(q), now, &r))
        return "none";
    fmt1(r.from, a, sizeof a);
    fmt1(r.to, b, sizeof b);
    snprintf(out, sizeof out, "%s..%s", a, b);
    return out;
}

static int only(const char *q, int64_t now)
{
    struct time_range r;
    if (!timeexpr_parse(q, strlen(q), now, &r))
        return -1;
    return r.only_time;
}

/* The matched text. */
static const char *span(const char *q, int64_t now)
{
    static char out[128];
    struct time_range r;
    if (!timeexpr_parse(q, strlen(q), now, &r) || r.end - r.start >= sizeof out)
        return "none";
    memcpy(out, q + r.start, r.end - r.start);
    out[r.end - r.start] = 0;
    return out;
}

#define R(q, now, want) T_EQ_STR(range(q, now), want)

static int64_t WED, SUN, MON, SAT, JAN1, MAR1, MAR1_23, FEB, DEC31, MAR31;

static void init_nows(void)
{
    WED = at(2024, 3, 6, 15);      /* Wednesday, leap year */
    SAT = at(2024, 3, 9, 11);
    SUN = at(2024, 3, 10, 10);
    MON = at(2024, 3, 11, 9);
    JAN1 = at(2024, 1, 1, 12);     /* Monday */
    MAR1 = at(2024, 3, 1, 12);     /* Friday after Feb 29 */
    MAR1_23 = at(2023, 3, 1, 12);  /* Wednesday after Feb 28 */
    FEB = at(2024, 2, 15, 12);     /* Thursday */
    DEC31 = at(2023, 12, 31, 23);  /* Sunday */
    MAR31 = at(2024, 3, 31, 8);
}

static void test_en_days(void)
{
    R("what did I do today?", WED, "2024-03-06..2024-03-07");
    R("what did I do yesterday?", WED, "2024-03-05..2024-03-06");
    R("YESTERDAY", WED, "2024-03-05..2024-03-06");
    R("the day before yesterday", WED, "2024-03-04..2024-03-05");
    R("what about the day before yesterday?", MAR1, "2024-02-28..2024-02-29");
    R("tomorrow", DEC31, "2024-01-01..2024-01-02");
    R("last night", WED, "2024-03-05 18:00..2024-03-06 06:00");
    R("this morning", WED, "2024-03-06..2024-03-06 12:00");
    R("this afternoon", WED, "2024-03-06 12:00..2024-03-06 18:00");
    R("yesterday", MAR1, "2024-02-29..2024-03-01");
    R("yesterday", MAR1_23, "2023-02-28..2023-03-01");
    R("yesterday", JAN1, "2023-12-31..2024-01-01");
    R("yesterday's meeting", WED, "2024-03-05..2024-03-06");
}

static void test_en_ago(void)
{
    R("3 days ago", WED, "2024-03-03..2024-03-04");
    R("three days ago", WED, "2024-03-03..2024-03-04");
    R("a few days ago", WED, "2024-03-03..2024-03-04");
    R("seven days ago", MAR1, "2024-02-23..2024-02-24");
    R("a day ago", MAR1, "2024-02-29..2024-03-01");
    R("a week ago", WED, "2024-02-26..2024-03-04");
    R("two weeks ago", WED, "2024-02-19..2024-02-26");
    R("a couple of weeks ago", WED, "2024-02-19..2024-02-26");
    R("a couple weeks ago", WED, "2024-02-19..2024-02-26");
    R("2 weeks ago", JAN1, "2023-12-18..2023-12-25");
    R("2 months ago", WED, "2024-01-01..2024-02-01");
    R("3 months ago", JAN1, "2023-10-01..2023-11-01");
    R("twelve months ago", WED, "2023-03-01..2023-04-01");
    R("a month ago", MAR1, "2024-02-01..2024-03-01");
    R("a year ago", WED, "2023-01-01..2024-01-01");
    R("a year ago", MAR1_23, "2022-01-01..2023-01-01");
    R("Ten Years Ago", WED, "2014-01-01..2015-01-01");
    R("99999 years ago", WED, "none");
}

static void test_en_weeks_months_years(void)
{
    R("last week", WED, "2024-02-26..2024-03-04");
    R("last week", SUN, "2024-02-26..2024-03-04");
    R("last week", MON, "2024-03-04..2024-03-11");
    R("last week", JAN1, "2023-12-25..2024-01-01");
    R("this week", WED, "2024-03-04..2024-03-11");
    R("this week", SUN, "2024-03-04..2024-03-11");
    R("this week", MON, "2024-03-11..2024-03-18");
    R("this week", DEC31, "2023-12-25..2024-01-01");
    R("the week before last", WED, "2024-02-19..2024-02-26");
    R("the past week", WED, "2024-02-28..2024-03-07");
    R("in the past 3 days", WED, "2024-03-03..2024-03-07");
    R("over the last two weeks", WED, "2024-02-21..2024-03-07");
    R("the last few days", JAN1, "2023-12-29..2024-01-02");
    R("in the last week", WED, "2024-02-28..2024-03-07");
    R("the past month", MAR1, "2024-02-01..2024-03-02");
    R("the past month", MAR31, "2024-02-29..2024-04-01");
    R("recently", WED, "2024-02-21..2024-03-07");
    R("last month", WED, "2024-02-01..2024-03-01");
    R("last month", JAN1, "2023-12-01..2024-01-01");
    R("this month", WED, "2024-03-01..2024-04-01");
    R("this month", DEC31, "2023-12-01..2024-01-01");
    R("last year", WED, "2023-01-01..2024-01-01");
    R("this year", DEC31, "2023-01-01..2024-01-01");
    R("what happened in 2023", WED, "2023-01-01..2024-01-01");
    R("2022 budget", WED, "2022-01-01..2023-01-01");
    R("I have 2000 days left", WED, "none");
}

static void test_en_months(void)
{
    R("in March", WED, "2024-03-01..2024-04-01");
    R("in March", FEB, "2023-03-01..2023-04-01");
    R("March", FEB, "none");                       /* "march" needs context */
    R("in April", WED, "2023-04-01..2023-05-01");
    R("April", WED, "2023-04-01..2023-05-01");
    R("in December", JAN1, "2023-12-01..2024-01-01");
    R("last March", WED, "2023-03-01..2023-04-01");
    R("last March", FEB, "2023-03-01..2023-04-01");
    R("last February", WED, "2024-02-01..2024-03-01");
    R("this March", FEB, "2024-03-01..2024-04-01");
    R("March 2023", WED, "2023-03-01..2023-04-01");
    R("in May", WED, "2023-05-01..2023-06-01");
    R("last May", WED, "2023-05-01..2023-06-01");
    R("May 2023", WED, "2023-05-01..2023-06-01");
    R("in early March", WED, "2024-03-01..2024-03-11");
    R("mid-March", WED, "2024-03-11..2024-03-21");
    R("late February", WED, "2024-02-21..2024-03-01");
}

static void test_en_dates(void)
{
    R("on May 2", WED, "2023-05-02..2023-05-03");
    R("May 2nd", WED, "2023-05-02..2023-05-03");
    R("2 May", WED, "2023-05-02..2023-05-03");
    R("the 2nd of May 2022", WED, "2022-05-02..2022-05-03");
    R("May 2, 2023", WED, "2023-05-02..2023-05-03");
    R("on March 5", WED, "2024-03-05..2024-03-06");
    R("March 6", WED, "2024-03-06..2024-03-07");
    R("March 7", WED, "2023-03-07..2023-03-08");
    R("on February 29", MAR1, "2024-02-29..2024-03-01");
    R("on Feb 29", MAR1_23, "2020-02-29..2020-03-01");
    R("February 30", WED, "none");
    R("2023-05-02", WED, "2023-05-02..2023-05-03");
    R("notes from 2023-05", WED, "2023-05-01..2023-06-01");
    R("2023-13-02", WED, "none");
    R("on 5/2", WED, "2023-05-02..2023-05-03");
    R("on 25/12", WED, "2023-12-25..2023-12-26");
    R("5/2/2023", WED, "2023-05-02..2023-05-03");
    R("5/2", WED, "none");
    R("what is 1/2 of 10", WED, "none");
    R("Dec 25", JAN1, "2023-12-25..2023-12-26");
}

static void test_en_weekdays(void)
{
    R("on Tuesday", WED, "2024-03-05..2024-03-06");
    R("on Wednesday", WED, "2024-03-06..2024-03-07");
    R("last Wednesday", WED, "2024-02-28..2024-02-29");
    R("last Tuesday", WED, "2024-03-05..2024-03-06");
    R("Monday", WED, "2024-03-04..2024-03-05");
    R("sunday", WED, "2024-03-03..2024-03-04");
    R("this Friday", WED, "2024-03-08..2024-03-09");
    R("on Sunday", SUN, "2024-03-10..2024-03-11");
    R("last Sunday", SUN, "2024-03-03..2024-03-04");
    R("on Sunday", MON, "2024-03-10..2024-03-11");
    R("on Monday", MON, "2024-03-11..2024-03-12");
    R("last Monday", MON, "2024-03-04..2024-03-05");
    R("on Friday", JAN1, "2023-12-29..2023-12-30");
    R("over the weekend", WED, "2024-03-02..2024-03-04");
    R("last weekend", WED, "2024-03-02..2024-03-04");
    R("this weekend", WED, "2024-03-02..2024-03-04");
    R("over the weekend", SAT, "2024-03-09..2024-03-11");
    R("over the weekend", SUN, "2024-03-09..2024-03-11");
    R("last weekend", SUN, "2024-03-02..2024-03-04");
    R("the weekend", MON, "2024-03-09..2024-03-11");
    R("last weekend", JAN1, "2023-12-30..2024-01-01");
    R("What did I do this past weekend?", WED, "2024-03-02..2024-03-04");
}

static void test_zh(void)
{
    R("今天", WED, "2024-03-06..2024-03-07");
    R("昨天", WED, "2024-03-05..2024-03-06");
    R("昨天", MAR1, "2024-02-29..2024-03-01");
    R("前天", WED, "2024-03-04..2024-03-05");
    R("大前天", WED, "2024-03-03..2024-03-04");
    R("今早", WED, "2024-03-06..2024-03-06 12:00");
    R("今天早上我说了什么", WED, "2024-03-06..2024-03-06 12:00");
    R("昨晚", WED, "2024-03-05 18:00..2024-03-06 06:00");
    R("上周", WED, "2024-02-26..2024-03-04");
    R("上星期", WED, "2024-02-26..2024-03-04");
    R("上个星期", WED, "2024-02-26..2024-03-04");
    R("上礼拜", WED, "2024-02-26..2024-03-04");
    R("上周", JAN1, "2023-12-25..2024-01-01");
    R("上周", MON, "2024-03-04..2024-03-11");
    R("上周一起吃饭", WED, "2024-02-26..2024-03-04");
    R("这周", WED, "2024-03-04..2024-03-11");
    R("本周", SUN, "2024-03-04..2024-03-11");
    R("上上周", WED, "2024-02-19..2024-02-26");
    R("上个月", WED, "2024-02-01..2024-03-01");
    R("上个月", JAN1, "2023-12-01..2024-01-01");
    R("这个月", WED, "2024-03-01..2024-04-01");
    R("本月", DEC31, "2023-12-01..2024-01-01");
    R("去年", WED, "2023-01-01..2024-01-01");
    R("今年", WED, "2024-01-01..2025-01-01");
    R("前年", WED, "2022-01-01..2023-01-01");
    R("3天前", WED, "2024-03-03..2024-03-04");
    R("三天前", WED, "2024-03-03..2024-03-04");
    R("十一天前", WED, "2024-02-24..2024-02-25");
    R("两周前", WED, "2024-02-19..2024-02-26");
    R("两个星期前", WED, "2024-02-19..2024-02-26");
    R("三个月前", WED, "2023-12-01..2024-01-01");
    R("十二个月之前", WED, "2023-03-01..2023-04-01");
    R("一年前", WED, "2023-01-01..2024-01-01");
    R("几天前", WED, "2024-03-03..2024-03-04");
    R("三月份", WED, "2024-03-01..2024-04-01");
    R("三月", FEB, "2023-03-01..2023-04-01");
    R("3月", WED, "2024-03-01..2024-04-01");
    R("十二月", JAN1, "2023-12-01..2024-01-01");
    R("5月2日", WED, "2023-05-02..2023-05-03");
    R("5月2号", WED, "2023-05-02..2023-05-03");
    R("2月29日", MAR1, "2024-02-29..2024-03-01");
    R("周末", WED, "2024-03-02..2024-03-04");
    R("周末", SUN, "2024-03-09..2024-03-11");
    R("上周末", WED, "2024-03-02..2024-03-04");
    R("上周末", SUN, "2024-03-02..2024-03-04");
    R("这周末", SAT, "2024-03-09..2024-03-11");
    R("周二", WED, "2024-03-05..2024-03-06");
    R("星期二", WED, "2024-03-05..2024-03-06");
    R("礼拜二", WED, "2024-03-05..2024-03-06");
    R("星期天", WED, "2024-03-03..2024-03-04");
    R("周日", SUN, "2024-03-10..2024-03-11");
    R("上周二", WED, "2024-02-27..2024-02-28");
    R("上周一", MON, "2024-03-04..2024-03-05");
    R("这周五", WED, "2024-03-08..2024-03-09");
    R("最近", WED, "2024-02-21..2024-03-07");
    R("最近三天", WED, "2024-03-03..2024-03-07");
    R("过去两周", WED, "2024-02-21..2024-03-07");
    R("2023年", WED, "2023-01-01..2024-01-01");
    R("2023年5月", WED, "2023-05-01..2023-06-01");
    R("2023年5月2日", WED, "2023-05-02..2023-05-03");
    R("去年三月", WED, "2023-03-01..2023-04-01");
    R("２天前", WED, "2024-03-04..2024-03-05");
    R("我们前几天聊了什么", WED, "2024-02-28..2024-03-06");
    R("这两天", WED, "2024-03-04..2024-03-07");
    R("早上周会开了吗", WED, "none");               /* 早上 + 周会, not 上周 */
    R("周一到周五", WED, "2024-03-04..2024-03-05");
}

static void test_spans(void)
{
    T_EQ_STR(span("what did I do yesterday?", WED), "yesterday");
    T_EQ_STR(span("we met in the past 3 days, right", WED), "in the past 3 days");
    T_EQ_STR(span("on Tuesday and last week", WED), "on Tuesday");
    T_EQ_STR(span("我昨天做了什么", WED), "昨天");
    T_EQ_STR(span("上周末去哪了", WED), "上周末");
    T_EQ_STR(span("the march of progress was on May 2nd", WED), "on May 2nd");
    struct time_range r;
    const char *q = "我昨天做了什么";
    T_EQ_INT(timeexpr_parse(q, strlen(q), WED, &r), 1);
    T_EQ_INT(r.start, 3);
    T_EQ_INT(r.end, 9);
    /* leftmost wins: 前天 inside 大前天 must not be picked */
    T_EQ_STR(span("大前天和昨天", WED), "大前天");
    T_EQ_STR(span("last week or yesterday", WED), "last week");
}

static void test_only_time(void)
{
    T_EQ_INT(only("What did I do yesterday?", WED), 1);
    T_EQ_INT(only("What did we talk about last week?", WED), 1);
    T_EQ_INT(only("上周我做了什么", WED), 1);
    T_EQ_INT(only("昨天我们聊了什么", WED), 1);
    T_EQ_INT(only("what happened last weekend?", WED), 1);
    T_EQ_INT(only("What was I working on this morning?", WED), 1);
    T_EQ_INT(only("Summarize what we discussed in the past 3 days", WED), 1);
    T_EQ_INT(only("我们上个月讨论了什么？", WED), 1);
    T_EQ_INT(only("前天发生了什么", WED), 1);
    T_EQ_INT(only("Tell me what we talked about on Tuesday.", WED), 1);
    T_EQ_INT(only("What did we do yesterday and the day before yesterday?", WED), 1);
    T_EQ_INT(only("最近我们都聊了些什么", WED), 1);

    T_EQ_INT(only("what restaurant did I go to last week?", WED), 0);
    T_EQ_INT(only("上周我去了哪家餐厅", WED), 0);
    T_EQ_INT(only("what did I say about Python yesterday?", WED), 0);
    T_EQ_INT(only("昨天我们聊的那本书叫什么", WED), 0);
    T_EQ_INT(only("Which movie did we discuss in March?", WED), 0);
    T_EQ_INT(only("上个月的预算是多少", WED), 0);
    T_EQ_INT(only("how much did I spend on groceries last month", WED), 0);
    T_EQ_INT(only("Did I mention my sister last weekend?", WED), 0);
    T_EQ_INT(only("What was the bug we fixed 2 days ago?", WED), 0);
    T_EQ_INT(only("我最近在读什么书", WED), 0);
}

static void test_negatives(void)
{
    R("what is my cat's name?", WED, "none");
    R("I may go", WED, "none");
    R("the march of progress", WED, "none");
    R("we are on the march", WED, "none");
    R("我的猫叫什么", WED, "none");
    R("周杰伦的新歌", WED, "none");
    R("我一周去三次健身房", WED, "none");
    R("附近有什么餐厅", WED, "none");
    R("Mayhem ensued", WED, "none");
    R("they were marching", WED, "none");
    R("the sun is hot", WED, "none");
    R("Sundays are quiet", WED, "none");
    R("it took 3.5 days", WED, "none");
    R("meet at 10:00", WED, "none");
    R("mp3 files", WED, "none");
    R("the last day of school", WED, "none");
    R("", WED, "none");
    struct time_range r;
    T_EQ_INT(timeexpr_parse(NULL, 5, WED, &r), 0);
    T_EQ_INT(timeexpr_parse("today", 5, WED, NULL), 0);
    /* n limits the input: "today" cut to "tod" */
    T_EQ_INT(timeexpr_parse("today", 3, WED, &r), 0);
}

static void test_bad_input(void)
{
    struct time_range r;
    /* a cut 昨 (E6 98 A8) and stray bytes before a real 昨天 */
    const char bad[] = "\xe6\x98\xff\xfe \xc0\xaf\xe6\x98\xa8\xe5\xa4\xa9";
    T_EQ_INT(timeexpr_parse(bad, sizeof bad - 1, WED, &r), 1);
    T_EQ_INT(r.start, 7);
    T_EQ_STR(range(bad, WED), "2024-03-05..2024-03-06");
    /* the expression cut mid-character is no expression */
    T_EQ_INT(timeexpr_parse("\xe6\x98\xa8\xe5\xa4", 5, WED, &r), 0);

    /* 4 MB of filler then an expression: found, linear time */
    size_t n = (size_t)4 << 20;
    char *big = malloc(n + 32);
    T_CHECK(big != NULL);
    if (!big)
        return;
    for (size_t i = 0; i < n; i++)
        big[i] = "ab 9\xe4\xb8\x80 "[i % 8];   /* words, digits, 一 */
    memcpy(big + n, " last week", 10);
    clock_t t0 = clock();
    T_EQ_INT(timeexpr_parse(big, n + 10, WED, &r), 1);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    T_EQ_INT(r.start, n + 1);
    T_EQ_INT(r.only_time, 0);
    T_CHECK(secs < 20.0);   /* ~0.1 s at -O2; quadratic would be hours */
    /* one endless word and one endless number */
    memset(big, 'a', n);
    T_EQ_INT(timeexpr_parse(big, n, WED, &r), 0);
    memset(big, '7', n);
    T_EQ_INT(timeexpr_parse(big, n, WED, &r), 0);
    /* long whitespace runs do not join words */
    memset(big, ' ', n);
    memcpy(big, "last", 4);
    memcpy(big + n - 4, "week", 4);
    T_EQ_INT(timeexpr_parse(big, n, WED, &r), 0);
    free(big);
    /* absurd now */
    T_EQ_INT(timeexpr_parse("today", 5, INT64_MAX, &r), 0);
}

static void test_shanghai(void)
{
    set_tz("Asia/Shanghai");
    /* 2024-03-05 20:00 UTC is Wednesday 2024-03-06 04:00 in Shanghai */
    int64_t now = 1709668800;
    struct time_range r;
    T_EQ_INT(timeexpr_parse("today", 5, now, &r), 1);
    T_EQ_INT(r.from, 1709654400);   /* 2024-03-05T16:00Z = 03-06 00:00 +08 */
    T_EQ_INT(r.to, 1709740800);
    R("昨天", now, "2024-03-05..2024-03-06");
    R("上周", now, "2024-02-26..2024-03-04");
    set_tz("UTC");
    /* the same instant in UTC is still Tuesday */
    R("today", now, "2024-03-05..2024-03-06");
}

/* Two dates joined into one range, and a bare "on the 15th". */
static void test_spans_joined(void)
{
    int64_t now = at(2024, 1, 20, 12);
    R("Where was John between August 11 and August 15 2023?", now, "2023-08-11..2023-08-16");
    R("what did we do from May 2 to May 5?", now, "2023-05-02..2023-05-06");
    R("from 2023-03-01 until 2023-03-04", now, "2023-03-01..2023-03-05");
    R("March 3 - March 9, 2023", now, "2023-03-03..2023-03-10");
    /* joined only by the words that join dates */
    R("between May 2 or May 5", now, "2023-05-02..2023-05-03");
    R("May 2 and May 5", now, "2023-05-02..2023-05-03");
    /* a second date before the first is not a range */
    R("between May 5 and May 2", now, "2023-05-05..2023-05-06");
    T_EQ_STR(span("Where was he between August 11 and August 15 2023?", now),
             "August 11 and August 15 2023");
    /* "on the 15th": the most recent 15th */
    R("I met back up with my teammates on the 15th", at(2023, 8, 17, 19),
      "2023-08-15..2023-08-16");
    R("on the 20th", at(2023, 8, 17, 19), "2023-07-20..2023-07-21");
    R("on the 31st", at(2023, 3, 17, 19), "none");   /* February has none */
    R("the 3rd time", at(2023, 8, 17, 19), "none");
    R("on the 15th of May", at(2023, 8, 17, 19), "2023-05-15..2023-05-16");
}

static void test_next(void)
{
    /* WED = Wednesday 2024-03-06 */
    R("next week", WED, "2024-03-11..2024-03-18");
    R("next month", DEC31, "2024-01-01..2024-02-01");
    R("next year", WED, "2025-01-01..2026-01-01");
    R("next Friday", WED, "2024-03-08..2024-03-09");
    R("next Wednesday", WED, "2024-03-13..2024-03-14");   /* not today */
    R("next weekend", WED, "2024-03-09..2024-03-11");
    R("next weekend", SAT, "2024-03-16..2024-03-18");     /* not the one we are in */
    R("the next day", WED, "none");
    R("next to the lake", WED, "none");
}

static int vague(const char *q, int64_t now)
{
    struct time_range r;
    if (!timeexpr_parse(q, strlen(q), now, &r))
        return -1;
    return r.vague;
}

static void test_vague(void)
{
    T_EQ_INT(vague("why had Evan been going through a tough time lately?", WED), 1);
    T_EQ_INT(vague("what did we do recently?", WED), 1);
    T_EQ_INT(vague("what is she reading these days?", WED), 1);
    T_EQ_INT(vague("what music is popular nowadays", WED), 1);
    T_EQ_INT(vague("最近在忙什么", WED), 1);
    T_EQ_INT(vague("what did I do yesterday?", WED), 0);
    T_EQ_INT(vague("the past 14 days", WED), 0);
    R("these days", WED, "2024-02-21..2024-03-07");
    /* a vague word and a date: the date bounds it */
    int64_t jul = at(2023, 7, 20, 12);
    R("What new activity did Maria start recently, as mentioned on 3 June, 2023?", jul,
      "2023-06-03..2023-06-04");
    T_EQ_INT(vague("What new activity did Maria start recently, as mentioned on 3 June, 2023?",
                   jul), 0);
    T_EQ_STR(span("what did she start recently, on 3 June?", jul), "on 3 June");
    struct time_range r;
    const char *q = "what did she start recently, on 3 June?";
    T_EQ_INT(timeexpr_parse(q, strlen(q), jul, &r), 1);
    T_EQ_INT((int)r.vstart, 19);
    T_EQ_INT((int)r.vend, 27);
    T_EQ_INT(only("what did we do recently, on 3 June?", jul), 1);
    T_EQ_INT(only("what did we paint recently, on 3 June?", jul), 0);
    /* two vague words: still vague, the first span */
    T_EQ_INT(vague("what did we do lately, these days?", jul), 1);
    T_EQ_STR(span("what did we do lately, these days?", jul), "lately");
}

/* Every range timeexpr_scan finds in text, read at `now`, as
 * "from..to|from..to" (V before a vague one). */
static const char *scan(const char *text, int64_t now)
{
    static char out[512];
    struct time_range r[8];
    size_t k = 0;
    int n = timeexpr_scan(text, strlen(text), now, r, 8);
    out[0] = 0;
    for (int i = 0; i < n && k + 64 < sizeof out; i++) {
        char a[32], b[32];
        fmt1(r[i].from, a, sizeof a);
        fmt1(r[i].to, b, sizeof b);
        k += (size_t)snprintf(out + k, sizeof out - k, "%s%s%s..%s", i ? "|" : "",
                              r[i].vague ? "V" : "", a, b);
    }
    return n ? out : "none";
}

#define S(t, now, want) T_EQ_STR(scan(t, now), want)

/* Mentions inside messages, read against the message's own time. */
static void test_scan(void)
{
    int64_t nov2 = at(2023, 11, 2, 13);   /* Thursday */
    int64_t dec5 = at(2023, 12, 5, 9);    /* Tuesday */
    S("Last week I threw a party for my sister!", nov2, "2023-10-23..2023-10-30");
    S("Yesterday I went to the fair with the kids.", dec5, "2023-12-04..2023-12-05");
    S("I went hiking yesterday, and last night we saw a movie.", dec5,
      "2023-12-04..2023-12-05|2023-12-04 18:00..2023-12-05 06:00");
    S("We met on December 4, and again on 10 December 2023.", dec5,
      "2023-12-04..2023-12-05|2023-12-10..2023-12-11");
    S("I've been so tired lately", dec5, "V2023-11-21..2023-12-06");
    S("last weekend was fun", dec5, "2023-12-02..2023-12-04");
    S("two days ago I lost my job", dec5, "2023-12-03..2023-12-04");
    S("3 weeks ago we moved", dec5, "2023-11-13..2023-11-20");
    S("last Friday I painted", dec5, "2023-12-01..2023-12-02");
    S("this Saturday we fly", dec5, "2023-12-09..2023-12-10");
    S("next week is my exam", dec5, "2023-12-11..2023-12-18");
    S("last month I started yoga", dec5, "2023-11-01..2023-12-01");
    S("on 2023-10-13 I sold a painting", dec5, "2023-10-13..2023-10-14");
    S("I'm so excited about today", dec5, "2023-12-05..2023-12-06");
    S("我昨天去了公园，上周去了北京", dec5, "2023-12-04..2023-12-05|2023-11-27..2023-12-04");
    S("nothing about time here, just a long chat about dogs", dec5, "none");
    S("", dec5, "none");
    /* at most max ranges */
    struct time_range r[2];
    const char *many = "yesterday today tomorrow yesterday today";
    T_EQ_INT(timeexpr_scan(many, strlen(many), dec5, r, 2), 2);
    T_EQ_INT(timeexpr_scan(many, strlen(many), dec5, r, 0), 0);
    T_EQ_INT(timeexpr_scan(many, strlen(many), dec5, NULL, 2), 0);
    T_EQ_INT(timeexpr_scan(NULL, 5, dec5, r, 2), 0);
    /* spans are in order and inside the text */
    const char *t = "yesterday and last week";
    struct time_range s2[4];
    T_EQ_INT(timeexpr_scan(t, strlen(t), dec5, s2, 4), 2);
    T_EQ_INT((int)s2[0].start, 0);
    T_EQ_INT((int)s2[0].end, 9);
    T_EQ_INT((int)s2[1].start, 14);
    T_EQ_INT((int)s2[1].end, 23);
    /* only the first TIMEEXPR_SCAN_BYTES are read */
    size_t big = TIMEEXPR_SCAN_BYTES + 64;
    char *b = malloc(big);
    T_CHECK(b != NULL);
    if (!b)
        return;
    memset(b, 'x', big);
    memcpy(b + TIMEEXPR_SCAN_BYTES + 8, " yesterday ", 11);
    T_EQ_INT(timeexpr_scan(b, big, dec5, r, 2), 0);
    memcpy(b + 100, " yesterday ", 11);
    T_EQ_INT(timeexpr_scan(b, big, dec5, r, 2), 1);
    free(b);
}

/* The scan's refusal of places no Chinese rule starts at changes no
 * result: random text of every character the rules name (and digits,
 * full-width digits, ASCII, other CJK), scanned with it and without. */
/* te_mk's cache of mktime's answers: each phrase at each of 3,000 random
 * times (days and hours over two years of Europe/Berlin, its DST changes
 * included) read once with the cache warm from the phrases before it, then
 * again each with the cache emptied ($TZ alternating between two
 * spellings of the zone, ":Europe/Berlin" and "Europe/Berlin", empties it
 * at every call): the same ranges. */
#define MK_N 3000
static void test_mk_cache(void)
{
    static const char *const q[] = { "yesterday", "today", "last week", "this month",
                                     "3 days ago", "last night", "two weeks ago", "last year",
                                     "this morning", "上周", "昨天", "in March", "last friday" };
    static struct time_range warm[MK_N];
    static int got[MK_N];
    const int nq = (int)(sizeof q / sizeof q[0]);
    unsigned seed = 12345;
    int same = 0, found = 0;
    set_tz("Europe/Berlin");
    int64_t base = at(2023, 1, 1, 0), now[MK_N];
    for (int i = 0; i < MK_N; i++) {
        seed = seed * 1103515245u + 12345u;
        now[i] = base + (int64_t)(seed >> 8) % (2 * 366 * 24) * 3600;
        got[i] = timeexpr_parse(q[i % nq], strlen(q[i % nq]), now[i], &warm[i]);
        found += got[i];
    }
    for (int i = 0; i < MK_N; i++) {
        struct time_range cold;
        set_tz(i % 2 ? "Europe/Berlin" : ":Europe/Berlin");
        int b = timeexpr_parse(q[i % nq], strlen(q[i % nq]), now[i], &cold);
        same += b == got[i] && (!b || (warm[i].from == cold.from && warm[i].to == cold.to));
    }
    T_EQ_INT(same, MK_N);
    T_CHECK(found > MK_N / 2);
    set_tz("UTC");
}

/* Scans and parses buf[0..n) with a filter on and off (toggle): 1 when
 * both give the same ranges; *found += 1 when there was one. */
static int same_with_filter(void (*toggle)(int), const char *buf, size_t n, int64_t at,
                            int *found)
{
    struct time_range x[8], y[8], px, py;
    toggle(1);
    int nx = timeexpr_scan(buf, n, at, x, 8), ox = timeexpr_parse(buf, n, at, &px);
    toggle(0);
    int ny = timeexpr_scan(buf, n, at, y, 8), oy = timeexpr_parse(buf, n, at, &py);
    toggle(1);
    int same = nx == ny && ox == oy;
    for (int i = 0; same && i < nx; i++)
        same = x[i].from == y[i].from && x[i].to == y[i].to && x[i].vague == y[i].vague;
    if (same && ox)
        same = px.from == py.from && px.to == py.to && px.vague == py.vague;
    *found += nx > 0;
    return same;
}

static void test_zh_filter(void)
{
    static const char *const atoms[] = {
        "去年", "今年", "前年", "大前天", "前几天", "前天", "昨天", "昨晚", "昨夜", "昨日",
        "今天", "今早", "今晨", "今晚", "今日", "早上", "上午", "下午", "晚上", "明天",
        "上上", "上", "个", "星期", "礼拜", "周", "末", "月", "这", "本", "最近", "过去",
        "近", "近期", "一段时间", "以来", "里", "内", "以前", "之前", "前", "天", "日",
        "年", "号", "號", "份", "的", "马", "早", "晚", "零", "一", "二", "三", "四", "五",
        "六", "七", "八", "九", "十", "两", "几", "起", "些", "下", "我们", "开会",
        "\xEF\xBC\x91", "\xEF\xBC\x92", "\xEF\xBC\x90", "0", "1", "2", "3", "12", "2023",
        "20231", "5", " ", " ", ",", "-", "/", "a", "on", "May", "3rd", "ago", "days",
        "\xE3\x80\x82", "\xFF", "\x80",
    };
    const int64_t at = 1701734400;   /* 2023-12-05 */
    unsigned seed = 11;
    char buf[256];
    int found = 0, bad = 0;
    for (int r = 0; r < 20000; r++) {
        size_t n = 0;
        int k = 1 + (int)(rand_r(&seed) % 12);
        for (int i = 0; i < k; i++) {
            const char *a = atoms[rand_r(&seed) % (sizeof atoms / sizeof *atoms)];
            size_t m = strlen(a);
            if (n + m >= sizeof buf)
                break;
            memcpy(buf + n, a, m);
            n += m;
        }
        if (!same_with_filter(timeexpr_zh_filter, buf, n, at, &found) && !bad++)
            fprintf(stderr, "zh filter changes the scan of \"%.*s\"\n", (int)n, buf);
    }
    T_CHECK(bad == 0);
    T_CHECK(found > 5000);   /* the atoms do make expressions */
}

/* The English filters refuse only where the rules would: random text of
 * the rules' words, the commonest words (the leads above all: "the", "a",
 * "in"), cases, digits and every separator te_lex reads, scanned and
 * parsed with the filters on and off. */
static void test_en_filter(void)
{
    static const char *const atoms[] = {
        "the", "The", "THE", "a", "A", "an", "in", "In", "on", "over", "during", "since",
        "from", "for", "at", "this", "that", "then", "there", "these", "last", "Last", "next",
        "past", "previous", "other", "few", "couple", "of", "ago", "day", "days", "week",
        "weeks", "weekend", "month", "months", "year", "years", "today", "tonight",
        "tomorrow", "yesterday", "lately", "recently", "nowadays", "early", "mid", "late",
        "one", "two", "three", "ten", "twelve", "twenty", "thirty", "several", "may", "May",
        "march", "March", "mar", "dec", "december", "sept", "monday", "Friday", "sunday",
        "code", "file", "theme", "then", "tho", "apple", "and", "to", "is", "was", "we",
        "new", "more", "most", "sixth", "1st", "2nd", "3rd", "4th", "5", "12", "2023", "1999",
        "3/4", "2024-05-06", "5/6/2024", "10:30", "the1", "in2", "x", "abcdefghijklmnopq",
        " ", " ", " ", "  ", "\t", "\n", "\r\n", ",", ", ", "-", " - ", ".", "/", ":",
        "'s", "(", ")", "\xC3\xA9", "\xE6\x98\xA8\xE5\xA4\xA9",
    };
    const int64_t at = 1701734400;   /* 2023-12-05 */
    unsigned seed = 23;
    char buf[256];
    int found = 0, bad = 0;
    for (int r = 0; r < 40000; r++) {
        size_t n = 0;
        int k = 1 + (int)(rand_r(&seed) % 12);
        for (int i = 0; i < k; i++) {
            const char *a = atoms[rand_r(&seed) % (sizeof atoms / sizeof *atoms)];
            size_t m = strlen(a);
            if (n + m + 1 >= sizeof buf)
                break;
            memcpy(buf + n, a, m);
            n += m;
            if (rand_r(&seed) % 3)
                buf[n++] = ' ';
        }
        if (!same_with_filter(timeexpr_en_filter, buf, n, at, &found) && !bad++)
            fprintf(stderr, "en filter changes the scan of \"%.*s\"\n", (int)n, buf);
    }
    T_CHECK(bad == 0);
    T_CHECK(found > 10000);  /* the atoms do make expressions */
}

int main(void)
{
    set_tz("UTC");
    init_nows();
    T_RUN(test_en_days);
    T_RUN(test_en_ago);
    T_RUN(test_en_weeks_months_years);
    T_RUN(test_en_months);
    T_RUN(test_en_dates);
    T_RUN(test_en_weekdays);
    T_RUN(test_zh);
    T_RUN(test_en_filter);
    T_RUN(test_spans);
    T_RUN(test_only_time);
    T_RUN(test_negatives);
    T_RUN(test_bad_input);
    T_RUN(test_shanghai);
    T_RUN(test_spans_joined);
    T_RUN(test_next);
    T_RUN(test_vague);
    T_RUN(test_scan);
    T_RUN(test_zh_filter);
    T_RUN(test_mk_cache);
    return T_DONE();
}
