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

#include "capture/redact.h"

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
    "|(" L_EDGE "(?:(?:sk|rk)_(?:live|test)|pk_live)_[A-Za-z0-9]{16,}" R_EDGE ")"
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
     * (after \K) is masked; an already-masked one is skipped. */
    "|((?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\\s/?#@:\"'<>]{1,128}:"
        "\\K(?!\\[REDACTED:)[^\\s/?#@\"'<>]{1,256}(?=@))";

static const char *const redact_shape_kind[] = {
    NULL, "anthropic", "openai", "github", "gitlab", "aws", "google", "slack",
    "stripe", "huggingface", "npm", "jwt", "private-key", "url-password",
};
#define REDACT_N_SHAPES 13

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

static pcre2_code *redact_compile(const char *src, int *jit)
{
    int err;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)src, PCRE2_ZERO_TERMINATED, PCRE2_ANCHORED,
                                   &err, &off, NULL);
    if (!re)
        return NULL;
    /* JIT failing (no JIT on this CPU) is not fatal: the interpreter gives
     * the same matches, only slower. */
    *jit = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
    return re;
}

static void redact_init(void)
{
    redact_shape_re = redact_compile(redact_shape_src, &redact_shape_jit);
    redact_assign_re = redact_compile(redact_assign_src, &redact_assign_jit);
    redact_ready = redact_shape_re && redact_assign_re;
}

/* ---- candidates -------------------------------------------------------- */

#define REDACT_NONE ((size_t)-1)

enum { T_NONE, T_SEP_DASH, T_A, T_J, T_COLON, T_EQ };

/* The only bytes the scan stops at: every pattern has one of them at a
 * known distance from its start. */
static const unsigned char redact_trig[256] = {
    ['-'] = T_SEP_DASH, ['_'] = T_SEP_DASH, ['A'] = T_A, ['J'] = T_J,
    [':'] = T_COLON, ['='] = T_EQ,
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

/* Does the identifier ending right before s[e] end in a secret name?
 * Compared lower-cased with separators dropped, so "API_KEY", "apiKey" and
 * "X-Api-Key" all end in "apikey". */
static int name_before(const unsigned char *s, size_t e)
{
    char w[24];
    size_t k = 0;
    while (e > 0 && k < sizeof w && is_ident(s[e - 1])) {
        unsigned char c = s[--e];
        if (c == '_' || c == '-' || c == '.')
            continue;
        w[k++] = (char)(c | 0x20);   /* reversed, lower-cased */
    }
    /* w holds the name backwards: "token" is "nekot". */
#define ENDS(lit) (k >= sizeof(lit) - 1 && memcmp(w, lit, sizeof(lit) - 1) == 0)
    return ENDS("nekot") || ENDS("terces") || ENDS("drowssap") || ENDS("dwssap")
        || ENDS("yekipa") || ENDS("yekterces") || ENDS("yeketavirp")
        || ENDS("yeksseccaterces");
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
    if (j == 0 || !is_ident(s[j - 1]) || !name_before(s, j))
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

/* The '-' or '_' at s[i]: where the token it is part of the prefix of
 * starts, or REDACT_NONE. */
static size_t dash_cand(const unsigned char *s, size_t n, size_t i)
{
    unsigned char p1 = i >= 1 ? s[i - 1] : 0, p2 = i >= 2 ? s[i - 2] : 0;
    unsigned char p3 = i >= 3 ? s[i - 3] : 0;
    if (s[i] == '-' && n - i >= 10 && s[i + 1] == '-'
        && memcmp(s + i, "-----BEGIN", 10) == 0)
        return i;
    if (i < 2)
        return REDACT_NONE;
    /* sk- sk_ rk_ pk_ hf_ */
    if (((p1 == 'k' && (p2 == 's' || p2 == 'r' || p2 == 'p'))
         || (p1 == 'f' && p2 == 'h')) && word_start(s, i - 2))
        return i - 2;
    if (i < 3)
        return REDACT_NONE;
    /* ghp_ gho_ ghu_ ghs_ ghr_ npm_ */
    if (((p3 == 'g' && p2 == 'h' && (p1 == 'p' || p1 == 'o' || p1 == 'u'
                                     || p1 == 's' || p1 == 'r'))
         || (p3 == 'n' && p2 == 'p' && p1 == 'm')) && word_start(s, i - 3))
        return i - 3;
    /* glpat- github_pat_ */
    if (p3 == 'p' && p2 == 'a' && p1 == 't') {
        if (s[i] == '-' && i >= 5 && s[i - 5] == 'g' && s[i - 4] == 'l')
            return i - 5;
        if (s[i] == '_' && i >= 10 && memcmp(s + i - 10, "github_", 7) == 0)
            return i - 10;
        return REDACT_NONE;
    }
    /* xoxb- xoxp- xoxa- xoxr- xoxs- */
    if (s[i] == '-' && i >= 4 && s[i - 4] == 'x' && p3 == 'o' && p2 == 'x')
        return i - 4;
    return REDACT_NONE;
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
    sc->md_s = pcre2_match_data_create_from_pattern(redact_shape_re, NULL);
    sc->md_a = pcre2_match_data_create_from_pattern(redact_assign_re, NULL);
    return sc->md_s && sc->md_a ? 0 : -1;
}

/* pcre2_jit_match skips pcre2_match's per-call checks, which cost more
 * than the match itself for the short anchored tries made here. */
static int redact_match(const pcre2_code *re, int jit, struct redact_scan *sc,
                        size_t at, pcre2_match_data *md)
{
    if (jit)
        return pcre2_jit_match(re, (PCRE2_SPTR)sc->in, sc->n, at, 0, md, NULL);
    return pcre2_match(re, (PCRE2_SPTR)sc->in, sc->n, at, 0, md, NULL);
}

/* A fixed-shape secret starting at `at` (the patterns are anchored)?
 * Returns 1 and fills h, or 0. */
static int shape_at(struct redact_scan *sc, size_t at, struct redact_hit *h)
{
    int rc = redact_match(redact_shape_re, redact_shape_jit, sc, at, sc->md_s);
    if (rc <= 0)
        return 0;   /* no match, or a match error: leave the bytes alone */
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(sc->md_s);
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

/* `name = value` with the name starting at `at`: 1 and h filled when the
 * value is a secret. A known shape at the start of the value gives its own
 * kind ("openai" rather than "assignment"). */
static int assign_at(struct redact_scan *sc, size_t at, struct redact_hit *h)
{
    const char *in = sc->in;
    int rc = redact_match(redact_assign_re, redact_assign_jit, sc, at, sc->md_a);
    if (rc <= 0)
        return 0;
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(sc->md_a);
    size_t v0 = ov[0], v1 = ov[1], name0 = ov[2], name1 = ov[3];
    if (v1 <= v0)
        return 0;
    char q = v0 > 0 ? in[v0 - 1] : '\0';
    int quoted = q == '"' || q == '\'' || q == '`';
    if (is_aws_secret_value(in + v0, v1 - v0) && name_is_aws_secret(in + name0, name1 - name0))
        h->kind = "aws";
    else if (value_is_secret(in + v0, v1 - v0, quoted, v1 < sc->n ? in[v1] : '\0'))
        h->kind = "assignment";
    else
        return 0;   /* the scan goes on inside the value: a shape there is still found */
    h->start = v0, h->end = v1;
    struct redact_hit sh;
    if (shape_at(sc, v0, &sh))
        *h = sh;
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
    for (size_t i = 0; i < n; i++) {
        /* the hot loop: most bytes are no trigger */
        while (i < n && redact_trig[s[i]] == T_NONE)
            i++;
        if (i == n)
            break;
        unsigned t = redact_trig[s[i]];
        size_t shape = REDACT_NONE, name = REDACT_NONE;
        switch (t) {
        case T_SEP_DASH:
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
        default:   /* ':' or '=' */
            if (t == T_COLON && n - i >= 3 && s[i + 1] == '/' && s[i + 2] == '/')
                shape = url_cand(s, n, i);
            else
                name = assign_cand(s, i);
            break;
        }
        /* a candidate inside what was just masked is not one */
        if ((shape == REDACT_NONE || shape < pos) && (name == REDACT_NONE || name < pos))
            continue;
        if (scan_ready(&sc))
            goto out;
        struct redact_hit h;
        int found = shape != REDACT_NONE ? shape_at(&sc, shape, &h) : assign_at(&sc, name, &h);
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
    pcre2_match_data_free(sc.md_s);
    pcre2_match_data_free(sc.md_a);
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

int redact_enabled(void)
{
    const char *v = getenv("CAIRN_REDACT");
    return !(v && strcmp(v, "0") == 0);
}
