# Reliability tests (scripts/reliability runs them with `ctest -L reliability`,
# and they run with every other test in the normal ctest run):
#
# - unit.test_bad_input, unit.test_faults, unit.test_messages (hostile bytes
#   never reach a message raw), unit.test_stack (every call under 16 KiB of
#   stack): plain cmocka unit tests, built by the tests/test_*.c glob in
#   tests/CMakeLists.txt; labelled here.
# - reliability.fault_alloc: every host allocation the library makes inside
#   a call is made to fail in turn. The library allocates with malloc,
#   calloc, realloc and posix_memalign directly, so the program is linked
#   with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free and
#   --wrap=posix_memalign: references
#   from the library's objects (the gpuprobe_internal archive) go to the
#   test's __wrap_* functions, which count and fail on demand. Libraries
#   linked dynamically (libc's own allocations, OpenBLAS, cmocka) are not
#   affected.
# - reliability.thread_stress: separate contexts used from four threads at
#   once; scripts/reliability also runs it under ThreadSanitizer.

set(GPUPROBE_RELIABILITY_ENV
  ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=stdout"
  ENVIRONMENT_MODIFICATION "GPUPROBE_DEVICE=unset:;GPUPROBE_CUDA=unset:;GPUPROBE_CUDA_LIBDIR=unset:")

foreach(t unit.test_bad_input unit.test_faults unit.test_messages unit.test_stack)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES LABELS "reliability")
  endif()
endforeach()

add_executable(fault_alloc ${CMAKE_CURRENT_SOURCE_DIR}/fault/fault_alloc.c)
target_link_libraries(fault_alloc PRIVATE gpuprobe_internal PkgConfig::CMOCKA)
target_link_options(fault_alloc PRIVATE
  "-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=posix_memalign")
add_test(NAME reliability.fault_alloc COMMAND fault_alloc)
set_tests_properties(reliability.fault_alloc PROPERTIES
  LABELS "reliability" TIMEOUT 300 ${GPUPROBE_RELIABILITY_ENV})

add_executable(thread_stress ${CMAKE_CURRENT_SOURCE_DIR}/threads/thread_stress.c)
target_link_libraries(thread_stress PRIVATE gpuprobe_internal Threads::Threads)
add_test(NAME reliability.thread_stress COMMAND thread_stress)
set_tests_properties(reliability.thread_stress PROPERTIES
  LABELS "reliability" TIMEOUT 300 ${GPUPROBE_RELIABILITY_ENV})

# CPU matmuls under RLIMIT_AS, RLIMIT_DATA and a real memory cgroup: each
# case runs limit_run (linked with the shared library only, so that
# OpenBLAS is loaded by the library) in a child under a watchdog.
add_executable(limit_run ${CMAKE_CURRENT_SOURCE_DIR}/limits/limit_run.c)
target_link_libraries(limit_run PRIVATE gpuprobe m)
add_executable(test_limits ${CMAKE_CURRENT_SOURCE_DIR}/limits/test_limits.c)
target_link_libraries(test_limits PRIVATE PkgConfig::CMOCKA)
add_test(NAME reliability.limits COMMAND test_limits $<TARGET_FILE:limit_run>)
set_tests_properties(reliability.limits PROPERTIES
  LABELS "reliability" TIMEOUT 600 ${GPUPROBE_RELIABILITY_ENV})

# The fork handlers of the thread-count lock failing to register
# (pthread_atfork wrapped to fail with ENOMEM): runs that set a count are
# refused with the cause, runs that do not still work.
add_executable(atfork_fail ${CMAKE_CURRENT_SOURCE_DIR}/threads/atfork_fail.c)
target_link_libraries(atfork_fail PRIVATE gpuprobe_internal)
target_link_options(atfork_fail PRIVATE "-Wl,--wrap=pthread_atfork")
add_test(NAME reliability.atfork_fail COMMAND atfork_fail)
set_tests_properties(reliability.atfork_fail PROPERTIES
  LABELS "reliability" TIMEOUT 120 ${GPUPROBE_RELIABILITY_ENV})

# fork() while another thread runs matmuls that set OpenBLAS's thread
# count: every child can still run one (scripts/reliability also runs it
# under ThreadSanitizer).
add_executable(fork_stress ${CMAKE_CURRENT_SOURCE_DIR}/threads/fork_stress.c)
target_link_libraries(fork_stress PRIVATE gpuprobe_internal Threads::Threads)
add_test(NAME reliability.fork_stress COMMAND fork_stress)
set_tests_properties(reliability.fork_stress PROPERTIES
  LABELS "reliability" TIMEOUT 300 SKIP_RETURN_CODE 77 ${GPUPROBE_RELIABILITY_ENV})
