# Timed matmul: runs of the example program at a small size, and the raw
# OpenBLAS reference that scripts/bench-matmul compares gpuprobe-bench
# against.

# Not a test: built for scripts/bench-matmul.
add_executable(raw_sgemm ${CMAKE_CURRENT_LIST_DIR}/bench/raw_sgemm.c)
target_link_libraries(raw_sgemm PRIVATE PkgConfig::OPENBLAS)
set_target_properties(raw_sgemm PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/bench)

if(TARGET matmul_bench)
  include(${CMAKE_CURRENT_LIST_DIR}/tools/run.cmake)
  gpuprobe_run_test(example.matmul_bench matmul_bench
    --out "CPU: [0-9]+(\\.[0-9]+)? (s|ms|µs|ns)  \\(median of [0-9]+ runs( of [0-9]+ calls)?, [0-9.]+ GFLOP/s, verified\\x3b" -- --size 256)
  # Bad sizes exit with status 2 (the command's options: tools.cmake).
  foreach(bad "0" "abc" "1e6")
    gpuprobe_run_test(example.matmul_bench.bad_size_${bad} matmul_bench --rc 2 --out-empty
      "--err=--size" -- --size ${bad})
  endforeach()
endif()
