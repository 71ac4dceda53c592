# Foundation tests: runs of the smi and cuda_info examples, and the rule
# that libgpuprobe.so never links a CUDA library. Included by
# tests/CMakeLists.txt. (Options, JSON, exit statuses and write errors of the
# examples and commands: tests/tools.cmake.)

# The runs must not depend on the developer's environment.
function(gpuprobe_foundation_env test)
  set_tests_properties(${test} PROPERTIES ENVIRONMENT_MODIFICATION
    "GPUPROBE_DEVICE=unset:;GPUPROBE_CUDA=unset:;GPUPROBE_CUDA_LIBDIR=unset:")
endfunction()

# Run a command (the remaining arguments); pass only if its output matches
# `regex` AND it exits 0 (PASS_REGULAR_EXPRESSION alone ignores the exit
# status, so the status is appended to the output and matched too).
function(gpuprobe_example_test name regex)
  add_test(NAME ${name}
    COMMAND sh -c "\"$@\"; echo \"[exit status $?]\"" sh ${ARGN})
  gpuprobe_foundation_env(${name})
  set_tests_properties(${name} PROPERTIES
    PASS_REGULAR_EXPRESSION "${regex}.*\\[exit status 0\\]")
endfunction()

find_program(GPUPROBE_READELF readelf)

if(GPUPROBE_BUILD_EXAMPLES AND TARGET smi AND TARGET cuda_info)
  # Text output: the lesson's lines (GPU and memory, or the reason).
  gpuprobe_example_test(example.cuda_info
    "CUDA available: (True|False)\nCUDA version: ([0-9]+\\.[0-9]+|None)\n(GPU: [^\n]+\nMemory: [0-9]+\\.[0-9] GB|Reason: [^\n]+ \\([^\n]*\\))\n"
    $<TARGET_FILE:cuda_info>)

  # Every device with its memory (the cause first when CUDA is not usable).
  gpuprobe_example_test(example.smi
    "^(No usable CUDA GPU: [^\n]+\\[[a-z_]+\\]\n  [^\n]*\n)?cpu +[^\n]+: [0-9.]+ [kMGTP]?B total, [0-9.]+ [kMGTP]?B available\n"
    $<TARGET_FILE:smi>)

  # Turned off by the user: the cause is named.
  gpuprobe_example_test(example.cuda_info_disabled
    "CUDA available: False\nCUDA version: None\nReason: CUDA was turned off by the user \\("
    env GPUPROBE_CUDA=off $<TARGET_FILE:cuda_info>)
  gpuprobe_example_test(example.smi_disabled
    "^No usable CUDA GPU: CUDA was turned off by the user \\[disabled\\]\n"
    env GPUPROBE_CUDA=off $<TARGET_FILE:smi>)
endif()

# No link-time CUDA dependency: readelf -d shows no libcuda, libcudart,
# libcublas or libnvidia-ml among the NEEDED entries.
if(GPUPROBE_READELF)
  add_test(NAME foundation.no_cuda_needed
    COMMAND sh -c "d=$(\"$1\" -d \"$2\") || exit 1; echo \"$d\" | grep -q NEEDED || exit 1; if echo \"$d\" | grep -E 'NEEDED.*(libcuda|libcudart|libcublas|libnvidia-ml)'; then exit 1; fi; exit 0"
      sh ${GPUPROBE_READELF} $<TARGET_FILE:gpuprobe>)
endif()
