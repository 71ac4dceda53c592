/*
 * gemm.c - what the simulated cublasGemmEx computes, and the number formats
 * it needs: C = alpha op(A) op(B) + beta C in column-major order, exactly as
 * cuBLAS defines it (element (i, j) of an m x n matrix X with leading
 * dimension ld is X[i + j ld]; op(X) = X for CUBLAS_OP_N, its transpose for
 * CUBLAS_OP_T and CUBLAS_OP_C, the types being real).
 *
 * Numerics: inputs are widened exactly (fp16, bf16) or rounded to TF32 /
 * fp16 / bf16 first when the compute type says so; products are
 * accumulated in the compute precision (fp32 with fmaf; fp16 rounded after
 * every step; fp64 with fma), in order of increasing k; beta == 0 never
 * reads C (a NaN there does not propagate, as cuBLAS documents). The
 * summation order of a real GPU differs, so results can differ from one in
 * the last bits: tests must use tolerances, as the library does.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- number formats ---- */

float sim_half_to_float(uint16_t h)
{
    unsigned e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    float v;
    if (e == 0)
        v = ldexpf((float)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexpf((float)(m | 0x400u), (int)e - 25);
    return (h & 0x8000u) ? -v : v;
}

/* Round to nearest, ties to even; overflow to infinity. */
uint16_t sim_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u);
    if (ax >= 0x477ff000u) /* >= 65520: rounds to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) { /* below 2^-14: a subnormal half (or zero) */
        float a;
        memcpy(&a, &ax, sizeof a);
        return (uint16_t)(sign | (uint16_t)nearbyintf(a * 16777216.0f));
    }
    uint32_t h = ((((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu));
    uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

float sim_bf16_to_float(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

uint16_t sim_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* TF32 keeps 10 of fp32's 23 fraction bits; rounded to nearest, ties away
 * from zero (the conversion the tensor cores' inputs go through). */
float sim_round_tf32(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7f800000u) != 0x7f800000u) {
        x += 0x1000u;
        x &= 0xffffe000u;
    }
    memcpy(&f, &x, sizeof f);
    return f;
}

size_t sim_type_size(cudaDataType t)
{
    switch (t) {
    case CUDA_R_16F:
    case CUDA_R_16BF:
        return 2;
    case CUDA_R_32F:
        return 4;
    case CUDA_R_64F:
        return 8;
    default:
        return 0;
    }
}

int sim_gemm_supported(cudaDataType ab, cudaDataType c, cublasComputeType_t ct)
{
    switch (ct) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
        return ab == CUDA_R_16F && c == CUDA_R_16F;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
        return (ab == CUDA_R_32F && c == CUDA_R_32F) ||
               (ab == CUDA_R_16F && (c == CUDA_R_16F || c == CUDA_R_32F)) ||
               (ab == CUDA_R_16BF && (c == CUDA_R_16BF || c == CUDA_R_32F));
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
        return ab == CUDA_R_32F && c == CUDA_R_32F;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
        return ab == CUDA_R_64F && c == CUDA_R_64F;
    default:
        return 0;
    }
}

/* ---- the operands ---- */

typedef struct operand {
    sim_alloc *alloc;    /* NULL for an empty operand */
    unsigned char *base; /* host view of the operand's first element */
    size_t elems;        /* elements addressable from base in its allocation */
    cudaDataType type;
    size_t es;
} operand;

/* Bind an operand of rows x cols (stored) with leading dimension ld to its
 * allocation on the context's device; -1 when it is not inside one. */
static int bind(operand *op, uintptr_t addr, cudaDataType t, int rows, int cols, int ld,
                const sim_ctx *ctx)
{
    op->type = t;
    op->es = sim_type_size(t);
    if (rows == 0 || cols == 0) {
        op->alloc = NULL;
        op->base = NULL;
        op->elems = 0;
        return 0;
    }
    size_t span = ((size_t)(rows - 1) + (size_t)(cols - 1) * (size_t)ld + 1) * op->es;
    sim_alloc *a = sim_dev_find(addr, span);
    if (!a || a->ctx->unit != ctx->unit)
        return -1;
    op->alloc = a;
    op->base = a->mem + (addr - a->dev);
    op->elems = (a->size - (addr - a->dev)) / op->es;
    return 0;
}

static double load(const operand *op, size_t idx)
{
    if (idx >= op->elems)
        return 0.0; /* only the row-major negative control reads out of range */
    const unsigned char *p = op->base + idx * op->es;
    uint16_t h;
    float f;
    double d;
    switch (op->type) {
    case CUDA_R_16F:
        memcpy(&h, p, 2);
        return sim_half_to_float(h);
    case CUDA_R_16BF:
        memcpy(&h, p, 2);
        return sim_bf16_to_float(h);
    case CUDA_R_32F:
        memcpy(&f, p, 4);
        return f;
    default:
        memcpy(&d, p, 8);
        return d;
    }
}

static void store(const operand *op, size_t idx, double v)
{
    if (idx >= op->elems)
        return;
    unsigned char *p = op->base + idx * op->es;
    uint16_t h;
    float f = (float)v;
    switch (op->type) {
    case CUDA_R_16F:
        h = sim_float_to_half(f);
        memcpy(p, &h, 2);
        break;
    case CUDA_R_16BF:
        h = sim_float_to_bf16(f);
        memcpy(p, &h, 2);
        break;
    case CUDA_R_32F:
        memcpy(p, &f, 4);
        break;
    default:
        memcpy(p, &v, 8);
        break;
    }
}

/* Index of element (i, j) of op(X): column-major; the negative control
 * reads row-major instead. */
static size_t at(int trans, size_t i, size_t j, size_t ld, int rowmajor)
{
    if (trans)
        return rowmajor ? j * ld + i : i * ld + j;
    return rowmajor ? i * ld + j : i + j * ld;
}

static float input_round(const sim_gemm *g, float v)
{
    if (g->tf32)
        return sim_round_tf32(v);
    if (g->round16 == 1)
        return sim_half_to_float(sim_float_to_half(v));
    if (g->round16 == 2)
        return sim_bf16_to_float(sim_float_to_bf16(v));
    return v;
}

int sim_gemm_exec(const sim_gemm *g, sim_ctx *ctx, int bug)
{
    int ta = g->ta != CUBLAS_OP_N, tb = g->tb != CUBLAS_OP_N;
    operand A, B, C;
    if (bind(&A, g->a, g->at, ta ? g->k : g->m, ta ? g->m : g->k, g->lda, ctx) != 0 ||
        bind(&B, g->b, g->bt, tb ? g->n : g->k, tb ? g->k : g->n, g->ldb, ctx) != 0 ||
        bind(&C, g->c, g->ct, g->m, g->n, g->ldc, ctx) != 0)
        return -1;
    size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k;
    if (m == 0 || n == 0 || bug == SIM_BUG_UNWRITTEN)
        return 0; /* unwritten: C keeps whatever bytes it held */
    uint64_t va = A.alloc ? A.alloc->version : 0, vb = B.alloc ? B.alloc->version : 0;
    if (ctx->memo_valid && g->beta == 0.0 && ctx->memo_bug == bug &&
        memcmp(&ctx->memo, g, sizeof *g) == 0 && ctx->memo_a == va && ctx->memo_b == vb &&
        ctx->memo_c == C.alloc->version)
        return 0; /* the same C again: see sim_ctx.memo */
    int rowmajor = bug == SIM_BUG_ROWMAJOR;
    size_t kk = bug == SIM_BUG_DROP_LAST_K && k > 0 ? k - 1 : k;
    int wide = g->compute == CUBLAS_COMPUTE_64F || g->compute == CUBLAS_COMPUTE_64F_PEDANTIC;
    int half_acc = g->compute == CUBLAS_COMPUTE_16F || g->compute == CUBLAS_COMPUTE_16F_PEDANTIC;

    /* op(A) by rows and op(B) by columns, converted once. */
    double *ra = malloc((k ? k : 1) * sizeof *ra);
    double *cb = malloc((k ? k * n : 1) * sizeof *cb);
    if (!ra || !cb) {
        free(ra);
        free(cb);
        return -1;
    }
    for (size_t j = 0; j < n; j++)
        for (size_t l = 0; l < k; l++) {
            double v = load(&B, at(tb, l, j, (size_t)g->ldb, rowmajor));
            cb[j * k + l] = wide ? v : input_round(g, (float)v);
        }
    for (size_t i = 0; i < m; i++) {
        for (size_t l = 0; l < k; l++) {
            double v = load(&A, at(ta, i, l, (size_t)g->lda, rowmajor));
            ra[l] = wide ? v : input_round(g, (float)v);
        }
        for (size_t j = 0; j < n; j++) {
            const double *b = cb + j * k;
            size_t ci = at(0, i, j, (size_t)g->ldc, rowmajor);
            double out;
            if (wide) {
                double acc = 0.0;
                for (size_t l = 0; l < kk; l++)
                    acc = fma(ra[l], b[l], acc);
                out = g->alpha * acc;
                if (g->beta != 0.0)
                    out = fma(g->beta, load(&C, ci), out);
            } else {
                float acc = 0.0f;
                for (size_t l = 0; l < kk; l++) {
                    acc = fmaf((float)ra[l], (float)b[l], acc);
                    if (half_acc)
                        acc = sim_half_to_float(sim_float_to_half(acc));
                }
                float o = (float)g->alpha * acc;
                if (g->beta != 0.0)
                    o = fmaf((float)g->beta, (float)load(&C, ci), o);
                out = o;
            }
            store(&C, ci, out);
        }
    }
    free(ra);
    free(cb);
    /* C's allocation has new bytes. When A or B lies in the same
     * allocation their bytes may have changed with it: no memo then. */
    C.alloc->version = ++sim.versions;
    ctx->memo_valid = A.alloc != C.alloc && B.alloc != C.alloc;
    ctx->memo_bug = bug;
    ctx->memo = *g;
    ctx->memo_a = A.alloc ? A.alloc->version : 0;
    ctx->memo_b = B.alloc ? B.alloc->version : 0;
    ctx->memo_c = C.alloc->version;
    return 0;
}

/* ---- cublasSdot ---- */

/* The float at element i of a vector of n with increment inc (a negative
 * increment walks it from its end, as BLAS does). */
static const unsigned char *dot_elem(const unsigned char *base, int n, int inc, int i)
{
    long idx = inc > 0 ? (long)i * inc : (long)(n - 1 - i) * -(long)inc;
    return base + (size_t)idx * sizeof(float);
}

/* The allocation of a vector on ctx's device, or NULL. */
static sim_alloc *dot_vector(uintptr_t addr, int n, int inc, sim_ctx *ctx)
{
    size_t span = ((size_t)(n - 1) * (size_t)(inc < 0 ? -(long)inc : inc) + 1) * sizeof(float);
    sim_alloc *a = sim_dev_find(addr, span);
    return a && a->ctx->unit == ctx->unit ? a : NULL;
}

/* Is this the last dot product again, on operands no write has touched
 * since? (Like the gemm's memo: repeated calls cost no host time.) */
static int dot_memo(sim_ctx *ctx, const sim_dot *d, const sim_alloc *ax, const sim_alloc *ay)
{
    return ctx->dot_memo_valid && ctx->dot_memo_bug == sim.cfg.dot_bug && ctx->dot_memo.x == d->x && ctx->dot_memo.y == d->y &&
           ctx->dot_memo.n == d->n && ctx->dot_memo.incx == d->incx &&
           ctx->dot_memo.incy == d->incy && ctx->dot_memo_x == ax->version &&
           ctx->dot_memo_y == ay->version;
}

int sim_dot_exec(const sim_dot *d, sim_ctx *ctx)
{
    double sum = 0.0;
    sim_alloc *ax = NULL, *ay = NULL;
    if (d->n > 0 && (!(ax = dot_vector(d->x, d->n, d->incx, ctx)) ||
                     !(ay = dot_vector(d->y, d->n, d->incy, ctx))))
        return -1;
    if (d->n > 0 && dot_memo(ctx, d, ax, ay)) {
        sum = ctx->dot_memo_value;
    } else if (d->n > 0) {
        const unsigned char *x = ax->mem + (d->x - ax->dev), *y = ay->mem + (d->y - ay->dev);
        for (int i = 0; i < (sim.cfg.dot_bug ? d->n / 2 : d->n); i++) {
            float a, b;
            memcpy(&a, dot_elem(x, d->n, d->incx, i), sizeof a);
            memcpy(&b, dot_elem(y, d->n, d->incy, i), sizeof b);
            sum += (double)a * (double)b;
        }
        ctx->dot_memo_valid = 1;
        ctx->dot_memo_bug = sim.cfg.dot_bug;
        ctx->dot_memo = *d;
        ctx->dot_memo_x = ax->version;
        ctx->dot_memo_y = ay->version;
        ctx->dot_memo_value = (float)sum;
    }
    float r = (float)sum;
    if (d->to_host) {
        memcpy((void *)d->result, &r, sizeof r);
        return 0;
    }
    sim_alloc *out = sim_dev_find(d->result, sizeof r);
    if (!out || out->ctx->unit != ctx->unit)
        return -1;
    memcpy(out->mem + (d->result - out->dev), &r, sizeof r);
    out->version = ++sim.versions;
    return 0;
}
