/*
 * fuzz_mcp.c: libFuzzer target for the MCP server's stdin handling: the
 * input is what a client writes, read by the reader thread (line
 * framing, UTF-8 check, JSON parse, cancellation bookkeeping) from a
 * memory file and dispatched by mcp_handle_item (both protocol eras,
 * batches, the six tools on a fresh store per input).
 *
 * Every answer must be whole lines of JSON-RPC 2.0: an object or an array
 * of objects with "jsonrpc":"2.0", as the golden test demands of the
 * real server (tests/mcp/mcp_golden.py).
 */
#include <sys/mman.h>

#include "fuzz.h"
#include "../../cli/mcp/mcp.h"

static void check_line(const char *p, size_t n)
{
    cJSON *m = cJSON_ParseWithLength(p, n), *e;
    if (!cJSON_IsObject(m) && !(cJSON_IsArray(m) && cJSON_GetArraySize(m)))
        abort();
    if (cJSON_IsObject(m)) {
        e = cJSON_GetObjectItemCaseSensitive(m, "jsonrpc");
        if (!cJSON_IsString(e) || strcmp(e->valuestring, "2.0"))
            abort();
    } else {
        cJSON_ArrayForEach(e, m) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "jsonrpc");
            if (!cJSON_IsString(v) || strcmp(v->valuestring, "2.0"))
                abort();
        }
    }
    cJSON_Delete(m);
}

static void check_out(const struct buf *out)
{
    const char *p = out->p, *end = out->p + out->n;
    if (out->err || (out->n && end[-1] != '\n'))
        abort();
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        check_line(p, (size_t)(nl - p));
        p = nl + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char db[1024];
    snprintf(db, sizeof db, "%s/mcp.db", fuzz_tmpdir());
    struct cli_ctx ctx = { db };
    int fd = memfd_create("mcp-stdin", 0);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET))
        abort();

    struct mcp_server s;
    memset(&s, 0, sizeof s);
    s.ctx = &ctx;
    s.log_level = -1;
    s.rd = mcp_reader_start(fd);
    if (!s.rd)
        abort();
    struct mcp_item *it;
    struct buf out;
    buf_init(&out, 0);
    while ((it = mcp_reader_next(s.rd))) {
        buf_reset(&out);
        mcp_handle_item(&s, it, &out);
        mcp_item_free(it);
        check_out(&out);
    }
    buf_release(&out);
    mcp_reader_stop(s.rd);
    close(fd);
    cairn_close(s.db);
    fuzz_remove_store(db);
    return 0;
}
