/*
 * nfd.h - what gpuprobe-nfd knows about a node (its facts), the node
 * labels made from them, and the Node Feature Discovery feature file that
 * carries them. See gpuprobe-nfd(1) and docs/kubernetes.md.
 *
 * Three steps, kept apart so that each can be tested alone:
 *
 *   nfd_gather()    every libgpuprobe call the labels need, in one place
 *   nfd_labels()    facts -> labels: no library call, no I/O
 *   nfd_file_text() labels -> the feature file (NFD's local source format)
 *
 * Uses only the public API (gpuprobe.h) and labels.h; linked by the command
 * against the shared library and by the unit tests against the internal
 * one, whose test seam simulates GPUs.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_NFD_H
#define GPUPROBE_NFD_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gpuprobe.h"
#include "labels.h"

/* The label prefix when none is given. */
#define NFD_DEFAULT_PREFIX "gpuprobe.io"

/* nfd_facts.mig_mode; zero is unknown, so facts made with {0} have none. */
enum { NFD_MIG_UNKNOWN = 0, NFD_MIG_DISABLED = 1, NFD_MIG_ENABLED = 2 };

/* Index of measured figures: the matmul dtypes, fp32 to bf16. */
#define NFD_DTYPES (GPUPROBE_DTYPE_BF16 + 1)

/* One CUDA device, as the probe saw it. */
typedef struct nfd_gpu {
    size_t device;       /* the library's device index */
    const char *name;    /* product name; NULL when unknown */
    int cc_major;        /* compute capability; -1 when unknown */
    int cc_minor;
    uint64_t total_bytes; /* device memory; 0 when unknown */
} nfd_gpu;

typedef struct nfd_facts {
    gpuprobe_cuda_cause cause;
    int driver_version;  /* CUDA version the driver supports, 1000 * major +
                          * 10 * minor as CUDA encodes it; 0 when unknown */
    int runtime_version; /* of the CUDA runtime loaded; 0 when unknown */
    size_t n_gpus;       /* usable CUDA devices */
    nfd_gpu *gpus;       /* [n_gpus], in CUDA order */
    int mig_mode;        /* of the labelled product's first GPU (nfd_product()):
                          * NFD_MIG_UNKNOWN (0), NFD_MIG_DISABLED or NFD_MIG_ENABLED */

    /* Measured (--bench); 0 where nothing verified was measured. GFLOP/s
     * of the library's matmul, by dtype: on the labelled product's first
     * GPU, and on the CPU. */
    int benched;
    double gpu_gflops[NFD_DTYPES];
    double cpu_gflops[NFD_DTYPES];
    /* The largest fp16 (and bf16: the same size) model that fits each GPU
     * of that product (the smallest), weights only and for inference;
     * have_fit 0 when unknown. */
    int have_fit;
    uint64_t fit_weights, fit_inference; /* parameters */

    size_t failures; /* queries that failed (reported); their labels are left out */
} nfd_facts;

/* The product the gpu.* labels describe: the most common product name
 * among the GPUs, ties going to the one that comes first in CUDA order.
 * Returns the index in f->gpus of its first GPU and writes how many GPUs
 * are of that product and how many distinct products there are; returns
 * (size_t)-1 when there is no GPU. */
size_t nfd_product(const nfd_facts *f, size_t *count, size_t *models);

typedef struct nfd_options {
    int bench;         /* measure: matmul per precision, fit */
    int64_t size;      /* matmul size (N x N x N); 0: the library's default */
} nfd_options;

/* Called for each failed query that leaves a fact unknown, right after
 * the call: gpuprobe_last_error(ctx) still says what failed. */
typedef void nfd_fail_fn(void *arg, gpuprobe_context *ctx, gpuprobe_status st,
                         const char *what);

/*
 * Ask the library for every fact: the CUDA answer and versions, each GPU's
 * name, compute capability and total memory (none of which creates a CUDA
 * context), and with opt->bench the measured figures (which do: a matmul
 * runs on the labelled product's first GPU, and on the CPU).
 *
 * opt may be NULL (no measurement); fail may be NULL.
 *
 * A fact the system does not know (an UNSUPPORTED answer, a version with
 * no driver loaded, a precision the GPU lacks) is left unknown silently;
 * any other failure is passed to fail() and counted in f->failures.
 * Returns GPUPROBE_OK, or the status of a failure that leaves nothing to
 * label (the CUDA question or the device count could not be answered, or
 * out of memory); free the facts with nfd_facts_free() either way.
 */
gpuprobe_status nfd_gather(gpuprobe_context *ctx, const nfd_options *opt, nfd_facts *f,
                           nfd_fail_fn *fail, void *arg);

void nfd_facts_free(nfd_facts *f);

/* One node label. */
typedef struct nfd_label {
    char key[LABEL_KEY_MAX + 1];
    char value[LABEL_VALUE_MAX + 1];
} nfd_label;

/* Upper bound of the labels nfd_labels() makes. */
#define NFD_MAX_LABELS 32

/* Which labels: what the probe knows, what was measured, or both. */
#define NFD_PROBE 0x1u
#define NFD_MEASURED 0x2u

/*
 * The labels for the facts, under prefix (a valid DNS subdomain, e.g.
 * NFD_DEFAULT_PREFIX), in a fixed order; unknown facts give no label.
 * Writes at most NFD_MAX_LABELS labels to out and returns how many.
 * docs/kubernetes.md lists every label.
 */
size_t nfd_labels(const nfd_facts *f, const char *prefix, unsigned which, nfd_label *out);

/* "2026-11-30T18:24:08Z" (RFC 3339, UTC): 21 bytes with the NUL. Returns
 * 0, or -1 when the time cannot be written so. */
int nfd_rfc3339(time_t t, char buf[21]);

/*
 * The feature file of Node Feature Discovery's local source: a comment
 * naming the command and version, the expiry directive
 * ("# +expiry-time=<expiry>") when expiry is not NULL, then one
 * "key=value" line per label. Returns a malloc'd string (NULL when out of
 * memory) and its length in *len.
 */
char *nfd_file_text(const nfd_label *labels, size_t n, const char *expiry, size_t *len);

/* Largest feature file NFD reads: larger ones are ignored. */
#define NFD_FILE_MAX 65536

#endif
