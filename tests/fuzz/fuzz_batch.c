/*
 * fuzz_batch.c: libFuzzer target for `cairn recall --batch` (cmd_recall.c):
 * JSONL requests on stdin, each with its "budgets", "now", "project" and
 * "exclude_session", against a small store made once.
 *
 * Whatever the input, every line printed is one JSON object holding either
 * "items" (an answer, with a budget from 50 to 1000000) or "error"; a
 * budget outside --budget's range is never answered.
 */
#include <fcntl.h>
#include <sanitizer/common_interface_defs.h>
#include <sys/mman.h>
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "../../cli/cli.h"

static char *run_batch(const char *in, size_t n, struct cli_ctx *ctx)
{
    int fd_in = memfd_create("batch-in", 0), fd_out = memfd_create("batch-out", 0);
    if (fd_in < 0 || fd_out < 0 || (n && write(fd_in, in, n) != (ssize_t)n) ||
        lseek(fd_in, 0, SEEK_SET))
        abort();
    int save[2] = { dup(0), dup(1) };
    fflush(stdout);
    dup2(fd_in, 0);
    dup2(fd_out, 1);
    clearerr(stdin);
    char *argv[] = { "recall", "--batch", NULL };
    cmd_recall(2, argv, ctx);
    fflush(stdout);
    for (int i = 0; i < 2; i++) {
        dup2(save[i], i);
        close(save[i]);
    }
    clearerr(stdin);
    close(fd_in);
    return fuzz_read_fd(fd_out);
}

static void check_output(char *out)
{
    for (char *line = out, *nl; *line; line = nl + 1) {
        if (!(nl = strchr(line, '\n')))
            abort();                               /* every line ends */
        *nl = '\0';
        cJSON *j = cJSON_Parse(line);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "budget");
        if (!j || (!cJSON_GetObjectItemCaseSensitive(j, "items") &&
                   !cJSON_GetObjectItemCaseSensitive(j, "error")))
            abort();
        if (cJSON_GetObjectItemCaseSensitive(j, "items") &&
            (!cJSON_IsNumber(b) || b->valuedouble < 50 || b->valuedouble > 1000000))
            abort();
        cJSON_Delete(j);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char db[1024];
    static struct cli_ctx ctx;
    if (!db[0]) {
        __sanitizer_set_report_fd((void *)(intptr_t)dup(2));
        snprintf(db, sizeof db, "%s/batch.db", fuzz_tmpdir());
        struct cairn *h = NULL;
        const char *s = "{\"id\":\"s1\",\"project\":\"p\",\"started_at\":\"2024-03-01T10:00:00\","
                        "\"messages\":[{\"role\":\"user\",\"content\":\"which climbing gym?\"},"
                        "{\"role\":\"assistant\",\"content\":\"Try LBC on Thursdays.\"}]}";
        if (cli_db_open(db, 0, &h) || cairn_add_json(h, s, strlen(s), NULL))
            abort();
        cairn_close(h);
        ctx.db_path = db;
    }
    char *out = run_batch((const char *)data, size, &ctx);
    check_output(out);
    free(out);
    return 0;
}
