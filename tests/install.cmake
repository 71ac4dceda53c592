# Packaging tests (included by tests/CMakeLists.txt):
#
#  install.consume     install into a scratch prefix, then build and run
#                      programs against it through pkg-config and the CMake
#                      package, shared and static, C and C++ (install/run.sh)
#  install.header_*    the public header compiles alone, warning-free
#                      (-Wall -Wextra -Wpedantic -Werror) as C99, C11, C++11
#  install.deb         cpack -G DEB: the three packages, their dependencies
#                      and contents; unpacked into a scratch root, a consumer
#                      and the commands run from there (install/deb.sh)

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
    WITH_TOOLS=$<BOOL:${GPUPROBE_BUILD_TOOLS}>
    bash ${CMAKE_CURRENT_SOURCE_DIR}/install/run.sh)
# Installing writes the .pc files for the prefix into the build tree
# (pkgconfig-install/): one install at a time.
set_tests_properties(install.consume PROPERTIES TIMEOUT 300 RESOURCE_LOCK gpuprobe_install)

# Debian packages: needs dpkg-deb and dpkg-shlibdeps (Debian: dpkg-dev); not
# in sanitizer builds (their programs need the sanitizer runtime).
find_program(GPUPROBE_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(GPUPROBE_DPKG_DEB dpkg-deb)
if(GPUPROBE_SANITIZE)
  message(STATUS "install.deb: not in a sanitizer build")
elseif(NOT GPUPROBE_DPKG_SHLIBDEPS OR NOT GPUPROBE_DPKG_DEB)
  message(STATUS "dpkg-deb or dpkg-shlibdeps not found (Debian: dpkg-dev): install.deb is skipped")
else()
  if(GPUPROBE_BUILD_TOOLS)
    set(_gpuprobe_with_tools 1)
  else()
    set(_gpuprobe_with_tools 0)
  endif()
  get_filename_component(_gpuprobe_cmake_dir ${CMAKE_COMMAND} DIRECTORY)
  add_test(NAME install.deb
    COMMAND ${CMAKE_COMMAND} -E env
      BUILD_DIR=${PROJECT_BINARY_DIR}
      SOURCE_DIR=${PROJECT_SOURCE_DIR}
      WORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/deb-test
      CPACK=${_gpuprobe_cmake_dir}/cpack
      CC=${CMAKE_C_COMPILER}
      LIBDIR=${CMAKE_INSTALL_LIBDIR}
      VERSION=${PROJECT_VERSION}
      WITH_TOOLS=${_gpuprobe_with_tools}
      bash ${CMAKE_CURRENT_SOURCE_DIR}/install/deb.sh)
  set_tests_properties(install.deb PROPERTIES TIMEOUT 300 RESOURCE_LOCK gpuprobe_install)
endif()
