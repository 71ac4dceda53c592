#!/usr/bin/env bash
# run.sh - install libgpuprobe from a build tree into a scratch prefix and
# build and run programs against the installed files only, the three ways a
# user would: pkg-config (gpuprobe.pc, gpuprobe-static.pc) and the CMake
# package (gpuprobe::gpuprobe, gpuprobe::gpuprobe_static; C and C++).
#
# Run-time library lookup: every consumer runs with LD_LIBRARY_PATH unset.
# The CMake consumers find libgpuprobe.so.1 through the RUNPATH CMake gives
# them for an imported library outside the system directories; the
# pkg-config consumer gets -Wl,-rpath,<libdir>, as any program linking a
# library from a non-system prefix must (pkg-config does not add one). Each
# run also checks with ldd that the library came from the scratch prefix,
# not from the build tree.
#
# Environment (set by tests/install.cmake):
#   BUILD_DIR    the build tree to install           (required)
#   SOURCE_DIR   the source tree                     (required)
#   WORK_DIR     scratch directory, emptied first    (required)
#   LIBDIR       CMAKE_INSTALL_LIBDIR of the build   (default: lib)
#   CMAKE        cmake executable                    (default: cmake)
#   CC, CXX      compilers; CXX empty: no C++ consumer
#   WITH_STATIC  1 when the build installs libgpuprobe.a (default: 1)
#   SANITIZE     the build's GPUPROBE_SANITIZE value; consumers get the same
#                -fsanitize flags (an instrumented library needs them)
#   VERSION      the project version, e.g. 1.0.0
#   WITH_TOOLS   1 when the build installs the gpuprobe-* commands
set -euo pipefail

: "${BUILD_DIR:?}" "${SOURCE_DIR:?}" "${WORK_DIR:?}"
LIBDIR=${LIBDIR:-lib}
CMAKE=${CMAKE:-cmake}
CC=${CC:-cc}
CXX=${CXX:-}
WITH_STATIC=${WITH_STATIC:-1}
SANITIZE=${SANITIZE:-}
VERSION=${VERSION:-}
WITH_TOOLS=${WITH_TOOLS:-0}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
here=$SOURCE_DIR/tests/install

unset LD_LIBRARY_PATH GPUPROBE_DEVICE GPUPROBE_CUDA GPUPROBE_CUDA_LIBDIR
export PKG_CONFIG_PATH=

step() { printf '\n== %s\n' "$*"; }
die() { echo "install test: FAIL: $*" >&2; exit 1; }

warn=(-Wall -Wextra -Wpedantic -Werror)
san=()
if [ -n "$SANITIZE" ]; then
    san=(-fsanitize="$SANITIZE" -fno-omit-frame-pointer)
fi

rm -rf "$WORK_DIR"
mkdir -p "$WORK_DIR"
prefix=$WORK_DIR/prefix
libdir=$prefix/$LIBDIR

step "cmake --install into $prefix"
"$CMAKE" --install "$BUILD_DIR" --prefix "$prefix" >"$WORK_DIR/install.log" \
    || { cat "$WORK_DIR/install.log"; die "cmake --install failed"; }

step "installed layout"
[ -f "$prefix/include/gpuprobe.h" ] || die "include/gpuprobe.h not installed"
cmp -s "$prefix/include/gpuprobe.h" "$SOURCE_DIR/include/gpuprobe.h" || die "installed header differs from include/gpuprobe.h"
[ -L "$libdir/libgpuprobe.so" ] || die "$LIBDIR/libgpuprobe.so is not a symbolic link"
[ "$(readlink "$libdir/libgpuprobe.so")" = libgpuprobe.so.1 ] || die "libgpuprobe.so does not point to libgpuprobe.so.1"
[ -L "$libdir/libgpuprobe.so.1" ] || die "$LIBDIR/libgpuprobe.so.1 is not a symbolic link"
real=$(readlink "$libdir/libgpuprobe.so.1")
[ "$real" = "libgpuprobe.so.$VERSION" ] || die "libgpuprobe.so.1 points to $real, expected libgpuprobe.so.$VERSION"
[ -f "$libdir/$real" ] && [ ! -L "$libdir/$real" ] || die "$real is not a regular file"
soname=$(readelf -d "$libdir/$real" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
[ "$soname" = libgpuprobe.so.1 ] || die "SONAME is '$soname'"
if readelf -d "$libdir/$real" | grep -E '\((RPATH|RUNPATH)\)' | grep -F "$BUILD_DIR"; then
    die "the installed library keeps an RPATH into the build tree"
fi
cmakedir=$libdir/cmake/gpuprobe
for f in "$libdir/pkgconfig/gpuprobe.pc" "$cmakedir/gpuprobeConfig.cmake" \
         "$cmakedir/gpuprobeConfigVersion.cmake" "$cmakedir/gpuprobeTargets.cmake"; do
    [ -f "$f" ] || die "${f#"$prefix"/} not installed"
done
if [ "$WITH_STATIC" = 1 ]; then
    for f in "$libdir/libgpuprobe.a" "$libdir/pkgconfig/gpuprobe-static.pc" \
             "$cmakedir/gpuprobeStaticTargets.cmake"; do
        [ -f "$f" ] || die "${f#"$prefix"/} not installed"
    done
fi
# (The scratch prefix lies inside the build tree: its own path is allowed.)
for f in "$libdir"/pkgconfig/*.pc "$cmakedir"/*.cmake; do
    if sed "s|$prefix||g" "$f" | grep -qF "$BUILD_DIR"; then
        die "${f#"$prefix"/} mentions the build tree"
    fi
done
echo "ok: header, libgpuprobe.so -> .so.1 -> .so.$VERSION (SONAME $soname), pkg-config and CMake files"

step "CMake package version: SameMajorVersion"
for req in 1 1.0 "$VERSION"; do
    got=$("$CMAKE" -DVERSION_FILE="$cmakedir/gpuprobeConfigVersion.cmake" -DREQUEST="$req" -P "$here/version_check.cmake" 2>&1)
    [ "$got" = compatible ] || die "find_package(gpuprobe $req) would be refused ($got)"
done
for req in 0.9 2 2.0; do
    got=$("$CMAKE" -DVERSION_FILE="$cmakedir/gpuprobeConfigVersion.cmake" -DREQUEST="$req" -P "$here/version_check.cmake" 2>&1)
    [ "$got" = incompatible ] || die "find_package(gpuprobe $req) would be accepted ($got)"
done
echo "ok: 1, 1.0, $VERSION accepted; 0.9, 2, 2.0 refused"

run_consumer() { # name program args...
    local name=$1 prog=$2
    shift 2
    local lddout
    lddout=$(ldd "$prog" 2>&1 || true)
    if echo "$lddout" | grep -q 'libgpuprobe\.so'; then
        echo "$lddout" | grep -q "libgpuprobe\.so\.1 => $libdir/libgpuprobe\.so\.1 " \
            || { echo "$lddout"; die "$name: libgpuprobe.so.1 does not resolve into $libdir"; }
    fi
    env -u LD_LIBRARY_PATH "$prog" "$@" || die "$name exited with $?"
}

if [ "$WITH_TOOLS" = 1 ]; then
    step "commands and man pages"
    for t in smi info select bench fit nfd; do
        exe=$prefix/bin/gpuprobe-$t
        [ -x "$exe" ] || die "bin/gpuprobe-$t not installed"
        [ -f "$prefix/share/man/man1/gpuprobe-$t.1.gz" ] || die "share/man/man1/gpuprobe-$t.1.gz not installed"
        # Found through the command's relative RUNPATH ($ORIGIN/../lib),
        # whatever the prefix.
        got=$(ldd "$exe" | awk '$1 == "libgpuprobe.so.1" { print $3 }')
        [ "$(readlink -f "$got")" = "$(readlink -f "$libdir/libgpuprobe.so.1")" ] \
            || { ldd "$exe"; die "gpuprobe-$t does not find the installed library"; }
        [ "$(env -u LD_LIBRARY_PATH "$exe" --version)" = "gpuprobe-$t (libgpuprobe) $VERSION" ] \
            || die "gpuprobe-$t --version"
    done
    for f in json.md kubernetes.md kubernetes/gpuprobe-nfd.yaml kubernetes/pod-example.yaml \
             kubernetes/Dockerfile; do
        [ -f "$prefix/share/doc/gpuprobe/$f" ] || die "share/doc/gpuprobe/$f not installed"
    done
    env -u LD_LIBRARY_PATH "$prefix/bin/gpuprobe-info" || die "the installed gpuprobe-info failed"
    echo "ok: bin/gpuprobe-{smi,info,select,bench,fit,nfd}, their man pages, json.md, kubernetes.md"
fi

step "pkg-config"
export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$($PKG_CONFIG --modversion gpuprobe)" = "$VERSION" ] || die "pkg-config --modversion gpuprobe is not $VERSION"
[ "$($PKG_CONFIG --variable=prefix gpuprobe)" = "$prefix" ] || die "gpuprobe.pc has prefix $($PKG_CONFIG --variable=prefix gpuprobe)"
libs=$($PKG_CONFIG --libs gpuprobe)
echo "pkg-config --cflags --libs gpuprobe: $($PKG_CONFIG --cflags gpuprobe) $libs"
case " $libs " in *" -lgpuprobe "*) ;; *) die "Libs lack -lgpuprobe" ;; esac
case " $libs " in *" -lopenblas"*|*" -lcuda"*|*" -lcublas"*) die "Libs expose a run-time-loaded library: $libs" ;; esac
slibs=$($PKG_CONFIG --static --libs gpuprobe)
case " $slibs " in *" -ldl "*) ;; *) die "--static --libs lacks -ldl: $slibs" ;; esac
for std in c99 c11; do
    # shellcheck disable=SC2046
    "$CC" -std=$std "${warn[@]}" "${san[@]}" "$here/consumer.c" -o "$WORK_DIR/pc_$std" \
        $($PKG_CONFIG --cflags --libs gpuprobe) -Wl,-rpath,"$libdir" \
        || die "pkg-config consumer does not build as $std"
    run_consumer "pkg-config consumer ($std)" "$WORK_DIR/pc_$std" "pkg-config/$std"
done

if [ "$WITH_STATIC" = 1 ]; then
    step "pkg-config, static: gpuprobe-static"
    echo "pkg-config --cflags --libs gpuprobe-static: $($PKG_CONFIG --cflags --libs gpuprobe-static)"
    # shellcheck disable=SC2046
    "$CC" -std=c11 "${warn[@]}" "${san[@]}" "$here/consumer.c" -o "$WORK_DIR/pc_static" \
        $($PKG_CONFIG --cflags --libs gpuprobe-static) \
        || die "static pkg-config consumer does not build"
    if readelf -d "$WORK_DIR/pc_static" | grep -q 'NEEDED.*libgpuprobe'; then
        die "static consumer needs libgpuprobe.so"
    fi
    run_consumer "static pkg-config consumer" "$WORK_DIR/pc_static" "pkg-config/static"
fi

step "CMake: find_package(gpuprobe 1 CONFIG REQUIRED)"
unset PKG_CONFIG_PATH
cxx_args=(-DWITH_CXX=OFF)
if [ -n "$CXX" ]; then
    cxx_args=(-DWITH_CXX=ON -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CXX_FLAGS="${san[*]}")
else
    echo "notice: no C++ compiler (Debian: g++): the C++ consumer is not built"
fi
"$CMAKE" -S "$here/cmake" -B "$WORK_DIR/cmake-build" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="${san[*]}" \
    -DCMAKE_EXE_LINKER_FLAGS="${san[*]}" \
    -DWITH_STATIC="$([ "$WITH_STATIC" = 1 ] && echo ON || echo OFF)" "${cxx_args[@]}" \
    >"$WORK_DIR/cmake-configure.log" 2>&1 \
    || { cat "$WORK_DIR/cmake-configure.log"; die "the CMake consumer project does not configure"; }
grep 'gpuprobe .* from' "$WORK_DIR/cmake-configure.log" || true
"$CMAKE" --build "$WORK_DIR/cmake-build" >"$WORK_DIR/cmake-build.log" 2>&1 \
    || { cat "$WORK_DIR/cmake-build.log"; die "the CMake consumer project does not build"; }
run_consumer "CMake C11 consumer" "$WORK_DIR/cmake-build/consumer_c" "cmake/c11"
run_consumer "CMake C99 consumer" "$WORK_DIR/cmake-build/consumer_c99" "cmake/c99"
if [ -n "$CXX" ]; then
    run_consumer "CMake C++11 consumer" "$WORK_DIR/cmake-build/consumer_cxx"
fi
if [ "$WITH_STATIC" = 1 ]; then
    if readelf -d "$WORK_DIR/cmake-build/consumer_static" | grep -q 'NEEDED.*libgpuprobe'; then
        die "gpuprobe::gpuprobe_static consumer needs libgpuprobe.so"
    fi
    run_consumer "CMake static consumer" "$WORK_DIR/cmake-build/consumer_static" "cmake/static"
fi

printf '\ninstall test: OK\n'
