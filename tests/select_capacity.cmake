# Runs of the select_device and vram_capacity examples on this machine
# (their commands, gpuprobe-select and gpuprobe-fit, are tested in
# tools.cmake; both against simulated GPUs in simcuda.cmake), through
# tests/tools/run.py.
#
# SPDX-License-Identifier: BSD-2-Clause

if(NOT TARGET select_device OR NOT TARGET vram_capacity)
  return()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/tools/run.cmake)

# -- select_device --------------------------------------------------------
# The lesson's line, whatever this machine has.
gpuprobe_run_test(example.select_device select_device
  --out "\\AUsing: (cpu|cuda:[0-9]+)\n" --out "\nDevice: [^\n]+\n" --out "\nReason: [^\n]+")
# CUDA turned off: deterministic "Using: cpu" with the cause in the reason.
gpuprobe_run_test(example.select_device.cuda_off select_device --env GPUPROBE_CUDA=off
  --out "\\AUsing: cpu\n" --out "\nReason: auto: CUDA not usable \\(")
gpuprobe_run_test(example.select_device.cpu select_device --out "\\AUsing: cpu\n" -- --device cpu)
# GPUPROBE_DEVICE overrides --device.
gpuprobe_run_test(example.select_device.env_cpu select_device --env GPUPROBE_DEVICE=cpu
  --out "\\AUsing: cpu\n" --out "GPUPROBE_DEVICE" -- --device cuda:12345)
# Explicit CUDA that is not usable: exit 1, the cause named, no fallback.
gpuprobe_run_test(example.select_device.env_cuda_unusable select_device --rc 1
  --env GPUPROBE_DEVICE=cuda --env GPUPROBE_CUDA=off
  --err "CUDA is not usable" --err "\\((disabled|not_built)\\)" --err "GPUPROBE_DEVICE")
# An ordinal no machine has: exit 1 here (CUDA unusable) and on a GPU
# machine (not found).
gpuprobe_run_test(example.select_device.env_cuda_4096 select_device --rc 1
  --env GPUPROBE_DEVICE=cuda:4096 --err "cuda:4096")
# Malformed input: exit 2, quoted, never a crash.
gpuprobe_run_test(example.select_device.env_bogus select_device --rc 2
  --env GPUPROBE_DEVICE=bogus --err "GPUPROBE_DEVICE" --err "\"bogus\"")
gpuprobe_run_test(example.select_device.device_malformed select_device --rc 2
  --err "\"cuda:01\"" --err "leading zero" -- --device cuda:01)
gpuprobe_run_test(example.select_device.bad_min_free select_device --rc 2
  "--err=--min-free" -- --min-free lots)
gpuprobe_run_test(example.select_device.no_fit select_device --rc 1
  --err "no device meets the requirements" --err "cpu: " -- --min-free 1e18)

# -- vram_capacity --------------------------------------------------------
gpuprobe_run_test(example.vram_capacity vram_capacity
  --out "\\Acpu: [0-9.]+ [kMGTP]?B usable of [0-9.]+ [kMGTP]?B total \\(available RAM\\)\n"
  --out "\n  largest fp16 model: [0-9.]+ ?[KMBTQ]? parameters")
gpuprobe_run_test(example.vram_capacity.params vram_capacity
  --out "fp16 weights +needs +14.0 GB: (fits|does not fit)"
  --out "fp16 inference +needs +16.8 GB: " --out "fp16 training +needs +112.0 GB: " -- --params 7e9)
gpuprobe_run_test(example.vram_capacity.bad_params vram_capacity --rc 2
  "--err=--params" -- --params seven)
gpuprobe_run_test(example.vram_capacity.too_many_params vram_capacity --rc 2
  "--err=--params" -- --params 2e15)
