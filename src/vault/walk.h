/*
 * walk.h: the Markdown files of a vault's folder, with .gitignore-style
 * excludes (docs/VAULTS.md).
 *
 * The walk follows no symbolic link (a link may leave the folder or make
 * a loop), skips names that start with a dot (.git, .obsidian, .trash)
 * and takes regular files named *.md or *.markdown. Each folder's
 * .gitignore applies below it, as git reads it, and the vault's own
 * globs (--exclude) apply from the root. What the walk supports of the
 * syntax: blank lines and # comments, `!` to take a path back, a trailing
 * `/` for folders only, a `/` inside or in front to anchor the pattern at
 * its file's folder (else it matches a name at any depth), `*`, `?`,
 * `**` and `[...]` classes. An excluded folder is not entered.
 */
#ifndef CAIRN_VAULT_WALK_H
#define CAIRN_VAULT_WALK_H

#include <stddef.h>
#include <stdint.h>

#define WALK_MAX_DEPTH     64
#define WALK_MAX_RULES     2048
#define WALK_MAX_PATTERN   256
#define WALK_MAX_IGNORE    (64 * 1024)   /* bytes of one .gitignore read */

struct walk_file {
    char   *path;            /* relative to the root, '/' between parts */
    int64_t size, mtime;     /* mtime in ns */
};

struct walk_rule;

struct walk {
    struct walk_file *f;  int n, cap;
    struct walk_rule *r;  int nr, cr;
    int64_t excluded;        /* files and folders left out by a rule */
    int64_t odd;             /* names that are not UTF-8, too deep or too long */
    int     truncated;       /* stopped at max_files */
    int     nomem;
};

/* Walks root (absolute) with the extra globs excludes (one a line, may be
 * NULL), up to max_files Markdown files, sorted by path (strcmp). Returns
 * 0, -1 on no memory, or errno of the root's opendir. */
int  walk_vault(const char *root, const char *excludes, int max_files, struct walk *w);
void walk_free(struct walk *w);
/* 1 when name matches glob (the syntax above, '/' matched only by '**'). */
int  walk_glob(const char *glob, const char *name);
/* Checks a --exclude list: NULL when fine, else a static reason. */
const char *walk_check_excludes(const char *excludes);

#endif
