# scripts/lib/deps.sh - Debian package checks shared by scripts/demo and
# scripts/check. Source it; it defines functions and the package lists, and
# changes no shell options.
#
#   deps_ensure REQUIRED... [-- OPTIONAL...]
#
# Every package that is not installed (dpkg-query) is installed with
#   apt-get update && apt-get install -y --no-install-recommends PKG...
# when running as root. Otherwise the exact command is printed and, if a
# required package is missing, deps_ensure returns 1 (a missing optional
# package only gives a notice; deps_missing_optional lists them afterwards).
#
# GPUPROBE_NO_INSTALL=1 turns installation off even for root (the command is
# then only printed).

# What building and running the library, its commands, examples and unit
# tests needs: json-c for the commands' and examples' JSON output and the
# examples' reader of Hugging Face config.json files, scdoc for the man
# pages (the library itself needs neither).
# shellcheck disable=SC2034
GPUPROBE_DEPS_BUILD=(cmake make gcc pkg-config libopenblas-dev libcmocka-dev libjson-c-dev scdoc)
# What scripts/check needs beyond that: the C++ consumer and header tests
# (g++), nm/readelf (binutils), the command tests and helper scripts
# (python3), the check of the Kubernetes manifests (python3-yaml), the
# Debian package test (dpkg-dev: dpkg-shlibdeps; lintian: no errors in the
# packages), the commands' pictures (libcairo2-dev: --plot; the build
# stage requires it, the nocuda stage builds without it); optional:
# the ABI comparison (abigail-tools), the API reference (doxygen), the man
# page checks (mandoc, man-db), the Python package's tests (python3-pytest;
# its offline install test: python3-venv, python3-setuptools, python3-wheel).
# shellcheck disable=SC2034
GPUPROBE_DEPS_CHECK=(g++ binutils python3 python3-yaml dpkg-dev lintian libcairo2-dev)
# shellcheck disable=SC2034
GPUPROBE_DEPS_CHECK_OPTIONAL=(abigail-tools doxygen mandoc man-db
    python3-pytest python3-venv python3-setuptools python3-wheel)

deps_missing_optional=()

deps_log() { printf '%s\n' "$*" >&2; }

# deps_is_installed PKG: true when dpkg says "install ok installed".
deps_is_installed() {
    local status
    status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
    [ "$status" = "install ok installed" ]
}

# deps_missing PKG...: prints the packages that are not installed.
deps_missing() {
    local pkg
    for pkg in "$@"; do
        deps_is_installed "$pkg" || printf '%s\n' "$pkg"
    done
}

deps_ensure() {
    local required=() optional=() missing_req=() missing_opt=() pkg in_optional=0
    for pkg in "$@"; do
        if [ "$pkg" = "--" ]; then in_optional=1; continue; fi
        if [ "$in_optional" = 1 ]; then optional+=("$pkg"); else required+=("$pkg"); fi
    done

    if ! command -v dpkg-query >/dev/null 2>&1; then
        deps_log "deps: dpkg-query not found: this is not a Debian-like system."
        deps_log "deps: install by hand: ${required[*]} (optional: ${optional[*]})"
        # Go on: the build itself will say what is missing.
        return 0
    fi

    mapfile -t missing_req < <(deps_missing "${required[@]}")
    if [ "${#optional[@]}" -gt 0 ]; then
        mapfile -t missing_opt < <(deps_missing "${optional[@]}")
    fi
    deps_missing_optional=()
    local all=("${missing_req[@]}" "${missing_opt[@]}")
    if [ "${#all[@]}" -eq 0 ]; then
        deps_log "deps: all packages present: ${required[*]} ${optional[*]}"
        return 0
    fi

    local cmd="apt-get update && apt-get install -y --no-install-recommends ${all[*]}"
    if [ "$(id -u)" -eq 0 ] && [ "${GPUPROBE_NO_INSTALL:-0}" != 1 ]; then
        deps_log "deps: installing: ${all[*]}"
        deps_log "deps: + $cmd"
        export DEBIAN_FRONTEND=noninteractive
        if ! apt-get update -q; then
            deps_log "deps: apt-get update failed"
        fi
        # Required and optional packages apart: an optional package that
        # cannot be installed must not hold back the required ones.
        if [ "${#missing_req[@]}" -gt 0 ] \
            && ! apt-get install -y -q --no-install-recommends "${missing_req[@]}"; then
            deps_log "deps: could not install the required packages: ${missing_req[*]}"
            return 1
        fi
        if [ "${#missing_opt[@]}" -gt 0 ] \
            && ! apt-get install -y -q --no-install-recommends "${missing_opt[@]}"; then
            deps_log "deps: could not install the optional packages: ${missing_opt[*]}"
            mapfile -t deps_missing_optional < <(deps_missing "${optional[@]}")
        fi
        return 0
    fi

    deps_missing_optional=("${missing_opt[@]}")
    if [ "${#missing_req[@]}" -gt 0 ]; then
        deps_log "deps: missing Debian packages: ${missing_req[*]}"
        deps_log "deps: install them as root with:"
        deps_log ""
        deps_log "    sudo sh -c '$cmd'"
        deps_log ""
        return 1
    fi
    deps_log "deps: optional packages missing: ${missing_opt[*]} (the stages that need them are skipped)"
    deps_log "deps: install them as root with:"
    deps_log ""
    deps_log "    sudo sh -c '$cmd'"
    deps_log ""
    return 0
}

# deps_have_optional PKG: true unless PKG was reported missing by deps_ensure.
deps_have_optional() {
    local pkg
    for pkg in "${deps_missing_optional[@]}"; do
        [ "$pkg" = "$1" ] && return 1
    done
    return 0
}
