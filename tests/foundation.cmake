# Foundation tests: runs of the smi and cuda_info examples (text and JSON),
# their usage errors, and the rule that libgpuprobe.so never links a CUDA
# library. Included by tests/CMakeLists.txt.

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

find_program(GPUPROBE_PYTHON3 python3)
find_program(GPUPROBE_READELF readelf)

if(GPUPROBE_BUILD_EXAMPLES AND TARGET smi AND TARGET cuda_info)
  # Text output: the lesson's lines (GPU and memory, or the reason).
  gpuprobe_example_test(example.cuda_info
    "CUDA available: (True|False)\nCUDA version: ([0-9]+\\.[0-9]+|None)\n(GPU: [^\n]+\nMemory: [0-9]+\\.[0-9] GB|Reason: [^\n]+ \\([^\n]*\\))\n"
    $<TARGET_FILE:cuda_info>)

  # nvidia-smi-like table or the named cause, then the CPU.
  gpuprobe_example_test(example.smi
    "Driver CUDA Version: [^\n]+CUDA Runtime Version: [^\n]+\n.*(\\| GPU \\| Name|No usable CUDA GPU: [^\n]+\\[[a-z_]+\\]).*\nCPU   [^\n]+\n[^\n]*logical cores[^\n]*\nBLAS  OpenBLAS [^\n]+\nRAM   [0-9]"
    $<TARGET_FILE:smi>)

  # Turned off by the user: the cause is named.
  gpuprobe_example_test(example.cuda_info_disabled
    "CUDA available: False\nCUDA version: None\nReason: CUDA was turned off by the user \\("
    env GPUPROBE_CUDA=off $<TARGET_FILE:cuda_info>)
  gpuprobe_example_test(example.smi_disabled
    "\"cuda_available\": false, \"reason\": \"disabled\""
    env GPUPROBE_CUDA=off $<TARGET_FILE:smi> --json)

  foreach(prog cuda_info smi)
    # JSON: one object with the documented keys, the CPU first.
    gpuprobe_example_test(example.${prog}_json
      "^{.*\"cuda_available\": (true|false), \"reason\": \"[a-z_]+\", \"detail\": \".*\"cuda_runtime_version\": .*\"devices\": \\[{\"index\": 0, \"spec\": \"cpu\", \"kind\": \"cpu\".*}\\]}\n"
      $<TARGET_FILE:${prog}> --json)
    # ... and valid JSON with the right types, checked by python3.
    if(GPUPROBE_PYTHON3)
      add_test(NAME example.${prog}_json_valid
        COMMAND sh -c "out=$(\"$1\" --json) || exit 1; printf '%s' \"$out\" | \"$2\" -c 'import json,sys; d=json.load(sys.stdin); assert isinstance(d[\"cuda_available\"], bool); assert isinstance(d[\"reason\"], str) and isinstance(d[\"detail\"], str); assert d[\"devices\"][0][\"kind\"] == \"cpu\" and d[\"devices\"][0][\"total_memory_bytes\"] > 0; assert \"cuda_runtime_version\" in d and \"cuda_driver_version\" in d; assert d[\"cuda_available\"] == any(x[\"kind\"] == \"cuda\" for x in d[\"devices\"])' && printf '%s' \"$out\" | \"$2\" -m json.tool >/dev/null"
          sh $<TARGET_FILE:${prog}> ${GPUPROBE_PYTHON3})
      gpuprobe_foundation_env(example.${prog}_json_valid)
    endif()
    # Unknown options: a message on stderr and exit status 2.
    add_test(NAME example.${prog}_bad_option
      COMMAND sh -c "err=$(\"$1\" --no-such-option 2>&1 >/dev/null); rc=$?; test $rc -eq 2 || { echo \"exit status $rc, want 2\"; exit 1; }; case \"$err\" in *'unknown option'*) exit 0;; esac; echo \"no message on stderr\"; exit 1"
        sh $<TARGET_FILE:${prog}>)
    gpuprobe_foundation_env(example.${prog}_bad_option)
    gpuprobe_example_test(example.${prog}_help "usage: ${prog}" $<TARGET_FILE:${prog}> --help)
  endforeach()
endif()

# No link-time CUDA dependency: readelf -d shows no libcuda, libcudart,
# libcublas or libnvidia-ml among the NEEDED entries.
if(GPUPROBE_READELF)
  add_test(NAME foundation.no_cuda_needed
    COMMAND sh -c "d=$(\"$1\" -d \"$2\") || exit 1; echo \"$d\" | grep -q NEEDED || exit 1; if echo \"$d\" | grep -E 'NEEDED.*(libcuda|libcudart|libcublas|libnvidia-ml)'; then exit 1; fi; exit 0"
      sh ${GPUPROBE_READELF} $<TARGET_FILE:gpuprobe>)
endif()
