/*
 * redact.h: secret masking on write.
 *
 * Before anything is stored, values with a known secret shape are replaced
 * by "[REDACTED:kind]" (kind: anthropic, openai, github, gitlab, aws,
 * google, slack, stripe, huggingface, npm, jwt, private-key, url-password,
 * assignment). Ordinary prose and code must pass untouched: hashes, UUIDs,
 * base64 images and long identifiers are not secrets.
 */
#ifndef CAIRN_REDACT_H
#define CAIRN_REDACT_H

#include <stddef.h>
#include "cairn.h"
#include "util/buf.h"

/*
 * Masks the secrets in in[0..n) and appends the result to out. Adds one to
 * rep's count for the kind of each secret masked (rep may be NULL).
 * Returns the number of secrets masked (>= 0), or -1 on allocation failure
 * (out->err tells). Thread-safe: patterns are compiled once.
 */
int redact_text(const char *in, size_t n, struct buf *out,
                struct cairn_redact_report *rep);

/* 0 when the setting "redact" (value, NULL when unset) is "0", else 1. */
int redact_enabled(const char *value);

#endif
