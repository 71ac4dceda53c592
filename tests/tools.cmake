# The commands (tools/) and the example programs as programs: help,
# version, exit statuses, JSON against docs/json.md, write errors (a full
# disk, a closed stdout, a reader that went away), hostile bytes in what the
# system reports, failed queries. Each case runs through tests/tools/run.py
# (see its header for the checks, and tests/tools/run.cmake); python3 is
# needed. The same programs against simulated GPUs: tests/simcuda.cmake.
#
# Test names: tools.<command>.<case> and example.<program>.<case>.

if(NOT TARGET gpuprobe_cli)
  return()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/tools/run.cmake)

# The helper library itself: quoting, UTF-8, JSON values, the command line.
add_executable(test_cli ${CMAKE_CURRENT_LIST_DIR}/tools/test_cli.c)
target_link_libraries(test_cli PRIVATE gpuprobe_cli PkgConfig::CMOCKA)
add_test(NAME unit.test_cli COMMAND test_cli)
set_tests_properties(unit.test_cli PROPERTIES ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=stdout")

# gpuprobe-nfd's core: the Kubernetes label rules, the sanitiser, the labels
# of simulated nodes (through the library's test seam), the feature file.
if(TARGET gpuprobe_nfd_core)
  add_executable(test_nfd ${CMAKE_CURRENT_LIST_DIR}/tools/test_nfd.c)
  target_link_libraries(test_nfd PRIVATE gpuprobe_nfd_core gpuprobe_internal PkgConfig::CMOCKA)
  add_test(NAME unit.test_nfd COMMAND test_nfd)
  set_tests_properties(unit.test_nfd PROPERTIES
    ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=stdout;OPENBLAS_NUM_THREADS=1"
    ENVIRONMENT_MODIFICATION "GPUPROBE_DEVICE=unset:;GPUPROBE_CUDA=unset:;GPUPROBE_CUDA_LIBDIR=unset:")
  # A feature file checked as NFD reads it, every label by the same rules.
  add_executable(nfd_check ${CMAKE_CURRENT_LIST_DIR}/tools/nfd_check.c)
  target_link_libraries(nfd_check PRIVATE gpuprobe_nfd_core)
endif()

# LD_PRELOAD library that makes chosen public calls fail or renames devices.
add_library(gpuprobe_fault_shim SHARED ${CMAKE_CURRENT_LIST_DIR}/tools/fault_shim.c)
target_include_directories(gpuprobe_fault_shim PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(gpuprobe_fault_shim PRIVATE ${CMAKE_DL_LIBS})
set(GPUPROBE_SHIM $<TARGET_FILE:gpuprobe_fault_shim>)

# Failed queries, injected by the shim.
set(fail_mem --preload ${GPUPROBE_SHIM} --env GPUPROBE_SHIM_FAIL=gpuprobe_device_memory
  --env "GPUPROBE_SHIM_MESSAGE=meminfo unreadable ${GPUPROBE_HOSTILE}")
set(fail_cap --preload ${GPUPROBE_SHIM} --env GPUPROBE_SHIM_FAIL=gpuprobe_device_capacity
  --env "GPUPROBE_SHIM_MESSAGE=meminfo unreadable")

# ---- the commands ------------------------------------------------------------
if(TARGET gpuprobe-smi)
  # Arguments for a quick run of each command.
  set(quick_smi "")
  set(quick_info "")
  set(quick_select "")
  set(quick_bench --size 64 --runs 1)
  set(quick_fit "")
  set(quick_nfd --output -)

  foreach(t ${GPUPROBE_TOOLS})
    set(cmd gpuprobe-${t})
    set(q ${quick_${t}})
    gpuprobe_run_test(tools.${t}.text ${cmd} --clean --err-empty -- ${q})
    gpuprobe_run_test(tools.${t}.json ${cmd} --json ${GPUPROBE_JSON_DOC} --err-empty -- --json ${q})
    gpuprobe_run_test(tools.${t}.help ${cmd} --out "^usage: ${cmd} " --out "Exit status: 0 "
      "--out=  --version " --err-empty -- --help)
    gpuprobe_run_test(tools.${t}.version ${cmd} --out "^${cmd} \\(libgpuprobe\\) ${PROJECT_VERSION}\n$"
      --err-empty -- --version)
    gpuprobe_run_test(tools.${t}.bad_option ${cmd} --rc 2 --out-empty
      --err "^${cmd}: unknown option '--bogus'\nTry '${cmd} --help'" -- --bogus)
    gpuprobe_run_test(tools.${t}.bad_option_json ${cmd} --rc 2 --json ${GPUPROBE_JSON_DOC}
      --out "\"status\": \"usage\"" --err "unknown option" -- --json --bogus)
    gpuprobe_run_test(tools.${t}.operand ${cmd} --rc 2 --err "unexpected argument 'extra'" -- extra)
    gpuprobe_run_test(tools.${t}.flag_value ${cmd} --rc 2 --err "'--json' takes no value" -- --json=1)
    # Output that cannot be written is an error, as in coreutils.
    gpuprobe_run_test(tools.${t}.dev_full ${cmd} --rc 1 --stdout full
      --err "^${cmd}: write error: No space left on device\n$" -- ${q})
    gpuprobe_run_test(tools.${t}.dev_full_json ${cmd} --rc 1 --stdout full
      --err "write error: No space left on device" -- --json ${q})
    gpuprobe_run_test(tools.${t}.closed_stdout ${cmd} --rc 1 --stdout closed
      --err "^${cmd}: write error: Bad file descriptor\n$" -- ${q})
    gpuprobe_run_test(tools.${t}.help_dev_full ${cmd} --rc 1 --stdout full --err "write error" -- --help)
    # A reader that went away (`| head -c1`): killed by SIGPIPE, silently;
    # with SIGPIPE ignored, EPIPE is a write error.
    gpuprobe_run_test(tools.${t}.broken_pipe ${cmd} --rc sigpipe --stdout epipe --err-empty -- ${q})
    gpuprobe_run_test(tools.${t}.broken_pipe_ignored ${cmd} --rc 1 --stdout epipe-ignored
      --err "^${cmd}: write error: Broken pipe\n$" -- ${q})
  endforeach()

  # Hostile bytes through the loader: GPUPROBE_CUDA_LIBDIR is echoed back in
  # the CUDA detail (the library's own text and the dynamic loader's) when
  # CUDA support is built in; the library has already quoted it (every
  # byte outside printable ASCII becomes '?'), and the commands must pass
  # that text on. Without CUDA support the output must still be clean.
  set(libdir "/nonexistent/${GPUPROBE_HOSTILE}")
  set(quoted "q\"?\\x5b31mRED??NL?")
  set(quoted_re "q\"\\?.31mRED\\?\\?NL\\?")
  set(has_text "")
  set(has_json "")
  if(GPUPROBE_HAVE_CUDA)
    set(has_text TEXT_HAS "smi:${quoted_re}" "info:${quoted_re}" "select:${quoted_re}" "bench:${quoted_re}")
    set(has_json JSON_HAS "smi:detail=${quoted}" "info:detail=${quoted}"
                          "select:reason=${quoted}" "bench:reason=${quoted}")
  endif()
  gpuprobe_hostile_output_tests(libdir ENV "GPUPROBE_CUDA_LIBDIR=${libdir}"
    COMMANDS smi info select bench nfd ${has_text} ${has_json})
  # ... and a device whose name is hostile (device 0 renamed by the shim).
  gpuprobe_hostile_output_tests(name ENV "GPUPROBE_SHIM_NAME=${GPUPROBE_HOSTILE}"
    PRELOAD ${GPUPROBE_SHIM}
    TEXT_HAS "smi:\nCPU   q\"\\\\x1b.31mRED\\\\x01\\\\nNL\\\\xff\\\\\\\\z\n"
             "select:\nDevice: q\"\\\\x1b" "fit:^cpu \\(q\"\\\\x1b"
    JSON_HAS "smi:devices.0.name=${GPUPROBE_HOSTILE}" "info:devices.0.name=${GPUPROBE_HOSTILE}"
             "select:name=${GPUPROBE_HOSTILE}" "fit:devices.0.name=${GPUPROBE_HOSTILE}")

  # A failed device query: exit status 1 in every command that makes it,
  # the reason on stderr (quoted), the item's error object in JSON.
  gpuprobe_run_test(tools.smi.memory_failure gpuprobe-smi ${fail_mem} --rc 1 --clean
    --out "\nRAM   \\? \\(the query failed\\)"
    --err "^gpuprobe-smi: cpu: memory query: operating-system query failed: meminfo unreadable q\"\\\\x1b")
  gpuprobe_run_test(tools.smi.memory_failure_json gpuprobe-smi ${fail_mem} --rc 1 --clean
    --json ${GPUPROBE_JSON_DOC} --json-has "devices.0.error.status=system"
    --json-has "devices.0.error.message=meminfo unreadable ${GPUPROBE_HOSTILE}"
    --out "\"memory\": null" -- --json)
  gpuprobe_run_test(tools.fit.memory_failure gpuprobe-fit ${fail_cap} --rc 1
    --out "memory: unknown" --err "cpu: memory query: .*meminfo unreadable")
  gpuprobe_run_test(tools.fit.memory_failure_json gpuprobe-fit ${fail_cap} --rc 1
    --json ${GPUPROBE_JSON_DOC} --json-has "devices.0.error.message=meminfo unreadable" -- --json)
  set(fail_probe --preload ${GPUPROBE_SHIM} --env GPUPROBE_SHIM_FAIL=gpuprobe_cuda_status
    --env "GPUPROBE_SHIM_MESSAGE=no answer")
  foreach(t smi info)
    gpuprobe_run_test(tools.${t}.probe_failure gpuprobe-${t} ${fail_probe} --rc 1 --out-empty
      --err "asking for CUDA: .*no answer")
    gpuprobe_run_test(tools.${t}.probe_failure_json gpuprobe-${t} ${fail_probe} --rc 1
      --json ${GPUPROBE_JSON_DOC} --json-has "error.status=system" -- --json)
  endforeach()
  gpuprobe_run_test(tools.bench.run_failure gpuprobe-bench --preload ${GPUPROBE_SHIM}
    --env GPUPROBE_SHIM_FAIL=gpuprobe_matmul_run --env "GPUPROBE_SHIM_MESSAGE=no memory left"
    --rc 1 --out "CPU: failed" --err "matmul on cpu \\(fp32\\): .*no memory left" -- --size 32)
  gpuprobe_run_test(tools.bench.run_failure_json gpuprobe-bench --preload ${GPUPROBE_SHIM}
    --env GPUPROBE_SHIM_FAIL=gpuprobe_matmul_run --rc 1 --json ${GPUPROBE_JSON_DOC}
    --json-has "results.0.error.status=system" -- --size 32 --json)

  # gpuprobe-select: choices, requirements, exit statuses.
  gpuprobe_run_test(tools.select.cuda_off gpuprobe-select --env GPUPROBE_CUDA=off
    --out "^Using: cpu\nDevice: [^\n]+\nReason: auto: CUDA not usable \\(")
  gpuprobe_run_test(tools.select.json_cuda_off gpuprobe-select --env GPUPROBE_CUDA=off
    --json ${GPUPROBE_JSON_DOC} --json-has "using=cpu" --json-has "cuda_cause=disabled" -- --json)
  gpuprobe_run_test(tools.select.env_override gpuprobe-select --env GPUPROBE_DEVICE=cpu
    --out "^Using: cpu\n" --out "GPUPROBE_DEVICE" -- --device cuda:12345)
  gpuprobe_run_test(tools.select.cuda_unusable_json gpuprobe-select --rc 1
    --env GPUPROBE_CUDA=off --json ${GPUPROBE_JSON_DOC} --json-has "error.status=cuda_unavailable"
    --err "CUDA is not usable" -- --device cuda --json)
  gpuprobe_run_test(tools.select.malformed_spec gpuprobe-select --rc 2
    --json ${GPUPROBE_JSON_DOC} --json-has "error.status=invalid_argument" --err "\"cuda:01\""
    -- --device cuda:01 --json)
  gpuprobe_run_test(tools.select.env_bogus gpuprobe-select --rc 2 --env GPUPROBE_DEVICE=bogus
    --err "GPUPROBE_DEVICE" --err "\"bogus\"")
  gpuprobe_run_test(tools.select.no_fit gpuprobe-select --rc 1
    --err "no device meets the requirements: " --no-err "requirements: no device meets"
    --err "cpu: " -- --min-free 1e18)
  gpuprobe_run_test(tools.select.bad_min_free gpuprobe-select --rc 2 "--err=--min-free" -- --min-free lots)
  # --min-cc asks for a CUDA device whatever the value: below 1.0 too.
  gpuprobe_run_test(tools.select.min_cc_below_one gpuprobe-select --rc 1 --err "not a CUDA device"
    --out-empty -- --min-cc 0.5)
  gpuprobe_run_test(tools.select.min_cc_zero gpuprobe-select --rc 1 --err "not a CUDA device"
    -- --min-cc=0)
  # A combination with no rule is bad input (2), not "no device" (1).
  gpuprobe_run_test(tools.select.no_rule gpuprobe-select --rc 2 --err "no training rule for int8"
    -- --fit 7e9 --dtype int8 --workload training)
  gpuprobe_run_test(tools.select.dtype_without_fit gpuprobe-select --rc 2 --err "go with .-fit"
    -- --dtype fp16)
  gpuprobe_run_test(tools.select.fit gpuprobe-select --out "^Using: cpu\n"
    -- --fit=1e6 --dtype bf16 --workload inference --device cpu)

  # gpuprobe-bench: --opt=value, JSON on failure.
  gpuprobe_run_test(tools.bench.equals_value gpuprobe-bench
    --out "^Matrix multiply 48 x 48 x 48" --out "CPU: [0-9.]+s .*verified\\)" -- --size=48 --runs=2)
  gpuprobe_run_test(tools.bench.cuda_unusable_json gpuprobe-bench --rc 1 --env GPUPROBE_CUDA=off
    --json ${GPUPROBE_JSON_DOC} --json-has "error.status=cuda_unavailable" -- --json --device cuda --size 32)
  foreach(bad "--size=0" "--size;abc" "--dtype;int4" "--runs" "--device;gpu:x")
    string(REGEX REPLACE "[^A-Za-z0-9]+" "_" n "${bad}")
    gpuprobe_run_test(tools.bench.bad${n} gpuprobe-bench --rc 2 --out-empty -- ${bad})
  endforeach()
  gpuprobe_run_test(tools.bench.cpu_json gpuprobe-bench --json ${GPUPROBE_JSON_DOC}
    --json-has "results.0.device=cpu" --json-has "results.0.dtype=fp64" -- --json --device cpu --dtype fp64 --size 40 --runs 2)

  # gpuprobe-fit: listings, --params, the "no" answer.
  gpuprobe_run_test(tools.fit.params gpuprobe-fit
    --out "^Does a 7.0 B-parameter model fit\\?" --out "fp16 weights +needs +14.0 GB: "
    --out "bf16 training +needs +112.0 GB: " -- --params 7e9)
  gpuprobe_run_test(tools.fit.params_fits gpuprobe-fit --json ${GPUPROBE_JSON_DOC}
    --out "\"fits_anywhere\": true" -- --params 1e3 --json)
  gpuprobe_run_test(tools.fit.params_fits_nowhere gpuprobe-fit --rc 1 --json ${GPUPROBE_JSON_DOC}
    --out "\"fits_anywhere\": false" -- --params 1e15 --dtype fp32 --workload training --json)
  gpuprobe_run_test(tools.fit.dtype gpuprobe-fit --out "\n    fp16: [0-9.]+ ?[KMBTQ]? parameters"
    --no-out "fp32:" -- --dtype fp16)
  gpuprobe_run_test(tools.fit.workload_json gpuprobe-fit --json ${GPUPROBE_JSON_DOC}
    --out "\"max_params_training\": \\{ \"fp32\"" --no-out "\"max_params\":" -- --workload training --json)
  gpuprobe_run_test(tools.fit.no_rule gpuprobe-fit --rc 2 --err "no training rule for int4"
    -- --dtype int4 --workload training)
  gpuprobe_run_test(tools.fit.bad_params gpuprobe-fit --rc 2 "--err=--params" -- --params seven)
  gpuprobe_run_test(tools.fit.too_many_params gpuprobe-fit --rc 2 "--err=--params" -- --params 2e15)

  # gpuprobe-nfd's feature files (tests/tools/nfd_file.py): format, labels,
  # documentation, atomic replacement under failures.
  foreach(case replace cpu_only stdout_is_the_file json expiry bench documented missing_dir
          unwritable_dir full_disk_shim fsync_fails rename_fails full_tmpfs probe_fails bench_fails)
    add_test(NAME tools.nfd.file_${case}
      COMMAND ${GPUPROBE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/tools/nfd_file.py
        --nfd $<TARGET_FILE:gpuprobe-nfd> --check $<TARGET_FILE:nfd_check> --shim ${GPUPROBE_SHIM}
        --docs ${PROJECT_SOURCE_DIR}/docs --man ${PROJECT_BINARY_DIR}/tools/man/gpuprobe-nfd.1 ${case})
    set_tests_properties(tools.nfd.file_${case} PROPERTIES TIMEOUT 240 SKIP_RETURN_CODE 77)
  endforeach()
  # gpuprobe_nfd_labels_test(<name> [ENV K=V...] [RC n] [ARGS arg...] CHECK <nfd_check args>)
  # runs gpuprobe-nfd --output - ARGS in the environment ENV, expects exit
  # status RC (default 0) and checks the feature file with nfd_check and the
  # CHECK arguments (--has KEY=ERE, --lacks KEY, --count N). A simulated
  # CUDA stack (its libraries on LD_LIBRARY_PATH, its fleet in the
  # environment) makes each fleet a call of this function.
  set(GPUPROBE_NFD_FILE_PY ${CMAKE_CURRENT_LIST_DIR}/tools/nfd_file.py)
  function(gpuprobe_nfd_labels_test name)
    cmake_parse_arguments(L "" "RC" "ENV;ARGS;CHECK" ${ARGN})
    set(env "")
    foreach(e ${L_ENV})
      list(APPEND env --env "${e}")
    endforeach()
    if(NOT L_RC)
      set(L_RC 0)
    endif()
    add_test(NAME tools.nfd.labels_${name}
      COMMAND ${GPUPROBE_PYTHON3} ${GPUPROBE_NFD_FILE_PY}
        --nfd $<TARGET_FILE:gpuprobe-nfd> --check $<TARGET_FILE:nfd_check> --shim ${GPUPROBE_SHIM}
        --docs ${PROJECT_SOURCE_DIR}/docs --man ${PROJECT_BINARY_DIR}/tools/man/gpuprobe-nfd.1
        ${env} --rc ${L_RC} labels -- ${L_ARGS} --check-args ${L_CHECK})
    set_tests_properties(tools.nfd.labels_${name} PROPERTIES TIMEOUT 240)
  endfunction()
  # Each cause of an unusable CUDA that this machine can produce.
  set(no_gpu_labels --has gpuprobe.io/cuda.usable=false --has gpuprobe.io/cuda.devices=0
    --lacks gpuprobe.io/gpu.product --lacks gpuprobe.io/gpu.count)
  gpuprobe_nfd_labels_test(cause_disabled ENV GPUPROBE_CUDA=off
    CHECK ${no_gpu_labels} --has gpuprobe.io/cuda.cause=disabled --count 3)
  if(GPUPROBE_HAVE_CUDA)
    gpuprobe_nfd_labels_test(cause_no_runtime ENV GPUPROBE_CUDA_LIBDIR=/nonexistent
      CHECK ${no_gpu_labels} --has gpuprobe.io/cuda.cause=no_runtime
      --lacks gpuprobe.io/cuda.runtime.version)
    gpuprobe_nfd_labels_test(cause_other ENV GPUPROBE_CUDA_LIBDIR=relative/dir
      CHECK ${no_gpu_labels} --has gpuprobe.io/cuda.cause=other)
  else()
    gpuprobe_nfd_labels_test(cause_not_built
      CHECK ${no_gpu_labels} --has gpuprobe.io/cuda.cause=not_built --count 3)
  endif()

  # The example manifests of docs/kubernetes/, without a cluster (python3-yaml).
  execute_process(COMMAND ${GPUPROBE_PYTHON3} -c "import yaml"
    RESULT_VARIABLE _gpuprobe_no_yaml OUTPUT_QUIET ERROR_QUIET)
  if(_gpuprobe_no_yaml)
    message(STATUS "python3-yaml not found: tools.nfd.k8s_manifests is skipped")
  else()
    add_test(NAME tools.nfd.k8s_manifests
      COMMAND ${GPUPROBE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/tools/k8s_manifests.py
        --dir ${PROJECT_SOURCE_DIR}/docs/kubernetes --docs ${PROJECT_SOURCE_DIR}/docs/kubernetes.md
        --tools ${PROJECT_BINARY_DIR}/tools --check $<TARGET_FILE:nfd_check>)
    set_tests_properties(tools.nfd.k8s_manifests PROPERTIES TIMEOUT 240)
  endif()
  # --prefix and --expiry are checked before anything is probed.
  foreach(bad "--prefix;kubernetes.io" "--prefix;node.k8s.io" "--prefix;Example.org"
          "--prefix;a..b" "--prefix=" "--expiry;0" "--expiry;5w" "--expiry;99999d" "--expiry;-1"
          "--size;64" "--output=")
    string(REGEX REPLACE "[^A-Za-z0-9]+" "_" n "${bad}")
    gpuprobe_run_test(tools.nfd.bad${n} gpuprobe-nfd --rc 2 --out-empty -- ${bad})
  endforeach()
  gpuprobe_run_test(tools.nfd.bad_prefix_reason gpuprobe-nfd --rc 2 --err "reserved for Kubernetes"
    -- --prefix kubernetes.io)

  # Each command's man page documents every option its --help lists.
  foreach(t ${GPUPROBE_TOOLS})
    add_test(NAME tools.${t}.man_options
      COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/tools/man_options.sh $<TARGET_FILE:gpuprobe-${t}>
              ${PROJECT_BINARY_DIR}/tools/man/gpuprobe-${t}.1)
  endforeach()
endif()

# ---- the example programs ---------------------------------------------------
if(TARGET smi)
  set(quick_matmul_bench --size 48)
  foreach(e smi cuda_info select_device matmul_bench vram_capacity)
    set(q ${quick_${e}})
    gpuprobe_run_test(example.${e}.help ${e} --out "^usage: ${e} " --err-empty -- --help)
    gpuprobe_run_test(example.${e}.version ${e} --out "^${e} \\(libgpuprobe\\) " -- --version)
    gpuprobe_run_test(example.${e}.bad_option ${e} --rc 2 --out-empty --err "unknown option '--bogus'" -- --bogus)
    gpuprobe_run_test(example.${e}.dev_full ${e} --rc 1 --stdout full --err "write error: No space left on device" -- ${q})
    gpuprobe_run_test(example.${e}.closed_stdout ${e} --rc 1 --stdout closed --err "write error: Bad file descriptor" -- ${q})
    gpuprobe_run_test(example.${e}.hostile_libdir ${e} --clean
      --env "GPUPROBE_CUDA_LIBDIR=/nonexistent/${GPUPROBE_HOSTILE}" -- ${q})
  endforeach()
  # The same failure, the same exit status as the commands.
  gpuprobe_run_test(example.smi.memory_failure smi ${fail_mem} --rc 1 --clean
    --out "cpu +[^\n]*: memory unknown" --err "memory query: .*meminfo unreadable")
  gpuprobe_run_test(example.vram_capacity.memory_failure vram_capacity ${fail_cap} --rc 1
    --err "cpu: capacity: .*meminfo unreadable")
endif()
