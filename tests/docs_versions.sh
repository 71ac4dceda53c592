#!/bin/sh
# docs_versions.sh SOURCE_DIR VERSION: every version of libgpuprobe the
# documentation, the man pages and the Kubernetes manifests show (a package
# file name, `--version` output, an image tag) is the project's own, so
# that a release cannot leave a stale one behind. docs/ABI.md (which tells
# the versions' history), CHANGELOG.md and docs/benchmarks/ (raw output of
# past runs) are left out, and so is a message that names an older
# library as too old (docs/python.md shows what the package says then).
set -eu
src=$1 version=$2
cd "$src"
re='(libgpuprobe[0-9]*_|libgpuprobe-dev_|gpuprobe-tools_|\(libgpuprobe\) |libgpuprobe |gpuprobe-nfd[: ]|version )[0-9]+\.[0-9]+\.[0-9]+'
found=$(grep -rnE "$re" README.md docs/*.md docs/kubernetes tools/man 2>/dev/null |
    grep -v '^docs/ABI\.md:' | grep -v 'too old' | sed -E "s/^([^:]*:[0-9]+:).*($re).*/\1\2/" || true)
stale=$(printf '%s\n' "$found" | grep -vE "[ :_)]$version\$" | grep -v '^$' || true)
if [ -n "$stale" ]; then
    echo "versions other than $version (the project's, from CMakeLists.txt):"
    printf '%s\n' "$stale"
    exit 1
fi
echo "ok: $(printf '%s\n' "$found" | grep -c . ) version strings, all $version"
