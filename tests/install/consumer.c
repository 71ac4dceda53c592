/*
 * consumer.c - a program outside the project that uses an installed
 * libgpuprobe, built through pkg-config (gpuprobe or gpuprobe-static) or
 * through the CMake package. Must compile warning-free as C99 and C11.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <gpuprobe.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    const char *label = argc > 1 ? argv[1] : "consumer";
    gpuprobe_context *ctx = NULL;
    gpuprobe_cuda_cause cause = GPUPROBE_CUDA_OTHER;
    const char *detail = NULL;
    size_t count = 0;
    gpuprobe_status st;
    unsigned version = gpuprobe_version();

    if (version != GPUPROBE_VERSION_NUMBER) {
        fprintf(stderr, "%s: header says %u, library says %u\n", label,
                (unsigned)GPUPROBE_VERSION_NUMBER, version);
        return 1;
    }
    st = gpuprobe_context_create(&ctx, 0);
    if (st != GPUPROBE_OK) {
        fprintf(stderr, "%s: gpuprobe_context_create: %s\n", label,
                gpuprobe_status_string(st));
        return 1;
    }
    st = gpuprobe_device_count(ctx, &count);
    if (st != GPUPROBE_OK || count < 1) {
        fprintf(stderr, "%s: gpuprobe_device_count: %s (%s), count %lu\n",
                label, gpuprobe_status_string(st), gpuprobe_last_error(ctx),
                (unsigned long)count);
        gpuprobe_context_destroy(ctx);
        return 1;
    }
    st = gpuprobe_cuda_status(ctx, &cause, &detail);
    if (st != GPUPROBE_OK || detail == NULL) {
        fprintf(stderr, "%s: gpuprobe_cuda_status: %s\n", label,
                gpuprobe_status_string(st));
        gpuprobe_context_destroy(ctx);
        return 1;
    }
    {
        /* a 1.1 call: the plan of 7e9 bf16 parameters, weights only */
        gpuprobe_model *model = NULL;
        gpuprobe_plan_options *opts = NULL;
        gpuprobe_plan plan = GPUPROBE_PLAN_INIT;
        st = gpuprobe_model_create(&model);
        if (st == GPUPROBE_OK)
            st = gpuprobe_model_set(model, GPUPROBE_MODEL_PARAMS, 7000000000);
        if (st == GPUPROBE_OK)
            st = gpuprobe_plan_options_create(&opts);
        if (st == GPUPROBE_OK)
            st = gpuprobe_plan_options_set(opts, GPUPROBE_PLAN_WORKLOAD,
                                           GPUPROBE_WORKLOAD_WEIGHTS);
        if (st == GPUPROBE_OK)
            st = gpuprobe_plan_compute(ctx, model, opts, 0, &plan);
        gpuprobe_plan_options_destroy(opts);
        gpuprobe_model_destroy(model);
        if (st != GPUPROBE_OK || plan.weights_bytes != 14000000000u) {
            fprintf(stderr, "%s: gpuprobe_plan_compute: %s (%s)\n", label,
                    gpuprobe_status_string(st), gpuprobe_last_error(ctx));
            gpuprobe_context_destroy(ctx);
            return 1;
        }
    }
    printf("%s: libgpuprobe %s, %lu device(s), CUDA %s: %s\n", label,
           gpuprobe_version_string(), (unsigned long)count,
           gpuprobe_cuda_cause_name(cause), detail);
    gpuprobe_context_destroy(ctx);
    return 0;
}
