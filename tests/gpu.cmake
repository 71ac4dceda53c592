# GPU-only checks. capacity_probe needs a usable NVIDIA GPU; elsewhere it
# exits 77, which ctest reports as skipped.
add_executable(capacity_probe ${CMAKE_CURRENT_SOURCE_DIR}/gpu/capacity_probe.c)
target_link_libraries(capacity_probe PRIVATE gpuprobe ${CMAKE_DL_LIBS})
add_test(NAME gpu.capacity_probe COMMAND capacity_probe)
set_tests_properties(gpu.capacity_probe PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
