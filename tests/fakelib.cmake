# Fake libraries for tests/test_loader.c and tests/test_nvml.c: shared
# objects named like the CUDA runtime, the CUDA driver, NVML and OpenBLAS
# that load but lack one of the functions libgpuprobe needs
# (tests/fakelib/fakelib.c). Each lands in its
# own directory under <build>/tests/fakelib/; the test finds them through
# GP_FAKELIB_DIR, and points GPUPROBE_CUDA_LIBDIR or the gp_test_dlopen
# seam at them. The libgpuprobe.so.1 fakes are for the Python package's
# version check (python/tests, which finds them under the build tree).

set(GP_FAKELIB_DIR ${CMAKE_CURRENT_BINARY_DIR}/fakelib)

# gp_fakelib(<dir> <file name> <FAKE_x> [function to leave out]...)
function(gp_fakelib dir file kind)
  set(target fakelib_${dir})
  string(REPLACE "-" "_" target "${target}")
  add_library(${target} SHARED ${CMAKE_CURRENT_SOURCE_DIR}/fakelib/fakelib.c)
  set_target_properties(${target} PROPERTIES
    PREFIX "" SUFFIX "" OUTPUT_NAME "${file}"
    LIBRARY_OUTPUT_DIRECTORY ${GP_FAKELIB_DIR}/${dir}
    C_VISIBILITY_PRESET default)
  target_compile_definitions(${target} PRIVATE ${kind})
  foreach(fn ${ARGN})
    target_compile_definitions(${target} PRIVATE ${fn}=${fn}_absent)
  endforeach()
  foreach(test test_loader test_nvml)
    if(TARGET ${test})
      add_dependencies(${test} ${target})
    endif()
  endforeach()
endfunction()

gp_fakelib(cudart libcudart.so.12 FAKE_CUDART)
gp_fakelib(cudart-no-memgetinfo libcudart.so.12 FAKE_CUDART cudaMemGetInfo)
gp_fakelib(cuda libcuda.so.1 FAKE_CUDA)
gp_fakelib(cuda-no-memgetinfo libcuda.so.1 FAKE_CUDA cuMemGetInfo_v2)
gp_fakelib(cuda-old-uuid libcuda.so.1 FAKE_CUDA cuDeviceGetUuid_v2)
gp_fakelib(cuda-no-uuid libcuda.so.1 FAKE_CUDA cuDeviceGetUuid_v2 cuDeviceGetUuid)
foreach(fn cblas_sgemm cblas_dgemm openblas_get_num_threads openblas_set_num_threads
           openblas_get_corename openblas_get_config)
  gp_fakelib(openblas-no-${fn} libopenblas.so.0 FAKE_OPENBLAS ${fn})
endforeach()

gp_fakelib(openblas-noop libopenblas.so.0 FAKE_OPENBLAS_NOOP)

gp_fakelib(nvml libnvidia-ml.so.1 FAKE_NVML)
foreach(fn nvmlInit_v2 nvmlShutdown)
  gp_fakelib(nvml-no-${fn} libnvidia-ml.so.1 FAKE_NVML ${fn})
endforeach()
# The processes query's older versions stand in for the newest.
gp_fakelib(nvml-procs-v2 libnvidia-ml.so.1 FAKE_NVML nvmlDeviceGetComputeRunningProcesses_v3)
gp_fakelib(nvml-procs-v1 libnvidia-ml.so.1 FAKE_NVML nvmlDeviceGetComputeRunningProcesses_v3
           nvmlDeviceGetComputeRunningProcesses_v2)

foreach(test test_loader test_nvml)
  if(TARGET ${test})
    target_compile_definitions(${test} PRIVATE GP_FAKELIB_DIR="${GP_FAKELIB_DIR}")
  endif()
endforeach()

# libgpuprobe itself, too old (1.0.3), of another major (2.1.0), and one
# that is not libgpuprobe at all (no gpuprobe_version).
gp_fakelib(gpuprobe-1.0 libgpuprobe.so.1 FAKE_GPUPROBE)
gp_fakelib(gpuprobe-2.1 libgpuprobe.so.1 FAKE_GPUPROBE)
target_compile_definitions(fakelib_gpuprobe_2.1 PRIVATE FAKE_GPUPROBE_VERSION=20100)
gp_fakelib(gpuprobe-none libgpuprobe.so.1 FAKE_GPUPROBE gpuprobe_version)
