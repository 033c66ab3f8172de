/*
 * mhd.h: libmicrohttpd, loaded on first use (util/dl.h).
 *
 * Not linked into cairn: Debian's libmicrohttpd pulls in GnuTLS, whose
 * load-time work every `cairn hook` would pay although only `cairn web`
 * serves anything. The header gives the types and constants; the calls go
 * through this table.
 */
#ifndef CAIRN_WEB_MHD_H
#define CAIRN_WEB_MHD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

struct web_mhd {
    struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port,
                                       MHD_AcceptPolicyCallback apc, void *apc_cls,
                                       MHD_AccessHandlerCallback dh, void *dh_cls, ...);
    void (*stop_daemon)(struct MHD_Daemon *d);
    const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *d,
                                                   enum MHD_DaemonInfoType t, ...);
    const char *(*lookup_connection_value)(struct MHD_Connection *c, enum MHD_ValueKind k,
                                           const char *key);
    enum MHD_Result (*queue_response)(struct MHD_Connection *c, unsigned int status,
                                      struct MHD_Response *r);
    struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer,
                                                        enum MHD_ResponseMemoryMode mode);
    void (*destroy_response)(struct MHD_Response *r);
    enum MHD_Result (*add_response_header)(struct MHD_Response *r, const char *header,
                                           const char *content);
};

/* The table, loaded once; NULL with the reason in err (the Debian
 * package to install) when the library is missing. */
const struct web_mhd *web_mhd_load(char *err, size_t errlen);

#endif
