# cmake -DVERSION_FILE=<gpuprobeConfigVersion.cmake> -DREQUEST=<x.y> -P version_check.cmake
# Prints "compatible" or "incompatible" for a find_package(gpuprobe <x.y>).
set(PACKAGE_FIND_VERSION ${REQUEST})
string(REPLACE "." ";" _parts "${REQUEST}.0.0")
list(GET _parts 0 PACKAGE_FIND_VERSION_MAJOR)
list(GET _parts 1 PACKAGE_FIND_VERSION_MINOR)
list(GET _parts 2 PACKAGE_FIND_VERSION_PATCH)
set(PACKAGE_FIND_VERSION_COUNT 2)
include(${VERSION_FILE})
if(PACKAGE_VERSION_COMPATIBLE AND NOT PACKAGE_VERSION_UNSUITABLE)
  message("compatible")
else()
  message("incompatible")
endif()
