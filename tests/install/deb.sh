#!/usr/bin/env bash
# deb.sh - build the Debian packages of a build tree (cpack -G DEB), check
# their names, dependencies and contents, unpack them into a scratch root
# (dpkg -x: no root rights, nothing touches the system) and run a consumer
# and the commands from there, with nothing from the build tree.
#
# Environment (set by tests/install.cmake):
#   BUILD_DIR SOURCE_DIR WORK_DIR   as in run.sh
#   CPACK      cpack executable      CC  C compiler
#   VERSION    the project version   LIBDIR  CMAKE_INSTALL_LIBDIR
#   WITH_TOOLS 1 when the commands are built
set -euo pipefail

: "${BUILD_DIR:?}" "${SOURCE_DIR:?}" "${WORK_DIR:?}" "${VERSION:?}"
CPACK=${CPACK:-cpack}
CC=${CC:-cc}
LIBDIR=${LIBDIR:-lib}
WITH_TOOLS=${WITH_TOOLS:-1}
unset LD_LIBRARY_PATH GPUPROBE_DEVICE GPUPROBE_CUDA GPUPROBE_CUDA_LIBDIR PKG_CONFIG_PATH

step() { printf '\n== %s\n' "$*"; }
die() { echo "deb test: FAIL: $*" >&2; exit 1; }

rm -rf "$WORK_DIR"
mkdir -p "$WORK_DIR"
pkgs=$WORK_DIR/packages root=$WORK_DIR/root
major=${VERSION%%.*}
debver=$VERSION-1
arch=$(dpkg --print-architecture)

step "cpack -G DEB"
(cd "$BUILD_DIR" && "$CPACK" -G DEB -B "$pkgs") >"$WORK_DIR/cpack.log" 2>&1 \
    || { cat "$WORK_DIR/cpack.log"; die "cpack failed"; }
names=(libgpuprobe$major libgpuprobe-dev)
[ "$WITH_TOOLS" = 1 ] && names+=(gpuprobe-tools)
for n in "${names[@]}"; do
    f=$pkgs/${n}_${debver}_$arch.deb
    [ -f "$f" ] || die "$(basename "$f") was not made ($(ls "$pkgs"))"
    printf '%-40s %8d bytes, installed %5d KiB\n' "$(basename "$f")" "$(stat -c %s "$f")" \
        "$(dpkg-deb -f "$f" Installed-Size)"
done
lib=$pkgs/libgpuprobe${major}_${debver}_$arch.deb
dev=$pkgs/libgpuprobe-dev_${debver}_$arch.deb
tools=$pkgs/gpuprobe-tools_${debver}_$arch.deb

step "dependencies"
field() { dpkg-deb -f "$1" "$2"; }
for f in "$lib" "$dev" ${WITH_TOOLS:+"$tools"}; do
    [ -f "$f" ] || continue
    echo "$(field "$f" Package): Depends: $(field "$f" Depends); Recommends: $(field "$f" Recommends)"
done
case $(field "$lib" Depends) in *libc6*) ;; *) die "libgpuprobe$major does not depend on libc6" ;; esac
case $(field "$lib" Depends) in *openblas*|*cuda*|*json*) die "libgpuprobe$major depends on a run-time-loaded or tools-only library" ;; esac
[ "$(field "$lib" Recommends)" = libopenblas0 ] || die "libgpuprobe$major does not recommend libopenblas0"
[ "$(field "$dev" Depends)" = "libgpuprobe$major (= $debver)" ] || die "libgpuprobe-dev Depends: $(field "$dev" Depends)"
if [ "$WITH_TOOLS" = 1 ]; then
    d=$(field "$tools" Depends)
    case $d in "libgpuprobe$major (= $debver), "*libjson-c5*) ;; *) die "gpuprobe-tools Depends: $d" ;; esac
    [ "$(field "$tools" Recommends)" = libopenblas0 ] || die "gpuprobe-tools does not recommend libopenblas0"
fi

step "contents"
list() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's|^\./|/|'; }
list "$lib" | grep -qx "/usr/$LIBDIR/libgpuprobe.so.$major" || die "libgpuprobe$major lacks libgpuprobe.so.$major"
if list "$lib" | grep -E '/include/|\.a$|\.pc$|/bin/|libgpuprobe\.so$'; then die "libgpuprobe$major carries development files or commands"; fi
for f in /usr/include/gpuprobe.h "/usr/$LIBDIR/libgpuprobe.so" "/usr/$LIBDIR/pkgconfig/gpuprobe.pc" \
         "/usr/$LIBDIR/cmake/gpuprobe/gpuprobeConfig.cmake"; do
    list "$dev" | grep -qx "$f" || die "libgpuprobe-dev lacks $f"
done
if list "$dev" | grep -E "libgpuprobe\.so\.$major|/bin/"; then die "libgpuprobe-dev carries the runtime library or commands"; fi
if [ "$WITH_TOOLS" = 1 ]; then
    for t in smi info select bench fit nfd; do
        list "$tools" | grep -qx "/usr/bin/gpuprobe-$t" || die "gpuprobe-tools lacks gpuprobe-$t"
        list "$tools" | grep -qx "/usr/share/man/man1/gpuprobe-$t.1.gz" || die "gpuprobe-tools lacks gpuprobe-$t.1.gz"
    done
    if list "$tools" | grep -E '/include/|libgpuprobe'; then die "gpuprobe-tools carries library files"; fi
fi
echo "ok: each package holds its own files only"

step "descriptions, copyright, changelog"
summaries=()
for f in "$lib" "$dev" ${WITH_TOOLS:+"$tools"}; do
    [ -f "$f" ] || continue
    p=$(field "$f" Package)
    # sed reads to the end, where head would stop early and leave the
    # writer to SIGPIPE, which pipefail turns into a failure.
    s=$(dpkg-deb -f "$f" Description | sed -n 1p)
    echo "$p: $s"
    summaries+=("$s")
    # The long description: every line one space deep (Debian policy 5.6.13).
    if dpkg-deb -f "$f" Description | tail -n +2 | grep -v '^ [^ ]'; then
        die "$p: a line of the long description is not indented by one space"
    fi
    list "$f" | grep -qx "/usr/share/doc/$p/copyright" || die "$p lacks /usr/share/doc/$p/copyright"
    list "$f" | grep -qx "/usr/share/doc/$p/changelog.Debian.gz" || die "$p lacks its changelog.Debian.gz"
    dpkg-deb --fsys-tarfile "$f" | tar -xO "./usr/share/doc/$p/copyright" | sed -n 1p |
        grep -qx "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" ||
        die "$p: the copyright file is not machine-readable (DEP-5)"
done
[ "$(printf '%s\n' "${summaries[@]}" | sort -u | wc -l)" = "${#summaries[@]}" ] ||
    die "two packages share a short description"

# lintian, where installed (scripts/check installs it): no errors; its
# warnings are printed.
if command -v lintian >/dev/null; then
    step "lintian"
    lint=$(lintian --allow-root ${WITH_TOOLS:+"$tools"} "$lib" "$dev" 2>&1) || true
    printf '%s\n' "$lint"
    if printf '%s\n' "$lint" | grep -q '^E: '; then die "lintian reports errors"; fi
    echo "ok: lintian reports no error"
else
    echo "lintian not found (Debian: lintian): not run"
fi

step "dpkg -x into $root"
for f in "$lib" "$dev" ${WITH_TOOLS:+"$tools"}; do
    [ -f "$f" ] && dpkg -x "$f" "$root"
done
usrlib=$root/usr/$LIBDIR
# uses_unpacked PROGRAM: libgpuprobe.so.N resolves into the unpacked root.
uses_unpacked() {
    local got
    got=$(ldd "$1" | awk -v so="libgpuprobe.so.$major" '$1 == so { print $3 }')
    [ -n "$got" ] && [ "$(readlink -f "$got")" = "$(readlink -f "$usrlib/libgpuprobe.so.$major")" ] \
        || { ldd "$1"; return 1; }
}
grep -q "^prefix=/usr$" "$usrlib/pkgconfig/gpuprobe.pc" || die "gpuprobe.pc: $(grep ^prefix "$usrlib/pkgconfig/gpuprobe.pc")"

step "a consumer built against the unpacked libgpuprobe-dev (pkg-config, sysroot)"
# shellcheck disable=SC2046
"$CC" -std=c11 -Wall -Wextra -Werror "$SOURCE_DIR/tests/install/consumer.c" -o "$WORK_DIR/consumer" \
    $(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$usrlib/pkgconfig pkg-config --cflags --libs gpuprobe) \
    -Wl,-rpath,"$usrlib" || die "the consumer does not build"
uses_unpacked "$WORK_DIR/consumer" || die "the consumer does not use the unpacked library"
"$WORK_DIR/consumer" deb || die "the consumer failed"

if [ "$WITH_TOOLS" = 1 ]; then
    step "the unpacked commands"
    for t in smi info select bench fit nfd; do
        exe=$root/usr/bin/gpuprobe-$t
        uses_unpacked "$exe" || die "gpuprobe-$t does not find the unpacked library"
        [ "$("$exe" --version)" = "gpuprobe-$t (libgpuprobe) $VERSION" ] || die "gpuprobe-$t --version"
    done
    "$root/usr/bin/gpuprobe-info" || die "gpuprobe-info failed"
    "$root/usr/bin/gpuprobe-nfd" --output "$WORK_DIR/gpuprobe-labels" || die "gpuprobe-nfd failed"
    grep -q '^gpuprobe.io/cuda.usable=' "$WORK_DIR/gpuprobe-labels" || die "gpuprobe-nfd wrote no labels"
    "$root/usr/bin/gpuprobe-smi" --json | python3 "$SOURCE_DIR/tests/tools/jsondoc.py" "$root/usr/share/doc/gpuprobe/json.md" \
        || die "gpuprobe-smi --json does not match the installed json.md"
    if command -v man >/dev/null; then
        man -l "$root/usr/share/man/man1/gpuprobe-fit.1.gz" 2>&1 | grep -q "gpuprobe-fit - how large a model fits" \
            || die "the man page does not render"
    fi
fi
printf '\ndeb test: OK\n'
