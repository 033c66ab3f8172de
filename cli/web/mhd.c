/*
 * mhd.c: the libmicrohttpd functions `cairn web` calls, resolved with
 * dlopen on first use (mhd.h says why it is not linked).
 */
#include "mhd.h"

#include <pthread.h>
#include <stdio.h>

#include "util/dl.h"

static struct web_mhd table;
static void *handle;
static char load_err[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    /* In the order of struct web_mhd. */
    static const char *const names[] = {
        "MHD_start_daemon", "MHD_stop_daemon", "MHD_get_daemon_info",
        "MHD_lookup_connection_value", "MHD_queue_response",
        "MHD_create_response_from_buffer", "MHD_destroy_response",
        "MHD_add_response_header",
    };
    void *syms[sizeof names / sizeof names[0]];
    handle = dl_load("libmicrohttpd.so.12", "libmicrohttpd12", names, syms,
                     sizeof names / sizeof names[0], load_err, sizeof load_err);
    if (!handle)
        return;
    /* dlsym gives object pointers; POSIX guarantees they convert. */
    table.start_daemon = (struct MHD_Daemon *(*)(unsigned int, uint16_t, MHD_AcceptPolicyCallback,
                                                 void *, MHD_AccessHandlerCallback, void *,
                                                 ...))syms[0];
    table.stop_daemon = (void (*)(struct MHD_Daemon *))syms[1];
    table.get_daemon_info = (const union MHD_DaemonInfo *(*)(struct MHD_Daemon *,
                                                             enum MHD_DaemonInfoType, ...))syms[2];
    table.lookup_connection_value = (const char *(*)(struct MHD_Connection *, enum MHD_ValueKind,
                                                     const char *))syms[3];
    table.queue_response = (enum MHD_Result (*)(struct MHD_Connection *, unsigned int,
                                                struct MHD_Response *))syms[4];
    table.create_response_from_buffer =
        (struct MHD_Response *(*)(size_t, void *, enum MHD_ResponseMemoryMode))syms[5];
    table.destroy_response = (void (*)(struct MHD_Response *))syms[6];
    table.add_response_header = (enum MHD_Result (*)(struct MHD_Response *, const char *,
                                                     const char *))syms[7];
}

const struct web_mhd *web_mhd_load(char *err, size_t errlen)
{
    pthread_once(&once, load);
    if (!handle) {
        snprintf(err, errlen, "%s", load_err);
        return NULL;
    }
    return &table;
}
