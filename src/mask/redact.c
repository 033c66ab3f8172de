/*
 * redact.c: secret masking on write (see redact.h).
 *
 * Every message goes through here before it is stored, so the common case,
 * text with no secret at all, has to be nearly free:
 *
 *   1. One pass over the bytes stops only at a few trigger bytes ('-', '_',
 *      'A', 'J', ':', '=') and checks a handful of bytes around each for a
 *      known prefix (sk-, ghp_, glpat-, AKIA, eyJ, -----BEGIN,
 *      "://user:pass@", a secret-ish name before '=' or ':' ...). That is
 *      the cheap prefilter: text with no such candidate costs one table
 *      lookup per byte and no allocation.
 *   2. At a candidate, the PCRE2 pattern runs anchored at the position the
 *      secret would start (compiled with PCRE2_ANCHORED so JIT applies;
 *      compiled once under pthread_once). One alternation holds every
 *      fixed shape, and the capture group that matched tells the kind; a
 *      second pattern reads "name = value" assignments.
 *   3. Assignment values then go through value_is_secret(), a plain C
 *      judgement of whether the value looks like a secret rather than
 *      code, prose or a placeholder (the rule is documented there). A
 *      known shape in the value wins over "assignment" for the kind.
 *
 * The patterns are compiled without PCRE2_UTF: they work on bytes, so
 * invalid UTF-8 cannot make them fail, and every secret shape is ASCII, so
 * a masked span never starts or ends inside a multi-byte character of
 * valid input. Bytes outside the masked spans are copied as they are.
 *
 * Masking is idempotent: "[REDACTED:kind]" matches none of the shapes, an
 * assignment whose value already is a redaction marker is left alone, and
 * redact_text repeats the pass until nothing changes (see there).
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include "mask/redact.h"
#include "util/dl.h"

#include <math.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- patterns ----------------------------------------------------------- */

/*
 * Left edge of a token: not glued to a longer word, nor inside a base64 run
 * (base64 image data has [A-Za-z0-9+/], so "AKIA..." or "eyJ..." in the
 * middle of a data: URL is not a key).
 */
#define L_EDGE "(?<![A-Za-z0-9_+/-])"
/* Right edge: the token does not go on (a 16-char AWS key inside a longer
 * run is not an AWS key). */
#define R_EDGE "(?![A-Za-z0-9_-])"
/* Random keys contain an upper-case letter or a digit somewhere; lower-case
 * kebab/snake words after a prefix ("sk-learn-...") do not. */
#define UPNUM  "(?=[a-z_-]*[A-Z0-9])"

/*
 * One capture group per kind, in the order of redact_shape_kind[]; no other
 * capturing groups are allowed in this pattern. Order matters where two
 * alternatives can start at the same byte: sk-ant- before sk-.
 */
static const char redact_shape_src[] =
    /* 1 anthropic */
    "(" L_EDGE "sk-ant-[A-Za-z0-9_-]{20,})"
    /* 2 openai: project / service-account / admin keys, then classic */
    "|(" L_EDGE "sk-(?:(?:proj|svcacct|admin)-" UPNUM "[A-Za-z0-9_-]{20,}"
        "|" UPNUM "[A-Za-z0-9]{20,}" R_EDGE "))"
    /* 3 github: classic tokens and fine-grained PATs */
    "|(" L_EDGE "(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})" R_EDGE ")"
    /* 4 gitlab */
    "|(" L_EDGE "glpat-[A-Za-z0-9_-]{20,})"
    /* 5 aws access key ids */
    "|(" L_EDGE "(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9]))"
    /* 6 google api keys */
    "|(" L_EDGE "AIza[A-Za-z0-9_-]{35}" R_EDGE ")"
    /* 7 slack tokens (a numeric id comes first, so "xoxb-your-token" is not
     * one) and incoming-webhook URLs (the whole URL is the secret) */
    "|(" L_EDGE "xox[abprse]-[0-9]+-[A-Za-z0-9-]{8,}"
        "|(?<![A-Za-z0-9+.-])https?://hooks\\.slack\\.com/(?:services|workflows|triggers)/"
        "[A-Za-z0-9_/+-]{8,})"
    /* 8 stripe */
    "|(" L_EDGE "(?:(?:sk|rk)_(?:live|test)|pk_live)_[A-Za-z0-9]{16,}" R_EDGE
        "|" L_EDGE "whsec_" UPNUM "[A-Za-z0-9+/=]{24,}" R_EDGE ")"
    /* 9 hugging face */
    "|(" L_EDGE "hf_" UPNUM "[A-Za-z0-9]{30,}" R_EDGE ")"
    /* 10 npm */
    "|(" L_EDGE "npm_" UPNUM "[A-Za-z0-9]{30,}" R_EDGE ")"
    /* 11 jwt: header.payload.signature, header is base64url JSON ("{"") */
    "|(" L_EDGE "eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]*)"
    /* 12 PEM private key: the whole block. A block cut short (no END line,
     * as in a truncated paste) is masked through its last base64 line;
     * "\\n" covers keys inside JSON-escaped strings. */
    "|(-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
        "(?s:.*?-----END[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
        "|(?:(?:\\s|\\\\[nr])*[A-Za-z0-9+/=]{16,})*))"
    /* 13 password in a URL: scheme://user:PASSWORD@host, only the password
     * (after \K) is masked; it holds no mask (an earlier mask would let a
     * later pass read a password across it). */
    "|((?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\\s/?#@:\"'<>]{1,128}:"
        "\\K(?:(?!\\[REDACTED:)[^\\s/?#@\"'<>]){1,256}(?=@))"
    /* 14 sendgrid */
    "|(" L_EDGE "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}" R_EDGE ")"
    /* 15 digitalocean: personal, oauth and refresh tokens */
    "|(" L_EDGE "do[opr]_v1_[a-f0-9]{64}" R_EDGE ")"
    /* 16 shopify: admin, shared-secret, custom-app and private-app tokens */
    "|(" L_EDGE "shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}" R_EDGE ")"
    /* 17 discord bot token: base64 user id (it has digits), timestamp, HMAC */
    "|(" L_EDGE "[MNO](?=[A-Za-z_-]{0,27}[0-9])[A-Za-z0-9_-]{23,27}\\.[A-Za-z0-9_-]{6}\\."
        "[A-Za-z0-9_-]{27,40}" R_EDGE ")"
    /* 18 telegram bot token: bot id, ':', 35 random chars */
    "|((?<![A-Za-z0-9_:-])[0-9]{8,10}:" UPNUM "[A-Za-z0-9_-]{35}" R_EDGE ")"
    /* 19 pypi upload token: a macaroon whose location is pypi.org */
    "|(" L_EDGE "pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})"
    /* 20 hashicorp vault service, batch and recovery tokens */
    "|(" L_EDGE "hv[sbr]\\." UPNUM "[A-Za-z0-9_-]{24,}" R_EDGE ")"
    /* 21 google oauth access tokens and client secrets */
    "|(" L_EDGE "(?:ya29\\.[A-Za-z0-9_-]{20,}|GOCSPX-[A-Za-z0-9_-]{28})" R_EDGE ")"
    /* 22 groq */
    "|(" L_EDGE "gsk_" UPNUM "[A-Za-z0-9]{48,}" R_EDGE ")"
    /* 23 xai */
    "|(" L_EDGE "xai-" UPNUM "[A-Za-z0-9]{50,}" R_EDGE ")"
    /* 24 replicate */
    "|(" L_EDGE "r8_" UPNUM "[A-Za-z0-9]{37}" R_EDGE ")"
    /* 25 mailgun (old-style api key) */
    "|(" L_EDGE "key-[0-9a-f]{32}" R_EDGE ")";

static const char *const redact_shape_kind[] = {
    NULL, "anthropic", "openai", "github", "gitlab", "aws", "google", "slack",
    "stripe", "huggingface", "npm", "jwt", "private-key", "url-password",
    "sendgrid", "digitalocean", "shopify", "discord", "telegram", "pypi", "vault",
    "google", "groq", "xai", "replicate", "mailgun",
};
#define REDACT_N_SHAPES 25

/*
 * name [quote] sep value. Group 1 is the name (to tell AWS secret keys
 * apart); the masked span is the value only (after \K), quotes kept.
 * Which names count is decided in C before this runs (name_before):
 * anything ending (any case, separators ignored) in api_key/apikey,
 * secret, secret_key, secret_access_key, private_key, password, passwd,
 * token: API_KEY, client_secret, DB_PASSWORD, accessToken, "X-Api-Key"...
 * "token_count" or "tokens" do not end in a name and are not tried.
 * Separators: =, :, :=, => (not ==). The quote forms accept a backslash
 * before the quote for JSON-escaped text (\"password\": \"...\").
 */
static const char redact_assign_src[] =
    "(?<![A-Za-z0-9_.-])"
    "([A-Za-z0-9_.-]+)\\\\?[\"']?[ \\t]*(?::=|=>|=(?!=)|:)[ \\t]*"
    "(?:\\\\?\"\\K[^\"\\\\\\r\\n]{1,1024}(?=\\\\?\")"
    "|\\\\?'\\K[^'\\\\\\r\\n]{1,1024}(?=\\\\?')"
    "|`\\K[^`\\\\\\r\\n]{1,1024}(?=`)"
    "|\\K[^\\x00-\\x20\\x7f\"'`\\\\,;&(){}\\[\\]<>|]{1,1024})";

static pthread_once_t redact_once = PTHREAD_ONCE_INIT;
static pcre2_code *redact_shape_re, *redact_assign_re;
static int redact_ready, redact_shape_jit, redact_assign_jit;

/* libpcre2-8 is loaded with the patterns, on the first candidate
 * (util/dl.h): the prompt hook's path masks nothing (what it recalls was
 * masked when written), and a linked libpcre2-8.so cost every hook its
 * mapping and relocation (~0.3 ms of CPU and 7 page faults on the
 * AVX-512 host; bench/README.md, "The hook at 100,000", issue 23, hook53).
 * Not loadable: no patterns, and redact_text fails as when they do not
 * compile. */
static struct {
    __typeof__(pcre2_compile) *compile;
    __typeof__(pcre2_jit_compile) *jit_compile;
    __typeof__(pcre2_match_data_create_from_pattern) *md_create;
    __typeof__(pcre2_jit_match) *jit_match;
    __typeof__(pcre2_match) *match;
    __typeof__(pcre2_get_ovector_pointer) *ovector;
    __typeof__(pcre2_match_data_free) *md_free;
} pc;

static int pcre_load(void)
{
    static const char *const names[] = {
        "pcre2_compile_8", "pcre2_jit_compile_8", "pcre2_match_data_create_from_pattern_8",
        "pcre2_jit_match_8", "pcre2_match_8", "pcre2_get_ovector_pointer_8",
        "pcre2_match_data_free_8",
    };
    void *sym[7];
    char err[400];

    if (!dl_load("libpcre2-8.so.0", "libpcre2-8-0", names, sym, 7, err, sizeof(err)))
        return -1;
    /* dlsym gives object pointers; POSIX guarantees they convert. */
    pc.compile = (__typeof__(pc.compile))sym[0];
    pc.jit_compile = (__typeof__(pc.jit_compile))sym[1];
    pc.md_create = (__typeof__(pc.md_create))sym[2];
    pc.jit_match = (__typeof__(pc.jit_match))sym[3];
    pc.match = (__typeof__(pc.match))sym[4];
    pc.ovector = (__typeof__(pc.ovector))sym[5];
    pc.md_free = (__typeof__(pc.md_free))sym[6];
    return 0;
}

static pcre2_code *redact_compile(const char *src, int *jit)
{
    int err;
    PCRE2_SIZE off;
    pcre2_code *re = pc.compile((PCRE2_SPTR)src, PCRE2_ZERO_TERMINATED, PCRE2_ANCHORED,
                                &err, &off, NULL);
    if (!re)
        return NULL;
    /* JIT failing (no JIT on this CPU) is not fatal: the interpreter gives
     * the same matches, only slower. */
    *jit = pc.jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
    return re;
}

static void redact_init(void)
{
    if (pcre_load())
        return;
    redact_shape_re = redact_compile(redact_shape_src, &redact_shape_jit);
    redact_assign_re = redact_compile(redact_assign_src, &redact_assign_jit);
    redact_ready = redact_shape_re && redact_assign_re;
}

/* ---- candidates -------------------------------------------------------- */

#define REDACT_NONE ((size_t)-1)

enum { T_NONE, T_SEP_DASH, T_A, T_J, T_COLON, T_EQ, T_DOT };

/* The only bytes the scan stops at: every pattern has one of them at a
 * known distance from its start. */
static const unsigned char redact_trig[256] = {
    ['-'] = T_SEP_DASH, ['_'] = T_SEP_DASH, ['A'] = T_A, ['J'] = T_J,
    [':'] = T_COLON, ['='] = T_EQ, ['.'] = T_DOT,
};

static int is_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

static int is_ident(unsigned char c)
{
    return is_alnum(c) || c == '_' || c == '-' || c == '.';
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t';
}

/* 1 if a word starts at s[i] (nothing alphanumeric right before it). */
static int word_start(const unsigned char *s, size_t i)
{
    return i == 0 || !is_alnum(s[i - 1]);
}

/* What the name before a separator says about its value. */
enum {
    N_NONE,
    N_SECRET,    /* password, token, api_key...: value_is_secret() */
    N_KEYISH,    /* signing_key, salt, cookie...: only a random value */
    N_AZURE,     /* AccountKey / SharedAccessKey of a connection string */
    N_AUTH,      /* Authorization: a scheme, then the credentials */
};

/* Does the identifier ending right before s[e] end in a secret name?
 * Compared lower-cased with separators dropped, so "API_KEY", "apiKey" and
 * "X-Api-Key" all end in "apikey". Returns an N_ class. */
static int name_before(const unsigned char *s, size_t e)
{
    char w[24];
    size_t k = 0;
    size_t t = e;
    while (t > 0 && (s[t - 1] == '_' || s[t - 1] == '-' || s[t - 1] == '.'))
        t--;
    /* the common case first: a name ending in a letter no secret name
     * ends in (id, name, type, value, url...) */
    switch (t > 0 ? s[t - 1] | 0x20 : 0) {
    case 'n': case 't': case 'd': case 'e': case 'l': case 's': case 'c': case 'y':
        break;
    default:
        return N_NONE;
    }
    while (e > 0 && k < sizeof w && is_ident(s[e - 1])) {
        unsigned char c = s[--e];
        if (c == '_' || c == '-' || c == '.')
            continue;
        w[k++] = (char)(c | 0x20);   /* reversed, lower-cased */
    }
    /* w holds the name backwards: "token" is "nekot". Most names end in
     * none of these letters, so the switch ends the look-up at once. */
#define ENDS(lit) (k >= sizeof(lit) - 1 && memcmp(w, lit, sizeof(lit) - 1) == 0)
    if (k == 0)
        return N_NONE;
    switch (w[0]) {
    case 'n':   /* token, authorization */
        return ENDS("nekot") ? N_SECRET : ENDS("noitazirohtua") ? N_AUTH : N_NONE;
    case 't':   /* secret, salt */
        return ENDS("terces") ? N_SECRET : ENDS("tlas") ? N_KEYISH : N_NONE;
    case 'd':   /* password, passwd, cred */
        return ENDS("drowssap") || ENDS("dwssap") ? N_SECRET
             : ENDS("derc") ? N_KEYISH : N_NONE;
    case 'e':   /* passphrase, secret_key_base, cookie */
        return ENDS("esarhpssap") || ENDS("esabyekterces") ? N_SECRET
             : ENDS("eikooc") ? N_KEYISH : N_NONE;
    case 'l':   /* credential */
        return ENDS("laitnederc") ? N_KEYISH : N_NONE;
    case 's':   /* credentials, creds */
        return ENDS("slaitnederc") || ENDS("sderc") ? N_KEYISH : N_NONE;
    case 'c':   /* hmac */
        return ENDS("camh") ? N_KEYISH : N_NONE;
    case 'y':   /* every *key */
        if (k < 3 || w[1] != 'e' || w[2] != 'k')
            return N_NONE;
        if (ENDS("yekipa") || ENDS("yekterces") || ENDS("yeketavirp")
            || ENDS("yeksseccaterces"))
            return N_SECRET;
        if (ENDS("yektnuocca") || ENDS("yeksseccaderahs"))
            return N_AZURE;
        return N_KEYISH;
    default:
        return N_NONE;
    }
#undef ENDS
}

/* At a separator s[i] ('=' or ':'): where the secret-looking name before it
 * starts, or REDACT_NONE. The assignment pattern is then tried there. */
static size_t assign_cand(const unsigned char *s, size_t i)
{
    size_t j = i;
    while (j > 0 && i - j < 8 && is_space(s[j - 1]))
        j--;
    if (j > 0 && (s[j - 1] == '"' || s[j - 1] == '\''))
        j--;
    if (j > 0 && s[j - 1] == '\\')
        j--;
    if (j == 0 || !is_ident(s[j - 1]) || name_before(s, j) == N_NONE)
        return REDACT_NONE;
    while (j > 0 && is_ident(s[j - 1]))
        j--;
    return j;
}

/* At "://" (s[i] == ':'): the start of the scheme when a userinfo with a
 * password, or a Slack hook, follows; else REDACT_NONE. */
static size_t url_cand(const unsigned char *s, size_t n, size_t i)
{
    size_t j = i + 3, end = n - j > 400 ? j + 400 : n;
    int hit = 0, colon = 0;
    if (n - j >= 15 && memcmp(s + j, "hooks.slack.com", 15) == 0)
        hit = 1;
    for (; !hit && j < end; j++) {
        unsigned char c = s[j];
        if (c == '@') {
            hit = colon;
            break;
        }
        if (c == ':')
            colon = 1;
        else if (c <= ' ' || c == '/' || c == '?' || c == '#')
            break;
    }
    if (!hit)
        return REDACT_NONE;
    size_t k = i;
    while (k > 0 && i - k < 32 && (is_alnum(s[k - 1]) || s[k - 1] == '+'
                                   || s[k - 1] == '.' || s[k - 1] == '-'))
        k--;
    return k < i ? k : REDACT_NONE;
}

/* Token prefixes that end in '-' or '_' (the trigger byte); the shape
 * pattern then decides. */
#define P(lit) { lit, sizeof(lit) - 1 }
static const struct { const char *p; size_t n; } dash_prefix[] = {
    P("sk-"), P("sk_"), P("rk_"), P("pk_"), P("hf_"), P("r8_"),
    P("ghp_"), P("gho_"), P("ghu_"), P("ghs_"), P("ghr_"), P("npm_"), P("dop_"), P("doo_"),
    P("dor_"), P("gsk_"), P("xai-"), P("key-"),
    P("xoxa-"), P("xoxb-"), P("xoxp-"), P("xoxr-"), P("xoxs-"), P("xoxe-"), P("pypi-"),
    P("glpat-"), P("shpat_"), P("shpss_"), P("shpca_"), P("shppa_"), P("whsec_"),
    P("GOCSPX-"),
};
#undef P

/* The '-' or '_' at s[i]: where the token it is part of the prefix of
 * starts, or REDACT_NONE. A prefix is a whole word before the separator,
 * so only the entries of that word's length are compared: most separators
 * in code join words of other lengths or other letters. */
static size_t dash_cand(const unsigned char *s, size_t n, size_t i)
{
    if (s[i] == '-' && n - i >= 10 && s[i + 1] == '-'
        && memcmp(s + i, "-----BEGIN", 10) == 0)
        return i;
    size_t j = i;
    while (j > 0 && i - j < 7 && is_alnum(s[j - 1]))
        j--;
    size_t w = i - j;
    if (w < 2 || w > 6 || (j > 0 && is_alnum(s[j - 1])))
        return REDACT_NONE;
    if (w == 3 && s[i] == '_' && j >= 7 && memcmp(s + j - 7, "github_pat", 10) == 0
        && word_start(s, j - 7))
        return j - 7;
    for (size_t k = 0; k < sizeof dash_prefix / sizeof dash_prefix[0]; k++) {
        const char *p = dash_prefix[k].p;
        if (dash_prefix[k].n == w + 1 && (unsigned char)p[w] == s[i] && memcmp(s + j, p, w) == 0)
            return j;
    }
    return REDACT_NONE;
}

/* The '.' at s[i]: the start of a SendGrid, Vault, Google OAuth or Discord
 * token it is inside, or REDACT_NONE. */
static size_t dot_cand(const unsigned char *s, size_t n, size_t i)
{
    unsigned char p = i > 0 ? s[i - 1] : 0;
    /* most dots end a sentence or join names: only these bytes can come
     * before the first dot of a token (the second dot of a Discord token
     * comes 7 bytes after the first) */
    if (p != 'G' && p != 's' && p != 'b' && p != 'r' && p != '9'
        && !(n - i > 7 && s[i + 7] == '.'))
        return REDACT_NONE;
    size_t j = i;
    while (j > 0 && i - j < 29 && (is_alnum(s[j - 1]) || s[j - 1] == '_' || s[j - 1] == '-'))
        j--;
    if (j == i || !word_start(s, j))
        return REDACT_NONE;
    size_t m = i - j;
    if ((m == 2 && s[j] == 'S' && s[j + 1] == 'G')
        || (m == 3 && s[j] == 'h' && s[j + 1] == 'v')
        || (m == 4 && memcmp(s + j, "ya29", 4) == 0)
        || (m >= 24 && m <= 28 && (s[j] == 'M' || s[j] == 'N' || s[j] == 'O')))
        return j;
    return REDACT_NONE;
}

/* The ':' at s[i] after digits: the start of a Telegram bot token. */
static size_t digits_cand(const unsigned char *s, size_t i)
{
    size_t j = i;
    while (j > 0 && i - j <= 10 && s[j - 1] >= '0' && s[j - 1] <= '9')
        j--;
    return i - j >= 8 && i - j <= 10 ? j : REDACT_NONE;
}

/* ---- the value rule for assignments -------------------------------------- */

/* ASCII-lower-cased copy of v[0..n) into w (n <= cap), for the
 * case-insensitive look-ups below. */
static void lower_copy(char *w, const char *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        w[i] = (char)(c >= 'A' && c <= 'Z' ? c | 0x20 : c);
    }
}

static int ci_contains(const char *s, size_t n, const char *lit)
{
    char w[64];
    size_t m = strlen(lit);
    if (n > sizeof w)
        n = sizeof w;   /* names: only the first 64 bytes matter */
    lower_copy(w, s, n);
    return memmem(w, n, lit, m) != NULL;
}

/* Template and filler values that stand for a secret without being one
 * (n <= 1024, checked by the callers). One pass over the lower-cased
 * value: at each byte only the words starting with that byte are tried. */
static int is_placeholder(const char *v, size_t n)
{
    static const char *const whole[] = {
        "password", "secret", "token", "none", "null", "nil", "undefined",
        "true", "false", "required", "optional", "string",
    };
    char w[1024];
    if (n == 0 || n > sizeof w)
        return n == 0;
    if (v[0] == '$' || v[0] == '%' || v[0] == '{' || v[0] == '*')
        return 1;
    lower_copy(w, v, n);
#define AT(lit) (n - i >= sizeof(lit) - 1 && memcmp(w + i, lit, sizeof(lit) - 1) == 0)
    for (size_t i = 0; i < n; i++) {
        switch (w[i]) {
        case '<': case '>':
            return 1;
        case '[': if (AT("[redacted")) return 1; break;
        case 'x': if (AT("xxxx")) return 1; break;
        case '*': if (AT("****")) return 1; break;
        case '.': if (AT("....")) return 1; break;
        case '$': if (AT("${")) return 1; break;
        case '{': if (AT("{{")) return 1; break;
        case '%': if (AT("%(")) return 1; break;
        case 'y': if (AT("your")) return 1; break;
        case 'e': if (AT("example")) return 1; break;
        case 'p': if (AT("placeholder")) return 1; break;
        case 'c': if (AT("changeme") || AT("change_me") || AT("change-me")) return 1; break;
        case 'd': if (AT("dummy")) return 1; break;
        case 'r': if (AT("redacted") || AT("replace")) return 1; break;
        case 'i': if (AT("insert")) return 1; break;
        case 's': if (AT("sample")) return 1; break;
        case 't': if (AT("todo")) return 1; break;
        case 'f': if (AT("fixme")) return 1; break;
        default: break;
        }
    }
#undef AT
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
        if (strlen(whole[i]) == n && memcmp(w, whole[i], n) == 0)
            return 1;
    return 0;
}

static size_t digits_n(const char *v, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += v[i] >= '0' && v[i] <= '9';
    return d;
}

/*
 * Does the value v[0..n) of `name = value` look like a secret?
 *
 * The rule (false positives cost more than misses here, since the generic
 * shapes above catch most real keys whatever their name):
 *  - 8 to 1024 bytes, no whitespace (a quoted sentence is UI text or
 *    prose, "password: make sure it is long" is prose), and not a
 *    placeholder ("xxxx", "<your-key>", "${VAR}", "{{ secrets.X }}",
 *    "changeme", "example", an earlier [REDACTED:...], or a bare word like
 *    "null", "required", "password");
 *  - never "|": validation rules ('required|min:8'), not secrets;
 *  - not a constant's name: upper case with '_' and at most two digits
 *    ('MY_API_KEY', API_KEY_V2);
 *  - a bare (unquoted) value is code unless proven otherwise: not when a
 *    call or subscript follows ("get_token()", "env['X']"), not a dotted
 *    member path ("self.token", "process.env.TOKEN"); it must mix letters
 *    and digits with a digit before the last letter (so "token_v2",
 *    "user1234" are code, "a8Fj2kq9" is a secret), or mix letters with
 *    symbols and digits ("P@ssw0rd!");
 *  - a quoted value must not be a lower-case word or identifier
 *    ("access_token", "auth.login.password", "/usr/local/share"): it needs
 *    an upper-case letter, a digit, or a symbol other than _ . - /.
 */
static int value_is_secret(const char *v, size_t n, int quoted, char next)
{
    int lower = 0, upper = 0, digit = 0, sym = 0, ident_sym = 0;
    size_t last_letter = 0, first_digit = (size_t)-1;
    if (n < 8 || n > 1024)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c <= ' ' || c == 0x7f)
            return 0;
        if (c == '|')
            return 0;
        if (c >= 'a' && c <= 'z')
            lower = 1, last_letter = i;
        else if (c >= 'A' && c <= 'Z')
            upper = 1, last_letter = i;
        else if (c >= '0' && c <= '9') {
            digit = 1;
            if (first_digit == (size_t)-1)
                first_digit = i;
        } else if (c == '_' || c == '.' || c == '-' || c == '/')
            ident_sym = 1;
        else if (c >= 0x80)
            lower = 1, last_letter = i;   /* non-ASCII letters */
        else
            sym = 1;
    }
    int secret;
    if (!lower && upper && memchr(v, '_', n) && !sym && digits_n(v, n) <= 2)
        secret = 0;   /* a constant's name: 'MY_API_KEY', API_KEY_V2 */
    else if (quoted)
        secret = upper || digit || sym;
    else if (next == '(' || next == '[')
        secret = 0;
    else if (!digit && !sym && (lower || upper))
        secret = 0;   /* plain word, identifier or path */
    else if (ident_sym && !sym && memchr(v, '.', n) && !digit)
        secret = 0;
    else if (sym && (lower || upper) && digit)
        secret = 1;
    else   /* letters and digits interleaved, not just a numeric suffix */
        secret = (lower || upper) && digit && first_digit < last_letter;
    /* the placeholder look-up is the costly part: only when it matters */
    return secret && !is_placeholder(v, n);
}

/* ---- the scan ----------------------------------------------------------- */

static void report_add(struct cairn_redact_report *rep, const char *kind)
{
    if (!rep)
        return;
    for (size_t i = 0; i < rep->n_kinds; i++)
        if (rep->kinds[i].kind == kind || strcmp(rep->kinds[i].kind, kind) == 0) {
            rep->kinds[i].count++;
            return;
        }
    if (rep->n_kinds < sizeof rep->kinds / sizeof rep->kinds[0]) {
        rep->kinds[rep->n_kinds].kind = kind;
        rep->kinds[rep->n_kinds].count = 1;
        rep->n_kinds++;
    }
}

/* A span to mask, [start, end), and its kind. */
struct redact_hit {
    size_t start, end;
    const char *kind;
};

/* Match data for one redact_text call, made on the first candidate so
 * that clean text allocates nothing. */
struct redact_scan {
    const char *in;
    size_t n;
    pcre2_match_data *md_s, *md_a;
};

static int scan_ready(struct redact_scan *sc)
{
    if (sc->md_s)
        return 0;
    if (pthread_once(&redact_once, redact_init) != 0 || !redact_ready)
        return -1;
    sc->md_s = pc.md_create(redact_shape_re, NULL);
    sc->md_a = pc.md_create(redact_assign_re, NULL);
    return sc->md_s && sc->md_a ? 0 : -1;
}

/* pcre2_jit_match skips pcre2_match's per-call checks, which cost more
 * than the match itself for the short anchored tries made here. */
static int redact_match(const pcre2_code *re, int jit, struct redact_scan *sc,
                        size_t at, pcre2_match_data *md)
{
    if (jit)
        return pc.jit_match(re, (PCRE2_SPTR)sc->in, sc->n, at, 0, md, NULL);
    return pc.match(re, (PCRE2_SPTR)sc->in, sc->n, at, 0, md, NULL);
}

/* A fixed-shape secret starting at `at` (the patterns are anchored)?
 * Returns 1 and fills h, or 0. */
static int shape_at(struct redact_scan *sc, size_t at, struct redact_hit *h)
{
    int rc = redact_match(redact_shape_re, redact_shape_jit, sc, at, sc->md_s);
    if (rc <= 0)
        return 0;   /* no match, or a match error: leave the bytes alone */
    PCRE2_SIZE *ov = pc.ovector(sc->md_s);
    int g = 1;
    while (g < rc && ov[2 * g] == PCRE2_UNSET)
        g++;
    if (g > REDACT_N_SHAPES || ov[1] <= ov[0])
        return 0;
    h->start = ov[0];
    h->end = ov[1];
    h->kind = redact_shape_kind[g];
    return 1;
}

static int name_is_aws_secret(const char *s, size_t n)
{
    return ci_contains(s, n, "aws") || ci_contains(s, n, "secret_access")
        || ci_contains(s, n, "secretaccess") || ci_contains(s, n, "secret-access");
}

static int is_aws_secret_value(const char *v, size_t n)
{
    static const char set[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+=";
    if (n < 16 || n > 1024)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!memchr(set, v[i], sizeof set - 1))
            return 0;
    return !is_placeholder(v, n);
}

/* ---- random-looking values: the entropy rule ----------------------------- */

/* Shannon entropy of v[0..n) in bits per byte. */
static double entropy(const char *v, size_t n)
{
    unsigned cnt[256] = { 0 };
    double h = 0;
    for (size_t i = 0; i < n; i++)
        cnt[(unsigned char)v[i]]++;
    for (int c = 0; c < 256; c++)
        if (cnt[c]) {
            double p = (double)cnt[c] / (double)n;
            h -= p * log2(p);
        }
    return h;
}

static int is_hexdig(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/*
 * Is v[0..n) a random key rather than a word, identifier, path or hash
 * name? The rule for values of names that only suggest a secret
 * (signing_key, salt, cookie...), where "key: value" is mostly code:
 *  - 16 to 1024 bytes of [A-Za-z0-9+/=_-] with letters and digits;
 *  - hex: at least 32 digits, and not exactly 40 (a git commit or SHA-1
 *    is the usual 40-hex value), entropy at least 3.2 bits (of 4);
 *  - otherwise: at least 20 bytes, upper and lower case, and entropy at
 *    least 0.8 of the most a string that long can have (log2 of its length,
 *    at most 6): random base64 of 20 bytes has about 4.1 of 4.3; words,
 *    UUIDs (no upper case) and identifiers stay well below or fail the
 *    case test.
 */
static int looks_random(const char *v, size_t n)
{
    int lower = 0, upper = 0, digit = 0, hex = 1;
    if (n < 16 || n > 1024)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c >= '0' && c <= '9')
            digit = 1;
        else if (c >= 'a' && c <= 'z')
            lower = 1;
        else if (c >= 'A' && c <= 'Z')
            upper = 1;
        else if (c != '+' && c != '/' && c != '=' && c != '_' && c != '-')
            return 0;
        hex &= is_hexdig(c);
    }
    if (!digit || !(lower || upper))
        return 0;
    if (hex)
        return n >= 32 && n != 40 && entropy(v, n) >= 3.2;
    if (n < 20 || !lower || !upper)
        return 0;
    double max = log2((double)(n < 64 ? n : 64));
    return entropy(v, n) >= 0.8 * max && !is_placeholder(v, n);
}

/* "Authorization: SCHEME CREDENTIALS" with the value starting at v0: the
 * credentials of a Bearer, Basic, Token or Bot scheme (8 bytes or more,
 * not a placeholder such as "$TOKEN" or "<token>"). */
static int auth_at(const char *in, size_t n, size_t v0, struct redact_hit *h)
{
    static const char *const scheme[] = { "bearer", "basic", "token", "bot" };
    size_t i = v0, t;
    while (i < n && i - v0 < 8 && ((in[i] | 0x20) >= 'a' && (in[i] | 0x20) <= 'z'))
        i++;
    size_t m = i - v0;
    int ok = 0;
    char w[8];
    if (m == 0 || m > 6 || i >= n || !is_space((unsigned char)in[i]))
        return 0;
    lower_copy(w, in + v0, m);
    for (size_t k = 0; k < sizeof scheme / sizeof scheme[0]; k++)
        ok |= strlen(scheme[k]) == m && memcmp(w, scheme[k], m) == 0;
    if (!ok)
        return 0;
    while (i < n && is_space((unsigned char)in[i]))
        i++;
    for (t = i; t < n && t - i <= 2048; t++) {
        unsigned char c = (unsigned char)in[t];
        if (!is_alnum(c) && !strchr("._~+/=-", c))
            break;
    }
    if (t - i < 8 || is_placeholder(in + i, t - i) || (t < n && (in[t] == '$' || in[t] == '{')))
        return 0;
    h->start = i, h->end = t, h->kind = "authorization";
    return 1;
}

/* A "--password VALUE" flag (the "=" form is an assignment) starting at
 * s[i] == '-': 1 and h filled when the value is not a placeholder nor a
 * plain lower-case word ("--password flag"). */
static int flag_at(const unsigned char *s, size_t n, size_t i, struct redact_hit *h)
{
    static const char *const flag[] = { "--password", "--passwd", "--pass", "--token",
                                        "--api-key", "--secret" };
    size_t j = REDACT_NONE, v, e;
    if (i > 0 && !is_space(s[i - 1]))
        return 0;
    for (size_t k = 0; k < sizeof flag / sizeof flag[0] && j == REDACT_NONE; k++) {
        size_t m = strlen(flag[k]);
        if (n - i > m && memcmp(s + i, flag[k], m) == 0 && is_space(s[i + m]))
            j = i + m;
    }
    if (j == REDACT_NONE)
        return 0;
    for (v = j; v < n && is_space(s[v]); v++)
        ;
    unsigned char q = v < n && (s[v] == '"' || s[v] == '\'') ? s[v] : 0;
    v += q != 0;
    for (e = v; e < n && e - v <= 1024 && s[e] > ' ' && s[e] != '"' && s[e] != '\''
                && s[e] != '`' && s[e] != '\\'; e++)
        ;
    if (e - v < 6 || e - v > 1024 || s[v] == '-' || (q && (e == n || s[e] != q)))
        return 0;
    int upper = 0, other = 0;
    for (size_t k = v; k < e; k++) {
        upper |= s[k] >= 'A' && s[k] <= 'Z';
        other |= !((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z'));
    }
    if (!upper && !other)
        return 0;
    if (is_placeholder((const char *)s + v, e - v))
        return 0;
    h->start = v, h->end = e, h->kind = "password";
    return 1;
}

/* ---- bare keys: long runs without a prefix -------------------------------- */

/* A bare key is a run of this many [A-Za-z0-9+/] bytes or more (Twilio
 * SK + 32 hex is the shortest). */
#define RUN_MIN 34

static int is_runc(unsigned char c)
{
    return is_alnum(c) || c == '+' || c == '/';
}

/*
 * The next run of RUN_MIN or more run bytes starting at or after `from`
 * (s[from - 1] is not a run byte): 1 and [*a, *b), or 0. Runs are found by
 * probing every RUN_MIN-th byte: a run that long must contain the probe,
 * so text of words costs a few looks per RUN_MIN bytes.
 */
static int next_run(const unsigned char *s, size_t n, size_t from, size_t *a, size_t *b)
{
    size_t lo = from;   /* s[lo - 1] is not a run byte (or lo == from) */
    while (n - lo >= RUN_MIN) {
        size_t q = lo + RUN_MIN - 1;
        if (!is_runc(s[q])) {
            lo = q + 1;
            continue;
        }
        size_t x = q, y = q + 1;
        while (x > lo && is_runc(s[x - 1]))
            x--;
        while (y < n && is_runc(s[y]))
            y++;
        if (y - x >= RUN_MIN) {
            *a = x, *b = y;
            return 1;
        }
        lo = y;
    }
    return 0;
}

/* Does s[..e) end with a "[REDACTED:kind]" marker? */
static int ends_in_mask(const unsigned char *s, size_t e)
{
    for (size_t k = e - 1; k > 0 && e - k < 40; k--)
        if (s[k - 1] == '[')
            return e - (k - 1) >= 10 && memcmp(s + k - 1, "[REDACTED:", 10) == 0;
    return 0;
}

/* Is the run [a, b) a line of a base64 block (a PEM body, a public key,
 * a certificate): the line before or after it a long run or a "-----"
 * boundary? Its 40-byte last line is not an AWS key. A neighbour line
 * that is a mask counts as a block line too: it was a long run or a PEM
 * block before it was masked, and the verdict must not change when a
 * later pass sees the mask instead. */
static int in_b64_block(const unsigned char *s, size_t n, size_t a, size_t b)
{
    size_t k;
    if (a > 0 && s[a - 1] == '\n') {
        size_t e = a - 1;
        if (e > 0 && s[e - 1] == '\r')
            e--;
        if (e >= 5 && memcmp(s + e - 5, "-----", 5) == 0)
            return 1;
        if (e > 0 && s[e - 1] == ']' && ends_in_mask(s, e))
            return 1;
        for (k = e; k > 0 && e - k < 40 && is_runc(s[k - 1]); k--)
            ;
        if (e - k >= 40)
            return 1;
    }
    size_t q = b;
    if (q < n && s[q] == '\r')
        q++;
    if (q < n && s[q] == '\n') {
        q++;
        if ((n - q >= 5 && memcmp(s + q, "-----", 5) == 0)
            || (n - q >= 10 && memcmp(s + q, "[REDACTED:", 10) == 0))
            return 1;
        for (k = q; k < n && k - q < 40 && is_runc(s[k]); k++)
            ;
        if (k - q >= 40)
            return 1;
    }
    return 0;
}

/*
 * Is the run [a, b) a bare key? Twilio API key SIDs ("SK" + 32 hex),
 * Databricks tokens ("dapi" + 32 hex, maybe "-N"), and AWS secret access
 * keys: 40 bytes of base64 with both cases and digits, at most two '/'
 * or '+' each, and entropy of at least 4.3 bits (random ones have about
 * 4.85; base64 of text, paths and identifiers fall below or fail the
 * rest). Glued to '_', '-', '.' or '=' it is part of something longer.
 */
static int run_at(const unsigned char *s, size_t n, size_t a, size_t b, struct redact_hit *h)
{
    size_t m = b - a, k;
    if (a > 0 && (s[a - 1] == '_' || s[a - 1] == '-' || s[a - 1] == '.' || s[a - 1] == '='
                  || s[a - 1] == '\\'))
        return 0;
    int glued = b < n && (s[b] == '_' || s[b] == '-' || s[b] == '.' || s[b] == '=');
    if (m == 34 && s[a] == 'S' && s[a + 1] == 'K' && !glued) {
        for (k = a + 2; k < b && ((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'f'));
             k++)
            ;
        if (k == b) {
            h->start = a, h->end = b, h->kind = "twilio";
            return 1;
        }
    }
    if (m == 36 && memcmp(s + a, "dapi", 4) == 0) {
        for (k = a + 4; k < b && ((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'f'));
             k++)
            ;
        if (k == b &&
            (!glued || (s[b] == '-' && b + 1 < n && s[b + 1] >= '0' && s[b + 1] <= '9'))) {
            if (glued)
                for (b += 1; b < n && s[b] >= '0' && s[b] <= '9'; b++)
                    ;
            if (b < n && (is_runc(s[b]) || s[b] == '_' || s[b] == '-' || s[b] == '.'))
                return 0;
            h->start = a, h->end = b, h->kind = "databricks";
            return 1;
        }
    }
    if (m != 40 || glued || in_b64_block(s, n, a, b))
        return 0;
    int lower = 0, upper = 0, digit = 0, slash = 0, plus = 0;
    for (k = a; k < b; k++) {
        unsigned char c = s[k];
        lower |= c >= 'a' && c <= 'z';
        upper |= c >= 'A' && c <= 'Z';
        digit |= c >= '0' && c <= '9';
        slash += c == '/';
        plus += c == '+';
    }
    if (!lower || !upper || !digit || slash > 2 || plus > 2)
        return 0;
    if (entropy((const char *)s + a, m) < 4.3 || is_placeholder((const char *)s + a, m))
        return 0;
    h->start = a, h->end = b, h->kind = "aws";
    return 1;
}

/* A value masked for its name: when a known shape or bare key starts it,
 * that gives the kind (and span) instead. */
static void known_at(struct redact_scan *sc, size_t v0, struct redact_hit *h)
{
    const unsigned char *s = (const unsigned char *)sc->in;
    struct redact_hit k;
    size_t e = v0;
    while (e < sc->n && is_runc(s[e]))
        e++;
    if (shape_at(sc, v0, &k) || (e - v0 >= RUN_MIN && run_at(s, sc->n, v0, e, &k)))
        *h = k;
}

/*
 * A bare value ends where another secret-named assignment starts inside
 * it ("a_key=X,b_key=Y" has no comma in "a_key=Xb_key=Y"): the inner one
 * is judged on its own. Otherwise masking the inner value would shorten
 * the outer one (the mask's '[' ends a bare value) and change the verdict
 * on it in a later pass; a chain of such values would need a pass per
 * link, and masking would not be idempotent.
 */
static size_t bare_end(const unsigned char *s, size_t v0, size_t v1)
{
    for (size_t p = v0 + 1; p < v1; p++)
        if (s[p] == ':' || s[p] == '=') {
            size_t c = assign_cand(s, p);
            if (c != REDACT_NONE && c >= v0)
                return c;
        }
    return v1;
}

/* `name = value` with the name starting at `at`: 1 and h filled when the
 * value is a secret. A known shape at the start of the value gives its own
 * kind ("openai" rather than "assignment"). */
static int assign_at(struct redact_scan *sc, size_t at, struct redact_hit *h)
{
    const char *in = sc->in;
    int rc = redact_match(redact_assign_re, redact_assign_jit, sc, at, sc->md_a);
    if (rc <= 0)
        return 0;
    PCRE2_SIZE *ov = pc.ovector(sc->md_a);
    size_t v0 = ov[0], v1 = ov[1], name0 = ov[2], name1 = ov[3];
    if (v1 <= v0)
        return 0;
    char q = v0 > 0 ? in[v0 - 1] : '\0';
    int quoted = q == '"' || q == '\'' || q == '`';
    if (!quoted && (v1 = bare_end((const unsigned char *)in, v0, v1)) == v0)
        return 0;
    int cls = name_before((const unsigned char *)in, name1);
    if (cls == N_AUTH) {
        if (!auth_at(in, sc->n, v0, h))
            return 0;
        known_at(sc, h->start, h);
        return 1;
    }
    if (is_aws_secret_value(in + v0, v1 - v0) && name_is_aws_secret(in + name0, name1 - name0))
        h->kind = "aws";
    else if (cls == N_SECRET
             && value_is_secret(in + v0, v1 - v0, quoted, v1 < sc->n ? in[v1] : '\0'))
        h->kind = "assignment";
    else if (cls == N_AZURE && v1 - v0 >= 20 && is_aws_secret_value(in + v0, v1 - v0))
        h->kind = "azure";
    else if (cls == N_KEYISH && looks_random(in + v0, v1 - v0))
        h->kind = "assignment";
    else
        return 0;   /* the scan goes on inside the value: a shape there is still found */
    h->start = v0, h->end = v1;
    known_at(sc, v0, h);
    return 1;
}

/* Bytes next to which a mask changes nothing for a later pass: no pattern
 * reads across them (see redact_text). */
static int is_quiet(unsigned char c)
{
    return c <= ' ' || c >= 0x80 || c == '"' || c == '\'' || c == '`' || c == ','
        || c == ';' || c == '(' || c == ')' || c == '[' || c == ']' || c == '{'
        || c == '}' || c == '<' || c == '>' || c == '|' || c == '&' || c == '\\';
}

/* One masking pass. *glued is set when a masked span touches a byte that
 * is not quiet, i.e. when another pass could find more. */
static int redact_pass(const char *in, size_t n, struct buf *out,
                       struct cairn_redact_report *rep, int *glued)
{
    const unsigned char *s = (const unsigned char *)in;
    struct redact_scan sc = { in, n, NULL, NULL };
    int masked = 0, ret = -1;
    size_t pos = 0;   /* in[0..pos) is already in out */

    if (!in)
        n = 0;
    size_t ra = 0, rb = 0;   /* the next long run (bare keys), if have_run */
    int have_run = next_run(s, n, 0, &ra, &rb);
    for (size_t i = 0; i < n; i++) {
        struct redact_hit h;
        int found = 0;
        while (have_run && ra < i)
            have_run = next_run(s, n, rb, &ra, &rb);
        /* the hot loop: most bytes are no trigger and start no long run */
        size_t lim = have_run ? ra : n;
        while (i < lim && redact_trig[s[i]] == T_NONE)
            i++;
        if (i == n)
            break;
        if (have_run && i == ra) {
            size_t a = ra, b = rb;
            have_run = next_run(s, n, rb, &ra, &rb);
            found = a >= pos && run_at(s, n, a, b, &h);
            if (!found && redact_trig[s[i]] == T_NONE)
                continue;
        }
        unsigned t = redact_trig[s[i]];
        size_t shape = REDACT_NONE, name = REDACT_NONE;
        switch (found ? T_NONE : t) {
        case T_NONE:
            break;
        case T_SEP_DASH:
            if (s[i] == '-' && i + 1 < n && s[i + 1] == '-' && i >= pos
                && flag_at(s, n, i, &h)) {
                found = 1;
                break;
            }
            shape = dash_cand(s, n, i);
            break;
        case T_A:
            if (n - i >= 4
                && ((s[i + 1] == 'K' && s[i + 2] == 'I' && s[i + 3] == 'A')
                    || (s[i + 1] == 'S' && s[i + 2] == 'I' && s[i + 3] == 'A')
                    || (s[i + 1] == 'I' && s[i + 2] == 'z' && s[i + 3] == 'a')))
                shape = i;
            break;
        case T_J:
            if (i >= 2 && s[i - 2] == 'e' && s[i - 1] == 'y')
                shape = i - 2;
            break;
        case T_DOT:
            shape = dot_cand(s, n, i);
            break;
        default:   /* ':' or '=' */
            if (t == T_COLON && n - i >= 3 && s[i + 1] == '/' && s[i + 2] == '/')
                shape = url_cand(s, n, i);
            else if (t == T_COLON && i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
                shape = digits_cand(s, i);
            else
                name = assign_cand(s, i);
            break;
        }
        if (!found) {
            /* a candidate inside what was just masked is not one */
            if ((shape == REDACT_NONE || shape < pos) && (name == REDACT_NONE || name < pos))
                continue;
            if (scan_ready(&sc))
                goto out;
            found = shape != REDACT_NONE ? shape_at(&sc, shape, &h) : assign_at(&sc, name, &h);
        }
        if (!found || h.start < pos)
            continue;
        if (buf_add(out, in + pos, h.start - pos) || buf_adds(out, "[REDACTED:")
            || buf_adds(out, h.kind) || buf_addc(out, ']'))
            goto out;
        report_add(rep, h.kind);
        masked++;
        if ((h.start > 0 && !is_quiet(s[h.start - 1])) || (h.end < n && !is_quiet(s[h.end])))
            *glued = 1;
        pos = h.end;
        if (pos > i)
            i = pos - 1;   /* go on after the mask */
    }
    if (buf_add(out, in ? in + pos : "", n - pos))
        goto out;
    ret = masked;
out:
    if (pc.md_free) {               /* NULL: no candidate loaded it */
        pc.md_free(sc.md_s);
        pc.md_free(sc.md_a);
    }
    return ret;
}

/*
 * Masking is repeated on its own output until nothing changes, which makes
 * it idempotent by construction: a token glued to a secret
 * ("...KEY-----AIza...") was not one while its neighbour was there, and can
 * become one next to "[REDACTED:kind]". Patterns only look one byte past
 * their match, and an assignment value holding a marker is a placeholder,
 * so when every masked span sits between quiet bytes (space, quotes,
 * brackets, punctuation) another pass cannot differ and is skipped: the
 * extra pass happens only for glued secrets. Every pass that masks
 * something consumes unmasked bytes (markers never match), so the loop
 * ends; the cap is a safety net.
 */
#define REDACT_MAX_PASSES 8

int redact_text(const char *in, size_t n, struct buf *out,
                struct cairn_redact_report *rep)
{
    struct buf prev = BUF_INIT;
    size_t base = out->n;
    int total = 0, ret = -1;

    int glued = 0;
    int m = redact_pass(in, n, out, rep, &glued);
    for (int pass = 1; m > 0; pass++) {
        total += m;
        if (!glued || pass == REDACT_MAX_PASSES)
            break;
        buf_reset(&prev);
        prev.cap = out->cap;
        if (buf_add(&prev, out->p + base, out->n - base)) {
            out->err = prev.err;
            goto out;
        }
        buf_truncate(out, base);
        glued = 0;
        m = redact_pass(prev.p, prev.n, out, rep, &glued);
    }
    if (m < 0)
        goto out;
    ret = total;
out:
    buf_release(&prev);
    return ret;
}

int redact_enabled(const char *v)
{
    return !(v && strcmp(v, "0") == 0);
}
