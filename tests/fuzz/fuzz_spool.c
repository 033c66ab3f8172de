/*
 * fuzz_spool.c: libFuzzer target for the spool (cli/spool.c): a spooled
 * hook event, as a drainer reads it back from STORE-spool, and the
 * transcript it names, imported from the stored offset.
 *
 * Input: the event file's bytes \0 transcript. An event naming the
 * transcript "t.jsonl" gets the full path of the file written from the
 * input; one naming any other path is skipped, so the fuzzer never reads
 * the machine's files; anything else (no path, not JSON) goes in as it
 * is. Whatever the input, the store is never locked here, so a drain
 * leaves the spool empty: saved, or dropped as not an event.
 */
#include <sys/stat.h>
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "../../cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char db[1024], spool[1100], event[1200], transcript[1024];
    if (!db[0]) {
        snprintf(db, sizeof db, "%s/spool.db", fuzz_tmpdir());
        snprintf(spool, sizeof spool, "%s-spool", db);
        snprintf(event, sizeof event, "%s/0123456789abcdef.json", spool);
        snprintf(transcript, sizeof transcript, "%s/t.jsonl", fuzz_tmpdir());
    }
    struct fuzz_part part[2];
    fuzz_split(data, size, part, 2);
    char *text = fuzz_pin_transcript(part[0], transcript);
    if (!text)
        return 0;
    fuzz_write("t.jsonl", part[1]);
    mkdir(spool, 0700);
    FILE *f = fopen(event, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
    free(text);

    struct cairn *h = NULL;
    if (cairn_open(db, 0, &h))
        abort();
    spool_drain(h, 8);
    cairn_close(h);
    if (rmdir(spool) != 0)
        abort();                                    /* the drain left a file */
    fuzz_remove_store(db);
    return 0;
}
