/*
 * replay.c: a main for a fuzz target without libFuzzer. Each argument,
 * a file or a folder of files (its seed corpus), is given whole to the
 * target's LLVMFuzzerTestOneInput, once; no argument gives one empty
 * input. `make test` builds every tests/fuzz/fuzz_*.c with it, with the
 * project's compiler and warning flags (-Werror), so a target that no
 * longer builds fails the tests and not only `make fuzz` (which needs
 * clang and was run by hand: three targets had stopped building with
 * -Wall -Wextra), and t0513 replays the seeds, where a target's own
 * checks (abort) still hold.
 *
 * Prints one line, "replayed N inputs", on stdout; a target's abort is
 * the process's.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cairn.h"
#include "capture/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Targets that redirect stderr send the sanitizer's reports to a copy of
 * it first; built without a sanitizer (make test) there is no report to
 * send, and this stands in for the runtime's function. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REPLAY_ASAN 1
#endif
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(REPLAY_ASAN)
#include <sanitizer/common_interface_defs.h>
void __sanitizer_set_report_fd(void *fd)
{
    (void)fd;
}
#endif

static int replay_file(const char *path)
{
    size_t size = 0;
    char *data = NULL;
    /* capture's reader: the whole file, malloc'd, NUL after it (never
     * NULL on success, so an empty file is not handed as NULL) */
    if (capture_read_file(path, 0, &data, &size) != CAIRN_OK) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)data, size);
    free(data);
    return 0;
}

/* A folder's files in name order, so a failure replays the same way. */
static int replay_dir(const char *dir, long *count)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort), rc = 0;
    if (n < 0) {
        fprintf(stderr, "replay: cannot list %s\n", dir);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        if (rc == 0 && names[i]->d_name[0] != '.' &&
            snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name) < (int)sizeof path &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            rc = replay_file(path);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    long count = 0;
    if (argc < 2) {
        static const uint8_t empty[1];
        LLVMFuzzerTestOneInput(empty, 0);
        count++;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int rc;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no %s\n", argv[i]);
            return 2;
        }
        if (S_ISDIR(st.st_mode)) {
            rc = replay_dir(argv[i], &count);
        } else {
            rc = replay_file(argv[i]);
            count++;
        }
        if (rc != 0)
            return 2;
    }
    printf("replayed %ld inputs\n", count);
    return 0;
}
