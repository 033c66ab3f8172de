/*
 * json.h: the JSON reader of every write path.
 *
 * cJSON's own parser loses text without a word: "\u0000" (or a raw NUL
 * inside a string) ends the C string there, a lone UTF-16 surrogate
 * ("\ud83d", an emoji cut in half by a truncating client) fails the whole
 * document, and a number beyond 2^53 is rounded, so two different numeric
 * ids become one. json_parse builds the same cJSON tree, with three
 * repairs: NUL and lone surrogates become U+FFFD, and an integer too
 * long for a double keeps its exact digits (json_number_text).
 *
 * Read-only paths (recall batches, the prompt hook) may keep cJSON_Parse:
 * they store nothing.
 */
#ifndef CAIRN_JSON_H
#define CAIRN_JSON_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Nesting deeper than this is refused, as cJSON does. */
#define JSON_PARSE_MAX_DEPTH 1000

/*
 * Parses one JSON value from p[0..n) (p need not be NUL-terminated).
 * Leading whitespace and a UTF-8 byte order mark are skipped; what follows
 * the value is not looked at. On success returns the tree (cJSON_Delete
 * frees it) and sets *end, when end is not NULL, just past the value; on
 * failure returns NULL with *end at the offending byte. Like cJSON, it
 * keeps duplicate keys in order and invalid UTF-8 as it came (the store
 * repairs it).
 */
cJSON *json_parse(const char *p, size_t n, const char **end);

/*
 * Where the value json_parse would read from p[0..n) ends, without
 * building it (no allocation): the same grammar, the same *end on success
 * and on failure. Returns the value's cJSON type (cJSON_Object,
 * cJSON_Array...), or 0 when json_parse would fail. For a reader that
 * only needs the boundaries (`cairn add` cutting its input into sessions,
 * each parsed once by cairn_add_json).
 */
int json_scan(const char *p, size_t n, const char **end);

/*
 * Decodes the JSON string whose opening quote is at p (p < end) into
 * out, which has room for cap bytes (not NUL-terminated), strictly: a raw
 * control byte, \u0000 or half a surrogate pair is refused, where
 * json_parse repairs them (a reader of a fixed file format that must
 * refuse a damaged file rather than guess; no allocation). Returns the
 * decoded length and sets *next, when next is not NULL, past the closing
 * quote; -1 if the string is malformed or needs more than cap bytes.
 */
long json_string_decode(const char *p, const char *end, char *out, size_t cap,
                        const char **next);

/*
 * The text of a number used as an id: its exact digits when it is an
 * integer a double cannot hold (json_parse kept them), else the integer
 * or "%.17g" form in buf. Returns buf or the kept digits.
 */
const char *json_number_text(const cJSON *v, char *buf, size_t nb);

/*
 * The double strtod gives for the JSON number s[0..n) (-?int(.frac)?(e[+-]?exp)?),
 * bit for bit, in *v: 0, or -1 when s is not such a number. Exact
 * without strtod when it can be (Clinger's fast path: at most 2^53 as an
 * integer significand and a power of ten at most 10^22, both exact
 * doubles, so one rounded multiply or divide is the correctly rounded
 * value); strtod otherwise. use-lite-en's 8,000 vocabulary scores
 * ("-3.28450870514") took strtod 8.2 million instructions of a one-shot
 * query's 60 million (callgrind); this path takes a tenth of that.
 */
int json_decimal(const char *s, size_t n, double *v);

#endif
