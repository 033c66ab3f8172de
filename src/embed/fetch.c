/*
 * fetch.c: the model downloader (libcurl) and the npm tarball reader
 * (zlib + a minimal ustar parser); the interface is in registry.h.
 *
 * A download goes to DEST.part, which survives a failure so the next try
 * resumes it with a Range request; a transfer cut in the middle is resumed
 * at once, up to FETCH_TRIES times. Only when the whole file is there and
 * its size and SHA-256 equal the pinned ones is it renamed to DEST; a file
 * that does not match is deleted, never used. Only http and https are
 * allowed, also across redirects (the Hugging Face hub redirects to a CDN).
 *
 * libcurl is not linked: it is dlopen'ed ("libcurl.so.4") at the first
 * download, because its dependencies' constructors (TLS, LDAP, Kerberos)
 * cost ~5 ms at every process start and only `cairn model pull` needs it.
 * <curl/curl.h> still gives the types and constants; the functions come
 * from the table fc.
 */
#include "embed/registry.h"

#include "util/dl.h"
#include "util/sha256.h"
#include "embed/common.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FETCH_TRIES      5
#define TAR_MAX_FILE     ((uint64_t)2 << 30)

struct xfer {
    FILE *f;
    uint64_t have;             /* bytes in the .part file before this try */
    uint64_t total;
    embed_reg_progress_fn cb;
    void *ud;
    const char *label;
    int write_failed;
};

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t w = fwrite(p, sz, n, x->f);

    if (w != n)
        x->write_failed = 1;
    return w * sz;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow)
{
    struct xfer *x = ud;
    uint64_t total = x->total ? x->total : (dltotal > 0 ? x->have + (uint64_t)dltotal : 0);

    (void)ultotal;
    (void)ulnow;
    if (x->cb)
        x->cb(x->ud, x->label, x->have + (uint64_t)dlnow, total);
    return 0;
}

/* The libcurl functions we call, resolved once by fc_init. */
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
} fc;
static int fc_ok;
static char fc_err[400];
static pthread_once_t fc_once = PTHREAD_ONCE_INIT;

static void fc_init(void)
{
    static const char *const names[] = {
        "curl_global_init", "curl_easy_init", "curl_easy_setopt", "curl_easy_perform",
        "curl_easy_getinfo", "curl_easy_cleanup", "curl_easy_strerror",
    };
    void *sym[7];

    if (!dl_load("libcurl.so.4", "libcurl4", names, sym, 7, fc_err, sizeof(fc_err)))
        return;
    /* dlsym gives object pointers; POSIX guarantees they convert. */
    fc.global_init = (__typeof__(fc.global_init))sym[0];
    fc.easy_init = (__typeof__(fc.easy_init))sym[1];
    fc.easy_setopt = (__typeof__(fc.easy_setopt))sym[2];
    fc.easy_perform = (__typeof__(fc.easy_perform))sym[3];
    fc.easy_getinfo = (__typeof__(fc.easy_getinfo))sym[4];
    fc.easy_cleanup = (__typeof__(fc.easy_cleanup))sym[5];
    fc.easy_strerror = (__typeof__(fc.easy_strerror))sym[6];
    if (fc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(fc_err, sizeof(fc_err), "libcurl could not start");
        return;
    }
    fc_ok = 1;
}

/* Loads and starts libcurl once per process; 0, or -1 with fc_err set. */
static int curl_ready(void)
{
    pthread_once(&fc_once, fc_init);
    return fc_ok ? 0 : -1;
}

static uint64_t file_size(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* fopen(path, mode) for writing, but never through a symlink: the models
 * folder is the user's, and a link planted at DEST.part (or at a file the
 * archive holds) must not make a download write wherever it points. */
FILE *embed_open_write(const char *path, int flags, const char *mode)
{
    int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, mode) : NULL;
    if (!f && fd >= 0)
        close(fd);
    return f;
}

/* One transfer attempt, appending to part from its current size. */
static CURLcode try_once(const char *url, const char *part, struct xfer *x,
                         long *http, char *cerr)
{
    CURL *c = fc.easy_init();
    CURLcode rc;

    if (!c)
        return CURLE_OUT_OF_MEMORY;
    x->have = file_size(part);
    x->f = embed_open_write(part, O_WRONLY | O_CREAT | O_APPEND, "ab");
    if (!x->f) {
        int e = errno;                             /* says why, for the caller */
        x->write_failed = 1;
        fc.easy_cleanup(c);
        errno = e;
        return CURLE_WRITE_ERROR;
    }
    cerr[0] = 0;
    fc.easy_setopt(c, CURLOPT_URL, url);
    fc.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    fc.easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
#if LIBCURL_VERSION_NUM >= 0x075500
    fc.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    fc.easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
    fc.easy_setopt(c, CURLOPT_FAILONERROR, 1L);
    fc.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 20L);
    fc.easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);      /* stalled 60 s: cut */
    fc.easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
    fc.easy_setopt(c, CURLOPT_USERAGENT, "cairn-model-fetch");
    fc.easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    fc.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    fc.easy_setopt(c, CURLOPT_WRITEDATA, x);
    fc.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    fc.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    fc.easy_setopt(c, CURLOPT_XFERINFODATA, x);
    if (x->have > 0)
        fc.easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)x->have);
    rc = fc.easy_perform(c);
    *http = 0;
    fc.easy_getinfo(c, CURLINFO_RESPONSE_CODE, http);
    if (fclose(x->f) != 0)
        x->write_failed = 1;
    x->f = NULL;
    fc.easy_cleanup(c);
    return rc;
}

int embed_fetch(const char *url, const char *dest, uint64_t size, const char *sha256,
                embed_reg_progress_fn cb, void *ud, const char *label,
                char *err, size_t errlen)
{
    char part[PATH_MAX], cerr[CURL_ERROR_SIZE + 1], hex[65];
    struct xfer x;
    uint64_t got;
    int tries;

    if ((size_t)snprintf(part, sizeof(part), "%s.part", dest) >= sizeof(part)) {
        embed_errf(err, errlen, "path too long");
        return -1;
    }
    if (curl_ready() != 0) {
        embed_errf(err, errlen, "%s", fc_err);
        return -1;
    }
    memset(&x, 0, sizeof(x));
    x.total = size;
    x.cb = cb;
    x.ud = ud;
    x.label = label ? label : dest;
    if (size > 0 && file_size(part) > size)
        unlink(part);                              /* longer than it can be */
    for (tries = 0; tries < FETCH_TRIES; tries++) {
        long http = 0;
        CURLcode rc;

        if (size > 0 && file_size(part) == size)
            break;                                 /* a finished earlier try */
        rc = try_once(url, part, &x, &http, cerr);
        if (x.write_failed) {
            embed_errf(err, errlen, "cannot write %s: %s", part, strerror(errno));
            return -1;
        }
        if (rc == CURLE_OK)
            break;
        if (rc == CURLE_RANGE_ERROR || http == 416) {
            /* The server ignores or refuses our Range: start over. */
            unlink(part);
            continue;
        }
        if (rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR ||
            rc == CURLE_GOT_NOTHING || rc == CURLE_OPERATION_TIMEDOUT ||
            rc == CURLE_SEND_ERROR)
            continue;                              /* cut: resume */
        if (rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_CONNECT ||
            rc == CURLE_COULDNT_RESOLVE_PROXY) {
            embed_errf(err, errlen, "cannot reach %s (offline?): %s", url,
                  cerr[0] ? cerr : fc.easy_strerror(rc));
            return -1;
        }
        if (rc == CURLE_HTTP_RETURNED_ERROR) {
            embed_errf(err, errlen, "%s: HTTP %ld", url, http);
            return -1;
        }
        embed_errf(err, errlen, "%s: %s", url, cerr[0] ? cerr : fc.easy_strerror(rc));
        return -1;
    }
    if (tries == FETCH_TRIES) {
        embed_errf(err, errlen, "%s: the connection kept breaking (%d tries); run the "
              "command again to resume", url, FETCH_TRIES);
        return -1;
    }
    got = file_size(part);
    if (size > 0 && got != size) {
        unlink(part);
        embed_errf(err, errlen, "%s: got %llu bytes, expected %llu; the file was deleted",
              x.label, (unsigned long long)got, (unsigned long long)size);
        return -1;
    }
    if (sha256) {
        if (sha256_file(part, hex, NULL) != 0) {
            embed_errf(err, errlen, "cannot read %s: %s", part, strerror(errno));
            return -1;
        }
        if (strcmp(hex, sha256) != 0) {
            unlink(part);
            embed_errf(err, errlen, "%s: checksum mismatch (sha256 %.16s..., expected %.16s...); "
                  "the file was deleted and not used", x.label, hex, sha256);
            return -1;
        }
    }
    if (rename(part, dest) != 0) {
        embed_errf(err, errlen, "cannot rename %s: %s", part, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- .tar.gz ------------------------------------------------------------ */

static uint64_t octal(const char *p, size_t n)
{
    uint64_t v = 0;
    size_t i;

    for (i = 0; i < n && (p[i] == ' ' || p[i] == 0); i++)
        ;
    for (; i < n && p[i] >= '0' && p[i] <= '7'; i++)
        v = v * 8 + (uint64_t)(p[i] - '0');
    return v;
}

/* zlib, like libcurl, is loaded on first use: only a model's download
 * unpacks a .tar.gz, and a linked libz.so cost every process its mapping
 * and relocation, every prompt hook included (~0.3 ms of CPU and 7 page
 * faults a process on the AVX-512 host; bench/README.md, "The hook at
 * 100,000", issue 23, hook53). */
static struct {
    gzFile (*dopen)(int, const char *);
    int (*read)(gzFile, voidp, unsigned);
    int (*close)(gzFile);
} fz;
static int fz_ok;
static char fz_err[400];
static pthread_once_t fz_once = PTHREAD_ONCE_INIT;

static void fz_init(void)
{
    static const char *const names[] = { "gzdopen", "gzread", "gzclose" };
    void *sym[3];

    if (!dl_load("libz.so.1", "zlib1g", names, sym, 3, fz_err, sizeof(fz_err)))
        return;
    fz.dopen = (__typeof__(fz.dopen))sym[0];
    fz.read = (__typeof__(fz.read))sym[1];
    fz.close = (__typeof__(fz.close))sym[2];
    fz_ok = 1;
}

static int gz_skip(gzFile g, uint64_t n)
{
    char tmp[4096];

    while (n > 0) {
        int want = n > sizeof(tmp) ? (int)sizeof(tmp) : (int)n;
        if (fz.read(g, tmp, (unsigned)want) != want)
            return -1;
        n -= (uint64_t)want;
    }
    return 0;
}

int embed_untgz(const char *tgz, const char *prefix, const char *dir,
                char *err, size_t errlen)
{
    unsigned char h[512];
    char longname[1024] = "";
    int count = 0, rc = -1;

    pthread_once(&fz_once, fz_init);
    if (!fz_ok) {
        embed_errf(err, errlen, "%s", fz_err);
        return -1;
    }
    int gfd = open(tgz, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    gzFile g = gfd >= 0 ? fz.dopen(gfd, "rb") : NULL;
    if (!g) {
        if (gfd >= 0)
            close(gfd);
        embed_errf(err, errlen, "cannot open %s", tgz);
        return -1;
    }
    for (;;) {
        char name[512], path[PATH_MAX];
        const char *base;
        uint64_t size, pad;
        int type, k, zero = 1;

        k = fz.read(g, h, sizeof(h));
        if (k == 0)
            break;                                  /* no end blocks: accept */
        if (k != (int)sizeof(h)) {
            embed_errf(err, errlen, "%s: truncated archive", tgz);
            goto out;
        }
        for (k = 0; k < 512 && zero; k++)
            zero = h[k] == 0;
        if (zero)
            break;                                  /* end of archive */
        size = octal((const char *)h + 124, 12);
        type = h[156];
        pad = (512 - size % 512) % 512;
        if (size > TAR_MAX_FILE) {
            embed_errf(err, errlen, "%s: entry too large", tgz);
            goto out;
        }
        if (type == 'L') {                          /* GNU long name */
            size_t n = size < sizeof(longname) - 1 ? (size_t)size : sizeof(longname) - 1;
            if (fz.read(g, longname, (unsigned)n) != (int)n ||
                gz_skip(g, size - n + pad) != 0) {
                embed_errf(err, errlen, "%s: truncated archive", tgz);
                goto out;
            }
            longname[n] = 0;
            continue;
        }
        if (longname[0]) {
            /* names longer than ours are not files we want: keep a
             * bounded copy (the prefix check below refuses it) */
            size_t ln = strnlen(longname, sizeof(name) - 1);
            memcpy(name, longname, ln);
            name[ln] = 0;
            longname[0] = 0;
        } else if (memcmp(h + 257, "ustar", 5) == 0 && h[345]) {
            snprintf(name, sizeof(name), "%.155s/%.100s", (const char *)h + 345,
                     (const char *)h);
        } else {
            snprintf(name, sizeof(name), "%.100s", (const char *)h);
        }
        base = strrchr(name, '/');
        base = base ? base + 1 : name;
        if ((type != '0' && type != 0) || strncmp(name, prefix, strlen(prefix)) != 0 ||
            strstr(name, "..") || name[0] == '/' || !base[0] || base[0] == '.') {
            if (gz_skip(g, size + pad) != 0) {
                embed_errf(err, errlen, "%s: truncated archive", tgz);
                goto out;
            }
            continue;
        }
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, base) >= sizeof(path)) {
            embed_errf(err, errlen, "path too long");
            goto out;
        }
        {
            FILE *f = embed_open_write(path, O_WRONLY | O_CREAT | O_TRUNC, "wb");
            char buf[65536];
            uint64_t left = size;

            if (!f) {
                embed_errf(err, errlen, "cannot create %s: %s", path, strerror(errno));
                goto out;
            }
            while (left > 0) {
                int want = left > sizeof(buf) ? (int)sizeof(buf) : (int)left;
                if (fz.read(g, buf, (unsigned)want) != want ||
                    fwrite(buf, 1, (size_t)want, f) != (size_t)want) {
                    fclose(f);
                    embed_errf(err, errlen, "%s: truncated archive or write error", tgz);
                    goto out;
                }
                left -= (uint64_t)want;
            }
            if (fclose(f) != 0 || gz_skip(g, pad) != 0) {
                embed_errf(err, errlen, "%s: write error or truncated archive", tgz);
                goto out;
            }
        }
        count++;
    }
    rc = count;
out:
    fz.close(g);
    return rc;
}
