/*
 * internal.h - libgpuprobe's internal declarations, shared by the lib/ sources.
 * Not installed. Nothing here is exported from the shared library; the unit
 * tests reach it by linking the static archive libgpuprobe_internal.a.
 *
 * After the shared types, one section per floor of docs/architecture.md,
 * from the ground up; a file calls only its own floor's functions and
 * those of the floors below it, the sections before its own in this
 * header (test arch.layers). The matmul's job and backend table are not
 * here but in matmul_backend.h, which only the protocol (matmul.c) and
 * its backends include.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_INTERNAL_H
#define GPUPROBE_INTERNAL_H

#include "gpuprobe.h"
#include "format.h"
#include "names.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#if defined(__GNUC__)
#define GP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GP_PRINTF(f, a)
#endif

#define GP_ERR_LEN 512   /* context error message, incl. NUL */
#define GP_NAME_LEN 256  /* device / CPU model names, incl. NUL */
#define GP_PATH_LEN 4096 /* directories given through the environment */
/* The most GPUs (CUDA devices, NVML's count and indices) the library
 * believes one machine has: far beyond any real one; a larger figure from
 * a driver is not taken. */
#define GP_MAX_GPUS 4096

/* One enumerated device (the CPU or a CUDA device). */
typedef struct gp_device {
    gpuprobe_device_kind kind;
    char name[GP_NAME_LEN];
    char spec[32];             /* "cpu" or "cuda:N" */
    uint64_t total_memory;     /* bytes */
    int64_t clock_khz;         /* 0 when unknown */
    /* CUDA */
    int cuda_index;
    char uuid[64];             /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    char pci_bus_id[32];
    int cc_major, cc_minor;
    int multiprocessors;
    int64_t memory_clock_khz;
    int memory_bus_bits;
    /* CPU */
    int logical_cores;
    int simd;                  /* gpuprobe_simd */
    char blas_core[64];
    char blas_config[GP_NAME_LEN];
    /* CUDA: device memory taken by the CUDA context, measured through NVML
     * by the first memory query that created it; 0 when unmeasured. */
    uint64_t context_bytes;
    /* CUDA: NVML's view, found by UUID at enumeration (devices.c). nvml is
     * NULL when NVML does not know the device (not loaded, no match);
     * nvml_why then says why. -1: unknown. */
    void *nvml;               /* nvmlDevice_t: the device's own (a MIG instance's) */
    void *nvml_gpu;           /* its GPU's (the same for a whole GPU); NULL unknown */
    int nvml_index;           /* the GPU's NVML index */
    int mig;                  /* 1 a MIG instance, 0 a whole GPU */
    int mig_index;            /* an instance's index in its GPU */
    int mig_mode;             /* the GPU's MIG mode: 1 on, 0 off */
    int mig_count;            /* the GPU's MIG instances */
    char mig_parent_uuid[64]; /* an instance's GPU; "" unknown */
    char nvml_why[192];
    char local_cpus[512];     /* GPUPROBE_ATTR_LOCAL_CPUS, read when asked */
} gp_device;

/*
 * Test seam: a simulated set of CUDA devices. When a context carries one,
 * enumeration, memory queries and selection use it instead of the CUDA
 * libraries. Used only by the unit tests (gp_test_set_cuda()).
 */
typedef struct gp_fake_cuda_device {
    const char *name;
    int cc_major, cc_minor;
    uint64_t total_bytes;
    uint64_t free_bytes;
    uint64_t context_bytes;    /* 0: unmeasured */
} gp_fake_cuda_device;

typedef struct gp_fake_cuda {
    gpuprobe_cuda_cause cause; /* reported when count is 0 */
    const char *detail;
    size_t count;
    const gp_fake_cuda_device *devices;
} gp_fake_cuda;

struct gp_cuda;        /* CUDA loader state, lib/cuda_loader.h */
struct gp_nvml;        /* NVML, loaded at first use, lib/nvml.h */
typedef struct gp_memory gp_memory; /* one device's memory (memory.c, below) */
struct gp_cuda_blas;   /* cuBLAS state for matmul, lib/cuda_matmul.c */
struct gp_openblas;    /* OpenBLAS, loaded at first use, lib/cpu_blas.h */

struct gpuprobe_context {
    char error[GP_ERR_LEN];       /* last error; "" after success */
    char reason[GP_ERR_LEN];      /* last selection reason */
    char cuda_detail[GP_ERR_LEN]; /* why CUDA is (not) usable */

    /* environment, read once at create */
    int env_cuda_off;
    int env_libdir_set;
    char env_libdir[GP_PATH_LEN];
    int env_device_set;
    char env_device[256];         /* truncated copy; longer values flagged */
    int env_device_too_long;
    int env_nvml_off;             /* GPUPROBE_NVML turns NVML off */
    int env_amx_off;              /* GPUPROBE_CPU_AMX turns the CPU's bf16 gemm off */
    /* GPUPROBE_CUDA, GPUPROBE_NVML or GPUPROBE_CPU_AMX holds a value that is neither on nor
     * off: the message every enumerating call fails with; "" when fine. */
    char env_error[GP_ERR_LEN / 2];

    /* test seams */
    const gp_fake_cuda *fake;     /* simulated CUDA devices, or NULL */
    /* Bit i: this process holds a CUDA context on simulated device i (as
     * after a read through one: free_bytes then excludes its cost); clear:
     * its figures were read without a context and it holds none. */
    uint64_t fake_context_held;
    const char *sysroot;          /* prefix for /proc and /sys reads; NULL = "" */

    /* enumeration cache */
    int enumerated;
    gpuprobe_cuda_cause cuda_cause;
    int driver_version;           /* 0 when unknown */
    int runtime_version;          /* 0 when unknown */
    gp_device *devices;           /* [0] is the CPU */
    size_t ndevices;

    struct gp_cuda *cuda;         /* NULL until CUDA is first needed */
    struct gp_cuda_blas *blas;    /* NULL until the first GPU matmul */
    struct gp_openblas *openblas; /* NULL until OpenBLAS is first needed (cpu_blas.h) */
    struct gp_speed_memo *speed;  /* figures the speed estimate measured (speed.c); NULL: none */
};

/* ==== Floor 1: helpers (util.c, names.c, params.c, stats.c, numbers.c) == */

/* ---- names.c: the lists and their lookups are in names.h (included above) ----
 * ---- format.c: figures, dtype lists, SIMD words for people, shared with
 * the commands: format.h (included above) ---- */

/* ---- util.c: text, the environment, the context's message ---- */

/* Record an error message on ctx (printf-style) and return status. ctx may be NULL. */
gpuprobe_status gp_fail(gpuprobe_context *ctx, gpuprobe_status status,
                        const char *fmt, ...) GP_PRINTF(3, 4);
/* Clear the error message and return GPUPROBE_OK. ctx may be NULL. */
gpuprobe_status gp_ok(gpuprobe_context *ctx);
/* Size-prefixed structs (a caller's `size` says how much of the struct it
 * has): GP_END_OF is the size that holds `field`, the last field of some
 * version of `type`. gp_check_size() is OK when size >= min, else
 * GPUPROBE_ERR_INVALID_ARGUMENT with the one message "fn: arg->size is N,
 * less than the M bytes of type (use TYPE_INIT)"; GP_CHECK_SIZE names the
 * type and its field once. */
#define GP_END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
gpuprobe_status gp_check_size(gpuprobe_context *ctx, const char *fn, const char *arg,
                              size_t size, size_t min, const char *type);
#define GP_CHECK_SIZE(ctx, fn, arg, size, type, field)                        \
    gp_check_size((ctx), (fn), (arg), (size), GP_END_OF(type, field), #type)
/* Bounded formatted copy: always NUL-terminates (if size > 0), never overflows. */
void gp_strlcpy(char *dst, const char *src, size_t size);
void gp_snprintf(char *dst, size_t size, const char *fmt, ...) GP_PRINTF(3, 4);
/* gp_snprintf() with a va_list. */
void gp_vsnprintf(char *dst, size_t size, const char *fmt, va_list ap) GP_PRINTF(3, 0);
/* gp_snprintf() after the text dst[size] already holds, cut to fit and
 * always terminated; when anything is left out (also once the buffer is
 * full), the text ends in "..." (for a size of 4 or more). The one way
 * the library builds a message or a reason from pieces. */
void gp_appendf(char *dst, size_t size, const char *fmt, ...) GP_PRINTF(3, 4);
/* The one quoting rule for text from outside (dlerror(), driver strings,
 * file contents, the environment, device names): copy at most max bytes of
 * text into dst for a message; non-printable and non-ASCII bytes become
 * '?', long text ends in "...". dst may be text itself (never longer). */
void gp_quote(char *dst, size_t size, const char *text, size_t max);
/* gp_quote() applied to a message in place. Every message the library
 * keeps (the last error, the CUDA detail, the selection reason) goes
 * through it last, so each is one line of printable ASCII. */
void gp_quote_inplace(char *text);
/* secure_getenv where available. */
const char *gp_getenv(const char *name);

/* ---- params.c: the parameter table behind the option objects ----
 *
 * gpuprobe_matmul_options, gpuprobe_bandwidth_options, gpuprobe_plan_options
 * and gpuprobe_model are each a struct whose first member is a gp_params:
 * integer values by key (0 .. count - 1), each within the bounds of its row
 * of a table and starting at its default. The functions return what the public calls
 * return: GPUPROBE_ERR_INVALID_ARGUMENT (an unknown key, a NULL pointer, a
 * value out of bounds: nothing changed), GPUPROBE_OK. */
#define GP_PARAMS_MAX 16
typedef struct gp_param_info {
    int64_t lower, upper, def;
} gp_param_info;
typedef struct gp_param_table {
    const gp_param_info *info; /* indexed by key */
    unsigned count;            /* at most GP_PARAMS_MAX */
    int zero_unsets;           /* 1: 0 is taken beside the bounds, meaning "not given" */
} gp_param_table;
typedef struct gp_params {
    const gp_param_table *table;
    int64_t v[GP_PARAMS_MAX];
    uint32_t set;              /* bit k: key k was set */
} gp_params;
/* The defaults, nothing set. */
void gp_params_init(gp_params *ps, const gp_param_table *t);
/* A new object of `size` bytes whose first member is a gp_params set to
 * t's defaults (so it converts to the public type without a cast); NULL
 * when out of memory. gp_params_destroy() frees it (NULL is accepted). */
void *gp_params_new(size_t size, const gp_param_table *t);
void gp_params_destroy(void *obj);
gpuprobe_status gp_params_bounds(const gp_param_table *t, int key, int64_t *lower,
                                 int64_t *upper);
gpuprobe_status gp_params_set(gp_params *ps, int key, int64_t value);
/* The value as stored (an object's getter derives its own defaults). */
gpuprobe_status gp_params_get(const gp_params *ps, int key, int64_t *value);
/* 1 when key was set (even to its default), else 0. */
int gp_params_is_set(const gp_params *ps, int key);

/* ---- stats.c: statistics over n doubles. n == 0 gives NaN (stddev: 0 for
 * n < 2). None of them allocates. ---- */
double gp_stats_min(const double *v, size_t n);
double gp_stats_max(const double *v, size_t n);
double gp_stats_mean(const double *v, size_t n);
/* Sample standard deviation (divides by n - 1); 0 for n < 2. */
double gp_stats_stddev(const double *v, size_t n);
/* Median; sorts v in place (ascending). Even n: mean of the two middle values. */
double gp_stats_median_inplace(double *v, size_t n);
/* Sorts v in place (ascending). */
void gp_stats_sort(double *v, size_t n);
/* The q-quantile (0 <= q <= 1) of n sorted values, linear between the
 * order statistics around q (n - 1) (numpy's default, R's type 7): q = 0.5
 * is the median. */
double gp_stats_quantile_sorted(const double *v, size_t n, double q);

/* Monotonic clock in seconds. */
static inline double gp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- numbers.c: number formats, inputs, sizes, tolerance, peaks ---- */
/* fp32 -> IEEE binary16 / bfloat16, round to nearest, ties to even;
 * overflow gives infinity, NaN stays a (quiet) NaN with its sign. */
uint16_t gp_f32_to_f16(float f);
uint16_t gp_f32_to_bf16(float f);
/* Exact widening conversions. */
float gp_f16_to_f32(uint16_t h);
float gp_bf16_to_f32(uint16_t h);

/* Element types of the matmul's buffers. */
typedef enum gp_elem {
    GP_ELEM_F32 = 0,
    GP_ELEM_F64 = 1,
    GP_ELEM_F16 = 2,
    GP_ELEM_BF16 = 3
} gp_elem;
size_t gp_elem_size(gp_elem e);
double gp_elem_get(const void *buf, gp_elem e, size_t idx);
void gp_elem_set(void *buf, gp_elem e, size_t idx, double v);

/* count NaNs of element type e into buf (the poisoned output). */
void gp_fill_nan(void *buf, gp_elem e, size_t count);
/* splitmix64 (Steele, Lea, Flood 2014): a tiny, well-mixed 64-bit generator. */
uint64_t gp_splitmix64(uint64_t *state);
/* The generator's starting state for one stream of a seed (A is stream 1,
 * B 2, the verification samples 3). */
uint64_t gp_random_stream(uint64_t seed, uint64_t stream);
/* Fill buf[0..count) with seeded uniform values in (-1, 1): zero-mean and
 * never exactly 0 (odd multiples of 2^-23, or of 2^-52 for F64), so every
 * value is exact in the element type before any 16-bit rounding. F16
 * and BF16 elements are the round-to-nearest-even images of such fp32
 * values. `stream` separates the sequences of A and B. */
void gp_fill_random(void *buf, gp_elem e, size_t count, uint64_t seed,
                    uint64_t stream);
/* Bytes of m x n elements of size elem; -1 (and nothing written) on
 * overflow (pure arithmetic: rule 4's documented exception). */
int gp_mm_bytes(int64_t m, int64_t n, size_t elem, size_t *bytes);

/* The tolerance on |c - ref| / sum_k |a_ik||b_kj| for a dtype, depth k
 * and spread R (the largest sqrt(sum_j S_j^2) / sum_j |a_ij b_jk| over the
 * sampled entries, S_j the partial sums; used by fp32 and fp64 only). See
 * the derivation in numbers.c. */
double gp_matmul_tolerance(gpuprobe_dtype dtype, int64_t k, double spread);

/* Theoretical peaks, FLOP per clock: per core (CPU, by gpuprobe_simd) and
 * per SM (CUDA, by compute capability). 0 when unknown. */
double gp_cpu_flops_per_cycle(int simd, gpuprobe_dtype dtype);
double gp_gpu_flops_per_clock_sm(int cc_major, int cc_minor,
                                 gpuprobe_dtype dtype);

/* ==== Floor 2: the dlopen seam and the host (dl.c, host.c, host_cpu.c,
 * pool.c) ================================================================ */

/* ---- dl.c ---- */

/* dlopen() for every library libgpuprobe opens (CUDA, NVML, cuBLAS,
 * OpenBLAS): clears a stale dlerror() first, and goes through the test
 * seam gp_test_dlopen when it is set. */
void *gp_dlopen(const char *file, int mode);
/* The last dlerror() text, quoted (gp_quote), into buf; a generic text
 * when there is none (the test seam's failures). */
void gp_dlerror(char *buf, size_t size);
/* dlsym() into a function pointer (*slot of slot_size bytes, which must
 * be a pointer's); 0 when found, -1 (slot untouched) when not: the caller
 * decides whether a missing symbol is an error (rule 4's documented
 * exception, docs/architecture.md). */
int gp_dlsym(void *lib, const char *name, void *slot, size_t slot_size);

/* Test seam: when set, replaces dlopen() in gp_dlopen() (fault injection:
 * pretend a library is missing). Set by unit tests only, before any context
 * loads a library. */
extern void *(*gp_test_dlopen)(const char *file, int mode);
/* Test seam: when set and it returns nonzero for a name, gp_dlsym() finds
 * no such symbol (fault injection: a library that lacks a function). */
extern int (*gp_test_dlsym_hide)(const char *name);

/* ---- host.c: the host's files, parsers, memory and limits ---- */

/* The largest /proc or /sys file read whole (cgroup lists, memory.stat). */
#define GP_FILE_MAX ((size_t)1 << 20)

/* Host memory, cgroup-aware, and this process's own limits. sysroot
 * prefixes /proc and /sys (NULL = real); the limits always come from
 * getrlimit(). */
typedef struct gp_host_memory {
    uint64_t mem_total, mem_available; /* /proc/meminfo */
    uint64_t cgroup_limit;             /* UINT64_MAX if none */
    uint64_t cgroup_usage;             /* valid when cgroup_limit != UINT64_MAX */
    uint64_t as_limit, as_used;        /* RLIMIT_AS (UINT64_MAX if none), VmSize */
    uint64_t data_limit, data_used;    /* RLIMIT_DATA (UINT64_MAX if none), VmData */
} gp_host_memory;
gpuprobe_status gp_host_memory_read(gpuprobe_context *ctx, const char *sysroot,
                                    gp_host_memory *out);

/* The room under the tightest limit of one kind: host memory (MemAvailable,
 * the cgroup limit minus usage) or address space (RLIMIT_AS minus VmSize,
 * RLIMIT_DATA minus VmData). bytes is UINT64_MAX and name NULL when no
 * limit of that kind applies. */
typedef struct gp_room {
    uint64_t bytes;
    const char *name;   /* "MemAvailable", "the cgroup memory limit",
                           "RLIMIT_AS", "RLIMIT_DATA" */
    uint64_t limit, used;
} gp_room;
void gp_host_room(const gp_host_memory *h, int address_space, gp_room *room);

/* OK when `memory` bytes of host memory and `address_space` bytes of
 * address space fit under every limit; else GPUPROBE_ERR_OUT_OF_MEMORY with
 * a message "<what> needs N bytes (M MiB) of host memory|address space
 * (<detail of that kind>), but <limit> leaves R bytes (limit L, U in use)",
 * naming the limit that is short by most. */
gpuprobe_status gp_host_fits(gpuprobe_context *ctx, const gp_host_memory *h,
                             uint64_t memory, const char *memory_detail,
                             uint64_t address_space, const char *space_detail,
                             const char *what);

/* The functions below are shaped like the C library they wrap: 0 or -1
 * (NULL) with errno, no context, no message; their callers decide what a
 * failure is (rule 4's documented exception, docs/architecture.md). */

/* Parsers, over NUL-terminated text (fuzzed). Return 0 on success, -1 if malformed. */
int gp_parse_meminfo(const char *text, uint64_t *total, uint64_t *available);
int gp_parse_cgroup_value(const char *text, uint64_t *value); /* "max" -> UINT64_MAX */
/* From /proc/self/cgroup text: the cgroup v2 path ("0::/path") and the v1
 * memory controller's path; each may be left "" when absent. */
int gp_parse_proc_cgroup(const char *text, char *v2_path, size_t v2_size,
                         char *v1_mem_path, size_t v1_size);
/* VmSize and VmData (bytes) from /proc/self/status text. */
int gp_parse_proc_status(const char *text, uint64_t *vm_size, uint64_t *vm_data);

/* a + b + c (NULL counts as "") in a new heap string, at most GP_PATH_LEN
 * - 1 bytes; NULL with errno ENAMETOOLONG or ENOMEM. */
char *gp_path_join(const char *a, const char *b, const char *c);
/* Read a small file under sysroot into buf (NUL-terminated). 0 ok; -1 with
 * errno set on error, EFBIG (and buf "") when the file does not fit. */
int gp_read_file(const char *sysroot, const char *path, char *buf, size_t size);
/* Read a whole file under sysroot into a new NUL-terminated heap buffer
 * (*out, freed by the caller); -1 with errno set on error, EFBIG when it
 * holds more than max bytes. */
int gp_read_text(const char *sysroot, const char *path, size_t max, char **out);

/* ---- host_cpu.c: the CPUs this process may run on (the rest of the
 * file, the bandwidth's topology and memory modules, is declared in
 * bandwidth_internal.h) ---- */

/* The calling thread's affinity mask (sched_getaffinity(), which a
 * cgroup's cpuset narrows) as a new bit set: *bits (freed by the caller)
 * of *nbits bits. GPUPROBE_ERR_SYSTEM or GPUPROBE_ERR_OUT_OF_MEMORY with a
 * message on failure. */
gpuprobe_status gp_host_allowed_cpus(gpuprobe_context *ctx, unsigned char **bits,
                                     size_t *nbits);
/* How many CPUs that mask holds; the online count when it cannot be read;
 * at least 1. */
size_t gp_host_allowed_count(void);

/* ---- pool.c: worker threads that run one function together ---- */

typedef struct gp_pool gp_pool;
typedef void (*gp_pool_fn)(void *arg);
/* Starts `workers` threads of `stack` bytes of stack; on each run worker
 * i calls fn((char *)args + i * stride). caller_too says the caller runs a
 * share of its own in gp_pool_run() (it numbers the threads in the
 * message). With no workers the pool only runs the caller's share. On
 * failure no thread is left: GPUPROBE_ERR_OUT_OF_MEMORY, or
 * GPUPROBE_ERR_SYSTEM "starting <what> thread I of N: pthread_create
 * failed: ...". */
gpuprobe_status gp_pool_open(gpuprobe_context *ctx, const char *what, gp_pool_fn fn,
                             void *args, size_t stride, size_t workers, size_t stack,
                             int caller_too, gp_pool **out);
/* One run: every worker calls fn, the caller own(own_arg) if own is not
 * NULL; returns when all have. p may be NULL (no workers). */
void gp_pool_run(gp_pool *p, gp_pool_fn own, void *own_arg);
/* Stops and joins the workers and frees the pool; NULL is a no-op. */
void gp_pool_close(gp_pool *p);

/* Test seam: when set and it returns an error number for worker index i,
 * starting that worker fails with it, as pthread_create() would (fault
 * injection). Set by unit tests only. */
extern int (*gp_test_pool_start)(size_t index);

/* ==== Floor 3: loaders (cuda_loader.c, cuda_device.c, nvml.c, cpu_blas.c) ====
 *
 * NVML's queries are in nvml.h and OpenBLAS's table in cpu_blas.h (see
 * the header table of docs/architecture.md). Here: CUDA, for the files
 * that are not CUDA's, and the release functions of the floor. */

/* ---- CUDA ----
 *
 * Implemented by cuda_loader.c and cuda_device.c with CUDA support, by
 * no_cuda.c without (every device query then finds no device, every
 * entry fails with GPUPROBE_ERR_CUDA_UNAVAILABLE). Nothing here names a
 * CUDA type. */

/* Load the runtime and the driver (once per context) and decide the CUDA
 * cause: sets ctx->cuda_cause, ctx->cuda_detail, ctx->driver_version,
 * ctx->runtime_version and ctx->cuda. Returns GPUPROBE_OK whatever the
 * cause (an unusable CUDA is an answer); only host out-of-memory is an
 * error. Never loads cuBLAS. With simulated devices (ctx->fake, a test
 * seam) it does nothing: the cause then comes from the simulation
 * (gp_enumerate()). */
gpuprobe_status gp_cuda_load(gpuprobe_context *ctx);
/* Load cuBLAS matching the loaded runtime (first GPU matmul only).
 * GPUPROBE_ERR_CUDA_UNAVAILABLE with a message when it cannot be loaded. */
gpuprobe_status gp_cuda_load_cublas(gpuprobe_context *ctx);
/* NVML for this context's CUDA devices: loaded once (never required, and
 * never with GPUPROBE_NVML off); NULL when not usable, and then *why (if
 * not NULL) says why. NULL also without a loaded CUDA. */
struct gp_nvml *gp_cuda_nvml(gpuprobe_context *ctx, const char **why);
/* The usable CUDA devices (0 when CUDA is not usable). */
int gp_cuda_device_count(gpuprobe_context *ctx);
/* Describe CUDA ordinal i into d (name, UUID, memory, attributes, PCI bus
 * id). Attributes that cannot be read stay unknown; a failing cuDeviceGet
 * sets the cause to GPUPROBE_CUDA_OTHER and returns GPUPROBE_ERR_CUDA. */
gpuprobe_status gp_cuda_describe(gpuprobe_context *ctx, gp_device *d, int i);
/* Does this process hold dev's primary context? 1, 0, -1 cannot tell
 * (cuDevicePrimaryCtxGetState, which creates nothing). */
int gp_cuda_context_held(gpuprobe_context *ctx, const gp_device *dev);
/* Free memory read inside dev's primary context (created if none exists:
 * GPUPROBE_MEMORY_CREATED_CONTEXT), the fallback when NVML cannot answer. */
gpuprobe_status gp_cuda_context_memory(gpuprobe_context *ctx, const gp_device *dev,
                                       gp_memory *out);
/*
 * Make the primary context of CUDA device `dev` (the one the runtime and
 * cuBLAS use) current on the calling thread, pushed on top of whatever was
 * current; gp_cuda_leave() pops it. The calling thread's current context and
 * the runtime's current device are thus left exactly as they were, and no
 * other device gets a context (cudaSetDevice would create one on the device
 * "restored" to). The primary context is retained once per gpuprobe context
 * and released by gp_cuda_unload(). The retain that creates the context
 * measures its cost through NVML into dev's context_bytes. Errors name the
 * driver call. Called, like gp_cuda_context_memory(), only where CUDA is
 * usable (ctx->cuda_cause GPUPROBE_CUDA_AVAILABLE: the driver is loaded
 * with every function bound).
 */
gpuprobe_status gp_cuda_enter(gpuprobe_context *ctx, const gp_device *dev);
gpuprobe_status gp_cuda_leave(gpuprobe_context *ctx, const gp_device *dev);

/* ---- release functions: what gpuprobe_context_destroy() (context.c)
 * calls; NULL is accepted ---- */

/* cuda_loader.c (no_cuda.c): close the CUDA libraries (those it may) and
 * NVML, release the primary contexts retained, free the state. */
void gp_cuda_unload(struct gp_cuda *cuda);
/* cpu_blas.c: the per-context table (OpenBLAS itself stays loaded). */
void gp_openblas_release(struct gp_openblas *blas);

/* ==== Floor 4: devices and memory (devices.c, memory.c) ================= */

/* ---- devices.c ---- */

/* Enumerate (once) and cache. Returns OK or an error with the message set. */
gpuprobe_status gp_enumerate(gpuprobe_context *ctx);
/* Device by index after enumeration; NULL (and NOT_FOUND set) if out of range. */
gpuprobe_status gp_get_device(gpuprobe_context *ctx, size_t index,
                              const gp_device **dev);
/* Fill the CPU device (name, cores, SIMD, BLAS). sysroot may be NULL. */
gpuprobe_status gp_cpu_describe(gp_device *cpu, const char *sysroot);
/* Detect the SIMD level from a /proc/cpuinfo "flags" line's contents. */
int gp_simd_from_flags(const char *flags);
/* A CUDA device's figure read from NVML now (the utilisation, compute
 * processes, temperature, power and PCIe attributes), as
 * gpuprobe_device_get_int() reads it: UNSUPPORTED with the reason when
 * NVML cannot say. why (may be NULL) then gets the reason in words for
 * people, without the library's or NVML's names ("NVML does not report it
 * for a MIG instance", "Insufficient Permissions"). */
gpuprobe_status gp_device_nvml_int(gpuprobe_context *ctx, size_t device, gpuprobe_attr attr,
                                   int64_t *value, char *why, size_t why_size);

/* ---- memory.c ---- */

/* One device's memory. Every reader inside the library (the public memory
 * query, capacity, selection, plans) goes through gp_memory_read(), so
 * where the figures come from is decided in one place: NVML first, the
 * device's CUDA context only when NVML cannot answer. */
struct gp_memory {
    uint64_t total;         /* CPU: RAM, or the cgroup limit when lower; CUDA: device memory */
    uint64_t available;     /* CPU: MemAvailable capped by the cgroup's room; CUDA: free */
    uint64_t physical;      /* CPU: MemTotal; CUDA: total */
    uint64_t cgroup_limit;  /* CPU: tightest cgroup limit, UINT64_MAX if none; CUDA: UINT64_MAX */
    uint64_t context_bytes; /* CUDA: measured cost of a CUDA context here; 0: unmeasured */
    uint64_t used;          /* CUDA: NVML's used (else total - free); CPU: total - available */
    uint64_t reserved;      /* CUDA: reserved by the driver (NVML v2); else 0 */
    uint32_t flags;         /* GPUPROBE_MEMORY_* bits */
    gpuprobe_memory_source source;
    /* CUDA: this process holds a CUDA context on the device, so `available`
     * already excludes its cost and a program in this process needs no
     * other. Always 1 after a read through the context fallback. */
    int context_held;
};
/* flags: 0 or GPUPROBE_DEVICE_MEMORY_NO_CONTEXT. */
gpuprobe_status gp_memory_read(gpuprobe_context *ctx, size_t device,
                               unsigned flags, gp_memory *out);
/* Does this process hold the primary CUDA context of dev? Asked with
 * cuDevicePrimaryCtxGetState, which creates nothing (the test seam: its
 * mask). 1 yes, 0 no, -1 cannot tell. */
int gp_context_held(gpuprobe_context *ctx, const gp_device *dev);
/* The device memory a program's CUDA context costs on dev, counted once: 0
 * for the CPU (GPUPROBE_RESERVE_NONE) and where this process holds a
 * context there already (GPUPROBE_RESERVE_CONTEXT_HELD: the free figure
 * excludes it); else the measured cost, or GPUPROBE_DEFAULT_CONTEXT_RESERVE. */
uint64_t gp_context_overhead(const gp_device *dev, const gp_memory *mem,
                             gpuprobe_reserve_source *source);
/* What one allocation can get on dev once reserve bytes are taken from its
 * available memory: on a GPU, rounded down to GPUPROBE_ALLOC_PAGE and less
 * the allocation allowance (gp_alloc_allowance()); the CPU: all of it. */
uint64_t gp_alloc_room(const gp_device *dev, const gp_memory *mem, uint64_t reserve);
/* The allocation allowance of a GPU with total bytes of memory: total /
 * 1024 rounded up to a page, at least GPUPROBE_ALLOC_ALLOWANCE_MIN. */
uint64_t gp_alloc_allowance(uint64_t total);

/* ==== Floor 5: the matmul backends (cpu_matmul.c, cuda_matmul.c) ==========
 *
 * The job and the table of operations between the protocol and its
 * backends are in matmul_backend.h, which only matmul.c and the backends
 * include. Here: what the context needs of them. */

/* cuda_matmul.c (no_cuda_matmul.c): the context's cuBLAS handles, streams
 * and events; what gpuprobe_context_destroy() calls. NULL is accepted. */
void gp_cuda_blas_release(gpuprobe_context *ctx);

/* ==== Floor 6: the questions (capacity.c, model.c, plan.c, select.c,
 * matmul.c, bandwidth.c, speed.c) =========================================
 *
 * matmul.c's verification and test seam are in matmul_backend.h. */

/* ---- checked arithmetic (model.c, plan.c) ---- */
/* a * b and a + b with a sticky overflow flag: once *ovf is set, the
 * results are meaningless and the caller reports GPUPROBE_ERR_OVERFLOW. */
static inline uint64_t gp_mul(uint64_t a, uint64_t b, int *ovf)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        *ovf = 1;
    return r;
}
static inline uint64_t gp_add(uint64_t a, uint64_t b, int *ovf)
{
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r))
        *ovf = 1;
    return r;
}

/* ---- capacity.c ---- */
/* gpuprobe_device_capacity()'s figures from dev's memory reading mem:
 * the context's reserve (gp_context_overhead()), what one allocation can
 * get after it (gp_alloc_room()), and the largest parameter count;
 * GPUPROBE_ERR_OVERFLOW (cap's bytes written) when that holds more than
 * GPUPROBE_MAX_PARAMS. dtype and workload must have a
 * rule. No message: the callers word their own. */
gpuprobe_status gp_capacity_of(const gp_device *dev, const gp_memory *mem,
                               gpuprobe_dtype dtype, gpuprobe_workload workload,
                               gpuprobe_capacity *cap);

/* ---- model.c ---- */
/* A model as one GPU of a tensor-parallel group of tp holds it (tp = 1: the
 * whole model). */
typedef struct gp_shape {
    int arch;              /* 1: an architecture; 0: a parameter count only */
    uint64_t params;       /* the whole model */
    uint64_t active;       /* the whole model, per token (k experts of E) */
    uint64_t linear;       /* this GPU: projection and expert matrices (quantisable) */
    uint64_t other;        /* this GPU: embedding, head, norms, biases, router */
    uint64_t layers, hidden;
    uint64_t q_dim;        /* this GPU: attention heads x head dim */
    uint64_t kv_dim;       /* this GPU: KV heads x head dim */
    uint64_t inter;        /* this GPU: intermediate size */
    uint64_t vocab;        /* this GPU: vocabulary */
    uint64_t routed;       /* experts per token; 1 when dense */
    uint64_t experts;      /* experts per layer; 1 when dense */
    uint64_t tied;         /* 1: the output head is the embedding matrix */
    uint64_t window;       /* sliding window; 0: none */
} gp_shape;
/* Validate the model and derive its shape on one GPU of tp (tp >= 1).
 * ctx may be NULL (no message). */
gpuprobe_status gp_model_shape(gpuprobe_context *ctx, const gpuprobe_model *m,
                               uint64_t tp, gp_shape *out);

/* ---- plan.c ---- */
/* The model and workload checked as gpuprobe_plan_compute() checks them
 * (the caller's errors, with their message). */
gpuprobe_status gp_plan_check(gpuprobe_context *ctx, const gpuprobe_model *model,
                              const gpuprobe_plan_options *opts);
/* gpuprobe_plan_device()'s figures on dev from its memory reading mem,
 * without the largest context and batch (0) and without touching size. */
gpuprobe_status gp_plan_on(gpuprobe_context *ctx, const gp_device *dev, const gp_memory *mem,
                           const gpuprobe_model *model, const gpuprobe_plan_options *opts,
                           gpuprobe_plan *p);

/* What one forward step of a model reads, for the speed estimate
 * (speed.c): one GPU's share under the workload's GPUS, in bytes. */
typedef struct gp_reads {
    gp_shape s;             /* the share's shape */
    double weights;         /* every weight, with quantisation scales (the plan's) */
    double linear_per_param;/* bytes of one projection or expert weight, with its scale */
    double embedding;       /* the embedding matrix (read whole only as a tied output head) */
    double kv_per_token;    /* the KV cache of one token, all layers */
    uint64_t batch;         /* the workload's batch */
    uint64_t gpus;          /* the workload's tensor-parallel GPUs */
    gpuprobe_dtype weights_dtype;
} gp_reads;
/* The figures above, the model and workload checked as
 * gpuprobe_plan_compute() checks them. */
gpuprobe_status gp_plan_reads(gpuprobe_context *ctx, const gpuprobe_model *model,
                              const gpuprobe_plan_options *opts, gp_reads *out);

/* ---- matmul.c, bandwidth.c: the short measurements the speed estimate
 * makes (the public runs' protocols, their checks and messages) ---- */
/* The median throughput, FLOP/s, of an m x k times k x n matmul in dtype
 * on device: at least 3 timed calls and budget_ms of them, verified on 16
 * samples, no transfers timed; on a CPU with cpu_threads threads (0: the
 * run's default). *threads_used: the run's CPU threads (0 on a GPU). */
gpuprobe_status gp_matmul_flops(gpuprobe_context *ctx, size_t device, gpuprobe_dtype dtype,
                                int64_t m, int64_t n, int64_t k, int64_t budget_ms,
                                int64_t cpu_threads, double *flops, int *threads_used);
/* The median read bandwidth, bytes/s, of device: one read test alone
 * (GPUPROBE_BANDWIDTH_TEST_READ or _READ_STREAMS), ten passes, buffers of
 * buffer_bytes (0: the size rule); on a CPU with cpu_threads threads (0:
 * one per core). *threads_used: the run's CPU threads (0 on a GPU). */
gpuprobe_status gp_bandwidth_read(gpuprobe_context *ctx, size_t device,
                                  gpuprobe_bandwidth_test test, uint64_t buffer_bytes,
                                  int64_t cpu_threads, double *bytes_per_s, int *threads_used);

/* ---- speed.c ---- */
/* The figures a context measured for speed estimates, freed by
 * gpuprobe_context_destroy(). NULL is accepted. */
void gp_speed_release(struct gp_speed_memo *memo);

/* ---- select.c ---- */
/* Parse a device spec. kind: 0 auto, 1 cpu, 2 cuda (any), 3 cuda:N. */
typedef enum gp_spec_kind { GP_SPEC_AUTO = 0, GP_SPEC_CPU, GP_SPEC_CUDA, GP_SPEC_CUDA_N } gp_spec_kind;
gpuprobe_status gp_parse_spec(gpuprobe_context *ctx, const char *spec,
                              gp_spec_kind *kind, int *index);

/* ==== Floor 7: the context (context.c) ==================================
 *
 * gpuprobe_context_destroy() calls the release functions of the floors
 * below (gp_cuda_blas_release, gp_cuda_unload, gp_openblas_release),
 * downward; no other file calls them. */

/* ---- test seams (unit tests only) ---- */
void gp_test_set_cuda(gpuprobe_context *ctx, const gp_fake_cuda *fake);
void gp_test_set_sysroot(gpuprobe_context *ctx, const char *sysroot);
void gp_test_set_cuda_held(gpuprobe_context *ctx, uint64_t held_mask);

#endif
