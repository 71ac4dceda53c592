# Running a program as a test through tests/tools/run.py: exit status,
# output, clean bytes, JSON against docs/json.md. Included by
# tests/tools.cmake (the commands and examples on this machine) and
# tests/simcuda.cmake (the same programs against simulated GPU fleets).

include_guard(GLOBAL)

find_program(GPUPROBE_PYTHON3 python3)
if(NOT GPUPROBE_PYTHON3)
  message(STATUS "python3 not found: the program tests (tests/tools/run.py) are skipped")
endif()
set(GPUPROBE_RUN ${GPUPROBE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/run.py)
set(GPUPROBE_JSON_DOC ${PROJECT_SOURCE_DIR}/docs/json.md)

# gpuprobe_run_test(NAME <target> [run.py options] -- [args]): one case.
# Without python3 the case is registered and reports itself skipped.
function(gpuprobe_run_test name target)
  set(opts "")
  set(args "")
  set(after 0)
  foreach(a ${ARGN})
    if(after)
      list(APPEND args "${a}")
    elseif(a STREQUAL "--")
      set(after 1)
    else()
      list(APPEND opts "${a}")
    endif()
  endforeach()
  if(GPUPROBE_PYTHON3)
    add_test(NAME ${name} COMMAND ${GPUPROBE_RUN} ${opts} -- $<TARGET_FILE:${target}> ${args})
  else()
    add_test(NAME ${name} COMMAND sh -c "echo 'SKIP: python3 is needed to run this test'; exit 77")
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT 240 SKIP_RETURN_CODE 77)
endfunction()

# Bytes no output may carry raw: a quote, a backslash, ESC and a colour
# sequence, another control byte, a newline, and 0xff (invalid UTF-8).
# (Written with run.py's escapes, which the simulated stack's configuration
# also reads; "[" as \x5b: CMake lists treat brackets specially.)
set(GPUPROBE_HOSTILE "q\"\\x1b\\x5b31mRED\\x01\\nNL\\xff\\\\z")

# gpuprobe_hostile_output_tests(<label> ENV <K=V>... [PRELOAD <lib>]
#     [COMMANDS <tool>...] [TEXT_HAS <tool>:<re>...] [JSON_HAS <tool>:<path>=<text>...])
# For each command (default: all): the text output is valid UTF-8 without
# control bytes (and matches the command's TEXT_HAS regexes), the --json
# output is valid and documented and its string at each JSON_HAS path
# contains the hostile text, decoded. Values take run.py's escapes. The
# tests are tools.<tool>.hostile_<label> and tools.<tool>.hostile_<label>_json.
# Called with a loader directory and a device renamed by the fault shim
# (tests/tools.cmake) and with a simulated GPU's own name
# (tests/simcuda.cmake).
function(gpuprobe_hostile_output_tests label)
  cmake_parse_arguments(H "" "PRELOAD" "ENV;TEXT_HAS;JSON_HAS;COMMANDS" ${ARGN})
  set(common "")
  foreach(e ${H_ENV})
    list(APPEND common --env "${e}")
  endforeach()
  if(H_PRELOAD)
    list(APPEND common --preload "${H_PRELOAD}")
  endif()
  if(NOT H_COMMANDS)
    set(H_COMMANDS smi info select bench fit nfd)
  endif()
  foreach(t ${H_COMMANDS})
    set(extra "")
    if(t STREQUAL "bench")
      set(extra --size 32 --runs 1)
    elseif(t STREQUAL "nfd")
      set(extra --output -)
    endif()
    set(has "")
    foreach(r ${H_TEXT_HAS})
      if(r MATCHES "^${t}:(.*)$")
        list(APPEND has --out "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    gpuprobe_run_test(tools.${t}.hostile_${label} gpuprobe-${t} ${common} --clean ${has} -- ${extra})
    set(jhas "")
    foreach(j ${H_JSON_HAS})
      if(j MATCHES "^${t}:(.*)$")
        list(APPEND jhas --json-has "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    gpuprobe_run_test(tools.${t}.hostile_${label}_json gpuprobe-${t} ${common} --clean
      --json ${GPUPROBE_JSON_DOC} ${jhas} -- --json ${extra})
  endforeach()
endfunction()

# gpuprobe_fit_models_test(NAME CASE): tests/tools/fit_models.py CASE, the
# model questions of gpuprobe-fit and gpuprobe-select held against the
# library's plan (tests/bench/plan_model); no model directory, hub cache or
# device of the caller's.
function(gpuprobe_fit_models_test name case)
  if(NOT GPUPROBE_PYTHON3 OR NOT TARGET gpuprobe-fit OR NOT TARGET plan_model)
    add_test(NAME ${name} COMMAND sh -c "echo 'SKIP: python3, gpuprobe-fit and plan_model are needed'; exit 77")
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
    return()
  endif()
  add_test(NAME ${name} COMMAND ${GPUPROBE_PYTHON3} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/fit_models.py
    --fit $<TARGET_FILE:gpuprobe-fit> --select $<TARGET_FILE:gpuprobe-select>
    --plan $<TARGET_FILE:plan_model> --models ${PROJECT_SOURCE_DIR}/examples/models
    --docs ${GPUPROBE_JSON_DOC} ${case})
  set_tests_properties(${name} PROPERTIES TIMEOUT 240 SKIP_RETURN_CODE 77)
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT_MODIFICATION
    "GPUPROBE_MODELS_DIR=unset:" "HF_HUB_CACHE=unset:" "HF_HOME=unset:" "GPUPROBE_DEVICE=unset:")
endfunction()
