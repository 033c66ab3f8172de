/*
 * test_embed_simd_env.c: CAIRN_SIMD caps the kernels' SIMD level for the
 * process (kernels.c, read once at the first use): avx2 gives at most the
 * AVX2 level, portable the plain loops, and the cap still gives the right
 * products. The CPU's own level (embed_k_simd_cpu) is not capped. Each
 * setting runs in a child process, as the variable is read only once.
 */
#include "t.h"
#include "embed/kernels.h"

#include <math.h>
#include <stdlib.h>
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

int main(void)
{
    T_RUN(test_caps);
    return T_DONE();
}
