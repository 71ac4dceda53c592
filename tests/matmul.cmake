# Timed matmul: runs of the example program at a small size, and the raw
# OpenBLAS reference that scripts/bench-matmul compares the library against.

# Not a test: built for scripts/bench-matmul.
add_executable(raw_sgemm ${CMAKE_CURRENT_LIST_DIR}/bench/raw_sgemm.c)
target_link_libraries(raw_sgemm PRIVATE PkgConfig::OPENBLAS)
set_target_properties(raw_sgemm PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/bench)

if(TARGET matmul_bench)
  set(GPUPROBE_MM_ENV_MOD "GPUPROBE_DEVICE=unset:;GPUPROBE_CUDA=unset:;GPUPROBE_CUDA_LIBDIR=unset:")

  add_test(NAME example.matmul_bench COMMAND matmul_bench --size 256 --runs 3)
  set_tests_properties(example.matmul_bench PROPERTIES
    ENVIRONMENT_MODIFICATION "${GPUPROBE_MM_ENV_MOD}"
    PASS_REGULAR_EXPRESSION "CPU: [0-9]+\\.[0-9][0-9][0-9]s [^\n]*, verified\\)"
    TIMEOUT 120)

  find_program(GPUPROBE_PYTHON3 python3)
  if(GPUPROBE_PYTHON3)
    # The exit status of matmul_bench is checked too, not only the JSON.
    add_test(NAME example.matmul_bench.json
      COMMAND sh -c "out=$(\"$0\" --size 256 --runs 3 --json) || exit 1; printf '%s' \"$out\" | \"$1\" -m json.tool >/dev/null"
              $<TARGET_FILE:matmul_bench> ${GPUPROBE_PYTHON3})
  else()
    add_test(NAME example.matmul_bench.json COMMAND matmul_bench --size 256 --runs 3 --json)
    set_tests_properties(example.matmul_bench.json PROPERTIES
      PASS_REGULAR_EXPRESSION "^\\{\"results\": \\[")
  endif()
  set_tests_properties(example.matmul_bench.json PROPERTIES
    ENVIRONMENT_MODIFICATION "${GPUPROBE_MM_ENV_MOD}" TIMEOUT 120)

  # Bad options exit with status 2.
  foreach(bad "--bogus" "--size;0" "--size;abc" "--dtype;int4" "--runs" "--device;gpu:x")
    string(REPLACE ";" "_" name "${bad}")
    string(REGEX REPLACE "[^A-Za-z0-9_]" "" name "${name}")
    add_test(NAME example.matmul_bench.bad_option.${name}
      COMMAND sh -c "\"$0\" \"$@\" >/dev/null 2>&1; test $? -eq 2" $<TARGET_FILE:matmul_bench> ${bad})
    set_tests_properties(example.matmul_bench.bad_option.${name} PROPERTIES
      ENVIRONMENT_MODIFICATION "${GPUPROBE_MM_ENV_MOD}" TIMEOUT 60)
  endforeach()
endif()
