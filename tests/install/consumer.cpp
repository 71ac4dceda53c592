// consumer.cpp - a C++ program using an installed libgpuprobe through its
// CMake package. Must compile warning-free as C++11.
//
// SPDX-License-Identifier: BSD-2-Clause
#include <gpuprobe.h>

#include <cstdio>
#include <memory>

namespace {

struct context_deleter {
    void operator()(gpuprobe_context *ctx) const { gpuprobe_context_destroy(ctx); }
};
using context_ptr = std::unique_ptr<gpuprobe_context, context_deleter>;

} // namespace

int main()
{
    static_assert(GPUPROBE_VERSION_MAJOR == 1, "this consumer is written for major 1");
    if (gpuprobe_version() != GPUPROBE_VERSION_NUMBER) {
        std::fprintf(stderr, "consumer-c++: header says %u, library says %u\n",
                     static_cast<unsigned>(GPUPROBE_VERSION_NUMBER), gpuprobe_version());
        return 1;
    }
    gpuprobe_context *raw = nullptr;
    gpuprobe_status st = gpuprobe_context_create(&raw, 0);
    if (st != GPUPROBE_OK) {
        std::fprintf(stderr, "consumer-c++: %s\n", gpuprobe_status_string(st));
        return 1;
    }
    context_ptr ctx(raw);
    std::size_t count = 0;
    st = gpuprobe_device_count(ctx.get(), &count);
    if (st != GPUPROBE_OK || count < 1) {
        std::fprintf(stderr, "consumer-c++: device count: %s (%s)\n",
                     gpuprobe_status_string(st), gpuprobe_last_error(ctx.get()));
        return 1;
    }
    gpuprobe_cuda_cause cause = GPUPROBE_CUDA_OTHER;
    const char *detail = nullptr;
    st = gpuprobe_cuda_status(ctx.get(), &cause, &detail);
    if (st != GPUPROBE_OK || detail == nullptr) {
        std::fprintf(stderr, "consumer-c++: cuda status: %s\n", gpuprobe_status_string(st));
        return 1;
    }
    std::printf("consumer-c++: libgpuprobe %s, %lu device(s), CUDA %s: %s\n",
                gpuprobe_version_string(), static_cast<unsigned long>(count),
                gpuprobe_cuda_cause_name(cause), detail);
    return 0;
}
