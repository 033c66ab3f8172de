/*
 * t_glob.h: the vault glob syntax by its definition (header-only), for
 * test_vault_walk and fuzz_glob to check walk_glob against: every split
 * tried, so exponential, for short inputs only. Classes are [ab] and
 * [!ab] (no ranges, a ']' always closes).
 *   '*' any run without '/'; '**' any run; '**' + '/' nothing or a run
 *   ending in '/'; '?' one byte but '/'; a class one byte but '/'.
 */
#ifndef CAIRN_T_GLOB_H
#define CAIRN_T_GLOB_H

#include <string.h>

static int ref_glob(const char *g, const char *s)
{
    if (!*g)
        return !*s;
    if (*g == '*') {
        int k = 0;
        while (g[k] == '*')
            k++;
        const char *r = g + k;
        if (k > 1 && *r == '/') {
            if (ref_glob(r + 1, s))
                return 1;
            for (size_t i = 0; s[i]; i++)
                if (s[i] == '/' && ref_glob(r + 1, s + i + 1))
                    return 1;
            return 0;
        }
        for (size_t i = 0;; i++) {
            if (ref_glob(r, s + i))
                return 1;
            if (!s[i] || (k == 1 && s[i] == '/'))
                return 0;
        }
    }
    if (!*s)
        return 0;
    if (*g == '?')
        return *s != '/' && ref_glob(g + 1, s + 1);
    if (*g == '[') {
        const char *e = strchr(g, ']');
        if (!e)
            return *g == *s && ref_glob(g + 1, s + 1);   /* a literal '[' */
        int neg = g[1] == '!';
        int in = memchr(g + 1 + neg, *s, (size_t)(e - g - 1 - neg)) != NULL;
        return *s != '/' && in != neg && ref_glob(e + 1, s + 1);
    }
    return *g == *s && ref_glob(g + 1, s + 1);
}

#endif
