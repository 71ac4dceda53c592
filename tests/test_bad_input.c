/*
 * test_bad_input.c - the bad-input matrix: every public function of
 * gpuprobe.h called with NULL for each pointer argument, out-of-range device
 * indices, out-of-range enum values, undersized `size` fields and non-zero
 * reserved flags. Each row asserts the exact documented status, that no
 * output was written, and (when a context was given) a non-empty
 * gpuprobe_last_error() message. Every string-returning function is checked
 * to return non-NULL text for out-of-range enums.
 *
 * The context carries one simulated CUDA device (test seam), so that device
 * 1 exists and CPU-only / CUDA-only attribute checks are reachable on any
 * machine.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

#define GiB (UINT64_C(1) << 30)

static const gp_fake_cuda_device fake_dev[] = {
    {"Fake GPU", 8, 6, 24 * GiB, 20 * GiB, 0},
};
static const gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, "one fake device",
                                  1, fake_dev};

/* Values no enum of the header uses. */
static const int bad_enums[] = {-1, 13, 18, 25, 99, 999, 0x7fffffff,
                                (int)0x80000000};
#define N_BAD_ENUMS (sizeof bad_enums / sizeof bad_enums[0])

/* ---- fixture shared by the rows ---- */

typedef struct fixture {
    gpuprobe_context *ctx;          /* with the fake device */
    gpuprobe_matmul_options *opts;  /* defaults, small size */
    gpuprobe_matmul_result *result; /* a real CPU result */
    int wrote;                      /* a row saw an output written */
} fixture;

static fixture fx;

static int group_setup(void **state)
{
    (void)state;
    if (gpuprobe_context_create(&fx.ctx, 0) != GPUPROBE_OK)
        return -1;
    gp_test_set_cuda(fx.ctx, &fake);
    if (gpuprobe_matmul_options_create(&fx.opts) != GPUPROBE_OK)
        return -1;
    gpuprobe_matmul_options_set(fx.opts, GPUPROBE_MATMUL_M, 16);
    gpuprobe_matmul_options_set(fx.opts, GPUPROBE_MATMUL_WARMUP, 0);
    gpuprobe_matmul_options_set(fx.opts, GPUPROBE_MATMUL_MIN_RUNS, 1);
    gpuprobe_matmul_options_set(fx.opts, GPUPROBE_MATMUL_MAX_RUNS, 1);
    if (gpuprobe_matmul_run(fx.ctx, 0, fx.opts, 0, &fx.result) != GPUPROBE_OK)
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    gpuprobe_matmul_result_destroy(fx.result);
    gpuprobe_matmul_options_destroy(fx.opts);
    gpuprobe_context_destroy(fx.ctx);
    return 0;
}

/* ---- the rows ---- */

typedef gpuprobe_status (*row_fn)(gpuprobe_context *ctx);

typedef struct row {
    const char *name;
    row_fn call;
    gpuprobe_status want;
    int uses_ctx; /* 1: a context was given; its message must be non-empty */
} row;

#define SENT64 INT64_C(0x1234567887654321)
static const char SENT_STR[] = "sentinel";
#define SENT_PTR ((void *)&fx)

/* Record that an output was written (it must not be, on failure). */
#define WROTE_IF(cond) ((cond) ? (void)(fx.wrote = 1) : (void)0)

#define ROW(fn) static gpuprobe_status fn(gpuprobe_context *ctx)

/* context */
ROW(create_null_out) { (void)ctx; return gpuprobe_context_create(NULL, 0); }
ROW(create_flags)
{
    (void)ctx;
    gpuprobe_context *c = SENT_PTR;
    gpuprobe_status st = gpuprobe_context_create(&c, 1);
    /* Documented: set to NULL on failure. */
    WROTE_IF(c != NULL);
    gpuprobe_context_destroy(c == SENT_PTR ? NULL : c);
    return st;
}
ROW(create_flags_high)
{
    (void)ctx;
    gpuprobe_context *c = NULL;
    gpuprobe_status st = gpuprobe_context_create(&c, 0x80000000u);
    WROTE_IF(c != NULL);
    gpuprobe_context_destroy(c);
    return st;
}

/* cuda status and versions */
ROW(cuda_status_null_ctx)
{
    (void)ctx;
    gpuprobe_cuda_cause cause = (gpuprobe_cuda_cause)77;
    gpuprobe_status st = gpuprobe_cuda_status(NULL, &cause, NULL);
    WROTE_IF(cause != 77);
    return st;
}
ROW(cuda_status_null_cause)
{
    const char *d = SENT_STR;
    gpuprobe_status st = gpuprobe_cuda_status(ctx, NULL, &d);
    WROTE_IF(d != SENT_STR);
    return st;
}
ROW(driver_version_null_ctx)
{
    (void)ctx;
    int v = 77;
    gpuprobe_status st = gpuprobe_cuda_driver_version(NULL, &v);
    WROTE_IF(v != 77);
    return st;
}
ROW(driver_version_null_out) { return gpuprobe_cuda_driver_version(ctx, NULL); }
ROW(runtime_version_null_ctx)
{
    (void)ctx;
    int v = 77;
    gpuprobe_status st = gpuprobe_cuda_runtime_version(NULL, &v);
    WROTE_IF(v != 77);
    return st;
}
ROW(runtime_version_null_out) { return gpuprobe_cuda_runtime_version(ctx, NULL); }

/* devices */
ROW(count_null_ctx)
{
    (void)ctx;
    size_t n = 77;
    gpuprobe_status st = gpuprobe_device_count(NULL, &n);
    WROTE_IF(n != 77);
    return st;
}
ROW(count_null_out) { return gpuprobe_device_count(ctx, NULL); }

static gpuprobe_status get_int(gpuprobe_context *c, size_t dev, int attr)
{
    int64_t v = SENT64;
    gpuprobe_status st = gpuprobe_device_get_int(c, dev, (gpuprobe_attr)attr, &v);
    WROTE_IF(v != SENT64);
    return st;
}
static gpuprobe_status get_str(gpuprobe_context *c, size_t dev, int attr)
{
    const char *s = SENT_STR;
    gpuprobe_status st =
        gpuprobe_device_get_string(c, dev, (gpuprobe_attr)attr, &s);
    WROTE_IF(s != SENT_STR);
    return st;
}
ROW(get_int_null_ctx) { (void)ctx; return get_int(NULL, 0, GPUPROBE_ATTR_KIND); }
ROW(get_int_null_out)
{
    return gpuprobe_device_get_int(ctx, 0, GPUPROBE_ATTR_KIND, NULL);
}
ROW(get_int_dev_2) { return get_int(ctx, 2, GPUPROBE_ATTR_KIND); }
ROW(get_int_dev_max) { return get_int(ctx, SIZE_MAX, GPUPROBE_ATTR_KIND); }
ROW(get_int_attr_999) { return get_int(ctx, 0, 999); }
ROW(get_int_attr_neg) { return get_int(ctx, 0, -1); }
ROW(get_int_attr_next) { return get_int(ctx, 0, GPUPROBE_ATTR_PCIE_MAX_WIDTH + 1); }
ROW(get_int_string_attr) { return get_int(ctx, 0, GPUPROBE_ATTR_NAME); }
ROW(get_int_string_attr_cuda) { return get_int(ctx, 1, GPUPROBE_ATTR_UUID); }
ROW(get_int_cuda_attr_on_cpu) { return get_int(ctx, 0, GPUPROBE_ATTR_CC_MAJOR); }
ROW(get_int_cpu_attr_on_cuda) { return get_int(ctx, 1, GPUPROBE_ATTR_LOGICAL_CORES); }
ROW(get_str_null_ctx) { (void)ctx; return get_str(NULL, 0, GPUPROBE_ATTR_NAME); }
ROW(get_str_null_out)
{
    return gpuprobe_device_get_string(ctx, 0, GPUPROBE_ATTR_NAME, NULL);
}
ROW(get_str_dev_2) { return get_str(ctx, 2, GPUPROBE_ATTR_NAME); }
ROW(get_str_dev_max) { return get_str(ctx, SIZE_MAX, GPUPROBE_ATTR_NAME); }
ROW(get_str_attr_999) { return get_str(ctx, 0, 999); }
ROW(get_str_attr_neg) { return get_str(ctx, 0, -1); }
ROW(get_str_int_attr) { return get_str(ctx, 0, GPUPROBE_ATTR_KIND); }
ROW(get_str_cuda_attr_on_cpu) { return get_str(ctx, 0, GPUPROBE_ATTR_UUID); }
ROW(get_str_cpu_attr_on_cuda) { return get_str(ctx, 1, GPUPROBE_ATTR_BLAS_CORE); }

/* memory */
static gpuprobe_status memory(gpuprobe_context *c, size_t dev, size_t size,
                              unsigned flags)
{
    gpuprobe_memory_info mi;
    memset(&mi, 0xa5, sizeof mi);
    mi.size = size;
    gpuprobe_memory_info before = mi;
    gpuprobe_status st = gpuprobe_device_memory(c, dev, &mi, flags);
    WROTE_IF(memcmp(&mi, &before, sizeof mi) != 0);
    return st;
}
ROW(memory_null_ctx) { (void)ctx; return memory(NULL, 0, sizeof(gpuprobe_memory_info), 0); }
ROW(memory_null_info) { return gpuprobe_device_memory(ctx, 0, NULL, 0); }
ROW(memory_dev_2) { return memory(ctx, 2, sizeof(gpuprobe_memory_info), 0); }
ROW(memory_dev_max) { return memory(ctx, SIZE_MAX, sizeof(gpuprobe_memory_info), 0); }
ROW(memory_flags) { return memory(ctx, 0, sizeof(gpuprobe_memory_info), 2); }
ROW(memory_flags_cuda) { return memory(ctx, 1, sizeof(gpuprobe_memory_info), 0x100); }
ROW(memory_size_0) { return memory(ctx, 0, 0, 0); }
ROW(memory_size_short) { return memory(ctx, 0, sizeof(size_t) - 1, 0); }

/* dtypes */
ROW(dtype_parse_null_name)
{
    (void)ctx;
    gpuprobe_dtype d = (gpuprobe_dtype)77;
    gpuprobe_status st = gpuprobe_dtype_parse(NULL, &d);
    WROTE_IF(d != 77);
    return st;
}
ROW(dtype_parse_null_out) { (void)ctx; return gpuprobe_dtype_parse("fp16", NULL); }
static gpuprobe_status parse(const char *s)
{
    gpuprobe_dtype d = (gpuprobe_dtype)77;
    gpuprobe_status st = gpuprobe_dtype_parse(s, &d);
    WROTE_IF(d != 77);
    return st;
}
ROW(dtype_parse_empty) { (void)ctx; return parse(""); }
ROW(dtype_parse_unknown) { (void)ctx; return parse("fp12"); }
ROW(dtype_parse_prefix) { (void)ctx; return parse("fp1"); }
ROW(dtype_parse_suffix) { (void)ctx; return parse("fp16x"); }
ROW(dtype_parse_unknown_name) { (void)ctx; return parse("unknown"); }

/* capacity (no context) */
static gpuprobe_status cap_bytes(uint64_t p, int dt, int wl)
{
    uint64_t b = (uint64_t)SENT64;
    gpuprobe_status st = gpuprobe_capacity_bytes(p, (gpuprobe_dtype)dt,
                                                 (gpuprobe_workload)wl, &b);
    WROTE_IF(b != (uint64_t)SENT64);
    return st;
}
static gpuprobe_status cap_params(uint64_t b, int dt, int wl)
{
    uint64_t p = (uint64_t)SENT64;
    gpuprobe_status st = gpuprobe_capacity_params(b, (gpuprobe_dtype)dt,
                                                  (gpuprobe_workload)wl, &p);
    WROTE_IF(p != (uint64_t)SENT64);
    return st;
}
ROW(cap_bytes_null) { (void)ctx; return gpuprobe_capacity_bytes(1, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, NULL); }
ROW(cap_bytes_dtype_neg) { (void)ctx; return cap_bytes(1, -1, 0); }
ROW(cap_bytes_dtype_8) { (void)ctx; return cap_bytes(1, GPUPROBE_DTYPE_INT4 + 1, 0); }
ROW(cap_bytes_workload_3) { (void)ctx; return cap_bytes(1, GPUPROBE_DTYPE_FP16, 3); }
ROW(cap_bytes_workload_neg) { (void)ctx; return cap_bytes(1, GPUPROBE_DTYPE_FP16, -1); }
ROW(cap_bytes_over_max) { (void)ctx; return cap_bytes(GPUPROBE_MAX_PARAMS + 1, GPUPROBE_DTYPE_FP16, 0); }
ROW(cap_bytes_uint64_max) { (void)ctx; return cap_bytes(UINT64_MAX, GPUPROBE_DTYPE_FP64, 2); }
ROW(cap_bytes_train_int8) { (void)ctx; return cap_bytes(1, GPUPROBE_DTYPE_INT8, GPUPROBE_WORKLOAD_TRAINING); }
ROW(cap_bytes_train_tf32) { (void)ctx; return cap_bytes(1, GPUPROBE_DTYPE_TF32, GPUPROBE_WORKLOAD_TRAINING); }
ROW(cap_params_null) { (void)ctx; return gpuprobe_capacity_params(1, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, NULL); }
ROW(cap_params_dtype_999) { (void)ctx; return cap_params(1, 999, 0); }
ROW(cap_params_workload_999) { (void)ctx; return cap_params(1, 0, 999); }
ROW(cap_params_overflow) { (void)ctx; return cap_params(UINT64_MAX, GPUPROBE_DTYPE_INT4, 0); }
ROW(cap_params_train_fp8) { (void)ctx; return cap_params(1000, GPUPROBE_DTYPE_FP8, GPUPROBE_WORKLOAD_TRAINING); }

/* device capacity */
static gpuprobe_status dev_cap(gpuprobe_context *c, size_t dev, int dt, int wl,
                               unsigned flags, size_t size)
{
    gpuprobe_capacity cap;
    memset(&cap, 0xa5, sizeof cap);
    cap.size = size;
    gpuprobe_capacity before = cap;
    gpuprobe_status st = gpuprobe_device_capacity(
        c, dev, (gpuprobe_dtype)dt, (gpuprobe_workload)wl, flags, &cap);
    WROTE_IF(memcmp(&cap, &before, sizeof cap) != 0);
    return st;
}
#define CAPSZ sizeof(gpuprobe_capacity)
ROW(devcap_null_ctx) { (void)ctx; return dev_cap(NULL, 0, GPUPROBE_DTYPE_FP16, 0, 0, CAPSZ); }
ROW(devcap_null_out) { return gpuprobe_device_capacity(ctx, 0, GPUPROBE_DTYPE_FP16, GPUPROBE_WORKLOAD_WEIGHTS, 0, NULL); }
ROW(devcap_dev_2) { return dev_cap(ctx, 2, GPUPROBE_DTYPE_FP16, 0, 0, CAPSZ); }
ROW(devcap_dev_max) { return dev_cap(ctx, SIZE_MAX, GPUPROBE_DTYPE_FP16, 0, 0, CAPSZ); }
ROW(devcap_dtype_neg) { return dev_cap(ctx, 0, -1, 0, 0, CAPSZ); }
ROW(devcap_workload_999) { return dev_cap(ctx, 1, GPUPROBE_DTYPE_FP16, 999, 0, CAPSZ); }
ROW(devcap_train_int4) { return dev_cap(ctx, 1, GPUPROBE_DTYPE_INT4, GPUPROBE_WORKLOAD_TRAINING, 0, CAPSZ); }
ROW(devcap_flags) { return dev_cap(ctx, 0, GPUPROBE_DTYPE_FP16, 0, 1, CAPSZ); }
ROW(devcap_size_0) { return dev_cap(ctx, 0, GPUPROBE_DTYPE_FP16, 0, 0, 0); }
ROW(devcap_size_short)
{
    return dev_cap(ctx, 0, GPUPROBE_DTYPE_FP16, 0, 0,
                   offsetof(gpuprobe_capacity, max_params));
}

/* select */
static gpuprobe_status sel(gpuprobe_context *c, const char *spec,
                           const gpuprobe_requirements *req, unsigned flags)
{
    size_t d = 777;
    const char *reason = SENT_STR;
    gpuprobe_status st = gpuprobe_select(c, spec, req, flags, &d, &reason);
    WROTE_IF(d != 777);
    return st;
}
#define IGN GPUPROBE_SELECT_IGNORE_ENV
ROW(select_null_ctx) { (void)ctx; return sel(NULL, "auto", NULL, IGN); }
ROW(select_null_spec) { return sel(ctx, NULL, NULL, IGN); }
ROW(select_null_device) { return gpuprobe_select(ctx, "auto", NULL, IGN, NULL, NULL); }
ROW(select_flags) { return sel(ctx, "auto", NULL, 0x2); }
ROW(select_flags_high) { return sel(ctx, "auto", NULL, 0x80000000u | IGN); }
ROW(select_spec_gpu) { return sel(ctx, "gpu", NULL, IGN); }
ROW(select_spec_upper) { return sel(ctx, "CUDA", NULL, IGN); }
ROW(select_spec_blank) { return sel(ctx, " cpu", NULL, IGN); }
ROW(select_spec_colon) { return sel(ctx, "cuda:", NULL, IGN); }
ROW(select_spec_neg) { return sel(ctx, "cuda:-1", NULL, IGN); }
ROW(select_spec_huge) { return sel(ctx, "cuda:99999999999999999999", NULL, IGN); }
ROW(select_spec_ctrl) { return sel(ctx, "cpu\n", NULL, IGN); }
ROW(select_cuda_1) { return sel(ctx, "cuda:1", NULL, IGN); }
ROW(select_req_size_0)
{
    gpuprobe_requirements r = GPUPROBE_REQUIREMENTS_INIT;
    r.size = 0;
    return sel(ctx, "auto", &r, IGN);
}
ROW(select_req_size_short)
{
    gpuprobe_requirements r = GPUPROBE_REQUIREMENTS_INIT;
    r.size = offsetof(gpuprobe_requirements, fit_params);
    return sel(ctx, "auto", &r, IGN);
}
ROW(select_req_fit_dtype)
{
    gpuprobe_requirements r = GPUPROBE_REQUIREMENTS_INIT;
    r.fit_params = 1000;
    r.fit_dtype = 999;
    return sel(ctx, "auto", &r, IGN);
}
ROW(select_req_fit_workload)
{
    gpuprobe_requirements r = GPUPROBE_REQUIREMENTS_INIT;
    r.fit_params = 1000;
    r.fit_workload = -1;
    return sel(ctx, "auto", &r, IGN);
}
ROW(select_req_fit_over_max)
{
    gpuprobe_requirements r = GPUPROBE_REQUIREMENTS_INIT;
    r.fit_params = GPUPROBE_MAX_PARAMS + 1;
    return sel(ctx, "auto", &r, IGN);
}
ROW(select_req_no_fit)
{
    gpuprobe_requirements r = GPUPROBE_REQUIREMENTS_INIT;
    r.min_free_bytes = UINT64_MAX;
    return sel(ctx, "auto", &r, IGN);
}
ROW(select_req_cc_cpu)
{
    gpuprobe_requirements r = GPUPROBE_REQUIREMENTS_INIT;
    r.min_cc_major = 1;
    return sel(ctx, "cpu", &r, IGN);
}

/* matmul options */
ROW(opts_create_null) { (void)ctx; return gpuprobe_matmul_options_create(NULL); }
static gpuprobe_status opt_set(int p, int64_t v)
{
    int64_t before[14], after[14];
    for (int i = 0; i < 14; i++)
        gpuprobe_matmul_options_get(fx.opts, (gpuprobe_matmul_param)i, &before[i]);
    gpuprobe_status st =
        gpuprobe_matmul_options_set(fx.opts, (gpuprobe_matmul_param)p, v);
    for (int i = 0; i < 14; i++)
        gpuprobe_matmul_options_get(fx.opts, (gpuprobe_matmul_param)i, &after[i]);
    WROTE_IF(memcmp(before, after, sizeof before) != 0);
    return st;
}
static gpuprobe_status opt_get(int p)
{
    int64_t v = SENT64;
    gpuprobe_status st =
        gpuprobe_matmul_options_get(fx.opts, (gpuprobe_matmul_param)p, &v);
    WROTE_IF(v != SENT64);
    return st;
}
static gpuprobe_status bounds(int p, int null_lo, int null_hi)
{
    int64_t lo = SENT64, hi = SENT64;
    gpuprobe_status st = gpuprobe_matmul_param_bounds(
        (gpuprobe_matmul_param)p, null_lo ? NULL : &lo, null_hi ? NULL : &hi);
    WROTE_IF(lo != SENT64 || hi != SENT64);
    return st;
}
ROW(opts_set_null) { (void)ctx; return gpuprobe_matmul_options_set(NULL, GPUPROBE_MATMUL_M, 64); }
ROW(opts_set_param_999) { (void)ctx; return opt_set(999, 1); }
ROW(opts_set_param_neg) { (void)ctx; return opt_set(-1, 1); }
ROW(opts_set_param_15) { (void)ctx; return opt_set(15, 1); }
ROW(opts_set_m_0) { (void)ctx; return opt_set(GPUPROBE_MATMUL_M, 0); }
ROW(opts_set_m_neg) { (void)ctx; return opt_set(GPUPROBE_MATMUL_M, -5); }
ROW(opts_set_dtype_neg) { (void)ctx; return opt_set(GPUPROBE_MATMUL_DTYPE, -1); }
ROW(opts_set_dtype_int4) { (void)ctx; return opt_set(GPUPROBE_MATMUL_DTYPE, GPUPROBE_DTYPE_INT4); }
ROW(opts_set_threads_neg) { (void)ctx; return opt_set(GPUPROBE_MATMUL_CPU_THREADS, -1); }
ROW(opts_get_null_opts)
{
    (void)ctx;
    int64_t v = SENT64;
    gpuprobe_status st = gpuprobe_matmul_options_get(NULL, GPUPROBE_MATMUL_M, &v);
    WROTE_IF(v != SENT64);
    return st;
}
ROW(opts_get_null_out) { (void)ctx; return gpuprobe_matmul_options_get(fx.opts, GPUPROBE_MATMUL_M, NULL); }
ROW(opts_get_param_999) { (void)ctx; return opt_get(999); }
ROW(opts_get_param_neg) { (void)ctx; return opt_get(-1); }
ROW(bounds_param_999) { (void)ctx; return bounds(999, 0, 0); }
ROW(bounds_param_neg) { (void)ctx; return bounds(-1, 0, 0); }
ROW(bounds_null_lower) { (void)ctx; return bounds(GPUPROBE_MATMUL_M, 1, 0); }
ROW(bounds_null_upper) { (void)ctx; return bounds(GPUPROBE_MATMUL_M, 0, 1); }
ROW(bounds_null_both) { (void)ctx; return bounds(GPUPROBE_MATMUL_M, 1, 1); }

/* matmul run */
static gpuprobe_status run(gpuprobe_context *c, size_t dev,
                           const gpuprobe_matmul_options *o, unsigned flags)
{
    gpuprobe_matmul_result *r = SENT_PTR;
    gpuprobe_status st = gpuprobe_matmul_run(c, dev, o, flags, &r);
    /* Documented: NULL on failure other than VERIFY_FAILED. */
    WROTE_IF(r != NULL);
    if (r != SENT_PTR)
        gpuprobe_matmul_result_destroy(r);
    return st;
}
static gpuprobe_status run_dtype(gpuprobe_context *c, size_t dev, int dtype)
{
    gpuprobe_matmul_options *o = NULL;
    assert_int_equal(gpuprobe_matmul_options_create(&o), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_M, 16), GPUPROBE_OK);
    assert_int_equal(gpuprobe_matmul_options_set(o, GPUPROBE_MATMUL_DTYPE, dtype), GPUPROBE_OK);
    gpuprobe_status st = run(c, dev, o, 0);
    gpuprobe_matmul_options_destroy(o);
    return st;
}
ROW(run_null_ctx) { (void)ctx; return run(NULL, 0, fx.opts, 0); }
ROW(run_null_out) { return gpuprobe_matmul_run(ctx, 0, fx.opts, 0, NULL); }
ROW(run_dev_2) { return run(ctx, 2, fx.opts, 0); }
ROW(run_dev_max) { return run(ctx, SIZE_MAX, fx.opts, 0); }
ROW(run_flags) { return run(ctx, 0, fx.opts, 1); }
ROW(run_cpu_fp16) { return run_dtype(ctx, 0, GPUPROBE_DTYPE_FP16); }
ROW(run_cpu_tf32) { return run_dtype(ctx, 0, GPUPROBE_DTYPE_TF32); }
/* bf16 on a CPU without the AMX kernel (turned off for this context:
 * this CPU may have it; tests/test_matmul.c runs it) */
ROW(run_cpu_bf16)
{
    ctx->env_amx_off = 1;
    gpuprobe_status st = run_dtype(ctx, 0, GPUPROBE_DTYPE_BF16);
    ctx->env_amx_off = 0;
    return st;
}
ROW(run_cuda_fp64) { return run_dtype(ctx, 1, GPUPROBE_DTYPE_FP64); }

/* matmul result */
static gpuprobe_status res_d(const gpuprobe_matmul_result *r, int m)
{
    double v = -12345.0;
    gpuprobe_status st =
        gpuprobe_matmul_result_get_double(r, (gpuprobe_matmul_metric)m, &v);
    WROTE_IF(v != -12345.0);
    return st;
}
static gpuprobe_status res_i(const gpuprobe_matmul_result *r, int m)
{
    int64_t v = SENT64;
    gpuprobe_status st =
        gpuprobe_matmul_result_get_int(r, (gpuprobe_matmul_metric)m, &v);
    WROTE_IF(v != SENT64);
    return st;
}
static gpuprobe_status res_s(const gpuprobe_matmul_result *r, int m)
{
    const char *v = SENT_STR;
    gpuprobe_status st =
        gpuprobe_matmul_result_get_string(r, (gpuprobe_matmul_metric)m, &v);
    WROTE_IF(v != SENT_STR);
    return st;
}
ROW(res_d_null_result) { (void)ctx; return res_d(NULL, GPUPROBE_METRIC_MEDIAN_S); }
ROW(res_d_null_out) { (void)ctx; return gpuprobe_matmul_result_get_double(fx.result, GPUPROBE_METRIC_MEDIAN_S, NULL); }
ROW(res_d_metric_999) { (void)ctx; return res_d(fx.result, 999); }
ROW(res_d_metric_neg) { (void)ctx; return res_d(fx.result, -1); }
ROW(res_d_metric_next) { (void)ctx; return res_d(fx.result, GPUPROBE_METRIC_DEVICE + 1); }
ROW(res_d_int_metric) { (void)ctx; return res_d(fx.result, GPUPROBE_METRIC_RUNS); }
ROW(res_d_string_metric) { (void)ctx; return res_d(fx.result, GPUPROBE_METRIC_BACKEND); }
ROW(res_i_null_result) { (void)ctx; return res_i(NULL, GPUPROBE_METRIC_RUNS); }
ROW(res_i_null_out) { (void)ctx; return gpuprobe_matmul_result_get_int(fx.result, GPUPROBE_METRIC_RUNS, NULL); }
ROW(res_i_metric_999) { (void)ctx; return res_i(fx.result, 999); }
ROW(res_i_metric_neg) { (void)ctx; return res_i(fx.result, -1); }
ROW(res_i_double_metric) { (void)ctx; return res_i(fx.result, GPUPROBE_METRIC_GFLOPS); }
ROW(res_i_string_metric) { (void)ctx; return res_i(fx.result, GPUPROBE_METRIC_DEVICE_NAME); }
ROW(res_s_null_result) { (void)ctx; return res_s(NULL, GPUPROBE_METRIC_BACKEND); }
ROW(res_s_null_out) { (void)ctx; return gpuprobe_matmul_result_get_string(fx.result, GPUPROBE_METRIC_BACKEND, NULL); }
ROW(res_s_metric_999) { (void)ctx; return res_s(fx.result, 999); }
ROW(res_s_metric_neg) { (void)ctx; return res_s(fx.result, -1); }
ROW(res_s_double_metric) { (void)ctx; return res_s(fx.result, GPUPROBE_METRIC_MEDIAN_S); }
ROW(res_s_int_metric) { (void)ctx; return res_s(fx.result, GPUPROBE_METRIC_DEVICE); }

#define INV GPUPROBE_ERR_INVALID_ARGUMENT
#define NF GPUPROBE_ERR_NOT_FOUND
#define UNS GPUPROBE_ERR_UNSUPPORTED
#define OVF GPUPROBE_ERR_OVERFLOW
#define R(fn, want, uses_ctx) {#fn, fn, want, uses_ctx}

static const row rows[] = {
    R(create_null_out, INV, 0),
    R(create_flags, INV, 0),
    R(create_flags_high, INV, 0),
    R(cuda_status_null_ctx, INV, 0),
    R(cuda_status_null_cause, INV, 1),
    R(driver_version_null_ctx, INV, 0),
    R(driver_version_null_out, INV, 1),
    R(runtime_version_null_ctx, INV, 0),
    R(runtime_version_null_out, INV, 1),
    R(count_null_ctx, INV, 0),
    R(count_null_out, INV, 1),
    R(get_int_null_ctx, INV, 0),
    R(get_int_null_out, INV, 1),
    R(get_int_dev_2, NF, 1),
    R(get_int_dev_max, NF, 1),
    R(get_int_attr_999, INV, 1),
    R(get_int_attr_neg, INV, 1),
    R(get_int_attr_next, INV, 1),
    R(get_int_string_attr, INV, 1),
    R(get_int_string_attr_cuda, INV, 1),
    R(get_int_cuda_attr_on_cpu, UNS, 1),
    R(get_int_cpu_attr_on_cuda, UNS, 1),
    R(get_str_null_ctx, INV, 0),
    R(get_str_null_out, INV, 1),
    R(get_str_dev_2, NF, 1),
    R(get_str_dev_max, NF, 1),
    R(get_str_attr_999, INV, 1),
    R(get_str_attr_neg, INV, 1),
    R(get_str_int_attr, INV, 1),
    R(get_str_cuda_attr_on_cpu, UNS, 1),
    R(get_str_cpu_attr_on_cuda, UNS, 1),
    R(memory_null_ctx, INV, 0),
    R(memory_null_info, INV, 1),
    R(memory_dev_2, NF, 1),
    R(memory_dev_max, NF, 1),
    R(memory_flags, INV, 1),
    R(memory_flags_cuda, INV, 1),
    R(memory_size_0, INV, 1),
    R(memory_size_short, INV, 1),
    R(dtype_parse_null_name, INV, 0),
    R(dtype_parse_null_out, INV, 0),
    R(dtype_parse_empty, INV, 0),
    R(dtype_parse_unknown, INV, 0),
    R(dtype_parse_prefix, INV, 0),
    R(dtype_parse_suffix, INV, 0),
    R(dtype_parse_unknown_name, INV, 0),
    R(cap_bytes_null, INV, 0),
    R(cap_bytes_dtype_neg, INV, 0),
    R(cap_bytes_dtype_8, INV, 0),
    R(cap_bytes_workload_3, INV, 0),
    R(cap_bytes_workload_neg, INV, 0),
    R(cap_bytes_over_max, OVF, 0),
    R(cap_bytes_uint64_max, OVF, 0),
    R(cap_bytes_train_int8, UNS, 0),
    R(cap_bytes_train_tf32, UNS, 0),
    R(cap_params_null, INV, 0),
    R(cap_params_dtype_999, INV, 0),
    R(cap_params_workload_999, INV, 0),
    R(cap_params_overflow, OVF, 0),
    R(cap_params_train_fp8, UNS, 0),
    R(devcap_null_ctx, INV, 0),
    R(devcap_null_out, INV, 1),
    R(devcap_dev_2, NF, 1),
    R(devcap_dev_max, NF, 1),
    R(devcap_dtype_neg, INV, 1),
    R(devcap_workload_999, INV, 1),
    R(devcap_train_int4, UNS, 1),
    R(devcap_flags, INV, 1),
    R(devcap_size_0, INV, 1),
    R(devcap_size_short, INV, 1),
    R(select_null_ctx, INV, 0),
    R(select_null_spec, INV, 1),
    R(select_null_device, INV, 1),
    R(select_flags, INV, 1),
    R(select_flags_high, INV, 1),
    R(select_spec_gpu, INV, 1),
    R(select_spec_upper, INV, 1),
    R(select_spec_blank, INV, 1),
    R(select_spec_colon, INV, 1),
    R(select_spec_neg, INV, 1),
    R(select_spec_huge, INV, 1),
    R(select_spec_ctrl, INV, 1),
    R(select_cuda_1, NF, 1),
    R(select_req_size_0, INV, 1),
    R(select_req_size_short, INV, 1),
    R(select_req_fit_dtype, INV, 1),
    R(select_req_fit_workload, INV, 1),
    R(select_req_fit_over_max, OVF, 1),
    R(select_req_no_fit, GPUPROBE_ERR_NO_FIT, 1),
    R(select_req_cc_cpu, GPUPROBE_ERR_NO_FIT, 1),
    R(opts_create_null, INV, 0),
    R(opts_set_null, INV, 0),
    R(opts_set_param_999, INV, 0),
    R(opts_set_param_neg, INV, 0),
    R(opts_set_param_15, INV, 0),
    R(opts_set_m_0, INV, 0),
    R(opts_set_m_neg, INV, 0),
    R(opts_set_dtype_neg, INV, 0),
    R(opts_set_dtype_int4, INV, 0),
    R(opts_set_threads_neg, INV, 0),
    R(opts_get_null_opts, INV, 0),
    R(opts_get_null_out, INV, 0),
    R(opts_get_param_999, INV, 0),
    R(opts_get_param_neg, INV, 0),
    R(bounds_param_999, INV, 0),
    R(bounds_param_neg, INV, 0),
    R(bounds_null_lower, INV, 0),
    R(bounds_null_upper, INV, 0),
    R(bounds_null_both, INV, 0),
    R(run_null_ctx, INV, 0),
    R(run_null_out, INV, 1),
    R(run_dev_2, NF, 1),
    R(run_dev_max, NF, 1),
    R(run_flags, INV, 1),
    R(run_cpu_fp16, UNS, 1),
    R(run_cpu_tf32, UNS, 1),
    R(run_cpu_bf16, UNS, 1),
    R(run_cuda_fp64, UNS, 1),
    R(res_d_null_result, INV, 0),
    R(res_d_null_out, INV, 0),
    R(res_d_metric_999, INV, 0),
    R(res_d_metric_neg, INV, 0),
    R(res_d_metric_next, INV, 0),
    R(res_d_int_metric, INV, 0),
    R(res_d_string_metric, INV, 0),
    R(res_i_null_result, INV, 0),
    R(res_i_null_out, INV, 0),
    R(res_i_metric_999, INV, 0),
    R(res_i_metric_neg, INV, 0),
    R(res_i_double_metric, INV, 0),
    R(res_i_string_metric, INV, 0),
    R(res_s_null_result, INV, 0),
    R(res_s_null_out, INV, 0),
    R(res_s_metric_999, INV, 0),
    R(res_s_metric_neg, INV, 0),
    R(res_s_double_metric, INV, 0),
    R(res_s_int_metric, INV, 0),
};
#define N_ROWS (sizeof rows / sizeof rows[0])

static void run_row(void **state)
{
    const row *r = *state;
    /* A successful call first, so that a stale message cannot pass for
     * this row's. */
    size_t n = 0;
    assert_int_equal(gpuprobe_device_count(fx.ctx, &n), GPUPROBE_OK);
    assert_string_equal(gpuprobe_last_error(fx.ctx), "");

    fx.wrote = 0;
    gpuprobe_status st = r->call(fx.ctx);
    if (st != r->want)
        fail_msg("%s: got %s (%d), expected %s (%d); message: \"%s\"",
                 r->name, gpuprobe_status_name(st), (int)st,
                 gpuprobe_status_name(r->want), (int)r->want,
                 gpuprobe_last_error(fx.ctx));
    if (fx.wrote)
        fail_msg("%s: an output was written although the call failed", r->name);
    if (r->uses_ctx) {
        const char *msg = gpuprobe_last_error(fx.ctx);
        assert_non_null(msg);
        if (msg[0] == '\0')
            fail_msg("%s: %s without a message in gpuprobe_last_error()",
                     r->name, gpuprobe_status_name(st));
    }
    /* The context is still usable after the failure. */
    assert_int_equal(gpuprobe_device_count(fx.ctx, &n), GPUPROBE_OK);
    assert_int_equal(n, 2);
}

/* ---- fixed tests ---- */

static void strings_never_null(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_BAD_ENUMS; i++) {
        int v = bad_enums[i];
        const char *s;
        s = gpuprobe_status_string((gpuprobe_status)v);
        assert_non_null(s);
        assert_string_equal(s, "unknown status");
        s = gpuprobe_status_name((gpuprobe_status)v);
        assert_non_null(s);
        assert_string_equal(s, "unknown");
        s = gpuprobe_cuda_cause_string((gpuprobe_cuda_cause)v);
        assert_non_null(s);
        assert_true(s[0] != '\0');
        s = gpuprobe_cuda_cause_name((gpuprobe_cuda_cause)v);
        assert_non_null(s);
        assert_string_equal(s, "unknown");
        s = gpuprobe_dtype_name((gpuprobe_dtype)v);
        assert_non_null(s);
        assert_string_equal(s, "unknown");
        s = gpuprobe_workload_name((gpuprobe_workload)v);
        assert_non_null(s);
        assert_string_equal(s, "unknown");
    }
    /* In-range values have distinct, non-empty names. */
    for (int v = 0; v <= GPUPROBE_ERR_INTERNAL; v++) {
        assert_true(gpuprobe_status_string((gpuprobe_status)v)[0] != '\0');
        assert_string_not_equal(gpuprobe_status_name((gpuprobe_status)v), "unknown");
    }
    for (int v = 0; v <= GPUPROBE_CUDA_OTHER; v++)
        assert_string_not_equal(gpuprobe_cuda_cause_name((gpuprobe_cuda_cause)v), "unknown");
    const char *le = gpuprobe_last_error(NULL);
    assert_non_null(le);
    assert_true(le[0] != '\0');
    assert_non_null(gpuprobe_version_string());
    assert_string_equal(gpuprobe_version_string(), GPUPROBE_VERSION_STRING);
    assert_int_equal(gpuprobe_version(), GPUPROBE_VERSION_NUMBER);
}

static void destroy_accepts_null(void **state)
{
    (void)state;
    gpuprobe_context_destroy(NULL);
    gpuprobe_matmul_options_destroy(NULL);
    gpuprobe_matmul_result_destroy(NULL);
}

/* The message of a failed select quotes the malformed spec. */
static void message_quotes_spec(void **state)
{
    (void)state;
    size_t d = 0;
    assert_int_equal(gpuprobe_select(fx.ctx, "gpu0", NULL,
                                     GPUPROBE_SELECT_IGNORE_ENV, &d, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuprobe_last_error(fx.ctx), "gpu0"));
    /* A long spec with control bytes is quoted bounded and sanitised. */
    char spec[5000];
    memset(spec, 'x', sizeof spec - 1);
    spec[sizeof spec - 1] = '\0';
    spec[3] = '\033';
    assert_int_equal(gpuprobe_select(fx.ctx, spec, NULL,
                                     GPUPROBE_SELECT_IGNORE_ENV, &d, NULL),
                     GPUPROBE_ERR_INVALID_ARGUMENT);
    const char *msg = gpuprobe_last_error(fx.ctx);
    assert_true(strlen(msg) < GP_ERR_LEN);
    assert_null(strchr(msg, '\033'));
}

/* Undersized memory_info: fields beyond `size` are never written. */
static void memory_info_prefix_only(void **state)
{
    (void)state;
    gpuprobe_memory_info mi;
    memset(&mi, 0xa5, sizeof mi);
    mi.size = offsetof(gpuprobe_memory_info, available_bytes);
    gpuprobe_memory_info before = mi;
    gpuprobe_status st = gpuprobe_device_memory(fx.ctx, 0, &mi, 0);
    assert_true(st == GPUPROBE_OK || st == GPUPROBE_ERR_INVALID_ARGUMENT);
    assert_memory_equal((char *)&mi + mi.size, (char *)&before + before.size,
                        sizeof mi - mi.size);
}

int main(void)
{
    struct CMUnitTest tests[N_ROWS + 4];
    for (size_t i = 0; i < N_ROWS; i++) {
        struct CMUnitTest t = cmocka_unit_test_prestate(run_row, (void *)&rows[i]);
        t.name = rows[i].name;
        tests[i] = t;
    }
    struct CMUnitTest fixed[] = {
        cmocka_unit_test(strings_never_null),
        cmocka_unit_test(destroy_accepts_null),
        cmocka_unit_test(message_quotes_spec),
        cmocka_unit_test(memory_info_prefix_only),
    };
    memcpy(&tests[N_ROWS], fixed, sizeof fixed);
    return _cmocka_run_group_tests("bad_input", tests, N_ROWS + 4,
                                   group_setup, group_teardown);
}
