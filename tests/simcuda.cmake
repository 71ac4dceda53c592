# The simulated NVIDIA stack (tests/simcuda/) and the scenario tests that
# run the unmodified library against it. Included by tests/CMakeLists.txt.
#
# Layout of the build (SIMCUDA_DIR = <build>/simcuda):
#   core/libsimcuda.so   the shared state and the simcuda_* control API
#   lib/                 libcuda.so.1, libnvidia-ml.so.1, libcudart.so.13,
#                        libcudart.so.12, libcublas.so.13, libcublas.so.12
#   rt13/, rt12/         only the CUDA 13 (12) runtime and cuBLAS, for
#                        GPUPROBE_CUDA_LIBDIR; empty/ holds nothing
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
  VERBATIM)
add_dependencies(simcuda_layout ${SIMCUDA_LIBRARIES})

# ---- tests --------------------------------------------------------------------

# What every scenario run starts from: no CUDA variable of the caller's,
# the simulated libraries first on the loader's path; NO_DRIVER leaves the
# simulated driver off it.
function(simcuda_test_env test)
  set(env "CMOCKA_MESSAGE_OUTPUT=stdout")
  set(mod "GPUPROBE_DEVICE=unset:;GPUPROBE_CUDA=unset:;GPUPROBE_CUDA_LIBDIR=unset:;CUDA_VISIBLE_DEVICES=unset:;CUDA_DEVICE_ORDER=unset:;NVIDIA_TF32_OVERRIDE=unset:;SIMCUDA_FLEET=unset:;SIMCUDA_CONFIG=unset:;SIMCUDA_LOG=unset:")
  if("${ARGN}" STREQUAL "NO_DRIVER")
    string(APPEND mod ";LD_LIBRARY_PATH=unset:")
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

# The causes: the kernel side comes through the sysroot test seam, hence the
# internal archive (the same objects).
simcuda_scenario(scenario_causes gpuprobe_internal)
target_include_directories(scenario_causes PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME scenario.causes COMMAND scenario_causes)
simcuda_test_env(scenario.causes)
add_test(NAME scenario.causes_no_driver COMMAND scenario_causes no-driver)
simcuda_test_env(scenario.causes_no_driver NO_DRIVER)

simcuda_scenario(scenario_matmul gpuprobe)
add_test(NAME scenario.matmul COMMAND scenario_matmul)
simcuda_test_env(scenario.matmul)

# ---- the example programs, run whole against simulated fleets ----------------
#
# simcuda_program(NAME FLEET REGEX PROGRAM [ARG...]): passes when the output
# (stdout and stderr) matches REGEX; append "\\[exit status 0\\]" to REGEX to
# require the status too. simcuda_program_json(NAME FLEET PROGRAM [ARG...]
# -- EXPECTATION...): the program's JSON must meet every expectation (see
# json_expect.py). FLEET is configuration text with ';' between lines
# (written to <build>/simcuda/fleets/<test>.conf for the run). PROGRAM is
# the program's target name.
set(SIMCUDA_ONE_H200 "[gpu];preset=H200;uuid=GPU-5e1e0000-4200-4000-8000-00000000000b;pci=0000:19:00.0")
set(SIMCUDA_TWO "[gpu];preset=A100-40GB;uuid=GPU-5e1e0000-a100-4000-8000-00000000000a;pci=0000:21:00.0;free=30GiB;[gpu];preset=H200;uuid=GPU-5e1e0000-4200-4000-8000-00000000000b;pci=0000:81:00.0;free=120GiB")

# A run whose program is not a target: skipped when the examples are not
# built, else a failing test (a renamed program must not drop its runs).
function(simcuda_missing_program name program)
  if(GPUPROBE_BUILD_EXAMPLES)
    add_test(NAME scenario.program.${name}
      COMMAND sh -c "echo 'no program target named ${program}: update tests/simcuda.cmake'; exit 1")
  else()
    add_test(NAME scenario.program.${name}
      COMMAND sh -c "echo 'SKIP: the example programs are not built'; exit 77")
  endif()
  set_tests_properties(scenario.program.${name} PROPERTIES LABELS scenario SKIP_RETURN_CODE 77)
endfunction()

function(simcuda_program name fleet regex program)
  if(NOT TARGET ${program})
    simcuda_missing_program(${name} ${program})
    return()
  endif()
  add_test(NAME scenario.program.${name}
    COMMAND sh -c "\"$@\" 2>&1; echo \"[exit status $?]\"" sh $<TARGET_FILE:${program}> ${ARGN})
  simcuda_test_env(scenario.program.${name})
  simcuda_test_fleet(scenario.program.${name} "${fleet}")
  set_tests_properties(scenario.program.${name} PROPERTIES PASS_REGULAR_EXPRESSION "${regex}")
endfunction()

find_program(GPUPROBE_PYTHON3 python3)
function(simcuda_program_json name fleet program)
  if(NOT TARGET ${program})
    simcuda_missing_program(${name} ${program})
    return()
  endif()
  if(NOT GPUPROBE_PYTHON3)
    add_test(NAME scenario.program.${name} COMMAND sh -c "echo 'SKIP: python3 is needed to check JSON'; exit 77")
  else()
    add_test(NAME scenario.program.${name}
      COMMAND ${GPUPROBE_PYTHON3} ${SIMCUDA_SRC}/json_expect.py $<TARGET_FILE:${program}> ${ARGN})
  endif()
  simcuda_test_env(scenario.program.${name})
  simcuda_test_fleet(scenario.program.${name} "${fleet}")
endfunction()

# smi: the table row of each GPU; the context's cost measured through NVML.
simcuda_program(smi.h200 "${SIMCUDA_ONE_H200}"
  "\\|   0 \\| NVIDIA H200 +\\|  150\\.8 GB \\|  150\\.2 GB \\| 9\\.0  \\|  132 \\| 0000:19:00\\.0 .*the context itself takes: cuda:0 524\\.3 MB\\..*\\[exit status 0\\]"
  smi)
simcuda_program_json(smi.h200.json "${SIMCUDA_ONE_H200}" smi --json --
  cuda_available=true cuda_runtime_version=\"13.0\" cuda_driver_version=\"13.0\"
  devices.1.name=\"NVIDIA\ H200\" devices.1.uuid=\"GPU-5e1e0000-4200-4000-8000-00000000000b\"
  devices.1.pci_bus_id=\"0000:19:00.0\" devices.1.memory.total_bytes=150754820096
  devices.1.memory.available_bytes=150230532096 devices.1.memory.context_bytes=524288000
  devices.1.memory.created_context=true devices.1.memory.context_measured=true)
simcuda_program_json(smi.two.json "${SIMCUDA_TWO}" smi --json --
  devices.1.memory.available_bytes=31687966720 devices.2.memory.available_bytes=128324730880)

# cuda_info: the lesson's lines; why CUDA is not available.
simcuda_program(cuda_info.two "${SIMCUDA_TWO}"
  "CUDA available: True\nCUDA version: 13\\.0\nGPU: NVIDIA A100-SXM4-40GB\nMemory: 42\\.5 GB\n.*\\[exit status 0\\]"
  cuda_info)
simcuda_program_json(cuda_info.two.json "${SIMCUDA_TWO}" cuda_info --json --
  reason=\"available\" devices.2.name=\"NVIDIA\ H200\" devices.2.compute_capability=\"9.0\"
  devices.2.multiprocessors=132 devices.1.uuid=\"GPU-5e1e0000-a100-4000-8000-00000000000a\")
simcuda_program(cuda_info.hidden "${SIMCUDA_TWO}"
  "CUDA available: False\nCUDA version: 13\\.0\nReason: CUDA devices are hidden by CUDA_VISIBLE_DEVICES \\(.*which hides all 2 GPU\\(s\\)"
  cuda_info)
if(TEST scenario.program.cuda_info.hidden)
  set_property(TEST scenario.program.cuda_info.hidden APPEND PROPERTY ENVIRONMENT_MODIFICATION
    "CUDA_VISIBLE_DEVICES=set:")
endif()
simcuda_program_json(cuda_info.driver12.json "driver_version=12.4;${SIMCUDA_ONE_H200}" cuda_info --json --
  cuda_available=true cuda_runtime_version=\"12.8\" cuda_driver_version=\"12.4\")
simcuda_program_json(cuda_info.driver_too_old.json "driver_version=12.4;${SIMCUDA_ONE_H200}" cuda_info --json --
  cuda_available=false reason=\"driver_too_old\" cuda_driver_version=\"12.4\" cuda_runtime_version=\"13.0\")
if(TEST scenario.program.cuda_info.driver_too_old.json)
  set_property(TEST scenario.program.cuda_info.driver_too_old.json APPEND PROPERTY
    ENVIRONMENT_MODIFICATION "GPUPROBE_CUDA_LIBDIR=set:${SIMCUDA_DIR}/rt13")
endif()

# select_device: the most free memory wins; a requirement nothing meets is
# said once (the status text is not repeated in the message).
simcuda_program(select_device.two "${SIMCUDA_TWO}"
  "Using: cuda:1\nDevice: NVIDIA H200\nReason: auto: cuda:1 \\(NVIDIA H200\\) has the most free memory \\(128\\.3 GB\\) of 2 CUDA devices\n\\[exit status 0\\]"
  select_device)
simcuda_program_json(select_device.two.json "${SIMCUDA_TWO}" select_device --json --
  using=\"cuda:1\" device_index=2 cuda_cause=\"available\")
simcuda_program(select_device.min_free "${SIMCUDA_TWO}"
  "no device meets the requirements: cuda:0 \\(NVIDIA A100-SXM4-40GB\\): 31\\.7 GB free < 200\\.0 GB required; cuda:1 \\(NVIDIA H200\\): 128\\.3 GB free < 200\\.0 GB required; cpu: "
  select_device --min-free 200e9)
if(TEST scenario.program.select_device.min_free)
  set_tests_properties(scenario.program.select_device.min_free PROPERTIES
    FAIL_REGULAR_EXPRESSION "meets the requirements.*meets the requirements")
endif()

# vram_capacity: the measured context cost is the reserve.
simcuda_program(vram_capacity.h200 "${SIMCUDA_ONE_H200}"
  "cuda:0 \\(NVIDIA H200\\)\n  memory: 150\\.8 GB total, 150\\.2 GB free\n  usable: 149\\.7 GB = 150\\.2 GB free - 524\\.3 MB for the CUDA context \\(measured on this device\\).*\\[exit status 0\\]"
  vram_capacity --params 7e9)
simcuda_program_json(vram_capacity.h200.json "${SIMCUDA_ONE_H200}" vram_capacity --json --
  devices.1.reserve_source=\"measured\" devices.1.reserve_bytes=524288000
  devices.1.usable_bytes=149706244096 devices.1.max_params.fp16=74853122048)

# matmul_bench: a verified GPU run, work run at once and deferred.
simcuda_program(matmul_bench.bf16 "${SIMCUDA_ONE_H200}"
  "GPU: [^\n]*bf16, median of 3 runs[^\n]*verified\\).*cuBLAS 13\\.1\\.0.*\\[exit status 0\\]"
  matmul_bench --size 96 --device cuda:0 --dtype bf16 --runs 3)
simcuda_program_json(matmul_bench.tf32.deferred.json "mode=deferred;${SIMCUDA_ONE_H200}" matmul_bench
  --size 77 --device cuda:0 --dtype tf32 --runs 3 --json --
  results.0.status=\"ok\" results.0.verified=true results.0.runs=3
  results.0.compute_type=\"CUBLAS_COMPUTE_32F_FAST_TF32\")
