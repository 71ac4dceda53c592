# Packaging tests (included by tests/CMakeLists.txt):
#
#  install.consume     install into a scratch prefix, then build and run
#                      programs against it through pkg-config and the CMake
#                      package, shared and static, C and C++ (install/run.sh)
#  install.header_*    the public header compiles alone, warning-free
#                      (-Wall -Wextra -Wpedantic -Werror) as C99, C11, C++11

include(CheckLanguage)
check_language(CXX)

set(_gpuprobe_header_flags -Wall -Wextra -Wpedantic -Werror -fsyntax-only
  -I${PROJECT_SOURCE_DIR}/include)
foreach(std c99 c11)
  add_test(NAME install.header_${std}
    COMMAND ${CMAKE_C_COMPILER} -std=${std} ${_gpuprobe_header_flags}
            ${CMAKE_CURRENT_SOURCE_DIR}/install/header_c.c)
  add_test(NAME install.header_${std}_static
    COMMAND ${CMAKE_C_COMPILER} -std=${std} -DGPUPROBE_STATIC ${_gpuprobe_header_flags}
            ${CMAKE_CURRENT_SOURCE_DIR}/install/header_c.c)
endforeach()
if(CMAKE_CXX_COMPILER)
  add_test(NAME install.header_cxx11
    COMMAND ${CMAKE_CXX_COMPILER} -std=c++11 ${_gpuprobe_header_flags}
            ${CMAKE_CURRENT_SOURCE_DIR}/install/header_cxx.cpp)
else()
  message(STATUS "No C++ compiler (Debian: g++): the C++ header and consumer tests are skipped")
endif()

if(GPUPROBE_BUILD_STATIC)
  set(_gpuprobe_with_static 1)
else()
  set(_gpuprobe_with_static 0)
endif()
add_test(NAME install.consume
  COMMAND ${CMAKE_COMMAND} -E env
    BUILD_DIR=${PROJECT_BINARY_DIR}
    SOURCE_DIR=${PROJECT_SOURCE_DIR}
    WORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install-test
    LIBDIR=${CMAKE_INSTALL_LIBDIR}
    CMAKE=${CMAKE_COMMAND}
    CC=${CMAKE_C_COMPILER}
    CXX=${CMAKE_CXX_COMPILER}
    WITH_STATIC=${_gpuprobe_with_static}
    SANITIZE=${GPUPROBE_SANITIZE}
    VERSION=${PROJECT_VERSION}
    bash ${CMAKE_CURRENT_SOURCE_DIR}/install/run.sh)
set_tests_properties(install.consume PROPERTIES TIMEOUT 300)
