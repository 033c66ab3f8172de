/*
 * dl.c: dlopen + dlsym of a table of functions (see dl.h).
 *
 * RTLD_NOW so that a library too old for one of the functions we call is
 * refused here, with its name, instead of failing at the call; RTLD_LOCAL
 * so that its symbols stay out of the global scope, where they could
 * shadow or be shadowed by another copy a host program links.
 */
#include "util/dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

void *dl_load(const char *soname, const char *pkg, const char *const *names,
              void **syms, size_t n, char *err, size_t errlen)
{
    void *h;
    const char *why, *so = strstr(soname, ".so");
    int nl = so ? (int)(so - soname) : (int)strlen(soname);   /* "libzip" */
    size_t i;

    for (i = 0; i < n; i++)
        syms[i] = NULL;
    dlerror();                                     /* clear a stale message */
    h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        why = dlerror();
        if (err && errlen)
            snprintf(err, errlen, "cannot load %.*s: %s; install %s", nl, soname,
                     why ? why : "unknown error", pkg);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        dlerror();
        syms[i] = dlsym(h, names[i]);
        if (!syms[i]) {
            why = dlerror();
            if (err && errlen)
                snprintf(err, errlen, "cannot load %.*s: %s (too old?); install %s",
                         nl, soname, why ? why : "no such symbol",
                         pkg);
            for (i = 0; i < n; i++)
                syms[i] = NULL;
            dlclose(h);
            return NULL;
        }
    }
    return h;
}
