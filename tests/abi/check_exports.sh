#!/usr/bin/env bash
# check_exports.sh - the ABI promise of libgpuprobe, checked on the built
# shared library (see docs/ABI.md):
#
#  1. every function the public header declares (GPUPROBE_API ... name(...))
#     is named gpuprobe_*, every macro it defines is GPUPROBE_*, every enum
#     constant is GPUPROBE_* and every type name is gpuprobe_*;
#  2. the linker version script lists exactly the header's functions;
#  3. the dynamic symbol table exports exactly those functions (nothing
#     more, nothing less), each a function bound (as default) to the version
#     node that lists it in the version script (GPUPROBE_1.0, GPUPROBE_1.1,
#     ...), plus the version nodes themselves;
#  4. the SONAME is libgpuprobe.so.<major>;
#  5. no CUDA library is a link-time dependency (DT_NEEDED).
#
# Usage: check_exports.sh LIBRARY HEADER MAPFILE SONAME [CC]
# Exit status: 0 when everything holds, 1 otherwise (every violation is
# printed, not only the first).
set -euo pipefail

if [ $# -lt 4 ]; then
    echo "usage: $0 LIBRARY HEADER MAPFILE SONAME [CC]" >&2
    exit 2
fi
lib=$1 header=$2 map=$3 soname=$4 cc=${5:-cc}
NM=${NM:-nm}
READELF=${READELF:-readelf}

fail=0
problem() { echo "ABI: $*" >&2; fail=1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- 1. what the header declares ---------------------------------------
# Comments removed, preprocessor lines dropped, declarations split at ';'.
perl -0777 -ne '
    s{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g;
    s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{}mg;
    s{\s+}{ }g;
    for my $decl (split /;/) {
        $decl =~ /\bGPUPROBE_API\b(.*)$/ or next;
        $1 =~ /([A-Za-z_][A-Za-z0-9_]*)\s*\(/ or next;
        print "$1\n";
    }' "$header" | sort -u >"$tmp/header.txt"

if [ ! -s "$tmp/header.txt" ]; then
    problem "no GPUPROBE_API function found in $header"
fi
while read -r fn; do
    case $fn in gpuprobe_*) ;; *) problem "header function without the gpuprobe_ prefix: $fn" ;; esac
done <"$tmp/header.txt"

# Type names and enum constants.
perl -0777 -ne '
    s{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g;
    s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{}mg;
    while (/\b(struct|enum|union)\s+([A-Za-z_]\w*)/g) { print "type $2\n"; }
    while (/\btypedef\b[^;{]*(?:\{(?:[^{}]|\{[^{}]*\})*\})?\s*\**\s*\b([A-Za-z_]\w*)\s*;/g) { print "type $1\n"; }
    while (/\benum\b[^{;]*\{([^}]*)\}/g) {
        for my $item (split /,/, $1) {
            print "const $1\n" if $item =~ /^\s*([A-Za-z_]\w*)/;
        }
    }' "$header" | sort -u >"$tmp/names.txt"
while read -r kind name; do
    case $kind:$name in
        type:gpuprobe_*|const:GPUPROBE_*) ;;
        type:*) problem "type without the gpuprobe_ prefix: $name" ;;
        const:*) problem "enum constant without the GPUPROBE_ prefix: $name" ;;
    esac
done <"$tmp/names.txt"

# Macros: everything the header defines beyond what its own includes define.
hdir=$(dirname "$header")
printf '#include <stddef.h>\n#include <stdint.h>\n' >"$tmp/base.c"
printf '#include <stddef.h>\n#include <stdint.h>\n#include "%s"\n' "$(basename "$header")" >"$tmp/with.c"
for mode in "" "-DGPUPROBE_STATIC" "-DGPUPROBE_BUILDING"; do
    # shellcheck disable=SC2086
    "$cc" -dM -E $mode "$tmp/base.c" | sed 's/^#define \([A-Za-z0-9_]*\).*/\1/' | sort -u >"$tmp/m0"
    # shellcheck disable=SC2086
    "$cc" -dM -E $mode -I"$hdir" "$tmp/with.c" | sed 's/^#define \([A-Za-z0-9_]*\).*/\1/' | sort -u >"$tmp/m1"
    comm -13 "$tmp/m0" "$tmp/m1" | { grep -v '^GPUPROBE_' || true; } | while read -r m; do
        echo "ABI: macro without the GPUPROBE_ prefix: $m ${mode}" >&2
        echo x
    done >"$tmp/badmacros"
    [ ! -s "$tmp/badmacros" ] || fail=1
done

# ---- 2. the version script ----------------------------------------------
perl -0777 -ne '
    s{/\*.*?\*/}{ }gs; s{#[^\n]*}{}g;
    while (/global:\s*(.*?)(?:local:|\})/gs) {
        for my $s (split /;/, $1) { $s =~ s/\s+//g; print "$s\n" if length $s; }
    }' "$map" | sort -u >"$tmp/map.txt"
if ! diff -u --label header "$tmp/header.txt" --label "version script" "$tmp/map.txt" >"$tmp/d"; then
    problem "the version script and the header disagree (- only in the header, + only in $map):"
    sed 's/^/    /' "$tmp/d" >&2
fi
nodes=$({ grep -oE '^[[:space:]]*GPUPROBE_[0-9]+\.[0-9]+' "$map" || true; } | sed 's/^[[:space:]]*//' | sort -u | paste -sd' ' -)
# "symbol node" for every symbol the version script lists, by node.
perl -0777 -ne '
    s{/\*.*?\*/}{ }gs; s{#[^\n]*}{}g;
    while (/(GPUPROBE_[0-9]+\.[0-9]+)\s*\{\s*global:\s*(.*?)(?:local:|\})/gs) {
        my $node = $1;
        for my $s (split /;/, $2) { $s =~ s/\s+//g; print "$s $node\n" if length $s; }
    }' "$map" | sort -u >"$tmp/map_nodes.txt"

# ---- 3. the dynamic symbol table ----------------------------------------
"$NM" -D --defined-only "$lib" >"$tmp/nm.txt"
: >"$tmp/exported.txt"
while read -r addr type sym; do
    if [ -z "${sym:-}" ]; then       # absolute symbols print no address column
        sym=$type type=$addr
    fi
    name=${sym%%@*}
    version=${sym#"$name"}
    version=${version#@}
    version=${version#@}
    if [ "$type" = A ] && [ "$name" = "$version" -o -z "$version" ]; then
        case " $nodes " in
            *" $name "*) continue ;;   # a version node of ours
        esac
    fi
    echo "$name" >>"$tmp/exported.txt"
    case $sym in
        "$name@@GPUPROBE_"[0-9]*) ;;
        *) problem "exported symbol not bound (as default) to a GPUPROBE_ version node: $sym" ;;
    esac
    case " $nodes " in
        *" $version "*) ;;
        *) [ -z "$version" ] || problem "symbol $name has version $version, not a node of $map ($nodes)" ;;
    esac
    listed=$(sed -n "s/^$name \(.*\)$/\1/p" "$tmp/map_nodes.txt")
    if [ -n "$listed" ] && [ -n "$version" ] && [ "$listed" != "$version" ]; then
        problem "symbol $name is bound to $version, but $map lists it under $listed"
    fi
    case $type in
        T) ;;
        *) problem "exported symbol $name is of type '$type', not a function (T)" ;;
    esac
done <"$tmp/nm.txt"
sort -u -o "$tmp/exported.txt" "$tmp/exported.txt"
if ! diff -u --label header "$tmp/header.txt" --label "$(basename "$lib")" "$tmp/exported.txt" >"$tmp/d"; then
    problem "exported symbols differ from the header's functions (- declared but not exported, + exported but not declared):"
    sed 's/^/    /' "$tmp/d" >&2
fi

# ---- 4. SONAME, 5. no CUDA at link time ---------------------------------
"$READELF" -d "$lib" >"$tmp/dyn.txt"
got_soname=$(sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p' "$tmp/dyn.txt")
[ "$got_soname" = "$soname" ] || problem "SONAME is '$got_soname', expected '$soname'"
if grep -E '\(NEEDED\).*\[lib(cuda|cudart|cublas|cublasLt|nvidia-ml)[.]' "$tmp/dyn.txt" >"$tmp/cuda"; then
    problem "CUDA libraries are link-time dependencies (they must be opened with dlopen):"
    sed 's/^/    /' "$tmp/cuda" >&2
fi

n=$(wc -l <"$tmp/header.txt")
if [ "$fail" -eq 0 ]; then
    echo "ABI: OK: $n functions declared, exported and versioned ($nodes), SONAME $got_soname, no CUDA in DT_NEEDED"
fi
exit "$fail"
