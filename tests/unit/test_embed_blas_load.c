/*
 * test_embed_blas_load.c: without CAIRN_BLAS, the first product through BLAS loads
 * OpenBLAS at run time (kernels.c): embed_k_blas says so, there is no
 * note, and a product through it is right. Its counterpart on the scalar
 * fallback is test_embed_blas_none.c.
 */
#include "t.h"
#include "embed/kernels.h"

#include <math.h>
#include <stdlib.h>

int main(void)
{
    float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 0, -1, 2, 1, 0}, y[4], r[4];
    int i, ok = 1;

    unsetenv("CAIRN_BLAS");
    embed_k_set_threads(1);
    /* setting the count does not load it (a query on packed products
     * never does): it is given when OpenBLAS loads */
    T_EQ_INT(embed_k_blas_tried(), 0);
    T_EQ_INT(embed_k_blas(), 1);
    T_EQ_INT(embed_k_blas_tried(), 1);
    T_EQ_STR(embed_k_note(), "");
    /* Twice from the same process: the choice is made once. */
    T_EQ_INT(embed_k_blas(), 1);
    embed_k_linear(x, w, NULL, y, 2, 2, 3);
    embed_k_linear_ref(x, w, NULL, r, 2, 2, 3);
    for (i = 0; i < 4; i++)
        ok &= fabsf(y[i] - r[i]) < 1e-6f;
    T_CHECK(ok);
    T_CHECK(fabsf(y[0] - (-2.0f)) < 1e-6f && fabsf(y[1] - 4.0f) < 1e-6f);
    return T_DONE();
}
