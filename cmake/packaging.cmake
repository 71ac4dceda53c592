# Debian packages: `cpack -G DEB` in a build tree makes one package per
# install component (see the install() rules):
#
#   libgpuprobe1     the shared library (libgpuprobe.so.1*)
#   libgpuprobe-dev  header, libgpuprobe.so link, static library, pkg-config
#                    and CMake files; depends on libgpuprobe1 of the same version
#   gpuprobe-tools   the gpuprobe-* commands, their man pages, docs/json.md
#                    and docs/kubernetes.md with its manifests;
#                    depends on libgpuprobe1 of the same version and json-c
#
# Library dependencies (libc6, libjson-c5) come from dpkg-shlibdeps. OpenBLAS
# and CUDA are opened at run time, never linked: OpenBLAS is a Recommends
# (the CPU matmul and BLAS attributes need it), CUDA is the machine's.
set(CPACK_PACKAGE_NAME gpuprobe)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Each component's description below starts with its own short
# description. CPack puts CPACK_PACKAGE_DESCRIPTION_SUMMARY before every one
# of them, unless it is CPack's default text, which it then leaves out: it
# is set to that default here (it would otherwise be the project's
# description, and the three packages would share one short description).
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
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
  "library to find compute devices and measure what they can do
libgpuprobe answers the first questions of GPU computing from C and C++:
which devices this machine has, whether CUDA is usable and why not, how
much memory is free, which device to use, how fast a matrix multiplication
really runs, how large a model fits. CUDA, cuBLAS, NVML and OpenBLAS are
opened at run time, never linked.
.
This package contains the shared library.")
# A shlibs file for packages built against it, and the ldconfig trigger
# (instead of ldconfig in postinst and postrm).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # only libgpuprobe1 has a shared library
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
file(WRITE ${PROJECT_BINARY_DIR}/debian/lib/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian/lib/triggers)
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libgpuprobe-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libgpuprobe${PROJECT_VERSION_MAJOR} (= ${_gpuprobe_deb_version})")
set(CPACK_COMPONENT_DEV_DESCRIPTION
  "development files for libgpuprobe
libgpuprobe finds the compute devices of a machine (the CPU and CUDA GPUs),
says why CUDA is not usable when it is not, and measures what each device
can do.
.
This package contains the header gpuprobe.h, the static library, and the
pkg-config (gpuprobe, gpuprobe-static) and CMake (gpuprobe::gpuprobe) files
to build programs with libgpuprobe.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME gpuprobe-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "libgpuprobe${PROJECT_VERSION_MAJOR} (= ${_gpuprobe_deb_version})")
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "libopenblas0")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
  "commands to list GPUs, explain CUDA failures and time matmuls
gpuprobe-smi lists every device with its memory, processes and MIG layout,
gpuprobe-info says whether CUDA is usable and why not, gpuprobe-select
chooses a device, gpuprobe-bench times a matrix multiplication on the CPU
and the GPU, gpuprobe-fit says whether a model fits and how large one fits,
gpuprobe-nfd writes node labels for Kubernetes Node Feature Discovery.
Each prints text or JSON and has a man page.")
# dpkg-shlibdeps runs in each component's staging directory: the library's
# is beside it. (libgpuprobe1 is in Depends above, with its exact version.)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "../lib/usr/${CMAKE_INSTALL_LIBDIR}")

# What Debian wants in /usr/share/doc/<package> of every package: the
# license as a machine-readable copyright file (DEP-5), made from LICENSE,
# and a changelog.Debian.gz (the release's entry; gzip -n: reproducible).
file(READ ${PROJECT_SOURCE_DIR}/LICENSE _gpuprobe_license)
string(REGEX REPLACE "\n\n" "\n.\n" _gpuprobe_license "${_gpuprobe_license}")
string(REGEX REPLACE "\n([^\n])" "\n \\1" _gpuprobe_license "${_gpuprobe_license}")
string(STRIP "${_gpuprobe_license}" _gpuprobe_license)
string(TIMESTAMP _gpuprobe_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
find_program(GPUPROBE_GZIP gzip)
foreach(comp LIB DEV TOOLS)
  string(TOLOWER ${comp} _c)
  set(_pkg ${CPACK_DEBIAN_${comp}_PACKAGE_NAME})
  set(_dir ${PROJECT_BINARY_DIR}/debian/${_c})
  file(WRITE ${_dir}/copyright
"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: libgpuprobe
Upstream-Contact: ${CPACK_PACKAGE_CONTACT}

Files: *
Copyright: 2026 The libgpuprobe authors
License: BSD-2-Clause
 ${_gpuprobe_license}
")
  file(WRITE ${_dir}/changelog.Debian
"${_pkg} (${_gpuprobe_deb_version}) unstable; urgency=medium

  * Release ${PROJECT_VERSION}; the changes are in the project's CHANGELOG.md.

 -- ${CPACK_PACKAGE_CONTACT}  ${_gpuprobe_date}
")
  if(NOT GPUPROBE_GZIP OR (comp STREQUAL "TOOLS" AND NOT GPUPROBE_BUILD_TOOLS))
    continue()
  endif()
  add_custom_command(OUTPUT ${_dir}/changelog.Debian.gz
    COMMAND ${GPUPROBE_GZIP} -9nc ${_dir}/changelog.Debian > ${_dir}/changelog.Debian.gz
    DEPENDS ${_dir}/changelog.Debian VERBATIM)
  add_custom_target(gpuprobe-debian-${_c} ALL DEPENDS ${_dir}/changelog.Debian.gz)
  install(FILES ${_dir}/copyright ${_dir}/changelog.Debian.gz
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_pkg} COMPONENT ${_c})
endforeach()

include(CPack)
