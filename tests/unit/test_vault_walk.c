/*
 * test_vault_walk.c: the vault folder walk (src/vault/walk.c): the glob
 * matcher of .gitignore rules and --exclude, anchoring, folders only,
 * negation, nested .gitignore files, dot-names and symbolic links
 * skipped, the file cap, and the --exclude checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "t_glob.h"
#include "vault/walk.h"

static void test_glob(void)
{
    T_CHECK(walk_glob("*.md", "a.md"));
    T_CHECK(!walk_glob("*.md", "a.txt"));
    T_CHECK(!walk_glob("*.md", "dir/a.md"));          /* '*' stops at '/' */
    T_CHECK(walk_glob("**/a.md", "a.md"));
    T_CHECK(walk_glob("**/a.md", "x/y/a.md"));
    T_CHECK(walk_glob("docs/**", "docs/x/y.md"));
    T_CHECK(walk_glob("a?c", "abc"));
    T_CHECK(!walk_glob("a?c", "a/c"));
    T_CHECK(walk_glob("[a-c]x", "bx"));
    T_CHECK(!walk_glob("[!a-c]x", "bx"));
    T_CHECK(walk_glob("[x", "[x"));                   /* no ']': a literal */
    /* a '*' after a '**' (the first matcher lost the '**' there) */
    T_CHECK(walk_glob("docs/**/*.tmp", "docs/a/b.tmp"));
    T_CHECK(walk_glob("docs/**/*.tmp", "docs/b.tmp"));
    T_CHECK(walk_glob("**/*.md", "x/y/z.md"));
    T_CHECK(walk_glob("**/a*/c", "x/ab/a/c"));
    T_CHECK(!walk_glob("**/*.md", "x/y/z.mdx"));
    T_CHECK(walk_glob("a/**/b", "a/b"));
    T_CHECK(walk_glob("a/**/b", "a/x/y/b"));
    T_CHECK(!walk_glob("a/**/b", "a/xb"));            /* '**' + '/' ends on a folder */
    /* a hostile pattern costs pattern x name, not more */
    char pat[200], name[4000];
    for (int i = 0; i < 199; i++)
        pat[i] = i % 2 ? '*' : 'a';
    pat[199] = 0;
    memset(name, 'a', sizeof name - 2);
    name[sizeof name - 2] = 'b';
    name[sizeof name - 1] = 0;
    T_CHECK(!walk_glob(pat, name));
}

/* walk_glob against its definition on random patterns and names */
static void test_glob_random(void)
{
    static const char *const gp[] = { "a", "b", "/", "*", "**", "?", "[ab]", "[!a]", "**/" };
    static const char sp[] = "ab/";
    unsigned seed = 5;
    int yes = 0;
    for (int r = 0; r < 50000; r++) {
        char g[64] = "", s[16];
        int kg = 1 + (int)(rand_r(&seed) % 5), ks = (int)(rand_r(&seed) % 9);
        for (int i = 0; i < kg; i++)
            strcat(g, gp[rand_r(&seed) % (sizeof gp / sizeof *gp)]);
        for (int i = 0; i < ks; i++)
            s[i] = sp[rand_r(&seed) % 3];
        s[ks] = 0;
        int want = ref_glob(g, s);
        yes += want;
        if (walk_glob(g, s) != want) {
            fprintf(stderr, "walk_glob(\"%s\", \"%s\") != %d\n", g, s, want);
            T_CHECK(0);
            return;
        }
    }
    T_CHECK(yes > 1000);
}

static void put(const char *root, const char *rel, const char *text)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = 0;
        mkdir(p, 0700);
        *s = '/';
    }
    FILE *f = fopen(p, "w");
    T_CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int has(const struct walk *w, const char *path)
{
    for (int i = 0; i < w->n; i++)
        if (!strcmp(w->f[i].path, path))
            return 1;
    return 0;
}

static void test_walk(void)
{
    char root[] = "/tmp/cairn-walk-XXXXXX";
    T_CHECK(mkdtemp(root) != NULL);
    put(root, "a.md", "# a\n");
    put(root, "b.markdown", "# b\n");
    put(root, "c.txt", "not markdown\n");
    put(root, ".hidden.md", "# dot\n");
    put(root, ".obsidian/x.md", "# dot folder\n");
    put(root, "build/out.md", "# built\n");
    put(root, "docs/keep.md", "# keep\n");
    put(root, "docs/drop.md", "# drop\n");
    put(root, "docs/sub/deep.md", "# deep\n");
    put(root, "docs/sub/nope.md", "# nope\n");
    put(root, "notes/tmp.md", "# tmp\n");
    put(root, "notes/important.md", "# important\n");
    put(root, ".gitignore", "# comment\nbuild/\n/docs/drop.md\nnotes/*.md\n!notes/important.md\n");
    put(root, "docs/sub/.gitignore", "nope.md\n");
    char link[4096], target[4096];
    snprintf(link, sizeof link, "%s/link.md", root);
    snprintf(target, sizeof target, "%s/a.md", root);
    T_EQ_INT(symlink(target, link), 0);

    struct walk w;
    T_EQ_INT(walk_vault(root, "*.markdown", 1000, &w), 0);
    T_CHECK(has(&w, "a.md"));
    T_CHECK(!has(&w, "b.markdown"));                 /* --exclude */
    T_CHECK(!has(&w, "c.txt"));
    T_CHECK(!has(&w, ".hidden.md"));
    T_CHECK(!has(&w, ".obsidian/x.md"));
    T_CHECK(!has(&w, "build/out.md"));               /* a folder rule */
    T_CHECK(has(&w, "docs/keep.md"));
    T_CHECK(!has(&w, "docs/drop.md"));               /* anchored */
    T_CHECK(has(&w, "docs/sub/deep.md"));
    T_CHECK(!has(&w, "docs/sub/nope.md"));           /* the nested .gitignore */
    T_CHECK(!has(&w, "notes/tmp.md"));
    T_CHECK(has(&w, "notes/important.md"));          /* taken back by '!' */
    T_CHECK(!has(&w, "link.md"));                    /* no link followed */
    T_EQ_INT(w.n, 4);
    for (int i = 1; i < w.n; i++)
        T_CHECK(strcmp(w.f[i - 1].path, w.f[i].path) < 0);
    T_CHECK(w.excluded >= 5);
    T_CHECK(!w.truncated);
    walk_free(&w);

    T_EQ_INT(walk_vault(root, NULL, 2, &w), 0);     /* the cap */
    T_EQ_INT(w.n, 2);
    T_CHECK(w.truncated);
    walk_free(&w);

    char missing[4200];
    snprintf(missing, sizeof missing, "%s/none", root);
    T_CHECK(walk_vault(missing, NULL, 10, &w) > 0);  /* errno of the root */

    T_CHECK(walk_check_excludes("a\nb/**") == NULL);
    T_CHECK(walk_check_excludes("a\x01") != NULL);
    char big[300];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    T_CHECK(walk_check_excludes(big) != NULL);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    T_EQ_INT(system(cmd), 0);
}

int main(void)
{
    T_RUN(test_glob);
    T_RUN(test_glob_random);
    T_RUN(test_walk);
    return T_DONE();
}
