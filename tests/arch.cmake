# The architecture as docs/architecture.md states it, held against the
# objects the build made (tests/arch/layers.py): every file of lib/ on its
# floor, calls only to its own floor and below, no circle of calls, each
# header included only where its table says; and
# the floors of tools/common as docs/commands.md states them (arch.tools); and
# docs/testing.md's table of which tests test each source file of lib/ and
# tools/, held against the tree (tests/arch/testmap.py).
find_program(GPUPROBE_ARCH_PYTHON3 python3)
if(NOT GPUPROBE_ARCH_PYTHON3 OR NOT CMAKE_NM)
  message(STATUS "python3 or nm not found: the arch.* tests are skipped")
  return()
endif()
add_test(NAME arch.layers
  COMMAND ${GPUPROBE_ARCH_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/arch/layers.py ${CMAKE_NM}
    ${PROJECT_SOURCE_DIR}/docs/architecture.md "$<TARGET_OBJECTS:gpuprobe_obj>"
    ${PROJECT_SOURCE_DIR}/lib)
add_test(NAME arch.tools
  COMMAND ${GPUPROBE_ARCH_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/arch/layers.py ${CMAKE_NM}
    ${PROJECT_SOURCE_DIR}/docs/commands.md "$<TARGET_OBJECTS:gpuprobe_cli>")
add_test(NAME arch.testmap
  COMMAND ${GPUPROBE_ARCH_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/arch/testmap.py
    ${PROJECT_SOURCE_DIR}/docs/testing.md ${PROJECT_SOURCE_DIR})
