/*
 * hash.h: the library's non-cryptographic hashes (util/hash.c).
 *
 * fnv1a64 is plain 64-bit FNV-1a, byte by byte. Its values are stored or
 * shown (MCP save ids, the policy hash in eval reports), so it must never
 * change; chain calls by passing the previous result as h, starting from
 * FNV1A64_BASIS. It is inline because the capture and tokenizer hash maps
 * call it once per lookup.
 */
#ifndef CAIRN_UTIL_HASH_H
#define CAIRN_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A64_BASIS 0xcbf29ce484222325ULL
#define FNV1A64_PRIME 0x100000001b3ULL

static inline uint64_t fnv1a64(const void *p, size_t n, uint64_t h)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * FNV1A64_PRIME;
    return h;
}

/* FNV-1a over 8-byte words with a final avalanche, for content dedup
 * (store/ingest.c) and cache checks: stored, so never changes either. */
uint64_t hash64(const void *p, size_t n, uint64_t seed);

#endif
