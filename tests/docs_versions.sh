#!/bin/sh
# docs_versions.sh SOURCE_DIR VERSION: every version of libgpuprobe the
# documentation, the man pages and the Kubernetes manifests show (a package
# file name, `--version` output, an image tag) is the project's own, so
# that a release cannot leave a stale one behind. docs/ABI.md (which tells
# the versions' history), CHANGELOG.md and docs/benchmarks/ (raw output of
# past runs) are left out.
set -eu
src=$1 version=$2
cd "$src"
found=$(grep -rnoE '(libgpuprobe[0-9]*_|libgpuprobe-dev_|gpuprobe-tools_|\(libgpuprobe\) |libgpuprobe |gpuprobe-nfd[: ]|version )[0-9]+\.[0-9]+\.[0-9]+' \
    README.md docs/*.md docs/kubernetes tools/man 2>/dev/null | grep -v '^docs/ABI\.md:' || true)
stale=$(printf '%s\n' "$found" | grep -vE "[ :_)]$version\$" | grep -v '^$' || true)
if [ -n "$stale" ]; then
    echo "versions other than $version (the project's, from CMakeLists.txt):"
    printf '%s\n' "$stale"
    exit 1
fi
echo "ok: $(printf '%s\n' "$found" | grep -c . ) version strings, all $version"
