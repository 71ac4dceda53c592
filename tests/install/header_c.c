/*
 * header_c.c - compile-only test of the public header in C (C99 and C11,
 * -Wall -Wextra -Wpedantic -Werror): it must be self-contained, idempotent,
 * and its initialiser macros must be warning-free.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include <gpuprobe.h>
#include <gpuprobe.h> /* include guard */

#if !defined(GPUPROBE_VERSION_MAJOR) || !defined(GPUPROBE_VERSION_NUMBER)
#error "version macros missing"
#endif

typedef char gpuprobe_test_ok_is_zero[GPUPROBE_OK == 0 ? 1 : -1];
typedef char gpuprobe_test_size_first[sizeof(gpuprobe_memory_info) > sizeof(size_t) ? 1 : -1];

int gpuprobe_header_test(void);

int gpuprobe_header_test(void)
{
    gpuprobe_memory_info memory = GPUPROBE_MEMORY_INFO_INIT;
    gpuprobe_capacity capacity = GPUPROBE_CAPACITY_INIT;
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    gpuprobe_plan plan = GPUPROBE_PLAN_INIT;
    gpuprobe_mig_device mig = GPUPROBE_MIG_DEVICE_INIT;
    gpuprobe_process process = GPUPROBE_PROCESS_INIT;
    const char *version = GPUPROBE_VERSION_STRING;
    unsigned flags = GPUPROBE_SELECT_IGNORE_ENV | GPUPROBE_MEMORY_CGROUP_LIMITED;
    uint64_t limit = GPUPROBE_MAX_PARAMS + GPUPROBE_DEFAULT_CONTEXT_RESERVE;
    gpuprobe_status (*create)(gpuprobe_context **, unsigned) = gpuprobe_context_create;

    return (int)(memory.size + capacity.size + req.size + plan.size + mig.size + process.size) +
           (version[0] == '1') + (int)flags + (limit > 0) + (create != NULL);
}
