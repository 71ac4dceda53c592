/*
 * sim.h - internals of the simulated NVIDIA stack, shared by the core
 * (libsimcuda.so: state, configuration, memory, queues, faults, log) and
 * the front ends that carry the real SONAMEs (driver.c, runtime.c,
 * cublas.c, nvml.c). The front ends take their types and function
 * declarations from the toolkit's own headers, so every simulated function
 * has exactly the signature and the (versioned) symbol name a program
 * compiled against those headers looks up.
 *
 * Locking: one process-wide mutex. Every simulated call takes it in
 * sim_begin() and drops it in sim_end(); everything named sim_* below
 * expects it held unless its comment says otherwise. Front ends never call
 * each other's entry points, so the log holds the calls the program made.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef SIMCUDA_SIM_H
#define SIMCUDA_SIM_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <library_types.h>
#include <cublas_api.h>

#include <stddef.h>
#include <stdint.h>

#include "simcuda.h"

#define SIM_EXPORT __attribute__((visibility("default")))

#define SIM_NAME_LEN 96
#define SIM_TEXT_LEN 256 /* error_name, error_text: the longest strings */
#define SIM_MAX_UNITS 64
#define SIM_STACK_MAX 64
#define SIM_MAX_RULES 32
#define SIM_MAX_PROCS 8
#define SIM_PROC_COMPUTE 1
#define SIM_PROC_GRAPHICS 2

/* Device memory is handed out in pages of 2 MiB, as the driver maps it. */
#define SIM_PAGE (UINT64_C(2) << 20)

/* ---- NVML: declared from its documentation (the toolkit has no nvml.h) ---- */

typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_VGPU_ECC_NOT_ENABLED = 22,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_UNKNOWN = 999
};

/* ---- configuration and state ---- */

typedef enum sim_api { SIM_DRV, SIM_RT, SIM_BLAS, SIM_NVML } sim_api;
typedef enum sim_bug { SIM_BUG_NONE = 0, SIM_BUG_ROWMAJOR, SIM_BUG_DROP_LAST_K, SIM_BUG_UNWRITTEN } sim_bug;
typedef enum sim_tag { SIM_TAG_USER = 0, SIM_TAG_WORKSPACE = 1 } sim_tag;

typedef struct sim_unit sim_unit;
typedef struct sim_ctx sim_ctx;
typedef struct sim_stream sim_stream;
typedef struct sim_event sim_event;
typedef struct sim_op sim_op;
typedef struct sim_alloc sim_alloc;
typedef struct sim_blas sim_blas;

/* A device allocation: `dev` is what the program gets, the start of a
 * PROT_NONE mapping (dereferencing it on the host faults, as a device
 * pointer does); the bytes live in `mem`, a private mapping only the
 * simulation touches. Pinned host memory uses `mem` alone. */
struct sim_alloc {
    uintptr_t dev;
    unsigned char *mem;
    size_t size;        /* as requested */
    size_t map_size;    /* of each mapping */
    uint64_t charge;    /* device bytes it takes: whole 2 MiB pages */
    sim_ctx *ctx;       /* NULL: pinned host memory */
    sim_tag tag;
    /* Device: a number no other allocation or write ever had, renewed by
     * every write of its bytes (copy, memset, gemm): equal numbers mean
     * equal bytes (the gemm's memo, below). */
    uint64_t version;
    sim_alloc *next;
};

typedef struct sim_gemm {
    cublasOperation_t ta, tb;
    int m, n, k;
    double alpha, beta;
    uintptr_t a, b, c;
    cudaDataType at, bt, ct;
    int lda, ldb, ldc;
    cublasComputeType_t compute;
    int tf32;           /* inputs rounded to TF32 */
    int round16;        /* FAST_16F (1) / FAST_16BF (2): inputs rounded */
} sim_gemm;

/* cublasSdot: the sum of x[i] y[i] into result, a device float (device
 * pointer mode) or a host one (to_host: host pointer mode). */
typedef struct sim_dot {
    uintptr_t x, y, result;
    int n, incx, incy;
    int to_host;
} sim_dot;

typedef enum sim_op_kind { OP_COPY, OP_MEMSET, OP_GEMM, OP_EVENT, OP_DOT } sim_op_kind;

struct sim_op {
    sim_op_kind kind;
    int fault;          /* raise cudaErrorIllegalAddress when executed */
    double cost_s;      /* simulated device time */
    union {
        struct {
            uintptr_t dst, src;   /* device addresses or host pointers */
            int dst_dev, src_dev; /* 1: device address */
            size_t n;
            unsigned char *snapshot; /* pageable source copied at enqueue */
        } copy;
        struct {
            uintptr_t dst;
            int value;
            size_t n;
        } set;
        sim_gemm gemm;
        sim_dot dot;
        struct {
            sim_event *ev;
            unsigned long seq;
        } event;
    } u;
    sim_op *next;
};

struct sim_stream {
    sim_ctx *ctx;
    unsigned flags;
    sim_op *head, *tail;
    size_t pending;
    sim_stream *next;
};

struct sim_event {
    sim_ctx *ctx;
    unsigned flags;
    unsigned long rec_seq;   /* 0: never recorded */
    unsigned long done_seq;  /* == rec_seq: the latest record completed */
    double time_s;
    sim_event *next;
};

/* The primary context of a unit (the only kind simulated). */
struct sim_ctx {
    sim_unit *unit;
    int active;
    unsigned refs;
    int rt_ref;              /* the runtime holds one of the refs */
    cudaError_t fault;       /* sticky error, cudaSuccess when none */
    sim_stream null_stream;  /* the legacy default stream */
    sim_stream *streams;
    sim_event *events;
    /* The last gemm run here and its operands' versions after it: a gemm
     * equal to it in every parameter, on operands no write has touched
     * since, with beta 0, would compute the same C into the same bytes, so
     * it is not computed again (a benchmark's thousands of identical calls
     * cost no host time; the modelled time is charged all the same). */
    int memo_valid;
    int memo_bug;
    sim_gemm memo;
    uint64_t memo_a, memo_b, memo_c;
    /* The same for the last dot product: its operands' versions and value. */
    int dot_memo_valid, dot_memo_bug;
    sim_dot dot_memo;
    uint64_t dot_memo_x, dot_memo_y;
    float dot_memo_value;
};

struct sim_unit {
    /* configuration */
    char name[SIM_NAME_LEN];
    char uuid[48];           /* "GPU-..." or "MIG-..." */
    unsigned char uuid_bytes[16];
    unsigned pci_domain, pci_bus, pci_dev, pci_fn;
    int cc_major, cc_minor, sms;
    int clock_khz, mem_clock_khz, bus_bits;
    uint64_t total;          /* as CUDA reports it */
    uint64_t free0;          /* free before this process did anything */
    uint64_t reserved;       /* NVML v2: reserved by the driver (not in total) */
    uint64_t ctx_bytes;      /* cost of a context, 0: the fleet's */
    uint64_t alloc_reserve;  /* free memory no allocation can get (the driver's) */
    double tflops, copy_gbps;
    double memory_gbps;      /* device memory: D2D copies, memsets, level-1 routines */
    double pageable_gbps;    /* the host link from or to pageable host memory */
    uint64_t l2_bytes;       /* cudaDevAttrL2CacheSize */
    int parent;              /* -1: a GPU; else the GPU of this MIG instance */
    int nmig;                /* a GPU's MIG instances (MIG mode on when > 0) */
    int mig_capable;         /* the board supports MIG (presets: A100, H100, H200) */
    /* NVML: health and placement, as configured */
    int util_gpu, util_mem;  /* percent */
    int temp_c;
    unsigned power_mw, power_limit_mw;
    int pcie_gen, pcie_width, pcie_max_gen, pcie_max_width;
    int pcie_idle_gen, pcie_idle_width; /* what NVML reports while no work is queued */
    int nvml_denied;         /* the GPU's own queries: NVML_ERROR_NO_PERMISSION */
    struct {
        unsigned pid;
        uint64_t bytes;      /* device memory it uses (counted as used) */
        int type;            /* SIM_PROC_COMPUTE, SIM_PROC_GRAPHICS bits */
        int na;              /* NVML reports its memory as not available */
    } procs[SIM_MAX_PROCS];  /* other processes with a context here */
    int nprocs;
    /* MIG instances: the profile ("1g.18gb"; "" none given), the GPU and
     * compute instance ids, the GPU instance's slices */
    char profile[32];
    int gi, ci, slices;
    /* state */
    sim_ctx ctx;
    uint64_t alloc_bytes;
    size_t nallocs, nworkspaces;
    double clock_s;          /* simulated device time */
    unsigned long gemm_calls; /* gemms enqueued (gemm_ramp_calls) */
    int ordinal;             /* CUDA ordinal; -1 not enumerated */
    unsigned long contexts_created; /* since configuration */
    uint64_t bytes_allocated;       /* device allocations since configuration, summed */
};

typedef struct sim_rule {
    char func[64];
    unsigned long nth, calls;
    int code, from, async;
    int late;   /* the call runs, writing its outputs, then fails */
} sim_rule;

typedef struct sim_config {
    int driver_version;      /* CUDA version the driver supports, 13000 */
    char driver_string[32];  /* "580.65.06" */
    /* When set, the name (cuGetErrorName, cudaGetErrorName,
     * cublasGetStatusName) and the description (cuGetErrorString,
     * cudaGetErrorString, cublasGetStatusString, nvmlErrorString) of
     * every code: the text a library's messages must bound. */
    char error_name[SIM_TEXT_LEN], error_text[SIM_TEXT_LEN];
    int cuinit_error;        /* CUresult cuInit returns; 0: decided by the fleet */
    int nvml_init_error;     /* nvmlReturn_t nvmlInit returns; 0: success */
    uint64_t ctx_bytes;      /* default context cost */
    int context_ms;          /* wall time a context's creation takes, 0 */
    int deferred;
    int gemm_bug;
    int dot_bug;             /* cublasSdot sums only the first half of the products */
    int blas_version;        /* what cublasGetVersion reports; 0: the library's own */
    int gemm_launch_ns;      /* the fixed cost of a gemm, 5000 */
    /* The first gemm_ramp_calls gemms of a device are slower, by a factor
     * falling linearly from 1 + gemm_ramp to 1 (clocks ramping up). */
    int gemm_ramp_calls;
    double gemm_ramp;
    sim_unit units[SIM_MAX_UNITS];
    int nunits;
    sim_rule rules[SIM_MAX_RULES];
    int nrules;
} sim_config;

typedef struct sim_state {
    int configured;
    unsigned gen;            /* bumped by every (re)configuration */
    sim_config cfg;
    /* driver */
    int drv_init_done;
    CUresult drv_init_result;
    int visible[SIM_MAX_UNITS];
    int nvisible;
    /* NVML */
    unsigned nvml_refs;
    /* memory and cuBLAS */
    sim_alloc *allocs;       /* device */
    sim_alloc *pinned;       /* host */
    sim_blas *handles;
    /* faults and log */
    unsigned long fired;
    simcuda_call *log;
    size_t nlog, caplog;
    unsigned long seq;
    int logfd;
    int next_thread;
    unsigned long event_seq;
    uint64_t versions;       /* last sim_alloc.version handed out */
} sim_state;

extern sim_state sim;

/* Per thread: the context stack, the runtime's device and last error. */
typedef struct sim_tls {
    unsigned gen;
    int id;
    sim_ctx *stack[SIM_STACK_MAX];
    int depth;
    int rt_device;
    cudaError_t rt_last;
} sim_tls;
sim_tls *sim_thread(void);

/* ---- entry and exit of every simulated call ---- */

typedef struct sim_call {
    size_t entry;            /* log index, (size_t)-1 when not logged */
    sim_api api;
} sim_call;
/* Lock, configure on first use, log the call. Returns 1 (lock still held)
 * when a failure is injected: *code is the code to return at once; 2 when
 * a late failure is (fail_late): the call runs, and *code is what its end
 * returns instead of its own result; 0 otherwise. */
int sim_begin(sim_call *c, sim_api api, const char *func, int *code);
/* Record the result in the log, unlock, return code. */
int sim_end(sim_call *c, int code);

/* ---- configuration (config.c) ---- */

/* Parse text into cfg (fully reset first). 0, or -1 with err filled. */
int sim_config_parse(const char *text, sim_config *cfg, char *err, size_t errsize);
/* One global line into an existing configuration. */
int sim_config_line(const char *line, sim_config *cfg, char *err, size_t errsize);
int sim_parse_code(const char *text, int *code);
/* The realistic failure code of a function when a rule gives none. */
int sim_default_code(const char *func);

/* ---- names (names.c; tables generated from the toolkit headers) ---- */

const char *sim_cu_name(CUresult r);          /* NULL when unknown */
const char *sim_cu_string(CUresult r);
const char *sim_rt_name(cudaError_t e);       /* NULL when unknown */
const char *sim_rt_string(cudaError_t e);
const char *sim_blas_name(cublasStatus_t s);  /* NULL when unknown */
const char *sim_blas_string(cublasStatus_t s);
const char *sim_nvml_name(nvmlReturn_t r);    /* NULL when unknown */
const char *sim_nvml_string(nvmlReturn_t r);
/* Code of a name of any of the four tables; 0 when found, -1 if not. */
int sim_code_of_name(const char *name, int *code);
/* Sticky (context-poisoning) runtime errors. */
int sim_rt_sticky(cudaError_t e);
cudaError_t sim_rt_from_cu(CUresult r);
CUresult sim_cu_from_rt(cudaError_t e);

/* ---- devices and contexts (core.c) ---- */

CUresult sim_driver_init(void);               /* cuInit's work, once */
sim_unit *sim_unit_of(int ordinal);           /* NULL when not enumerated */
uint64_t sim_ctx_cost(const sim_unit *u);
uint64_t sim_unit_free(const sim_unit *u);    /* as cuMemGetInfo says */
sim_ctx *sim_current(void);                   /* top of the stack, NULL */
int sim_ctx_valid(const void *handle);        /* one of the units' contexts */
CUresult sim_ctx_retain(sim_unit *u);
CUresult sim_ctx_release(sim_unit *u);
void sim_ctx_destroy(sim_ctx *ctx);           /* frees everything in it */
int sim_ctx_ordinal(const sim_ctx *ctx);

/* The context a runtime call works in: the current one (the runtime then
 * takes its own reference on it once), else the primary context of the
 * thread's runtime device, created and made current. */
cudaError_t sim_rt_context(sim_ctx **out);
cudaError_t sim_rt_adopt(sim_ctx *ctx);

/* ---- memory ---- */

cudaError_t sim_dev_alloc(sim_ctx *ctx, size_t size, sim_tag tag, sim_alloc **out);
void sim_dev_free(sim_alloc *a);
/* The device allocation containing [addr, addr + len), or NULL. */
sim_alloc *sim_dev_find(uintptr_t addr, size_t len);
sim_alloc *sim_dev_find_base(uintptr_t addr);
cudaError_t sim_host_alloc(size_t size, void **out);
sim_alloc *sim_host_find(uintptr_t addr, size_t len);
sim_alloc *sim_host_find_base(uintptr_t addr);
void sim_host_free(sim_alloc *a);

/* ---- streams, events and execution ---- */

sim_stream *sim_stream_new(sim_ctx *ctx, unsigned flags);
/* A live stream handle; NULL (the legacy stream) maps to ctx's. */
sim_stream *sim_stream_lookup(const void *handle, sim_ctx *ctx);
void sim_stream_free(sim_stream *s);
sim_event *sim_event_new(sim_ctx *ctx, unsigned flags);
sim_event *sim_event_lookup(const void *handle);
void sim_event_free(sim_event *e);
/* Queue an op (copied) on s; executes at once unless in deferred mode. */
cudaError_t sim_enqueue(sim_stream *s, const sim_op *op);
/* Execute queued work: all of s (upto NULL), or up to and including op. */
void sim_run_stream(sim_stream *s, const sim_op *upto);
void sim_run_ctx(sim_ctx *ctx);
void sim_run_all(void);
/* Run one queued op of s (polling). */
void sim_run_one(sim_stream *s);
/* The op that records e's latest record, or NULL when done/never. */
const sim_op *sim_event_op(const sim_event *e, sim_stream **where);
/* Does an async-fault rule claim this enqueue of func? */
int sim_async_fault(const char *func);
/* Is work queued on any stream of the unit's context (deferred mode)? */
int sim_unit_busy(const sim_unit *u);
/* The host link's rate as it runs, as a fraction of its rate at its
 * maximum generation and width (copies to and from the host scale by it). */
double sim_link_factor(const sim_unit *u);

/* ---- gemm (gemm.c) ---- */

/* Which (A/B, C, compute) combinations cublasGemmEx accepts. */
int sim_gemm_supported(cudaDataType ab, cudaDataType c, cublasComputeType_t ct);
/* Execute on device memory; -1 when an operand is out of its allocation or
 * on another device (the caller raises the sticky fault). */
int sim_gemm_exec(const sim_gemm *g, sim_ctx *ctx, int bug);
size_t sim_type_size(cudaDataType t);
/* Execute a cublasSdot; -1 when an operand (or a device result) is out of
 * its allocation or on another device. */
int sim_dot_exec(const sim_dot *d, sim_ctx *ctx);
float sim_half_to_float(uint16_t h);
uint16_t sim_float_to_half(float f);
float sim_bf16_to_float(uint16_t h);
uint16_t sim_float_to_bf16(float f);
float sim_round_tf32(float f);

/* cuBLAS handles (cublas.c keeps them in sim.handles). */
struct sim_blas {
    sim_ctx *ctx;            /* NULL once its context was destroyed */
    sim_stream *stream;      /* NULL: the legacy stream */
    int stream_set;
    cublasMath_t math;
    cublasPointerMode_t pointer_mode;
    sim_alloc *workspace;
    int version;
    sim_blas *next;
};
/* Called when a context dies: its handles become unusable. */
void sim_blas_orphan(sim_ctx *ctx);

#endif
