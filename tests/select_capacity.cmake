# select_capacity.cmake - ctest runs of the select_device and vram_capacity
# examples (their commands, gpuprobe-select and gpuprobe-fit, are tested in
# tools.cmake).
#
# This file has two roles:
#  - included by tests/CMakeLists.txt: it registers the tests below;
#  - run as `cmake -DGP_SELCAP_PROG=... -P select_capacity.cmake`: it runs
#    one example and checks its exit status, output and (optionally) that
#    its stdout is valid JSON (with `python3 -m json.tool` when present).
#
# Script-mode variables:
#   GP_SELCAP_PROG       program to run
#   GP_SELCAP_ARGS       its arguments, separated by "@@"
#   GP_SELCAP_RC         expected exit status
#   GP_SELCAP_FIRST      expected first line of stdout (exact), optional
#   GP_SELCAP_STDOUT     regexes stdout must match, separated by "@@"
#   GP_SELCAP_STDERR     regexes stderr must match, separated by "@@"
#   GP_SELCAP_JSON       1: stdout must be valid JSON
#   GP_SELCAP_PYTHON     python3, or empty
#
# SPDX-License-Identifier: BSD-2-Clause

if(CMAKE_SCRIPT_MODE_FILE)
  set(args "")
  if(NOT "${GP_SELCAP_ARGS}" STREQUAL "")
    string(REPLACE "@@" ";" args "${GP_SELCAP_ARGS}")
  endif()
  execute_process(COMMAND "${GP_SELCAP_PROG}" ${args}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "exit status: ${rc}\n--- stdout ---\n${out}--- stderr ---\n${err}--------------")
  if(NOT "${rc}" STREQUAL "${GP_SELCAP_RC}")
    message(FATAL_ERROR "exit status ${rc}, expected ${GP_SELCAP_RC}")
  endif()
  if(DEFINED GP_SELCAP_FIRST)
    string(FIND "${out}" "\n" nl)
    if(nl LESS 0)
      set(first "${out}")
    else()
      string(SUBSTRING "${out}" 0 ${nl} first)
    endif()
    if(NOT "${first}" STREQUAL "${GP_SELCAP_FIRST}")
      message(FATAL_ERROR "first line \"${first}\", expected \"${GP_SELCAP_FIRST}\"")
    endif()
  endif()
  foreach(stream STDOUT STDERR)
    if(stream STREQUAL "STDOUT")
      set(text "${out}")
    else()
      set(text "${err}")
    endif()
    if(NOT "${GP_SELCAP_${stream}}" STREQUAL "")
      string(REPLACE "@@" ";" res "${GP_SELCAP_${stream}}")
      foreach(re IN LISTS res)
        if(NOT text MATCHES "${re}")
          message(FATAL_ERROR "${stream} does not match \"${re}\"")
        endif()
      endforeach()
    endif()
  endforeach()
  if(GP_SELCAP_JSON)
    string(STRIP "${out}" stripped)
    if(NOT stripped MATCHES "^{.*}$")
      message(FATAL_ERROR "stdout is not a JSON object")
    endif()
    if(GP_SELCAP_PYTHON)
      string(RANDOM LENGTH 8 tag)
      set(tmp "${CMAKE_CURRENT_BINARY_DIR}/gp_selcap_${tag}.json")
      file(WRITE "${tmp}" "${out}")
      execute_process(COMMAND "${GP_SELCAP_PYTHON}" -m json.tool "${tmp}"
        RESULT_VARIABLE jrc OUTPUT_QUIET ERROR_VARIABLE jerr)
      file(REMOVE "${tmp}")
      if(NOT jrc EQUAL 0)
        message(FATAL_ERROR "python3 -m json.tool rejects stdout: ${jerr}")
      endif()
    endif()
  endif()
  return()
endif()

# ---- registration (included from tests/CMakeLists.txt) -----------------

if(NOT TARGET select_device OR NOT TARGET vram_capacity)
  return()
endif()

set(GP_SELCAP_SELF "${CMAKE_CURRENT_LIST_FILE}")
find_program(GP_SELCAP_PYTHON3 python3)
if(NOT GP_SELCAP_PYTHON3)
  set(GP_SELCAP_PYTHON3 "")
endif()

# gp_selcap_test(NAME <name> TARGET <tgt> [ARGS a...] [ENV K=V...] RC <n>
#                [FIRST <line>] [STDOUT re...] [STDERR re...] [JSON])
# Unless ENV names them, GPUPROBE_DEVICE, GPUPROBE_CUDA and
# GPUPROBE_CUDA_LIBDIR are cleared (empty values act as unset).
function(gp_selcap_test)
  cmake_parse_arguments(T "JSON" "NAME;TARGET;RC;FIRST" "ARGS;ENV;STDOUT;STDERR" ${ARGN})
  string(REPLACE ";" "@@" args "${T_ARGS}")
  string(REPLACE ";" "@@" sout "${T_STDOUT}")
  string(REPLACE ";" "@@" serr "${T_STDERR}")
  set(cmd ${CMAKE_COMMAND}
    "-DGP_SELCAP_PROG=$<TARGET_FILE:${T_TARGET}>"
    "-DGP_SELCAP_ARGS=${args}"
    "-DGP_SELCAP_RC=${T_RC}"
    "-DGP_SELCAP_STDOUT=${sout}"
    "-DGP_SELCAP_STDERR=${serr}"
    "-DGP_SELCAP_PYTHON=${GP_SELCAP_PYTHON3}")
  if(DEFINED T_FIRST)
    list(APPEND cmd "-DGP_SELCAP_FIRST=${T_FIRST}")
  endif()
  if(T_JSON)
    list(APPEND cmd "-DGP_SELCAP_JSON=1")
  endif()
  list(APPEND cmd -P "${GP_SELCAP_SELF}")
  add_test(NAME ${T_NAME} COMMAND ${cmd})
  set(env "")
  set(mods "")
  foreach(var GPUPROBE_DEVICE GPUPROBE_CUDA GPUPROBE_CUDA_LIBDIR)
    set(given 0)
    foreach(kv IN LISTS T_ENV)
      if(kv MATCHES "^${var}=")
        set(given 1)
      endif()
    endforeach()
    if(NOT given)
      list(APPEND env "${var}=")
      list(APPEND mods "${var}=unset:")
    endif()
  endforeach()
  list(APPEND env ${T_ENV})
  set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "${env}" TIMEOUT 120)
  if(mods AND NOT CMAKE_VERSION VERSION_LESS 3.22)
    set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT_MODIFICATION "${mods}")
  endif()
endfunction()

# -- select_device --------------------------------------------------------
# The lesson's line, whatever this machine has.
gp_selcap_test(NAME example.select_device TARGET select_device RC 0
  STDOUT "^Using: (cpu|cuda:[0-9]+)\n" "\nDevice: [^\n]+\n" "\nReason: [^\n]+")
# CUDA turned off: deterministic "Using: cpu" with the cause in the reason.
gp_selcap_test(NAME example.select_device.cuda_off TARGET select_device RC 0
  ENV GPUPROBE_CUDA=off FIRST "Using: cpu"
  STDOUT "\nReason: auto: CUDA not usable \\(")
gp_selcap_test(NAME example.select_device.cpu TARGET select_device RC 0
  ARGS --device cpu FIRST "Using: cpu")
# GPUPROBE_DEVICE overrides --device.
gp_selcap_test(NAME example.select_device.env_cpu TARGET select_device RC 0
  ARGS --device cuda:12345 ENV GPUPROBE_DEVICE=cpu FIRST "Using: cpu"
  STDOUT "GPUPROBE_DEVICE")
# Explicit CUDA that is not usable: exit 1, the cause named, no fallback.
gp_selcap_test(NAME example.select_device.env_cuda_unusable TARGET select_device RC 1
  ENV GPUPROBE_DEVICE=cuda GPUPROBE_CUDA=off
  STDERR "CUDA is not usable" "\\((disabled|not_built)\\)" "GPUPROBE_DEVICE")
# An ordinal no machine has: exit 1 here (CUDA unusable) and on a GPU
# machine (not found).
gp_selcap_test(NAME example.select_device.env_cuda_4096 TARGET select_device RC 1
  ENV GPUPROBE_DEVICE=cuda:4096 STDERR "cuda:4096")
# Malformed input: exit 2, quoted, never a crash.
gp_selcap_test(NAME example.select_device.env_bogus TARGET select_device RC 2
  ENV GPUPROBE_DEVICE=bogus STDERR "GPUPROBE_DEVICE" "\"bogus\"")
gp_selcap_test(NAME example.select_device.device_malformed TARGET select_device RC 2
  ARGS --device cuda:01 STDERR "\"cuda:01\"" "leading zero")
gp_selcap_test(NAME example.select_device.bad_min_free TARGET select_device RC 2
  ARGS --min-free lots STDERR "--min-free")
gp_selcap_test(NAME example.select_device.no_fit TARGET select_device RC 1
  ARGS --min-free 1e18 STDERR "no device meets the requirements" "cpu: ")

# -- vram_capacity --------------------------------------------------------
gp_selcap_test(NAME example.vram_capacity TARGET vram_capacity RC 0
  STDOUT "^cpu: [0-9.]+ [kMGTP]?B usable of [0-9.]+ [kMGTP]?B total \\(available RAM\\)\n"
  "\n  largest fp16 model: [0-9.]+ ?[KMBTQ]? parameters")
gp_selcap_test(NAME example.vram_capacity.params TARGET vram_capacity RC 0
  ARGS --params 7e9
  STDOUT "fp16 weights +needs +14.0 GB: (fits|does not fit)"
  "fp16 inference +needs +16.8 GB: " "fp16 training +needs +112.0 GB: ")
gp_selcap_test(NAME example.vram_capacity.bad_params TARGET vram_capacity RC 2
  ARGS --params seven STDERR "--params")
gp_selcap_test(NAME example.vram_capacity.too_many_params TARGET vram_capacity RC 2
  ARGS --params 2e15 STDERR "--params")
