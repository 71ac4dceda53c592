# fuzz.replay.<harness>: each libFuzzer harness in tests/fuzz/ built with the
# normal compiler and tests/fuzz/replay.c as its main(), run on the empty
# input and its committed corpus (tests/fuzz/corpus/<harness>/). The
# harnesses' checks (a shadow model of the options, the capacity rules, the
# parsers' bounds, ...) so fail the normal test run when the library moves
# away from them; scripts/reliability fuzzes the same harnesses with
# libFuzzer for new inputs.
file(GLOB GPUPROBE_FUZZ_HARNESSES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.c)
foreach(src ${GPUPROBE_FUZZ_HARNESSES})
  get_filename_component(name ${src} NAME_WE)
  add_executable(replay_${name} ${src} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/replay.c)
  target_link_libraries(replay_${name} PRIVATE gpuprobe_internal)
  add_test(NAME fuzz.replay.${name}
    COMMAND replay_${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name})
  set_tests_properties(fuzz.replay.${name} PROPERTIES
    ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
    ENVIRONMENT_MODIFICATION "GPUPROBE_DEVICE=unset:;GPUPROBE_CUDA=unset:;GPUPROBE_CUDA_LIBDIR=unset:"
    PASS_REGULAR_EXPRESSION "replayed [0-9]+ inputs"
    LABELS "fuzz"
    TIMEOUT 120)
endforeach()
