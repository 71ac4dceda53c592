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
 * Options objects and matmul and bandwidth results are plain data: any number of threads
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
 * - `GPUPROBE_CPU_AMX` (since 1.2): a value that turns CUDA off turns off
 *   the library's bf16 gemm on the CPU (AMX tiles or AVX512-BF16): bf16
 *   matmuls on the CPU are then ::GPUPROBE_ERR_UNSUPPORTED and
 *   gpuprobe_speed_measure() times bf16 weights in fp32 there, as on a CPU
 *   without either. The
 *   gemm asks Linux once for the process's AMX state
 *   (`arch_prctl(ARCH_REQ_XCOMP_PERM)`), the first time a bf16 matmul on
 *   the CPU is wanted; this variable keeps a process from asking. Its
 *   other values and error are those of `GPUPROBE_CUDA`.
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
    /** Success. */
    GPUPROBE_OK = 0,
    /** NULL pointer, bad value, non-zero reserved flags, malformed spec. */
    GPUPROBE_ERR_INVALID_ARGUMENT = 1,
    /** A host allocation failed. */
    GPUPROBE_ERR_OUT_OF_MEMORY = 2,
    /** A device allocation failed; nothing stays allocated. */
    GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY = 3,
    /** Device index out of range, or no such CUDA device. */
    GPUPROBE_ERR_NOT_FOUND = 4,
    /** Valid request the device or build cannot do (attribute of another kind, precision). */
    GPUPROBE_ERR_UNSUPPORTED = 5,
    /** CUDA is not usable; gpuprobe_cuda_status() says why. */
    GPUPROBE_ERR_CUDA_UNAVAILABLE = 6,
    /** A CUDA or cuBLAS call failed; the message names the error. */
    GPUPROBE_ERR_CUDA = 7,
    /** No device meets the requirements; the message says which failed where. */
    GPUPROBE_ERR_NO_FIT = 8,
    /** A matmul result failed verification (since 1.2 also a bandwidth run's data check). */
    GPUPROBE_ERR_VERIFY_FAILED = 9,
    /** A size or count is too large to represent or exceeds a documented limit. */
    GPUPROBE_ERR_OVERFLOW = 10,
    /** An operating-system query failed; the message names it. */
    GPUPROBE_ERR_SYSTEM = 11,
    /** A bug in libgpuprobe; please report it. */
    GPUPROBE_ERR_INTERNAL = 12
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
    /** At least one CUDA device is usable. */
    GPUPROBE_CUDA_AVAILABLE = 0,
    /** This libgpuprobe was built without CUDA support. */
    GPUPROBE_CUDA_NOT_BUILT = 1,
    /** Turned off by the user (`GPUPROBE_CUDA`). */
    GPUPROBE_CUDA_DISABLED = 2,
    /** No CUDA runtime library (libcudart.so.N) could be loaded. */
    GPUPROBE_CUDA_NO_RUNTIME = 3,
    /** The NVIDIA driver library (libcuda.so.1) is missing. */
    GPUPROBE_CUDA_NO_DRIVER = 4,
    /** libcuda.so.1 loads but the kernel driver is not running. */
    GPUPROBE_CUDA_NO_KERNEL_DRIVER = 5,
    /** The driver supports an older CUDA than the runtime needs. */
    GPUPROBE_CUDA_DRIVER_TOO_OLD = 6,
    /** The driver works but finds no CUDA device. */
    GPUPROBE_CUDA_NO_DEVICE = 7,
    /** Devices exist but `CUDA_VISIBLE_DEVICES` hides them all. */
    GPUPROBE_CUDA_DEVICES_HIDDEN = 8,
    /** No permission to open /dev/nvidia*. */
    GPUPROBE_CUDA_NO_PERMISSION = 9,
    /** Any other failure; the detail names the CUDA error. */
    GPUPROBE_CUDA_OTHER = 10
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
    /** int: ::gpuprobe_device_kind. All devices. */
    GPUPROBE_ATTR_KIND = 0,
    /** string: product name (GPU) or CPU model name. All devices. */
    GPUPROBE_ATTR_NAME = 1,
    /** string: the device spec that selects it, "cpu" or "cuda:N". All devices. */
    GPUPROBE_ATTR_SPEC = 2,
    /** int: CUDA ordinal as this process sees it. CUDA only. */
    GPUPROBE_ATTR_CUDA_INDEX = 3,
    /** string: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi -L prints; a MIG
     * instance's own "MIG-..." (since 1.1, where NVML or CUDA_VISIBLE_DEVICES tells an instance).
     * CUDA only. */
    GPUPROBE_ATTR_UUID = 4,
    /** string: "dddd:bb:dd.f". CUDA only. */
    GPUPROBE_ATTR_PCI_BUS_ID = 5,
    /** int: compute capability, major. CUDA only. */
    GPUPROBE_ATTR_CC_MAJOR = 6,
    /** int: compute capability, minor. CUDA only. */
    GPUPROBE_ATTR_CC_MINOR = 7,
    /** int: streaming multiprocessor count. CUDA only. */
    GPUPROBE_ATTR_MULTIPROCESSORS = 8,
    /** int: peak clock in kHz (GPU: SM clock; CPU: max frequency if the OS says). */
    GPUPROBE_ATTR_CLOCK_KHZ = 9,
    /** int: peak memory clock in kHz. CUDA only. */
    GPUPROBE_ATTR_MEMORY_CLOCK_KHZ = 10,
    /** int: memory bus width in bits. CUDA only. */
    GPUPROBE_ATTR_MEMORY_BUS_BITS = 11,
    /** int: total memory in bytes (GPU: device memory; CPU: physical RAM). All devices. */
    GPUPROBE_ATTR_TOTAL_MEMORY = 12,
    /** int: logical CPUs online (sysconf). CPU only. */
    GPUPROBE_ATTR_LOGICAL_CORES = 13,
    /** int: ::gpuprobe_simd. CPU only. */
    GPUPROBE_ATTR_SIMD = 14,
    /** string: OpenBLAS core name, e.g. "Haswell". CPU only. The BLAS attributes load OpenBLAS
     * (libopenblas.so.0) on first request; UNSUPPORTED when it cannot be loaded, OUT_OF_MEMORY when
     * its thread pool (a 128 MiB buffer and a stack per thread) would not fit under RLIMIT_AS or
     * RLIMIT_DATA. */
    GPUPROBE_ATTR_BLAS_CORE = 15,
    /** int: OpenBLAS thread count now. CPU only. */
    GPUPROBE_ATTR_BLAS_THREADS = 16,
    /** string: OpenBLAS build configuration. CPU only. */
    GPUPROBE_ATTR_BLAS_CONFIG = 17,
    /* Since 1.1: placement and health, through NVML and sysfs (see below). CUDA only. */
    /** int: the GPU's index as nvidia-smi and NVML number GPUs (by PCI bus id), which differs from
     * the CUDA ordinal under the default CUDA_DEVICE_ORDER=FASTEST_FIRST. A MIG instance: its
     * GPU's. */
    GPUPROBE_ATTR_NVML_INDEX = 18,
    /** int: the GPU's current MIG mode, 1 enabled, 0 disabled (a MIG instance: 1). UNSUPPORTED on
     * GPUs without MIG. */
    GPUPROBE_ATTR_MIG_MODE = 19,
    /** int: 1 when the device is a MIG instance (a slice of a GPU in MIG mode, named in
     * CUDA_VISIBLE_DEVICES by its MIG- UUID), 0 when it is a whole GPU. */
    GPUPROBE_ATTR_MIG_INSTANCE = 20,
    /** int: a MIG instance's index among its GPU's instances (nvidia-smi's "MIG dev"). MIG
     * instances only. */
    GPUPROBE_ATTR_MIG_INDEX = 21,
    /** string: a MIG instance's GPU, "GPU-...". MIG instances only. */
    GPUPROBE_ATTR_MIG_PARENT_UUID = 22,
    /** int: the MIG instances of the GPU (a MIG instance: of its GPU); 0 with MIG disabled. */
    GPUPROBE_ATTR_MIG_COUNT = 23,
    /** int, now: percent of the last sample period in which a kernel ran (NVML's "GPU
     * utilisation"). UNSUPPORTED in MIG mode. */
    GPUPROBE_ATTR_GPU_UTILIZATION = 24,
    /** int, now: percent of the last sample period in which device memory was read or written.
     * UNSUPPORTED in MIG mode. */
    GPUPROBE_ATTR_MEMORY_UTILIZATION = 25,
    /** int, now: GPU temperature in degrees Celsius (a MIG instance: its GPU's). */
    GPUPROBE_ATTR_TEMPERATURE_C = 26,
    /** int, now: power draw in milliwatts (a MIG instance: its GPU's). */
    GPUPROBE_ATTR_POWER_MW = 27,
    /** int: the enforced power limit in milliwatts (a MIG instance: its GPU's). */
    GPUPROBE_ATTR_POWER_LIMIT_MW = 28,
    /** int, now: processes with a CUDA context on the device (a MIG instance: on the instance),
     * this one included when it holds one. A count only: inside a container's PID namespace the
     * process IDs NVML gives are not the container's. */
    GPUPROBE_ATTR_COMPUTE_PROCESSES = 29,
    /** int: the NUMA node the GPU is attached to (sysfs numa_node); UNSUPPORTED when the platform
     * does not say (-1 there). */
    GPUPROBE_ATTR_NUMA_NODE = 30,
    /** string: the CPUs closest to the GPU as a list, e.g. "0-31,64-95" (sysfs local_cpulist). */
    GPUPROBE_ATTR_LOCAL_CPUS = 31,
    /** int, now: current PCIe link generation (it drops at idle to save power; a MIG instance: its
     * GPU's). */
    GPUPROBE_ATTR_PCIE_GEN = 32,
    /** int, now: current PCIe link width (lanes). */
    GPUPROBE_ATTR_PCIE_WIDTH = 33,
    /** int: the highest PCIe generation the GPU and the system support together. */
    GPUPROBE_ATTR_PCIE_MAX_GEN = 34,
    /** int: the widest PCIe link the GPU and the system support together. */
    GPUPROBE_ATTR_PCIE_MAX_WIDTH = 35
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
/** Host: a cgroup limit lowered total or available. */
#define GPUPROBE_MEMORY_CGROUP_LIMITED 0x1u
/** CUDA: this query created a CUDA context on the device (the context fallback). */
#define GPUPROBE_MEMORY_CREATED_CONTEXT 0x2u
/** CUDA: context_bytes was measured (via NVML), not assumed. */
#define GPUPROBE_MEMORY_CONTEXT_MEASURED 0x4u

/** Where gpuprobe_memory_info's figures come from (since 1.1). */
typedef enum gpuprobe_memory_source {
    /** The CPU: /proc/meminfo and the cgroup limits. */
    GPUPROBE_MEMORY_SOURCE_HOST = 0,
    /** NVML (nvmlDeviceGetMemoryInfo_v2, else the first version): no CUDA context was involved. */
    GPUPROBE_MEMORY_SOURCE_NVML = 1,
    /** cuMemGetInfo inside the device's primary CUDA context: NVML could not answer (the CUDA
     * detail of gpuprobe_cuda_status() says why when NVML is missing). */
    GPUPROBE_MEMORY_SOURCE_CUDA_CONTEXT = 2
} gpuprobe_memory_source;

/**
 * A memory snapshot. Size-prefixed: set `size` (use
 * #GPUPROBE_MEMORY_INFO_INIT) so that fields added later are never written
 * past the end of an older caller's struct. 1.1 appended the fields from
 * `used_bytes` on; a 1.0 caller's struct ends at `flags` and gets the 1.0
 * fields only.
 */
typedef struct gpuprobe_memory_info {
    /** sizeof(gpuprobe_memory_info), set by the caller. */
    size_t size;
    /** Host: physical RAM, or the cgroup limit when lower. CUDA: device memory, as cuDeviceTotalMem
     * counts it (NVML's total less the memory the driver reserves). */
    uint64_t total_bytes;
    /** Host: MemAvailable, capped by the cgroup's remaining room. CUDA: free device memory. */
    uint64_t available_bytes;
    /** Host: MemTotal. CUDA: same as total_bytes. */
    uint64_t physical_bytes;
    /** Host: the tightest cgroup memory limit, UINT64_MAX if none. CUDA: UINT64_MAX. */
    uint64_t cgroup_limit_bytes;
    /** CUDA: device memory taken by the CUDA context itself, when measured; else 0. */
    uint64_t context_bytes;
    /** GPUPROBE_MEMORY_* bits. */
    uint32_t flags;
    /* since 1.1 */
    /** CUDA: used device memory, every process's (NVML's figure; the context fallback: total -
     * free). Host: total_bytes - available_bytes. */
    uint64_t used_bytes;
    /** CUDA: memory the driver reserves for itself, outside total_bytes (NVML version 2); 0 when
     * the driver does not say. Host: 0. */
    uint64_t reserved_bytes;
    /** ::gpuprobe_memory_source. */
    uint32_t source;
    /** CUDA: 1 when this process holds the device's primary CUDA context
     * (cuDevicePrimaryCtxGetState, which creates nothing): the free figure then already excludes
     * its cost. Host: 0. */
    uint32_t context_held;
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

/** @defgroup gpus The GPUs NVML knows (1.2)
 *
 * Every GPU of the machine as NVIDIA's management library (NVML, the
 * library nvidia-smi reads) knows it, whether or not CUDA sees it in this
 * process: a GPU hidden by `CUDA_VISIBLE_DEVICES`, a GPU in MIG mode (never
 * a CUDA device itself) and each of its MIG devices, the processes on
 * each. The devices of gpuprobe_device_count() are what CUDA sees here;
 * this is the machine, numbered as nvidia-smi numbers it.
 *
 * One call, gpuprobe_gpus_read(), reads everything into a snapshot that
 * the other calls only look at: the figures of one refresh belong
 * together, the strings live as long as the snapshot, and nothing changes
 * under a program reading it. A refresh is a new snapshot. Nothing here
 * creates a CUDA context or allocates device memory.
 *
 * Three levels, each designed to grow the way the rest of this header
 * grows: the GPUs' facts are read by key (::gpuprobe_gpu_field, new keys
 * at the end), the MIG devices and processes of a GPU are listed in
 * size-prefixed structs (new fields at the end, #GPUPROBE_MIG_DEVICE_INIT,
 * #GPUPROBE_PROCESS_INIT).
 *
 * Errors are values: a GPU NVML cannot answer for is listed all the same,
 * each field it could not read is ::GPUPROBE_ERR_UNSUPPORTED, and
 * gpuprobe_gpus_why() says why ("nvmlDeviceGetTemperature failed: Not
 * Supported (NVML error 3)").
 *
 * Process IDs are NVML's, that is the driver's: those of the host's PID
 * namespace. Inside a container a process of another container (or of the
 * host) has no entry under this container's /proc, or, rarely, an
 * unrelated process there has the same number; the library gives the
 * numbers as NVML does and reads nothing of /proc.
 *  @{ */

/** Opaque snapshot of the GPUs NVML knows. */
typedef struct gpuprobe_gpus gpuprobe_gpus;

/**
 * Facts of a GPU in a snapshot, read with gpuprobe_gpus_get_int() or
 * gpuprobe_gpus_get_string() according to the type given here. New
 * fields are added at the end; values never change.
 */
typedef enum gpuprobe_gpu_field {
    /** int: NVML's index, as nvidia-smi numbers GPUs and its `-i` takes them (by PCI bus id); the
     * same as ::GPUPROBE_ATTR_NVML_INDEX. */
    GPUPROBE_GPU_INDEX = 0,
    GPUPROBE_GPU_UUID = 1,            /**< string: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx". */
    /** string: the product name, e.g. "NVIDIA H200" (the driver's bytes). */
    GPUPROBE_GPU_NAME = 2,
    /** string: "dddd:bb:dd.f", as ::GPUPROBE_ATTR_PCI_BUS_ID writes it (nvidia-smi writes the
     * domain with eight digits). */
    GPUPROBE_GPU_PCI_BUS_ID = 3,
    /** string: the NVIDIA driver's version, e.g. "580.65.06" (the same for every GPU, as nvidia-
     * smi's `driver_version`). */
    GPUPROBE_GPU_DRIVER_VERSION = 4,
    /** int: device memory as CUDA counts it (NVML's total less RESERVED_BYTES), as
     * gpuprobe_memory_info::total_bytes. */
    GPUPROBE_GPU_TOTAL_BYTES = 5,
    GPUPROBE_GPU_USED_BYTES = 6,      /**< int: device memory used, every process's. */
    GPUPROBE_GPU_FREE_BYTES = 7,      /**< int: device memory free. */
    /** int: memory the driver reserves for itself, outside TOTAL_BYTES (NVML version 2; 0 when only
     * version 1 answers). nvidia-smi's "Total" is TOTAL_BYTES + RESERVED_BYTES. */
    GPUPROBE_GPU_RESERVED_BYTES = 8,
    GPUPROBE_GPU_CC_MAJOR = 9,        /**< int: compute capability, major. */
    GPUPROBE_GPU_CC_MINOR = 10,       /**< int: compute capability, minor. */
    /** int: the current MIG mode, 1 enabled, 0 disabled. UNSUPPORTED on GPUs without MIG. */
    GPUPROBE_GPU_MIG_MODE = 11,
    /** int: the MIG devices listed (gpuprobe_gpus_mig_device()); 0 outside MIG mode. */
    GPUPROBE_GPU_MIG_DEVICES = 12,
    /** int: the processes listed (gpuprobe_gpus_process()), compute and graphics, on the GPU or its
     * MIG devices. */
    GPUPROBE_GPU_PROCESSES = 13,
    /** int: the CUDA ordinal of the whole GPU in this process (N of "cuda:N", device N + 1 of
     * gpuprobe_device_count()), or -1 when CUDA does not see it here (hidden by
     * CUDA_VISIBLE_DEVICES, in MIG mode, CUDA not usable). Matched by UUID. */
    GPUPROBE_GPU_CUDA_INDEX = 14,
    /** int: percent, as ::GPUPROBE_ATTR_GPU_UTILIZATION. UNSUPPORTED in MIG mode. */
    GPUPROBE_GPU_GPU_UTILIZATION = 15,
    /** int: percent, as ::GPUPROBE_ATTR_MEMORY_UTILIZATION. */
    GPUPROBE_GPU_MEMORY_UTILIZATION = 16,
    GPUPROBE_GPU_TEMPERATURE_C = 17,  /**< int: degrees Celsius. */
    GPUPROBE_GPU_POWER_MW = 18,       /**< int: power draw, milliwatts. */
    GPUPROBE_GPU_POWER_LIMIT_MW = 19, /**< int: the enforced power limit, milliwatts. */
    GPUPROBE_GPU_PCIE_GEN = 20,       /**< int: current PCIe link generation. */
    GPUPROBE_GPU_PCIE_WIDTH = 21,     /**< int: current PCIe link width, lanes. */
    /** int: the highest PCIe generation of the GPU and the system together. */
    GPUPROBE_GPU_PCIE_MAX_GEN = 22,
    /** int: the widest PCIe link of the GPU and the system together. */
    GPUPROBE_GPU_PCIE_MAX_WIDTH = 23
} gpuprobe_gpu_field;

/** "Not known" in a byte count of ::gpuprobe_mig_device and ::gpuprobe_process. */
#define GPUPROBE_UNKNOWN_BYTES UINT64_MAX

/**
 * A MIG device of a GPU in MIG mode (a GPU instance with a compute
 * instance: what CUDA can run on, and what a `MIG-` UUID names), whether
 * or not CUDA sees it in this process. Size-prefixed: initialise with
 * #GPUPROBE_MIG_DEVICE_INIT. Strings belong to the snapshot; "" and -1
 * mean unknown.
 */
typedef struct gpuprobe_mig_device {
    size_t size;                 /**< sizeof(gpuprobe_mig_device), set by the caller. */
    /** Its index among the GPU's MIG devices (nvidia-smi's "MIG dev", ::GPUPROBE_ATTR_MIG_INDEX).
     */
    int32_t mig_index;
    int32_t gpu_instance_id;     /**< The GPU instance id (nvidia-smi's "GI ID"); -1 unknown. */
    int32_t compute_instance_id; /**< The compute instance id ("CI ID"); -1 unknown. */
    /** The GPU instance's slices of the GPU (the 1 of "1g.18gb"); -1 unknown. */
    int32_t slices;
    int32_t multiprocessors;     /**< Its streaming multiprocessors; -1 unknown. */
    /** The CUDA ordinal this MIG device has in this process ("cuda:N"), -1 when CUDA does not see
     * it here. Matched by UUID. */
    int32_t cuda_index;
    /** "MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", what CUDA_VISIBLE_DEVICES takes. */
    const char *uuid;
    const char *name;            /**< NVML's name, e.g. "NVIDIA H200 MIG 1g.18gb". */
    const char *profile;         /**< The profile, "1g.18gb": the end of the name. */
    /** Its memory as CUDA counts it; #GPUPROBE_UNKNOWN_BYTES unknown. */
    uint64_t total_bytes;
    uint64_t used_bytes;         /**< Used, every process's; #GPUPROBE_UNKNOWN_BYTES unknown. */
    uint64_t free_bytes;         /**< Free; #GPUPROBE_UNKNOWN_BYTES unknown. */
} gpuprobe_mig_device;

/** Initialiser for ::gpuprobe_mig_device. */
#define GPUPROBE_MIG_DEVICE_INIT                                              \
    {sizeof(gpuprobe_mig_device), -1, -1, -1, -1, -1, -1, "", "", "",         \
     GPUPROBE_UNKNOWN_BYTES, GPUPROBE_UNKNOWN_BYTES, GPUPROBE_UNKNOWN_BYTES}

/** Bits of gpuprobe_process::type. */
#define GPUPROBE_PROCESS_COMPUTE 0x1u  /**< In NVML's compute list: a CUDA (or OpenCL) context. */
/** In NVML's graphics list: OpenGL, Vulkan, a display server. Both bits: nvidia-smi's "C+G". */
#define GPUPROBE_PROCESS_GRAPHICS 0x2u

/**
 * A process on a GPU or one of its MIG devices, as NVML lists it.
 * Size-prefixed: initialise with #GPUPROBE_PROCESS_INIT. A process in both
 * of NVML's lists (compute and graphics) on the same device is one entry
 * with both bits.
 */
typedef struct gpuprobe_process {
    size_t size;                 /**< sizeof(gpuprobe_process), set by the caller. */
    /** The process ID, as NVML gives it (see the group's description). */
    uint32_t pid;
    uint32_t type;               /**< GPUPROBE_PROCESS_* bits. */
    /** Device memory it uses; #GPUPROBE_UNKNOWN_BYTES when NVML says it is not available (e.g.
     * without the privilege to see it). */
    uint64_t used_bytes;
    /** The MIG device it runs on (gpuprobe_mig_device::mig_index); -1 outside MIG mode. */
    int32_t mig_index;
    int32_t gpu_instance_id;     /**< Its GPU instance id; -1 outside MIG mode or unknown. */
    int32_t compute_instance_id; /**< Its compute instance id; -1 outside MIG mode or unknown. */
} gpuprobe_process;

/** Initialiser for ::gpuprobe_process. */
#define GPUPROBE_PROCESS_INIT                                                 \
    {sizeof(gpuprobe_process), 0, 0, GPUPROBE_UNKNOWN_BYTES, -1, -1, -1}

/**
 * Read every GPU NVML knows, with its MIG devices and processes, into a new
 * snapshot. Loads NVML (`libnvidia-ml.so.1`) if no call has yet, and
 * enumerates the CUDA devices (see gpuprobe_device_count()) to tell which
 * GPUs and MIG devices CUDA sees here; creates no CUDA context. The
 * processes of a GPU in MIG mode are read from each of its MIG devices.
 *
 * @param ctx   the context (its messages; the NVML it loaded).
 * @param flags must be 0.
 * @param out   receives the snapshot, destroyed with gpuprobe_gpus_destroy();
 *              NULL on failure.
 * @return ::GPUPROBE_OK (a GPU NVML cannot answer for is in the snapshot,
 *         its fields unknown); ::GPUPROBE_ERR_INVALID_ARGUMENT;
 *         ::GPUPROBE_ERR_UNSUPPORTED when NVML is not usable (not
 *         installed, `GPUPROBE_NVML` or `GPUPROBE_CUDA` turned off, its
 *         initialisation failed, a build without CUDA support: the message
 *         says which); ::GPUPROBE_ERR_CUDA when NVML cannot count the GPUs
 *         (the message names the NVML error); ::GPUPROBE_ERR_OUT_OF_MEMORY.
 */
GPUPROBE_API gpuprobe_status gpuprobe_gpus_read(gpuprobe_context *ctx, unsigned flags,
                                                gpuprobe_gpus **out);

/** Destroy a snapshot. NULL is accepted. */
GPUPROBE_API void gpuprobe_gpus_destroy(gpuprobe_gpus *gpus);

/** The GPUs in the snapshot, in NVML's order (GPU i has index i); 0 for NULL. */
GPUPROBE_API size_t gpuprobe_gpus_count(const gpuprobe_gpus *gpus);

/**
 * Read an integer field of GPU @p gpu (0 .. gpuprobe_gpus_count() - 1).
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_NOT_FOUND for a GPU out of range;
 *         ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL pointers, an unknown
 *         field or a string field; ::GPUPROBE_ERR_UNSUPPORTED when NVML
 *         could not say (gpuprobe_gpus_why() says why). @p value is written
 *         only on success.
 */
GPUPROBE_API gpuprobe_status gpuprobe_gpus_get_int(const gpuprobe_gpus *gpus, size_t gpu,
                                                   gpuprobe_gpu_field field, int64_t *value);

/**
 * Read a string field; the string lives as long as the snapshot. Errors
 * as for gpuprobe_gpus_get_int() (an integer field is
 * ::GPUPROBE_ERR_INVALID_ARGUMENT).
 */
GPUPROBE_API gpuprobe_status gpuprobe_gpus_get_string(const gpuprobe_gpus *gpus, size_t gpu,
                                                      gpuprobe_gpu_field field,
                                                      const char **value);

/**
 * Why a field of a GPU is not known: one line naming the NVML call and its
 * error, e.g. "nvmlDeviceGetUtilizationRates failed: Not Supported (NVML
 * error 3)"; "" when the field is known; a fixed text for a NULL snapshot,
 * a GPU out of range or an unknown field. Never NULL; lives as long as the
 * snapshot.
 */
GPUPROBE_API const char *gpuprobe_gpus_why(const gpuprobe_gpus *gpus, size_t gpu,
                                           gpuprobe_gpu_field field);

/**
 * MIG device @p index (0 .. ::GPUPROBE_GPU_MIG_DEVICES - 1) of GPU @p gpu.
 * @param gpus  the snapshot.
 * @param gpu   the GPU (0 .. gpuprobe_gpus_count() - 1).
 * @param index the MIG device, in NVML's order.
 * @param out caller's struct with `out->size` set (#GPUPROBE_MIG_DEVICE_INIT);
 *            fields beyond `out->size` are not written; written only on
 *            success.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_NOT_FOUND for a GPU or index out of
 *         range; ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL pointers or a
 *         size smaller than the 1.2 struct.
 */
GPUPROBE_API gpuprobe_status gpuprobe_gpus_mig_device(const gpuprobe_gpus *gpus, size_t gpu,
                                                      size_t index, gpuprobe_mig_device *out);

/**
 * Process @p index (0 .. ::GPUPROBE_GPU_PROCESSES - 1) of GPU @p gpu, in
 * NVML's order (a GPU in MIG mode: by MIG device). Errors and @p out as for
 * gpuprobe_gpus_mig_device() (#GPUPROBE_PROCESS_INIT).
 */
GPUPROBE_API gpuprobe_status gpuprobe_gpus_process(const gpuprobe_gpus *gpus, size_t gpu,
                                                   size_t index, gpuprobe_process *out);

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
    /** No reserve (the CPU). */
    GPUPROBE_RESERVE_NONE = 0,
    /** The CUDA context cost measured on this device. */
    GPUPROBE_RESERVE_MEASURED = 1,
    /** #GPUPROBE_DEFAULT_CONTEXT_RESERVE, nothing measured. */
    GPUPROBE_RESERVE_DEFAULT = 2,
    /** Nothing reserved (since 1.1): this process already holds a CUDA context on the device, and
     * the free figure already excludes its cost. */
    GPUPROBE_RESERVE_CONTEXT_HELD = 3
} gpuprobe_reserve_source;

/**
 * Device memory set aside for a CUDA context when its cost cannot be
 * measured: 512 MiB (a context costs ~300-700 MiB depending on lazy or
 * eager module loading).
 */
#define GPUPROBE_DEFAULT_CONTEXT_RESERVE (UINT64_C(512) << 20)

/**
 * The page of device memory the CUDA driver maps (since 1.2): 2 MiB. An
 * allocation takes whole pages, so the largest one that succeeds is a
 * multiple of it.
 */
#define GPUPROBE_ALLOC_PAGE (UINT64_C(2) << 20)

/**
 * The least allocation allowance (since 1.2): 32 MiB. Of the memory a
 * GPU reports free, the driver keeps a part back when it maps an
 * allocation (its page tables and own heaps), so the largest allocation
 * that succeeds is smaller than the free figure (GPU memory testers leave
 * 16 MiB for it, and report 33 MiB on a 64 GiB board). The library counts,
 * on every GPU, an allowance of 1/1024 of the device's total memory
 * (rounded up to #GPUPROBE_ALLOC_PAGE), at least this: 32 MiB on an
 * 8 GiB card, 142 MiB on an H200. The CPU has none.
 */
#define GPUPROBE_ALLOC_ALLOWANCE_MIN (UINT64_C(32) << 20)

/**
 * A capacity estimate against a live device. Size-prefixed; initialise with
 * #GPUPROBE_CAPACITY_INIT.
 */
typedef struct gpuprobe_capacity {
    /** sizeof(gpuprobe_capacity), set by the caller. */
    size_t size;
    /** Device total memory (CPU: total RAM, cgroup-aware). */
    uint64_t total_bytes;
    /** Free memory now (CPU: available RAM, cgroup-aware). */
    uint64_t free_bytes;
    /** Subtracted for a CUDA context: 0 for the CPU, and where this process holds one already. */
    uint64_t reserve_bytes;
    /** What one allocation can get: free_bytes - reserve_bytes, never below 0; on a GPU (since 1.2)
     * rounded down to #GPUPROBE_ALLOC_PAGE and less the allocation allowance (see
     * #GPUPROBE_ALLOC_ALLOWANCE_MIN). */
    uint64_t usable_bytes;
    /** Largest parameter count that fits usable_bytes. */
    uint64_t max_params;
    /** ::gpuprobe_reserve_source. */
    uint32_t reserve_source;
} gpuprobe_capacity;

/** Initialiser for ::gpuprobe_capacity. */
#define GPUPROBE_CAPACITY_INIT {sizeof(gpuprobe_capacity), 0, 0, 0, 0, 0, 0}

/**
 * How many parameters of @p dtype fit on @p device for @p workload, with the
 * numbers used: usable = free - reserve, on a GPU (since 1.2) rounded down
 * to #GPUPROBE_ALLOC_PAGE and less the allocation allowance (see
 * #GPUPROBE_ALLOC_ALLOWANCE_MIN), so that one allocation of usable bytes
 * succeeds: never more than the device gives. For the CPU, usable = available RAM
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
    /** Total parameter count, for a model known only by its size (at most #GPUPROBE_MAX_PARAMS). */
    GPUPROBE_MODEL_PARAMS = 0,
    /** Transformer layers (num_hidden_layers). */
    GPUPROBE_MODEL_LAYERS = 1,
    /** Hidden size (hidden_size). */
    GPUPROBE_MODEL_HIDDEN = 2,
    /** Attention heads (num_attention_heads). */
    GPUPROBE_MODEL_HEADS = 3,
    /** Key/value heads (num_key_value_heads): fewer than HEADS for GQA, 1 for MQA; not given: HEADS
     * (MHA). Must divide HEADS. */
    GPUPROBE_MODEL_KV_HEADS = 4,
    /** Head dimension (head_dim); not given: HIDDEN / HEADS, which must then divide. */
    GPUPROBE_MODEL_HEAD_DIM = 5,
    /** MLP intermediate size, per expert (intermediate_size). */
    GPUPROBE_MODEL_INTERMEDIATE = 6,
    /** Vocabulary size (vocab_size). */
    GPUPROBE_MODEL_VOCAB = 7,
    /** 1: the output head shares the embedding matrix (tie_word_embeddings). */
    GPUPROBE_MODEL_TIED_EMBEDDINGS = 8,
    /** Mixture of experts: experts per layer (num_local_experts); 0 or 1: dense. */
    GPUPROBE_MODEL_EXPERTS = 9,
    /** Experts each token is routed to (num_experts_per_tok); needed when EXPERTS > 1. */
    GPUPROBE_MODEL_EXPERTS_PER_TOKEN = 10,
    /** Attention window in tokens, when it limits the KV cache (sliding_window); 0: none. */
    GPUPROBE_MODEL_SLIDING_WINDOW = 11,
    /** 1: the q, k and v projections have biases (Qwen2). */
    GPUPROBE_MODEL_QKV_BIAS = 12
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
    /** ::gpuprobe_workload: weights only, inference (default) or training. */
    GPUPROBE_PLAN_WORKLOAD = 0,
    /** ::gpuprobe_dtype of the weights. Default bf16. Training: fp32, fp64, fp16 or bf16. */
    GPUPROBE_PLAN_WEIGHTS_DTYPE = 1,
    /** ::gpuprobe_dtype of the KV cache; -1 (default): the compute dtype (fp32 or fp64 for such
     * weights, else bf16). */
    GPUPROBE_PLAN_KV_DTYPE = 2,
    /** Tokens per sequence (prompt and generated; training: sequence length). Default 4096. */
    GPUPROBE_PLAN_CONTEXT = 3,
    /** Sequences at once (training: micro-batch). Default 1. */
    GPUPROBE_PLAN_BATCH = 4,
    /** Inference: tokens of each sequence per forward pass (chunked prefill); 0 (default): the
     * whole context at once. */
    GPUPROBE_PLAN_PREFILL_CHUNK = 5,
    /** Training: 1 for activation checkpointing. Default 0. */
    GPUPROBE_PLAN_CHECKPOINTING = 6,
    /** fp8/int8/int4 weights: weights per fp16 scale. Default 128; 0: no per-group scales. */
    GPUPROBE_PLAN_QUANT_GROUP = 7,
    /** Tensor-parallel GPUs sharing the model. Default 1. The plan is per GPU. */
    GPUPROBE_PLAN_GPUS = 8,
    /** Runtime overhead per device in bytes; -1 (default): the CUDA context, as described above
     * (pure calls: #GPUPROBE_DEFAULT_CONTEXT_RESERVE). */
    GPUPROBE_PLAN_OVERHEAD = 9,
    /** Safety margin per device in bytes. Default 1 GiB. */
    GPUPROBE_PLAN_MARGIN = 10
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
/** The model is only a parameter count: KV cache and activations are the 1.0 rule's 20% (inference)
 * or not counted (training); largest context and batch are unknown (0). */
#define GPUPROBE_PLAN_BY_PARAMS 0x1u
/** The sliding window capped the KV cache below the context. */
#define GPUPROBE_PLAN_WINDOWED 0x2u

/**
 * A plan: what one device needs (with tensor parallelism, one GPU's
 * share), and, from gpuprobe_plan_device(), how it compares with that
 * device. Size-prefixed; initialise with #GPUPROBE_PLAN_INIT.
 */
typedef struct gpuprobe_plan {
    /** sizeof(gpuprobe_plan), set by the caller. */
    size_t size;
    /** Parameters of the whole model. */
    uint64_t params;
    /** Parameters each token uses (fewer than params for mixtures of experts). */
    uint64_t active_params;
    /** KV cache per token on this device (all layers). */
    uint64_t kv_bytes_per_token;
    /** The weights, with quantisation scales. */
    uint64_t weights_bytes;
    /** Training: the gradients; else 0. */
    uint64_t gradient_bytes;
    /** Training: fp32 master weights and Adam moments; else 0. */
    uint64_t optimizer_bytes;
    /** KV cache for batch x context tokens. */
    uint64_t kv_cache_bytes;
    /** Activations and workspace at the peak. */
    uint64_t activation_bytes;
    /** Runtime overhead (the CUDA context where counted). */
    uint64_t overhead_bytes;
    /** Safety margin. */
    uint64_t margin_bytes;
    /** The sum of the seven figures above. */
    uint64_t total_bytes;
    /** gpuprobe_plan_device(): the memory allocations can get on the device: on a GPU its free
     * memory rounded down to #GPUPROBE_ALLOC_PAGE, less the allocation allowance (since 1.2; 1.1:
     * the free memory); the CPU: available RAM, cgroup-aware. Else 0. */
    uint64_t available_bytes;
    /** gpuprobe_plan_device(): the largest context that fits with this batch; else 0. */
    uint64_t largest_context;
    /** gpuprobe_plan_device(): the largest batch that fits with this context; else 0. */
    uint64_t largest_batch;
    /** ::gpuprobe_reserve_source of overhead_bytes (pure calls: #GPUPROBE_RESERVE_DEFAULT, or
     * #GPUPROBE_RESERVE_NONE when set by hand). */
    uint32_t overhead_source;
    /** gpuprobe_plan_device(): 1 when total_bytes <= available_bytes; else 0. */
    uint32_t fits;
    /** GPUPROBE_PLAN_BY_PARAMS, GPUPROBE_PLAN_WINDOWED bits. */
    uint32_t flags;
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
 * the most room for allocations (gpuprobe_plan::available_bytes; ties:
 * lowest index), listed in index order.
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
    /** sizeof(gpuprobe_requirements), set by the caller. */
    size_t size;
    /** Minimum free memory (CPU: available RAM). 0: none. */
    uint64_t min_free_bytes;
    /** Minimum compute capability (major); 0: none. Excludes the CPU when > 0. */
    int32_t min_cc_major;
    /** Minimum compute capability (minor), with min_cc_major. */
    int32_t min_cc_minor;
    /** The device must fit this many parameters (gpuprobe_device_capacity()); 0: none. */
    uint64_t fit_params;
    /** ::gpuprobe_dtype for fit_params. */
    int32_t fit_dtype;
    /** ::gpuprobe_workload for fit_params. */
    int32_t fit_workload;
    /* since 1.1 (a 1.0 caller's smaller size means: none of these) */
    /** A GPU must be busy at most this percent now (0-100, ::GPUPROBE_ATTR_GPU_UTILIZATION); -1
     * (the initialiser's): none. A GPU whose utilisation cannot be read fails it. Excludes the CPU
     * when >= 0. */
    int32_t max_utilization;
    /** 1: no other process may have a CUDA context on the GPU now
     * (::GPUPROBE_ATTR_COMPUTE_PROCESSES, less this process's own); 0: none. A GPU whose processes
     * cannot be read fails it. Excludes the CPU when 1. */
    int32_t no_other_process;
    /* since 1.2 (a 1.0 or 1.1 caller's smaller size means: none of these) */
    /** The device must hold this model under fit_plan: its plan against the device
     * (gpuprobe_plan_device()) fits. NULL (the initialiser's): none. With a model, `auto` and
     * `cuda` choose the device with the most room left after it (gpuprobe_plan::available_bytes -
     * total_bytes) rather than the most free memory. */
    const gpuprobe_model *fit_model;
    /** The workload of fit_model (context, batch, dtypes, ...); NULL: the defaults. Read only with
     * fit_model. */
    const gpuprobe_plan_options *fit_plan;
} gpuprobe_requirements;

/** Initialiser for ::gpuprobe_requirements: no requirement. */
#define GPUPROBE_REQUIREMENTS_INIT                                            \
    {sizeof(gpuprobe_requirements), 0, 0, 0, 0, GPUPROBE_DTYPE_FP16,          \
     GPUPROBE_WORKLOAD_WEIGHTS, -1, 0, NULL, NULL}

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
 * once), then the model (gpuprobe_plan_device(), since 1.2). With a model,
 * the CUDA device chosen by `auto` and `cuda` is the one with the most
 * room left after the model's plan (ties as above), and the reason says
 * how much; a device it does not fit is skipped with what the model needs
 * and what the device has. The arguments (flags, requirements, then the spec) are checked
 * before any device is looked at, so their errors are the same on every
 * machine.
 *
 * @param ctx     the context.
 * @param spec    the program's default spec; not NULL.
 * @param req     requirements, or NULL for none. `req->size` must cover
 *                at least the 1.0 struct (up to `fit_workload`); the 1.1
 *                and 1.2 fields are read only when it covers them.
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
 *         gpuprobe_capacity_bytes()); the errors of gpuprobe_plan_compute()
 *         for a model whose plan cannot be made (checked before any device
 *         is looked at). @p device and @p reason are written only on
 *         success.
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
    /** Rows of A and C. Default 5000 (the lesson's size). */
    GPUPROBE_MATMUL_M = 0,
    /** Columns of B and C. Default: same as M when not set. */
    GPUPROBE_MATMUL_N = 1,
    /** Columns of A, rows of B. Default: same as M when not set. */
    GPUPROBE_MATMUL_K = 2,
    /** ::gpuprobe_dtype: fp32 (default), fp64 (CPU), tf32, fp16 (CUDA), bf16 (CUDA, and since 1.2
     * the CPU where it has AMX-BF16 tiles or AVX512-BF16: the library's own gemm,
     * docs/matmul.md; fp32 accumulation, C in fp32). bf16 on a CPU with neither is
     * GPUPROBE_ERR_UNSUPPORTED, the message saying why (the CPU, Linux's AMX permission, or
     * GPUPROBE_CPU_AMX in the environment). */
    GPUPROBE_MATMUL_DTYPE = 3,
    /** Untimed warm-up calls before the batch is chosen (they absorb first-call loading). Default
     * 1. The search for the steady state follows (#GPUPROBE_MATMUL_WARMUP_MS). */
    GPUPROBE_MATMUL_WARMUP = 4,
    /** Minimum timed runs (samples, see #GPUPROBE_MATMUL_BATCH). Default 5. */
    GPUPROBE_MATMUL_MIN_RUNS = 5,
    /** Maximum timed runs; 0: no cap, the budget alone ends the runs (at most 1,048,576 of them).
     * Default 0 (1.0 and 1.1: 100, which ended the runs before the budget whenever a run lasted
     * under 2.5 ms). A value below MIN_RUNS counts as MIN_RUNS. */
    GPUPROBE_MATMUL_MAX_RUNS = 6,
    /** Keep timing (past MIN_RUNS, up to MAX_RUNS when set) until the timed runs add up to this
     * many milliseconds. Default 250 (1.0: 0, and the wall time since the first run was counted);
     * 0: exactly MIN_RUNS. */
    GPUPROBE_MATMUL_BUDGET_MS = 7,
    /** CUDA: 1 to time host-to-device and device-to-host copies (reported apart). Default 1. */
    GPUPROBE_MATMUL_TRANSFERS = 8,
    /** 1 to verify the result against a double-precision reference. Default 1. */
    GPUPROBE_MATMUL_VERIFY = 9,
    /** Seed of the random inputs. Default 42. */
    GPUPROBE_MATMUL_SEED = 10,
    /** CPU: OpenBLAS threads for this run (restored after); 0 = leave as is (bf16: the threads of
     * the library's gemm; 0 = one per CPU the process may run on). Default 0. OpenBLAS
     * caps the count at its build's MAX_THREADS (64 in Debian's); a count above the threads its
     * pool holds starts more, and those threads stay for the rest of the process (each with a 128
     * MiB buffer and its own stack, in address space) even though the count in force is restored.
     * So 1024 leaves OpenBLAS with 64 threads. GPUPROBE_METRIC_THREADS says what the run used. */
    GPUPROBE_MATMUL_CPU_THREADS = 11,
    /** Number of sampled output entries to verify. Default 256. */
    GPUPROBE_MATMUL_VERIFY_SAMPLES = 12,
    /** (since 1.1) Calls per timed run: each run times this many back-to-back calls as one block
     * and reports the time per call. 0 (the default): automatic, 1 when a call takes 2 ms or more,
     * else enough calls that a block lasts 2 ms, so that sub-millisecond sizes are not timed at
     * the mercy of thread wake-ups and clock reads (like Python's timeit.autorange). 1 times every
     * call alone (1.0's behaviour). GPUPROBE_METRIC_BATCH reports the count used. */
    GPUPROBE_MATMUL_BATCH = 13,
    /** (since 1.2) The bound, in milliseconds of gemm calls, of the warm-up: after the
     * #GPUPROBE_MATMUL_WARMUP calls and the choice of the batch, runs of the batch are made
     * untimed, in windows of 50 ms (one run when a run is that long; 256 runs at most), until the
     * medians of two windows in a row agree within 2% (the steady state: OpenBLAS's buffers mapped
     * and its threads awake on their own CPUs; clocks up on a GPU; a rise too slow to show from one
     * run to the next shows from one window to the next). A run is made only while the
     * warm-up, those calls and the batch's choice included, would stay within this bound if it
     * lasted as long as the last one (the first needs room for two); so calls longer than half the
     * bound get no search. Default 1000; 0: no search (1.1's warm-up). GPUPROBE_METRIC_STEADY says
     * how it ended. */
    GPUPROBE_MATMUL_WARMUP_MS = 14
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
 * 50 ms windows of runs in a row agree within 2% (at most #GPUPROBE_MATMUL_WARMUP_MS), timed
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
    /** double: median of the timed runs. */
    GPUPROBE_METRIC_MEDIAN_S = 0,
    /** double: fastest run. */
    GPUPROBE_METRIC_MIN_S = 1,
    /** double: slowest run. */
    GPUPROBE_METRIC_MAX_S = 2,
    /** double: mean of the runs. */
    GPUPROBE_METRIC_MEAN_S = 3,
    /** double: sample standard deviation of the runs. */
    GPUPROBE_METRIC_STDDEV_S = 4,
    /** double: 2*m*n*k / median / 1e9. */
    GPUPROBE_METRIC_GFLOPS = 5,
    /** double: allocation, input generation, handle creation, library loading, the warm-up runs and
     * the calls that chose the batch (everything before the first timed run but the timed
     * transfers). */
    GPUPROBE_METRIC_SETUP_S = 6,
    /** double: host-to-device copy of A and B (CUDA; 0 for the CPU or with TRANSFERS off). */
    GPUPROBE_METRIC_H2D_S = 7,
    /** double: device-to-host copy of C (same). */
    GPUPROBE_METRIC_D2H_S = 8,
    /** double: largest |c - ref| / (sum |a||b|) over the sampled entries (NaN if a sample was NaN).
     */
    GPUPROBE_METRIC_MAX_ERROR = 9,
    /** double: the tolerance that error was held to. fp32 and fp64: u (2 + min(k, 8 R)), u = 2^-24
     * (fp32) or 2^-52 (fp64) and R the largest sqrt(sum of squared partial sums) / (sum |a||b|)
     * over the samples (about 1 for these inputs, at any k): about 20 u. This tells an fp32 result
     * from one computed with TF32 inputs (error ~2^-11 / sqrt(k)) up to k of about 300,000 when
     * TF32 rounds to nearest and about 1,000,000 when it truncates; beyond that an fp32 result is
     * still held to this bound, but a TF32 one would pass too. tf32, fp16, bf16 (tensor cores):
     * 2^-20 (8 + sqrt(k)), plus 2 x 2^-10 for tf32's inputs. */
    GPUPROBE_METRIC_TOLERANCE = 10,
    /** double: theoretical peak for this dtype; 0 when unknown. */
    GPUPROBE_METRIC_PEAK_GFLOPS = 11,
    /** double: GFLOPS / PEAK_GFLOPS; 0 when the peak is unknown. */
    GPUPROBE_METRIC_PEAK_FRACTION = 12,
    /** int: 1 verified, 0 failed, -1 not checked. */
    GPUPROBE_METRIC_VERIFIED = 13,
    /** int: number of timed runs (each of GPUPROBE_METRIC_BATCH calls). */
    GPUPROBE_METRIC_RUNS = 14,
    /** int: CPU threads used (OpenBLAS); 0 on CUDA. */
    GPUPROBE_METRIC_THREADS = 15,
    /** int: m. */
    GPUPROBE_METRIC_M = 16,
    /** int: n. */
    GPUPROBE_METRIC_N = 17,
    /** int: k. */
    GPUPROBE_METRIC_K = 18,
    /** int: ::gpuprobe_dtype. */
    GPUPROBE_METRIC_DTYPE = 19,
    /** string: the device's name. */
    GPUPROBE_METRIC_DEVICE_NAME = 20,
    /** string: e.g. "OpenBLAS 0.3.21 Haswell" or "cuBLAS 13.0.0". */
    GPUPROBE_METRIC_BACKEND = 21,
    /** string: cuBLAS math mode, e.g. "CUBLAS_DEFAULT_MATH"; "" on the CPU. */
    GPUPROBE_METRIC_MATH_MODE = 22,
    /** string: e.g. "CUBLAS_COMPUTE_32F_FAST_TF32", or "cblas_sgemm" on the CPU. */
    GPUPROBE_METRIC_COMPUTE_TYPE = 23,
    /** int: the device index the run used. */
    GPUPROBE_METRIC_DEVICE = 24,
    /** int (since 1.1): calls per timed run (#GPUPROBE_MATMUL_BATCH): the time figures are per
     * call, each run's block time divided by this. */
    GPUPROBE_METRIC_BATCH = 25,
    /** double (since 1.2): the untimed gemm calls before the first timed run, added (the
     * #GPUPROBE_MATMUL_WARMUP calls, the batch's choice, the warm-up runs), by the clock of the
     * timed runs; part of SETUP_S. */
    GPUPROBE_METRIC_WARMUP_S = 26,
    /** double (since 1.2): the spread of the timed runs, per call: their interquartile range (75th
     * minus 25th percentile, linear between order statistics), as torch.utils.benchmark reports
     * it. IQR_S / MEDIAN_S is the relative spread. */
    GPUPROBE_METRIC_IQR_S = 27,
    /** int (since 1.2): warm-up runs of the batch made in search of the steady state
     * (#GPUPROBE_MATMUL_WARMUP_MS). */
    GPUPROBE_METRIC_WARMUP_RUNS = 28,
    /** int (since 1.2): 1 when the medians of two warm-up windows in a row agreed within 2% (the
     * timed runs began in the steady state); 0 when the warm-up's bound came first: a machine whose
     * speed kept changing (other work on it), or calls so long that two runs do not fit in the
     * bound (then one call's start-up costs are a small part of it); -1 with no search
     * (#GPUPROBE_MATMUL_WARMUP_MS 0). */
    GPUPROBE_METRIC_STEADY = 29
} gpuprobe_matmul_metric;

/**
 * Read a floating-point metric. ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL,
 * unknown or non-double metrics.
 */
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

/** @defgroup bandwidth Memory and link bandwidth (since 1.2)
 *
 * How fast data moves on a device: read-only, copy and triad bandwidth of
 * the host's memory (C kernels on one thread per core, STREAM's rules);
 * on a CUDA device the read bandwidth of its memory (a cuBLAS dot
 * product), device-to-device copies, and host-to-device and
 * device-to-host copies from pinned and from pageable host memory, with
 * the theoretical peaks where the platform states them. docs/bandwidth.md
 * describes what is timed and how bytes are counted.
 *  @{ */

/** Opaque bandwidth options (enum-keyed parameters, as for matmul). */
typedef struct gpuprobe_bandwidth_options gpuprobe_bandwidth_options;

/**
 * Bandwidth parameters. Query the accepted range with
 * gpuprobe_bandwidth_param_bounds(). Values are fixed and never reused.
 */
typedef enum gpuprobe_bandwidth_param {
    /** Bytes of each buffer: each of the CPU's three arrays, each device buffer and each host
     * buffer of a CUDA run. 0 (the default): automatic, at least 4 times the last-level caches of
     * the CPUs used (CPU; at least 64 MiB) or the larger of 1 GiB and 8 times the L2 cache (CUDA),
     * made smaller only when memory is short (#GPUPROBE_BANDWIDTH_METRIC_TARGET_BYTES says what
     * the rule asked). A value of 1 to 4095 is refused by the run
     * (::GPUPROBE_ERR_INVALID_ARGUMENT); a value that does not fit is ::GPUPROBE_ERR_OUT_OF_MEMORY
     * or ::GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY, never made smaller. */
    GPUPROBE_BANDWIDTH_BUFFER_BYTES = 0,
    /** Timed passes of each test: the best and the median are reported. Default 10 (STREAM's). */
    GPUPROBE_BANDWIDTH_RUNS = 1,
    /** Untimed passes of each test before the timed ones. Default 1. */
    GPUPROBE_BANDWIDTH_WARMUP = 2,
    /** The tests to run, a bit mask: bit (1 << t) for each ::gpuprobe_bandwidth_test t. 0 (the
     * default): every test the device has. A test the device does not have makes the run
     * ::GPUPROBE_ERR_UNSUPPORTED. */
    GPUPROBE_BANDWIDTH_TESTS = 3,
    /** CPU: threads. 0 (the default): one per core this process may run on (sched_getaffinity,
     * which the cgroup's cpuset restricts). */
    GPUPROBE_BANDWIDTH_CPU_THREADS = 4,
    /** CPU: 1 (the default) to pin each thread to one CPU this process may run on (cores first),
     * where the system allows it; 0 to leave placement to the scheduler. */
    GPUPROBE_BANDWIDTH_PIN_THREADS = 5
} gpuprobe_bandwidth_param;

/**
 * The tests, and how their bytes are counted (never the hidden
 * write-allocate: STREAM's convention). Values are fixed and never reused.
 */
typedef enum gpuprobe_bandwidth_test {
    /** Read only. CPU: the sum of one array (its bytes). CUDA: cublasSdot of two device buffers
     * (both buffers' bytes). */
    GPUPROBE_BANDWIDTH_TEST_READ = 0,
    /** CPU: c[i] = a[i]; CUDA: a device-to-device cudaMemcpyAsync. Bytes read plus bytes written:
     * twice the buffer. */
    GPUPROBE_BANDWIDTH_TEST_COPY = 1,
    /** CPU only: b[i] = a[i] + s c[i]; three times the array. */
    GPUPROBE_BANDWIDTH_TEST_TRIAD = 2,
    /** CUDA: host to device from pinned (page-locked) host memory; the buffer's bytes. */
    GPUPROBE_BANDWIDTH_TEST_H2D_PINNED = 3,
    /** CUDA: host to device from ordinary (pageable) host memory. */
    GPUPROBE_BANDWIDTH_TEST_H2D_PAGEABLE = 4,
    GPUPROBE_BANDWIDTH_TEST_D2H_PINNED = 5,   /**< CUDA: device to pinned host memory. */
    GPUPROBE_BANDWIDTH_TEST_D2H_PAGEABLE = 6, /**< CUDA: device to pageable host memory. */
    /** CPU only: the sum of one array, each thread reading its part as #GPUPROBE_BANDWIDTH_STREAMS
     * runs side by side (its part cut in that many, one element of each in turn), as a
     * matrix-vector product reads a block of rows at once; the buffer's bytes. One sequential
     * stream per thread (#GPUPROBE_BANDWIDTH_TEST_READ, STREAM's and likwid-bench's loop) keeps
     * fewer reads in flight than memory can serve where a core's bandwidth is bound by latency;
     * gpuprobe_speed_measure() takes a CPU's read bandwidth from this test. (1.2) */
    GPUPROBE_BANDWIDTH_TEST_READ_STREAMS = 7
} gpuprobe_bandwidth_test;

/** The runs side by side of #GPUPROBE_BANDWIDTH_TEST_READ_STREAMS, per thread. */
#define GPUPROBE_BANDWIDTH_STREAMS 8

/**
 * The test's name without its prefix, lower case ("read", "copy",
 * "triad", "h2d_pinned", ...); stable, for JSON and logs. Never NULL:
 * unknown values give "unknown".
 */
GPUPROBE_API const char *gpuprobe_bandwidth_test_name(gpuprobe_bandwidth_test test);

/**
 * Create options holding the defaults.
 * @param out receives the options; set to NULL on failure.
 * @return ::GPUPROBE_OK, ::GPUPROBE_ERR_INVALID_ARGUMENT (NULL @p out) or
 *         ::GPUPROBE_ERR_OUT_OF_MEMORY.
 */
GPUPROBE_API gpuprobe_status
gpuprobe_bandwidth_options_create(gpuprobe_bandwidth_options **out);

/** Destroy options. NULL is accepted. */
GPUPROBE_API void gpuprobe_bandwidth_options_destroy(gpuprobe_bandwidth_options *opts);

/**
 * Set a parameter.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL options,
 *         an unknown parameter or a value out of bounds (nothing is changed).
 */
GPUPROBE_API gpuprobe_status
gpuprobe_bandwidth_options_set(gpuprobe_bandwidth_options *opts,
                               gpuprobe_bandwidth_param param, int64_t value);

/** Read a parameter. ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL or unknown. */
GPUPROBE_API gpuprobe_status
gpuprobe_bandwidth_options_get(const gpuprobe_bandwidth_options *opts,
                               gpuprobe_bandwidth_param param, int64_t *value);

/**
 * The inclusive range a parameter accepts.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for an unknown
 *         parameter or a NULL @p lower or @p upper (nothing is written).
 */
GPUPROBE_API gpuprobe_status
gpuprobe_bandwidth_param_bounds(gpuprobe_bandwidth_param param, int64_t *lower,
                                int64_t *upper);

/** Opaque result of a bandwidth run. */
typedef struct gpuprobe_bandwidth_result gpuprobe_bandwidth_result;

/**
 * Measure bandwidth on @p device.
 *
 * The buffers are allocated and filled first (on the CPU each thread
 * writes the part of each array it later works on, so the memory lies
 * where that thread runs), then each test runs #GPUPROBE_BANDWIDTH_WARMUP
 * untimed passes and #GPUPROBE_BANDWIDTH_RUNS timed ones, the tests taking
 * turns pass by pass. A pass that lasts under 5 ms in the warm-up is
 * repeated back to back and timed as one, and its figures are per
 * repetition. CPU passes are timed on the monotonic clock between two
 * barriers of all threads; CUDA passes with CUDA events on a stream of the
 * library's own, on the primary context of the device (entered and left
 * as by gpuprobe_matmul_run()). During the pinned host-to-device passes the
 * PCIe link is read through NVML while the copies run (an idle GPU may
 * lower its link to save power), and a link below its maximum there is
 * flagged (#GPUPROBE_BANDWIDTH_METRIC_LINK_DEGRADED). After the passes the
 * data is checked (every array element on the CPU, the dot product on a
 * GPU): a wrong value is ::GPUPROBE_ERR_VERIFY_FAILED.
 *
 * Host memory is checked before anything is allocated, as for
 * gpuprobe_matmul_run(). Everything the run allocates or creates (threads,
 * buffers, the stream, events and cuBLAS handle) is released before it
 * returns. cuBLAS is loaded at the first GPU run, as for matmul.
 *
 * @param ctx    the context.
 * @param device the device index (see gpuprobe_device_count()).
 * @param opts   options, or NULL for the defaults.
 * @param flags  must be 0.
 * @param out    receives the result on ::GPUPROBE_OK; NULL otherwise.
 *               Destroy it with gpuprobe_bandwidth_result_destroy().
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT;
 *         ::GPUPROBE_ERR_NOT_FOUND; ::GPUPROBE_ERR_UNSUPPORTED (a test
 *         the device does not have); ::GPUPROBE_ERR_OUT_OF_MEMORY;
 *         ::GPUPROBE_ERR_DEVICE_OUT_OF_MEMORY; ::GPUPROBE_ERR_SYSTEM (a
 *         thread could not be started); ::GPUPROBE_ERR_CUDA_UNAVAILABLE;
 *         ::GPUPROBE_ERR_CUDA; ::GPUPROBE_ERR_VERIFY_FAILED.
 */
GPUPROBE_API gpuprobe_status gpuprobe_bandwidth_run(gpuprobe_context *ctx,
                                                    size_t device,
                                                    const gpuprobe_bandwidth_options *opts,
                                                    unsigned flags,
                                                    gpuprobe_bandwidth_result **out);

/** Destroy a result. NULL is accepted. */
GPUPROBE_API void gpuprobe_bandwidth_result_destroy(gpuprobe_bandwidth_result *result);

/**
 * The figures of one test, read with gpuprobe_bandwidth_result_test().
 * GB/s are 10^9 bytes per second. Values are fixed and never reused.
 */
typedef enum gpuprobe_bandwidth_figure {
    /** Bytes of a pass / its fastest time (STREAM's figure). */
    GPUPROBE_BANDWIDTH_BEST_GBPS = 0,
    GPUPROBE_BANDWIDTH_MEDIAN_GBPS = 1,   /**< Bytes of a pass / the median time. */
    GPUPROBE_BANDWIDTH_WORST_GBPS = 2,    /**< Bytes of a pass / the slowest time. */
    GPUPROBE_BANDWIDTH_BEST_S = 3,        /**< The fastest pass, seconds. */
    GPUPROBE_BANDWIDTH_MEDIAN_S = 4,      /**< The median pass, seconds. */
    /** Bytes counted for one pass (see ::gpuprobe_bandwidth_test). */
    GPUPROBE_BANDWIDTH_BYTES = 5,
    /** BEST_GBPS / the theoretical peak that bounds the test (memory for the reads, copy and
     * triad, the PCIe link as it ran for the host transfers); 0 when that peak is unknown. */
    GPUPROBE_BANDWIDTH_PEAK_FRACTION = 6,
    /** Repetitions per timed pass (1, or more for a pass under 5 ms). */
    GPUPROBE_BANDWIDTH_REPEATS = 7
} gpuprobe_bandwidth_figure;

/**
 * Read a figure of one test.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL or an
 *         unknown test or figure; ::GPUPROBE_ERR_UNSUPPORTED for a test
 *         this result did not measure.
 */
GPUPROBE_API gpuprobe_status
gpuprobe_bandwidth_result_test(const gpuprobe_bandwidth_result *result,
                               gpuprobe_bandwidth_test test,
                               gpuprobe_bandwidth_figure figure, double *value);

/**
 * Figures of the whole run, read with the getter of the type given.
 * Values are fixed and never reused.
 */
typedef enum gpuprobe_bandwidth_metric {
    GPUPROBE_BANDWIDTH_METRIC_DEVICE = 0,           /**< int: the device index. */
    GPUPROBE_BANDWIDTH_METRIC_BUFFER_BYTES = 1,     /**< int: bytes of each buffer used. */
    /** int: what the size rule asked of each buffer (4 x the last-level caches, at least 64 MiB;
     * CUDA: max(1 GiB, 8 x L2)); 0 when the size was given. */
    GPUPROBE_BANDWIDTH_METRIC_TARGET_BYTES = 2,
    /** int: the last-level caches of the CPUs used, summed (CPU), the L2 cache (CUDA); 0 unknown.
     */
    GPUPROBE_BANDWIDTH_METRIC_CACHE_BYTES = 3,
    GPUPROBE_BANDWIDTH_METRIC_THREADS = 4,          /**< int: CPU threads used; 0 on CUDA. */
    GPUPROBE_BANDWIDTH_METRIC_PINNED_THREADS = 5,   /**< int: of them, pinned to one CPU. */
    GPUPROBE_BANDWIDTH_METRIC_RUNS = 6,             /**< int: timed passes of each test. */
    /** int: CUDA: the PCIe generation read while the pinned host-to-device copies ran (the best
     * reading); -1 unknown or not measured. */
    GPUPROBE_BANDWIDTH_METRIC_PCIE_GEN = 7,
    GPUPROBE_BANDWIDTH_METRIC_PCIE_WIDTH = 8,       /**< int: the lanes, likewise; -1 unknown. */
    /** int: the link's maximum generation; -1 unknown. */
    GPUPROBE_BANDWIDTH_METRIC_PCIE_MAX_GEN = 9,
    GPUPROBE_BANDWIDTH_METRIC_PCIE_MAX_WIDTH = 10,  /**< int: its maximum lanes; -1 unknown. */
    /** int: 1 when the link under load ran below its maximum generation or width, 0 when it did
     * not, -1 unknown (not measured, or NVML cannot say). */
    GPUPROBE_BANDWIDTH_METRIC_LINK_DEGRADED = 11,
    /** double: the memory's theoretical rate: CUDA from NVML (bus width x maximum memory clock x
     * 2); CPU from the DMI tables (modules x data width x configured speed). 0 unknown:
     * #GPUPROBE_BANDWIDTH_METRIC_PEAK_SOURCE says why. */
    GPUPROBE_BANDWIDTH_METRIC_MEMORY_PEAK_GBPS = 12,
    /** double: CUDA: the theoretical rate of the PCIe link as it ran, one direction (after line
     * encoding); 0 unknown. */
    GPUPROBE_BANDWIDTH_METRIC_LINK_PEAK_GBPS = 13,
    /** double: the same at the link's maximum generation and width. */
    GPUPROBE_BANDWIDTH_METRIC_LINK_MAX_PEAK_GBPS = 14,
    /** double: allocation, first touch, library loading, before the first pass. */
    GPUPROBE_BANDWIDTH_METRIC_SETUP_S = 15,
    GPUPROBE_BANDWIDTH_METRIC_DEVICE_NAME = 16,     /**< string: the device's name. */
    /** string: how it was measured (kernels and instruction set, threads and placement; the cuBLAS
     * version and calls). */
    GPUPROBE_BANDWIDTH_METRIC_METHOD = 17,
    /** string: where the memory peak came from, or why there is none. */
    GPUPROBE_BANDWIDTH_METRIC_PEAK_SOURCE = 18
} gpuprobe_bandwidth_metric;

/** Read an integer metric. ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL, unknown or non-int metrics. */
GPUPROBE_API gpuprobe_status
gpuprobe_bandwidth_result_get_int(const gpuprobe_bandwidth_result *result,
                                  gpuprobe_bandwidth_metric metric, int64_t *value);

/** Read a floating-point metric. ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL, unknown or non-double
 * metrics. */
GPUPROBE_API gpuprobe_status
gpuprobe_bandwidth_result_get_double(const gpuprobe_bandwidth_result *result,
                                     gpuprobe_bandwidth_metric metric, double *value);

/**
 * Read a string metric; the string lives as long as the result.
 * ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL, unknown or non-string metrics.
 */
GPUPROBE_API gpuprobe_status
gpuprobe_bandwidth_result_get_string(const gpuprobe_bandwidth_result *result,
                                     gpuprobe_bandwidth_metric metric,
                                     const char **value);

/** @} */

/** @defgroup speed How fast will it run? Prefill and decode speed (since 1.2)
 *
 * A plan says whether a model fits; a speed estimate says how fast it runs
 * there: the time to the first token (the prompt's forward pass, prefill)
 * and the tokens per second after it (decode), from figures measured on
 * the device (gpuprobe_speed_measure(): read bandwidth and the matmul's
 * throughput at the model's own shapes) or given by the caller.
 * gpuprobe_speed_compute() is pure arithmetic over them, as
 * gpuprobe_plan_compute() is. docs/speed.md gives the model and its limits:
 * it predicts what an efficient engine attains, not an eager framework.
 *
 * The workload is a ::gpuprobe_plan_options (weights and KV dtypes, batch
 * B, tensor-parallel GPUs t, quantisation groups; its context is not read)
 * and a ::gpuprobe_speed_options (prompt tokens P, generated tokens G, the
 * per-layer overhead, the efficiency). Notation as in the plan group; per
 * GPU with t > 1, so q = H d / t, I per GPU and so on; c the tokens a step
 * attends to (capped by the sliding window).
 *
 * **Decode**: the first token comes out of the prefill; each of the G - 1
 * steps after it feeds one token of each sequence at context c = P + j
 * (j = 1 .. G - 1) and takes
 * max(bytes(c) / read bandwidth, FLOP(c) / decode throughput) + L x the
 * per-layer overhead, summed over the steps (the KV cache read grows as
 * the tokens come). bytes(c) = the weights one step reads (the k routed
 * experts of each token, E (1 - (1 - k/E)^B) of them for a batch, in
 * expectation; the embedding table only when it is the output head) +
 * B x c x the KV cache per token. FLOP(c) = 2 B (the matrices a token
 * multiplies, with the output head) + 4 B L q c (attention).
 *
 * **Prefill**: the prompts' matmuls, rows T = P x B: q, k, v, o
 * 2 T L h (2q + 2Kd/t), the MLP 2 T L 3 h I k, the router 2 T L h E; the
 * causal attention 4 B L q (sum over i = 1..P of min(i, window)); the output
 * head for the last token only, 2 B h V; each divided by the throughput
 * measured at its shape (MLP, attention projections, the decode shape for
 * the head); or, when larger, the weights read once and the KV cache
 * written, at the read bandwidth; plus L x the per-layer overhead.
 *
 * Every figure is reported with the bound that set it, the bandwidth and
 * throughput used (the measured ones times the efficiency) and the
 * overhead assumed. With t > 1 the figures are one GPU's share, and the
 * communication between the GPUs is **not modelled**
 * (#GPUPROBE_SPEED_TP_NOT_MODELLED).
 *  @{ */

/** Opaque speed options (enum-keyed parameters, as for plans). */
typedef struct gpuprobe_speed_options gpuprobe_speed_options;

/**
 * Speed parameters. Query the accepted range with
 * gpuprobe_speed_param_bounds(). Values are fixed and never reused.
 */
typedef enum gpuprobe_speed_param {
    /** Prompt tokens of each sequence (P). Default 512. */
    GPUPROBE_SPEED_PROMPT = 0,
    /** Tokens generated for each sequence (G), the first one by the prefill. Default 128. */
    GPUPROBE_SPEED_GENERATE = 1,
    /** Fixed cost of each layer in each forward pass, in nanoseconds (kernel launches,
     * synchronisation). Default 5000: an engine that launches a few kernels per layer. */
    GPUPROBE_SPEED_LAYER_OVERHEAD_NS = 2,
    /** Percent of the measured bandwidth and throughput the engine attains. Default 100. */
    GPUPROBE_SPEED_EFFICIENCY = 3,
    /** gpuprobe_speed_measure(): milliseconds of timed calls per matmul shape (at least 3 calls).
     * Default 100. */
    GPUPROBE_SPEED_BUDGET_MS = 4,
    /** gpuprobe_speed_measure(): bytes of each buffer of the read-bandwidth measurement; 0 (the
     * default): the bandwidth measurement's size rule. */
    GPUPROBE_SPEED_BUFFER_BYTES = 5,
    /** gpuprobe_speed_measure(): the prefill shapes are measured with at most this many rows
     * (P x B beyond it: the throughput of a large gemm changes little with its rows). Default
     * 2048. */
    GPUPROBE_SPEED_MAX_ROWS = 6,
    /** gpuprobe_speed_measure() on a CPU: the threads the engine runs with, used for the read
     * bandwidth (#GPUPROBE_BANDWIDTH_CPU_THREADS) and the matmuls (#GPUPROBE_MATMUL_CPU_THREADS)
     * alike; 0 (the default): the library's (the read test's one thread per core, OpenBLAS's
     * count as it stands). Figures are kept in the context per count. Not read on a GPU.
     * gpuprobe_speed_figures::cpu_threads says what the runs used. */
    GPUPROBE_SPEED_CPU_THREADS = 7
} gpuprobe_speed_param;

/**
 * Create options holding the defaults.
 * @return ::GPUPROBE_OK, ::GPUPROBE_ERR_INVALID_ARGUMENT (NULL @p out) or
 *         ::GPUPROBE_ERR_OUT_OF_MEMORY; @p out is NULL on failure.
 */
GPUPROBE_API gpuprobe_status gpuprobe_speed_options_create(gpuprobe_speed_options **out);

/** Destroy options. NULL is accepted. */
GPUPROBE_API void gpuprobe_speed_options_destroy(gpuprobe_speed_options *opts);

/**
 * Set a parameter.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL options,
 *         an unknown parameter or a value out of bounds (nothing is changed).
 */
GPUPROBE_API gpuprobe_status gpuprobe_speed_options_set(gpuprobe_speed_options *opts,
                                                        gpuprobe_speed_param param,
                                                        int64_t value);

/** Read a parameter. ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL or unknown. */
GPUPROBE_API gpuprobe_status gpuprobe_speed_options_get(const gpuprobe_speed_options *opts,
                                                        gpuprobe_speed_param param,
                                                        int64_t *value);

/**
 * The inclusive range a parameter accepts.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for an unknown
 *         parameter or a NULL @p lower or @p upper (nothing is written).
 */
GPUPROBE_API gpuprobe_status gpuprobe_speed_param_bounds(gpuprobe_speed_param param,
                                                         int64_t *lower, int64_t *upper);

/** Bits of gpuprobe_speed_figures::flags. */
/** gpuprobe_speed_measure() found every figure in the context's cache: nothing was measured. */
#define GPUPROBE_SPEED_CACHED 0x1u
/** The matmuls ran in another dtype than the weights compute in (the CPU's fp32 for 16-bit
 * weights, except bf16 on a CPU with AMX tiles or AVX512-BF16, timed in bf16 since 1.2; bf16 on
 * a GPU for fp8,
 * int8 and int4 weights). */
#define GPUPROBE_SPEED_DTYPE_SUBSTITUTED 0x2u

/**
 * The figures an estimate divides by: measured by gpuprobe_speed_measure()
 * or given. Rates are per second. Size-prefixed; initialise with
 * #GPUPROBE_SPEED_FIGURES_INIT.
 */
typedef struct gpuprobe_speed_figures {
    /** sizeof(gpuprobe_speed_figures), set by the caller. */
    size_t size;
    /** Read bandwidth of the device's memory, bytes/s (the median of the read test). */
    double read_bytes_per_s;
    /** Matmul throughput at the decode shape (max(B, 16) rows x h x I: below 16 rows a gemm
     * times the packing of its matrix, which an engine's matrix-vector product avoids), FLOP/s. */
    double decode_flops;
    /** Matmul throughput at the prefill MLP shape (T rows x h x I), FLOP/s. */
    double prefill_flops;
    /** Matmul throughput at the prefill attention shape (T rows x h x (q + 2Kd/t)), FLOP/s; 0:
     * prefill_flops. */
    double prefill_attn_flops;
    /** ::gpuprobe_dtype the matmuls ran in; -1 unknown (figures given). */
    int32_t dtype;
    /** GPUPROBE_SPEED_CACHED, GPUPROBE_SPEED_DTYPE_SUBSTITUTED bits. */
    uint32_t flags;
    /** CPU: the threads the figures were measured with (#GPUPROBE_SPEED_CPU_THREADS, else the
     * read test's one per core and OpenBLAS's count): the fewest of the read test's and the
     * matmuls' (OpenBLAS caps its count at its build's maximum); 0 on a GPU and for figures
     * given. */
    int32_t cpu_threads;
} gpuprobe_speed_figures;

/** Initialiser for ::gpuprobe_speed_figures. */
#define GPUPROBE_SPEED_FIGURES_INIT {sizeof(gpuprobe_speed_figures), 0, 0, 0, 0, -1, 0, 0}

/** What set a time. Values are fixed and never reused. */
typedef enum gpuprobe_speed_bound {
    /** The FLOPs at the measured throughput. */
    GPUPROBE_SPEED_BOUND_COMPUTE = 1,
    /** The bytes at the measured read bandwidth. */
    GPUPROBE_SPEED_BOUND_MEMORY = 2
} gpuprobe_speed_bound;

/** Bits of gpuprobe_speed::flags. */
/** Tensor parallel (#GPUPROBE_PLAN_GPUS > 1): one GPU's share; the communication between the GPUs
 * is not counted. */
#define GPUPROBE_SPEED_TP_NOT_MODELLED 0x1u
/** The sliding window capped the KV cache the steps read. */
#define GPUPROBE_SPEED_WINDOWED 0x2u

/**
 * A speed estimate. Times in seconds, rates per second, FLOP and bytes as
 * doubles (exact below 2^53). Size-prefixed; initialise with
 * #GPUPROBE_SPEED_INIT.
 */
typedef struct gpuprobe_speed {
    /** sizeof(gpuprobe_speed), set by the caller. */
    size_t size;
    /** Prefill: the time to the first token (compute or memory, whichever is larger, plus the
     * overhead). */
    double prefill_s;
    /** Prefill: its FLOP, every sequence. */
    double prefill_flop;
    /** Prefill: the bytes it moves (the weights read once, the KV cache written). */
    double prefill_bytes;
    /** Prefill: the FLOP at the throughputs used. */
    double prefill_compute_s;
    /** Prefill: the bytes at the bandwidth used. */
    double prefill_memory_s;
    /** Prefill: the throughput it ran at (prefill_flop / prefill_compute_s). */
    double prefill_flops;
    /** Decode: the G - 1 steps after the first token (0 when G is 1). */
    double decode_s;
    /** Decode: tokens per second of each sequence, (G - 1) / decode_s; when G is 1, that of the
     * step at context P + 1. */
    double decode_tokens_per_s;
    /** Decode: of the whole batch (B x decode_tokens_per_s). */
    double decode_batch_tokens_per_s;
    /** Decode: the weights one step reads. */
    double decode_weight_bytes;
    /** Decode: the bytes of the first step (context P + 1) and of the last (P + G - 1). */
    double decode_bytes_first;
    double decode_bytes_last;   /**< See decode_bytes_first. */
    /** Decode: the bytes of a step, averaged over the steps. */
    double decode_bytes_mean;
    /** Decode: the FLOP of a step, averaged over the steps. */
    double decode_flop_mean;
    /** Decode: the time of the first step and of the last. */
    double decode_step_first_s;
    double decode_step_last_s;  /**< See decode_step_first_s. */
    /** The read bandwidth used (measured x efficiency). */
    double read_bytes_per_s;
    /** The decode-shape throughput used (measured x efficiency). */
    double decode_flops;
    /** The overhead of each layer in each forward pass. */
    double layer_overhead_s;
    /** The efficiency assumed (#GPUPROBE_SPEED_EFFICIENCY / 100). */
    double efficiency;
    /** prefill_s + decode_s. */
    double total_s;
    /** ::gpuprobe_speed_bound of the prefill. */
    uint32_t prefill_bound;
    /** ::gpuprobe_speed_bound of most decode steps (ties: memory). */
    uint32_t decode_bound;
    /** Decode steps that were memory-bound (of G - 1). */
    uint64_t decode_memory_steps;
    /** GPUPROBE_SPEED_TP_NOT_MODELLED, GPUPROBE_SPEED_WINDOWED bits. */
    uint32_t flags;
} gpuprobe_speed;

/** Initialiser for ::gpuprobe_speed. */
#define GPUPROBE_SPEED_INIT                                                   \
    {sizeof(gpuprobe_speed), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,    \
     0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

/**
 * The speed of @p model under @p plan_opts and @p speed_opts with the
 * figures @p fig (pure arithmetic: @p ctx may be NULL).
 *
 * @param ctx        a context for the error message, or NULL.
 * @param model      the model: an architecture (a parameter count alone has no shapes).
 * @param plan_opts  dtypes, batch, GPUs; NULL for the defaults.
 * @param speed_opts prompt, generated tokens, overhead, efficiency; NULL for the defaults.
 * @param fig        the figures (#GPUPROBE_SPEED_FIGURES_INIT, then filled).
 * @param flags      must be 0.
 * @param out        caller's struct with `out->size` set (#GPUPROBE_SPEED_INIT); written only
 *                   on success, no further than its size.
 * @return ::GPUPROBE_OK; ::GPUPROBE_ERR_INVALID_ARGUMENT for NULL arguments, sizes smaller than
 *         the 1.2 structs, flags, a figure that is not a positive finite number (the
 *         read bandwidth, decode_flops and prefill_flops), and the model errors of
 *         gpuprobe_plan_compute(); ::GPUPROBE_ERR_UNSUPPORTED for a model given only by its
 *         parameter count; ::GPUPROBE_ERR_OVERFLOW when a figure is not finite.
 */
GPUPROBE_API gpuprobe_status gpuprobe_speed_compute(gpuprobe_context *ctx,
                                                    const gpuprobe_model *model,
                                                    const gpuprobe_plan_options *plan_opts,
                                                    const gpuprobe_speed_options *speed_opts,
                                                    const gpuprobe_speed_figures *fig,
                                                    unsigned flags, gpuprobe_speed *out);

/**
 * Measure the figures the speed of @p model needs on @p device, briefly:
 * the read bandwidth (gpuprobe_bandwidth_run(), 10 passes: on a CPU the
 * #GPUPROBE_BANDWIDTH_TEST_READ_STREAMS test, on a GPU the read test) and
 * the matmul's throughput (gpuprobe_matmul_run(), verified, at least 3 timed
 * calls in #GPUPROBE_SPEED_BUDGET_MS) at the decode shape and the two
 * prefill shapes, in the dtype the weights compute in (CPU: fp32, fp64 for
 * fp64 weights, bf16 for bf16 weights where the CPU has AMX tiles or
 * AVX512-BF16; CUDA:
 * fp32, fp16 or bf16; bf16 for fp8, int8 and int4).
 * Each figure is kept in the context: a later call on the same device
 * needing the same shape and dtype (the same bandwidth buffer) measures
 * nothing again.
 *
 * @param ctx        the context.
 * @param device     the device index (see gpuprobe_device_count()).
 * @param model      the model (an architecture).
 * @param plan_opts  the workload, or NULL for the defaults.
 * @param speed_opts the prompt and the measurement's budget, or NULL for the defaults.
 * @param flags      must be 0.
 * @param fig        caller's struct (#GPUPROBE_SPEED_FIGURES_INIT); written only on success.
 * @return ::GPUPROBE_OK; the errors of gpuprobe_speed_compute() for the arguments and the
 *         model; ::GPUPROBE_ERR_UNSUPPORTED for fp64 weights on a GPU; the errors of
 *         gpuprobe_matmul_run() and gpuprobe_bandwidth_run().
 */
GPUPROBE_API gpuprobe_status gpuprobe_speed_measure(gpuprobe_context *ctx, size_t device,
                                                    const gpuprobe_model *model,
                                                    const gpuprobe_plan_options *plan_opts,
                                                    const gpuprobe_speed_options *speed_opts,
                                                    unsigned flags,
                                                    gpuprobe_speed_figures *fig);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* GPUPROBE_H */
