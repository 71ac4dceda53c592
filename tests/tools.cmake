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

# The pictures: axis arithmetic, the chart's layout, SVG, and drawing with
# cairo (or its refusal in a build without it).
add_executable(test_plot ${CMAKE_CURRENT_LIST_DIR}/tools/test_plot.c)
target_link_libraries(test_plot PRIVATE gpuprobe_cli PkgConfig::CMOCKA m)
add_test(NAME unit.test_plot COMMAND test_plot)
set_tests_properties(unit.test_plot PROPERTIES ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=stdout")

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
      "--out=  --version, -V " --err-empty -- --help)
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
    # One input rule for every command: -V, arguments echoed cut, the
    # library's GPUPROBE_* variables (empty is unset; a value the library
    # does not take is a usage error naming the variable).
    gpuprobe_run_test(tools.${t}.version_short ${cmd} --out "^${cmd} \\(libgpuprobe\\) ${PROJECT_VERSION}\n$"
      --err-empty -- -V)
    gpuprobe_run_test(tools.${t}.long_argument ${cmd} --rc 2 --out-empty --err-max-line 120
      --err "unexpected argument 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\.\\.\\.'" -- {x*100000})
    gpuprobe_run_test(tools.${t}.long_option ${cmd} --rc 2 --out-empty --err-max-line 120
      --err "unknown option '--yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\.\\.\\.'" -- --{y*100000})
    foreach(var CUDA NVML)
      gpuprobe_run_test(tools.${t}.env_${var}_unknown ${cmd} --rc 2 --out-empty --env GPUPROBE_${var}=maybe
        --err "^${cmd}: GPUPROBE_${var}=\"maybe\" is neither on .* nor off " -- ${q})
      gpuprobe_run_test(tools.${t}.env_${var}_unknown_json ${cmd} --rc 2 --env GPUPROBE_${var}=maybe
        --json ${GPUPROBE_JSON_DOC} --json-has "error.status=usage" --json-has "error.message=GPUPROBE_${var}"
        -- --json ${q})
      gpuprobe_run_test(tools.${t}.env_${var}_empty ${cmd} --clean --err-empty --env GPUPROBE_${var}= -- ${q})
    endforeach()
    gpuprobe_run_test(tools.${t}.env_DEVICE_bogus ${cmd} --rc 2 --out-empty --env GPUPROBE_DEVICE=bogus
      --err "^${cmd}: GPUPROBE_DEVICE: .*\"bogus\"" -- ${q})
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
    set(has_json JSON_HAS "smi:reason_text=${quoted}" "info:reason_text=${quoted}"
                          "select:reason_text=${quoted}" "select:choice_reason=${quoted}"
                          "bench:reason_text=${quoted}")
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

  # gpuprobe-smi here, whatever this machine has: at most 100 columns, the
  # header box closed.
  gpuprobe_run_test(tools.smi.layout gpuprobe-smi --width 100 --borders --clean --err-empty)
  gpuprobe_run_test(tools.smi.layout_tty gpuprobe-smi --tty --width 100 --borders --err-empty)
  # --bandwidth: measured only when asked (seconds of work), small buffers
  # here; the CPU's three tests in the JSON, a line in the text; --bytes
  # alone and with --loop are usage errors.
  gpuprobe_run_test(tools.smi.no_bandwidth_by_default gpuprobe-smi --json ${GPUPROBE_JSON_DOC}
    --json-absent devices.0.bandwidth -- --json)
  gpuprobe_run_test(tools.smi.bandwidth_json gpuprobe-smi --json ${GPUPROBE_JSON_DOC}
    --json-eq devices.0.bandwidth.error=null --json-eq devices.0.bandwidth.buffer_bytes=1048576
    --json-eq devices.0.bandwidth.tests.0.test=\"read\" --json-eq devices.0.bandwidth.tests.2.test=\"triad\"
    -- --json --bandwidth --bytes 1MiB)
  gpuprobe_run_test(tools.smi.bandwidth_text gpuprobe-smi --clean --err-empty
    --out "\nBandwidth \\(GB/s = 10\\^9 bytes/s, best pass\\x3b docs/bandwidth\\.md\\):\n  cpu      read [0-9.]+, copy [0-9.]+, triad [0-9.]+, read_streams [0-9.]+ \\(buffers of 1\\.0 MB\\)\n"
    -- --bandwidth --bytes 1MiB)
  gpuprobe_run_test(tools.smi.bytes_alone gpuprobe-smi --rc 2 --out-empty "--err=--bytes goes with --bandwidth"
    -- --bytes 1MiB)
  gpuprobe_run_test(tools.smi.bandwidth_loop gpuprobe-smi --rc 2 --out-empty
    "--err=--bandwidth measures once: not with --query-gpu or --loop" -- --bandwidth -l 1)
  gpuprobe_run_test(tools.smi.help_width gpuprobe-smi --width 100 --err-empty --out "\n  -i, --id ID " -- --help)

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
    --rc 1 --out "CPU fp32: failed" --err "matmul on cpu \\(fp32\\): .*no memory left" -- --size 32)
  gpuprobe_run_test(tools.bench.run_failure_json gpuprobe-bench --preload ${GPUPROBE_SHIM}
    --env GPUPROBE_SHIM_FAIL=gpuprobe_matmul_run --rc 1 --json ${GPUPROBE_JSON_DOC}
    --json-has "results.0.error.status=system" -- --size 32 --json)

  # gpuprobe-select: choices, requirements, exit statuses.
  gpuprobe_run_test(tools.select.cuda_off gpuprobe-select --env GPUPROBE_CUDA=off
    --out "^Using: cpu\nDevice: [^\n]+\nReason: auto: CUDA not usable \\(")
  gpuprobe_run_test(tools.select.json_cuda_off gpuprobe-select --env GPUPROBE_CUDA=off
    --json ${GPUPROBE_JSON_DOC} --json-has "using=cpu" --json-eq reason=\"disabled\"
    --json-has "reason_text=CUDA was turned off by the user: GPUPROBE_CUDA asks for it" -- --json)
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
  # Sizes with units, decimal and binary; 0 where it means nothing.
  foreach(size 1GB 1GiB 1e9 1.5gib 1000000000 512MiB)
    gpuprobe_run_test(tools.select.min_free_${size} gpuprobe-select --out "^Using: cpu\n"
      -- --min-free ${size} --device cpu)
  endforeach()
  foreach(size 20XB 1.5B 1e9.5 GB -1GB 2e)
    string(REGEX REPLACE "[^A-Za-z0-9]+" "_" n "${size}")
    gpuprobe_run_test(tools.select.bad_min_free_${n} gpuprobe-select --rc 2 --out-empty
      --err "--min-free wants a size in bytes \\(20GB, 20GiB, 2e10\\), not '${size}'" -- --min-free=${size})
  endforeach()
  gpuprobe_run_test(tools.select.fit_zero gpuprobe-select --rc 2 --out-empty "--err=--fit wants" -- --fit 0)
  # An empty GPUPROBE_DEVICE is unset: the program's spec stands.
  gpuprobe_run_test(tools.select.env_device_empty gpuprobe-select --env GPUPROBE_DEVICE=
    --out "^Using: cpu\n" --no-out "GPUPROBE_DEVICE" -- --device cpu)
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
    --out "^Matrix multiply 48 x 48 x 48" --out "CPU fp32: [0-9.]+ (s|ms|µs|ns)  \\(.*verified\\)" -- --size=48 --runs=2)
  # A call of a 48 x 48 multiply lasts microseconds: a timed run is a batch
  # of them (automatic), or one call with --batch 1.
  gpuprobe_run_test(tools.bench.batch_auto gpuprobe-bench --json ${GPUPROBE_JSON_DOC}
    --json-eq results.0.runs=3 --out "\"batch\": [1-9][0-9]*," -- --json --device cpu --size 48 --runs 3)
  gpuprobe_run_test(tools.bench.batch_one gpuprobe-bench --json ${GPUPROBE_JSON_DOC}
    --json-eq results.0.runs=3 --json-eq results.0.batch=1 -- --json --device cpu --size 48 --runs 3 --batch 1)
  gpuprobe_run_test(tools.bench.batch_text gpuprobe-bench
    --out "CPU fp32: [0-9.]+ (µs|ms)  \\(median of 4 runs of 7 calls, " -- --device cpu --size 48 --runs 4 --batch 7)
  # A precision a device cannot run is said so, never run in another one
  # in silence (1.1 ran the CPU in fp32 and exited 0).
  gpuprobe_run_test(tools.bench.gpu_dtype_without_gpu gpuprobe-bench --rc 1 --env GPUPROBE_CUDA=off
    --env GPUPROBE_CPU_AMX=0
    --out "\nCPU fp32: [^\n]* \\[the CPU runs no bf16: fp32 is the reference\\]\n"
    --out "\nGPU bf16: not available \\(CUDA was turned off" --no-out "Speedup"
    --err "no device here ran bf16" -- --size 48 --runs 2 --dtype bf16)
  # bf16 on a CPU without the bf16 kernel (turned off here): refused, with why.
  gpuprobe_run_test(tools.bench.cpu_bf16 gpuprobe-bench --rc 1 --env GPUPROBE_CPU_AMX=0
    --out "\nCPU bf16: skipped: matmul in bf16 on the CPU needs AMX-BF16 tiles or AVX512-BF16, which this process cannot use: GPUPROBE_CPU_AMX turns it off\\x3b a CUDA device does it"
    -- --device cpu --size 48 --dtype bf16)
  # ...and on one with AMX-BF16 or AVX512-BF16 (the build machine's CPU, read when configured):
  # run on its kernel, verified; without --device the CPU runs bf16 too
  # (no fp32 reference), and a run with no GPU has done what was asked.
  if(GPUPROBE_CPU_HAS_BF16)
    gpuprobe_run_test(tools.bench.cpu_bf16_kernel gpuprobe-bench
      --out "\nCPU bf16: [0-9.]+ [mµ]?s  \\(median of [^\n]*, verified\\)\n +libgpuprobe ${GPUPROBE_CPU_BF16_KERNEL} gemm on "
      -- --device cpu --size 100 --dtype bf16)
    gpuprobe_run_test(tools.bench.cpu_bf16_kernel_json gpuprobe-bench --env GPUPROBE_CUDA=off
      --json ${GPUPROBE_JSON_DOC} --json-eq results.0.dtype=\"bf16\" --json-eq results.0.verified=true
      --json-has "results.0.backend=${GPUPROBE_CPU_BF16_KERNEL} gemm" -- --size 64 --runs 2 --dtype bf16 --json)
  endif()
  gpuprobe_run_test(tools.bench.gpu_dtype_without_gpu_json gpuprobe-bench --rc 1 --env GPUPROBE_CUDA=off
    --env GPUPROBE_CPU_AMX=0
    --json ${GPUPROBE_JSON_DOC} --json-eq reason=\"disabled\" --json-has "reason_text=turned off"
    --json-eq speedup=null -- --size 48 --runs 2 --dtype bf16 --json)
  # A thread count above what OpenBLAS uses: what was used, and what was asked.
  gpuprobe_run_test(tools.bench.threads_capped gpuprobe-bench --env OPENBLAS_NUM_THREADS=1
    --out ", [0-9]+ threads \\(1000 asked for\\)\\x3b" --no-out " 1 threads"
    -- --device cpu --size 32 --runs 1 --batch 1 --threads 1000)
  gpuprobe_run_test(tools.bench.cuda_unusable_json gpuprobe-bench --rc 1 --env GPUPROBE_CUDA=off
    --json ${GPUPROBE_JSON_DOC} --json-has "error.status=cuda_unavailable" -- --json --device cuda --size 32)
  foreach(bad "--size=0" "--size;abc" "--dtype;int4" "--runs" "--device;gpu:x" "--batch;-1" "--batch=2000000")
    string(REGEX REPLACE "[^A-Za-z0-9]+" "_" n "${bad}")
    gpuprobe_run_test(tools.bench.bad${n} gpuprobe-bench --rc 2 --out-empty -- ${bad})
  endforeach()
  gpuprobe_run_test(tools.bench.cpu_json gpuprobe-bench --json ${GPUPROBE_JSON_DOC}
    --json-has "results.0.device=cpu" --json-has "results.0.dtype=fp64" -- --json --device cpu --dtype fp64 --size 40 --runs 2)
  # --bandwidth: the CPU's three tests, in text and JSON; the matmul's
  # options refused with it, --bytes without it, a size too small.
  gpuprobe_run_test(tools.bench.bandwidth gpuprobe-bench --clean --err-empty
    --out "^Bandwidth, GB/s = 10\\^9 bytes/s"
    --out "\ncpu \\([^\n]*\\): buffers of 1\\.0 MB, best \\(median\\) of 2 passes:\n  read  +[0-9.]+ GB/s \\([0-9.]+\\)\n  copy  +[0-9.]+ GB/s \\([0-9.]+\\)\\x3b read \\+ written\n  triad  +[0-9.]+ GB/s"
    --out "\n  C kernels[^\n]*\\x3b [0-9]+ threads? \\(" -- --bandwidth --device cpu --bytes 1MB --runs 2)
  gpuprobe_run_test(tools.bench.bandwidth_json gpuprobe-bench --json ${GPUPROBE_JSON_DOC}
    --json-eq bandwidth.0.device=\"cpu\" --json-eq bandwidth.0.error=null
    --json-eq bandwidth.0.buffer_bytes=1048576 --json-eq bandwidth.0.runs=3 --json-eq bandwidth.0.pcie=null
    --json-eq bandwidth.0.tests.0.test=\"read\" --json-eq bandwidth.0.tests.0.bytes=1048576
    --json-eq bandwidth.0.tests.1.bytes=2097152 --json-eq bandwidth.0.tests.2.bytes=3145728
    -- --bandwidth --device cpu --bytes 1MiB --runs 3 --json)
  gpuprobe_run_test(tools.bench.bandwidth_cuda_unusable gpuprobe-bench --rc 1 --env GPUPROBE_CUDA=off
    --json ${GPUPROBE_JSON_DOC} --json-has "error.status=cuda_unavailable" -- --bandwidth --json --device cuda)
  foreach(bad "--bandwidth;--size;64" "--bandwidth;--dtype;fp16" "--bytes;1GiB" "--bandwidth;--bytes;4095"
          "--bandwidth;--bytes;2TiB" "--bandwidth;--bytes;1.5")
    string(REGEX REPLACE "[^A-Za-z0-9]+" "_" n "${bad}")
    gpuprobe_run_test(tools.bench.bad${n} gpuprobe-bench --rc 2 --out-empty -- ${bad})
  endforeach()

  # gpuprobe-bench --sweep: every size of a doubling series; the table, JSON
  # against docs/json.md, the usage errors, and the pictures (below).
  set(sweep --sweep 16..64 --runs 1 --device cpu)
  gpuprobe_run_test(tools.bench.sweep gpuprobe-bench --clean --err-empty
    --out "^Matrix multiply sweep: "
    --out "\nCPU fp32 \\([^\n]*OpenBLAS[^\n]*\\):\n +n +median +GFLOP/s +of peak +verified\n +16 [^\n]* yes\n +32 [^\n]* yes\n +64 [^\n]* yes\n  every size from 16 to 64, in "
    --no-out "Drawn into" -- ${sweep})
  gpuprobe_run_test(tools.bench.sweep_json gpuprobe-bench --err-empty --json ${GPUPROBE_JSON_DOC}
    --json-eq sweep.lines.0.device=\"cpu\" --json-eq sweep.lines.0.from=16 --json-eq sweep.lines.0.to=64
    --json-eq sweep.lines.0.stopped=\"done\" --json-eq sweep.lines.0.stopped_at=null
    --json-eq sweep.budget_s=60 --json-eq sweep.plot=null --json-eq speedup=null
    --json-eq results.0.n=16 --json-eq results.2.n=64 --json-eq results.2.verified=true
    --no-out "\"size\"" -- ${sweep} --json)
  # Progress on a terminal: each size as it starts, the line cleared at the
  # end (and nothing on a pipe: the cases above).
  # The lesson's run on a terminal: each matmul's line of progress on
  # standard error (what runs, the time so far, about how long is left),
  # cleared before the results; none when standard error is no terminal.
  gpuprobe_run_test(tools.bench.progress gpuprobe-bench --stderr-tty --clean
    --err "^\rgpuprobe-bench: CPU fp32, 300 x 300: [^\r\n]*\\x1b\\x5bK(\r[^\r\n]*\\x1b\\x5bK)*\r\\x1b\\x5bK$"
    --out "^CPU fp32: " -- --device cpu --size 300)
  gpuprobe_run_test(tools.bench.sweep_progress gpuprobe-bench --stderr-tty --clean
    --err "^\rgpuprobe-bench: cpu fp32, n = 16 \\.\\.\\.\\x1b\\x5bK\rgpuprobe-bench: cpu fp32, n = 32 \\.\\.\\.\\x1b\\x5bK\r[^\n]*n = 64 [^\n]*\r\\x1b\\x5bK$"
    --out "\n +64 [^\n]* yes\n" -- ${sweep})
  # Sizes from FROM to TO and TO itself; one size.
  gpuprobe_run_test(tools.bench.sweep_sizes gpuprobe-bench --json ${GPUPROBE_JSON_DOC}
    --json-eq results.0.n=20 --json-eq results.1.n=40 --json-eq results.2.n=50 --json-eq sweep.lines.0.to=50
    -- --sweep=20..50 --runs 1 --device cpu --dtype fp64 --json)
  # --sweep without a range takes the defaults (64 to 4096 on the CPU),
  # and the next option is not taken for its value.
  gpuprobe_run_test(tools.bench.sweep_default_range gpuprobe-bench --json ${GPUPROBE_JSON_DOC}
    --json-eq sweep.lines.0.from=64 --json-eq sweep.lines.0.to=4096 --json-eq sweep.budget_s=1
    -- --sweep --device cpu --runs 1 --budget 1 --json)
  # A precision the CPU cannot run: skipped, a failure only when nothing ran it.
  gpuprobe_run_test(tools.bench.sweep_cpu_bf16 gpuprobe-bench --rc 1 --clean --env GPUPROBE_CPU_AMX=0
    --out "\nCPU bf16: skipped: matmul in bf16 on the CPU needs AMX-BF16" --out "\nCPU fp32 \\("
    --err "^gpuprobe-bench: no device here ran bf16\n$" -- ${sweep} --dtype fp32,bf16)
  foreach(bad "--size;64;--sweep" "--sweep=64..16" "--sweep=0..16" "--sweep=16" "--sweep=1.5..8"
              "--dtype;fp32,fp64" "--sweep;--dtype;fp32,,bf16" "--sweep;--dtype;fp32,int8" "--device;cpu,cpu"
              "--budget;5" "--sweep;--budget;0" "--sweep;--budget=1.5")
    string(REGEX REPLACE "[^A-Za-z0-9]+" "_" n "${bad}")
    gpuprobe_run_test(tools.bench.sweep_bad${n} gpuprobe-bench --rc 2 --out-empty --err "^gpuprobe-bench: " -- ${bad})
  endforeach()
  gpuprobe_run_test(tools.bench.sweep_bad_json gpuprobe-bench --rc 2 --json ${GPUPROBE_JSON_DOC}
    --json-eq error.status=\"usage\" --json-has "error.message=--size and --sweep" -- --size 64 --sweep --json)
  if(GPUPROBE_HAVE_CAIRO)
    # The pictures: valid PNG, SVG and PDF; the SVG holds its texts and its
    # points sit where the JSON's figures put them; one size is one point;
    # nothing measured is nothing drawn; a file that cannot be written is
    # exit status 1 with nothing left behind; only .png, .svg and .pdf.
    gpuprobe_run_test(tools.bench.plot_png gpuprobe-bench --clean --err-empty --png {tmp}/s.png
      --files {tmp}=1 --out "\nDrawn into [^\n]*/s\\.png: GFLOP/s against n" -- ${sweep} --plot {tmp}/s.png)
    gpuprobe_run_test(tools.bench.plot_svg gpuprobe-bench --err-empty --json ${GPUPROBE_JSON_DOC}
      --env SOURCE_DATE_EPOCH=1000000000 --svg {tmp}/s.svg --svg-points
      --svg-text "Matrix multiply throughput by size" --svg-text ", measured 2001-09-09"
      --svg-text "CPU fp32" --svg-text "dashed: theoretical peak" --svg-text "theoretical peak "
      --svg-text "Matrix size n: n × n times n × n (log scale)" --svg-text "Machine load: 1-minute load average "
      --svg-text "Throughput (FLOP/s, log scale)" --svg-text "gpuprobe-bench ${PROJECT_VERSION} --sweep"
      --svg-text "median of exactly 1 timed run, its result verified"
      --json-has "sweep.plot=/s.svg" --files {tmp}=1 -- ${sweep} --json --plot {tmp}/s.svg)
    gpuprobe_run_test(tools.bench.plot_pdf gpuprobe-bench --err-empty --pdf {tmp}/S.PDF --files {tmp}=1
      -- ${sweep} --plot {tmp}/S.PDF)
    gpuprobe_run_test(tools.bench.plot_one_point gpuprobe-bench --err-empty --json ${GPUPROBE_JSON_DOC}
      --svg {tmp}/s.svg --svg-points -- --sweep 32..32 --runs 1 --device cpu --json --plot {tmp}/s.svg)
    # Several runs per size: each point's bar spans them.
    gpuprobe_run_test(tools.bench.plot_spread gpuprobe-bench --err-empty --json ${GPUPROBE_JSON_DOC}
      --svg {tmp}/s.svg --svg-points -- --sweep 16..32 --runs 5 --batch 1 --device cpu --json --plot {tmp}/s.svg)
    gpuprobe_run_test(tools.bench.plot_nothing gpuprobe-bench --rc 1 --files {tmp}=0 --clean
      --env GPUPROBE_CPU_AMX=0
      --out "\nCPU bf16: skipped: " --no-out "Drawn into"
      --err "^gpuprobe-bench: --plot [^\n]*/s\\.svg: nothing to draw: no point was measured\n"
      -- --sweep 16..32 --device cpu --dtype bf16 --plot {tmp}/s.svg)
    gpuprobe_run_test(tools.bench.plot_unwritable gpuprobe-bench --rc 1 --files {tmp}=0
      --out "\nCPU fp32 \\(" --no-out "Drawn into"
      --err "^gpuprobe-bench: --plot [^\n]*/missing/s\\.png: creating a temporary file beside it: No such file or directory"
      -- ${sweep} --plot {tmp}/missing/s.png)
    gpuprobe_run_test(tools.bench.plot_unwritable_json gpuprobe-bench --rc 1 --files {tmp}=0
      --json ${GPUPROBE_JSON_DOC} --json-eq sweep.plot=null --json-eq sweep.lines.0.stopped=\"done\"
      --err "--plot " -- ${sweep} --json --plot {tmp}/missing/s.png)
    gpuprobe_run_test(tools.bench.plot_extension gpuprobe-bench --rc 2 --out-empty --files {tmp}=0
      --err "--plot wants a file name ending in \\.png, \\.svg or \\.pdf, not '[^']*/s\\.gif'"
      -- ${sweep} --plot {tmp}/s.gif)
    gpuprobe_run_test(tools.bench.plot_without_sweep gpuprobe-bench --rc 2 --out-empty --files {tmp}=0
      --err "^gpuprobe-bench: --plot draws a sweep: add --sweep\n" -- --size 16 --plot {tmp}/s.png)

    # --roofline: a sweep and a bandwidth run (small buffers: seconds), the
    # roofline drawn. The text, PNG and JSON; in the SVG every roof's
    # corner, the slope and every point where the JSON says, and its texts.
    set(roof --sweep 16..64 --runs 1 --bytes 1MiB --device cpu)
    gpuprobe_run_test(tools.bench.roofline gpuprobe-bench --clean --err-empty
      --png {tmp}/r.png --files {tmp}=1
      --out "^Matrix multiply sweep: " --out "\nBandwidth, GB/s = 10\\^9 bytes/s"
      --out "\ncpu \\([^\n]*\\): memory read [0-9.]+ [kMGT]?B/s \\(measured\\)[^\n]*:\n  fp32: roof [0-9.]+ [kMGT]?FLOP/s \\(measured at n = (16|32|64)\\), ridge at [0-9.e+]+ FLOP/byte"
      --out "\n +n +FLOP/byte +GFLOP/s +of attainable\n +16 +2\\.67 [^\n]*\n +32 +5\\.33 [^\n]*\n +64 +10\\.7 "
      --out "\nDrawn into [^\n]*/r\\.png: the roofline, FLOP/s against FLOP/byte"
      -- ${roof} --roofline {tmp}/r.png)
    gpuprobe_run_test(tools.bench.roofline_svg gpuprobe-bench --err-empty --json ${GPUPROBE_JSON_DOC}
      --env SOURCE_DATE_EPOCH=1000000000 --svg {tmp}/r.svg --svg-roofline
      --svg-text "Roofline: attainable throughput by arithmetic intensity" --svg-text ", measured 2001-09-09"
      --svg-text "Arithmetic intensity (FLOP per byte of memory traffic, log scale)"
      --svg-text "Attainable throughput (FLOP/s, log scale)" --svg-text "read " --svg-text "fp32 roof "
      --svg-text "fp32 peak " --svg-text "n=16" --svg-text "solid: measured roof" --svg-text "memory bandwidth"
      --svg-text "gpuprobe-bench ${PROJECT_VERSION} --roofline" --svg-text "12n² bytes in fp32"
      --svg-text "cpu: best of 1 passes over 1.0 MB buffers"
      --json-eq roofline.devices.0.device=\"cpu\" --json-has "roofline.plot=/r.svg" --json-eq sweep.budget_s=20
      --json-eq sweep.plot=null --json-eq bandwidth.0.buffer_bytes=1048576 --json-eq bandwidth.0.error=null
      --json-eq roofline.devices.0.roofs.0.dtype=\"fp32\" --json-eq roofline.devices.0.roofs.0.points.0.n=16
      --json-near roofline.devices.0.roofs.0.points.0.bytes=3072 --json-near roofline.devices.0.roofs.0.points.0.flop=8192
      --json-near roofline.devices.0.roofs.0.points.2.intensity=10.6667
      --files {tmp}=1 -- ${roof} --json --roofline {tmp}/r.svg)
    # Both pictures of one sweep; one size, one point.
    gpuprobe_run_test(tools.bench.roofline_and_plot gpuprobe-bench --err-empty --json ${GPUPROBE_JSON_DOC}
      --svg {tmp}/r.svg --svg-roofline --pdf {tmp}/s.pdf --json-has "sweep.plot=/s.pdf"
      --json-has "roofline.plot=/r.svg" --files {tmp}=2 -- ${roof} --json --roofline {tmp}/r.svg --plot {tmp}/s.pdf)
    gpuprobe_run_test(tools.bench.roofline_one_point gpuprobe-bench --err-empty --json ${GPUPROBE_JSON_DOC}
      --svg {tmp}/r.svg --svg-roofline --json-eq roofline.devices.0.roofs.0.n=32
      -- --sweep 32..32 --runs 1 --bytes 1MiB --device cpu --json --roofline {tmp}/r.svg)
    # A device whose bandwidth run fails has no slope: its roofs run flat
    # across, the footer and stderr say why, exit status 1.
    gpuprobe_run_test(tools.bench.roofline_no_bandwidth gpuprobe-bench --rc 1 --json ${GPUPROBE_JSON_DOC}
      --svg {tmp}/r.svg --svg-roofline --svg-text "No slope for cpu: its bandwidth run failed (bandwidth on cpu needs"
      --json-eq roofline.devices.0.read_gbps=null --json-eq roofline.devices.0.roofs.0.ridge=null
      --json-eq bandwidth.0.error.status=\"out_of_memory\" --json-has "roofline.plot=/r.svg"
      --err "^gpuprobe-bench: bandwidth on cpu: out of host memory: "
      -- --sweep 16..32 --runs 1 --bytes 1TiB --device cpu --json --roofline {tmp}/r.svg)
    # A device whose matmul fails has no roof: nothing to draw.
    gpuprobe_run_test(tools.bench.roofline_no_roof gpuprobe-bench --rc 1 --files {tmp}=0 --clean
      --preload ${GPUPROBE_SHIM} --env GPUPROBE_SHIM_FAIL=gpuprobe_matmul_run --env "GPUPROBE_SHIM_MESSAGE=no memory left"
      --out "\nCPU fp32: failed: no memory left" --out "\n  fp32: no roof \\(no size was measured\\)" --no-out "Drawn into"
      --err "^gpuprobe-bench: --roofline [^\n]*/r\\.svg: nothing to draw: no point was measured\n"
      -- ${roof} --roofline {tmp}/r.svg)
    gpuprobe_run_test(tools.bench.roofline_unwritable gpuprobe-bench --rc 1 --files {tmp}=0
      --json ${GPUPROBE_JSON_DOC} --json-eq roofline.plot=null --json-eq roofline.devices.0.device=\"cpu\"
      --err "^gpuprobe-bench: --roofline [^\n]*/missing/r\\.png: creating a temporary file beside it: No such file or directory"
      -- ${roof} --json --roofline {tmp}/missing/r.png)
    gpuprobe_run_test(tools.bench.roofline_extension gpuprobe-bench --rc 2 --out-empty --files {tmp}=0
      --err "--roofline wants a file name ending in \\.png, \\.svg or \\.pdf, not '[^']*/r\\.jpg'"
      -- ${roof} --roofline {tmp}/r.jpg)
    # --roofline runs a sweep and a bandwidth run itself: not with
    # --bandwidth (one or the other) nor --size (the sweep gives the sizes).
    gpuprobe_run_test(tools.bench.roofline_bandwidth gpuprobe-bench --rc 2 --out-empty --files {tmp}=0
      --err "^gpuprobe-bench: --roofline runs the bandwidth test itself: not with --bandwidth"
      -- --bandwidth --roofline {tmp}/r.png)
    gpuprobe_run_test(tools.bench.roofline_size gpuprobe-bench --rc 2 --out-empty --files {tmp}=0
      --err "^gpuprobe-bench: --size and --roofline do not go together: --sweep FROM..TO gives the sizes"
      -- --size 64 --roofline {tmp}/r.png)
  else()
    # A build without cairo draws SVG only (its text widths estimated), the
    # points where the JSON puts them; PNG and PDF are refused before any
    # work.
    gpuprobe_run_test(tools.bench.plot_svg_without_cairo gpuprobe-bench --files {tmp}=1
      --json ${GPUPROBE_JSON_DOC} --svg {tmp}/s.svg --svg-points --svg-text "CPU fp32"
      -- ${sweep} --json --plot {tmp}/s.svg)
    gpuprobe_run_test(tools.bench.roofline_svg_without_cairo gpuprobe-bench --files {tmp}=1
      --json ${GPUPROBE_JSON_DOC} --svg {tmp}/r.svg --svg-text "memory read "
      -- --sweep 16..32 --device cpu --bytes 1MiB --json --roofline {tmp}/r.svg)
    gpuprobe_run_test(tools.bench.plot_without_cairo gpuprobe-bench --rc 2 --out-empty --files {tmp}=0
      --err "^gpuprobe-bench: --plot: this gpuprobe-bench was built without cairo, so it draws SVG only"
      -- ${sweep} --plot {tmp}/s.png)
    gpuprobe_run_test(tools.bench.roofline_without_cairo gpuprobe-bench --rc 2 --out-empty --files {tmp}=0
      --err "^gpuprobe-bench: --roofline: this gpuprobe-bench was built without cairo, so it draws SVG only"
      -- --sweep 16..32 --device cpu --roofline {tmp}/r.png)
    gpuprobe_run_test(tools.bench.plot_without_cairo_json gpuprobe-bench --rc 2 --files {tmp}=0
      --json ${GPUPROBE_JSON_DOC} --json-eq error.status=\"usage\" --json-has "error.message=without cairo"
      -- ${sweep} --json --plot {tmp}/s.pdf)
  endif()

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
  gpuprobe_run_test(tools.fit.params_zero gpuprobe-fit --rc 2 --out-empty "--err=--params wants" -- --params 0)
  gpuprobe_run_test(tools.fit.too_many_params gpuprobe-fit --rc 2 "--err=--params" -- --params 2e15)

  # gpuprobe-fit --model on this machine's CPU (every shipped config, text
  # and JSON, against the library's plan), a fabricated Hugging Face hub
  # cache, bad configs and values, the shipped list (tests/tools/fit_models.py).
  foreach(case cpu hub errors list)
    gpuprobe_fit_models_test(tools.fit.models_${case} ${case})
  endforeach()
  # (a small model, so that it fits the RAM of any test machine: exit status 0)
  gpuprobe_run_test(tools.fit.model_text gpuprobe-fit --clean
    --out "^Model: Qwen2\\.5-0\\.5B \\(shipped config: [^\n]*/share/gpuprobe/models/Qwen2\\.5-0\\.5B\\.json\\)\n"
    --out "\nKV cache +[0-9.]+ MB\n" --out "\nBest device: cpu " -- --model Qwen2.5-0.5B --device cpu --context 4096)
  gpuprobe_run_test(tools.fit.model_json gpuprobe-fit --json ${GPUPROBE_JSON_DOC}
    --json-eq model.params=494032768 --json-eq devices.0.plan.kv_cache_bytes=50331648
    --json-eq workload.kv_bytes_per_token=12288 -- --model Qwen2.5-0.5B --device cpu --context 4096 --json)
  # --prompt, --generate: the speed on this CPU (a short measurement: 1 MiB
  # buffers, 2 ms a shape), the plan's context P + G, the usage errors.
  set(speed_cpu --model Qwen2.5-0.5B --device cpu --prompt 64 --generate 4 --speed-bytes 1MiB
    --speed-budget 2)
  gpuprobe_run_test(tools.fit.speed gpuprobe-fit --clean
    --out "\nfirst token +[0-9.]+ [mµ]?s\ndecode +[0-9.]+ tok/s\n"
    --out "\n  cpu: prefill 64 tokens: [0-9.]+ [mµ]?s \\((compute|memory)-bound, 46\\.3 GFLOP at [0-9.]+ [GMT]FLOP/s measured\\)\\x3b decode: [0-9.]+ tokens/s \\((compute|memory)-bound, 9[0-9][0-9] MB per token at [0-9.]+ [GMT]B/s measured, [1-9][0-9]* threads?\\)\n"
    -- ${speed_cpu})
  # --threads: the CPU's figures measured with that many threads, said in
  # the line and the JSON; refused at 0 and without --prompt
  gpuprobe_run_test(tools.fit.speed_threads gpuprobe-fit --json ${GPUPROBE_JSON_DOC} --env GPUPROBE_CPU_AMX=0
    --json-eq devices.0.speed.measured.cpu_threads=3 -- ${speed_cpu} --threads 3 --json)
  gpuprobe_run_test(tools.fit.speed_threads_text gpuprobe-fit --clean
    --out " per token at [0-9.]+ [GMT]B/s measured, 1 thread\\)\n" -- ${speed_cpu} --threads 1)
  gpuprobe_run_test(tools.fit.speed_threads_zero gpuprobe-fit --rc 2 --out-empty
    "--err=--threads wants a thread count from 1 to 1024, not '0'" -- ${speed_cpu} --threads 0)
  gpuprobe_run_test(tools.fit.speed_threads_alone gpuprobe-fit --rc 2 --out-empty
    "--err=--speed-bytes and --threads go with --prompt or --generate" -- --model Qwen2.5-0.5B --threads 2)
  gpuprobe_run_test(tools.fit.speed_json gpuprobe-fit --json ${GPUPROBE_JSON_DOC} --env GPUPROBE_CPU_AMX=0
    --json-eq workload.context=68 --json-eq workload.prompt=64 --json-eq devices.0.speed.error=null
    --json-eq devices.0.speed.decode_weight_bytes=988065536
    --json-eq devices.0.speed.measured.dtype=\"fp32\" --json-eq devices.0.speed.measured.dtype_substituted=true
    -- ${speed_cpu} --json)
  if(GPUPROBE_CPU_HAS_BF16)
    gpuprobe_run_test(tools.fit.speed_json_bf16 gpuprobe-fit --json ${GPUPROBE_JSON_DOC}
      --json-eq devices.0.speed.measured.dtype=\"bf16\"
      --json-eq devices.0.speed.measured.dtype_substituted=false -- ${speed_cpu} --json)
  endif()
  # --roofline: each device's roofline from the speed estimate's figures,
  # the model's prefill and decode on it (the SVG holds the labels and the
  # ring of each; the JSON names the file); refused without the speed,
  # with a name it cannot draw, and in a build without cairo.
  if(GPUPROBE_HAVE_CAIRO)
    gpuprobe_run_test(tools.fit.roofline gpuprobe-fit --json ${GPUPROBE_JSON_DOC} --files {tmp}=1
      --json-has "roofline=/r.svg" --svg {tmp}/r.svg
      --svg-text "Roofline of Qwen2.5-0.5B: prefill and decode" --svg-text "prefill 64 tokens ("
      --svg-text "decode, batch 1: " --svg-text "memory read "
      -- ${speed_cpu} --json --roofline {tmp}/r.svg)
    gpuprobe_run_test(tools.fit.roofline_png gpuprobe-fit --clean --png {tmp}/r.png --files {tmp}=1
      --out "\nDrawn into [^\n]*/r\.png: each device's roofline" -- ${speed_cpu} --roofline {tmp}/r.png)
    gpuprobe_run_test(tools.fit.roofline_no_speed gpuprobe-fit --rc 2 --out-empty --files {tmp}=0
      "--err=--roofline draws the speed estimate: add --prompt or --generate"
      -- --model Qwen2.5-0.5B --roofline {tmp}/r.png)
    gpuprobe_run_test(tools.fit.roofline_extension gpuprobe-fit --rc 2 --out-empty --files {tmp}=0
      "--err=--roofline wants a file name ending in .png, .svg or .pdf"
      -- ${speed_cpu} --roofline {tmp}/r.jpg)
  else()
    gpuprobe_run_test(tools.fit.roofline_without_cairo gpuprobe-fit --rc 2 --out-empty --files {tmp}=0
      "--err=--roofline: this gpuprobe-fit was built without cairo, so it draws SVG only"
      -- ${speed_cpu} --roofline {tmp}/r.png)
    gpuprobe_run_test(tools.fit.roofline_svg_without_cairo gpuprobe-fit --files {tmp}=1 --clean
      --svg {tmp}/r.svg --svg-text "Roofline of Qwen2.5-0.5B: prefill and decode"
      --svg-text "prefill 64 tokens (" -- ${speed_cpu} --roofline {tmp}/r.svg)
  endif()
  gpuprobe_run_test(tools.fit.speed_no_model gpuprobe-fit --rc 2 --out-empty "--err=go with --model"
    -- --prompt 64)
  gpuprobe_run_test(tools.fit.speed_zero gpuprobe-fit --rc 2 --out-empty "--err=--prompt wants"
    -- --model Qwen2.5-0.5B --prompt 0)
  gpuprobe_run_test(tools.fit.speed_budget_alone gpuprobe-fit --rc 2 --out-empty
    "--err=go with --prompt or --generate" -- --model Qwen2.5-0.5B --speed-budget 5)
  gpuprobe_run_test(tools.fit.model_not_found gpuprobe-fit --rc 2 --out-empty
    --err "^gpuprobe-fit: model No-Such-Model not found: no file or directory No-Such-Model\\x3b " -- --model No-Such-Model)
  gpuprobe_run_test(tools.fit.list_models gpuprobe-fit --clean --out "\n  Llama-3\\.1-8B +8\\.0 B parameters, +131072 positions, bfloat16\n"
    -- --list-models)

  # gpuprobe-nfd's feature files (tests/tools/nfd_file.py): format, labels,
  # documentation, atomic replacement under failures.
  foreach(case replace cpu_only stdout_is_the_file json expiry bench documented missing_dir
          unwritable_dir full_disk_shim fsync_fails rename_fails full_tmpfs probe_fails bench_fails
          char_device fifo socket directory symlink_to_file symlink_chain dangling_symlink symlink_loop
          symlinked_directory)
    add_test(NAME tools.nfd.file_${case}
      COMMAND ${GPUPROBE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/tools/nfd_file.py
        --nfd $<TARGET_FILE:gpuprobe-nfd> --check $<TARGET_FILE:nfd_check> --shim ${GPUPROBE_SHIM}
        --docs ${PROJECT_SOURCE_DIR}/docs --man ${PROJECT_BINARY_DIR}/tools/man/gpuprobe-nfd.1 ${case})
    set_tests_properties(tools.nfd.file_${case} PROPERTIES TIMEOUT 240 SKIP_RETURN_CODE 77)
  endforeach()
  # gpuprobe_nfd_labels_test(<name> [ENV K=V...] [RC n] [ARGS arg...]
  #     [SKIP_IF_EXISTS path...] [SKIP_IF_LOADABLE soname...] CHECK <nfd_check args>)
  # runs gpuprobe-nfd --output - ARGS in the environment ENV, expects exit
  # status RC (default 0) and checks the feature file with nfd_check and the
  # CHECK arguments (--has KEY=ERE, --lacks KEY, --count N); skipped where a
  # path exists or the loader finds a library (a real NVIDIA driver, when
  # the case simulates its absence). A simulated CUDA stack (its libraries
  # on LD_LIBRARY_PATH, its fleet in the environment) makes each fleet a
  # call of this function (simcuda_nfd() in tests/simcuda.cmake).
  set(GPUPROBE_NFD_FILE_PY ${CMAKE_CURRENT_LIST_DIR}/tools/nfd_file.py)
  function(gpuprobe_nfd_labels_test name)
    cmake_parse_arguments(L "" "RC" "ENV;ARGS;CHECK;SKIP_IF_EXISTS;SKIP_IF_LOADABLE" ${ARGN})
    set(env "")
    foreach(e ${L_ENV})
      list(APPEND env --env "${e}")
    endforeach()
    foreach(p ${L_SKIP_IF_EXISTS})
      list(APPEND env --skip-if-exists "${p}")
    endforeach()
    foreach(p ${L_SKIP_IF_LOADABLE})
      list(APPEND env --skip-if-loadable "${p}")
    endforeach()
    if(NOT L_RC)
      set(L_RC 0)
    endif()
    add_test(NAME tools.nfd.labels_${name}
      COMMAND ${GPUPROBE_PYTHON3} ${GPUPROBE_NFD_FILE_PY}
        --nfd $<TARGET_FILE:gpuprobe-nfd> --check $<TARGET_FILE:nfd_check> --shim ${GPUPROBE_SHIM}
        --docs ${PROJECT_SOURCE_DIR}/docs --man ${PROJECT_BINARY_DIR}/tools/man/gpuprobe-nfd.1
        ${env} --rc ${L_RC} labels -- ${L_ARGS} --check-args ${L_CHECK})
    set_tests_properties(tools.nfd.labels_${name} PROPERTIES TIMEOUT 240 SKIP_RETURN_CODE 77)
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

  # Each command's man page documents every option its --help lists, and
  # has none of the faults tests/tools/man_page.sh looks for (an exit
  # status listed twice, scdoc markup left as text, itself in SEE ALSO).
  foreach(t ${GPUPROBE_TOOLS})
    add_test(NAME tools.${t}.man_options
      COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/tools/man_options.sh $<TARGET_FILE:gpuprobe-${t}>
              ${PROJECT_BINARY_DIR}/tools/man/gpuprobe-${t}.1)
    add_test(NAME tools.${t}.man_page
      COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/tools/man_page.sh
              ${PROJECT_BINARY_DIR}/tools/man/gpuprobe-${t}.1 gpuprobe-${t})
    set_tests_properties(tools.${t}.man_page PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
  # ... and gpuprobe-smi's every --query-gpu field, and no other.
  add_test(NAME tools.smi.man_fields
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/tools/man_fields.sh $<TARGET_FILE:gpuprobe-smi>
            ${PROJECT_BINARY_DIR}/tools/man/gpuprobe-smi.1)
endif()

# ---- the example programs ---------------------------------------------------
if(TARGET smi)
  set(quick_matmul_bench --size 48)
  set(quick_model_fit --model Qwen2.5-0.5B --context 1024)
  foreach(e smi cuda_info select_device matmul_bench vram_capacity model_fit)
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
  # beyond the lesson: Llama-3.1-8B at 8192 tokens, here, and a model not found
  gpuprobe_run_test(example.model_fit model_fit --clean
    --out "^Qwen2\\.5-0\\.5B: 494\\.0 M parameters\\x3b 4096 tokens of KV cache take 50\\.3 MB\n  cpu +needs +[0-9.]+ GB of"
    -- --model Qwen2.5-0.5B --context 4096)
  gpuprobe_run_test(example.model_fit.not_found model_fit --rc 2 --out-empty --err "model nope not found"
    -- --model nope)
endif()

# ---- gpuprobe-nfd on simulated nodes ------------------------------------------
# The labels of nodes the simulated NVIDIA stack makes (tests/simcuda.cmake,
# included before this file, builds it): no GPU, one, eight of three
# products, MIG instances, CUDA unusable for each cause a program can reach
# through the real loader, a hostile product name, --bench on simulated
# cuBLAS and its negative control. simcuda_nfd(<case> "<fleet>" [NO_DRIVER]
# <gpuprobe_nfd_labels_test arguments>) is the test
# tools.nfd.labels_sim_<case>: the scenario environment (the simulated
# libraries first on the loader's path, NO_DRIVER: without them; no CUDA
# variable of the caller's) and the fleet (configuration text, ';' between
# lines). What the queries do to each GPU (contexts, memory, work) is
# scenario.nfd.
if(TARGET gpuprobe-nfd AND TARGET nfd_check AND COMMAND simcuda_test_env)
  function(simcuda_nfd case fleet)
    set(args ${ARGN})
    set(mode "")
    if("NO_DRIVER" IN_LIST args)
      list(REMOVE_ITEM args NO_DRIVER)
      set(mode NO_DRIVER)
    endif()
    gpuprobe_nfd_labels_test(sim_${case} ${args})
    simcuda_test_env(tools.nfd.labels_sim_${case} ${mode})
    simcuda_test_fleet(tools.nfd.labels_sim_${case} "${fleet}")
  endfunction()
  set(p gpuprobe.io)
  set(num "0|[1-9][0-9]*") # a whole number, as the labels write it
  set(versions13 --has ${p}/cuda.driver.version=13\\.0 --has ${p}/cuda.driver.major=13
    --has ${p}/cuda.driver.minor=0 --has ${p}/cuda.runtime.version=13\\.0
    --has ${p}/cuda.runtime.major=13 --has ${p}/cuda.runtime.minor=0)
  set(unusable --has ${p}/cuda.usable=false --has ${p}/cuda.devices=0 --lacks ${p}/gpu.product
    --lacks ${p}/gpu.count --lacks ${p}/gpu.memory --lacks ${p}/gpu.compute.major)

  # No GPU: the driver runs and finds none; both versions are known.
  simcuda_nfd(no_gpu "" CHECK ${unusable} ${versions13} --has ${p}/cuda.cause=no_device --count 9)
  # One H200: every label of the default run, memory in MiB (150754820096 B).
  simcuda_nfd(one_h200 "${SIMCUDA_ONE_H200}" CHECK ${versions13} --has ${p}/cuda.usable=true
    --has ${p}/cuda.cause=available --has ${p}/cuda.devices=1 --has ${p}/gpu.product=NVIDIA-H200
    --has ${p}/gpu.count=1 --has ${p}/gpu.models=1 --has ${p}/gpu.memory=143771
    --has ${p}/gpu.compute.major=9 --has ${p}/gpu.compute.minor=0 --has ${p}/gpu.mig.mode=disabled
    --count 16)
  # Eight GPUs of three products in CUDA order A100 H200 H200 A100 H200 L4
  # H200 A100: the H200 (4) beats the A100 (3) though an A100 comes first;
  # gpu.memory is its smallest GPU's (140 GiB).
  set(a100 "[gpu];preset=A100-80GB")
  set(h200 "[gpu];preset=H200")
  set(SIMCUDA_EIGHT "${a100};${h200};${h200};${a100};${h200};[gpu];preset=L4;${h200};total=140GiB;${a100}")
  simcuda_nfd(eight_mixed "${SIMCUDA_EIGHT}" CHECK ${versions13} --has ${p}/cuda.usable=true
    --has ${p}/cuda.devices=8 --has ${p}/gpu.product=NVIDIA-H200 --has ${p}/gpu.count=4
    --has ${p}/gpu.models=3 --has ${p}/gpu.memory=143360 --has ${p}/gpu.compute.major=9
    --has ${p}/gpu.compute.minor=0 --has ${p}/gpu.mig.mode=disabled --count 16)
  # --bench there: the fit is that of the smallest H200 (140 GiB less the
  # 500 MiB context: 74.9e9 parameters), like gpu.memory, so that a model
  # that fits fits each of them; the first H200 alone would say 75.
  simcuda_nfd(eight_mixed_bench "${SIMCUDA_EIGHT}" ARGS --bench-only --size 32
    CHECK --has ${p}/gpu.fit.fp16.weights.billions=74 --has ${p}/gpu.fit.fp16.inference.billions=62)
  # ... and only the A100s left visible: their product, smallest memory.
  simcuda_nfd(eight_visible_a100 "${SIMCUDA_EIGHT}" ENV CUDA_VISIBLE_DEVICES=7,0,3
    CHECK --has ${p}/cuda.devices=3 --has ${p}/gpu.product=NVIDIA-A100-SXM4-80GB
    --has ${p}/gpu.count=3 --has ${p}/gpu.models=1 --has ${p}/gpu.memory=81157
    --has ${p}/gpu.compute.major=8)

  # CUDA unusable, each cause a program can reach through the real loader.
  # The driver supports CUDA 12.4: with only the CUDA 13 runtime, too old
  # (both versions known) ...
  simcuda_nfd(driver_too_old "driver_version=12.4;${SIMCUDA_ONE_H200}"
    ENV GPUPROBE_CUDA_LIBDIR=${SIMCUDA_DIR}/rt13 CHECK ${unusable}
    --has ${p}/cuda.cause=driver_too_old --has ${p}/cuda.driver.version=12\\.4
    --has ${p}/cuda.driver.major=12 --has ${p}/cuda.driver.minor=4
    --has ${p}/cuda.runtime.version=13\\.0 --count 9)
  # ... as the runtime finds it when the driver's version cannot be read
  # (no driver version label: nothing made up) ...
  simcuda_nfd(driver_too_old_runtime "driver_version=12.4;fail=cuDriverGetVersion:1;${SIMCUDA_ONE_H200}"
    ENV GPUPROBE_CUDA_LIBDIR=${SIMCUDA_DIR}/rt13 CHECK ${unusable}
    --has ${p}/cuda.cause=driver_too_old --lacks ${p}/cuda.driver.version
    --has ${p}/cuda.runtime.version=13\\.0 --count 6)
  # ... and usable through the CUDA 12 runtime when there is one.
  simcuda_nfd(driver12_fallback "driver_version=12.4;${SIMCUDA_ONE_H200}"
    CHECK --has ${p}/cuda.usable=true --has ${p}/cuda.driver.version=12\\.4
    --has ${p}/cuda.runtime.version=12\\.8 --has ${p}/cuda.runtime.minor=8
    --has ${p}/gpu.product=NVIDIA-H200 --count 16)
  # The kernel driver is not running: cuInit fails, NVML cannot load, and
  # /proc/driver/nvidia is missing (so not on a machine whose driver runs).
  simcuda_nfd(no_kernel_driver
    "cuinit_error=CUDA_ERROR_UNKNOWN;nvml_init_error=NVML_ERROR_DRIVER_NOT_LOADED;${SIMCUDA_ONE_H200}"
    SKIP_IF_EXISTS /proc/driver/nvidia/version /dev/dxg
    CHECK ${unusable} ${versions13} --has ${p}/cuda.cause=no_kernel_driver --count 9)
  # No driver library: the runtime loads, libcuda.so.1 does not.
  simcuda_nfd(no_driver "" NO_DRIVER ENV GPUPROBE_CUDA_LIBDIR=${SIMCUDA_DIR}/rt13
    SKIP_IF_LOADABLE libcuda.so.1
    CHECK ${unusable} --has ${p}/cuda.cause=no_driver --lacks ${p}/cuda.driver.version
    --has ${p}/cuda.runtime.version=13\\.0 --count 6)
  # CUDA_VISIBLE_DEVICES hiding every GPU: empty, or a list whose first
  # entry names none (CUDA stops there).
  simcuda_nfd(hidden "${SIMCUDA_TWO}" ENV CUDA_VISIBLE_DEVICES=
    CHECK ${unusable} ${versions13} --has ${p}/cuda.cause=devices_hidden --count 9)
  simcuda_nfd(hidden_past_the_gpus "${SIMCUDA_TWO}" ENV CUDA_VISIBLE_DEVICES=5,0
    CHECK ${unusable} --has ${p}/cuda.cause=devices_hidden --count 9)
  # (no_permission needs /dev/nvidia* nodes the user may not open: the
  # kernel side is not simulated, so scenario.causes reaches it through the
  # sysroot test seam.)

  # A product name with hostile bytes (a quote, ESC and a colour sequence,
  # a control byte, a newline, 0xff, a backslash), and one of 96 bytes with
  # blanks, a slash and non-ASCII characters: a valid label value, never
  # empty, cut with a hash when long.
  simcuda_nfd(hostile_name "[gpu];preset=H200;name=${GPUPROBE_HOSTILE}"
    CHECK --has ${p}/gpu.product=q-31mRED-NL-z --count 16)
  simcuda_nfd(long_name
    "[gpu];preset=H200;name=NVIDIA H200 141GB HBM3e / SXM5 \\xe2\\x84\\xa2 \\xe4\\xb8\\xad\\xe6\\x96\\x87 edition with a very long marketing name"
    CHECK --has "${p}/gpu.product=NVIDIA-H200-141GB-HBM3e-SXM5-edition-with-a-very-long-[0-9a-f]{8}")

  # --bench on simulated cuBLAS: the figures are the simulation's time
  # model (their syntax is checked, not their size); the fit is the
  # configured memory: (150754820096 B less the 500 MiB context) / 2 bytes.
  set(rates --has ${p}/gpu.fp32.tflops=${num} --has ${p}/gpu.tf32.tflops=${num}
    --has ${p}/gpu.fp16.tflops=${num} --has ${p}/gpu.bf16.tflops=${num})
  set(cpu_rates --has ${p}/cpu.fp32.gflops=${num} --has ${p}/cpu.fp64.gflops=${num})
  simcuda_nfd(bench_h200 "${SIMCUDA_ONE_H200}" ARGS --bench --size 128
    CHECK ${rates} ${cpu_rates} --has ${p}/gpu.fit.fp16.weights.billions=75
    --has ${p}/gpu.fit.fp16.inference.billions=62 --has ${p}/gpu.product=NVIDIA-H200 --count 24)
  # Compute capability 7.5: no bf16 (nor TF32) on a T4, which is no failure.
  simcuda_nfd(bench_t4 "[gpu];preset=T4" ARGS --bench-only --size 128
    CHECK --has ${p}/gpu.fp32.tflops=${num} --has ${p}/gpu.fp16.tflops=${num}
    --lacks ${p}/gpu.bf16.tflops --lacks ${p}/gpu.tf32.tflops ${cpu_rates}
    --has ${p}/gpu.fit.fp16.weights.billions=7 --count 6)
  # The negative control: a gemm that reads its operands row-major fails
  # verification in every precision; no rate is written, the rest is, and
  # the exit status is 1 (the JSON case, with its errors:
  # scenario.program.gpuprobe-nfd.bench_wrong_gemm.json).
  simcuda_nfd(bench_wrong_gemm "gemm_bug=rowmajor;${SIMCUDA_ONE_H200}" RC 1 ARGS --bench --size 64
    CHECK --lacks ${p}/gpu.fp32.tflops --lacks ${p}/gpu.tf32.tflops --lacks ${p}/gpu.fp16.tflops
    --lacks ${p}/gpu.bf16.tflops ${cpu_rates} --has ${p}/gpu.fit.fp16.weights.billions=75
    --has ${p}/gpu.product=NVIDIA-H200 --count 20)
  simcuda_program(bench_wrong_gemm.json "gemm_bug=drop_last_k;${SIMCUDA_ONE_H200}" gpuprobe-nfd --rc 1
    --json-eq errors.0.status=\"verify_failed\" --json-eq errors.1.status=\"verify_failed\"
    --json-eq errors.2.status=\"verify_failed\" --json-eq errors.3.status=\"verify_failed\"
    --json-has "errors.0.message=cuda:0: fp32 matmul: " --json-has "errors.3.message=cuda:0: bf16 matmul: "
    --no-out "tflops" --out "\"gpuprobe.io/cpu.fp32.gflops\": \"[0-9]+\""
    --err "^gpuprobe-nfd: cuda:0: fp32 matmul: result failed verification: "
    -- --bench --size 48 --output - --json)
  # The fit counts the CUDA context's cost off the total, whatever free
  # memory says: as measured through NVML (2 GiB here: (150754820096 B -
  # 2 GiB) / 2 bytes = 74.3e9 parameters), or 512 MiB where NVML cannot
  # measure it (a 16.1e9-byte board: 7.78e9, where nothing subtracted
  # would give 8.05e9).
  simcuda_nfd(fit_context_cost "context_bytes=2GiB;${SIMCUDA_ONE_H200};free=100GiB" ARGS --bench-only --size 32
    CHECK --has ${p}/gpu.fit.fp16.weights.billions=74 --has ${p}/gpu.fit.fp16.inference.billions=61)
  simcuda_nfd(fit_context_unmeasured
    "context_bytes=2GiB;fail=nvmlDeviceGetMemoryInfo_v2:1+;fail=nvmlDeviceGetMemoryInfo:1+;[gpu];preset=L4;total=16100000000"
    ARGS --bench-only --size 32
    CHECK --has ${p}/gpu.fit.fp16.weights.billions=7 --has ${p}/gpu.fit.fp16.inference.billions=6)

  # MIG: an H200 split in two instances. CUDA enumerates one instance per
  # process: the first, or the one CUDA_VISIBLE_DEVICES names; the labels
  # describe that instance (its name, memory, the parent's compute
  # capability). Naming the parent GPU leaves no device.
  set(mig "[gpu];preset=H200;uuid=GPU-5e1e0000-4200-4000-8000-00000000000b")
  set(mig1 "MIG-7a1b0000-0000-4000-8000-000000000001")
  set(mig2 "MIG-7a1b0000-0000-4000-8000-000000000002")
  set(mig "${mig};[mig];uuid=${mig1};name=NVIDIA H200 MIG 1g.18gb;total=16GiB")
  set(mig "${mig};[mig];uuid=${mig2};name=NVIDIA H200 MIG 3g.71gb;total=66GiB")
  simcuda_nfd(mig_first "${mig}" CHECK --has ${p}/cuda.usable=true --has ${p}/cuda.devices=1
    --has ${p}/gpu.product=NVIDIA-H200-MIG-1g.18gb --has ${p}/gpu.count=1 --has ${p}/gpu.memory=16384
    --has ${p}/gpu.compute.major=9 --has ${p}/gpu.mig.mode=enabled --count 16)
  simcuda_nfd(mig_named "${mig}" ENV CUDA_VISIBLE_DEVICES=${mig2},${mig1}
    CHECK --has ${p}/cuda.devices=1 --has ${p}/gpu.product=NVIDIA-H200-MIG-3g.71gb
    --has ${p}/gpu.count=1 --has ${p}/gpu.memory=67584 --has ${p}/gpu.mig.mode=enabled --count 16)
  simcuda_nfd(mig_parent_named "${mig}" ENV CUDA_VISIBLE_DEVICES=GPU-5e1e0000-4200-4000-8000-00000000000b
    CHECK ${unusable} --has ${p}/cuda.cause=no_device)
  # Beside a whole H200: two products, one GPU each; the tie goes to the
  # one CUDA numbers first, here the MIG instance.
  simcuda_nfd(mig_beside_gpu "${mig};${h200}"
    CHECK --has ${p}/cuda.devices=2 --has ${p}/gpu.product=NVIDIA-H200-MIG-1g.18gb
    --has ${p}/gpu.count=1 --has ${p}/gpu.models=2 --has ${p}/gpu.memory=16384)
endif()
