/*
 * test_nfd.c - unit tests of gpuprobe-nfd's core (tools/nfd): the
 * Kubernetes label rules against a table of valid and invalid keys, prefixes
 * and values; the value sanitiser on hostile product names and on random
 * bytes; the labels made from a node's facts (a CPU-only node, one GPU,
 * eight GPUs of three products, CUDA unusable, measured figures), both from
 * hand-made facts and gathered through the library's public calls from GPUs
 * simulated by its test seam (gp_test_set_cuda); the feature file and its
 * expiry time. Every label any test makes is checked against the rules.
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
#include "labels.h"
#include "nfd.h"

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)

/* "a" repeated n times, then tail (static buffer per call site). */
static char *repeat(char *buf, size_t size, char c, size_t n, const char *tail)
{
    assert_true(n + strlen(tail) < size);
    memset(buf, c, n);
    strcpy(buf + n, tail);
    return buf;
}

/* ---- the rules ------------------------------------------------------------ */

typedef struct {
    const char *text;
    int ok;
    const char *why; /* a word of the reason, for invalid ones */
} row;

static void key_table(void **state)
{
    (void)state;
    char n63[80], n64[80], p253[300], p254[300], l64[100];
    /* A name of 63 characters and one of 64. */
    snprintf(n63, sizeof n63, "x/%s", repeat((char[70]){0}, 70, 'n', 63, ""));
    snprintf(n64, sizeof n64, "x/%s", repeat((char[70]){0}, 70, 'n', 64, ""));
    /* Prefixes of 253 and 254 characters: dot-separated parts of 9. */
    p253[0] = '\0';
    while (strlen(p253) + 10 <= 250)
        strcat(p253, "abcdefghi.");
    strcat(p253, repeat((char[8]){0}, 8, 'z', 253 - strlen(p253), ""));
    assert_int_equal(strlen(p253), 253);
    strcpy(p254, p253);
    strcat(p254, "z");
    strcat(p253, "/name");
    strcat(p254, "/name");
    /* A DNS part longer than 63: the API server accepts it (it checks
     * only the whole prefix), and so does the checker. */
    snprintf(l64, sizeof l64, "%s.io/x", repeat((char[70]){0}, 70, 'p', 64, ""));
    const row rows[] = {
        {"gpuprobe.io/cuda.usable", 1, NULL},
        {"gpuprobe.io/gpu.fit.fp16.inference.billions", 1, NULL},
        {"cuda.usable", 1, NULL}, /* no prefix: a valid key */
        {"a", 1, NULL},
        {"Z", 1, NULL},
        {"7", 1, NULL},
        {"a/b", 1, NULL},
        {"example.com/Mixed_Case-name.9", 1, NULL},
        {"a-b.c-d.e/f", 1, NULL},
        {"0.0/0", 1, NULL},
        {n63, 1, NULL},
        {n64, 0, "63"},
        {p253, 1, NULL},
        {p254, 0, "253"},
        {l64, 1, NULL},
        {"", 0, "empty"},
        {"/name", 0, "empty"},
        {"prefix.io/", 0, "empty"},
        {"a/b/c", 0, "one '/'"},
        {"Gpuprobe.io/x", 0, "DNS"},
        {"gpu_probe.io/x", 0, "DNS"},
        {"gpuprobe.io./x", 0, "DNS"},
        {".gpuprobe.io/x", 0, "DNS"},
        {"gpu..probe/x", 0, "DNS"},
        {"-gpu.io/x", 0, "DNS"},
        {"gpu-.io/x", 0, "DNS"},
        {"gpu.io-/x", 0, "DNS"},
        {"gpu io/x", 0, "DNS"},
        {"gpuprobe.io/-x", 0, "start and end"},
        {"gpuprobe.io/x-", 0, "start and end"},
        {"gpuprobe.io/x.", 0, "start and end"},
        {"gpuprobe.io/_x", 0, "start and end"},
        {"gpuprobe.io/x y", 0, "only letters"},
        {"gpuprobe.io/x=y", 0, "only letters"},
        {"gpuprobe.io/\xc3\xa9", 0, "only letters"},
        {"gpuprobe.io/a\nb", 0, "only letters"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *why = label_key_error(rows[i].text);
        if (rows[i].ok != (why == NULL))
            fail_msg("key '%s': %s", rows[i].text, why ? why : "accepted");
        if (why && !strstr(why, rows[i].why))
            fail_msg("key '%s': '%s' does not say '%s'", rows[i].text, why, rows[i].why);
    }
    assert_non_null(label_key_error(NULL));
}

static void prefix_table(void **state)
{
    (void)state;
    const row rows[] = {
        {"gpuprobe.io", 1, NULL}, {"a", 1, NULL}, {"9", 1, NULL},   {"a-b", 1, NULL},
        {"x.y.z", 1, NULL},       {"", 0, "empty"}, {"A.io", 0, "DNS"}, {"a.", 0, "DNS"},
        {".a", 0, "DNS"},         {"a..b", 0, "DNS"}, {"a-", 0, "DNS"}, {"a/b", 0, "DNS"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *why = label_prefix_error(rows[i].text);
        if (rows[i].ok != (why == NULL))
            fail_msg("prefix '%s': %s", rows[i].text, why ? why : "accepted");
        if (why && !strstr(why, rows[i].why))
            fail_msg("prefix '%s': '%s' does not say '%s'", rows[i].text, why, rows[i].why);
    }
}

static void value_table(void **state)
{
    (void)state;
    char v63[70], v64[70];
    repeat(v63, sizeof v63, 'v', 63, "");
    repeat(v64, sizeof v64, 'v', 64, "");
    const row rows[] = {
        {"", 1, NULL},
        {"true", 1, NULL},
        {"NVIDIA-H200", 1, NULL},
        {"13.0", 1, NULL},
        {"no_driver", 1, NULL},
        {"a", 1, NULL},
        {"0", 1, NULL},
        {"A_b.c-D9", 1, NULL},
        {v63, 1, NULL},
        {v64, 0, "63"},
        {"-a", 0, "start and end"},
        {"a-", 0, "start and end"},
        {".a", 0, "start and end"},
        {"a_", 0, "start and end"},
        {"NVIDIA H200", 0, "only letters"},
        {"a/b", 0, "only letters"},
        {"a=b", 0, "only letters"},
        {"\xe4\xb8\xad", 0, "only letters"},
        {"a\tb", 0, "only letters"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *why = label_value_error(rows[i].text);
        if (rows[i].ok != (why == NULL))
            fail_msg("value '%s': %s", rows[i].text, why ? why : "accepted");
        if (why && !strstr(why, rows[i].why))
            fail_msg("value '%s': '%s' does not say '%s'", rows[i].text, why, rows[i].why);
    }
    assert_non_null(label_value_error(NULL));
}

/* ---- the sanitiser ------------------------------------------------------------ */

static const char *sanitise(char *dst, const char *src, size_t len)
{
    size_t n = label_value_from(dst, src, len);
    assert_int_equal(n, strlen(dst));
    assert_true(n >= 1 && n <= LABEL_VALUE_MAX);
    const char *why = label_value_error(dst);
    if (why)
        fail_msg("'%s' made from '%.*s' is not a valid value: %s", dst, (int)len, src, why);
    return dst;
}

static int is_hex8(const char *s)
{
    if (strlen(s) != 8)
        return 0;
    for (; *s; s++)
        if (!strchr("0123456789abcdef", *s))
            return 0;
    return 1;
}

static void sanitise_product_names(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"NVIDIA H200", "NVIDIA-H200"},
        {"NVIDIA A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB"},
        {"Tesla V100-SXM2-16GB", "Tesla-V100-SXM2-16GB"},
        {"NVIDIA RTX 6000 Ada Generation", "NVIDIA-RTX-6000-Ada-Generation"},
        {"NVIDIA GeForce RTX 4090 / Ti", "NVIDIA-GeForce-RTX-4090-Ti"},
        {"Quadro\xc2\xae RTX 8000", "Quadro-RTX-8000"},      /* (R) sign */
        {"H100 \xe2\x80\x94 PCIe", "H100-PCIe"},              /* em dash */
        {" -- leading, trailing // ", "leading-trailing"},
        {"a - b", "a-b"},
        {"a- b", "a-b"},
        {"a -b", "a-b"},
        {"x\x1b[31mRED\n", "x-31mRED"},
        {"GH200_480GB.v2", "GH200_480GB.v2"},
        {"..._x_...", "x"},
    };
    char out[LABEL_VALUE_MAX + 1];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_string_equal(sanitise(out, cases[i].in, strlen(cases[i].in)), cases[i].out);

    /* Embedded NUL bytes are bytes like others. */
    assert_string_equal(sanitise(out, "A\0B", 3), "A-B");

    /* Nothing ASCII left: the hash of the bytes (FNV-1a of "" is 811c9dc5). */
    assert_string_equal(sanitise(out, "", 0), "811c9dc5");
    assert_true(is_hex8(sanitise(out, "\xe4\xb8\xad\xe6\x96\x87", 6)));
    assert_true(is_hex8(sanitise(out, " / ", 3)));
    char other[LABEL_VALUE_MAX + 1];
    assert_string_not_equal(sanitise(other, "\xe6\x96\x87\xe4\xb8\xad", 6), out);

    /* 63 characters fit; 64 do not. */
    char v[100];
    repeat(v, sizeof v, 'v', 63, "");
    assert_string_equal(sanitise(out, v, 63), v);
    repeat(v, sizeof v, 'v', 64, "");
    sanitise(out, v, 64);
    assert_int_equal(strlen(out), 63);
    assert_memory_equal(out, v, 54);
    assert_int_equal(out[54], '-');
    assert_true(is_hex8(out + 55));
    /* 63 valid characters and a trailing blank: trimmed, not cut. */
    repeat(v, sizeof v, 'v', 63, " ");
    assert_int_equal(strlen(sanitise(out, v, 64)), 63);
    assert_int_equal(strchr(out, '-'), NULL);
}

/* A product name of 80 characters with blanks, slashes, a control byte and
 * non-ASCII characters: sanitised, not dropped and not refused; a second
 * name differing only past the cut gives another value. */
static void sanitise_long_hostile_name(void **state)
{
    (void)state;
    static const char a[] = "NVIDIA H200 NVL / SXM5 \xe2\x84\xa2 \xe4\xb8\xad\xe6\x96\x87 "
                            "Hopper\x01 141GB HBM3e (preproduction sample) rev A";
    static const char b[] = "NVIDIA H200 NVL / SXM5 \xe2\x84\xa2 \xe4\xb8\xad\xe6\x96\x87 "
                            "Hopper\x01 141GB HBM3e (preproduction sample) rev B";
    assert_true(strlen(a) >= 80);
    char va[LABEL_VALUE_MAX + 1], vb[LABEL_VALUE_MAX + 1];
    sanitise(va, a, strlen(a));
    sanitise(vb, b, strlen(b));
    assert_int_equal(strncmp(va, "NVIDIA-H200-NVL-SXM5-Hopper-141GB-HBM3e-preproduction", 53), 0);
    assert_string_not_equal(va, vb);
    assert_int_equal(strncmp(va, vb, 54), 0);
}

/* Random bytes: always a valid, non-empty value; a valid value comes back
 * unchanged (so sanitising twice changes nothing). */
static void sanitise_random_bytes(void **state)
{
    (void)state;
    static const char alphabet[] = "abcXYZ019.-_ /\x01\x7f\xc3\xa9\xe4\xb8\xad\xff=";
    uint64_t seed = 42;
    char in[160], out[LABEL_VALUE_MAX + 1], again[LABEL_VALUE_MAX + 1];
    for (int iter = 0; iter < 20000; iter++) {
        seed = seed * UINT64_C(6364136223846793005) + 1442695040888963407u;
        size_t len = (size_t)(seed >> 33) % sizeof in;
        for (size_t i = 0; i < len; i++) {
            seed = seed * UINT64_C(6364136223846793005) + 1442695040888963407u;
            in[i] = alphabet[(seed >> 33) % (sizeof alphabet - 1)];
        }
        sanitise(out, in, len);
        assert_string_equal(sanitise(again, out, strlen(out)), out);
        if (len > 0 && len <= LABEL_VALUE_MAX) {
            char copy[sizeof in + 1];
            memcpy(copy, in, len);
            copy[len] = '\0';
            if (strlen(copy) == len && !label_value_error(copy))
                assert_string_equal(out, copy);
        }
    }
}

/* ---- facts -> labels -------------------------------------------------------------- */

/* Every label passes the rules; returns the value of key (NULL if absent). */
static void check_labels(const nfd_label *l, size_t n)
{
    assert_true(n <= NFD_MAX_LABELS);
    for (size_t i = 0; i < n; i++) {
        const char *why = label_key_error(l[i].key);
        if (!why)
            why = label_value_error(l[i].value);
        if (why)
            fail_msg("label %s=%s: %s", l[i].key, l[i].value, why);
        for (size_t j = 0; j < i; j++)
            if (strcmp(l[i].key, l[j].key) == 0)
                fail_msg("label %s twice", l[i].key);
    }
}

static const char *value_of(const nfd_label *l, size_t n, const char *name)
{
    char key[LABEL_KEY_MAX + 1];
    snprintf(key, sizeof key, "gpuprobe.io/%s", name);
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].key, key) == 0)
            return l[i].value;
    return NULL;
}

/* The labels must be exactly "name=value" pairs, in this order. */
static void expect_labels(const nfd_label *l, size_t n, const char *const *want, size_t nwant)
{
    check_labels(l, n);
    for (size_t i = 0; i < n && i < nwant; i++) {
        char got[LABEL_KEY_MAX + LABEL_VALUE_MAX + 2];
        snprintf(got, sizeof got, "%s=%s", l[i].key + strlen("gpuprobe.io/"), l[i].value);
        if (strcmp(got, want[i]) != 0)
            fail_msg("label %zu: got %s, want %s", i, got, want[i]);
    }
    assert_int_equal(n, nwant);
}

#define EXPECT(l, n, ...)                                                      \
    do {                                                                       \
        static const char *const want_[] = {__VA_ARGS__};                      \
        expect_labels((l), (n), want_, sizeof want_ / sizeof want_[0]);        \
    } while (0)

static void labels_cpu_only_node(void **state)
{
    (void)state;
    nfd_facts f = {0};
    f.cause = GPUPROBE_CUDA_NO_DRIVER;
    f.runtime_version = 13000;
    nfd_label l[NFD_MAX_LABELS];
    size_t n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_PROBE | NFD_MEASURED, l);
    EXPECT(l, n, "cuda.usable=false", "cuda.cause=no_driver", "cuda.runtime.version=13.0",
           "cuda.runtime.major=13", "cuda.runtime.minor=0", "cuda.devices=0");
    /* Another prefix. */
    n = nfd_labels(&f, "example.org", NFD_PROBE, l);
    assert_string_equal(l[0].key, "example.org/cuda.usable");
    check_labels(l, n);
    /* Only the measured labels: none were measured. */
    assert_int_equal(nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_MEASURED, l), 0);
}

static void labels_one_gpu_with_versions(void **state)
{
    (void)state;
    nfd_gpu gpu = {1, "NVIDIA H200", 9, 0, UINT64_C(150754820096)};
    nfd_facts f = {0};
    f.cause = GPUPROBE_CUDA_AVAILABLE;
    f.driver_version = 12080;
    f.runtime_version = 12040;
    f.n_gpus = 1;
    f.gpus = &gpu;
    nfd_label l[NFD_MAX_LABELS];
    size_t n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_PROBE | NFD_MEASURED, l);
    EXPECT(l, n, "cuda.usable=true", "cuda.cause=available", "cuda.driver.version=12.8",
           "cuda.driver.major=12", "cuda.driver.minor=8", "cuda.runtime.version=12.4",
           "cuda.runtime.major=12", "cuda.runtime.minor=4", "cuda.devices=1",
           "gpu.product=NVIDIA-H200", "gpu.count=1", "gpu.models=1", "gpu.memory=143771",
           "gpu.compute.major=9", "gpu.compute.minor=0");
    /* Unknown facts give no label, never a made-up one. */
    gpu.name = NULL;
    gpu.cc_major = gpu.cc_minor = -1;
    gpu.total_bytes = 0;
    f.driver_version = 0;
    n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_PROBE, l);
    EXPECT(l, n, "cuda.usable=true", "cuda.cause=available", "cuda.runtime.version=12.4",
           "cuda.runtime.major=12", "cuda.runtime.minor=4", "cuda.devices=1", "gpu.count=1",
           "gpu.models=1");
}

/* The MIG mode of the labelled product's GPU, when known; after the
 * compute capability. */
static void labels_mig_mode(void **state)
{
    (void)state;
    nfd_gpu gpu = {1, "NVIDIA H200 MIG 1g.18gb", 9, 0, 16 * GiB};
    nfd_facts f = {0};
    f.cause = GPUPROBE_CUDA_AVAILABLE;
    f.n_gpus = 1;
    f.gpus = &gpu;
    f.mig_mode = NFD_MIG_ENABLED;
    nfd_label l[NFD_MAX_LABELS];
    size_t n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_PROBE, l);
    EXPECT(l, n, "cuda.usable=true", "cuda.cause=available", "cuda.devices=1",
           "gpu.product=NVIDIA-H200-MIG-1g.18gb", "gpu.count=1", "gpu.models=1", "gpu.memory=16384",
           "gpu.compute.major=9", "gpu.compute.minor=0", "gpu.mig.mode=enabled");
    f.mig_mode = NFD_MIG_DISABLED;
    n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_PROBE, l);
    assert_string_equal(l[n - 1].key, "gpuprobe.io/gpu.mig.mode");
    assert_string_equal(l[n - 1].value, "disabled");
    f.mig_mode = NFD_MIG_UNKNOWN;
    n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_PROBE, l);
    assert_string_equal(l[n - 1].key, "gpuprobe.io/gpu.compute.minor");
}

static void labels_measured(void **state)
{
    (void)state;
    nfd_gpu gpu = {1, "NVIDIA T4", 7, 5, 16 * GiB};
    nfd_facts f = {0};
    f.cause = GPUPROBE_CUDA_AVAILABLE;
    f.n_gpus = 1;
    f.gpus = &gpu;
    f.gpu_gflops[GPUPROBE_DTYPE_FP32] = 7500.4; /* rounds up */
    f.gpu_gflops[GPUPROBE_DTYPE_FP16] = 40499.4; /* rounds down */
    f.gpu_gflops[GPUPROBE_DTYPE_TF32] = 0;       /* not measured: absent */
    f.gpu_gflops[GPUPROBE_DTYPE_BF16] = 0.0 / 0.0; /* not a number: absent */
    f.cpu_gflops[GPUPROBE_DTYPE_FP32] = 51.5;
    f.cpu_gflops[GPUPROBE_DTYPE_FP64] = 0.4;
    f.have_fit = 1;
    f.fit_weights = UINT64_C(7999999999);
    f.fit_inference = UINT64_C(6666666666);
    nfd_label l[NFD_MAX_LABELS];
    /* Not benched: the figures are not labels. */
    assert_int_equal(nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_MEASURED, l), 0);
    f.benched = 1;
    size_t n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_MEASURED, l);
    EXPECT(l, n, "gpu.fp32.tflops=8", "gpu.fp16.tflops=40", "gpu.fit.fp16.weights.billions=7",
           "gpu.fit.fp16.inference.billions=6", "cpu.fp32.gflops=52", "cpu.fp64.gflops=0");
    n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_PROBE | NFD_MEASURED, l);
    check_labels(l, n);
    assert_string_equal(value_of(l, n, "gpu.product"), "NVIDIA-T4");
    assert_string_equal(value_of(l, n, "gpu.fp16.tflops"), "40");
    /* Without a GPU only the CPU's figures remain. */
    f.n_gpus = 0;
    n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_MEASURED, l);
    EXPECT(l, n, "cpu.fp32.gflops=52", "cpu.fp64.gflops=0");
}

/* Everything known and measured: every label there is, in order (the
 * table of docs/kubernetes.md lists the same). */
static void labels_all(void **state)
{
    (void)state;
    nfd_gpu gpu[2] = {{1, "NVIDIA H200", 9, 0, 141 * GiB}, {2, "NVIDIA H200", 9, 0, 141 * GiB}};
    nfd_facts f = {0};
    f.cause = GPUPROBE_CUDA_AVAILABLE;
    f.driver_version = 13000;
    f.runtime_version = 12080;
    f.n_gpus = 2;
    f.gpus = gpu;
    f.benched = 1;
    f.gpu_gflops[GPUPROBE_DTYPE_FP32] = 51234;
    f.gpu_gflops[GPUPROBE_DTYPE_TF32] = 378901;
    f.gpu_gflops[GPUPROBE_DTYPE_FP16] = 712345;
    f.gpu_gflops[GPUPROBE_DTYPE_BF16] = 708765;
    f.cpu_gflops[GPUPROBE_DTYPE_FP32] = 2345.6;
    f.cpu_gflops[GPUPROBE_DTYPE_FP64] = 1170.2;
    f.have_fit = 1;
    f.fit_weights = UINT64_C(75384225792);
    f.fit_inference = UINT64_C(62820188160);
    nfd_label l[NFD_MAX_LABELS];
    size_t n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_PROBE | NFD_MEASURED, l);
    EXPECT(l, n, "cuda.usable=true", "cuda.cause=available", "cuda.driver.version=13.0",
           "cuda.driver.major=13", "cuda.driver.minor=0", "cuda.runtime.version=12.8",
           "cuda.runtime.major=12", "cuda.runtime.minor=8", "cuda.devices=2",
           "gpu.product=NVIDIA-H200", "gpu.count=2", "gpu.models=1", "gpu.memory=144384",
           "gpu.compute.major=9", "gpu.compute.minor=0", "gpu.fp32.tflops=51",
           "gpu.tf32.tflops=379", "gpu.fp16.tflops=712", "gpu.bf16.tflops=709",
           "gpu.fit.fp16.weights.billions=75", "gpu.fit.fp16.inference.billions=62",
           "cpu.fp32.gflops=2346", "cpu.fp64.gflops=1170");
}

static void product_of_mixed_nodes(void **state)
{
    (void)state;
    nfd_gpu g[5] = {
        {1, "B", 8, 0, 80 * GiB}, {2, "A", 9, 0, 141 * GiB}, {3, "A", 9, 0, 141 * GiB},
        {4, "B", 8, 0, 40 * GiB}, {5, NULL, -1, -1, 0},
    };
    nfd_facts f = {0};
    f.gpus = g;
    size_t count = 99, models = 99;
    assert_int_equal(nfd_product(&f, &count, &models), (size_t)-1);
    assert_int_equal(count, 0);
    assert_int_equal(models, 0);
    f.n_gpus = 4; /* B, A, A, B: a tie, B comes first */
    assert_int_equal(nfd_product(&f, &count, &models), 0);
    assert_int_equal(count, 2);
    assert_int_equal(models, 2);
    f.n_gpus = 3; /* B, A, A */
    assert_int_equal(nfd_product(&f, &count, &models), 1);
    assert_int_equal(count, 2);
    f.n_gpus = 5; /* an unknown name is a product of its own */
    assert_int_equal(nfd_product(&f, &count, &models), 0);
    assert_int_equal(models, 3);
    /* gpu.memory: the smallest of the product's GPUs. */
    f.cause = GPUPROBE_CUDA_AVAILABLE;
    nfd_label l[NFD_MAX_LABELS];
    size_t n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_PROBE, l);
    check_labels(l, n);
    assert_string_equal(value_of(l, n, "gpu.product"), "B");
    assert_string_equal(value_of(l, n, "gpu.memory"), "40960");
    assert_string_equal(value_of(l, n, "cuda.devices"), "5");
}

/* ---- gathered through the public calls, from simulated GPUs ---- */

typedef struct failures {
    size_t n;
    char what[16][160];
} failures;

static void record(void *arg, gpuprobe_context *ctx, gpuprobe_status st, const char *what)
{
    failures *fl = arg;
    assert_int_not_equal(st, GPUPROBE_OK);
    assert_true(gpuprobe_last_error(ctx)[0] != '\0');
    if (fl->n < 16)
        snprintf(fl->what[fl->n], sizeof fl->what[0], "%s", what);
    fl->n++;
}

/* Gather from the simulated fleet, label, check every label. */
static size_t gather_labels(const gp_fake_cuda *fake, const nfd_options *opt, nfd_label *l,
                            failures *fl, nfd_facts *keep)
{
    gpuprobe_context *ctx = NULL;
    assert_int_equal(gpuprobe_context_create(&ctx, 0), GPUPROBE_OK);
    gp_test_set_cuda(ctx, fake);
    nfd_facts f;
    memset(fl, 0, sizeof *fl);
    assert_int_equal(nfd_gather(ctx, opt, &f, record, fl), GPUPROBE_OK);
    assert_int_equal(f.failures, fl->n);
    size_t n = nfd_labels(&f, NFD_DEFAULT_PREFIX, NFD_PROBE | NFD_MEASURED, l);
    check_labels(l, n);
    if (keep) {
        *keep = f;
        keep->gpus = NULL;
    }
    nfd_facts_free(&f);
    gpuprobe_context_destroy(ctx);
    return n;
}

static void gathered_cuda_unusable(void **state)
{
    (void)state;
    static const gpuprobe_cuda_cause causes[] = {
        GPUPROBE_CUDA_DEVICES_HIDDEN, GPUPROBE_CUDA_NO_KERNEL_DRIVER, GPUPROBE_CUDA_DRIVER_TOO_OLD,
        GPUPROBE_CUDA_NO_PERMISSION, GPUPROBE_CUDA_NO_DEVICE,
    };
    for (size_t i = 0; i < sizeof causes / sizeof causes[0]; i++) {
        gp_fake_cuda fake = {causes[i], "simulated", 0, NULL};
        nfd_label l[NFD_MAX_LABELS];
        failures fl;
        size_t n = gather_labels(&fake, NULL, l, &fl, NULL);
        assert_int_equal(fl.n, 0);
        assert_string_equal(value_of(l, n, "cuda.usable"), "false");
        assert_string_equal(value_of(l, n, "cuda.cause"), gpuprobe_cuda_cause_name(causes[i]));
        assert_string_equal(value_of(l, n, "cuda.devices"), "0");
        assert_null(value_of(l, n, "gpu.product"));
        assert_null(value_of(l, n, "gpu.count"));
    }
}

static void gathered_one_gpu(void **state)
{
    (void)state;
    static const gp_fake_cuda_device dev[] = {{"NVIDIA H200", 9, 0, 141 * GiB, 140 * GiB, 0}};
    gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, NULL, 1, dev};
    nfd_label l[NFD_MAX_LABELS];
    failures fl;
    size_t n = gather_labels(&fake, NULL, l, &fl, NULL);
    assert_int_equal(fl.n, 0);
    /* The simulation has no driver or runtime: no version labels. */
    EXPECT(l, n, "cuda.usable=true", "cuda.cause=available", "cuda.devices=1",
           "gpu.product=NVIDIA-H200", "gpu.count=1", "gpu.models=1", "gpu.memory=144384",
           "gpu.compute.major=9", "gpu.compute.minor=0");
}

/* Eight GPUs of three products, the most common two tied: the one that
 * comes first in CUDA order is labelled. One of its GPUs is smaller. */
static void gathered_eight_mixed_gpus(void **state)
{
    (void)state;
    static const gp_fake_cuda_device dev[] = {
        {"NVIDIA A100-SXM4-80GB", 8, 0, 80 * GiB, 79 * GiB, 0},
        {"NVIDIA H200", 9, 0, 141 * GiB, 140 * GiB, 0},
        {"NVIDIA H200", 9, 0, 141 * GiB, 140 * GiB, 0},
        {"NVIDIA A100-SXM4-80GB", 8, 0, 79 * GiB, 78 * GiB, 0},
        {"NVIDIA H200", 9, 0, 141 * GiB, 140 * GiB, 0},
        {"NVIDIA A100-SXM4-80GB", 8, 0, 80 * GiB, 79 * GiB, 0},
        {"NVIDIA L40S", 8, 9, 45 * GiB, 44 * GiB, 0},
        {"NVIDIA L40S", 8, 9, 45 * GiB, 44 * GiB, 0},
    };
    gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, NULL, 8, dev};
    nfd_label l[NFD_MAX_LABELS];
    failures fl;
    size_t n = gather_labels(&fake, NULL, l, &fl, NULL);
    assert_int_equal(fl.n, 0);
    EXPECT(l, n, "cuda.usable=true", "cuda.cause=available", "cuda.devices=8",
           "gpu.product=NVIDIA-A100-SXM4-80GB", "gpu.count=3", "gpu.models=3",
           "gpu.memory=80896", "gpu.compute.major=8", "gpu.compute.minor=0");

    /* Eight of one product. */
    gp_fake_cuda_device same[8];
    for (size_t i = 0; i < 8; i++)
        same[i] = dev[1];
    fake.devices = same;
    n = gather_labels(&fake, NULL, l, &fl, NULL);
    assert_string_equal(value_of(l, n, "gpu.product"), "NVIDIA-H200");
    assert_string_equal(value_of(l, n, "gpu.count"), "8");
    assert_string_equal(value_of(l, n, "gpu.models"), "1");
    assert_string_equal(value_of(l, n, "cuda.devices"), "8");
}

static void gathered_hostile_name(void **state)
{
    (void)state;
    static const gp_fake_cuda_device dev[] = {
        {"NVIDIA\x1b[31m H200/SXM \xe4\xb8\xad\xe6\x96\x87\n\"q\" 141GB HBM3e with a name of "
         "eighty characters or more\xff",
         9, 0, 141 * GiB, 140 * GiB, 0},
    };
    gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, NULL, 1, dev};
    nfd_label l[NFD_MAX_LABELS];
    failures fl;
    size_t n = gather_labels(&fake, NULL, l, &fl, NULL);
    const char *product = value_of(l, n, "gpu.product");
    assert_non_null(product);
    assert_int_equal(strncmp(product, "NVIDIA-31m-H200-SXM-q-141GB-HBM3e-with-a-name-of", 48), 0);
    assert_int_equal(strlen(product), 63);
}

/* --bench on simulated GPUs: a simulated GPU cannot run a matmul, so the
 * four GPU precisions fail (reported, no label); the fit comes from the
 * simulated memory; the CPU's figures are really measured. */
static void gathered_bench(void **state)
{
    (void)state;
    static const gp_fake_cuda_device dev[] = {
        {"NVIDIA H200", 9, 0, 141 * GiB, 100 * GiB, 600 * MiB},
        {"NVIDIA H200", 9, 0, 140 * GiB, 139 * GiB, 0},
    };
    gp_fake_cuda fake = {GPUPROBE_CUDA_AVAILABLE, NULL, 2, dev};
    nfd_options opt = {1, 32};
    nfd_label l[NFD_MAX_LABELS];
    failures fl;
    nfd_facts f;
    size_t n = gather_labels(&fake, &opt, l, &fl, &f);
    assert_int_equal(fl.n, 4);
    assert_string_equal(fl.what[0], "cuda:0: fp32 matmul");
    assert_string_equal(fl.what[3], "cuda:0: bf16 matmul");
    for (int dt = 0; dt < NFD_DTYPES; dt++)
        assert_true(f.gpu_gflops[dt] == 0);
    assert_null(value_of(l, n, "gpu.fp32.tflops"));
    /* The smaller GPU's total less the context measured on cuda:0 (the
     * one GPU the bench uses), whatever is free now. */
    uint64_t bytes = 140 * GiB - 600 * MiB, w = 0, inf = 0;
    assert_int_equal(gpuprobe_capacity_params(bytes, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_WEIGHTS, &w), GPUPROBE_OK);
    assert_int_equal(gpuprobe_capacity_params(bytes, GPUPROBE_DTYPE_FP16,
                                              GPUPROBE_WORKLOAD_INFERENCE, &inf), GPUPROBE_OK);
    assert_int_equal(f.fit_weights, w);
    assert_int_equal(f.fit_inference, inf);
    assert_string_equal(value_of(l, n, "gpu.fit.fp16.weights.billions"), "74");
    assert_string_equal(value_of(l, n, "gpu.fit.fp16.inference.billions"), "62");
    assert_true(f.cpu_gflops[GPUPROBE_DTYPE_FP32] > 0);
    assert_true(f.cpu_gflops[GPUPROBE_DTYPE_FP64] > 0);
    assert_non_null(value_of(l, n, "cpu.fp32.gflops"));
    assert_non_null(value_of(l, n, "cpu.fp64.gflops"));
}

/* ---- the feature file ------------------------------------------------------------ */

static void rfc3339_times(void **state)
{
    (void)state;
    char buf[21];
    assert_int_equal(nfd_rfc3339(0, buf), 0);
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    assert_int_equal(nfd_rfc3339(951782400, buf), 0);
    assert_string_equal(buf, "2000-02-29T00:00:00Z");
    if (sizeof(time_t) > 4) {
        assert_int_equal(nfd_rfc3339((time_t)INT64_C(253402300799), buf), 0);
        assert_string_equal(buf, "9999-12-31T23:59:59Z");
        assert_int_equal(nfd_rfc3339((time_t)INT64_C(253402300800), buf), -1);
    }
}

static void file_text(void **state)
{
    (void)state;
    nfd_label l[2] = {{"gpuprobe.io/cuda.usable", "false"}, {"gpuprobe.io/cuda.devices", "0"}};
    size_t len = 0;
    char *text = nfd_file_text(l, 2, "2026-12-01T00:00:00Z", &len);
    assert_non_null(text);
    assert_int_equal(len, strlen(text));
    char head[128];
    snprintf(head, sizeof head, "# gpuprobe-nfd %s: ", gpuprobe_version_string());
    assert_int_equal(strncmp(text, head, strlen(head)), 0);
    const char *rest = strchr(text, '\n') + 1;
    assert_string_equal(rest, "# +expiry-time=2026-12-01T00:00:00Z\n"
                              "gpuprobe.io/cuda.usable=false\n"
                              "gpuprobe.io/cuda.devices=0\n");
    free(text);
    text = nfd_file_text(l, 0, NULL, &len);
    assert_non_null(text);
    assert_int_equal(strchr(text, '\n') + 1 - text, (ptrdiff_t)len); /* the comment alone */
    assert_null(strstr(text, "# +"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(key_table),
        cmocka_unit_test(prefix_table),
        cmocka_unit_test(value_table),
        cmocka_unit_test(sanitise_product_names),
        cmocka_unit_test(sanitise_long_hostile_name),
        cmocka_unit_test(sanitise_random_bytes),
        cmocka_unit_test(labels_cpu_only_node),
        cmocka_unit_test(labels_one_gpu_with_versions),
        cmocka_unit_test(labels_mig_mode),
        cmocka_unit_test(labels_measured),
        cmocka_unit_test(labels_all),
        cmocka_unit_test(product_of_mixed_nodes),
        cmocka_unit_test(gathered_cuda_unusable),
        cmocka_unit_test(gathered_one_gpu),
        cmocka_unit_test(gathered_eight_mixed_gpus),
        cmocka_unit_test(gathered_hostile_name),
        cmocka_unit_test(gathered_bench),
        cmocka_unit_test(rfc3339_times),
        cmocka_unit_test(file_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
