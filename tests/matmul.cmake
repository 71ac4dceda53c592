# Timed matmul: runs of the example program at a small size, and the raw
# OpenBLAS reference that scripts/bench-matmul compares gpuprobe-bench
# against.

# Not a test: built for scripts/bench-matmul.
add_executable(raw_sgemm ${CMAKE_CURRENT_LIST_DIR}/bench/raw_sgemm.c)
target_link_libraries(raw_sgemm PRIVATE PkgConfig::OPENBLAS)
set_target_properties(raw_sgemm PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/bench)

if(TARGET matmul_bench)
  add_test(NAME example.matmul_bench COMMAND matmul_bench --size 256)
  set_tests_properties(example.matmul_bench PROPERTIES
    ENVIRONMENT_MODIFICATION "GPUPROBE_DEVICE=unset:;GPUPROBE_CUDA=unset:;GPUPROBE_CUDA_LIBDIR=unset:"
    PASS_REGULAR_EXPRESSION "CPU: [0-9]+\\.[0-9][0-9][0-9]s  \\(median of [0-9]+ runs, [0-9.]+ GFLOP/s, verified;"
    TIMEOUT 120)
  # Bad sizes exit with status 2 (the command's options: tools.cmake).
  foreach(bad "0" "abc" "1e6")
    add_test(NAME example.matmul_bench.bad_size_${bad}
      COMMAND sh -c "\"$0\" --size \"$1\" >/dev/null 2>&1; test $? -eq 2" $<TARGET_FILE:matmul_bench> ${bad})
  endforeach()
endif()
