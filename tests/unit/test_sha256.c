/*
 * test_sha256.c: SHA-256 against the FIPS 180-2 / NIST example vectors,
 * fed whole and in odd-sized pieces, and sha256_file on a temp file.
 */
#include "t.h"
#include "util/sha256.h"

#include <stdlib.h>
#include <unistd.h>

static void hex_of(const void *p, size_t n, size_t step, char out[65])
{
    struct sha256 s;
    unsigned char d[32];
    size_t i;

    sha256_init(&s);
    for (i = 0; i < n; i += step)
        sha256_update(&s, (const char *)p + i, n - i < step ? n - i : step);
    sha256_final(&s, d);
    sha256_hex(d, out);
}

static void test_vectors(void)
{
    static const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    static const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                              "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    char h[65];
    size_t steps[] = { 1, 3, 63, 64, 65, 1000 }, k;

    for (k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
        hex_of("abc", 3, steps[k], h);
        T_EQ_STR(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        hex_of(m448, strlen(m448), steps[k], h);
        T_EQ_STR(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
        hex_of(m896, strlen(m896), steps[k], h);
        T_EQ_STR(h, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    }
    hex_of("", 0, 1, h);
    T_EQ_STR(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    {
        char *a = malloc(1000000);
        memset(a, 'a', 1000000);
        hex_of(a, 1000000, 4096, h);
        T_EQ_STR(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
        hex_of(a, 1000000, 1000000, h);
        T_EQ_STR(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
        free(a);
    }
    /* Lengths around the padding boundary (55, 56, 64 bytes) differ. */
    {
        char x[65], h55[65], h56[65];
        memset(x, 'x', sizeof(x));
        hex_of(x, 55, 55, h55);
        hex_of(x, 56, 56, h56);
        T_CHECK(strcmp(h55, h56) != 0);
    }
}

static void test_file(void)
{
    char path[] = "/tmp/cairn-sha-XXXXXX", h[65];
    uint64_t size = 0;
    int fd = mkstemp(path);

    T_CHECK(fd >= 0);
    if (fd < 0)
        return;
    T_EQ_INT(write(fd, "abc", 3), 3);
    close(fd);
    T_EQ_INT(sha256_file(path, h, &size), 0);
    T_EQ_STR(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    T_EQ_INT(size, 3);
    unlink(path);
    T_EQ_INT(sha256_file(path, h, NULL), -1);
}

int main(void)
{
    T_RUN(test_vectors);
    T_RUN(test_file);
    return T_DONE();
}
