/*
 * hash.c: a 64-bit non-cryptographic hash for content deduplication.
 *
 * FNV-1a over 8-byte words with a final avalanche (splitmix64). Not a
 * security boundary: it only decides whether a message without an id was
 * already stored, and collisions there cost one skipped duplicate check.
 */
#include <string.h>
#include "util/hash.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

uint64_t hash64(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *s = p;
    uint64_t h = FNV1A64_BASIS ^ mix(seed + n);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * FNV1A64_PRIME;
        h ^= h >> 29;
        s += 8;
        n -= 8;
    }
    while (n--) {
        h = (h ^ *s++) * FNV1A64_PRIME;
    }
    return mix(h);
}
