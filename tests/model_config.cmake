# model_config.cmake - the commands' model layer (tools/common/model.h: the
# config.json reader with json-c, model resolution, the shipped configs) and
# the plan printer the GPU check uses.
#
#  unit.test_model_config   the shipped configs (examples/models/) against
#                           the published parameter counts; bad configs give
#                           one clear error and no model; torch_dtype and
#                           max_position_embeddings; the workload options;
#                           resolution in a fabricated hub cache and the
#                           shipped directories
#  example.plan_model       tests/bench/plan_model prints a plan as JSON
#
# SPDX-License-Identifier: BSD-2-Clause

if(NOT TARGET gpuprobe_cli)
  return()
endif()

add_executable(test_model_config ${CMAKE_CURRENT_SOURCE_DIR}/config/test_model_config.c)
target_link_libraries(test_model_config PRIVATE gpuprobe_cli PkgConfig::CMOCKA)
set_target_properties(test_model_config PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
add_test(NAME unit.test_model_config
  COMMAND test_model_config ${PROJECT_SOURCE_DIR}/examples/models)
set_tests_properties(unit.test_model_config PROPERTIES
  ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=stdout"
  ENVIRONMENT_MODIFICATION "GPUPROBE_MODELS_DIR=unset:;HF_HUB_CACHE=unset:;HF_HOME=unset:"
  TIMEOUT 120)

# plan_model: a config.json and workload options in, the pure plan as JSON
# out (scripts/gpu-check; the fit tests compare gpuprobe-fit with it).
add_executable(plan_model ${CMAKE_CURRENT_SOURCE_DIR}/bench/plan_model.c)
target_link_libraries(plan_model PRIVATE gpuprobe_cli m)
set_target_properties(plan_model PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
add_test(NAME example.plan_model
  COMMAND plan_model ${PROJECT_SOURCE_DIR}/examples/models/Llama-3.1-8B.json
    --kv-dtype fp16 --context 131072 --overhead 0 --margin 0)
set_tests_properties(example.plan_model PROPERTIES
  PASS_REGULAR_EXPRESSION "\"params\": 8030261248, .*\"kv_bytes_per_token\": 131072, .*\"kv_cache_bytes\": 17179869184, ")
# A file that is not JSON: exit 1, one line naming the file and the fault.
add_test(NAME example.plan_model.bad_config
  COMMAND sh -c "\"$0\" \"$1\" >/dev/null 2>&1 && exit 9; \"$0\" \"$1\" 2>&1; echo \"exit $?\""
    $<TARGET_FILE:plan_model> ${CMAKE_CURRENT_SOURCE_DIR}/model_config.cmake)
set_tests_properties(example.plan_model.bad_config PROPERTIES
  PASS_REGULAR_EXPRESSION "^plan_model: [^\n]*model_config.cmake: malformed JSON near byte 0[^\n]*\nexit 1\n$")
