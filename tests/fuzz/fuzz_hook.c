/*
 * fuzz_hook.c: libFuzzer target for the Claude Code hooks as they run:
 * `cairn hook stop` (stdin JSON, the project exclusion list, the
 * transcript import) and then `cairn hook prompt` or `session-start`
 * (stdin JSON, the prompt filter, recall, the gate, the injected
 * context) or `pre-tool` (the tool call against a correction) on the store
 * the first one filled (cmd_hook.c, hook_inject.c, hook_pretool.c).
 *
 * Input: one byte (which saving and which injecting hook) \0 hook JSON \0
 * transcript. The transcript is written to the file the hook JSON calls
 * "t.jsonl"; an input naming any other transcript_path is skipped, so the
 * fuzzer never reads the machine's files. Whatever the input, a hook prints
 * nothing or exactly one JSON object line with hookSpecificOutput (a
 * context, or pre-tool's ask or deny with a reason).
 *
 * cmd_hook sends fds 1 and 2 to /dev/null and arms SIGALRM (which
 * libFuzzer uses for -timeout); both are put back after each call, and
 * sanitizer reports go to a copy of the real stderr, so a crash inside
 * a hook is still reported (libFuzzer's own lines about it are lost, the
 * crash-* file is still written).
 */
#include <fcntl.h>
#include <sanitizer/common_interface_defs.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "../../cli/cli.h"

/* Runs `cairn hook EVENT` with stdin = in[0..n); returns what it printed
 * (malloc'd, NUL-terminated). */
static char *run_hook(const char *event, const char *in, size_t n, struct cli_ctx *ctx)
{
    int fd_in = memfd_create("hook-in", 0), fd_out = memfd_create("hook-out", 0);
    if (fd_in < 0 || fd_out < 0 || (n && write(fd_in, in, n) != (ssize_t)n) ||
        lseek(fd_in, 0, SEEK_SET))
        abort();
    int save[3] = { dup(0), dup(1), dup(2) };
    struct sigaction alrm, pipe_;
    struct itimerval timer;
    sigaction(SIGALRM, NULL, &alrm);
    sigaction(SIGPIPE, NULL, &pipe_);
    getitimer(ITIMER_REAL, &timer);
    dup2(fd_in, 0);
    dup2(fd_out, 1);

    char *argv[] = { "hook", (char *)event, NULL };
    cmd_hook(2, argv, ctx);

    for (int i = 0; i < 3; i++) {
        dup2(save[i], i);
        close(save[i]);
    }
    sigaction(SIGALRM, &alrm, NULL);
    sigaction(SIGPIPE, &pipe_, NULL);
    setitimer(ITIMER_REAL, &timer, NULL);

    close(fd_in);
    return fuzz_read_fd(fd_out);
}

static void check_output(const char *out)
{
    size_t n = strlen(out);
    if (!n)
        return;
    if (out[n - 1] != '\n' || memchr(out, '\n', n - 1))
        abort();                                    /* one line */
    cJSON *j = cJSON_Parse(out);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "hookSpecificOutput");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(h, "permissionDecision");
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(h, "additionalContext")) &&
        !(cJSON_IsString(d) && (!strcmp(d->valuestring, "ask") ||
                                !strcmp(d->valuestring, "deny")) &&
          cJSON_IsString(cJSON_GetObjectItemCaseSensitive(h, "permissionDecisionReason"))))
        abort();
    cJSON_Delete(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char db[1024], transcript[1024];
    if (!db[0]) {
        __sanitizer_set_report_fd((void *)(intptr_t)dup(2));
        snprintf(db, sizeof db, "%s/hook.db", fuzz_tmpdir());
        snprintf(transcript, sizeof transcript, "%s/t.jsonl", fuzz_tmpdir());
        setenv("CAIRN_HOOK_TIMEOUT", "0", 1);       /* no alarm at all */
        setenv("CAIRN_EXCLUDE_PROJECTS", "secret, /nonexistent/private/ ,,", 1);
    }
    struct fuzz_part part[3];
    if (fuzz_split(data, size, part, 3) < 2 || part[0].n != 1)
        return 0;
    /* Only the transcript we wrote: "t.jsonl" becomes its full path (the
     * working folder stays, libFuzzer's paths are relative to it); input
     * that is not JSON goes to the hook as it is. */
    char *in = fuzz_pin_transcript(part[1], transcript);
    if (!in)
        return 0;
    fuzz_write("t.jsonl", part[2]);

    struct cli_ctx ctx = { db };
    unsigned opt = (unsigned char)part[0].p[0];
    static const char *const saves[] = { "stop", "session-end", "pre-compact", "subagent-stop" };
    free(run_hook(saves[opt & 3], in, strlen(in), &ctx));
    if (opt & 8) {
        /* a correction every Bash call with `git` in it meets */
        struct cairn *h;
        struct cairn_memory_new m = { 0 };
        struct cairn_correction_when w = { opt & 16 ? 0 : 1, "rm", "*.lock", "git" };
        m.text = "never <cairn-memory> this";
        if (cairn_open(db, 0, &h) == CAIRN_OK)
            cairn_correction_add(h, &m, &w, NULL);
        cairn_close(h);
    }
    char *out = run_hook(opt & 8 ? "pre-tool" : opt & 4 ? "session-start" : "prompt", in,
                         strlen(in), &ctx);
    check_output(out);
    free(out);
    free(in);
    fuzz_remove_store(db);
    return 0;
}
