# Debian packages: `cpack -G DEB` in a build tree makes one package per
# install component (see the install() rules):
#
#   libgpuprobe1     the shared library (libgpuprobe.so.1*)
#   libgpuprobe-dev  header, libgpuprobe.so link, static library, pkg-config
#                    and CMake files; depends on libgpuprobe1 of the same version
#   gpuprobe-tools   the gpuprobe-* commands, their man pages, docs/json.md
#                    and docs/kubernetes.md with its manifests, the shipped
#                    model configs (share/gpuprobe/models);
#                    depends on libgpuprobe1 of the same version and json-c
#
# Library dependencies (libc6, libjson-c5) come from dpkg-shlibdeps. OpenBLAS
# and CUDA are opened at run time, never linked: OpenBLAS is a Recommends
# (the CPU matmul and BLAS attributes need it), CUDA is the machine's.
set(CPACK_PACKAGE_NAME gpuprobe)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "libgpuprobe developers <gpuprobe@example.org>")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lib dev)
if(GPUPROBE_BUILD_TOOLS)
  list(APPEND CPACK_COMPONENTS_ALL tools)
endif()
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Installed programs and the shared library without debug information, as
# Debian ships them (the static library keeps its symbols).
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(_gpuprobe_deb_version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME libgpuprobe${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_LIB_PACKAGE_RECOMMENDS "libopenblas0")
set(CPACK_COMPONENT_LIB_DESCRIPTION
  "what compute is here, and what it can do (shared library)
 libgpuprobe answers the first questions of GPU computing from C and C++:
 which devices this machine has, whether CUDA is usable and why not, how
 much memory is free, which device to use, how fast a matrix multiplication
 really runs, how large a model fits. CUDA, cuBLAS, NVML and OpenBLAS are
 opened at run time, never linked.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libgpuprobe-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libgpuprobe${PROJECT_VERSION_MAJOR} (= ${_gpuprobe_deb_version})")
set(CPACK_COMPONENT_DEV_DESCRIPTION
  "what compute is here, and what it can do (development files)
 The header gpuprobe.h, the static library, and the pkg-config (gpuprobe,
 gpuprobe-static) and CMake (gpuprobe::gpuprobe) files to build programs
 with libgpuprobe.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME gpuprobe-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "libgpuprobe${PROJECT_VERSION_MAJOR} (= ${_gpuprobe_deb_version})")
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "libopenblas0")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
  "what compute is here, and what it can do (commands)
 gpuprobe-smi lists every device with its memory, gpuprobe-info says whether
 CUDA is usable and why not, gpuprobe-select chooses a device, gpuprobe-bench
 times a matrix multiplication on the CPU and the GPU, gpuprobe-fit says
 whether a model fits (from its config.json, offline; Llama, Mistral,
 Mixtral and Qwen configs included) and how large a model fits,
 gpuprobe-nfd writes node labels for Kubernetes Node
 Feature Discovery. Each prints text or JSON and has a man page.")
# dpkg-shlibdeps runs in each component's staging directory: the library's
# is beside it. (libgpuprobe1 is in Depends above, with its exact version.)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "../lib/usr/${CMAKE_INSTALL_LIBDIR}")

include(CPack)
