/*
 * project.c: where a captured session belongs (cairn_project_of).
 *
 * A project must survive what people do to folders: work in a second git
 * worktree, cd into a subfolder of a monorepo, rename the checkout. So the
 * identity is the repository, not the folder: its remote URL when it has
 * one (the same on every clone and after a rename), else the folder of its
 * main worktree (the git "common dir" that every worktree shares). A
 * `.cairn-project` file anywhere above overrides both.
 *
 * Git's files are read directly: this runs in every Stop hook, and
 * forking git there would cost more than the whole save. Only the layout
 * git documents is followed: `.git` as a folder, or as a file holding
 * "gitdir: PATH" (worktrees, submodules), PATH/commondir pointing at the
 * shared folder, HEAD holding "ref: refs/heads/BRANCH", and the [remote]
 * sections of the common config.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cairn.h"

/* Reads the first line of a small file into out (trimmed). 1 if it held
 * something, 0 if missing or empty. */
static int read_first_line(const char *path, char *out, size_t n)
{
    char buf[4096];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    ssize_t k = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        k = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (k <= 0)
        return 0;
    buf[k] = '\0';
    char *s = buf;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    size_t len = strcspn(s, "\r\n");
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (!len || len >= n)
        return 0;
    memcpy(out, s, len);
    out[len] = '\0';
    return 1;
}

/* Copies src into dst when it fits whole; a cut path would name another
 * folder, so one that does not fit leaves dst empty. */
static void set(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len >= n)
        len = 0;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* dst = base + "/" + rel, or rel when it is absolute. 0 if too long. */
static int join(char *dst, size_t n, const char *base, const char *rel)
{
    int k = rel[0] == '/' ? snprintf(dst, n, "%s", rel)
                          : snprintf(dst, n, "%s/%s", strcmp(base, "/") ? base : "", rel);
    return k >= 0 && (size_t)k < n;
}

/* Canonical form of a path that exists (symlinks, "..") else as given. */
static void canon(char *p, size_t n)
{
    char *r = realpath(p, NULL);
    if (r) {
        if (strlen(r) < n)
            memcpy(p, r, strlen(r) + 1);
        free(r);
    }
}

/* Cuts the last component: "/a/b" -> "/a", "/a" -> "/". 0 at the root. */
static int parent(char *p)
{
    char *s = strrchr(p, '/');
    if (!s || (s == p && !p[1]))
        return 0;
    if (s == p)
        p[1] = '\0';
    else
        *s = '\0';
    return 1;
}

/* "https://user@github.com/u/r.git", "git@github.com:u/r.git" ->
 * "github.com/u/r". Local paths stay paths (minus ".git"). */
static void normalise_remote(const char *url, char *out, size_t n)
{
    const char *s = url, *scheme = strstr(url, "://");
    if (scheme)
        s = scheme + 3;
    const char *slash = strchr(s, '/'), *at = strchr(s, '@');
    if (at && (!slash || at < slash))
        s = at + 1;
    size_t k = 0;
    int scp = !scheme && s[0] != '/' && s[0] != '.';
    for (; *s && k + 1 < n; s++) {
        char c = *s;
        if (scp && c == ':') {      /* host:path (scp-like syntax) */
            c = '/';
            scp = 0;
        } else if (c == '/') {
            scp = 0;
        }
        out[k++] = c;
    }
    out[k] = '\0';
    while (k && out[k - 1] == '/')
        out[--k] = '\0';
    if (k > 4 && !strcmp(out + k - 4, ".git"))
        out[k - 4] = '\0';
}

/* The URL of remote "origin" in a git config file, else of the first
 * remote. 1 if found. */
static int read_remote(const char *config, char *out, size_t n)
{
    FILE *f = fopen(config, "re");
    char line[4096];
    int in_remote = 0, is_origin = 0, found = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '[') {
            in_remote = !strncmp(s, "[remote", 7);
            is_origin = in_remote && strstr(s, "\"origin\"") != NULL;
            continue;
        }
        if (!in_remote || strncmp(s, "url", 3))
            continue;
        char *v = s + 3;
        while (*v == ' ' || *v == '\t')
            v++;
        if (*v != '=')
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t len = strcspn(v, "\r\n");
        while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
            len--;
        if (!len || len >= n || (found && !is_origin))
            continue;
        memcpy(out, v, len);
        out[len] = '\0';
        found = 1;
        if (is_origin)
            break;
    }
    fclose(f);
    return found;
}

/* Fills the git fields from the folder `dir` holding a .git entry. */
static int git_info(const char *dir, struct cairn_project *o)
{
    char dotgit[PATH_MAX], gitdir[PATH_MAX], tmp[PATH_MAX], line[PATH_MAX];
    struct stat st;
    if (!join(dotgit, sizeof dotgit, dir, ".git") || lstat(dotgit, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        set(gitdir, sizeof gitdir, dotgit);
    } else if (S_ISREG(st.st_mode)) {
        if (!read_first_line(dotgit, line, sizeof line) || strncmp(line, "gitdir:", 7))
            return 0;
        const char *g = line + 7;
        while (*g == ' ')
            g++;
        if (!*g || !join(gitdir, sizeof gitdir, dir, g))
            return 0;
    } else {
        return 0;
    }
    canon(gitdir, sizeof gitdir);
    /* The common dir: shared by all worktrees of one repository. */
    char common[PATH_MAX];
    set(common, sizeof common, gitdir);
    if (join(tmp, sizeof tmp, gitdir, "commondir") &&
        read_first_line(tmp, line, sizeof line) && join(common, sizeof common, gitdir, line))
        canon(common, sizeof common);
    set(o->git_common_dir, sizeof o->git_common_dir, common);
    if (join(tmp, sizeof tmp, gitdir, "HEAD") && read_first_line(tmp, line, sizeof line) &&
        !strncmp(line, "ref: refs/heads/", 16))
        set(o->git_branch, sizeof o->git_branch, line + 16);
    if (join(tmp, sizeof tmp, common, "config"))
        read_remote(tmp, o->git_remote, sizeof o->git_remote);
    return 1;
}

int cairn_project_of(const char *dir, struct cairn_project *o)
{
    char cur[PATH_MAX], name[1024];
    int have_name = 0;
    if (!o)
        return CAIRN_INVALID;
    memset(o, 0, sizeof *o);
    if (!dir || !*dir || strlen(dir) >= sizeof cur)
        return CAIRN_INVALID;
    set(cur, sizeof cur, dir);
    size_t len = strlen(cur);
    while (len > 1 && cur[len - 1] == '/')
        cur[--len] = '\0';

    /* A .cairn-project file in this folder or any above wins. */
    char walk[PATH_MAX], f[PATH_MAX];
    memcpy(walk, cur, len + 1);
    do {
        if (join(f, sizeof f, walk, ".cairn-project") && read_first_line(f, name, sizeof name)) {
            have_name = 1;
            set(o->root, sizeof o->root, walk);
            break;
        }
    } while (walk[0] == '/' && parent(walk));

    /* The nearest .git above. */
    memcpy(walk, cur, len + 1);
    int in_git = 0;
    do {
        if (git_info(walk, o)) {
            in_git = 1;
            break;
        }
    } while (walk[0] == '/' && parent(walk));
    if (in_git && !have_name)
        set(o->root, sizeof o->root, walk);

    if (have_name) {
        set(o->name, sizeof o->name, name);
    } else if (in_git && o->git_remote[0]) {
        normalise_remote(o->git_remote, o->name, sizeof o->name);
    } else if (in_git) {
        /* No remote: the main worktree's folder (the common dir's parent
         * when it is a ".git" folder; a bare repository names itself). */
        set(o->name, sizeof o->name, o->git_common_dir);
        size_t k = strlen(o->name);
        if (k > 5 && !strcmp(o->name + k - 5, "/.git"))
            o->name[k - 5] = '\0';
    }
    if (!o->name[0])
        set(o->name, sizeof o->name, cur);
    return CAIRN_OK;
}
