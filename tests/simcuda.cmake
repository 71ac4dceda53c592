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
# the simulated libraries first on the loader's path. Further arguments:
# NAME=VALUE settings (e.g. SIMCUDA_FLEET=...), or NO_DRIVER to leave the
# simulated driver off the loader's path.
function(simcuda_test_env test)
  set(env "CMOCKA_MESSAGE_OUTPUT=stdout")
  set(mod "GPUPROBE_DEVICE=unset:;GPUPROBE_CUDA=unset:;GPUPROBE_CUDA_LIBDIR=unset:;CUDA_VISIBLE_DEVICES=unset:;CUDA_DEVICE_ORDER=unset:;NVIDIA_TF32_OVERRIDE=unset:;SIMCUDA_FLEET=unset:;SIMCUDA_CONFIG=unset:;SIMCUDA_LOG=unset:")
  if("${ARGN}" MATCHES "^NO_DRIVER")
    string(APPEND mod ";LD_LIBRARY_PATH=unset:")
    list(REMOVE_AT ARGN 0)
  else()
    string(APPEND env ";LD_LIBRARY_PATH=${SIMCUDA_DIR}/lib")
  endif()
  foreach(e ${ARGN})
    string(REPLACE ";" "\\;" e "${e}")
    string(APPEND env ";${e}")
  endforeach()
  set_tests_properties(${test} PROPERTIES LABELS scenario TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "${env}" ENVIRONMENT_MODIFICATION "${mod}")
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
