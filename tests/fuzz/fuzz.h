/*
 * fuzz.h: what the libFuzzer targets share (header-only, each target is
 * one program).
 *
 * Targets that feed several files or fields take them from one input cut
 * at NUL bytes ("part one\0part two\0..."): JSON text never holds a raw
 * NUL, so a seed is just the files joined with NULs, and the fuzzer can
 * change one part without breaking the others.
 */
#ifndef CAIRN_FUZZ_H
#define CAIRN_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#ifndef FUZZ_DATA
#define FUZZ_DATA "tests/data"      /* run.sh passes the absolute path */
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_part {
    const char *p;      /* never NULL: "" for a missing part */
    size_t      n;
    int         missing;/* the input has fewer parts */
};

/* Cuts data at its first max-1 NULs into parts[0..max) (missing parts are
 * empty and marked); the last part keeps any further NULs. Returns the
 * parts found. */
static inline int fuzz_split(const uint8_t *data, size_t size, struct fuzz_part *parts, int max)
{
    const char *s = (const char *)data, *end = s + size;
    int k = 0;
    for (int i = 0; i < max; i++)
        parts[i] = (struct fuzz_part){ "", 0, 1 };
    while (k < max) {
        const char *z = k < max - 1 ? memchr(s, 0, (size_t)(end - s)) : NULL;
        parts[k].p = s;
        parts[k].n = z ? (size_t)(z - s) : (size_t)(end - s);
        parts[k].missing = 0;
        k++;
        if (!z)
            break;
        s = z + 1;
    }
    return k;
}

/* A NUL-terminated copy of a part (abort on no memory: not a finding). */
static inline char *fuzz_strdup(struct fuzz_part part)
{
    char *s = malloc(part.n + 1);
    if (!s)
        abort();
    memcpy(s, part.p, part.n);
    s[part.n] = '\0';
    return s;
}

/* A private temporary folder for the process, made once under $TMPDIR
 * (run.sh: build-fuzz/tmp); the environment points HOME there (the
 * library's default folders) and turns the embedding model off for the
 * CLI code a target runs (cli/env.c), so a target never touches the
 * user's files. */
static inline const char *fuzz_tmpdir(void)
{
    static char dir[512];
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/cairn-fuzz-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir))
            abort();
        setenv("HOME", dir, 1);
        setenv("CAIRN_EMBED_MODEL", "none", 0);
    }
    return dir;
}

/* Writes part to tmpdir/name; a missing part leaves no file. */
static inline void fuzz_write(const char *name, struct fuzz_part part)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fuzz_tmpdir(), name);
    unlink(path);
    if (part.missing)
        return;
    FILE *f = fopen(path, "wb");
    if (!f || (part.n && fwrite(part.p, 1, part.n, f) != part.n))
        abort();
    fclose(f);
}

/* The hook JSON (or spooled event) in part, with "transcript_path":
 * "t.jsonl" made the full path of the file the target wrote; malloc'd.
 * Input naming any other path gives NULL, to be skipped, so the fuzzer
 * never reads the machine's files; input without one (or not JSON) comes
 * back as it is. */
static inline char *fuzz_pin_transcript(struct fuzz_part part, const char *full)
{
    char *in = NULL;
    cJSON *j = cJSON_ParseWithLength(part.p, part.n);
    cJSON *tp = cJSON_GetObjectItemCaseSensitive(j, "transcript_path");
    if (tp) {
        if (!cJSON_IsString(tp) || strcmp(tp->valuestring, "t.jsonl")) {
            cJSON_Delete(j);
            return NULL;
        }
        cJSON_SetValuestring(tp, full);
        in = cJSON_PrintUnformatted(j);
    }
    cJSON_Delete(j);
    return in ? in : fuzz_strdup(part);
}

/* Removes the store at path and its WAL files: a fresh store per input. */
static inline void fuzz_remove_store(const char *path)
{
    static const char *const ext[] = { "", "-wal", "-shm" };
    for (int i = 0; i < 3; i++) {
        char p[1100];
        snprintf(p, sizeof p, "%s%s", path, ext[i]);
        unlink(p);
    }
}

/* The whole of file descriptor fd (a memfd a command wrote to), malloc'd
 * and NUL-terminated; closes fd. */
static inline char *fuzz_read_fd(int fd)
{
    off_t len = lseek(fd, 0, SEEK_END);
    char *out = malloc((size_t)len + 1);
    if (!out || pread(fd, out, (size_t)len, 0) != len)
        abort();
    out[len] = '\0';
    close(fd);
    return out;
}

#endif
