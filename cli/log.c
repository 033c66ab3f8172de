/*
 * log.c: ~/.cairn/cairn.log, where the hooks report what went wrong.
 *
 * Hooks run inside Claude Code with nobody watching their output, and must
 * never print: a failure is one line here (UTC time, what, why) and
 * `cairn doctor` shows the last ones. The file is created 0600 in a 0700
 * folder, like the store, since a reason can quote a path or a session.
 * It is kept small: past LOG_MAX bytes it is moved to cairn.log.1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define LOG_MAX ((off_t)1 << 20)

int cli_log_path(char *out, size_t n)
{
    const char *env = getenv("CAIRN_LOG"), *home = getenv("HOME");
    int k;
    if (env && *env)
        k = snprintf(out, n, "%s", env);
    else if (home && *home)
        k = snprintf(out, n, "%s/.cairn/cairn.log", home);
    else
        return -1;
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

int cli_open_regular(const char *path, int flags)
{
    struct stat st;
    /* O_NONBLOCK: opening a FIFO blocks until its other end is opened, and
     * a FIFO put at the log's path held every hook for its 30 s alarm.
     * With it the open fails (ENXIO, no reader) or returns at once, and
     * anything but a regular file is refused. */
    int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

void cli_log(const char *fmt, ...)
{
    char path[4096], line[2048], when[32];
    if (cli_log_path(path, sizeof path))
        return;
    /* the folder, 0700, if it is the default one */
    char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        *slash = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            *slash = '/';
            return;
        }
        *slash = '/';
    }
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size > LOG_MAX) {
        char old[4200];
        snprintf(old, sizeof old, "%s.1", path);
        rename(path, old);
    }
    cairn_format_time((int64_t)time(NULL), 1, when, sizeof when);
    int k = snprintf(line, sizeof line, "%s ", when);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + k, sizeof line - (size_t)k - 1, fmt, ap);
    va_end(ap);
    /* one line per event, whatever the reason held */
    for (char *p = line + k; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    size_t len = strlen(line);
    line[len++] = '\n';
    int fd = cli_open_regular(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW);
    if (fd < 0)
        return;
    ssize_t w = write(fd, line, len);
    (void)w;
    close(fd);
}
