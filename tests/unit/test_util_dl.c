/*
 * test_util_dl.c: dl_load, the run-time loader of the optional libraries
 * (libcurl, OpenBLAS, libzip): a library that is there gives working
 * functions; a missing library, or one without a symbol we need, gives
 * NULL, all-NULL slots and a message naming it and the package to install.
 */
#include "t.h"
#include "util/dl.h"

#include <string.h>

static void test_found(void)
{
    static const char *const names[] = {"cos", "sqrt"};
    void *syms[2] = {NULL, NULL};
    char err[256] = "";
    void *h = dl_load("libm.so.6", "libc6", names, syms, 2, err, sizeof(err));

    T_CHECK(h != NULL);
    T_CHECK(syms[0] != NULL && syms[1] != NULL);
    if (syms[1]) {
        double (*sq)(double) = (__typeof__(sq))syms[1];
        T_CHECK(sq(16.0) == 4.0);
    }
    T_EQ_STR(err, "");
}

static void test_missing_library(void)
{
    static const char *const names[] = {"nothing"};
    void *syms[1] = {(void *)names};
    char err[256] = "";

    T_CHECK(dl_load("libcairn-no-such.so.7", "libcairn-none7", names, syms, 1,
                    err, sizeof(err)) == NULL);
    T_CHECK(syms[0] == NULL);
    T_CHECK(strncmp(err, "cannot load libcairn-no-such: ", 30) == 0);
    T_CHECK(strstr(err, "libcairn-no-such.so.7") != NULL);   /* the loader's reason */
    T_CHECK(strstr(err, "; install libcairn-none7") != NULL);
    /* No message buffer: still a clean NULL. */
    T_CHECK(dl_load("libcairn-no-such.so.7", "x", names, syms, 1, NULL, 0) == NULL);
}

static void test_missing_symbol(void)
{
    static const char *const names[] = {"cos", "cairn_no_such_function"};
    void *syms[2] = {NULL, NULL};
    char err[256] = "";

    T_CHECK(dl_load("libm.so.6", "libc6", names, syms, 2, err, sizeof(err)) == NULL);
    T_CHECK(syms[0] == NULL && syms[1] == NULL);
    T_CHECK(strncmp(err, "cannot load libm: ", 18) == 0);
    T_CHECK(strstr(err, "cairn_no_such_function") != NULL);
    T_CHECK(strstr(err, "install libc6") != NULL);
}

int main(void)
{
    T_RUN(test_found);
    T_RUN(test_missing_library);
    T_RUN(test_missing_symbol);
    return T_DONE();
}
