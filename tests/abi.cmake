# ABI tests (included by tests/CMakeLists.txt; see docs/ABI.md):
#
#  abi.exports   the shared library exports exactly the functions the
#                header declares, all gpuprobe_* and versioned GPUPROBE_1.x,
#                every public name is prefixed, SONAME libgpuprobe.so.1, no
#                CUDA library in DT_NEEDED (abi/check_exports.sh)
#
# The abidiff comparison against abi/libgpuprobe-1.0.xml needs abigail-tools
# and a build with debug information; scripts/check runs it.

add_test(NAME abi.exports
  COMMAND ${CMAKE_COMMAND} -E env NM=${CMAKE_NM} READELF=${CMAKE_READELF}
    bash ${CMAKE_CURRENT_SOURCE_DIR}/abi/check_exports.sh
    $<TARGET_FILE:gpuprobe>
    ${PROJECT_SOURCE_DIR}/include/gpuprobe.h
    ${PROJECT_SOURCE_DIR}/lib/gpuprobe.map
    libgpuprobe.so.${PROJECT_VERSION_MAJOR}
    ${CMAKE_C_COMPILER})
