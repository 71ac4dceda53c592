/*
 * gpuprobe.h - libgpuprobe public API: what compute is here, and what can it do.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 * Copyright (c) 2026 The libgpuprobe authors
 */

/**
 * @file gpuprobe.h
 * @brief The one public header of libgpuprobe.
 *
 * libgpuprobe answers the first questions of GPU computing from C: which
 * devices exist (the CPU is always one), whether CUDA is usable and, when it
 * is not, why; how much memory each device has and how much is free; which
 * device a program should use; how fast a matrix multiplication runs on it;
 * and how large a model fits in its memory.
 *
 * Conventions that hold for every function:
 *
 * - Every fallible call returns a ::gpuprobe_status. ::GPUPROBE_OK is 0.
 * - When a call that takes a context fails, gpuprobe_last_error() on that
 *   context returns a message saying exactly what failed. The message does
 *   not repeat the status's own text, so that a program can print both as
 *   "<gpuprobe_status_string()>: <message>".
 * - Output pointers are written only on success, unless a function says
 *   otherwise.
 * - `flags` arguments are reserved: they must be 0 unless the function names
 *   flag bits; any other value is ::GPUPROBE_ERR_INVALID_ARGUMENT.
 * - Destroy functions accept NULL.
 * - No call aborts, exits, or prints on its own.
 * - Every message (gpuprobe_last_error(), the CUDA detail, the selection
 *   reason) is one line of printable ASCII: text from outside (the dynamic
 *   loader's errors, driver strings, device names, file contents, the
 *   environment) is quoted into it with every control or non-ASCII byte
 *   shown as '?'. Device names keep their bytes in ::GPUPROBE_ATTR_NAME.
 * - Strings returned as `const char *` are owned by the library. Strings
 *   owned by a context stay valid until the context is destroyed, unless a
 *   function says they last only until the next call on that context.
 *
 * Threads: the library keeps no unsynchronised global state. Separate
 * contexts may be used from separate threads at the same time. One context
 * must not be used by two threads at once (guard it with your own lock).
 * Options objects and matmul results are plain data: any number of threads
 * may read one at once, but writing one needs exclusive access. The
 * process-wide OpenBLAS thread count is changed only for the duration of a
 * CPU matmul that asks for a thread count (GPUPROBE_MATMUL_CPU_THREADS > 0),
 * and restored before it returns. Such runs are serialised process-wide, so
 * two of them never interleave their changes; a run that leaves the count
 * alone takes no lock and may observe another run's temporary count (its
 * result stays correct; GPUPROBE_METRIC_THREADS reports what it used).
 * Stack: no call needs more than 16 KiB of the calling thread's stack.
 *
 * fork(): the library registers pthread_atfork() handlers (at the first
 * CPU matmul that sets a thread count), so a fork() in one thread while
 * another runs such a matmul waits until that run has restored the count;
 * the lock is never inherited held. The child may then use the library
 * with the contexts it creates. CUDA does not survive fork(): when the
 * parent had initialised CUDA (a CUDA status, device count, memory or
 * matmul call in any context), the child must not make CUDA calls, so its
 * contexts should be created with `GPUPROBE_CUDA=off` (or the child should
 * exec() a new program). A context inherited from the parent may be used
 * and destroyed in the child when it made no CUDA call in the parent;
 * otherwise leave it alone (its teardown calls the CUDA driver). OpenBLAS
 * stops its own threads before a fork() and restarts them at the next CPU
 * matmul, in the parent and in the child.
 *
 * Environment variables (read with secure_getenv() when a context is
 * created, so they are ignored in set-user-ID programs). An empty value is
 * the same as not setting the variable (since 1.2; before, an empty
 * `GPUPROBE_DEVICE` meant "auto"):
 *
 * - `GPUPROBE_CUDA`: `0`, `off`, `no`, `false`, `disable` or `disabled`
 *   (in any letter case) turns CUDA off;
 *   the CUDA cause is then ::GPUPROBE_CUDA_DISABLED. `1`, `on`, `yes`,
 *   `true`, `enable` or `enabled` leave it on. Since 1.2 any other value is
 *   an error (before, it meant on): every call that enumerates the devices
 *   (gpuprobe_device_count(), gpuprobe_cuda_status() and every call on a
 *   device) returns ::GPUPROBE_ERR_INVALID_ARGUMENT with a message naming
 *   the variable and its value, so that a typo is never taken for a choice.
 * - `GPUPROBE_CUDA_LIBDIR`: an absolute directory from which the CUDA
 *   runtime and cuBLAS are loaded instead of the system loader path. A
 *   relative path is refused (cause ::GPUPROBE_CUDA_OTHER with a message).
 *   The driver library (`libcuda.so.1`) always comes from the system loader.
 * - `GPUPROBE_DEVICE`: overrides the program's default device spec in
 *   gpuprobe_select() (see there), which returns
 *   ::GPUPROBE_ERR_INVALID_ARGUMENT, naming the variable, when it is not a
 *   device spec.
 * - `GPUPROBE_NVML` (since 1.1): a value that turns CUDA off (above) turns
 *   NVML off instead: `libnvidia-ml.so.1` is never loaded, device memory
 *   is read through a CUDA context (the 1.0 way, see
 *   gpuprobe_device_memory()) and the NVML attributes are
 *   ::GPUPROBE_ERR_UNSUPPORTED. For a driver whose NVML misbehaves, and to
 *   compare the two ways. Its other values are those of `GPUPROBE_CUDA`,
 *   with the same error for any value that is neither on nor off.
 */
#ifndef GPUPROBE_H
#define GPUPROBE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup version Version
 *  @{ */

/** Major version: incremented on an incompatible ABI change. */
#define GPUPROBE_VERSION_MAJOR 1
/** Minor version: incremented when functionality is added compatibly. */
#define GPUPROBE_VERSION_MINOR 2
/** Patch version: incremented for compatible fixes. */
#define GPUPROBE_VERSION_PATCH 0

/** @cond GPUPROBE_INTERNAL */
#define GPUPROBE_STR_(x) #x
#define GPUPROBE_STR(x) GPUPROBE_STR_(x)
/** @endcond */

/** The version as one number: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define GPUPROBE_VERSION_NUMBER                                               \
    (GPUPROBE_VERSION_MAJOR * 10000 + GPUPROBE_VERSION_MINOR * 100 +          \
     GPUPROBE_VERSION_PATCH)

/** The version as a string, "MAJOR.MINOR.PATCH". */
#define GPUPROBE_VERSION_STRING                                               \
    GPUPROBE_STR(GPUPROBE_VERSION_MAJOR)                                      \
    "." GPUPROBE_STR(GPUPROBE_VERSION_MINOR) "." GPUPROBE_STR(                \
        GPUPROBE_VERSION_PATCH)

/** @} */

/** @cond GPUPROBE_INTERNAL */
#if defined(GPUPROBE_STATIC)
#define GPUPROBE_API
#elif defined(GPUPROBE_BUILDING) && defined(__GNUC__)
#define GPUPROBE_API __attribute__((visibility("default")))
#else
#define GPUPROBE_API
#endif
/** @endcond */

/** @addtogroup version
 *  @{ */

/** Run-time version of the library, as #GPUPROBE_VERSION_NUMBER would give. */
GPUPROBE_API unsigned gpuprobe_version(void);

/** Run-time version string of the library, e.g. "1.0.0". Never NULL. */
GPUPROBE_API const char *gpuprobe_version_string(void);

/** @} */

/** @defgroup status Status codes
 *  @{ */

/** The result of every fallible call. Values are fixed and never reused. */
typedef enum gpuprobe_status {
    GPUPROBE_OK = 0,                     /**< Success. */
    GPUPROBE_ERR_INVALID_ARGUMENT = 1,   /**< NULL pointer, bad value, non-zero reserved flags, malformed spec. */
    GPUPROBE_ERR_OUT_OF_MEMORY = 2,      /**< A host allocation failed. */
    GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY = 3, /**< A device allocation failed; nothing stays allocated. */
    GPUPROBE_ERR_NOT_FOUND = 4,          /**< Device index out of range, or no such CUDA device. */
    GPUPROBE_ERR_UNSUPPORTED = 5,        /**< Valid request the device or build cannot do (attribute of another kind, precision). */
    GPUPROBE_ERR_CUDA_UNAVAILABLE = 6,   /**< CUDA is not usable; gpuprobe_cuda_status() says why. */
    GPUPROBE_ERR_CUDA = 7,               /**< A CUDA or cuBLAS call failed; the message names the error. */
    GPUPROBE_ERR_NO_FIT = 8,             /**< No device meets the requirements; the message says which failed where. */
    GPUPROBE_ERR_VERIFY_FAILED = 9,      /**< A matmul result failed verification. */
    GPUPROBE_ERR_OVERFLOW = 10,          /**< A size or count is too large to represent or exceeds a documented limit. */
    GPUPROBE_ERR_SYSTEM = 11,            /**< An operating-system query failed; the message names it. */
    GPUPROBE_ERR_INTERNAL = 12           /**< A bug in libgpuprobe; please report it. */
} gpuprobe_status;

/**
 * A short English description of a status, e.g. "invalid argument".
 * Never NULL: unknown values give "unknown status".
 */
GPUPROBE_API const char *gpuprobe_status_string(gpuprobe_status status);

/**
 * The enumerator's name without its prefix, lower case, e.g.
 * "invalid_argument"; stable, suitable for JSON and logs. Never NULL:
 * unknown values give "unknown".
 */
GPUPROBE_API const char *gpuprobe_status_name(gpuprobe_status status);

/** @} */

/** @defgroup context Context
 *  @{ */

/** Opaque context: caches enumeration, owns strings and the CUDA state. */
typedef struct gpuprobe_context gpuprobe_context;

/**
 * Create a context. Cheap: nothing is enumerated and no library is loaded
 * until a call needs it. The environment variables listed at the top of
 * this header are read here.
 *
 * @param out    receives the new context; set to NULL on failure.
 * @param flags  must be 0.
 * @return ::GPUPROBE_OK, ::GPUPROBE_ERR_INVALID_ARGUMENT,
 *         ::GPUPROBE_ERR_OUT_OF_MEMORY.
 */
GPUPROBE_API gpuprobe_status gpuprobe_context_create(gpuprobe_context **out,
                                                     unsigned flags);

/**
 * Destroy a context and release everything it owns. NULL is accepted.
 *
 * CUDA: the cuBLAS handles, streams, events and buffers of the context's GPU
 * matmuls are destroyed, NVML is shut down, and the reference it took on
 * each device's primary context (by matmuls and by memory queries that
 * fell back to a context) is released; a primary context
 * that nothing else holds is then destroyed and its device memory freed.
 * One thing outlives the gpuprobe context: once a GPU matmul has run on a
 * device, the CUDA runtime (which cuBLAS is built on) holds a reference of
 * its own on that device's primary context, and keeps it, with the
 * context's device memory (typically 300-700 MiB), until the process exits.
 * libgpuprobe does not call cudaDeviceReset() to drop it: that would destroy
 * the context under any other CUDA code in the process. Memory queries
 * create no context when NVML answers; their context fallback goes through
 * the driver API and leaves nothing behind.
 */
GPUPROBE_API void gpuprobe_context_destroy(gpuprobe_context *ctx);

/**
 * The detail message of the last failed call on @p ctx, or "" when the last
 * call succeeded. Never NULL (a NULL context gives a fixed message). Valid
 * until the next call on the context.
 */
GPUPROBE_API const char *gpuprobe_last_error(const gpuprobe_context *ctx);

/** @} */

/** @defgroup cuda CUDA availability
 *  @{ */

/** Why CUDA is or is not usable. Values are fixed and never reused. */
typedef enum gpuprobe_cuda_cause {
    GPUPROBE_CUDA_AVAILABLE = 0,        /**< At least one CUDA device is usable. */
    GPUPROBE_CUDA_NOT_BUILT = 1,        /**< This libgpuprobe was built without CUDA support. */
    GPUPROBE_CUDA_DISABLED = 2,         /**< Turned off by the user (`GPUPROBE_CUDA`). */
    GPUPROBE_CUDA_NO_RUNTIME = 3,       /**< No CUDA runtime library (libcudart.so.N) could be loaded. */
    GPUPROBE_CUDA_NO_DRIVER = 4,        /**< The NVIDIA driver library (libcuda.so.1) is missing. */
    GPUPROBE_CUDA_NO_KERNEL_DRIVER = 5, /**< libcuda.so.1 loads but the kernel driver is not running. */
    GPUPROBE_CUDA_DRIVER_TOO_OLD = 6,   /**< The driver supports an older CUDA than the runtime needs. */
    GPUPROBE_CUDA_NO_DEVICE = 7,        /**< The driver works but finds no CUDA device. */
    GPUPROBE_CUDA_DEVICES_HIDDEN = 8,   /**< Devices exist but `CUDA_VISIBLE_DEVICES` hides them all. */
    GPUPROBE_CUDA_NO_PERMISSION = 9,    /**< No permission to open /dev/nvidia*. */
    GPUPROBE_CUDA_OTHER = 10            /**< Any other failure; the detail names the CUDA error. */
} gpuprobe_cuda_cause;

/**
 * Is CUDA usable, and if not, why? The first call loads the CUDA runtime and
 * driver libraries (never cuBLAS) and enumerates devices; the answer is
 * cached in the context.
 *
 * @param ctx    the context.
 * @param cause  receives the cause; ::GPUPROBE_CUDA_AVAILABLE when usable.
 * @param detail if not NULL, receives a one-line explanation owned by the
 *               context (versions, the CUDA error name, the device count
 *               hidden), e.g. "libcuda.so.1 not found: no NVIDIA driver is
 *               installed". Never NULL. When CUDA devices exist but NVML
 *               cannot be used (since 1.1), it ends with "; NVML is not
 *               usable (<why>): GPU memory is read through a CUDA context".
 * @return ::GPUPROBE_OK whatever the cause (an unusable CUDA is an answer,
 *         not an error), ::GPUPROBE_ERR_INVALID_ARGUMENT, or
 *         ::GPUPROBE_ERR_OUT_OF_MEMORY when the host runs out of memory.
 */
GPUPROBE_API gpuprobe_status gpuprobe_cuda_status(gpuprobe_context *ctx,
                                                  gpuprobe_cuda_cause *cause,
                                                  const char **detail);

/** A short English description of a cause. Never NULL. */
GPUPROBE_API const char *gpuprobe_cuda_cause_string(gpuprobe_cuda_cause cause);

/**
 * A stable lower-case token for a cause, e.g. "no_driver", for JSON and
 * scripts. Never NULL ("unknown" for values out of range).
 */
GPUPROBE_API const char *gpuprobe_cuda_cause_name(gpuprobe_cuda_cause cause);

/**
 * The CUDA version the driver supports, as CUDA encodes it
 * (1000 * major + 10 * minor, e.g. 12040 for 12.4).
 * @return ::GPUPROBE_OK, or ::GPUPROBE_ERR_CUDA_UNAVAILABLE when no driver
 *         library could be loaded (the message says why).
 */
GPUPROBE_API gpuprobe_status gpuprobe_cuda_driver_version(gpuprobe_context *ctx,
                                                          int *version);

/**
 * The version of the CUDA runtime library that was loaded, encoded as for
 * gpuprobe_cuda_driver_version().
 * @return ::GPUPROBE_OK, or ::GPUPROBE_ERR_CUDA_UNAVAILABLE when no runtime
 *         library could be loaded.
 */
GPUPROBE_API gpuprobe_status gpuprobe_cuda_runtime_version(gpuprobe_context *ctx,
                                                           int *version);

/** @} */

/** @defgroup devices Devices
 *  @{ */

/** The kind of a device. */
typedef enum gpuprobe_device_kind {
    GPUPROBE_DEVICE_CPU = 0,  /**< The host CPU (always device 0). */
    GPUPROBE_DEVICE_CUDA = 1  /**< An NVIDIA GPU reached through CUDA. */
} gpuprobe_device_kind;

/** SIMD level of the CPU, highest first-class level found. */
typedef enum gpuprobe_simd {
    GPUPROBE_SIMD_NONE = 0,    /**< Nothing beyond the x86-64 baseline (or not x86). */
    GPUPROBE_SIMD_SSE4_2 = 1,  /**< SSE4.2. */
    GPUPROBE_SIMD_AVX = 2,     /**< AVX. */
    GPUPROBE_SIMD_AVX2_FMA = 3, /**< AVX2 and FMA3. */
    GPUPROBE_SIMD_AVX512 = 4   /**< AVX-512F (with AVX2 and FMA3). */
} gpuprobe_simd;

/**
 * Device attributes, read with gpuprobe_device_get_int() or
 * gpuprobe_device_get_string() according to the type given here. New
 * attributes are added at the end; values never change.
 *
 * The attributes from ::GPUPROBE_ATTR_NVML_INDEX on (1.1) come from NVML
 * (`libnvidia-ml.so.1`, the driver's management library, opened at the
 * first enumeration that finds a CUDA device) and, for NUMA placement,
 * from sysfs (`/sys/bus/pci/devices/<bus id>/`); none of them creates a
 * CUDA context. Those marked "now" are read from NVML at each call; the
 * others when the devices are enumerated. Each answers
 * ::GPUPROBE_ERR_UNSUPPORTED, with a message saying why, when the driver
 * cannot say: NVML missing or turned off (`GPUPROBE_NVML`), a device NVML
 * does not know, a query this GPU or driver lacks or refuses (e.g.
 * utilisation in MIG mode, a GPU's figures from inside a container that
 * holds only one of its MIG instances).
 */
typedef enum gpuprobe_attr {
    GPUPROBE_ATTR_KIND = 0,            /**< int: ::gpuprobe_device_kind. All devices. */
    GPUPROBE_ATTR_NAME = 1,            /**< string: product name (GPU) or CPU model name. All devices. */
    GPUPROBE_ATTR_SPEC = 2,            /**< string: the device spec that selects it, "cpu" or "cuda:N". All devices. */
    GPUPROBE_ATTR_CUDA_INDEX = 3,      /**< int: CUDA ordinal as this process sees it. CUDA only. */
    GPUPROBE_ATTR_UUID = 4,            /**< string: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi -L prints; a MIG instance's own "MIG-..." (since 1.1, where NVML or CUDA_VISIBLE_DEVICES tells an instance). CUDA only. */
    GPUPROBE_ATTR_PCI_BUS_ID = 5,      /**< string: "dddd:bb:dd.f". CUDA only. */
    GPUPROBE_ATTR_CC_MAJOR = 6,        /**< int: compute capability, major. CUDA only. */
    GPUPROBE_ATTR_CC_MINOR = 7,        /**< int: compute capability, minor. CUDA only. */
    GPUPROBE_ATTR_MULTIPROCESSORS = 8, /**< int: streaming multiprocessor count. CUDA only. */
    GPUPROBE_ATTR_CLOCK_KHZ = 9,       /**< int: peak clock in kHz (GPU: SM clock; CPU: max frequency if the OS says). */
    GPUPROBE_ATTR_MEMORY_CLOCK_KHZ = 10, /**< int: peak memory clock in kHz. CUDA only. */
    GPUPROBE_ATTR_MEMORY_BUS_BITS = 11,  /**< int: memory bus width in bits. CUDA only. */
    GPUPROBE_ATTR_TOTAL_MEMORY = 12,   /**< int: total memory in bytes (GPU: device memory; CPU: physical RAM). All devices. */
    GPUPROBE_ATTR_LOGICAL_CORES = 13,  /**< int: logical CPUs online (sysconf). CPU only. */
    GPUPROBE_ATTR_SIMD = 14,           /**< int: ::gpuprobe_simd. CPU only. */
    GPUPROBE_ATTR_BLAS_CORE = 15,      /**< string: OpenBLAS core name, e.g. "Haswell". CPU only. The BLAS attributes load OpenBLAS (libopenblas.so.0) on first request; UNSUPPORTED when it cannot be loaded, OUT_OF_MEMORY when its thread pool (a 128 MiB buffer and a stack per thread) would not fit under RLIMIT_AS or RLIMIT_DATA. */
    GPUPROBE_ATTR_BLAS_THREADS = 16,   /**< int: OpenBLAS thread count now. CPU only. */
    GPUPROBE_ATTR_BLAS_CONFIG = 17,    /**< string: OpenBLAS build configuration. CPU only. */
    /* Since 1.1: placement and health, through NVML and sysfs (see below). CUDA only. */
    GPUPROBE_ATTR_NVML_INDEX = 18,     /**< int: the GPU's index as nvidia-smi and NVML number GPUs (by PCI bus id), which differs from the CUDA ordinal under the default CUDA_DEVICE_ORDER=FASTEST_FIRST. A MIG instance: its GPU's. */
    GPUPROBE_ATTR_MIG_MODE = 19,       /**< int: the GPU's current MIG mode, 1 enabled, 0 disabled (a MIG instance: 1). UNSUPPORTED on GPUs without MIG. */
    GPUPROBE_ATTR_MIG_INSTANCE = 20,   /**< int: 1 when the device is a MIG instance (a slice of a GPU in MIG mode, named in CUDA_VISIBLE_DEVICES by its MIG- UUID), 0 when it is a whole GPU. */
    GPUPROBE_ATTR_MIG_INDEX = 21,      /**< int: a MIG instance's index among its GPU's instances (nvidia-smi's "MIG dev"). MIG instances only. */
    GPUPROBE_ATTR_MIG_PARENT_UUID = 22, /**< string: a MIG instance's GPU, "GPU-...". MIG instances only. */
    GPUPROBE_ATTR_MIG_COUNT = 23,      /**< int: the MIG instances of the GPU (a MIG instance: of its GPU); 0 with MIG disabled. */
    GPUPROBE_ATTR_GPU_UTILIZATION = 24, /**< int, now: percent of the last sample period in which a kernel ran (NVML's "GPU utilisation"). UNSUPPORTED in MIG mode. */
    GPUPROBE_ATTR_MEMORY_UTILIZATION = 25, /**< int, now: percent of the last sample period in which device memory was read or written. UNSUPPORTED in MIG mode. */
    GPUPROBE_ATTR_TEMPERATURE_C = 26,  /**< int, now: GPU temperature in degrees Celsius (a MIG instance: its GPU's). */
    GPUPROBE_ATTR_POWER_MW = 27,       /**< int, now: power draw in milliwatts (a MIG instance: its GPU's). */
    GPUPROBE_ATTR_POWER_LIMIT_MW = 28, /**< int: the enforced power limit in milliwatts (a MIG instance: its GPU's). */
    GPUPROBE_ATTR_COMPUTE_PROCESSES = 29, /**< int, now: processes with a CUDA context on the device (a MIG instance: on the instance), this one included when it holds one. A count only: inside a container's PID namespace the process IDs NVML gives are not the container's. */
    GPUPROBE_ATTR_NUMA_NODE = 30,      /**< int: the NUMA node the GPU is attached to (sysfs numa_node); UNSUPPORTED when the platform does not say (-1 there). */
    GPUPROBE_ATTR_LOCAL_CPUS = 31,     /**< string: the CPUs closest to the GPU as a list, e.g. "0-31,64-95" (sysfs local_cpulist). */
    GPUPROBE_ATTR_PCIE_GEN = 32,       /**< int, now: current PCIe link generation (it drops at idle to save power; a MIG instance: its GPU's). */
    GPUPROBE_ATTR_PCIE_WIDTH = 33,     /**< int, now: current PCIe link width (lanes). */
    GPUPROBE_ATTR_PCIE_MAX_GEN = 34,   /**< int: the highest PCIe generation the GPU and the system support together. */
    GPUPROBE_ATTR_PCIE_MAX_WIDTH = 35  /**< int: the widest PCIe link the GPU and the system support together. */
} gpuprobe_attr;

/**
 * Number of devices: 1 (the CPU) plus every usable CUDA device. Device 0 is
 * always the CPU; device i + 1 is CUDA ordinal i. The first call enumerates
 * (loading the CUDA runtime and driver and, when there are CUDA devices,
 * NVML, which finds each of them by UUID; never cuBLAS or OpenBLAS, and no
 * CUDA context is created); later calls use the cached list.
 * @return ::GPUPROBE_OK, ::GPUPROBE_ERR_INVALID_ARGUMENT or
 *         ::GPUPROBE_ERR_OUT_OF_MEMORY.
 */
GPUPROBE_API gpuprobe_status gpuprobe_device_count(gpuprobe_context *ctx,
                                                   size_t *count);

/**
 * Read an integer attribute.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_NOT_FOUND for a device index out of
 *         range; ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL pointers, an
 *         unknown attribute or a string attribute; ::GPUPROBE_ERR_UNSUPPORTED
 *         when the attribute does not apply to this kind of device or is not
 *         known on this system.
 */
GPUPROBE_API gpuprobe_status gpuprobe_device_get_int(gpuprobe_context *ctx,
                                                     size_t device,
                                                     gpuprobe_attr attr,
                                                     int64_t *value);

/**
 * Read a string attribute. The string is owned by the context and stays
 * valid until the context is destroyed. Errors as for
 * gpuprobe_device_get_int().
 */
GPUPROBE_API gpuprobe_status gpuprobe_device_get_string(gpuprobe_context *ctx,
                                                        size_t device,
                                                        gpuprobe_attr attr,
                                                        const char **value);

/** @} */

/** @defgroup memory Memory
 *  @{ */

/** Bits of gpuprobe_memory_info::flags. */
#define GPUPROBE_MEMORY_CGROUP_LIMITED 0x1u  /**< Host: a cgroup limit lowered total or available. */
#define GPUPROBE_MEMORY_CREATED_CONTEXT 0x2u /**< CUDA: this query created a CUDA context on the device (the context fallback). */
#define GPUPROBE_MEMORY_CONTEXT_MEASURED 0x4u /**< CUDA: context_bytes was measured (via NVML), not assumed. */

/** Where gpuprobe_memory_info's figures come from (since 1.1). */
typedef enum gpuprobe_memory_source {
    GPUPROBE_MEMORY_SOURCE_HOST = 0,        /**< The CPU: /proc/meminfo and the cgroup limits. */
    GPUPROBE_MEMORY_SOURCE_NVML = 1,        /**< NVML (nvmlDeviceGetMemoryInfo_v2, else the first version): no CUDA context was involved. */
    GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT = 2 /**< cuMemGetInfo inside the device's primary CUDA context: NVML could not answer (the CUDA detail of gpuprobe_cuda_status() says why when NVML is missing). */
} gpuprobe_memory_source;

/**
 * A memory snapshot. Size-prefixed: set `size` (use
 * #GPUPROBE_MEMORY_INFO_INIT) so that fields added later are never written
 * past the end of an older caller's struct. 1.1 appended the fields from
 * `used_bytes` on; a 1.0 caller's struct ends at `flags` and gets the 1.0
 * fields only.
 */
typedef struct gpuprobe_memory_info {
    size_t size;               /**< sizeof(gpuprobe_memory_info), set by the caller. */
    uint64_t total_bytes;      /**< Host: physical RAM, or the cgroup limit when lower. CUDA: device memory, as cuDeviceTotalMem counts it (NVML's total less the memory the driver reserves). */
    uint64_t available_bytes;  /**< Host: MemAvailable, capped by the cgroup's remaining room. CUDA: free device memory. */
    uint64_t physical_bytes;   /**< Host: MemTotal. CUDA: same as total_bytes. */
    uint64_t cgroup_limit_bytes; /**< Host: the tightest cgroup memory limit, UINT64_MAX if none. CUDA: UINT64_MAX. */
    uint64_t context_bytes;    /**< CUDA: device memory taken by the CUDA context itself, when measured; else 0. */
    uint32_t flags;            /**< GPUPROBE_MEMORY_* bits. */
    /* since 1.1 */
    uint64_t used_bytes;       /**< CUDA: used device memory, every process's (NVML's figure; the context fallback: total - free). Host: total_bytes - available_bytes. */
    uint64_t reserved_bytes;   /**< CUDA: memory the driver reserves for itself, outside total_bytes (NVML version 2); 0 when the driver does not say. Host: 0. */
    uint32_t source;           /**< ::gpuprobe_memory_source. */
    uint32_t context_held;     /**< CUDA: 1 when this process holds the device's primary CUDA context (cuDevicePrimaryCtxGetState, which creates nothing): the free figure then already excludes its cost. Host: 0. */
} gpuprobe_memory_info;

/** Initialiser for ::gpuprobe_memory_info. */
#define GPUPROBE_MEMORY_INFO_INIT                                             \
    {sizeof(gpuprobe_memory_info), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

/**
 * gpuprobe_device_memory() flag (since 1.1): never create a CUDA context.
 * When NVML cannot answer for the device, the call fails with
 * ::GPUPROBE_ERR_UNSUPPORTED instead of falling back to a context.
 */
#define GPUPROBE_DEVICE_MEMORY_NO_CONTEXT 0x1u

/**
 * Query the memory of a device.
 *
 * For the CPU: reads /proc/meminfo and honours cgroup v2 (`memory.max`) and
 * v1 (`memory.limit_in_bytes`) limits of the calling process and of every
 * cgroup above it. These are the host's figures: the process's own limits
 * (RLIMIT_AS, RLIMIT_DATA) are not counted here, but gpuprobe_matmul_run()
 * checks them.
 *
 * For a CUDA device (since 1.1): total, free, used and reserved memory from
 * NVML, which reads the driver's accounting and creates no CUDA context
 * (`source` is #GPUPROBE_MEMORY_SOURCE_NVML). The device is found in NVML by
 * its UUID (a MIG instance by its own, so an instance reports its own
 * memory, never its GPU's), by PCI bus id only for a whole GPU. The free
 * figure is the device's: every process's contexts and allocations
 * excluded, this one's too when it holds a context there (`context_held`;
 * gpuprobe_device_capacity() then reserves nothing more for one).
 *
 * The context fallback, only when NVML cannot answer for the device (not
 * installed, turned off with `GPUPROBE_NVML`, the device unknown to it, its
 * query failing): free memory is read with cuMemGetInfo inside the
 * device's primary context, which this creates when none exists (tens to
 * hundreds of MiB of device memory, released when the gpuprobe context is
 * destroyed, see gpuprobe_context_destroy()) and then sets
 * #GPUPROBE_MEMORY_CREATED_CONTEXT; `source` is
 * #GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT. When NVML is loaded but failed this
 * once, it measures the context's own cost into `context_bytes` (later
 * queries on the same gpuprobe context report the same measured figure).
 * The query leaves the calling thread's current CUDA device and context as
 * they were. Free memory read so already excludes the context's cost. Pass
 * #GPUPROBE_DEVICE_MEMORY_NO_CONTEXT to forbid the fallback.
 *
 * Free memory is never reported above the total (a driver that says
 * otherwise gets the total).
 *
 * Version 1.0 always read a GPU's free memory through a context (every
 * query created one); a 1.0 caller now gets NVML's figures in the same
 * fields, and the flags say no context was created.
 *
 * @param ctx    the context.
 * @param device the device index (see gpuprobe_device_count()).
 * @param info   caller's struct, with `info->size` set; fields beyond
 *               `info->size` are not written. A size smaller than the end
 *               of the 1.0 struct's last member (`flags`) is
 *               ::GPUPROBE_ERR_INVALID_ARGUMENT, and nothing is written.
 * @param flags  0 or #GPUPROBE_DEVICE_MEMORY_NO_CONTEXT (no effect on the
 *               CPU); any other bit is ::GPUPROBE_ERR_INVALID_ARGUMENT.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT;
 *         ::GPUPROBE_ERR_NOT_FOUND for an index out of range;
 *         ::GPUPROBE_ERR_SYSTEM when /proc/meminfo cannot be read or parsed;
 *         ::GPUPROBE_ERR_OUT_OF_MEMORY when the host is out of memory;
 *         ::GPUPROBE_ERR_UNSUPPORTED when NVML cannot answer and
 *         #GPUPROBE_DEVICE_MEMORY_NO_CONTEXT forbids the fallback (the
 *         message says why NVML could not);
 *         ::GPUPROBE_ERR_CUDA_UNAVAILABLE; ::GPUPROBE_ERR_CUDA;
 *         ::GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY when the CUDA context cannot
 *         be created for lack of device memory.
 */
GPUPROBE_API gpuprobe_status gpuprobe_device_memory(gpuprobe_context *ctx,
                                                    size_t device,
                                                    gpuprobe_memory_info *info,
                                                    unsigned flags);

/** @} */

/** @defgroup capacity Capacity estimation
 *  @{ */

/**
 * Numeric types. Storage size per element: fp64 8, fp32 4, tf32 4 (stored
 * as fp32; a matmul compute mode), fp16 2, bf16 2, fp8 1, int8 1, int4 0.5.
 */
typedef enum gpuprobe_dtype {
    GPUPROBE_DTYPE_FP32 = 0, /**< IEEE binary32. */
    GPUPROBE_DTYPE_FP64 = 1, /**< IEEE binary64. */
    GPUPROBE_DTYPE_TF32 = 2, /**< fp32 storage, TF32 tensor-core compute (matmul only). */
    GPUPROBE_DTYPE_FP16 = 3, /**< IEEE binary16. */
    GPUPROBE_DTYPE_BF16 = 4, /**< bfloat16. */
    GPUPROBE_DTYPE_FP8 = 5,  /**< 8-bit float (capacity only). */
    GPUPROBE_DTYPE_INT8 = 6, /**< 8-bit integer (capacity only). */
    GPUPROBE_DTYPE_INT4 = 7  /**< 4-bit integer, two per byte (capacity only). */
} gpuprobe_dtype;

/** The lower-case name of a dtype ("fp16"), or "unknown". Never NULL. */
GPUPROBE_API const char *gpuprobe_dtype_name(gpuprobe_dtype dtype);

/**
 * Parse a dtype name as gpuprobe_dtype_name() writes it.
 * @return ::GPUPROBE_OK or ::GPUPROBE_ERR_INVALID_ARGUMENT.
 */
GPUPROBE_API gpuprobe_status gpuprobe_dtype_parse(const char *name,
                                                  gpuprobe_dtype *dtype);

/**
 * What the memory is for. The rules (bytes per parameter, b = storage size
 * of the dtype):
 *
 * - ::GPUPROBE_WORKLOAD_WEIGHTS: b. The lesson's rule of thumb
 *   ("fp16 = 2 bytes per parameter").
 * - ::GPUPROBE_WORKLOAD_INFERENCE: 1.2 x b, i.e. weights plus ~20% for
 *   activations and KV cache (EleutherAI, "Transformer Math 101", 2023).
 * - ::GPUPROBE_WORKLOAD_TRAINING: AdamW training before activations (same
 *   source): fp16/bf16 mixed precision 16 bytes (2 weights + 2 gradients +
 *   4 fp32 master weights + 8 fp32 Adam moments); fp32 16 (4 x 4); fp64 32.
 *   Not defined for tf32, fp8, int8, int4 (::GPUPROBE_ERR_UNSUPPORTED).
 *   This is the sum of all stages, larger than the max-of-stages figure of
 *   Hugging Face accelerate's estimator.
 *
 * Byte counts are rounded up to whole bytes; all arithmetic is exact 64-bit
 * integer arithmetic. Precisely, for N parameters: weights
 * ceil(N x b) (int4: ceil(N / 2)); inference ceil(6 x weights / 5), the
 * weights figure being rounded first; training N x 16 (fp64: N x 32).
 * tf32 counts as fp32 (4 bytes) for weights and inference.
 */
typedef enum gpuprobe_workload {
    GPUPROBE_WORKLOAD_WEIGHTS = 0,   /**< Weights only. */
    GPUPROBE_WORKLOAD_INFERENCE = 1, /**< Weights x 1.2. */
    GPUPROBE_WORKLOAD_TRAINING = 2   /**< Mixed-precision AdamW, 16 B/param before activations. */
} gpuprobe_workload;

/** The lower-case name of a workload ("weights", "inference", "training"), or "unknown". */
GPUPROBE_API const char *gpuprobe_workload_name(gpuprobe_workload workload);

/** Largest parameter count the capacity calls accept or return: 10^15. */
#define GPUPROBE_MAX_PARAMS UINT64_C(1000000000000000)

/**
 * Bytes needed for @p params parameters.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_OVERFLOW when params exceeds
 *         #GPUPROBE_MAX_PARAMS; ::GPUPROBE_ERR_INVALID_ARGUMENT for an
 *         unknown dtype or workload or NULL @p bytes;
 *         ::GPUPROBE_ERR_UNSUPPORTED for a combination with no rule.
 */
GPUPROBE_API gpuprobe_status gpuprobe_capacity_bytes(uint64_t params,
                                                     gpuprobe_dtype dtype,
                                                     gpuprobe_workload workload,
                                                     uint64_t *bytes);

/**
 * The largest parameter count whose gpuprobe_capacity_bytes() is <= @p bytes.
 * Exact: capacity_bytes(result) <= bytes < capacity_bytes(result + 1).
 * @return as gpuprobe_capacity_bytes(); ::GPUPROBE_ERR_OVERFLOW when the
 *         answer would exceed #GPUPROBE_MAX_PARAMS.
 */
GPUPROBE_API gpuprobe_status gpuprobe_capacity_params(uint64_t bytes,
                                                      gpuprobe_dtype dtype,
                                                      gpuprobe_workload workload,
                                                      uint64_t *params);

/**
 * Where gpuprobe_capacity::reserve_bytes came from: the cost of the CUDA
 * context a program needs on the device, counted once, and only where this
 * process does not hold one there already.
 */
typedef enum gpuprobe_reserve_source {
    GPUPROBE_RESERVE_NONE = 0,     /**< No reserve (the CPU). */
    GPUPROBE_RESERVE_MEASURED = 1, /**< The CUDA context cost measured on this device. */
    GPUPROBE_RESERVE_DEFAULT = 2,  /**< #GPUPROBE_DEFAULT_CONTEXT_RESERVE, nothing measured. */
    GPUPROBE_RESERVE_CONTEXT_HELD = 3 /**< Nothing reserved (since 1.1): this process already holds a CUDA context on the device, and the free figure already excludes its cost. */
} gpuprobe_reserve_source;

/**
 * Device memory set aside for a CUDA context when its cost cannot be
 * measured: 512 MiB (a context costs ~300-700 MiB depending on lazy or
 * eager module loading).
 */
#define GPUPROBE_DEFAULT_CONTEXT_RESERVE (UINT64_C(512) << 20)

/**
 * A capacity estimate against a live device. Size-prefixed; initialise with
 * #GPUPROBE_CAPACITY_INIT.
 */
typedef struct gpuprobe_capacity {
    size_t size;             /**< sizeof(gpuprobe_capacity), set by the caller. */
    uint64_t total_bytes;    /**< Device total memory (CPU: total RAM, cgroup-aware). */
    uint64_t free_bytes;     /**< Free memory now (CPU: available RAM, cgroup-aware). */
    uint64_t reserve_bytes;  /**< Subtracted for a CUDA context: 0 for the CPU, and where this process holds one already. */
    uint64_t usable_bytes;   /**< free_bytes - reserve_bytes, never below 0. */
    uint64_t max_params;     /**< Largest parameter count that fits usable_bytes. */
    uint32_t reserve_source; /**< ::gpuprobe_reserve_source. */
} gpuprobe_capacity;

/** Initialiser for ::gpuprobe_capacity. */
#define GPUPROBE_CAPACITY_INIT {sizeof(gpuprobe_capacity), 0, 0, 0, 0, 0, 0}

/**
 * How many parameters of @p dtype fit on @p device for @p workload, with the
 * numbers used: usable = free - reserve. For the CPU, usable = available RAM
 * (cgroup-aware), nothing reserved. For a GPU, the reserve is the cost of
 * the CUDA context a program needs there, counted once:
 *
 * - nothing (#GPUPROBE_RESERVE_CONTEXT_HELD) when this process holds a CUDA
 *   context on the device: the free figure already excludes its cost (what
 *   this process can still allocate there).
 * - otherwise (the usual case: memory is read through NVML, without a
 *   context, see gpuprobe_device_memory()) the measured context cost when
 *   known (#GPUPROBE_RESERVE_MEASURED), else
 *   #GPUPROBE_DEFAULT_CONTEXT_RESERVE (#GPUPROBE_RESERVE_DEFAULT).
 *
 * Neither creates a context when NVML answers; without NVML the memory
 * query's context fallback applies, and its context is then held.
 *
 * Version 1.0 subtracted a reserve also from free memory read inside the
 * context, so it counted the context twice and predicted 3-7% less than
 * really allocates (more on small cards).
 *
 * @param ctx   the context.
 * @param device the device index (see gpuprobe_device_count()).
 * @param dtype the numeric type of the parameters.
 * @param workload what the memory is for (see ::gpuprobe_workload).
 * @param out   caller's struct with `out->size` set (#GPUPROBE_CAPACITY_INIT);
 *              a size smaller than the 1.0 struct is
 *              ::GPUPROBE_ERR_INVALID_ARGUMENT; fields beyond `out->size` are
 *              never written; written only on success.
 * @param flags must be 0.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT;
 *         ::GPUPROBE_ERR_UNSUPPORTED for a dtype/workload pair with no rule;
 *         ::GPUPROBE_ERR_NOT_FOUND; ::GPUPROBE_ERR_OVERFLOW when the usable
 *         memory holds more than #GPUPROBE_MAX_PARAMS; the errors of
 *         gpuprobe_device_memory().
 */
GPUPROBE_API gpuprobe_status gpuprobe_device_capacity(gpuprobe_context *ctx,
                                                      size_t device,
                                                      gpuprobe_dtype dtype,
                                                      gpuprobe_workload workload,
                                                      unsigned flags,
                                                      gpuprobe_capacity *out);

/** @} */

/** @defgroup plan Will this model fit? Capacity planning (1.1)
 *
 * The lesson's rule (fp16 = 2 bytes per parameter) answers "how many
 * parameters fit"; a plan answers "will *this* model run *here*, with this
 * context length and batch": the bytes of the weights, the KV cache, the
 * activations, the runtime overhead and a safety margin, against each
 * device, with the largest context and batch that fit and the fewest GPUs
 * that hold the model with tensor parallelism.
 *
 * A model (::gpuprobe_model) is either a parameter count or an
 * architecture (layers, sizes, heads, experts; what a Hugging Face
 * `config.json` says). The workload (::gpuprobe_plan_options) says how it
 * runs: dtypes, context, batch, inference or training. Both are opaque
 * objects set by key, with queryable bounds, like ::gpuprobe_matmul_options.
 *
 * gpuprobe_plan_compute() and gpuprobe_plan_largest() are pure arithmetic:
 * they look at no device, need no context (@p ctx may be NULL; pass one to
 * get a message on failure) and always give the same figures.
 * gpuprobe_plan_device() and gpuprobe_plan_gpus() hold the plan against the
 * devices' memory.
 *
 * All arithmetic is exact unsigned 64-bit integer arithmetic; a figure that
 * does not fit 64 bits, or a parameter count above #GPUPROBE_MAX_PARAMS, is
 * ::GPUPROBE_ERR_OVERFLOW, never a wrapped number. The formulas, with their
 * sources, are listed below and in docs/capacity.md. Notation: L layers, h
 * hidden size, H attention heads, K KV heads, d head dimension, I
 * intermediate size (per expert), V vocabulary, E experts (1 when dense),
 * k experts per token (1 when dense), t tensor-parallel GPUs.
 *
 * **Parameters** (gated MLP and RMSNorm, as Llama, Mistral, Mixtral and
 * Qwen2 have): per layer the q, k, v, o projections h(2Hd + 2Kd), the
 * biases of q, k, v when the model has them (Hd + 2Kd), E experts of
 * 3hI each, a router hE when E > 1, two norms 2h; plus the embedding Vh,
 * the output head Vh unless tied, the final norm h. Active parameters (per
 * token) count k experts instead of E. Llama-3.1-8B gives 8,030,261,248.
 *
 * **Weights**: parameters x bytes of the weights dtype (fp32 4, fp16/bf16 2,
 * fp8/int8 1, int4 0.5, rounded up). Quantised dtypes (fp8, int8, int4)
 * apply to the projection and expert matrices only, as GPTQ, AWQ and
 * bitsandbytes quantise them, with one fp16 scale per
 * #GPUPROBE_PLAN_QUANT_GROUP weights (default 128); embeddings, output head,
 * norms, biases and router stay in bf16. A model given by its parameter
 * count is quantised whole.
 *
 * **KV cache**: per token 2 x L x K x d x bytes of the KV dtype (Llama-3.1-8B
 * in fp16: 2 x 32 x 8 x 128 x 2 = 131,072 B, as vLLM sizes its cache);
 * times the batch and the context, the context capped by the sliding window
 * when the model has one.
 *
 * **Inference activations** (the transient peak of one layer, with fused
 * attention that keeps no context x context score matrix, as FlashAttention
 * and PyTorch's scaled_dot_product_attention): c = batch x tokens per
 * forward pass (#GPUPROBE_PLAN_PREFILL_CHUNK, or the whole context) tokens
 * of 2h (the residual stream and its normalised copy) plus the larger of
 * the attention block's 4Hd + 2Kd (q, its rotary copies, the attention
 * output) and the MLP's 3kI (gate, up and their product), in the compute
 * dtype (fp32 or fp64 weights compute in their own dtype, every other
 * dtype in 16 bits); plus the fp32 logits of the last token of each
 * sequence (batch x V x 4).
 *
 * **Training**: AdamW mixed precision, 16 bytes per parameter before
 * activations: fp16/bf16 weights 2 + gradients 2 + fp32 master weights 4 +
 * Adam moments 8; fp32 4 + 4 + 8; fp64 twice fp32 (EleutherAI,
 * "Transformer Math 101", as gpuprobe_capacity_bytes()). Activations kept
 * for the backward pass, per token (batch x context tokens) and layer:
 * 4h + 2Hd + 2Kd + 3kI values in 16 bits, which is Korthikanti et al.'s
 * 34 x h bytes ("Reducing Activation Recomputation in Large Transformer
 * Models", 2022) for fused attention, generalised to GQA and gated MLPs
 * (Llama-3.1-8B gives exactly 34h); plus the logits (tokens x V) in the
 * compute dtype and in fp32 for the loss. With activation checkpointing
 * only each layer's input (h per token and layer) is kept, plus one
 * layer's activations while it is recomputed.
 *
 * **A model given only by its parameter count**: inference adds 20% of the
 * weights for KV cache and activations together (the 1.0 rule,
 * ::GPUPROBE_WORKLOAD_INFERENCE); training counts no activations. Such
 * plans carry #GPUPROBE_PLAN_BY_PARAMS.
 *
 * **Runtime overhead**: the CUDA context, counted once per GPU and only
 * where this process does not hold one (see ::gpuprobe_reserve_source):
 * the measured cost, else #GPUPROBE_DEFAULT_CONTEXT_RESERVE; 0 on the CPU.
 * **Safety margin**: #GPUPROBE_PLAN_MARGIN per device (default 1 GiB, the
 * margin llama.cpp's fit keeps).
 *
 * **Tensor parallelism** over t GPUs (#GPUPROBE_PLAN_GPUS) splits the heads
 * (t must divide H, and K must divide by t or t by K, KV heads then being
 * replicated, as vLLM requires), the intermediate size and the vocabulary,
 * so each GPU holds its share of the weights, KV cache and activations;
 * the residual stream, the norms and the router are whole on every GPU, and
 * so are the overhead and the margin.
 *  @{ */

/** Opaque model description. */
typedef struct gpuprobe_model gpuprobe_model;

/**
 * Model parameters (the names in parentheses are the Hugging Face
 * `config.json` keys). 0 means "not given". A model is either
 * #GPUPROBE_MODEL_PARAMS or an architecture: at least LAYERS, HIDDEN,
 * HEADS, INTERMEDIATE and VOCAB. Query the accepted ranges with
 * gpuprobe_model_param_bounds(). Values are fixed and never reused.
 */
typedef enum gpuprobe_model_param {
    GPUPROBE_MODEL_PARAMS = 0,       /**< Total parameter count, for a model known only by its size (at most #GPUPROBE_MAX_PARAMS). */
    GPUPROBE_MODEL_LAYERS = 1,       /**< Transformer layers (num_hidden_layers). */
    GPUPROBE_MODEL_HIDDEN = 2,       /**< Hidden size (hidden_size). */
    GPUPROBE_MODEL_HEADS = 3,        /**< Attention heads (num_attention_heads). */
    GPUPROBE_MODEL_KV_HEADS = 4,     /**< Key/value heads (num_key_value_heads): fewer than HEADS for GQA, 1 for MQA; not given: HEADS (MHA). Must divide HEADS. */
    GPUPROBE_MODEL_HEAD_DIM = 5,     /**< Head dimension (head_dim); not given: HIDDEN / HEADS, which must then divide. */
    GPUPROBE_MODEL_INTERMEDIATE = 6, /**< MLP intermediate size, per expert (intermediate_size). */
    GPUPROBE_MODEL_VOCAB = 7,        /**< Vocabulary size (vocab_size). */
    GPUPROBE_MODEL_TIED_EMBEDDINGS = 8, /**< 1: the output head shares the embedding matrix (tie_word_embeddings). */
    GPUPROBE_MODEL_EXPERTS = 9,      /**< Mixture of experts: experts per layer (num_local_experts); 0 or 1: dense. */
    GPUPROBE_MODEL_EXPERTS_PER_TOKEN = 10, /**< Experts each token is routed to (num_experts_per_tok); needed when EXPERTS > 1. */
    GPUPROBE_MODEL_SLIDING_WINDOW = 11, /**< Attention window in tokens, when it limits the KV cache (sliding_window); 0: none. */
    GPUPROBE_MODEL_QKV_BIAS = 12     /**< 1: the q, k and v projections have biases (Qwen2). */
} gpuprobe_model_param;

/**
 * Create an empty model.
 * @return ::GPUPROBE_OK, ::GPUPROBE_ERR_INVALID_ARGUMENT (NULL @p out) or
 *         ::GPUPROBE_ERR_OUT_OF_MEMORY; @p out is NULL on failure.
 */
GPUPROBE_API gpuprobe_status gpuprobe_model_create(gpuprobe_model **out);

/** Destroy a model. NULL is accepted. */
GPUPROBE_API void gpuprobe_model_destroy(gpuprobe_model *model);

/**
 * Set a model parameter (0 clears it).
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for a NULL model,
 *         an unknown parameter or a value out of bounds (nothing is
 *         changed).
 */
GPUPROBE_API gpuprobe_status gpuprobe_model_set(gpuprobe_model *model,
                                                gpuprobe_model_param param,
                                                int64_t value);

/**
 * Read a model parameter: the value set, or 0 when not given, except that
 * KV_HEADS reads as HEADS and HEAD_DIM as HIDDEN / HEADS (when that
 * divides) when not given.
 * @return ::GPUPROBE_OK or ::GPUPROBE_ERR_INVALID_ARGUMENT.
 */
GPUPROBE_API gpuprobe_status gpuprobe_model_get(const gpuprobe_model *model,
                                                gpuprobe_model_param param,
                                                int64_t *value);

/**
 * The inclusive range a model parameter accepts (0, "not given", is always
 * accepted).
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for an unknown
 *         parameter or NULL @p lower or @p upper (nothing is written).
 */
GPUPROBE_API gpuprobe_status
gpuprobe_model_param_bounds(gpuprobe_model_param param, int64_t *lower,
                            int64_t *upper);

/** Opaque workload: how a model runs (zstd-style enum-keyed parameters). */
typedef struct gpuprobe_plan_options gpuprobe_plan_options;

/**
 * Workload parameters. Query the accepted range with
 * gpuprobe_plan_param_bounds(). Values are fixed and never reused.
 */
typedef enum gpuprobe_plan_param {
    GPUPROBE_PLAN_WORKLOAD = 0,      /**< ::gpuprobe_workload: weights only, inference (default) or training. */
    GPUPROBE_PLAN_WEIGHTS_DTYPE = 1, /**< ::gpuprobe_dtype of the weights. Default bf16. Training: fp32, fp64, fp16 or bf16. */
    GPUPROBE_PLAN_KV_DTYPE = 2,      /**< ::gpuprobe_dtype of the KV cache; -1 (default): the compute dtype (fp32 or fp64 for such weights, else bf16). */
    GPUPROBE_PLAN_CONTEXT = 3,       /**< Tokens per sequence (prompt and generated; training: sequence length). Default 4096. */
    GPUPROBE_PLAN_BATCH = 4,         /**< Sequences at once (training: micro-batch). Default 1. */
    GPUPROBE_PLAN_PREFILL_CHUNK = 5, /**< Inference: tokens of each sequence per forward pass (chunked prefill); 0 (default): the whole context at once. */
    GPUPROBE_PLAN_CHECKPOINTING = 6, /**< Training: 1 for activation checkpointing. Default 0. */
    GPUPROBE_PLAN_QUANT_GROUP = 7,   /**< fp8/int8/int4 weights: weights per fp16 scale. Default 128; 0: no per-group scales. */
    GPUPROBE_PLAN_GPUS = 8,          /**< Tensor-parallel GPUs sharing the model. Default 1. The plan is per GPU. */
    GPUPROBE_PLAN_OVERHEAD = 9,      /**< Runtime overhead per device in bytes; -1 (default): the CUDA context, as described above (pure calls: #GPUPROBE_DEFAULT_CONTEXT_RESERVE). */
    GPUPROBE_PLAN_MARGIN = 10        /**< Safety margin per device in bytes. Default 1 GiB. */
} gpuprobe_plan_param;

/**
 * Create a workload holding the defaults.
 * @return ::GPUPROBE_OK, ::GPUPROBE_ERR_INVALID_ARGUMENT (NULL @p out) or
 *         ::GPUPROBE_ERR_OUT_OF_MEMORY; @p out is NULL on failure.
 */
GPUPROBE_API gpuprobe_status
gpuprobe_plan_options_create(gpuprobe_plan_options **out);

/** Destroy a workload. NULL is accepted. */
GPUPROBE_API void gpuprobe_plan_options_destroy(gpuprobe_plan_options *opts);

/**
 * Set a workload parameter.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL options,
 *         an unknown parameter or a value out of bounds (nothing is
 *         changed).
 */
GPUPROBE_API gpuprobe_status
gpuprobe_plan_options_set(gpuprobe_plan_options *opts,
                          gpuprobe_plan_param param, int64_t value);

/** Read a workload parameter. ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL or unknown. */
GPUPROBE_API gpuprobe_status
gpuprobe_plan_options_get(const gpuprobe_plan_options *opts,
                          gpuprobe_plan_param param, int64_t *value);

/**
 * The inclusive range a workload parameter accepts.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for an unknown
 *         parameter or NULL @p lower or @p upper (nothing is written).
 */
GPUPROBE_API gpuprobe_status
gpuprobe_plan_param_bounds(gpuprobe_plan_param param, int64_t *lower,
                           int64_t *upper);

/** Bits of gpuprobe_plan::flags. */
#define GPUPROBE_PLAN_BY_PARAMS 0x1u /**< The model is only a parameter count: KV cache and activations are the 1.0 rule's 20% (inference) or not counted (training); largest context and batch are unknown (0). */
#define GPUPROBE_PLAN_WINDOWED 0x2u  /**< The sliding window capped the KV cache below the context. */

/**
 * A plan: what one device needs (with tensor parallelism, one GPU's
 * share), and, from gpuprobe_plan_device(), how it compares with that
 * device. Size-prefixed; initialise with #GPUPROBE_PLAN_INIT.
 */
typedef struct gpuprobe_plan {
    size_t size;                 /**< sizeof(gpuprobe_plan), set by the caller. */
    uint64_t params;             /**< Parameters of the whole model. */
    uint64_t active_params;      /**< Parameters each token uses (fewer than params for mixtures of experts). */
    uint64_t kv_bytes_per_token; /**< KV cache per token on this device (all layers). */
    uint64_t weights_bytes;      /**< The weights, with quantisation scales. */
    uint64_t gradient_bytes;     /**< Training: the gradients; else 0. */
    uint64_t optimizer_bytes;    /**< Training: fp32 master weights and Adam moments; else 0. */
    uint64_t kv_cache_bytes;     /**< KV cache for batch x context tokens. */
    uint64_t activation_bytes;   /**< Activations and workspace at the peak. */
    uint64_t overhead_bytes;     /**< Runtime overhead (the CUDA context where counted). */
    uint64_t margin_bytes;       /**< Safety margin. */
    uint64_t total_bytes;        /**< The sum of the seven figures above. */
    uint64_t available_bytes;    /**< gpuprobe_plan_device(): free memory of the device (CPU: available RAM, cgroup-aware); else 0. */
    uint64_t largest_context;    /**< gpuprobe_plan_device(): the largest context that fits with this batch; else 0. */
    uint64_t largest_batch;      /**< gpuprobe_plan_device(): the largest batch that fits with this context; else 0. */
    uint32_t overhead_source;    /**< ::gpuprobe_reserve_source of overhead_bytes (pure calls: #GPUPROBE_RESERVE_DEFAULT, or #GPUPROBE_RESERVE_NONE when set by hand). */
    uint32_t fits;               /**< gpuprobe_plan_device(): 1 when total_bytes <= available_bytes; else 0. */
    uint32_t flags;              /**< GPUPROBE_PLAN_BY_PARAMS, GPUPROBE_PLAN_WINDOWED bits. */
} gpuprobe_plan;

/** Initialiser for ::gpuprobe_plan. */
#define GPUPROBE_PLAN_INIT                                                    \
    {sizeof(gpuprobe_plan), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

/**
 * The plan of @p model under @p opts, looking at no device (pure
 * arithmetic, the same on every machine). With #GPUPROBE_PLAN_GPUS t > 1
 * the figures are one GPU's share. The runtime overhead is
 * #GPUPROBE_PLAN_OVERHEAD, or #GPUPROBE_DEFAULT_CONTEXT_RESERVE when that
 * is -1 (a GPU where this process holds no context).
 *
 * @param ctx   a context for the error message, or NULL.
 * @param model the model.
 * @param opts  the workload, or NULL for the defaults.
 * @param flags must be 0.
 * @param out   caller's struct with `out->size` set (#GPUPROBE_PLAN_INIT);
 *              fields beyond `out->size` are never written; the device
 *              figures are set to 0; written only on success.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL
 *         arguments, a size smaller than the 1.1 struct, an empty or
 *         incomplete model, one that is both a parameter count and an
 *         architecture, heads that do not divide (hidden size, KV heads,
 *         GPUs), experts per token missing or above the experts;
 *         ::GPUPROBE_ERR_UNSUPPORTED for training in tf32, fp8, int8 or
 *         int4; ::GPUPROBE_ERR_OVERFLOW when the parameter count exceeds
 *         #GPUPROBE_MAX_PARAMS or a byte count exceeds 64 bits (the
 *         message names which).
 */
GPUPROBE_API gpuprobe_status gpuprobe_plan_compute(gpuprobe_context *ctx,
                                                   const gpuprobe_model *model,
                                                   const gpuprobe_plan_options *opts,
                                                   unsigned flags,
                                                   gpuprobe_plan *out);

/**
 * The largest value of #GPUPROBE_PLAN_CONTEXT or #GPUPROBE_PLAN_BATCH,
 * the other parameters as in @p opts, whose plan total is at most
 * @p budget_bytes (pure, as gpuprobe_plan_compute()). The total never
 * decreases as either grows, so the answer is exact: total(answer) <=
 * budget < total(answer + 1). 0 when not even one token (one sequence)
 * fits; the parameter's upper bound when everything up to it fits (the
 * total may not depend on it: weights only, or a sliding window with
 * chunked prefill).
 *
 * @param ctx    a context for the error message, or NULL.
 * @param model  the model: an architecture (a parameter count alone does
 *               not say how memory grows: ::GPUPROBE_ERR_UNSUPPORTED).
 * @param opts   the workload, or NULL for the defaults.
 * @param param  #GPUPROBE_PLAN_CONTEXT or #GPUPROBE_PLAN_BATCH.
 * @param budget_bytes the memory to fit in.
 * @param largest receives the answer; written only on success.
 * @return ::GPUPROBE_OK, or the errors of gpuprobe_plan_compute() (an
 *         overflow at a large value counts as "does not fit", not as an
 *         error).
 */
GPUPROBE_API gpuprobe_status gpuprobe_plan_largest(gpuprobe_context *ctx,
                                                   const gpuprobe_model *model,
                                                   const gpuprobe_plan_options *opts,
                                                   gpuprobe_plan_param param,
                                                   uint64_t budget_bytes,
                                                   uint64_t *largest);

/**
 * The plan held against one device's memory (the CPU too). Reads the
 * device's memory as gpuprobe_device_memory() does. The overhead, unless
 * #GPUPROBE_PLAN_OVERHEAD is set, is this device's: 0 on the CPU and where
 * this process holds a CUDA context already, else the measured context
 * cost or #GPUPROBE_DEFAULT_CONTEXT_RESERVE (see ::gpuprobe_reserve_source).
 * The CPU always holds the whole model (#GPUPROBE_PLAN_GPUS does not apply).
 * Sets `available_bytes`, `fits`, `largest_context` and `largest_batch`
 * (gpuprobe_plan_largest() with the available memory as budget; 0 for a
 * model given only by its parameter count).
 *
 * @return ::GPUPROBE_OK (whether or not the plan fits); the errors of
 *         gpuprobe_plan_compute(); ::GPUPROBE_ERR_NOT_FOUND; the errors of
 *         gpuprobe_device_memory().
 */
GPUPROBE_API gpuprobe_status gpuprobe_plan_device(gpuprobe_context *ctx,
                                                  size_t device,
                                                  const gpuprobe_model *model,
                                                  const gpuprobe_plan_options *opts,
                                                  unsigned flags,
                                                  gpuprobe_plan *out);

/**
 * The fewest CUDA devices that hold the model with tensor parallelism:
 * the smallest t (1, 2, ... up to the number of CUDA devices) that the
 * model's heads allow and for which t devices each have room for one
 * share (plan with #GPUPROBE_PLAN_GPUS = t, each device's own overhead;
 * the option's own value is ignored). The devices chosen are those with
 * the most free memory (ties: lowest index), listed in index order.
 *
 * @param ctx        the context.
 * @param model      the model.
 * @param opts       the workload, or NULL for the defaults.
 * @param flags      must be 0.
 * @param count      receives t.
 * @param devices    if not NULL, receives the device indices (see
 *                   gpuprobe_device_count()) of the t devices, at most
 *                   @p max_devices of them.
 * @param max_devices room in @p devices.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_NO_FIT when no number of the CUDA
 *         devices holds it (the message gives the need and the best
 *         device); ::GPUPROBE_ERR_CUDA_UNAVAILABLE when CUDA is not usable
 *         (the message gives the cause); the errors of
 *         gpuprobe_plan_compute() and gpuprobe_device_memory().
 */
GPUPROBE_API gpuprobe_status gpuprobe_plan_gpus(gpuprobe_context *ctx,
                                                const gpuprobe_model *model,
                                                const gpuprobe_plan_options *opts,
                                                unsigned flags, size_t *count,
                                                size_t *devices,
                                                size_t max_devices);

/** @} */

/** @defgroup select Device selection
 *  @{ */

/**
 * Requirements a selected device must meet. Size-prefixed; initialise with
 * #GPUPROBE_REQUIREMENTS_INIT (which asks for nothing).
 */
typedef struct gpuprobe_requirements {
    size_t size;               /**< sizeof(gpuprobe_requirements), set by the caller. */
    uint64_t min_free_bytes;   /**< Minimum free memory (CPU: available RAM). 0: none. */
    int32_t min_cc_major;      /**< Minimum compute capability (major); 0: none. Excludes the CPU when > 0. */
    int32_t min_cc_minor;      /**< Minimum compute capability (minor), with min_cc_major. */
    uint64_t fit_params;       /**< The device must fit this many parameters (gpuprobe_device_capacity()); 0: none. */
    int32_t fit_dtype;         /**< ::gpuprobe_dtype for fit_params. */
    int32_t fit_workload;      /**< ::gpuprobe_workload for fit_params. */
    /* since 1.1 (a 1.0 caller's smaller size means: none of these) */
    int32_t max_utilization;   /**< A GPU must be busy at most this percent now (0-100, ::GPUPROBE_ATTR_GPU_UTILIZATION); -1 (the initialiser's): none. A GPU whose utilisation cannot be read fails it. Excludes the CPU when >= 0. */
    int32_t no_other_process;  /**< 1: no other process may have a CUDA context on the GPU now (::GPUPROBE_ATTR_COMPUTE_PROCESSES, less this process's own); 0: none. A GPU whose processes cannot be read fails it. Excludes the CPU when 1. */
} gpuprobe_requirements;

/** Initialiser for ::gpuprobe_requirements: no requirement. */
#define GPUPROBE_REQUIREMENTS_INIT                                            \
    {sizeof(gpuprobe_requirements), 0, 0, 0, 0, GPUPROBE_DTYPE_FP16,          \
     GPUPROBE_WORKLOAD_WEIGHTS, -1, 0}

/** gpuprobe_select() flag: ignore the `GPUPROBE_DEVICE` environment variable. */
#define GPUPROBE_SELECT_IGNORE_ENV 0x1u

/**
 * Choose the device a program should use, as the lesson's
 * `torch.device("cuda" if torch.cuda.is_available() else "cpu")`, but with
 * reasons and requirements.
 *
 * Spec grammar: `auto` | `cpu` | `cuda` | `cuda:N` (N a decimal CUDA
 * ordinal as this process sees it, i.e. after `CUDA_VISIBLE_DEVICES`).
 * Specs are exact and case-sensitive, as PyTorch's: lower case, no blanks,
 * no sign, no leading zeros (`cuda:0` but not `cuda:00` or `cuda:01`), N at
 * most INT_MAX (larger is malformed, not "not found"). The empty spec means
 * `auto`. Specs longer than 64 bytes are malformed.
 *
 * - `auto`: the usable CUDA device with the most free memory that meets the
 *   requirements (ties: the lower GPU utilisation, a GPU whose utilisation
 *   is unknown counting as busiest; then the lowest ordinal), else the CPU
 *   if it meets them.
 * - `cuda`: as `auto` among CUDA devices only; no fallback to the CPU.
 * - `cuda:N`: exactly that device; an error if it is unusable or fails.
 * - `cpu`: the CPU, if it meets the requirements.
 *
 * The environment variable `GPUPROBE_DEVICE`, when set and not empty,
 * replaces @p spec (since 1.2 an empty value is the same as unset; 1.0 and
 * 1.1 took it for `auto`) unless @p flags has
 * #GPUPROBE_SELECT_IGNORE_ENV. The variable is read when the context is
 * created; a value of 256 bytes or more is malformed.
 *
 * `auto` and `cuda` read the free memory of every CUDA candidate through
 * NVML, creating no CUDA context and allocating nothing (since 1.1; 1.0
 * created a context on every candidate): a context is made only when
 * work runs there (gpuprobe_matmul_run()), or by the memory query's
 * stated fallback when NVML cannot answer (see gpuprobe_device_memory()).
 * The CPU is judged by its available RAM. Requirements are checked in
 * order: compute capability, utilisation, other processes, free memory,
 * then fit (gpuprobe_device_capacity(), which counts the CUDA context
 * once). The arguments (flags, requirements, then the spec) are checked
 * before any device is looked at, so their errors are the same on every
 * machine.
 *
 * @param ctx     the context.
 * @param spec    the program's default spec; not NULL.
 * @param req     requirements, or NULL for none. `req->size` must cover
 *                at least the 1.0 struct (up to `fit_workload`); the 1.1
 *                fields are read only when it covers them.
 *                `max_utilization` outside -1..100 or `no_other_process`
 *                other than 0 or 1 is ::GPUPROBE_ERR_INVALID_ARGUMENT.
 * @param flags   0 or #GPUPROBE_SELECT_IGNORE_ENV.
 * @param device  receives the chosen device index (see gpuprobe_device_count()).
 * @param reason  if not NULL, receives a one-line account of the choice
 *                (e.g. why `auto` fell back to the CPU), owned by the
 *                context, valid until the next call on it.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for a malformed spec
 *         (the message quotes it); ::GPUPROBE_ERR_CUDA_UNAVAILABLE when CUDA
 *         was asked for and is not usable (the message gives the cause);
 *         ::GPUPROBE_ERR_NOT_FOUND for `cuda:N` out of range (when CUDA
 *         is usable at all; otherwise ::GPUPROBE_ERR_CUDA_UNAVAILABLE);
 *         ::GPUPROBE_ERR_NO_FIT when no candidate meets the requirements (the
 *         message says which requirement failed on which device);
 *         ::GPUPROBE_ERR_UNSUPPORTED or ::GPUPROBE_ERR_OVERFLOW for a fit
 *         requirement with no rule or above #GPUPROBE_MAX_PARAMS (as
 *         gpuprobe_capacity_bytes()). @p device and @p reason are written
 *         only on success.
 */
GPUPROBE_API gpuprobe_status gpuprobe_select(gpuprobe_context *ctx,
                                             const char *spec,
                                             const gpuprobe_requirements *req,
                                             unsigned flags, size_t *device,
                                             const char **reason);

/** @} */

/** @defgroup matmul Timed matrix multiplication
 *  @{ */

/** Opaque matmul options (zstd-style enum-keyed parameters). */
typedef struct gpuprobe_matmul_options gpuprobe_matmul_options;

/**
 * Matmul parameters. Query the accepted range with
 * gpuprobe_matmul_param_bounds(). Values are fixed and never reused.
 */
typedef enum gpuprobe_matmul_param {
    GPUPROBE_MATMUL_M = 0,           /**< Rows of A and C. Default 5000 (the lesson's size). */
    GPUPROBE_MATMUL_N = 1,           /**< Columns of B and C. Default: same as M when not set. */
    GPUPROBE_MATMUL_K = 2,           /**< Columns of A, rows of B. Default: same as M when not set. */
    GPUPROBE_MATMUL_DTYPE = 3,       /**< ::gpuprobe_dtype: fp32 (default), fp64 (CPU), tf32, fp16, bf16 (CUDA; fp32 accumulation, C in fp32). */
    GPUPROBE_MATMUL_WARMUP = 4,      /**< Untimed warm-up calls before the batch is chosen (they absorb first-call loading). Default 1. The search for the steady state follows (#GPUPROBE_MATMUL_WARMUP_MS). */
    GPUPROBE_MATMUL_MIN_RUNS = 5,    /**< Minimum timed runs (samples, see #GPUPROBE_MATMUL_BATCH). Default 5. */
    GPUPROBE_MATMUL_MAX_RUNS = 6,    /**< Maximum timed runs; 0: no cap, the budget alone ends the runs (at most 1,048,576 of them). Default 0 (1.0 and 1.1: 100, which ended the runs before the budget whenever a run lasted under 2.5 ms). A value below MIN_RUNS counts as MIN_RUNS. */
    GPUPROBE_MATMUL_BUDGET_MS = 7,   /**< Keep timing (past MIN_RUNS, up to MAX_RUNS when set) until the timed runs add up to this many milliseconds. Default 250 (1.0: 0, and the wall time since the first run was counted); 0: exactly MIN_RUNS. */
    GPUPROBE_MATMUL_TRANSFERS = 8,   /**< CUDA: 1 to time host-to-device and device-to-host copies (reported apart). Default 1. */
    GPUPROBE_MATMUL_VERIFY = 9,      /**< 1 to verify the result against a double-precision reference. Default 1. */
    GPUPROBE_MATMUL_SEED = 10,       /**< Seed of the random inputs. Default 42. */
    GPUPROBE_MATMUL_CPU_THREADS = 11, /**< CPU: OpenBLAS threads for this run (restored after); 0 = leave as is. Default 0. OpenBLAS caps the count at its build's MAX_THREADS (64 in Debian's); a count above the threads its pool holds starts more, and those threads stay for the rest of the process (each with a 128 MiB buffer and its own stack, in address space) even though the count in force is restored. So 1024 leaves OpenBLAS with 64 threads. GPUPROBE_METRIC_THREADS says what the run used. */
    GPUPROBE_MATMUL_VERIFY_SAMPLES = 12, /**< Number of sampled output entries to verify. Default 256. */
    GPUPROBE_MATMUL_BATCH = 13,      /**< (since 1.1) Calls per timed run: each run times this many back-to-back calls as one block and reports the time per call. 0 (the default): automatic, 1 when a call takes 2 ms or more, else enough calls that a block lasts 2 ms, so that sub-millisecond sizes are not timed at the mercy of thread wake-ups and clock reads (like Python's timeit.autorange). 1 times every call alone (1.0's behaviour). GPUPROBE_METRIC_BATCH reports the count used. */
    GPUPROBE_MATMUL_WARMUP_MS = 14   /**< (since 1.2) The bound, in milliseconds of gemm calls, of the warm-up: after the #GPUPROBE_MATMUL_WARMUP calls and the choice of the batch, runs of the batch are made untimed until two in a row agree within 2% (the steady state: OpenBLAS's buffers mapped and its threads awake on their own CPUs; clocks up on a GPU). A run is made only while the warm-up, those calls and the batch's choice included, would stay within this bound if it lasted as long as the last one (the first needs room for two); so calls longer than half the bound get no search. Default 1000; 0: no search (1.1's warm-up). GPUPROBE_METRIC_STEADY says how it ended. */
} gpuprobe_matmul_param;

/**
 * Create options holding the defaults.
 * @param out receives the options; set to NULL on failure.
 * @return ::GPUPROBE_OK, ::GPUPROBE_ERR_INVALID_ARGUMENT (NULL @p out) or
 *         ::GPUPROBE_ERR_OUT_OF_MEMORY.
 */
GPUPROBE_API gpuprobe_status
gpuprobe_matmul_options_create(gpuprobe_matmul_options **out);

/** Destroy options. NULL is accepted. */
GPUPROBE_API void gpuprobe_matmul_options_destroy(gpuprobe_matmul_options *opts);

/**
 * Set a parameter.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL options,
 *         an unknown parameter or a value out of bounds (nothing is changed).
 */
GPUPROBE_API gpuprobe_status
gpuprobe_matmul_options_set(gpuprobe_matmul_options *opts,
                            gpuprobe_matmul_param param, int64_t value);

/** Read a parameter (the effective value: N and K follow M when unset). */
GPUPROBE_API gpuprobe_status
gpuprobe_matmul_options_get(const gpuprobe_matmul_options *opts,
                            gpuprobe_matmul_param param, int64_t *value);

/**
 * The inclusive range a parameter accepts.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for an unknown
 *         parameter or a NULL @p lower or @p upper (nothing is written).
 */
GPUPROBE_API gpuprobe_status
gpuprobe_matmul_param_bounds(gpuprobe_matmul_param param, int64_t *lower,
                             int64_t *upper);

/** Opaque result of a timed matmul. */
typedef struct gpuprobe_matmul_result gpuprobe_matmul_result;

/**
 * Run a timed matmul C = A x B (row-major, m x k times k x n) on @p device,
 * following the protocol in docs: separate setup timing, warm-up until two
 * runs in a row agree within 2% (at most #GPUPROBE_MATMUL_WARMUP_MS), timed
 * runs (CUDA events on the GPU) of #GPUPROBE_MATMUL_BATCH back-to-back calls
 * each, at least MIN_RUNS of them and more until they add up to BUDGET_MS
 * (250 ms by default; or MAX_RUNS when set), seeded zero-mean random inputs, output
 * poisoned with NaN first, verification on sampled entries against a
 * double-precision host reference. The time figures are per call.
 *
 * cuBLAS is loaded on the first GPU matmul of the context and its handle is
 * kept for later calls on the same device. The device's primary context then
 * stays alive until the process exits (see gpuprobe_context_destroy()).
 *
 * Host memory is checked before anything is allocated, against the
 * tightest of MemAvailable, the cgroup limits (v1 and v2, every level up)
 * minus their usage, RLIMIT_AS minus the address space in use and
 * RLIMIT_DATA minus the data in use. On the CPU the check counts what
 * OpenBLAS adds to A, B and C: each thread that runs a multiplication maps
 * a 128 MiB buffer (x86-64; OpenBLAS 0.3.21) and each pool thread a stack,
 * and when it cannot map one it retries forever. So a run, or the loading
 * of OpenBLAS itself (which starts its pool), that would not fit returns
 * ::GPUPROBE_ERR_OUT_OF_MEMORY with a message naming the limit and the
 * figures, instead of hanging (address-space limits) or being killed (a
 * cgroup limit). Under an address-space limit the calling thread's buffer
 * is counted even when it already has one (that cannot be seen), so a run
 * may be refused up to 128 MiB early.
 *
 * @param ctx    the context.
 * @param device the device index (see gpuprobe_device_count()).
 * @param opts   options, or NULL for the defaults.
 * @param flags  must be 0.
 * @param out    receives the result on ::GPUPROBE_OK and on
 *               ::GPUPROBE_ERR_VERIFY_FAILED (so the figures can still be
 *               read); NULL otherwise. Destroy it with
 *               gpuprobe_matmul_result_destroy().
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT;
 *         ::GPUPROBE_ERR_NOT_FOUND; ::GPUPROBE_ERR_UNSUPPORTED for a dtype
 *         the device cannot do, or on the CPU when OpenBLAS
 *         (libopenblas.so.0, opened at the first CPU matmul) cannot be
 *         loaded; ::GPUPROBE_ERR_OVERFLOW when the buffers'
 *         size cannot be represented; ::GPUPROBE_ERR_OUT_OF_MEMORY when
 *         the run would not fit in host memory or under the process's
 *         limits (see above), or an allocation fails;
 *         ::GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY (nothing stays allocated);
 *         ::GPUPROBE_ERR_CUDA_UNAVAILABLE; ::GPUPROBE_ERR_CUDA;
 *         ::GPUPROBE_ERR_VERIFY_FAILED.
 */
GPUPROBE_API gpuprobe_status gpuprobe_matmul_run(gpuprobe_context *ctx,
                                                 size_t device,
                                                 const gpuprobe_matmul_options *opts,
                                                 unsigned flags,
                                                 gpuprobe_matmul_result **out);

/** Destroy a result. NULL is accepted. */
GPUPROBE_API void gpuprobe_matmul_result_destroy(gpuprobe_matmul_result *result);

/**
 * Figures of a matmul result, read with the getter of the type given.
 * Times are in seconds. Values are fixed and never reused.
 */
typedef enum gpuprobe_matmul_metric {
    GPUPROBE_METRIC_MEDIAN_S = 0,     /**< double: median of the timed runs. */
    GPUPROBE_METRIC_MIN_S = 1,        /**< double: fastest run. */
    GPUPROBE_METRIC_MAX_S = 2,        /**< double: slowest run. */
    GPUPROBE_METRIC_MEAN_S = 3,       /**< double: mean of the runs. */
    GPUPROBE_METRIC_STDDEV_S = 4,     /**< double: sample standard deviation of the runs. */
    GPUPROBE_METRIC_GFLOPS = 5,       /**< double: 2*m*n*k / median / 1e9. */
    GPUPROBE_METRIC_SETUP_S = 6,      /**< double: allocation, input generation, handle creation, library loading, the warm-up runs and the calls that chose the batch (everything before the first timed run but the timed transfers). */
    GPUPROBE_METRIC_H2D_S = 7,        /**< double: host-to-device copy of A and B (CUDA; 0 for the CPU or with TRANSFERS off). */
    GPUPROBE_METRIC_D2H_S = 8,        /**< double: device-to-host copy of C (same). */
    GPUPROBE_METRIC_MAX_ERROR = 9,    /**< double: largest |c - ref| / (sum |a||b|) over the sampled entries (NaN if a sample was NaN). */
    GPUPROBE_METRIC_TOLERANCE = 10,   /**< double: the tolerance that error was held to. fp32 and fp64: u (2 + min(k, 8 R)), u = 2^-24 (fp32) or 2^-52 (fp64) and R the largest sqrt(sum of squared partial sums) / (sum |a||b|) over the samples (about 1 for these inputs, at any k): about 20 u. This tells an fp32 result from one computed with TF32 inputs (error ~2^-11 / sqrt(k)) up to k of about 300,000 when TF32 rounds to nearest and about 1,000,000 when it truncates; beyond that an fp32 result is still held to this bound, but a TF32 one would pass too. tf32, fp16, bf16 (tensor cores): 2^-20 (8 + sqrt(k)), plus 2 x 2^-10 for tf32's inputs. */
    GPUPROBE_METRIC_PEAK_GFLOPS = 11, /**< double: theoretical peak for this dtype; 0 when unknown. */
    GPUPROBE_METRIC_PEAK_FRACTION = 12, /**< double: GFLOPS / PEAK_GFLOPS; 0 when the peak is unknown. */
    GPUPROBE_METRIC_VERIFIED = 13,    /**< int: 1 verified, 0 failed, -1 not checked. */
    GPUPROBE_METRIC_RUNS = 14,        /**< int: number of timed runs (each of GPUPROBE_METRIC_BATCH calls). */
    GPUPROBE_METRIC_THREADS = 15,     /**< int: CPU threads used (OpenBLAS); 0 on CUDA. */
    GPUPROBE_METRIC_M = 16,           /**< int: m. */
    GPUPROBE_METRIC_N = 17,           /**< int: n. */
    GPUPROBE_METRIC_K = 18,           /**< int: k. */
    GPUPROBE_METRIC_DTYPE = 19,       /**< int: ::gpuprobe_dtype. */
    GPUPROBE_METRIC_DEVICE_NAME = 20, /**< string: the device's name. */
    GPUPROBE_METRIC_BACKEND = 21,     /**< string: e.g. "OpenBLAS 0.3.21 Haswell" or "cuBLAS 13.0.0". */
    GPUPROBE_METRIC_MATH_MODE = 22,   /**< string: cuBLAS math mode, e.g. "CUBLAS_DEFAULT_MATH"; "" on the CPU. */
    GPUPROBE_METRIC_COMPUTE_TYPE = 23, /**< string: e.g. "CUBLAS_COMPUTE_32F_FAST_TF32", or "cblas_sgemm" on the CPU. */
    GPUPROBE_METRIC_DEVICE = 24,      /**< int: the device index the run used. */
    GPUPROBE_METRIC_BATCH = 25,       /**< int (since 1.1): calls per timed run (#GPUPROBE_MATMUL_BATCH): the time figures are per call, each run's block time divided by this. */
    GPUPROBE_METRIC_WARMUP_S = 26,    /**< double (since 1.2): the untimed gemm calls before the first timed run, added (the #GPUPROBE_MATMUL_WARMUP calls, the batch's choice, the warm-up runs), by the clock of the timed runs; part of SETUP_S. */
    GPUPROBE_METRIC_IQR_S = 27,       /**< double (since 1.2): the spread of the timed runs, per call: their interquartile range (75th minus 25th percentile, linear between order statistics), as torch.utils.benchmark reports it. IQR_S / MEDIAN_S is the relative spread. */
    GPUPROBE_METRIC_WARMUP_RUNS = 28, /**< int (since 1.2): warm-up runs of the batch made in search of the steady state (#GPUPROBE_MATMUL_WARMUP_MS). */
    GPUPROBE_METRIC_STEADY = 29       /**< int (since 1.2): 1 when two warm-up runs in a row agreed within 2% (the timed runs began in the steady state); 0 when the warm-up's bound came first: a machine whose speed kept changing (other work on it), or calls so long that two runs do not fit in the bound (then one call's start-up costs are a small part of it); -1 with no search (#GPUPROBE_MATMUL_WARMUP_MS 0). */
} gpuprobe_matmul_metric;

/** Read a floating-point metric. ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL, unknown or non-double metrics. */
GPUPROBE_API gpuprobe_status
gpuprobe_matmul_result_get_double(const gpuprobe_matmul_result *result,
                                  gpuprobe_matmul_metric metric, double *value);

/** Read an integer metric. ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL, unknown or non-int metrics. */
GPUPROBE_API gpuprobe_status
gpuprobe_matmul_result_get_int(const gpuprobe_matmul_result *result,
                               gpuprobe_matmul_metric metric, int64_t *value);

/**
 * Read a string metric; the string lives as long as the result.
 * ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL, unknown or non-string metrics.
 */
GPUPROBE_API gpuprobe_status
gpuprobe_matmul_result_get_string(const gpuprobe_matmul_result *result,
                                  gpuprobe_matmul_metric metric,
                                  const char **value);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* GPUPROBE_H */
