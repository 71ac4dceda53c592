// header_cxx.cpp - compile-only test of the public header in C++11
// (-Wall -Wextra -Wpedantic -Werror): extern "C" linkage, no C-only
// constructs, initialiser macros usable as aggregate initialisers.
//
// SPDX-License-Identifier: BSD-2-Clause
#include <gpuprobe.h>
#include <gpuprobe.h>

#include <type_traits>

static_assert(GPUPROBE_OK == 0, "GPUPROBE_OK is 0");
static_assert(std::is_same<decltype(&gpuprobe_version), unsigned (*)()>::value,
              "gpuprobe_version returns unsigned");

int gpuprobe_header_test_cxx();

int gpuprobe_header_test_cxx()
{
    gpuprobe_memory_info memory = GPUPROBE_MEMORY_INFO_INIT;
    gpuprobe_capacity capacity = GPUPROBE_CAPACITY_INIT;
    gpuprobe_requirements req = GPUPROBE_REQUIREMENTS_INIT;
    gpuprobe_plan plan = GPUPROBE_PLAN_INIT;
    gpuprobe_mig_device mig = GPUPROBE_MIG_DEVICE_INIT;
    gpuprobe_process process = GPUPROBE_PROCESS_INIT;
    const char *version = GPUPROBE_VERSION_STRING;
    gpuprobe_status (*create)(gpuprobe_context **, unsigned) = gpuprobe_context_create;
    return static_cast<int>(memory.size + capacity.size + req.size + plan.size + mig.size +
                            process.size) +
           (version[0] == '1') + (create != nullptr);
}
