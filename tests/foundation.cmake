# Foundation tests: runs of the smi and cuda_info examples (through
# tests/tools/run.py), and the rule that libgpuprobe.so never links a CUDA
# library. Included by tests/CMakeLists.txt. (Options, exit statuses and
# write errors of the examples and commands: tests/tools.cmake.)

find_program(GPUPROBE_READELF readelf)

if(TARGET smi AND TARGET cuda_info)
  include(${CMAKE_CURRENT_LIST_DIR}/tools/run.cmake)
  # Text output: the lesson's lines (GPU and memory, or the reason).
  gpuprobe_run_test(example.cuda_info cuda_info
    --out "\\ACUDA available: (True|False)\nCUDA version: ([0-9]+\\.[0-9]+|None)\n(GPU: [^\n]+\nMemory: [0-9]+\\.[0-9] GB|Reason: [^\n]+ \\([^\n]*\\))\n")

  # Every device with its memory (the cause first when CUDA is not usable).
  gpuprobe_run_test(example.smi smi
    --out "\\A(No usable CUDA GPU: [^\n]+\\[[a-z_]+\\]\n  [^\n]*\n)?cpu +[^\n]+: [0-9.]+ [kMGTP]?B total, [0-9.]+ [kMGTP]?B available\n")

  # Turned off by the user: the cause is named.
  gpuprobe_run_test(example.cuda_info_disabled cuda_info --env GPUPROBE_CUDA=off
    --out "CUDA available: False\nCUDA version: None\nReason: CUDA was turned off by the user \\(")
  gpuprobe_run_test(example.smi_disabled smi --env GPUPROBE_CUDA=off
    --out "\\ANo usable CUDA GPU: CUDA was turned off by the user \\[disabled\\]\n")
endif()

# No link-time CUDA dependency: readelf -d shows no libcuda, libcudart,
# libcublas or libnvidia-ml among the NEEDED entries.
if(GPUPROBE_READELF)
  add_test(NAME foundation.no_cuda_needed
    COMMAND sh -c "d=$(\"$1\" -d \"$2\") || exit 1; echo \"$d\" | grep -q NEEDED || exit 1; if echo \"$d\" | grep -E 'NEEDED.*(libcuda|libcudart|libcublas|libnvidia-ml)'; then exit 1; fi; exit 0"
      sh ${GPUPROBE_READELF} $<TARGET_FILE:gpuprobe>)
endif()

# The versions the documentation shows are this one (tests/docs_versions.sh).
add_test(NAME foundation.docs_versions
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/docs_versions.sh ${PROJECT_SOURCE_DIR} ${PROJECT_VERSION})
