# GPU-only checks. capacity_probe needs a usable NVIDIA GPU; elsewhere it
# exits 77, which ctest reports as skipped.
add_executable(capacity_probe ${CMAKE_CURRENT_SOURCE_DIR}/gpu/capacity_probe.c)
target_link_libraries(capacity_probe PRIVATE gpuprobe ${CMAKE_DL_LIBS})
add_test(NAME gpu.capacity_probe COMMAND capacity_probe)
set_tests_properties(gpu.capacity_probe PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)

# cuinit_hold: cuInit alone, held (scripts/gpu-check step 7's control: what
# the driver's initialisation costs the GPU before any context).
add_executable(cuinit_hold ${CMAKE_CURRENT_SOURCE_DIR}/gpu/cuinit_hold.c)
target_link_libraries(cuinit_hold PRIVATE ${CMAKE_DL_LIBS})

# runstat: median wall time and peak RSS of a command (scripts/gpu-check,
# scripts/bench-probe). Checked here on cuda_info, which must run and exit 0.
add_executable(runstat ${CMAKE_CURRENT_SOURCE_DIR}/bench/runstat.c)
set_target_properties(runstat PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
if(TARGET cuda_info)
  add_test(NAME bench.runstat_cuda_info COMMAND runstat 3 cuda_info -- $<TARGET_FILE:cuda_info>)
  set_tests_properties(bench.runstat_cuda_info PROPERTIES PASS_REGULAR_EXPRESSION "\"median_ms\": [0-9.]+, .*\"failures\": 0")
endif()

# bench.NAME: tests/tools/NAME_check.py on scripts/lib/NAME.py, with the
# arguments after NAME, then a work directory of its own; it passes when
# it prints "all checks passed". Called from this file only (the tools
# directory is the caller's CMAKE_CURRENT_LIST_DIR).
function(gp_script_check name)
  add_test(NAME bench.${name}
    COMMAND ${GPUPROBE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/tools/${name}_check.py
      ${PROJECT_SOURCE_DIR}/scripts/lib/${name}.py ${ARGN}
      ${CMAKE_CURRENT_BINARY_DIR}/${name}_check)
  set_tests_properties(bench.${name} PROPERTIES TIMEOUT 60
    PASS_REGULAR_EXPRESSION "all checks passed")
endfunction()

# scripts/lib/carried_tests.py, which scripts/gpu-check uses to run the unit
# tests of a build carried to a GPU machine: on a tree whose ctest files
# name paths that do not exist here (tests/tools/carried_tests_check.py).
include(${CMAKE_CURRENT_LIST_DIR}/tools/run.cmake)
if(GPUPROBE_PYTHON3)
  add_test(NAME bench.carried_tests
    COMMAND ${GPUPROBE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/tools/carried_tests_check.py
      ${PROJECT_SOURCE_DIR}/scripts/lib/carried_tests.py ${CMAKE_CTEST_COMMAND}
      ${CMAKE_CURRENT_BINARY_DIR}/carried_tests_check)
  set_tests_properties(bench.carried_tests PROPERTIES TIMEOUT 120)
endif()

# scripts/lib/speed_summary.py, the tables of scripts/bench-speed (and of
# gpu-check's step 5c): on run lines whose answers are known
# (tests/tools/speed_summary_check.py).
if(GPUPROBE_PYTHON3)
  gp_script_check(speed_summary ${PROJECT_SOURCE_DIR}/examples/models)
endif()

# scripts/lib/torch_decode.py, the runs of scripts/bench-speed and of
# gpu-check's step 5c (tests/tools/torch_decode_check.py): its arguments
# (no torch needed); and, with a Python that has torch and transformers
# ($PYTHON; skipped without one), the static engine's tokens against the
# eager engine's and its calls free of reads back to the host, which a
# CUDA graph capture refuses.
if(GPUPROBE_PYTHON3)
  add_test(NAME bench.torch_decode
    COMMAND ${GPUPROBE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/tools/torch_decode_check.py
      args ${PROJECT_SOURCE_DIR}/scripts/lib/torch_decode.py)
  set_tests_properties(bench.torch_decode PROPERTIES TIMEOUT 60
    PASS_REGULAR_EXPRESSION "all checks passed")
  add_test(NAME bench.torch_decode_engines
    COMMAND ${GPUPROBE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/tools/torch_decode_check.py
      engines ${PROJECT_SOURCE_DIR}/scripts/lib/torch_decode.py
      ${PROJECT_SOURCE_DIR}/examples/models/Qwen2.5-0.5B.json
      ${CMAKE_CURRENT_BINARY_DIR}/torch_decode_engines)
  set_tests_properties(bench.torch_decode_engines PROPERTIES TIMEOUT 300
    SKIP_RETURN_CODE 77)
endif()

# scripts/lib/bandwidth_summary.py, the verdict of scripts/bench-bandwidth:
# over pairs of rounds, in which the order the tools ran in cancels
# (tests/tools/bandwidth_summary_check.py).
if(GPUPROBE_PYTHON3)
  gp_script_check(bandwidth_summary)
  # scripts/lib/bandwidth_steps.py: the rounds of bench-bandwidth -x, from
  # its interleaved steps (tests/tools/bandwidth_steps_check.py).
  gp_script_check(bandwidth_steps)
  # scripts/lib/bandwidth_trials.py: which kernel set the CPU runs chose
  # and by how much (tests/tools/bandwidth_trials_check.py).
  set(bench_cmd)
  if(TARGET gpuprobe-bench)
    set(bench_cmd $<TARGET_FILE:gpuprobe-bench>)
  endif()
  add_test(NAME bench.bandwidth_trials
    COMMAND ${GPUPROBE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/tools/bandwidth_trials_check.py
      ${PROJECT_SOURCE_DIR}/scripts/lib/bandwidth_trials.py
      ${CMAKE_CURRENT_BINARY_DIR}/bandwidth_trials_check ${bench_cmd})
  set_tests_properties(bench.bandwidth_trials PROPERTIES TIMEOUT 60
    PASS_REGULAR_EXPRESSION "all checks passed")
endif()
