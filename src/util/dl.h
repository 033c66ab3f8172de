/*
 * dl.h: optional libraries loaded at run time, on first use.
 *
 * libcurl (model downloads), OpenBLAS (the encoder's matrix products) and
 * libzip (.zip exports) are not linked into cairn: their load-time
 * constructors (TLS, LDAP and Kerberos behind libcurl; OpenBLAS's thread
 * pool and buffers) cost ~12 ms per process, which every `cairn hook`
 * would pay although it never uses them. The code that needs one calls
 * dl_load once (under pthread_once) and keeps the resolved functions in a
 * table of function pointers; the headers are still used at build time
 * for types and constants. zlib (a download's .tar.gz) and libpcre2-8
 * (masking secrets on a write) too since hook53: no constructors of note,
 * but mapping and relocating each cost a hook ~0.3 ms of CPU and 7 page
 * faults on the AVX-512 host, and the prompt hook's path uses neither.
 */
#ifndef CAIRN_UTIL_DL_H
#define CAIRN_UTIL_DL_H

#include <stddef.h>

/*
 * Opens the shared library soname (e.g. "libzip.so.4") and resolves the n
 * symbols names[0..n) into syms[0..n). Returns the handle (never closed:
 * the functions stay in use for the life of the process), or NULL with a
 * message in err naming the library, the loader's reason and the Debian
 * package that provides it (pkg). On NULL every syms[i] is NULL.
 */
void *dl_load(const char *soname, const char *pkg, const char *const *names,
              void **syms, size_t n, char *err, size_t errlen);

#endif
