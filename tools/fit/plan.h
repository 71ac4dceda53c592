/*
 * plan.h - gpuprobe-fit --model: a model's plan against each device, the
 * best device with the largest context and batch that fit there, the
 * fewest GPUs that hold it, as a table (rows: weights, KV cache,
 * activations, overhead, margin, total; columns: the devices) or as JSON.
 * With --prompt or --generate, the speed on each device too (rows: the
 * time to the first token, decode tokens/s; a line per device saying the
 * bound and the figures measured). Every figure comes from the library
 * (gpuprobe_plan_compute(), gpuprobe_plan_device(), gpuprobe_plan_gpus(),
 * gpuprobe_speed_measure(), gpuprobe_speed_compute()); nothing here
 * computes a byte count or a time of its own.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef GPUPROBE_FIT_PLAN_H
#define GPUPROBE_FIT_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* Most devices a plan is shown for (the CPU and 255 GPUs). */
#define FIT_MAX_DEVICES 256

typedef enum fit_solve { FIT_SOLVE_NONE = 0, FIT_SOLVE_CONTEXT, FIT_SOLVE_BATCH } fit_solve;

typedef struct fit_question {
    const char *name;             /* --model as given */
    cli_model_found found;        /* where its config is */
    cli_model_config cfg;         /* the config read */
    gpuprobe_plan_options *opts;  /* the workload */
    int64_t gpus;                 /* --gpus N (1: no tensor parallelism) */
    int gpus_all;                 /* --gpus all: every CUDA device */
    int context_given;            /* --context was given */
    fit_solve solve;              /* --max-context, --max-batch */
    int fewest;                   /* ask for the fewest GPUs (--device auto or cuda) */
    int speed;                    /* --prompt or --generate: estimate the speed too */
    gpuprobe_speed_options *sopts; /* the speed options given; NULL: none */
    const char *roofline;         /* --roofline FILE (with the speed); NULL: none */
} fit_question;

/* The plan of q against the devices listed (library indices), printed as
 * text or JSON. Returns the exit status: 0 when the model fits (on one of
 * the devices, or split over the fewest GPUs; with --gpus N, on N GPUs),
 * 1 when it does not or a device could not be read, 2 when the library
 * refuses the question (GPUs that do not divide the heads). */
int fit_plan_run(gpuprobe_context *ctx, fit_question *q, const size_t *devices, size_t n);

#endif
