/*
 * sha256.h: SHA-256 (FIPS 180-4), for checking downloaded model files
 * against their published digests before they are used.
 */
#ifndef CAIRN_SHA256_H
#define CAIRN_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
    uint32_t h[8];
    uint64_t len;            /* bytes hashed so far */
    unsigned char blk[64];   /* pending partial block */
    size_t   nblk;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
void sha256_final(struct sha256 *s, unsigned char out[32]);
/* out: 64 lowercase hex digits + NUL. */
void sha256_hex(const unsigned char dig[32], char out[65]);
/* Digest of a whole file as hex; optional size out. Returns 0, or -1 (errno
 * set) if the file cannot be read. */
int sha256_file(const char *path, char out[65], uint64_t *size);

#endif
