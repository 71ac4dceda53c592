# The simulated NVIDIA stack (tests/simcuda/) and the scenario tests that
# run the unmodified library against it. Included by tests/CMakeLists.txt.
#
# Layout of the build (SIMCUDA_DIR = <build>/simcuda):
#   core/libsimcuda.so   the shared state and the simcuda_* control API
#   lib/                 libcuda.so.1, libnvidia-ml.so.1, libcudart.so.13,
#                        libcudart.so.12, libcublas.so.13, libcublas.so.12
#   rt13/, rt12/         only the CUDA 13 (12) runtime and cuBLAS, for
#                        GPUPROBE_CUDA_LIBDIR; empty/ holds nothing
#   nonvml/              the driver, the CUDA 13 runtime and cuBLAS: no NVML
# Scenario tests put lib/ on LD_LIBRARY_PATH (the driver and NVML are found
# there, and the runtime and cuBLAS too unless GPUPROBE_CUDA_LIBDIR says
# otherwise), so the simulation is what the library loads, never a CUDA
# library installed on the machine.

if(NOT GPUPROBE_HAVE_CUDA)
  message(STATUS "libgpuprobe: scenario tests skipped (the simulated NVIDIA stack is built from the CUDA headers, and this build has none)")
  add_test(NAME scenario.skipped
    COMMAND sh -c "echo 'SKIP: scenario tests need the simulated NVIDIA stack, which is built only when the CUDA headers are found'; exit 77")
  set_tests_properties(scenario.skipped PROPERTIES SKIP_RETURN_CODE 77 LABELS scenario)
  return()
endif()

set(SIMCUDA_SRC ${CMAKE_CURRENT_SOURCE_DIR}/simcuda)
set(SIMCUDA_DIR ${PROJECT_BINARY_DIR}/simcuda)

include(${SIMCUDA_SRC}/names.cmake)
simcuda_generate_names(${GPUPROBE_CUDA_INCLUDE_DIR} ${SIMCUDA_DIR}/gen/sim_names.inc)

add_library(simcuda SHARED ${SIMCUDA_SRC}/core.c ${SIMCUDA_SRC}/config.c
  ${SIMCUDA_SRC}/names.c ${SIMCUDA_SRC}/gemm.c)
target_include_directories(simcuda PUBLIC ${SIMCUDA_SRC} PRIVATE ${SIMCUDA_DIR}/gen)
target_include_directories(simcuda SYSTEM PUBLIC ${GPUPROBE_CUDA_INCLUDE_DIR})
target_compile_definitions(simcuda PRIVATE _GNU_SOURCE)
target_link_libraries(simcuda PRIVATE Threads::Threads m)
set_target_properties(simcuda PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${SIMCUDA_DIR}/core)

# One library with a real SONAME: file and SONAME are `soname`; it finds
# libsimcuda.so through $ORIGIN/../core.
function(simcuda_library target soname source)
  add_library(${target} SHARED ${SIMCUDA_SRC}/${source})
  target_link_libraries(${target} PRIVATE simcuda ${CMAKE_DL_LIBS} Threads::Threads)
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE ${ARGN})
  set_target_properties(${target} PROPERTIES PREFIX "" OUTPUT_NAME ${soname} SUFFIX ""
    LIBRARY_OUTPUT_DIRECTORY ${SIMCUDA_DIR}/lib
    BUILD_RPATH_USE_ORIGIN ON)
  target_link_options(${target} PRIVATE "-Wl,-soname,${soname}" "-Wl,--enable-new-dtags")
endfunction()
simcuda_library(simcuda_driver libcuda.so.1 driver.c)
simcuda_library(simcuda_nvml libnvidia-ml.so.1 nvml.c)
simcuda_library(simcuda_cudart13 libcudart.so.13 runtime.c SIM_RT_VERSION=13000)
simcuda_library(simcuda_cudart12 libcudart.so.12 runtime.c SIM_RT_VERSION=12080)
simcuda_library(simcuda_cublas13 libcublas.so.13 cublas.c SIM_BLAS_VERSION=130100)
simcuda_library(simcuda_cublas12 libcublas.so.12 cublas.c SIM_BLAS_VERSION=120901)
set(SIMCUDA_LIBRARIES simcuda_driver simcuda_nvml simcuda_cudart13 simcuda_cudart12
  simcuda_cublas13 simcuda_cublas12)

# The directories a scenario points GPUPROBE_CUDA_LIBDIR at.
add_custom_target(simcuda_layout ALL
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SIMCUDA_DIR}/rt13 ${SIMCUDA_DIR}/rt12 ${SIMCUDA_DIR}/empty
  COMMAND ${CMAKE_COMMAND} -E create_symlink ../lib/libcudart.so.13 ${SIMCUDA_DIR}/rt13/libcudart.so.13
  COMMAND ${CMAKE_COMMAND} -E create_symlink ../lib/libcublas.so.13 ${SIMCUDA_DIR}/rt13/libcublas.so.13
  COMMAND ${CMAKE_COMMAND} -E create_symlink ../lib/libcudart.so.12 ${SIMCUDA_DIR}/rt12/libcudart.so.12
  COMMAND ${CMAKE_COMMAND} -E create_symlink ../lib/libcublas.so.12 ${SIMCUDA_DIR}/rt12/libcublas.so.12
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SIMCUDA_DIR}/nonvml
  COMMAND ${CMAKE_COMMAND} -E create_symlink ../lib/libcuda.so.1 ${SIMCUDA_DIR}/nonvml/libcuda.so.1
  COMMAND ${CMAKE_COMMAND} -E create_symlink ../lib/libcudart.so.13 ${SIMCUDA_DIR}/nonvml/libcudart.so.13
  COMMAND ${CMAKE_COMMAND} -E create_symlink ../lib/libcublas.so.13 ${SIMCUDA_DIR}/nonvml/libcublas.so.13
  VERBATIM)
add_dependencies(simcuda_layout ${SIMCUDA_LIBRARIES})

# ---- tests --------------------------------------------------------------------

# What every scenario run starts from: no CUDA variable of the caller's,
# the simulated libraries first on the loader's path; NO_DRIVER leaves the
# simulated driver off it.
function(simcuda_test_env test)
  set(env "CMOCKA_MESSAGE_OUTPUT=stdout")
  set(mod "GPUPROBE_DEVICE=unset:;GPUPROBE_CUDA=unset:;GPUPROBE_NVML=unset:;GPUPROBE_CUDA_LIBDIR=unset:;CUDA_VISIBLE_DEVICES=unset:;CUDA_DEVICE_ORDER=unset:;NVIDIA_TF32_OVERRIDE=unset:;SIMCUDA_FLEET=unset:;SIMCUDA_CONFIG=unset:;SIMCUDA_LOG=unset:")
  if("${ARGN}" STREQUAL "NO_DRIVER")
    string(APPEND mod ";LD_LIBRARY_PATH=unset:")
  elseif("${ARGN}" STREQUAL "NO_NVML")
    string(APPEND env ";LD_LIBRARY_PATH=${SIMCUDA_DIR}/nonvml")
  else()
    string(APPEND env ";LD_LIBRARY_PATH=${SIMCUDA_DIR}/lib")
  endif()
  set_tests_properties(${test} PROPERTIES LABELS scenario TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "${env}" ENVIRONMENT_MODIFICATION "${mod}")
endfunction()

# Give a scenario's programs a fleet: the configuration text (';' between
# lines) goes to a file named after the test, which SIMCUDA_CONFIG names.
function(simcuda_test_fleet test fleet)
  string(REPLACE ";" "\n" text "${fleet}")
  file(WRITE ${SIMCUDA_DIR}/fleets/${test}.conf "${text}\n")
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT_MODIFICATION
    "SIMCUDA_CONFIG=set:${SIMCUDA_DIR}/fleets/${test}.conf")
endfunction()

# The simulation's own tests, through the CUDA APIs as an application uses them.
add_executable(sim_selftest ${SIMCUDA_SRC}/selftest.c)
target_compile_definitions(sim_selftest PRIVATE _GNU_SOURCE)
target_link_libraries(sim_selftest PRIVATE simcuda simcuda_driver simcuda_cudart13
  simcuda_cublas13 simcuda_nvml PkgConfig::CMOCKA Threads::Threads m)
add_test(NAME scenario.sim_selftest COMMAND sim_selftest)
simcuda_test_env(scenario.sim_selftest)

# A scenario program: tests/simcuda/<name>.c, linked with the given
# libgpuprobe target and the simulation's control API.
function(simcuda_scenario name)
  add_executable(${name} ${SIMCUDA_SRC}/${name}.c)
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE SIMCUDA_DIR="${SIMCUDA_DIR}")
  target_link_libraries(${name} PRIVATE ${ARGN} simcuda PkgConfig::CMOCKA ${CMAKE_DL_LIBS}
    Threads::Threads m)
  add_dependencies(${name} simcuda_layout)
endfunction()

# The shared library exactly as users get it.
simcuda_scenario(scenario_fleet gpuprobe)
add_test(NAME scenario.fleet COMMAND scenario_fleet)
simcuda_test_env(scenario.fleet)
# The same under glibc's checking allocator (MALLOC_CHECK_=3, from
# libc_malloc_debug.so.0): a check byte follows every block and free()
# aborts when a write went past its end, so a heap overflow fails in any
# build, not only under a sanitizer (which keeps its own allocator, hence
# not there). The twelve-GPU test is what it watches: the list of held
# contexts outgrows its first allocation there. Where the library is
# missing, the loader says so and the run is the plain one.
if(NOT GPUPROBE_SANITIZE)
  add_test(NAME scenario.fleet_malloc_check COMMAND scenario_fleet)
  simcuda_test_env(scenario.fleet_malloc_check)
  set_property(TEST scenario.fleet_malloc_check APPEND PROPERTY ENVIRONMENT
    "MALLOC_CHECK_=3" "LD_PRELOAD=libc_malloc_debug.so.0")
endif()

# The causes: the kernel side comes through the sysroot test seam, hence the
# internal archive (the same objects).
simcuda_scenario(scenario_causes gpuprobe_internal)
target_include_directories(scenario_causes PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME scenario.causes COMMAND scenario_causes)
simcuda_test_env(scenario.causes)
add_test(NAME scenario.causes_no_driver COMMAND scenario_causes no-driver)
simcuda_test_env(scenario.causes_no_driver NO_DRIVER)
add_test(NAME scenario.causes_failed_init COMMAND scenario_causes failed-init)
simcuda_test_env(scenario.causes_failed_init)
add_test(NAME scenario.causes_runtime12_only COMMAND scenario_causes runtime12-only)
simcuda_test_env(scenario.causes_runtime12_only)
add_test(NAME scenario.causes_cublas_closed COMMAND scenario_causes cublas-closed)
simcuda_test_env(scenario.causes_cublas_closed)

# A GPU matmul's host allocations failing one at a time (tests/fault/):
# each is out of memory, and nothing of the run leaks.
if(TARGET fault_alloc)
  add_test(NAME scenario.fault_alloc_cuda COMMAND fault_alloc cuda)
  simcuda_test_env(scenario.fault_alloc_cuda)
endif()

simcuda_scenario(scenario_matmul gpuprobe)
add_test(NAME scenario.matmul COMMAND scenario_matmul)
simcuda_test_env(scenario.matmul)

simcuda_scenario(scenario_bandwidth gpuprobe)
add_test(NAME scenario.bandwidth COMMAND scenario_bandwidth)
simcuda_test_env(scenario.bandwidth)

# The speed estimate: figures from the time model of an H200 and an L4,
# kept in the context (the call log of a second estimate is empty).
simcuda_scenario(scenario_speed gpuprobe)
add_test(NAME scenario.speed COMMAND scenario_speed)
simcuda_test_env(scenario.speed)

# Probing without touching: NVML's answers, the call log's proof.
simcuda_scenario(scenario_nvml gpuprobe)
add_test(NAME scenario.nvml COMMAND scenario_nvml)
simcuda_test_env(scenario.nvml)
add_test(NAME scenario.nvml_missing COMMAND scenario_nvml missing)
simcuda_test_env(scenario.nvml_missing NO_NVML)

# The GPUs NVML knows, whether or not CUDA sees them: facts, MIG devices,
# processes, the three numberings.
simcuda_scenario(scenario_gpus gpuprobe)
add_test(NAME scenario.gpus COMMAND scenario_gpus)
simcuda_test_env(scenario.gpus)

# ---- the commands and the example programs, whole, against simulated fleets ---
#
# simcuda_program(CASE FLEET PROGRAM [run.py options] -- [ARG...]): the test
# scenario.program.PROGRAM.CASE runs PROGRAM (a command or example target)
# through tests/tools/run.py (see its header for the checks) against FLEET,
# configuration text with ';' between lines (written to
# <build>/simcuda/fleets/<test>.conf for the run). A run with --json among
# its arguments is also checked against docs/json.md. CMake splits
# arguments at ';': a regex writes it \x3b.
include(${CMAKE_CURRENT_SOURCE_DIR}/tools/run.cmake)
set(SIMCUDA_ONE_H200 "[gpu];preset=H200;uuid=GPU-5e1e0000-4200-4000-8000-00000000000b;pci=0000:19:00.0")
set(SIMCUDA_TWO "[gpu];preset=A100-40GB;uuid=GPU-5e1e0000-a100-4000-8000-00000000000a;pci=0000:21:00.0;free=30GiB;[gpu];preset=H200;uuid=GPU-5e1e0000-4200-4000-8000-00000000000b;pci=0000:81:00.0;free=120GiB")

function(simcuda_program case fleet program)
  set(name scenario.program.${program}.${case})
  if(NOT TARGET ${program})
    # Skipped when that kind of program is not built; else a failing test
    # (a renamed program must not drop its runs silently).
    if(program MATCHES "^gpuprobe-")
      set(built ${GPUPROBE_BUILD_TOOLS})
    else()
      set(built ${GPUPROBE_BUILD_EXAMPLES})
    endif()
    if(built)
      add_test(NAME ${name} COMMAND sh -c "echo 'no program target named ${program}: update tests/simcuda.cmake'; exit 1")
    else()
      add_test(NAME ${name} COMMAND sh -c "echo 'SKIP: ${program} is not built'; exit 77")
    endif()
    set_tests_properties(${name} PROPERTIES LABELS scenario SKIP_RETURN_CODE 77)
    return()
  endif()
  set(json "")
  list(FIND ARGN "--" cut)
  if(cut GREATER -1)
    list(SUBLIST ARGN ${cut} -1 args)
    # (A refresh loop prints one document a refresh.)
    if("--json" IN_LIST args AND NOT "--count" IN_LIST args)
      set(json --json ${GPUPROBE_JSON_DOC})
    endif()
  endif()
  gpuprobe_run_test(${name} ${program} ${json} ${ARGN})
  simcuda_test_env(${name})
  simcuda_test_fleet(${name} "${fleet}")
endfunction()

# gpuprobe-smi: every GPU NVML knows, numbered as nvidia-smi numbers them,
# with the cuda:N each is here; memory in MiB, read through NVML (no
# context made, no device memory allocated, as the simulation counts); at
# most 100 columns, every table closed and as wide as its rules.
set(SIMCUDA_UNTOUCHED --sim-stats contexts_created=0 --sim-stats bytes_allocated=0
  --sim-calls-none "cuDevicePrimaryCtxRetain|cudaSetDevice|cudaMalloc|cudaMemGetInfo|cuMemGetInfo_v2|cublasCreate_v2")
set(SMI_LAYOUT --width 100 --borders)
simcuda_program(h200 "${SIMCUDA_ONE_H200}" gpuprobe-smi --clean --err-empty ${SIMCUDA_UNTOUCHED} ${SMI_LAYOUT}
  --sim-calls-some nvmlDeviceGetMemoryInfo_v2
  --out "\n\\| gpuprobe-smi [0-9.]+ +Driver Version: 580\\.65\\.06 +CUDA Version: 13\\.0 \\(runtime 13\\.0\\) +\\|\n\\| Memory in MiB "
  --out "\n\\|   0  NVIDIA H200 +cuda:0 +\\| 0000:19:00\\.0 +Gen5 x16 \\| +0% +0% +Disabled \\|\n\\|  32C +70W /  700W +9\\.0 +\\| +0MiB / 143771MiB \\| +0 +143771MiB \\|\n"
  --out "\nMemory read through NVML: no CUDA context was created\\.\n"
  --out "\n\\| No running processes found +\\|\n")
simcuda_program(h200.json "${SIMCUDA_ONE_H200}" gpuprobe-smi --err-empty ${SIMCUDA_UNTOUCHED}
  --json-absent devices.0.bandwidth --json-absent devices.1.bandwidth
  --json-eq cuda_available=true --json-eq reason=\"available\"
  --json-eq cuda_runtime_version=\"13.0\" --json-eq cuda_driver_version=\"13.0\"
  --json-eq driver_version=\"580.65.06\" --json-eq gpus_error=null
  --json-eq gpus.0.index=0 --json-eq gpus.0.cuda_index=0 --json-eq gpus.0.memory_total_bytes=150754820096
  --json-eq gpus.0.pci_bus_id=\"0000:19:00.0\" --json-eq gpus.0.processes=[] --json-eq gpus.0.mig_devices=[]
  --json-eq devices.1.name=\"NVIDIA\ H200\" --json-eq devices.1.uuid=\"GPU-5e1e0000-4200-4000-8000-00000000000b\"
  --json-eq devices.1.pci_bus_id=\"0000:19:00.0\" --json-eq devices.1.memory.total_bytes=150754820096
  --json-eq devices.1.memory.available_bytes=150754820096 --json-eq devices.1.memory.used_bytes=0
  --json-eq devices.1.memory.source=\"nvml\" --json-eq devices.1.memory.context_held=false
  --json-eq devices.1.memory.created_context=false --json-eq devices.1.memory.context_bytes=0
  --json-eq devices.1.nvml_index=0 --json-eq devices.1.mig_mode=\"disabled\" --json-eq devices.1.mig_instance=false
  --json-eq devices.1.health.power_limit_mw=700000 --json-eq devices.1.health.compute_processes=0
  --json-eq devices.1.error=null -- --json)
# --bandwidth on the GPU: the simulated read, copies and host transfers,
# and the CPU's tests, in each device's JSON (small buffers).
simcuda_program(h200_bandwidth.json "${SIMCUDA_ONE_H200}" gpuprobe-smi --err-empty
  --json-eq devices.1.bandwidth.error=null --json-eq devices.1.bandwidth.buffer_bytes=1048576
  --json-eq devices.1.bandwidth.tests.0.test=\"read\" --json-eq devices.0.bandwidth.tests.2.test=\"triad\"
  -- --json --bandwidth --bytes 1MiB)
simcuda_program(two "${SIMCUDA_TWO}" gpuprobe-smi --clean --err-empty ${SIMCUDA_UNTOUCHED} ${SMI_LAYOUT}
  --out "\n\\|   0  NVIDIA A100-SXM4-40GB +cuda:0 +\\| 0000:21:00\\.0 +Gen4 x16 \\|[^\n]*\n\\|  32C +40W /  400W +8\\.0 +\\| +9816MiB / 40536MiB \\| +0 +30720MiB \\|\n"
  --out "\n\\|   1  NVIDIA H200 +cuda:1 +\\| 0000:81:00\\.0 +Gen5 x16 \\|[^\n]*\n\\|[^\n]*\\| +20891MiB / 143771MiB \\| +0 +122880MiB \\|\n")
simcuda_program(two.json "${SIMCUDA_TWO}" gpuprobe-smi --err-empty
  --json-eq devices.1.spec=\"cuda:0\" --json-eq devices.1.memory.available_bytes=32212254720
  --json-eq devices.2.spec=\"cuda:1\" --json-eq devices.2.memory.available_bytes=128849018880
  --json-eq gpus.1.memory_free_bytes=128849018880 -- --json)
# CUDA_VISIBLE_DEVICES=1: CUDA sees the H200 only (cuda:0), NVML both GPUs
# under their own indices; the A100 is listed, as no CUDA device here.
simcuda_program(visible_1 "${SIMCUDA_TWO}" gpuprobe-smi --env CUDA_VISIBLE_DEVICES=1 --clean --err-empty ${SMI_LAYOUT}
  --out "\n\\|   0  NVIDIA A100-SXM4-40GB +- +\\| 0000:21:00\\.0 "
  --out "\n\\|   1  NVIDIA H200 +cuda:0 +\\| 0000:81:00\\.0 ")
simcuda_program(hidden.json "${SIMCUDA_TWO}" gpuprobe-smi --env CUDA_VISIBLE_DEVICES= --err-empty
  --json-eq cuda_available=false --json-eq reason=\"devices_hidden\"
  --json-eq gpus.0.cuda_index=null --json-eq gpus.1.name=\"NVIDIA\ H200\"
  --json-has "reason_text=CUDA devices are hidden by CUDA_VISIBLE_DEVICES: " --json-has "reason_text=which hides all 2 GPU(s)" --json-eq devices.0.spec=\"cpu\" -- --json)

# A node of four GPUs, listed out of PCI bus order (so CUDA's order is not
# nvidia-smi's), one in MIG mode with three MIG devices; CUDA_VISIBLE_DEVICES
# names a GPU, one MIG device and another GPU, so the H100 and two MIG
# devices (one holding a 3 GiB process) are hidden from CUDA. Processes of
# both of NVML's lists, one in both, one whose memory NVML cannot give; none
# of them in this PID namespace (PIDs at pid_max, the largest there can be).
set(SMI_NODE4 "driver_string=580.65.06"
  "[gpu]" "preset=H200" "uuid=GPU-5e1e0000-4200-4000-8000-0000000000a0" "pci=0000:19:00.0"
  "utilization=35" "temperature=41" "power=287.5" "process=4194301:20GiB" "process=4194302:512MiB:graphics"
  "[gpu]" "preset=H200" "uuid=GPU-5e1e0000-4200-4000-8000-0000000000b0" "pci=0000:3b:00.0"
  "process=4194303:40GiB:both" "process=4194304:12GiB"
  "[gpu]" "preset=H100" "uuid=GPU-5e1e0000-4100-4000-8000-0000000000c0" "pci=0000:2a:00.0" "process=4194300:n/a"
  "[gpu]" "preset=H200" "uuid=GPU-5e1e0000-4200-4000-8000-0000000000d0" "pci=0000:5d:00.0"
  "[mig]" "profile=3g.71gb" "gi=2" "uuid=MIG-d0d00000-0000-4000-8000-000000000000" "total=66GiB" "process=4194299:8GiB"
  "[mig]" "profile=1g.18gb" "gi=9" "uuid=MIG-d0d00000-0000-4000-8000-000000000001" "total=16GiB" "process=4194298:3GiB"
  "[mig]" "profile=1g.18gb" "gi=10" "ci=1" "uuid=MIG-d0d00000-0000-4000-8000-000000000002" "total=16GiB")
set(SMI_NODE4_VISIBLE --env "CUDA_VISIBLE_DEVICES=GPU-5e1e0000-4200-4000-8000-0000000000b0,MIG-d0d00000-0000-4000-8000-000000000000,GPU-5e1e0000-4200-4000-8000-0000000000a0")
function(smi_node4 case)
  simcuda_program(node4.${case} "${SMI_NODE4}" gpuprobe-smi ${ARGN})
endfunction()
# The three numberings: nvidia-smi's index, cuda:N here, the MIG index.
smi_node4(text --clean --err-empty ${SIMCUDA_UNTOUCHED} ${SMI_LAYOUT} ${SMI_NODE4_VISIBLE}
  --out "\n\\|   0  NVIDIA H200 +cuda:2 +\\| 0000:19:00\\.0 +Gen5 x16 \\| +35% +0% +Disabled \\|\n\\|  41C +288W /  700W +9\\.0 +\\| +20992MiB / 143771MiB \\| +2 +122779MiB \\|\n"
  --out "\n\\|   1  NVIDIA H100 80GB HBM3 +- +\\| 0000:2A:00\\.0 "
  --out "\n\\|   2  NVIDIA H200 +cuda:0 +\\| 0000:3B:00\\.0 "
  --out "\n\\|   3  NVIDIA H200 +- +\\| 0000:5D:00\\.0 +Gen5 x16 \\| +N/A +N/A +Enabled \\|\n"
  --out "\n\\|   3    0   2   0 \\| 3g\\.71gb +3 slices \\| +8192MiB / 67584MiB \\| cuda:1 +1 \\|\n\\| +\\| MIG-d0d00000-0000-4000-8000-000000000000 +\\|\n"
  --out "\n\\|   3    1   9   0 \\| 1g\\.18gb +1 slice \\| +3072MiB / 16384MiB \\| not seen here +1 \\|\n\\| +\\| MIG-d0d00000-0000-4000-8000-000000000001 +\\|\n"
  --out "\n\\|   3    2  10   1 \\| 1g\\.18gb +1 slice \\| +0MiB / 16384MiB \\| not seen here +0 \\|\n"
  --out "\n\\| +0 +- +- +- +4194301\\* +C +- +- +20480MiB \\|\n\\| +0 +- +- +- +4194302\\* +G +- +- +512MiB \\|\n"
  --out "\n\\| +1 +- +- +- +4194300\\* +C +- +- +N/A \\|\n"
  --out "\n\\| +2 +- +- +- +4194303\\* +C\\+G +- +- +40960MiB \\|\n\\| +2 +- +- +- +4194304\\* +C +- +- +12288MiB \\|\n"
  --out "\n\\| +3 +1 +9 +0 +4194298\\* +C +- +- +3072MiB \\|\n"
  --out "\n\\*: not in this PID namespace")
smi_node4(json --err-empty ${SIMCUDA_UNTOUCHED} ${SMI_NODE4_VISIBLE}
  --json-eq gpus.0.cuda_index=2 --json-eq gpus.1.cuda_index=null --json-eq gpus.2.cuda_index=0
  --json-eq gpus.3.cuda_index=null --json-eq gpus.3.mig_mode=\"enabled\"
  --json-eq gpus.3.mig_devices.0.cuda_index=1 --json-eq gpus.3.mig_devices.1.cuda_index=null
  --json-eq gpus.3.mig_devices.1.profile=\"1g.18gb\" --json-eq gpus.3.mig_devices.1.gpu_instance_id=9
  --json-eq gpus.3.mig_devices.1.used_bytes=3221225472 --json-eq gpus.3.mig_devices.2.compute_instance_id=1
  --json-eq gpus.3.processes.1.pid=4194298 --json-eq gpus.3.processes.1.mig_index=1
  --json-eq gpus.3.processes.1.used_bytes=3221225472 --json-eq gpus.2.processes.0.type=\"compute+graphics\"
  --json-eq gpus.0.processes.1.type=\"graphics\" --json-eq gpus.1.processes.0.used_bytes=null
  --json-eq gpus.2.processes.1.in_namespace=false --json-eq gpus.2.processes.1.command=null
  --json-eq devices.2.nvml_index=3 --json-eq devices.2.mig_index=0 --json-eq driver_version=\"580.65.06\" -- --json)
# A process of this namespace: its user and command line from /proc.
simcuda_program(own_process "[gpu];preset=H200;process=@PID@:1GiB" gpuprobe-smi --spawn --clean --err-empty ${SMI_LAYOUT}
  --out "\n\\| +0 +- +- +- +@PID@ +C +[^ ]+ +sleep 300 +1024MiB \\|\n" --no-out "not in this PID namespace")
simcuda_program(own_process.json "[gpu];preset=H200;process=@PID@:1GiB" gpuprobe-smi --spawn --err-empty
  --json-eq gpus.0.processes.0.in_namespace=true --json-eq gpus.0.processes.0.command=\"sleep\ 300\" -- --json)
# -i: NVML's index (nvidia-smi's), a GPU's or a MIG device's UUID, a PCI
# bus id with or without its domain, a list; what names no GPU is a usage
# error.
smi_node4(id_index --clean --err-empty ${SMI_LAYOUT} ${SMI_NODE4_VISIBLE}
  --out "\n\\|   3  NVIDIA H200 +- +\\|" --out "\n\\|   3    1   9   0 \\|" --out "\n\\| +3 +1 +9 +0 +4194298\\*"
  --no-out "NVIDIA H100" --no-out "\n\\| +0 +- +- +- +4194301" --no-out "\nCPU " -- -i 3)
smi_node4(id_uuid --err-empty ${SMI_NODE4_VISIBLE} --out "\n\\|   1  NVIDIA H100 80GB HBM3 +- +\\|"
  --no-out "\n\\|   [023] " -- --id GPU-5e1e0000-4100-4000-8000-0000000000c0)
smi_node4(id_mig_uuid --err-empty --out "\n\\|   3  NVIDIA H200 " --no-out "\n\\|   [012] " -- -i MIG-d0d00000-0000-4000-8000-000000000001)
smi_node4(id_bus --err-empty --out "^2\n$" -- -i 00000000:3B:00.0 --query-gpu=index --format=csv,noheader)
smi_node4(id_bus_short --err-empty --out "^0\n2\n$" -- -i=3b:00.0,0 --query-gpu=index --format=csv,noheader)
smi_node4(id_list.json --err-empty --json-eq gpus.0.index=0 --json-eq gpus.1.index=2
  --no-out "\\{\"index\": [13], \"memory_total_bytes\"" -- -i0,2 --json)
smi_node4(id_wrong_index --rc 2 --out-empty
  --err "^gpuprobe-smi: -i: no GPU has index 4 \\(NVML knows GPUs 0 to 3\\)\n" -- -i 4)
smi_node4(id_wrong_uuid --rc 2 --out-empty --err "no GPU or MIG device is 'GPU-0'" -- -i 0,GPU-0)
smi_node4(id_long --rc 2 --out-empty --err "no GPU or MIG device is 'GPU-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\.\\.\\.'\n" -- -i GPU-{a*200})
smi_node4(id_not_an_id --rc 2 --out-empty --err "-i wants a GPU's index, UUID or PCI bus id, not 'the-big-one'" -- -i the-big-one)
smi_node4(id_empty_entry --rc 2 --out-empty --err "-i wants GPUs separated by commas \\(0,2\\), not '0,,1'" -- -i 0,,1)
# --query-gpu with nvidia-smi's field names, headers, units and [N/A].
set(smi_fields "index,name,uuid,pci.bus_id,driver_version,memory.total,memory.used,memory.free,utilization.gpu,temperature.gpu,power.draw,power.limit,pcie.link.gen.current,pcie.link.width.max,compute_cap,mig.mode.current,count")
smi_node4(query_csv --clean --err-empty ${SIMCUDA_UNTOUCHED}
  --out "^index, name, uuid, pci\\.bus_id, driver_version, memory\\.total \\[MiB\\], memory\\.used \\[MiB\\], memory\\.free \\[MiB\\], utilization\\.gpu \\[%\\], temperature\\.gpu, power\\.draw \\[W\\], power\\.limit \\[W\\], pcie\\.link\\.gen\\.current, pcie\\.link\\.width\\.max, compute_cap, mig\\.mode\\.current, count\n0, NVIDIA H200, GPU-5e1e0000-4200-4000-8000-0000000000a0, 00000000:19:00\\.0, 580\\.65\\.06, 143771 MiB, 20992 MiB, 122779 MiB, 35 %, 41, 287\\.50 W, 700\\.00 W, 5, 16, 9\\.0, Disabled, 4\n1, NVIDIA H100 80GB HBM3, "
  --out "\n3, NVIDIA H200, GPU-5e1e0000-4200-4000-8000-0000000000d0, 00000000:5D:00\\.0, 580\\.65\\.06, 143771 MiB, 11264 MiB, 132507 MiB, \\[N/A\\], 32, 70\\.00 W, 700\\.00 W, 5, 16, 9\\.0, Enabled, 4\n$"
  -- --query-gpu=${smi_fields} --format=csv)
smi_node4(query_noheader --err-empty --out "^0, 143771 MiB\n1, 81085 MiB\n2, 143771 MiB\n3, 143771 MiB\n$"
  -- --query-gpu=index,memory.total --format=csv,noheader)
smi_node4(query_nounits --err-empty --out "^index, memory\\.used \\[MiB\\], power\\.draw \\[W\\], utilization\\.gpu \\[%\\]\n0, 20992, 287\\.50, 35\n"
  -- --query-gpu=index,memory.used,power.draw,utilization.gpu --format=csv,nounits)
smi_node4(query_noheader_nounits --err-empty --out "^0, 20992, 287\\.50, 35\n1, 0, 70\\.00, 0\n"
  -- --query-gpu=index,memory.used,power.draw,utilization.gpu --format=csv,noheader,nounits)
smi_node4(query_aliases --err-empty --out "^name, pci\\.bus_id\nNVIDIA H200, 00000000:19:00\\.0\n"
  -- --query-gpu=gpu_name,gpu_bus_id --format=csv -i 0)
smi_node4(query_unknown_field --rc 2 --out-empty
  --err "^gpuprobe-smi: --query-gpu wants fields --help-query-gpu lists, not 'memory\\.bogus'\n"
  -- --query-gpu=index,memory.bogus --format=csv)
smi_node4(query_without_format --rc 2 --err "--query-gpu needs --format=csv" -- --query-gpu=index)
smi_node4(format_without_query --rc 2 --err "--format goes with --query-gpu" -- --format=csv)
smi_node4(format_unknown --rc 2 --err "--format wants csv, then noheader or nounits \\(csv,noheader\\), not 'csv,xml'" -- --query-gpu=index --format=csv,xml)
smi_node4(query_and_json --rc 2 --json ${GPUPROBE_JSON_DOC} --out "\"status\": \"usage\""
  --err "--query-gpu and --json: choose one" -- --query-gpu=index --format=csv --json)
smi_node4(help_query --err-empty --clean --width 100 --out "\n\"memory\\.total\"\n +device memory[^\n]*\n +header \"memory\\.total \\[MiB\\]\"\n"
  --out "\n\"name\" or \"gpu_name\"\n" -- --help-query-gpu)
# The refresh loop: --count refreshes (the CSV header once), a write error
# ends it (status 1, the reason), SIGINT and SIGTERM end it cleanly.
smi_node4(loop_count --err-empty --out "^index\n0\n3\n0\n3\n0\n3\n$"
  -- --loop 0.05 --count 3 -i 0,3 --query-gpu=index --format=csv)
smi_node4(loop_text --err-empty --clean ${SMI_LAYOUT}
  --out "^[A-Z][a-z][a-z] [A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]+ [0-9]+\n\\+-+\\+\n.*\n\n[A-Z][a-z][a-z] [A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]+ [0-9]+\n\\+-+\\+\n"
  -- -l 0.05 --count 2 -i 1)
smi_node4(loop_json --err-empty --out "^\\{[^\n]*\"schema\": [0-9]+[^\n]*\\}\n\\{[^\n]*\\}\n$" -- -l 0.05 --count 2 --json)
smi_node4(loop_write_error --rc 1 --stdout full
  --err "^gpuprobe-smi: write error: No space left on device\n$" -- -l 0.05 --count 1000)
smi_node4(loop_sigint --signal INT@1.5 --err-empty --out "^index\n0\n$" -- -l 30 -i 0 --query-gpu=index --format=csv)
smi_node4(loop_sigterm --signal TERM@1.5 --err-empty --out "^0\n$" -- -l 30 -i 0 --query-gpu=index --format=csv,noheader)
smi_node4(count_without_loop --rc 2 --err "--count goes with --loop" -- --count 2)
smi_node4(loop_zero --rc 2 --err "--loop wants seconds above 0, at most 86400 \\(2, 0\\.5\\), not '0'" -- -l 0)
smi_node4(count_zero --rc 2 --err "--count wants a number of refreshes from 1, not '0'" -- -l 1 --count 0)
# Colour only on a terminal, never with NO_COLOR (empty means unset), never
# in a pipe; it changes no column.
smi_node4(color_tty --tty --err-empty ${SMI_LAYOUT} --out "\\|\\x1b\\x5b0m\\x1b\\x5b1m gpuprobe-smi"
  --out "\\|\\x1b\\x5b0m\\x1b\\x5b2m   3  NVIDIA H200")
smi_node4(no_color_tty --tty --env NO_COLOR=1 --clean --err-empty ${SMI_LAYOUT} --no-out "\\x1b")
smi_node4(no_color_empty --tty --env NO_COLOR= --err-empty --out "\\x1b\\x5b1m")
smi_node4(no_color_pipe --clean --err-empty ${SMI_LAYOUT} --no-out "\\x1b")
# Without NVML: the CUDA devices are the rows (no nvidia-smi index), and
# --query-gpu cannot answer.
simcuda_program(no_nvml "${SIMCUDA_TWO}" gpuprobe-smi --env GPUPROBE_NVML=off --clean --err-empty ${SMI_LAYOUT}
  --out "\n\\|   -  NVIDIA A100-SXM4-40GB +cuda:0 +\\| 0000:21:00\\.0 +N/A \\|"
  --out "\nNVML is not usable: GPUPROBE_NVML turns NVML off: no nvidia-smi index, health or processes\\.\n")
simcuda_program(no_nvml.json "${SIMCUDA_TWO}" gpuprobe-smi --env GPUPROBE_NVML=off --err-empty
  --json-eq gpus=null --json-eq gpus_error.status=\"unsupported\" --json-eq driver_version=null -- --json)
simcuda_program(no_nvml.query "${SIMCUDA_TWO}" gpuprobe-smi --env GPUPROBE_NVML=off --rc 1 --out-empty
  --err "--query-gpu: .*NVML is not usable: GPUPROBE_NVML turns NVML off" -- --query-gpu=index --format=csv)
# A GPU that refuses its own queries (a container holding one MIG device):
# its figures N/A, its MIG devices and their processes listed.
simcuda_program(refused "[gpu];preset=H200;nvml_access=denied;[mig];profile=1g.18gb;process=4194304:3GiB;[mig];profile=1g.18gb"
  gpuprobe-smi --clean --err-empty ${SMI_LAYOUT}
  --out "\n\\|  N/A +N/A /   N/A +9\\.0 +\\| +N/A / N/A \\| +1 +N/A \\|\n"
  --out "\n\\|   0    0   1   0 \\| 1g\\.18gb +1 slice \\| +3072MiB / 17971MiB \\| cuda:0 +1 \\|\n")

# gpuprobe-info: the lesson's lines; why CUDA is not available.
# Every GPU and their count (1.1 printed only cuda:0).
simcuda_program(two "${SIMCUDA_TWO}" gpuprobe-info --clean --err-empty
  --out "^CUDA available: True\nCUDA version: 13\\.0\nGPU count: 2\nGPU 0: NVIDIA A100-SXM4-40GB\nMemory: 42\\.5 GB\nGPU 1: NVIDIA H200\nMemory: 150\\.8 GB\n$")
simcuda_program(two.json "${SIMCUDA_TWO}" gpuprobe-info --err-empty
  --json-eq reason=\"available\" --json-eq devices.2.name=\"NVIDIA\ H200\"
  --json-eq devices.2.compute_capability=\"9.0\" --json-eq devices.2.multiprocessors=132
  --json-eq devices.1.uuid=\"GPU-5e1e0000-a100-4000-8000-00000000000a\" -- --json)
simcuda_program(hidden "${SIMCUDA_TWO}" gpuprobe-info --env CUDA_VISIBLE_DEVICES= --clean
  --out "^CUDA available: False\nCUDA version: 13\\.0\nReason: CUDA devices are hidden by CUDA_VISIBLE_DEVICES \\(.*which hides all 2 GPU\\(s\\)")
# The driver supports CUDA 12.4: the CUDA 13 runtime refuses it, so the
# library falls back to libcudart.so.12 ...
simcuda_program(driver12.json "driver_version=12.4;${SIMCUDA_ONE_H200}" gpuprobe-info --err-empty
  --json-eq cuda_available=true --json-eq cuda_runtime_version=\"12.8\"
  --json-eq cuda_driver_version=\"12.4\" -- --json)
# ... unless only the CUDA 13 runtime is there.
simcuda_program(driver_too_old.json "driver_version=12.4;${SIMCUDA_ONE_H200}" gpuprobe-info
  --env GPUPROBE_CUDA_LIBDIR=${SIMCUDA_DIR}/rt13
  --json-eq cuda_available=false --json-eq reason=\"driver_too_old\"
  --json-eq cuda_driver_version=\"12.4\" --json-eq cuda_runtime_version=\"13.0\" -- --json)

# gpuprobe-select: the most free memory wins; cuda:1 asked for by name; a
# requirement nothing meets is said once (the status text is not repeated).
# Selection reads NVML: no context, no device memory (auto, cuda, cuda:N and
# the requirements alike).
# An empty GPUPROBE_DEVICE is the same as unset: --device cpu stands (1.1
# took it for "auto" and chose the H200).
simcuda_program(env_device_empty "${SIMCUDA_TWO}" gpuprobe-select --clean --err-empty
  --env GPUPROBE_DEVICE= --out "^Using: cpu\n" --no-out "GPUPROBE_DEVICE" -- --device cpu)
simcuda_program(two "${SIMCUDA_TWO}" gpuprobe-select --clean --err-empty ${SIMCUDA_UNTOUCHED}
  --out "^Using: cuda:1\nDevice: NVIDIA H200\nReason: auto: cuda:1 \\(NVIDIA H200\\) has the most free memory \\(128\\.8 GB\\) of 2 CUDA devices\n$")
simcuda_program(two.json "${SIMCUDA_TWO}" gpuprobe-select --err-empty
  --json-eq using=\"cuda:1\" --json-eq device_index=2 --json-eq reason=\"available\"
  --json-has "choice_reason=cuda:1" -- --json)
simcuda_program(cuda "${SIMCUDA_TWO}" gpuprobe-select --clean --err-empty ${SIMCUDA_UNTOUCHED}
  --out "^Using: cuda:1\n" -- --device cuda)
simcuda_program(cuda_1.json "${SIMCUDA_TWO}" gpuprobe-select --err-empty ${SIMCUDA_UNTOUCHED}
  --json-eq using=\"cuda:1\" --json-eq name=\"NVIDIA\ H200\" -- --device cuda:1 --json)
simcuda_program(min_free "${SIMCUDA_TWO}" gpuprobe-select --rc 1 --out-empty ${SIMCUDA_UNTOUCHED}
  --err "^gpuprobe-select: selecting a device: no device meets the requirements: cuda:0 \\(NVIDIA A100-SXM4-40GB\\): 32\\.2 GB free < 200\\.0 GB required\\x3b cuda:1 \\(NVIDIA H200\\): 128\\.8 GB free < 200\\.0 GB required\\x3b cpu: "
  --no-err "meets the requirements.*meets the requirements" -- --min-free 200e9)
# The 1.1 requirements: a busy GPU and one with another program's context
# are passed over, and say why.
set(SIMCUDA_BUSY "[gpu];preset=H200;pci=0000:19:00.0;utilization=90;[gpu];preset=H200;pci=0000:2a:00.0;free=100GiB;process=4242:20GiB;[gpu];preset=A100-80GB;pci=0000:3b:00.0;free=70GiB;utilization=10")
simcuda_program(requirements "${SIMCUDA_BUSY}" gpuprobe-select --clean --err-empty ${SIMCUDA_UNTOUCHED}
  --sim-calls-some "nvmlDeviceGetUtilizationRates|nvmlDeviceGetComputeRunningProcesses_v3"
  --out "^Using: cuda:2\nDevice: NVIDIA A100-SXM4-80GB\nReason: auto: cuda:2 \\(NVIDIA A100-SXM4-80GB\\), 75\\.2 GB free, the only CUDA device that meets the requirements\\x3b skipped cuda:0 \\(NVIDIA H200\\): 90% busy > 50% allowed\\x3b cuda:1 \\(NVIDIA H200\\): 1 other process with a CUDA context\n$"
  -- --max-utilization 50 --no-other-process)
simcuda_program(requirements.fit "${SIMCUDA_BUSY}" gpuprobe-select --err-empty ${SIMCUDA_UNTOUCHED}
  --json-eq using=\"cuda:0\" -- --fit 70e9 --json)

# gpuprobe-fit: free memory is read through NVML, without a context, so the
# context a program will need is reserved (512 MiB by default); what one
# allocation can get is that in whole 2 MiB pages less the allowance of
# 142 MiB (150,217,949,184 B -> 150,068,002,816 B); nothing is created or
# allocated.
simcuda_program(h200 "${SIMCUDA_ONE_H200}" gpuprobe-fit --clean --err-empty ${SIMCUDA_UNTOUCHED}
  --out "\ncuda:0 \\(NVIDIA H200\\)\n  memory: 150\\.8 GB total, 150\\.8 GB free\n  usable: 150\\.1 GB = 150\\.8 GB free - 536\\.9 MB for the CUDA context \\(default reserve: nothing measured\\) - 149\\.9 MB the driver keeps\n"
  --out "\n    bf16 training  needs  112\\.0 GB: fits\n\n$" -- --params 7e9)
simcuda_program(h200.json "${SIMCUDA_ONE_H200}" gpuprobe-fit --err-empty ${SIMCUDA_UNTOUCHED}
  --json-eq devices.1.device=\"cuda:0\" --json-eq devices.1.reserve_source=\"default\"
  --json-eq devices.1.reserve_bytes=536870912 --json-eq devices.1.usable_bytes=150068002816
  --json-eq devices.1.max_params.fp16=75034001408 -- --json)

# gpuprobe-nfd: the MIG mode label (a MIG instance named in
# CUDA_VISIBLE_DEVICES, a whole GPU); the fit labels count the context a
# program needs on the GPU once, whether memory came from NVML or (NVML off)
# through this process's own context: 80.5 GB less 512 MiB holds 39.98
# billion fp16 parameters (40.25 without the reserve).
set(mig_h200 "[gpu];preset=H200;[mig];name=NVIDIA H200 MIG 3g.71gb;uuid=MIG-7a1b0000-0000-4000-8000-000000000003;total=64GiB")
simcuda_program(mig "${mig_h200}" gpuprobe-nfd --env CUDA_VISIBLE_DEVICES=MIG-7a1b0000 --err-empty
  ${SIMCUDA_UNTOUCHED} --out "\ngpuprobe\\.io/gpu\\.product=NVIDIA-H200-MIG-3g\\.71gb\n"
  --out "\ngpuprobe\\.io/gpu\\.memory=65536\n" --out "\ngpuprobe\\.io/gpu\\.mig\\.mode=enabled\n" -- --output -)
simcuda_program(mig.json "${mig_h200}" gpuprobe-nfd --env CUDA_VISIBLE_DEVICES=MIG-7a1b0000 --err-empty
  --out "\"gpuprobe\\.io/gpu\\.mig\\.mode\": *\"enabled\"" -- --output - --json)
simcuda_program(h200 "${SIMCUDA_ONE_H200}" gpuprobe-nfd --err-empty ${SIMCUDA_UNTOUCHED}
  --out "\ngpuprobe\\.io/gpu\\.mig\\.mode=disabled\n" -- --output -)
simcuda_program(no_mig "[gpu];preset=L4" gpuprobe-nfd --err-empty
  --out "\ngpuprobe\\.io/gpu\\.compute\\.minor=9\n" --no-out "mig" -- --output -)
simcuda_program(fit "[gpu];preset=H100;total=80.5GB" gpuprobe-nfd --err-empty
  --out "\ngpuprobe\\.io/gpu\\.fit\\.fp16\\.weights\\.billions=39\n" -- --output - --bench --size 48)
simcuda_program(fit.context "[gpu];preset=H100;total=80.5GB" gpuprobe-nfd --env GPUPROBE_NVML=off --err-empty
  --out "\ngpuprobe\\.io/gpu\\.fit\\.fp16\\.weights\\.billions=39\n" -- --output - --bench --size 48)

# gpuprobe-bench: a verified GPU run, work run at once and deferred.
simcuda_program(bf16 "${SIMCUDA_ONE_H200}" gpuprobe-bench --clean --err-empty
  --out "\nGPU bf16: [0-9.]+ (s|ms|µs|ns)  \\(median of 3 runs( of [0-9]+ calls)?, [^\n]*, verified\\)\n +cuBLAS 13\\.1\\.0 \\(cublasGemmEx, A/B CUDA_R_16BF, C CUDA_R_32F\\) on NVIDIA H200"
  -- --size 96 --device cuda:0 --dtype bf16 --runs 3)
# Both precisions named in the speedup; the CPU's fp32 said to be the
# reference for a GPU-only precision; the tensor-core table in units.
simcuda_program(speedup_labels "${SIMCUDA_ONE_H200}" gpuprobe-bench --clean --err-empty
  --env GPUPROBE_CPU_AMX=0
  --out "\nCPU fp32: [^\n]*verified\\) \\[the CPU runs no bf16: fp32 is the reference\\]\n"
  --out "\nSpeedup \\(GPU bf16 vs CPU fp32\\): [0-9.]+x\n" -- --size 64 --dtype bf16 --runs 2)
# A CPU with a bf16 kernel (AMX or AVX512-BF16) runs bf16 itself: like against like, no note.
if(GPUPROBE_CPU_HAS_BF16)
  simcuda_program(speedup_labels_bf16 "${SIMCUDA_ONE_H200}" gpuprobe-bench --clean --err-empty
    --out "\nCPU bf16: [^\n]*verified\\)\n" --no-out "fp32 is the reference"
    --out "\nSpeedup \\(GPU bf16 vs CPU bf16\\): [0-9.]+x\n" -- --size 64 --dtype bf16 --runs 2)
endif()
simcuda_program(table_units "${SIMCUDA_ONE_H200}" gpuprobe-bench --clean --err-empty
  --out "\nSpeedup \\(GPU fp32 vs CPU fp32\\): [0-9.]+x\n"
  --out "\n  fp32 +[0-9.]+ (µs|ms|ns) +[0-9.]+ +1\\.0x  yes\n  tf32 +[0-9.]+ (µs|ms|ns) "
  --out "host->device [0-9.]+ (µs|ms|ns|s), device->host [0-9.]+ (µs|ms|ns|s)\\x3b"
  --no-out "0\\.0000" -- --size 64 --runs 2)
# fp64 with a working GPU: the GPU's line says why it is not measured
# (1.1 said "GPU: not available (CUDA is available ...)").
simcuda_program(fp64 "${SIMCUDA_ONE_H200}" gpuprobe-bench --clean --err-empty
  --out "\nCPU fp64: [^\n]*verified\\)\n"
  --out "\nGPU fp64: skipped: matmul in fp64 is done on the CPU only\\x3b CUDA devices do fp32, tf32, fp16 and bf16\n"
  --no-out "not available" -- --size 64 --dtype fp64 --runs 2)
# bf16 on a T4 (no bf16) and a CPU without the bf16 kernel: said so, and nothing
# ran bf16 (exit 1).
simcuda_program(bf16_t4 "[gpu];preset=T4" gpuprobe-bench --rc 1 --clean --env GPUPROBE_CPU_AMX=0
  --out "\nGPU bf16: skipped: matmul in bf16 needs compute capability 8\\.0 "
  --err "no device here ran bf16" -- --size 64 --dtype bf16 --runs 2)
simcuda_program(tf32.deferred.json "mode=deferred;${SIMCUDA_ONE_H200}" gpuprobe-bench --err-empty
  --json-eq results.0.device=\"cuda:0\" --json-eq results.0.error=null
  --json-eq results.0.verified=true --json-eq results.0.runs=3
  --json-eq results.0.compute_type=\"CUBLAS_COMPUTE_32F_FAST_TF32\"
  -- --size 77 --device cuda:0 --dtype tf32 --runs 3 --json)
# gpuprobe-bench --bandwidth on a simulated H200: the six GPU tests, the
# peaks from NVML, the link read while the copies are queued (deferred
# work); nothing left allocated at exit.
simcuda_program(bandwidth.json "mode=deferred;${SIMCUDA_ONE_H200};pcie_idle=1x16" gpuprobe-bench --err-empty
  --json-eq bandwidth.0.device=\"cuda:0\" --json-eq bandwidth.0.error=null
  --json-eq bandwidth.0.buffer_bytes=1048576 --json-eq bandwidth.0.pcie.gen=5
  --json-eq bandwidth.0.pcie.degraded=false --json-eq bandwidth.0.tests.5.test=\"d2h_pageable\"
  --json-eq bandwidth.0.memory_peak_gbps=4916.736 --json-has "bandwidth.0.method=cuBLAS 13.1.0 cublasSdot_v2"
  --sim-calls-some "cublasSdot_v2|nvmlDeviceGetCurrPcieLinkGeneration"
  -- --bandwidth --device cuda:0 --bytes 1MiB --runs 2 --json)
simcuda_program(bandwidth.degraded "${SIMCUDA_ONE_H200};pcie=4x8" gpuprobe-bench --clean --err-empty
  --out "\ncuda:0 \\(NVIDIA H200\\): buffers of 1\\.0 MB, best \\(median\\) of 2 passes:\n  read  +[0-9.]+ GB/s"
  --out "\n  h2d_pinned +[0-9.]+ GB/s \\([0-9.]+\\), [0-9]+% of peak\\x3b pinned\n"
  --out "\n  PCIe link 4x8 under load \\(15\\.8 GB/s\\), maximum 5x16 \\(63\\.0 GB/s\\): DEGRADED"
  -- --bandwidth --device cuda:0 --bytes 1MiB --runs 2)
simcuda_program(cuda_1.fp16.json "${SIMCUDA_TWO}" gpuprobe-bench --err-empty
  --json-eq results.0.device=\"cuda:1\" --json-eq results.0.device_name=\"NVIDIA\ H200\"
  --json-eq results.0.verified=true -- --size 40 --device cuda:1 --dtype fp16 --runs 2 --json)

# gpuprobe-bench --sweep on simulated GPUs, whose gemm takes a modelled
# time (a 5 us launch, then 2 n^3 FLOP at the board's rate): deterministic
# figures. An H200 and an L4 in fp32 and bf16: each GFLOP/s as the model
# gives it (H200 fp32 at n = 256: 2 * 256^3 / (5 us + 2 * 256^3 / 67 TFLOP/s)
# = 6099.9 GFLOP/s; L4: 30.3 TFLOP/s, 5494.1), each point of the picture
# where those figures put it, the peaks dashed at the library's figures.
set(SIMCUDA_H200_L4 "[gpu];preset=H200;[gpu];preset=L4")
set(sweep_h200_l4 --sweep 16..256 --runs 1 --device cuda:0,cuda:1 --dtype fp32,bf16)
simcuda_program(sweep_h200_l4 "${SIMCUDA_H200_L4}" gpuprobe-bench --clean --err-empty
  --out "\nGPU fp32 on cuda:0 \\(NVIDIA H200\\x3b cuBLAS [^\n]*\\x3b peak 66\\.9 TFLOP/s\\):\n +n +median +GFLOP/s +of peak +verified\n +16 +5\\.00 µs +1\\.64 +<1% +yes\n"
  --out "\n +256 +5\\.50 µs +6099\\.9 +9% +yes\n  every size from 16 to 256, in "
  --out "\nGPU bf16 on cuda:1 \\(NVIDIA L4\\x3b [^\n]*\\x3b peak 121 TFLOP/s\\):\n"
  -- ${sweep_h200_l4})
simcuda_program(sweep_h200_l4.json "${SIMCUDA_H200_L4}" gpuprobe-bench --err-empty
  --json-eq sweep.lines.0.device=\"cuda:0\" --json-eq sweep.lines.1.dtype=\"bf16\"
  --json-eq sweep.lines.3.device_name=\"NVIDIA\ L4\" --json-eq sweep.lines.3.stopped=\"done\"
  --json-eq results.4.n=256 --json-near results.4.gflops=6099.94
  --json-eq results.14.device=\"cuda:1\" --json-near results.14.gflops=5494.11
  --json-near results.4.peak_gflops=66908.16 --json-eq results.19.n=256
  --svg {tmp}/sweep.svg --svg-points --svg-text "NVIDIA H200 (cuda:0) fp32" --svg-text "NVIDIA L4 (cuda:1) bf16"
  --svg-text "theoretical peak 66.9 TFLOP/s" --svg-text "theoretical peak 30.3 TFLOP/s"
  --svg-text "theoretical peak 121 TFLOP/s"
  --svg-text "NVIDIA H200, NVIDIA L4, measured" --svg-text "cuBLAS 13.1.0."
  -- ${sweep_h200_l4} --json --plot {tmp}/sweep.svg)
if(GPUPROBE_HAVE_CAIRO)
  simcuda_program(sweep_h200_l4.png "${SIMCUDA_H200_L4}" gpuprobe-bench --clean --err-empty
    --png {tmp}/sweep.png --files {tmp}=1 -- ${sweep_h200_l4} --plot {tmp}/sweep.png)
endif()
# gpuprobe-bench --roofline on the same boards: the read rate is the
# modelled cuBLAS dot (a 5 us launch, then both 1 MiB buffers at the
# board's memory_gbps: H200 2097152 / (5 us + 2097152 / 4800 GB/s) =
# 385.73 GB/s; L4 at 300 GB/s: 174.90 GB/s), the roofs the sweep's fastest
# points (as above), each ridge their ratio (H200 fp32 6099.9 / 385.73 =
# 15.81 FLOP/byte), the peaks the library's (memory 4916.7 GB/s from
# NVML's clocks and bus width): one panel a board, each roof's corner,
# slope and point where the JSON puts it.
if(GPUPROBE_HAVE_CAIRO) # (a build without cairo refuses --roofline: tests/tools.cmake)
  set(roof_h200_l4 --sweep 16..256 --runs 1 --bytes 1MiB --device cuda:0,cuda:1 --dtype fp32,bf16)
  simcuda_program(roofline_h200_l4.json "${SIMCUDA_H200_L4}" gpuprobe-bench --err-empty
    --json-eq roofline.devices.0.device=\"cuda:0\" --json-eq roofline.devices.1.device_name=\"NVIDIA\ L4\"
    --json-near roofline.devices.0.read_gbps=385.725 --json-near roofline.devices.1.read_gbps=174.901
    --json-near roofline.devices.0.memory_peak_gbps=4916.736 --json-near roofline.devices.1.memory_peak_gbps=300.048
    --json-near roofline.devices.0.roofs.0.gflops=6099.90 --json-eq roofline.devices.0.roofs.0.n=256
    --json-near roofline.devices.0.roofs.0.ridge=15.8141 --json-near roofline.devices.0.roofs.0.peak_ridge=13.6082
    --json-eq roofline.devices.0.roofs.1.dtype=\"bf16\" --json-near roofline.devices.0.roofs.1.points.4.intensity=64
    --json-near roofline.devices.0.roofs.1.points.4.bytes=524288 --json-near roofline.devices.1.roofs.0.gflops=5494.06
    --json-near roofline.devices.1.roofs.0.ridge=31.4124 --json-near roofline.devices.1.roofs.1.peak_ridge=403.801
    --json-eq bandwidth.1.device=\"cuda:1\" --json-has "roofline.plot=/r.svg"
    --svg {tmp}/r.svg --svg-roofline --svg-text "cuda:0: NVIDIA H200" --svg-text "cuda:1: NVIDIA L4"
    --svg-text "fp32 roof 6.1 TFLOP/s" --svg-text "read 386 GB/s, peak 4.92 TB/s" --svg-text "read 175 GB/s, peak 300 GB/s"
    --svg-text "bf16 peak 1.07 PFLOP/s" --svg-text "bf16 peak 121 TFLOP/s" --svg-text "n=256"
    --svg-text "cuda:0: best of 1 passes over 1.0 MB buffers" --svg-text "cuBLAS 13.1.0)"
    -- ${roof_h200_l4} --json --roofline {tmp}/r.svg)
  simcuda_program(roofline_h200_l4 "${SIMCUDA_H200_L4}" gpuprobe-bench --clean --err-empty
    --out "\ncuda:0 \\(NVIDIA H200\\): memory read 386 GB/s \\(measured\\), peak 4\\.92 TB/s:\n  fp32: roof 6\\.1 TFLOP/s \\(measured at n = 256\\), ridge at 15\\.8 FLOP/byte\\x3b peak 66\\.9 TFLOP/s, ridge 13\\.6\n"
    --out "\n +256 +42\\.7 +6099\\.9 +100%\n"
    --out "\ncuda:1 \\(NVIDIA L4\\): memory read 175 GB/s \\(measured\\), peak 300 GB/s:\n"
    -- ${roof_h200_l4} --roofline {tmp}/r.svg)
  simcuda_program(roofline_h200_l4.png "${SIMCUDA_H200_L4}" gpuprobe-bench --clean --err-empty
    --png {tmp}/r.png --files {tmp}=1 -- ${roof_h200_l4} --roofline {tmp}/r.png)
endif()
# Bounded by memory: an L4 with 66 MiB free once its context is made fits
# n = 256 but not 512 (A, B, C and cuBLAS's 64 MiB): a skipped point, exit 0.
simcuda_program(sweep_memory.json "[gpu];preset=L4;free=570MiB" gpuprobe-bench --err-empty
  --json-eq sweep.lines.0.stopped=\"memory\" --json-eq sweep.lines.0.stopped_at=512
  --json-eq results.2.n=256 --json-eq results.3.n=512
  --json-eq results.3.error.status=\"device_out_of_memory\"
  --svg {tmp}/s.svg --svg-points --svg-text "stopped at n = 512 (it does not fit in memory)"
  -- --sweep 64..1024 --runs 1 --device cuda:0 --dtype fp32 --json --plot {tmp}/s.svg)
simcuda_program(sweep_memory "[gpu];preset=L4;free=570MiB" gpuprobe-bench --clean --err-empty
  --out "\n +256 [^\n]* yes\n +512  does not fit: matmul 512x512x512 fp32 needs 3145728 bytes "
  -- --sweep 64..1024 --runs 1 --device cuda:0 --dtype fp32)
# Bounded by time: at 0.05 GFLOP/s n = 256 would take about 2 s (3 calls
# of 0.67 s), past a budget of 1 s; it is not run.
simcuda_program(sweep_time "[gpu];preset=L4;tflops=0.00005" gpuprobe-bench --clean --err-empty
  --out "\n +128 +83\\.9 ms [^\n]* yes\n  stopped before 256: it would take about 2\\.0[0-9] s, past the 1 s budget \\(--budget\\)\n"
  -- --sweep 32..256 --runs 1 --device cuda:0 --dtype fp32 --budget 1)
simcuda_program(sweep_time.json "[gpu];preset=L4;tflops=0.00005" gpuprobe-bench --err-empty
  --json-eq sweep.lines.0.stopped=\"time\" --json-eq sweep.lines.0.stopped_at=256
  --json-eq sweep.budget_s=1 --svg {tmp}/s.svg --svg-points
  --svg-text "stopped before n = 256 (it would pass the 1 s budget)"
  -- --sweep 32..256 --runs 1 --device cuda:0 --dtype fp32 --budget 1 --json --plot {tmp}/s.svg)
# A failed device: cuBLAS cannot be started for the GPU's first run. The
# CPU's line is drawn, the GPU's is not, and the footer says why; exit 1.
simcuda_program(sweep_failed_gpu.json "fail=cublasCreate_v2:1;${SIMCUDA_ONE_H200}" gpuprobe-bench --rc 1
  --json-eq sweep.lines.1.stopped=\"failed\" --json-eq sweep.lines.1.stopped_at=16
  --json-eq results.2.error.status=\"cuda\" --json-has "sweep.plot=/s.svg"
  --err "^gpuprobe-bench: matmul on cuda:0 \\(fp32\\) at n = 16: a CUDA call failed: "
  --svg {tmp}/s.svg --svg-points --svg-text "Not drawn: NVIDIA H200 fp32 (failed: "
  -- --sweep 16..32 --runs 1 --device cpu,cuda:0 --dtype fp32 --json --plot {tmp}/s.svg)
# Precisions a T4 lacks (tf32, bf16), asked for by default: skipped lines,
# left out of the picture with their reason, no failure.
simcuda_program(sweep_t4 "[gpu];preset=T4" gpuprobe-bench --clean --err-empty
  --out "\nGPU tf32 on cuda:0: skipped: matmul in tf32 needs compute capability 8\\.0"
  --out "\nGPU bf16 on cuda:0: skipped: " --out "\nGPU fp16 on cuda:0 \\(Tesla T4\\x3b "
  -- --sweep 16..32 --runs 1 --device cuda:0)

# A GPU whose name holds hostile bytes: the table and the picture show it
# quoted (the SVG still parses, its text escaped for XML).
# (cairo's text widths: the legend's line holds the whole name)
if(GPUPROBE_HAVE_CAIRO)
  simcuda_program(sweep_hostile_name "[gpu];preset=H200;name=${GPUPROBE_HOSTILE}" gpuprobe-bench
    --clean --err-empty --svg {tmp}/s.svg --svg-text "31mRED\\x01\\nNL\\xff\\\\z fp32"
    --svg-text "q\"\\x1b" --out "\nGPU fp32 on cuda:0 \\(q\"\\\\x1b"
    -- --sweep 16..32 --runs 1 --device cuda:0 --dtype fp32 --plot {tmp}/s.svg)
endif()

# A failed memory query through the context (NVML turned off, so that the
# driver's cuMemGetInfo is what answers): the row says '?', the reason is on
# stderr, the exit status is 1; in JSON the device's error object. The
# first call is cuda:0's, the second cuda:1's.
set(fail_gpu0 "fail=cuMemGetInfo_v2:1;${SIMCUDA_TWO}")
set(fail_gpu1 "fail=cuMemGetInfo_v2:2;${SIMCUDA_TWO}")
set(no_nvml --env GPUPROBE_NVML=off)
simcuda_program(memory_failure "${fail_gpu0}" gpuprobe-smi ${no_nvml} --rc 1 --clean ${SMI_LAYOUT}
  --out "\n\\|   -  NVIDIA A100-SXM4-40GB +cuda:0 +\\|[^\n]*\n\\|  N/A +N/A /   N/A +8\\.0 +\\| +\\? / 40536MiB \\| +N/A +\\? \\|\n"
  --out "\n\\|   -  NVIDIA H200 +cuda:1 +\\|[^\n]*\n\\|[^\n]*\\| +21391MiB / 143771MiB \\| +N/A +122380MiB \\|\n"
  --out "\nMemory of cuda:1: read inside a CUDA context, as NVML could not answer \\(created for it\\)\\.\n"
  --err "^gpuprobe-smi: cuda:0: memory query: a CUDA call failed: cuMemGetInfo_v2 on cuda:0 \\(NVIDIA A100-SXM4-40GB\\) failed with CUDA_ERROR_UNKNOWN\n$")
simcuda_program(memory_failure.json "${fail_gpu1}" gpuprobe-smi ${no_nvml} --rc 1
  --json-eq devices.1.error=null --json-eq devices.1.memory.available_bytes=31687966720
  --json-eq devices.1.memory.source=\"cuda_context\" --json-eq devices.1.memory.context_held=true
  --json-has "reason_text=NVML is not usable (GPUPROBE_NVML turns NVML off): GPU memory is read through a CUDA context"
  --json-eq devices.2.memory=null --json-eq devices.2.error.status=\"cuda\"
  --json-has "devices.2.error.message=cuMemGetInfo_v2 on cuda:1 (NVIDIA H200) failed with CUDA_ERROR_UNKNOWN"
  --err "^gpuprobe-smi: cuda:1: memory query: a CUDA call failed: cuMemGetInfo_v2 on cuda:1 " -- --json)
simcuda_program(memory_failure "${fail_gpu0}" gpuprobe-fit ${no_nvml} --rc 1 --clean
  --out "\ncuda:0 \\(NVIDIA A100-SXM4-40GB\\)\n  memory: unknown"
  --err "^gpuprobe-fit: cuda:0: memory query: a CUDA call failed: cuMemGetInfo_v2 on cuda:0 ")
simcuda_program(memory_failure.json "${fail_gpu1}" gpuprobe-fit ${no_nvml} --rc 1
  --json-eq devices.1.error=null --json-eq devices.2.error.status=\"cuda\"
  --json-has "devices.2.error.message=cuMemGetInfo_v2 on cuda:1" -- --json)
# NVML's memory query failing, both versions, once: that GPU's memory comes
# from the context fallback (created, and its cost measured by NVML's later
# answers), the other GPU's from NVML; nothing failed.
simcuda_program(nvml_memory_failure.json "fail=nvmlDeviceGetMemoryInfo_v2:1;fail=nvmlDeviceGetMemoryInfo:1;${SIMCUDA_TWO}" gpuprobe-smi
  --err-empty --sim-stats contexts_created=1 --sim-stats bytes_allocated=0
  --json-eq devices.1.error=null --json-eq devices.1.memory.source=\"cuda_context\"
  --json-eq devices.1.memory.available_bytes=31687966720
  --json-eq devices.1.memory.created_context=true --json-eq devices.1.memory.context_measured=true
  --json-eq devices.1.memory.context_bytes=524288000
  --json-eq devices.2.memory.source=\"nvml\" --json-eq devices.2.memory.available_bytes=128849018880 -- --json)

# A simulated GPU whose name holds hostile bytes (the library keeps them in
# GPUPROBE_ATTR_NAME; its own messages show them as '?'): text shows them
# escaped, JSON round-trips them (0xff as U+FFFD).
set(hostile_re "q\"\\\\x1b.31mRED\\\\x01\\\\nNL\\\\xff\\\\\\\\z")
gpuprobe_hostile_output_tests(sim_name
  TEXT_HAS "smi:\n\\|   0  ${hostile_re} +cuda:0 +\\| 0000:" "info:\nGPU 0: ${hostile_re}\n"
           "select:\nDevice: ${hostile_re}\nReason: auto: cuda:0 \\(q\"\\?.31mRED\\?\\?NL\\?"
           "fit:\ncuda:0 \\(${hostile_re}\\)\n" "bench:cuBLAS [^\n]* on ${hostile_re}"
  JSON_HAS "smi:devices.1.name=${GPUPROBE_HOSTILE}" "info:devices.1.name=${GPUPROBE_HOSTILE}"
           "select:name=${GPUPROBE_HOSTILE}" "fit:devices.1.name=${GPUPROBE_HOSTILE}"
           "bench:results.1.device_name=${GPUPROBE_HOSTILE}")
foreach(t ${GPUPROBE_TOOLS})
  foreach(suffix "" _json)
    simcuda_test_env(tools.${t}.hostile_sim_name${suffix})
    simcuda_test_fleet(tools.${t}.hostile_sim_name${suffix} "[gpu];preset=H200;name=${GPUPROBE_HOSTILE}")
  endforeach()
endforeach()

# The example programs, text only: the same fleets, the lesson's lines.
simcuda_program(two "${SIMCUDA_TWO}" smi --clean --err-empty ${SIMCUDA_UNTOUCHED}
  --out "^cpu     [^\n]+\ncuda:0  NVIDIA A100-SXM4-40GB: 42\\.5 GB total, 32\\.2 GB free, compute capability 8\\.0\ncuda:1  NVIDIA H200: 150\\.8 GB total, 128\\.8 GB free, compute capability 9\\.0\n$")
simcuda_program(memory_failure "${fail_gpu0}" smi ${no_nvml} --rc 1 --clean
  --out "\ncuda:0  NVIDIA A100-SXM4-40GB: memory unknown\ncuda:1  NVIDIA H200: 150\\.8 GB total, 128\\.3 GB free"
  --err "^smi: cuda:0: memory query: a CUDA call failed: cuMemGetInfo_v2 on cuda:0 \\(NVIDIA A100-SXM4-40GB\\) failed with CUDA_ERROR_UNKNOWN\n$")
simcuda_program(memory_failure "${fail_gpu0}" vram_capacity ${no_nvml} --rc 1 --clean
  --out "\ncuda:1: 128\\.2 GB usable" --no-out "cuda:0"
  --err "^vram_capacity: cuda:0: capacity: a CUDA call failed: cuMemGetInfo_v2 on cuda:0 ")
simcuda_program(two "${SIMCUDA_TWO}" cuda_info --clean --err-empty
  --out "^CUDA available: True\nCUDA version: 13\\.0\nGPU: NVIDIA A100-SXM4-40GB\nMemory: 42\\.5 GB\n$")
simcuda_program(hidden "${SIMCUDA_TWO}" cuda_info --env CUDA_VISIBLE_DEVICES= --clean
  --out "^CUDA available: False\nCUDA version: 13\\.0\nReason: CUDA devices are hidden by CUDA_VISIBLE_DEVICES \\(.*which hides all 2 GPU\\(s\\)")
simcuda_program(driver12 "driver_version=12.4;${SIMCUDA_ONE_H200}" cuda_info --clean --err-empty
  --out "^CUDA available: True\nCUDA version: 12\\.8\nGPU: NVIDIA H200\n")
simcuda_program(driver_too_old "driver_version=12.4;${SIMCUDA_ONE_H200}" cuda_info
  --env GPUPROBE_CUDA_LIBDIR=${SIMCUDA_DIR}/rt13 --clean
  --out "^CUDA available: False\nCUDA version: 13\\.0\nReason: the NVIDIA driver is too old for the CUDA runtime \\(driver supports CUDA 12\\.4, runtime is 13\\.0")
simcuda_program(two "${SIMCUDA_TWO}" select_device --clean --err-empty ${SIMCUDA_UNTOUCHED}
  --out "^Using: cuda:1\nDevice: NVIDIA H200\nReason: auto: cuda:1 \\(NVIDIA H200\\) has the most free memory \\(128\\.8 GB\\) of 2 CUDA devices\n$")
simcuda_program(cuda_0 "${SIMCUDA_TWO}" select_device --clean --err-empty
  --out "^Using: cuda:0\nDevice: NVIDIA A100-SXM4-40GB\n" -- --device cuda:0)
simcuda_program(min_free "${SIMCUDA_TWO}" select_device --rc 1
  --err "no device meets the requirements: cuda:0 \\(NVIDIA A100-SXM4-40GB\\): 32\\.2 GB free < 200\\.0 GB required\\x3b cuda:1 \\(NVIDIA H200\\): 128\\.8 GB free < 200\\.0 GB required\\x3b cpu: "
  --no-err "meets the requirements.*meets the requirements" -- --min-free 200e9)
simcuda_program(h200 "${SIMCUDA_ONE_H200}" vram_capacity --clean --err-empty ${SIMCUDA_UNTOUCHED}
  --out "\ncuda:0: 150\\.1 GB usable of 150\\.8 GB total \\(free minus a default CUDA context reserve\\)\n  fp16 weights   needs   14\\.0 GB: fits\n"
  -- --params 7e9)
simcuda_program(h200 "${SIMCUDA_ONE_H200}" matmul_bench --clean --err-empty
  --out "\nGPU: [^\n]*\\(median of [0-9]+ runs( of [0-9]+ calls)?, [^\n]*, verified\\x3b [^\n]*cuBLAS 13\\.1\\.0 "
  --out "\nSpeedup: [0-9.]+x\n$" -- --size 64)

# gpuprobe-fit --model and gpuprobe-select --model on simulated fleets, every
# figure against the library's plan (tests/tools/fit_models.py): every
# shipped config on one H200; 8 x A100-80GB for --gpus and the fewest GPUs;
# selection among three GPUs.
set(a100x8 "")
foreach(i RANGE 7)
  string(APPEND a100x8 "[gpu];preset=A100-80GB;")
endforeach()
set(fit_fleet_h200 "${SIMCUDA_ONE_H200}")
set(fit_fleet_a100x8 "${a100x8}")
set(fit_fleet_select "[gpu];preset=A100-40GB;free=30GiB;[gpu];preset=H200;free=20GiB;[gpu];preset=L4")
foreach(case h200 a100x8 select)
  gpuprobe_fit_models_test(scenario.fit.models_${case} ${case})
  simcuda_test_env(scenario.fit.models_${case})
  set_property(TEST scenario.fit.models_${case} APPEND PROPERTY ENVIRONMENT_MODIFICATION
    "GPUPROBE_MODELS_DIR=unset:" "HF_HUB_CACHE=unset:" "HF_HOME=unset:")
  simcuda_test_fleet(scenario.fit.models_${case} "${fit_fleet_${case}}")
endforeach()
# Planning reads NVML only: no context, no device memory.
simcuda_program(model "${SIMCUDA_ONE_H200}" gpuprobe-fit --clean --err-empty ${SIMCUDA_UNTOUCHED}
  --out "\nBest device: cuda:0 \\(NVIDIA H200\\): fits, " --out "\nFewest GPUs: 1 \\(cuda:0\\)\\.\n$"
  -- --model Llama-3.1-8B --context 8192)
simcuda_program(model.json "${SIMCUDA_ONE_H200}" gpuprobe-fit --err-empty ${SIMCUDA_UNTOUCHED}
  --json-eq devices.1.plan.kv_cache_bytes=1073741824 --json-eq devices.1.plan.overhead_bytes=536870912
  --json-eq devices.1.available_bytes=150604873728 --json-eq best_device=\"cuda:0\"
  --json-eq fewest_gpus.count=1 -- --model Llama-3.1-8B --context 8192 --json)
# --prompt, --generate: the speed on a simulated H200 and L4, from the figures
# of the time model (a gemm 5 us plus its FLOP at the board's rate, x 16 in
# bf16; the dot product 5 us plus both 64 KiB vectors at the memory's):
# read 2 x 65536 / (5 us + 131072 / 4.8e12) = 26,072,012,051 B/s on the H200,
# 24,107,826,019 on the L4; the matmul at 16 x 4864 x 896 27.18 and 26.37
# TFLOP/s. Qwen2.5-0.5B reads its 988,065,536 bytes of bf16 weights (tied)
# and 12,288 B of KV cache a token at each of the 7 steps after the first
# token (contexts 17 to 23), plus 24 layers x 5 us: 26.297 and 24.322
# tokens/s. The speed measurement works on the GPUs, so no SIMCUDA_UNTOUCHED.
set(speed_args --model Qwen2.5-0.5B --prompt 16 --generate 8 --speed-bytes 64KiB --speed-budget 5
  --device cuda)
simcuda_program(speed "[gpu];preset=H200;[gpu];preset=L4" gpuprobe-fit --clean --err-empty
  --out "\nfirst token  +[0-9.]+ ms +[0-9.]+ ms\ndecode +26\.3 tok/s +24\.3 tok/s\n"
  --out "\n  cuda:0: prefill 16 tokens: [0-9.]+ ms \\(memory-bound, 11\.7 GFLOP at [0-9.]+ TFLOP/s measured\\)\\x3b decode: 26\.3 tokens/s \\(memory-bound, 988 MB per token at 26\.1 GB/s measured\\)\n"
  -- ${speed_args})
simcuda_program(speed.json "[gpu];preset=H200;[gpu];preset=L4" gpuprobe-fit --err-empty
  --json-near devices.0.speed.measured.read_bytes_per_s=26072012051.5
  --json-near devices.1.speed.measured.read_bytes_per_s=24107826018.7
  --json-near devices.0.speed.measured.decode_flops=27184806371468.8
  --json-near devices.1.speed.measured.prefill_flops=26374699321457.3
  --json-near devices.0.speed.measured.prefill_attn_flops=6565569526325.27
  --json-eq devices.0.speed.decode_weight_bytes=988065536 --json-eq devices.0.speed.decode_bound=\"memory\"
  --json-near devices.0.speed.decode_tokens_per_s=26.2971170182
  --json-near devices.1.speed.decode_tokens_per_s=24.3217544523
  --json-eq devices.0.speed.measured.dtype=\"bf16\" --json-eq devices.1.speed.measured.cached=false
  --json-eq workload.prompt=16 --json-eq workload.generate=8 --json-eq workload.context=24
  -- ${speed_args} --json)
simcuda_program(model "${fit_fleet_select}" gpuprobe-select --clean --err-empty ${SIMCUDA_UNTOUCHED}
  --out "^Using: cuda:0\nDevice: NVIDIA A100-SXM4-40GB\nReason: auto: cuda:0 \\(NVIDIA A100-SXM4-40GB\\) has the most room for the model \\(12\\.6 GB left after the model's 19\\.6 GB\\) of 3 CUDA devices that hold it\n"
  -- --model Llama-3.1-8B --context 8192)
simcuda_program(eight_gpus "${a100x8}" model_fit --clean --err-empty ${SIMCUDA_UNTOUCHED}
  --out "\n  on GPUs: 4 \\(cuda:0, cuda:1, cuda:2, cuda:3\\)\n$" -- --model Llama-3.1-70B --context 131072)

# Never above: the capacity prediction against the largest single allocation
# that succeeds (tests/gpu/capacity_probe.c, which scripts/gpu-check runs on
# a real GPU), on simulated boards whose driver hands memory out in 2 MiB
# pages and keeps 1/2048 of it back from allocations: the predicted size
# itself allocates, and it is at most the largest allocation and within 2% of
# it (the probe's exit status). The negative control's driver keeps back 1 GiB,
# more than the library allows for: the prediction does not allocate, and
# the probe must say so.
if(TARGET capacity_probe)
  set(probe_h200 "preset=H200")
  set(probe_l4 "preset=L4")
  set(probe_t4 "preset=T4")
  set(probe_8gb "preset=RTX4090;name=Simulated 8 GB card;total=8GiB")
  foreach(board h200 l4 t4 8gb)
    gpuprobe_run_test(scenario.capacity_probe.${board} capacity_probe --err-empty
      --out "\"predicted_allocatable\": true, " --out "\"search_step_bytes\": 2097152, "
      --out "\"predicted_over_max\": 0\\.99[0-9]+, " --out "\"pass\": true")
    simcuda_test_env(scenario.capacity_probe.${board})
    simcuda_test_fleet(scenario.capacity_probe.${board} "[gpu];${probe_${board}}")
  endforeach()
  gpuprobe_run_test(scenario.capacity_probe.driver_keeps_more capacity_probe --rc 1
    --out "\"predicted_allocatable\": false, " --out "\"pass\": false")
  simcuda_test_env(scenario.capacity_probe.driver_keeps_more)
  simcuda_test_fleet(scenario.capacity_probe.driver_keeps_more "[gpu];preset=L4;alloc_reserve=1GiB")
endif()

# cuInit alone, held (tests/gpu/cuinit_hold.c, step 7's control in
# scripts/gpu-check): on a simulated H200 it succeeds, says how long it
# took and holds; without a driver it skips (77); the driver's refusal (a
# cuInit error) is exit status 1; a bad command line is refused.
if(TARGET cuinit_hold)
  gpuprobe_run_test(scenario.cuinit_hold cuinit_hold --err-empty
    --out "^cuInit: 0 in [0-9]+\\.[0-9] ms\nheld 20 ms\n$" -- 20)
  simcuda_test_env(scenario.cuinit_hold)
  simcuda_test_fleet(scenario.cuinit_hold "[gpu];preset=H200")
  gpuprobe_run_test(scenario.cuinit_hold.refused cuinit_hold --rc 1
    --out "^cuInit: [1-9][0-9]* in [0-9.]+ ms\nheld 0 ms\n$" -- 0)
  simcuda_test_env(scenario.cuinit_hold.refused)
  simcuda_test_fleet(scenario.cuinit_hold.refused "cuinit_error=CUDA_ERROR_UNKNOWN;${SIMCUDA_ONE_H200}")
  gpuprobe_run_test(scenario.cuinit_hold.no_driver cuinit_hold --rc 77 --out-empty
    --err "^cuinit_hold: libcuda\\.so\\.1: cannot open shared object file" -- 0)
  simcuda_test_env(scenario.cuinit_hold.no_driver NO_DRIVER)
  foreach(bad "" "-1" "60001" "10ms")
    string(MAKE_C_IDENTIFIER "bad_${bad}" name)
    gpuprobe_run_test(scenario.cuinit_hold.${name} cuinit_hold --rc 2 --out-empty
      --err "^usage: cuinit_hold MILLISECONDS \\(0 to 60000\\)\n$" -- ${bad})
  endforeach()
endif()

# scripts/gpu-check itself, on a simulated H200 (the script's own logic:
# the GPU's figures are the simulation's). The steps --steps names run in
# its order; the one --deadline leaves too little time for is named as not
# run; the summary comes last with each step's seconds; a step that needs
# nvidia-smi says it is skipped. Unknown steps and deadlines are refused.
if(TARGET capacity_probe AND TARGET gpuprobe-info AND GPUPROBE_PYTHON3)
  set(gpu_check ${PROJECT_SOURCE_DIR}/scripts/gpu-check --build ${PROJECT_BINARY_DIR})
  add_test(NAME scenario.gpu_check.steps COMMAND ${GPUPROBE_RUN}
    --out "===== 3\\. capacity[^\n]*\n(.*\n)*===== 7\\. probe without touching"
    --out "\ncapacity fp16 \\(never above, within 2%\\) +pass predicted "
    --out "\nprobe without touching +skipped \\(no usable GPU or no nvidia-smi\\)"
    --out "\nstep 3b \\(fit\\) +not run: [0-9]+ s of --deadline 80 left, it is allowed 90\n"
    --out "\nseconds per step: 3 capacity [0-9]+ s, 7 touch [0-9]+ s; in all [0-9]+ s\n"
    --no-out "===== (2|3b|4|5|5b|5c|6)\\."
    -- ${gpu_check} --out ${SIMCUDA_DIR}/gpu-check --steps capacity,7,3b --deadline 80)
  simcuda_test_env(scenario.gpu_check.steps)
  simcuda_test_fleet(scenario.gpu_check.steps "[gpu];preset=H200")
  add_test(NAME scenario.gpu_check.bad_step COMMAND ${GPUPROBE_RUN} --rc 2 --out-empty
    --err "^gpu-check: unknown step '9' \\(2 3 3b 4 5 5b 5c 6 7, or suite "
    -- ${gpu_check} --out ${SIMCUDA_DIR}/gpu-check-bad --steps 3,9)
  add_test(NAME scenario.gpu_check.bad_deadline COMMAND ${GPUPROBE_RUN} --rc 2 --out-empty
    --err "^gpu-check: --deadline wants whole seconds, not '1e3'\n$"
    -- ${gpu_check} --out ${SIMCUDA_DIR}/gpu-check-bad --deadline 1e3)
  # A command that runs past its limit (here a context that takes a minute
  # to make, against 40 s of --deadline) is stopped and named, its step
  # fails, and the summary still comes.
  add_test(NAME scenario.gpu_check.stopped COMMAND ${GPUPROBE_RUN} --rc 1
    --out "\ngpu-check: stopped after [0-9]+ s: capacity_probe\n"
    --out "\ncapacity fp16 \\(never above, within 2%\\) +FAIL"
    --out "\nseconds per step: 3 capacity [0-9]+ s; in all [0-9]+ s\n"
    -- ${gpu_check} --out ${SIMCUDA_DIR}/gpu-check-stopped --steps 3 --deadline 40)
  simcuda_test_env(scenario.gpu_check.stopped)
  simcuda_test_fleet(scenario.gpu_check.stopped "context_ms=60000;[gpu];preset=H200")
  foreach(t steps bad_step bad_deadline stopped)
    set_tests_properties(scenario.gpu_check.${t} PROPERTIES LABELS scenario TIMEOUT 240)
  endforeach()
endif()

# gpuprobe-nfd's queries (tools/nfd) on a simulated node: which GPUs get a
# context, memory or work, from the simulation's state and call log. The
# labels of simulated nodes, whole-command: tools.nfd.labels_sim_* (the end
# of tests/tools.cmake, which is included after this file).
if(TARGET gpuprobe_nfd_core)
  simcuda_scenario(scenario_nfd gpuprobe_nfd_core gpuprobe)
  add_test(NAME scenario.nfd COMMAND scenario_nfd)
  simcuda_test_env(scenario.nfd)
endif()
