/*
 * test_util.c: the capped buffer, UTF-8 helpers, ISO 8601 times, hashes,
 * the monotonic clock and mkdir -p.
 */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "t.h"
#include "cairn.h"
#include "internal.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/os.h"
#include "util/timeutil.h"
#include "util/utf8.h"

static void test_buf(void)
{
    struct buf b = BUF_INIT;
    T_EQ_STR(b.p, "");
    T_EQ_INT(buf_adds(&b, "hello"), BUF_OK);
    T_EQ_INT(buf_printf(&b, " %d %s", 42, "x"), BUF_OK);
    T_EQ_STR(b.p, "hello 42 x");
    T_EQ_INT(b.n, 10);
    buf_truncate(&b, 5);
    T_EQ_STR(b.p, "hello");
    for (int i = 0; i < 10000; i++)
        buf_addc(&b, 'a' + i % 26);
    T_EQ_INT(b.n, 10005);
    T_EQ_INT(b.p[b.n], 0);
    buf_release(&b);
    T_EQ_STR(b.p, "");

    /* the cap: a failing append frees the memory and sticks */
    struct buf c;
    buf_init(&c, 16);
    T_EQ_INT(buf_adds(&c, "0123456789"), BUF_OK);
    T_EQ_INT(buf_adds(&c, "0123456789"), BUF_TOOBIG);
    T_EQ_INT(c.n, 0);
    T_EQ_INT(c.alloc, 0);
    T_EQ_INT(buf_adds(&c, "x"), BUF_TOOBIG);
    T_CHECK(buf_detach(&c, NULL) == NULL);
    buf_release(&c);
    buf_init(&c, 16);
    T_EQ_INT(buf_add(&c, "0123456789abcdef", 16), BUF_OK);   /* exactly the cap */
    T_EQ_INT(buf_addc(&c, 'x'), BUF_TOOBIG);
    buf_release(&c);

    /* JSON strings: escapes, control bytes, invalid UTF-8 */
    struct buf j = BUF_INIT;
    buf_add_json_str(&j, "a\"b\\c\n\t\x01 \xe4\xb8\xad \xff", 14);
    T_EQ_STR(j.p, "\"a\\\"b\\\\c\\n\\t\\u0001 \xe4\xb8\xad \xef\xbf\xbd\"");
    buf_release(&j);

    size_t n;
    struct buf d = BUF_INIT;
    buf_adds(&d, "detached");
    char *p = buf_detach(&d, &n);
    T_EQ_STR(p, "detached");
    T_EQ_INT(n, 8);
    T_EQ_STR(d.p, "");
    free(p);
}

static void test_utf8(void)
{
    T_CHECK(utf8_valid("plain", 5));
    T_CHECK(utf8_valid("\xe5\x8c\x97\xe4\xba\xac", 6));
    T_CHECK(utf8_valid("\xf0\x9f\x98\x80", 4));
    T_CHECK(!utf8_valid("\xc3", 1));                 /* cut */
    T_CHECK(!utf8_valid("\xc0\xaf", 2));             /* overlong */
    T_CHECK(!utf8_valid("\xed\xa0\x80", 3));         /* surrogate */
    T_CHECK(!utf8_valid("\xf4\x90\x80\x80", 4));     /* > U+10FFFF */
    T_CHECK(!utf8_valid("\x80", 1));
    T_CHECK(!utf8_clean("a\0b", 3));
    struct buf b = BUF_INIT;
    utf8_repair("ok\xff\xc3(\0z\xe4\xb8\xad", 10, &b);
    T_EQ_STR(b.p, "ok\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbdz\xe4\xb8\xad");
    T_CHECK(utf8_valid(b.p, b.n));
    buf_release(&b);
    uint32_t cp;
    T_EQ_INT(utf8_decode("\xe5\x8c\x97", 3, &cp), 3);
    T_EQ_INT(cp, 0x5317);
    char out[4];
    T_EQ_INT(utf8_encode(0x1F600, out), 4);
    T_CHECK(!memcmp(out, "\xf0\x9f\x98\x80", 4));
}

static void test_time(void)
{
    int64_t t;
    char s[40];
    T_EQ_INT(cairn_parse_time("2023-05-08T13:56:00Z", &t), CAIRN_OK);
    T_EQ_INT(t, 1683554160);
    T_EQ_INT(cairn_parse_time("2023-05-08T15:56:00+02:00", &t), CAIRN_OK);
    T_EQ_INT(t, 1683554160);
    T_EQ_INT(cairn_parse_time("2023-05-08T08:26:00-0530", &t), CAIRN_OK);
    T_EQ_INT(t, 1683554160);
    T_EQ_INT(cairn_parse_time("2023-05-08 13:56:00.123Z", &t), CAIRN_OK);
    T_EQ_INT(t, 1683554160);
    /* local (TZ=UTC in tests) */
    T_EQ_INT(cairn_parse_time("2023-05-08T13:56", &t), CAIRN_OK);
    T_EQ_INT(t, 1683554160);
    T_EQ_INT(cairn_parse_time("2023-05-08", &t), CAIRN_OK);
    T_EQ_INT(t, 1683504000);
    T_EQ_INT(cairn_parse_time("2024-02-29T00:00:00Z", &t), CAIRN_OK);
    cairn_format_time(t, 1, s, sizeof s);
    T_EQ_STR(s, "2024-02-29T00:00:00Z");
    T_EQ_INT(cairn_parse_time("2023-13-01", &t), CAIRN_INVALID);
    T_EQ_INT(cairn_parse_time("2023-05-08T25:00", &t), CAIRN_INVALID);
    T_EQ_INT(cairn_parse_time("May 8, 2023", &t), CAIRN_INVALID);
    T_EQ_INT(cairn_parse_time("2023-05-08T13:56:00Zjunk", &t), CAIRN_INVALID);
    T_EQ_INT(cairn_parse_time("", &t), CAIRN_INVALID);
    T_EQ_INT(cairn_parse_time(NULL, &t), CAIRN_INVALID);
    /* local with another zone */
    setenv("TZ", "Asia/Shanghai", 1);
    tzset();
    T_EQ_INT(cairn_parse_time("2023-05-08T21:56:00", &t), CAIRN_OK);
    T_EQ_INT(t, 1683554160);
    cairn_format_time(t, 0, s, sizeof s);
    T_EQ_STR(s, "2023-05-08T21:56:00");
    setenv("TZ", "UTC", 1);
    tzset();
}

/* time_stamp_minute writes what strftime(40, "%Y-%m-%d %a %H:%M") of
 * localtime does (exact33: a pack's session stamps written by hand):
 * 20,000 random times from 1600 to 2200 and 200 past each end of the hand
 * path (years below 1000 and above 9999, negative, strftime's own), in
 * zones with DST, half-hour, 45-minute and historical offsets with
 * seconds (Monrovia's -0:44:30), a POSIX rule with seconds, and hours
 * either side of Berlin's 2023 changes; one set of day names for all,
 * read in the C locale and again in C.UTF-8. */
static void test_stamp(void)
{
    static const char *const zones[] = {
        "UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe",
        "Pacific/Chatham", "America/St_Johns", "Africa/Monrovia", "XST-5:30:15XDT,M3.5.0,M10.5.0/3",
    };
    static const char *const locales[] = { "C", "C.UTF-8" };
    const int nz = (int)(sizeof zones / sizeof *zones);
    unsigned seed = 2333;
    int bad = 0, total = 0, hand = 0;
    for (int l = 0; l < 2; l++) {
        if (!setlocale(LC_TIME, locales[l]))
            continue;
        struct stamp_days d;
        memset(&d, 0, sizeof d);
        for (int z = 0; z < nz; z++) {
            setenv("TZ", zones[z], 1);
            tzset();
            for (int i = 0; i < 2400; i++) {
                int64_t t;
                seed = seed * 1103515245u + 12345u;
                uint64_t r = ((uint64_t)seed << 16) ^ (uint64_t)(seed >> 3) * 2654435761u;
                if (i < 2000)       /* 1600-2200 */
                    t = -11676096000LL + (int64_t)(r % 18934560000ULL);
                else if (i < 2100)  /* years 0-999 and before */
                    t = -62167219200LL - 86400LL * 400 + (int64_t)(r % 31622400000ULL);
                else if (i < 2200)  /* 9999 and past it */
                    t = 253402300800LL - 86400LL * 400 + (int64_t)(r % 63244800ULL);
                else                /* either side of Berlin's 2023 changes */
                    t = (i % 2 ? 1679792400LL : 1698541200LL) - 7200 + (int64_t)(r % 14400);
                char a[48], b[48];
                struct tm tm;
                time_t tt = (time_t)t;
                memset(a, 'x', sizeof a);
                memset(b, 'y', sizeof b);
                size_t na = time_stamp_minute(t, &d, a), nb = 0;
                if (localtime_r(&tt, &tm))
                    nb = strftime(b, 40, "%Y-%m-%d %a %H:%M", &tm);
                hand += nb && tm.tm_year + 1900 >= 1000 && tm.tm_year + 1900 <= 9999;
                bad += na != nb || (nb && memcmp(a, b, nb + 1) != 0);
                total++;
            }
        }
    }
    T_EQ_INT(bad, 0);
    T_CHECK(total >= 2400 * nz);
    T_CHECK(hand > total / 2 && hand < total);
    setlocale(LC_TIME, "C");
    setenv("TZ", "UTC", 1);
    tzset();
}

static void test_hash(void)
{
    T_CHECK(hash64("abc", 3, 0) == hash64("abc", 3, 0));
    T_CHECK(hash64("abc", 3, 0) != hash64("abd", 3, 0));
    T_CHECK(hash64("abc", 3, 0) != hash64("abc", 3, 1));
    T_CHECK(hash64("", 0, 0) != hash64("\0", 1, 0));
    /* Both hashes are stored (message dedup, MCP save ids): pinned. */
    T_CHECK(hash64("abc", 3, 0) == 0xe9c3a8e5cd266bccULL);
    T_CHECK(hash64("hello world, twelve", 19, 0x51) == 0xb1c55535afcfd1cdULL);
    /* FNV-1a 64 reference vectors (Fowler, Noll, Vo test suite). */
    T_CHECK(fnv1a64("", 0, FNV1A64_BASIS) == 0xcbf29ce484222325ULL);
    T_CHECK(fnv1a64("a", 1, FNV1A64_BASIS) == 0xaf63dc4c8601ec8cULL);
    T_CHECK(fnv1a64("foobar", 6, FNV1A64_BASIS) == 0x85944171f73967e8ULL);
    /* Chaining is hashing the concatenation. */
    T_CHECK(fnv1a64("bar", 3, fnv1a64("foo", 3, FNV1A64_BASIS)) == 0x85944171f73967e8ULL);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_os(void)
{
    double t0 = os_now_ms(), t1 = os_now_ms();
    T_CHECK(t0 > 0 && t1 >= t0);

    char root[] = "/tmp/cairn-test-os-XXXXXX", p[PATH_MAX], q[PATH_MAX], bad[PATH_MAX];
    T_CHECK(mkdtemp(root) != NULL);
    /* mkparents: the folders above a file, not the file's own name. */
    snprintf(p, sizeof p, "%s/a/b/store.db", root);
    T_EQ_INT(os_mkparents(p, 0700, bad, sizeof bad), 0);
    snprintf(q, sizeof q, "%s/a/b", root);
    T_CHECK(is_dir(q));
    T_CHECK(!is_dir(p) && access(p, F_OK) != 0);
    T_EQ_INT(os_mkparents(p, 0700, bad, sizeof bad), 0);        /* again: nothing to do */
    T_EQ_INT(os_mkparents("store.db", 0700, bad, sizeof bad), 0);
    T_EQ_INT(os_mkparents("/store.db", 0700, bad, sizeof bad), 0);
    /* mkdirs: every folder, the last one included, trailing '/' or not. */
    snprintf(p, sizeof p, "%s/c/d/e/", root);
    T_EQ_INT(os_mkdirs(p, 0755, NULL, 0), 0);
    snprintf(q, sizeof q, "%s/c/d/e", root);
    T_CHECK(is_dir(q));
    T_EQ_INT(os_mkdirs("", 0755, NULL, 0), 0);
    /* A file in the way: fails, says which folder and why. */
    snprintf(q, sizeof q, "%s/file", root);
    FILE *f = fopen(q, "w");
    T_CHECK(f != NULL);
    if (f)
        fclose(f);
    snprintf(p, sizeof p, "%s/file/x/y", root);
    errno = 0;
    T_EQ_INT(os_mkdirs(p, 0755, bad, sizeof bad), -1);
    T_EQ_INT(errno, ENOTDIR);
    snprintf(q, sizeof q, "%s/file/x", root);
    T_EQ_STR(bad, q);
    /* Too long for PATH_MAX: refused before any mkdir. */
    char *longp = malloc(PATH_MAX + 8);
    if (longp) {
        memset(longp, 'x', PATH_MAX + 7);
        longp[0] = '/';
        longp[PATH_MAX + 7] = '\0';
        errno = 0;
        T_EQ_INT(os_mkdirs(longp, 0755, NULL, 0), -1);
        T_EQ_INT(errno, ENAMETOOLONG);
        T_EQ_INT(os_mkparents(longp, 0755, NULL, 0), -1);
        T_EQ_INT(errno, ENAMETOOLONG);
        free(longp);
    }
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    T_CHECK(system(cmd) == 0);
}


/* json_decimal gives strtod's double bit for bit: fixed cases on both
 * sides of the fast path's limits, then random decimals shaped like
 * vocabulary scores and wider ones. */
static int same_as_strtod(const char *s)
{
    double a = 0, b = strtod(s, NULL);
    if (json_decimal(s, strlen(s), &a) != 0)
        return 0;
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Minor faults taken while writing 2 MB in 16 KB blocks of malloc. */
static long faults_writing_2mb(char **blocks)
{
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    for (int i = 0; i < 128; i++)
        if ((blocks[i] = malloc(16 << 10)))
            memset(blocks[i], i, 16 << 10);
    getrusage(RUSAGE_SELF, &b);
    return b.ru_minflt - a.ru_minflt;
}

/* Whether a mapping holding one of the blocks (2 MB of them each, carved
 * from the reserve) is advised as huge pages: smaps' VmFlags "hg" is the
 * advice itself, whatever pages the kernel could give (a fragmented host
 * falls back to 4 KB ones). Called with the blocks still allocated. */
static void check_reserve_huge(char **blocks, char **more)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f || access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0) {
        T_SKIP("no /proc/self/smaps or no transparent huge pages here: MADV_HUGEPAGE is refused");
        if (f)
            fclose(f);
        return;
    }
    char line[512];
    uintptr_t lo = 0, hi = 0;
    int holds = 0, huge = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2) {      /* a mapping's first line */
            lo = a;
            hi = b;
            holds = 0;
            for (int i = 0; i < 128 && !holds; i++)
                holds = ((uintptr_t)blocks[i] >= lo && (uintptr_t)blocks[i] < hi) ||
                        ((uintptr_t)more[i] >= lo && (uintptr_t)more[i] < hi);
        } else if (holds && !strncmp(line, "VmFlags:", 8) && strstr(line, " hg")) {
            huge = 1;
        }
    }
    fclose(f);
    T_CHECK(huge);
    if (!huge)
        fprintf(stderr, "no mapping of the reserved heap is advised as huge pages\n");
}

/* os_heap_reserve_size: none for a small store, the pruned recall's 4 or
 * 8 MB, the exact recall's eighth of the store, never 32 MB (glibc's
 * largest mmap threshold: a reserve that big would be an mmap of its own,
 * unmapped at its free, and reserve nothing) */
static void test_heap_reserve_size(void)
{
    const uint64_t mb = (uint64_t)1 << 20;
    T_CHECK(os_heap_reserve_size(0, 0) == 0 && os_heap_reserve_size(0, 1) == 0);
    T_CHECK(os_heap_reserve_size(64 * mb - 1, 1) == 0);
    T_CHECK(os_heap_reserve_size(64 * mb, 0) == 4 * mb);
    T_CHECK(os_heap_reserve_size(64 * mb, 1) == 8 * mb);        /* an eighth */
    T_CHECK(os_heap_reserve_size(20 * mb * 8, 0) == 4 * mb);
    T_CHECK(os_heap_reserve_size(20 * mb * 8, 1) == 20 * mb);
    T_CHECK(os_heap_reserve_size(216190976, 1) == 26 * mb);    /* s100.db: 25.8 MB up */
    T_CHECK(os_heap_reserve_size(21 * mb * 8, 1) == 22 * mb);   /* whole 2 MB pages */
    T_CHECK(os_heap_reserve_size(27 * mb * 8 + 8, 1) == 28 * mb);
    T_CHECK(os_heap_reserve_size(1024 * mb, 0) == 8 * mb);
    T_CHECK(os_heap_reserve_size(1024 * mb, 1) == 28 * mb);     /* capped */
    T_CHECK(os_heap_reserve_size(UINT64_MAX, 0) == 8 * mb);
    T_CHECK(os_heap_reserve_size(UINT64_MAX, 1) == 28 * mb);
    /* the exact recall's never less than the pruned one's, never 32 MB */
    for (uint64_t s = 0; s < 4096 * mb; s += 3 * mb + 12345) {
        size_t a = os_heap_reserve_size(s, 0), b = os_heap_reserve_size(s, 1);
        T_CHECK(b >= a && b < 32 * mb && b % (2 * mb) == 0);
    }
}

/* os_heap_reserve: the heap's pages faulted in up front stay malloc's, so
 * 2 MB of blocks written after it take next to no fault, where the same
 * before it take about one a 4 KB page (512); the block from a 2 MB
 * boundary, though the heap's top was anywhere. Last in the program: the
 * reserve changes malloc's settings for the rest of the process. */
static void test_heap_reserve(void)
{
    char *blocks[128];
    const char *pre = getenv("LD_PRELOAD");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    T_SKIP("a sanitizer's malloc is not glibc's: os_heap_reserve's mallopt does not reach it");
    return;
#endif
    if (pre && strstr(pre, "vgpreload")) {
        T_SKIP("under valgrind, whose malloc is not glibc's: os_heap_reserve's mallopt does not reach it");
        return;
    }
    long before = faults_writing_2mb(blocks);
    for (int i = 0; i < 128; i++)
        free(blocks[i]);
    /* the blocks' pages were trimmed or kept: either way, reserve 4 MB
     * more than they took and write twice as much as before */
    uintptr_t at = os_heap_reserve((size_t)8 << 20);
    long after = faults_writing_2mb(blocks);
    char *more[128];
    after += faults_writing_2mb(more);
#if defined(MADV_POPULATE_WRITE) && defined(MADV_HUGEPAGE)
    check_reserve_huge(blocks, more);
#endif
    for (int i = 0; i < 128; i++) {
        T_CHECK(blocks[i] && more[i]);
        free(blocks[i]);
        free(more[i]);
    }
#ifdef MADV_POPULATE_WRITE
    /* from a 2 MB boundary, so all of it can be huge pages (hook51) */
    T_CHECK(at && at % ((uintptr_t)2 << 20) == 0);
    if (!at || at % ((uintptr_t)2 << 20))
        fprintf(stderr, "the reserve began at %#lx, not at a 2 MB boundary\n", (unsigned long)at);
    T_CHECK(before >= 256);
    T_CHECK(after < 64);
    if (before < 256 || after >= 64)
        fprintf(stderr, "faults writing 2 MB: %ld before the reserve, %ld for 4 MB after\n",
                before, after);
#else
    T_SKIP("no MADV_POPULATE_WRITE here: os_heap_reserve is a no-op (%ld, %ld faults)", before, after);
#endif
}

static void test_json_decimal(void)
{
    static const char *const ok[] = {
        "0", "-0", "1", "-3.28450870514", "0.1", "0.000123", "1e22", "1e23", "9007199254740992",
        "9007199254740993", "12345678901234567890", "1.7976931348623157e308", "4.9e-324",
        "1e-400", "2.2250738585072011e-308", "0.30000000000000004", "123456789012345678e-5",
        "1E+2", "5e-22", "5e-23", "-0.0", "1.00000000000000000000000001",
    };
    static const char *const bad[] = { "", "-", "+1", "1.", ".5", "01", "1e", "1e+", "--1",
                                       "1x", "0x10", "nan", "inf", " 1" };
    double v;
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        if (!same_as_strtod(ok[i]))
            fprintf(stderr, "json_decimal(%s) differs from strtod\n", ok[i]);
        T_CHECK(same_as_strtod(ok[i]));
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        T_CHECK(json_decimal(bad[i], strlen(bad[i]), &v) == -1);
    /* n bounds the text: "1.5" read as "1." is refused, as "1" is 1 */
    T_CHECK(json_decimal("1.5", 2, &v) == -1);
    T_CHECK(json_decimal("1.5", 1, &v) == 0 && v == 1.0);
    uint64_t x = 88172645463325252ull;
    int differ = 0;
    for (int i = 0; i < 200000; i++) {
        char s[64];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int digits = 1 + (int)(x % 19), point = (int)((x >> 8) % (uint64_t)(digits + 1));
        unsigned long long mant = (x >> 16) % 10000000000000000000ull;
        char d[32];
        snprintf(d, sizeof d, "%019llu", mant);
        size_t k = 0;
        if (x >> 63)
            s[k++] = '-';
        const char *dd = d + 19 - digits;
        while (digits > 1 && *dd == '0')      /* no leading zero before the point */
            dd++, digits--;
        if (point >= digits)
            point = digits - 1;
        for (int j = 0; j < digits; j++) {
            s[k++] = dd[j];
            if (j == digits - 1 - point && point > 0)
                s[k++] = '.';
        }
        if ((x >> 40) % 4 == 0)
            k += (size_t)snprintf(s + k, sizeof s - k, "e%d", (int)((x >> 44) % 61) - 30);
        s[k] = 0;
        differ += !same_as_strtod(s);
    }
    T_CHECK(differ == 0);
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
    T_RUN(test_buf);
    T_RUN(test_utf8);
    T_RUN(test_time);
    T_RUN(test_stamp);
    T_RUN(test_hash);
    T_RUN(test_os);
    T_RUN(test_json_decimal);
    T_RUN(test_heap_reserve_size);
    T_RUN(test_heap_reserve);
    return T_DONE();
}
