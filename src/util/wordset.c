/*
 * wordset.c: a fixed set of short strings (util/wordset.h).
 */
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/wordset.h"

static uint64_t word_hash(const char *t, size_t n)
{
    return fnv1a64(t, n, 0xcbf29ce484222325ULL);
}

int wordset_init(struct wordset *s, int64_t max, size_t bytes)
{
    memset(s, 0, sizeof *s);
    if (max < 0 || max > INT32_MAX / 2)
        return -1;
    size_t cap = 16;
    while (cap < (size_t)max * 2)     /* at most half full: short probes */
        cap *= 2;
    s->mask = cap - 1;
    s->max = (int)max;
    s->bytes = bytes;
    if (!(s->slot = calloc(cap, sizeof *s->slot)) ||
        !(s->off = malloc(((size_t)max + 1) * sizeof *s->off)) ||
        !(s->len = malloc(((size_t)max + 1) * sizeof *s->len)) || !(s->arena = malloc(bytes + 1)) ||
        !(s->tf = calloc((size_t)max + 1, sizeof *s->tf)) ||
        !(s->in = malloc(((size_t)max + 1) * sizeof *s->in))) {
        wordset_free(s);
        return -1;
    }
    return 0;
}

void wordset_free(struct wordset *s)
{
    free(s->arena);
    free(s->off);
    free(s->len);
    free(s->slot);
    free(s->tf);
    free(s->in);
    memset(s, 0, sizeof *s);
}

int wordset_find(const struct wordset *s, const char *t, size_t n)
{
    if (!s->slot)
        return -1;
    for (size_t i = word_hash(t, n) & s->mask;; i = (i + 1) & s->mask) {
        int32_t k = s->slot[i];
        if (!k)
            return -1;
        if (s->len[k - 1] == n && !memcmp(s->arena + s->off[k - 1], t, n))
            return k - 1;
    }
}

int wordset_add(struct wordset *s, const char *t, size_t n)
{
    if (!s->slot || s->n >= s->max || n > s->bytes - s->used || wordset_find(s, t, n) >= 0)
        return -1;
    memcpy(s->arena + s->used, t, n);
    s->off[s->n] = s->used;
    s->len[s->n] = n;
    s->used += n;
    size_t i = word_hash(t, n) & s->mask;
    while (s->slot[i])
        i = (i + 1) & s->mask;
    s->slot[i] = ++s->n;
    return s->n - 1;
}

const char *wordset_word(const struct wordset *s, int i, size_t *n)
{
    *n = s->len[i];
    return s->arena + s->off[i];
}

int wordset_count(void *arg, const char *tok, size_t n, size_t start, size_t end, int coloc)
{
    (void)start, (void)end, (void)coloc;
    struct wordset *s = arg;
    int i = wordset_find(s, tok, n);
    if (i < 0)
        return 0;
    if (!s->tf[i])
        s->in[s->nin++] = i;          /* at most once a word: nin <= n */
    s->tf[i] += s->tf[i] < 65535;
    return 0;
}

void wordset_count_clear(struct wordset *s)
{
    for (int j = 0; j < s->nin; j++)
        s->tf[s->in[j]] = 0;
    s->nin = 0;
}
