# Timed matmul: runs of the example program at a small size, and the raw
# OpenBLAS reference that scripts/bench-matmul compares gpuprobe-bench
# against.

# Not a test: built for scripts/bench-matmul.
add_executable(raw_sgemm ${CMAKE_CURRENT_LIST_DIR}/bench/raw_sgemm.c)
target_link_libraries(raw_sgemm PRIVATE PkgConfig::OPENBLAS)
set_target_properties(raw_sgemm PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/bench)

# The OpenBLAS reference of scripts/bench-gemv: fp32 matrix-vector products
# timed over whole matrices, each row checked first. Its test runs it small
# and requires the check to pass.
add_executable(raw_sgemv ${CMAKE_CURRENT_LIST_DIR}/bench/raw_sgemv.c)
target_link_libraries(raw_sgemv PRIVATE PkgConfig::OPENBLAS m)
set_target_properties(raw_sgemv PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/bench)
add_test(NAME bench.raw_sgemv COMMAND raw_sgemv 1000 300 3 5 2)
set_tests_properties(bench.raw_sgemv PROPERTIES
  PASS_REGULAR_EXPRESSION "^raw_sgemv rows=1000 cols=300 matrices=3 passes=5 threads=[0-9]+ best_gbps=[0-9.]+ median_gbps=[0-9.]+ check=ok\n$")
foreach(bad "0 300" "1000 0" "1000 300 0" "x 300" "1000x 300" "1000 300 3 5 2 9")
  string(REPLACE " " "_" tag "${bad}")
  separate_arguments(args UNIX_COMMAND "${bad}")
  add_test(NAME bench.raw_sgemv.bad_${tag} COMMAND raw_sgemv ${args})
  set_tests_properties(bench.raw_sgemv.bad_${tag} PROPERTIES PASS_REGULAR_EXPRESSION "^raw_sgemv: bad arguments\n$")
endforeach()

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
