/*
 * test_embed_simd_env.c: CAIRN_SIMD caps the kernels' SIMD level for the
 * process (kernels.c, read once at the first use): avx2 gives at most the
 * AVX2 level, portable the plain loops, and the cap still gives the right
 * products. The CPU's own level (embed_k_simd_cpu) is not capped. Each
 * setting runs in a child process, as the variable is read only once.
 * AVX-VNNI (read from CPUID, not __builtin_cpu_supports, which clang
 * does not know for it) must agree with the kernel's avx_vnni flag.
 */
#include "t.h"
#include "embed/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* In a fresh process: CAIRN_SIMD=value, then the level in use (or 9 when
 * the product under it is wrong) as the exit code. */
static int level_under(const char *value)
{
    pid_t pid = fork();
    int st;

    if (pid == 0) {
        float x[2 * 40], w[3 * 40], y[6], r[6];
        int i, ok = 1;

        if (value)
            setenv("CAIRN_SIMD", value, 1);
        else
            unsetenv("CAIRN_SIMD");
        for (i = 0; i < 80; i++)
            x[i] = (float)(i % 7) - 3.0f;
        for (i = 0; i < 120; i++)
            w[i] = (float)(i % 5) * 0.5f;
        embed_k_linear(x, w, NULL, y, 2, 3, 40);
        embed_k_linear_ref(x, w, NULL, r, 2, 3, 40);
        for (i = 0; i < 6; i++)
            ok &= fabsf(y[i] - r[i]) < 1e-4f;
        _exit(ok ? embed_k_simd() : 9);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static void test_caps(void)
{
    int cpu = embed_k_simd_cpu();

    T_EQ_INT(level_under(NULL), cpu);
    T_EQ_INT(level_under("avx512"), cpu);
    T_EQ_INT(level_under("avx2"), cpu < 1 ? cpu : 1);
    T_EQ_INT(level_under("portable"), 0);
    T_EQ_INT(level_under("bogus"), cpu);
    T_EQ_STR(embed_k_simd_name(2), "avx512");
    T_EQ_STR(embed_k_simd_name(1), "avx2");
    T_EQ_STR(embed_k_simd_name(0), "portable");
    if (cpu < 2)
        T_SKIP("CAIRN_SIMD=avx2 on a CPU with AVX-512: this CPU has none");
}

/* In a fresh process: CAIRN_SIMD=value (NULL: unset), then
 * embed_k_simd_vnni as the exit code. */
static int vnni_under(const char *value)
{
    pid_t pid = fork();
    int st;

    if (pid == 0) {
        if (value)
            setenv("CAIRN_SIMD", value, 1);
        else
            unsetenv("CAIRN_SIMD");
        _exit(embed_k_simd_vnni());
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

/* 1 if the first flags line of /proc/cpuinfo has the word flag, 0 if not,
 * -1 if there is no such line to read. */
static int cpuinfo_flag(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int found = -1;

    while (f && fgets(line, sizeof(line), f)) {
        char *tok, *save = NULL;

        if (strncmp(line, "flags", 5) != 0)
            continue;
        found = 0;
        for (tok = strtok_r(strchr(line, ':'), ": \t\n", &save); tok;
             tok = strtok_r(NULL, " \t\n", &save))
            found |= strcmp(tok, flag) == 0;
        break;
    }
    if (f)
        fclose(f);
    return found;
}

static void test_vnni(void)
{
    int cpu = embed_k_simd_cpu(), has = cpuinfo_flag("avx_vnni");

    if (cpu < 1 || has < 0) {
        T_SKIP("AVX-VNNI against /proc/cpuinfo: no AVX2, or no flags line to read");
        return;
    }
    T_EQ_INT(vnni_under(NULL) & 1, has);
    T_EQ_INT(vnni_under("avxvnni"), has);
    T_EQ_INT(vnni_under("avx2"), 0);
}

int main(void)
{
    T_RUN(test_caps);
    T_RUN(test_vnni);
    return T_DONE();
}
