# scripts/check.d/python.sh - the stage of the Python package (python/),
# sourced by scripts/check.
#
# pytest runs python/tests against build/: the package on the CPU (CUDA
# off), against the simulated NVIDIA stack (build/simcuda), the version
# check with the fake libraries of tests/fakelib.cmake, the library
# missing, and an offline `pip install` and `pip wheel` in a scratch
# virtual environment. Where no python3 with pytest is found the stage is
# skipped with a notice, not failed (Debian: python3-pytest; the install
# test also needs python3-venv, python3-setuptools and python3-wheel and
# says so when it skips).

# The first of $GPUPROBE_PYTHON, python3 and /usr/bin/python3 that has
# pytest (a python3 first on PATH, e.g. pyenv's, may lack Debian's modules).
python_with_pytest() {
    local py
    for py in ${GPUPROBE_PYTHON:-} python3 /usr/bin/python3; do
        if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import pytest' >/dev/null 2>&1; then
            command -v "$py"
            return 0
        fi
    done
    return 1
}

stage_python() {
    local py
    [ -f build/libgpuprobe.so.1 ] || { echo "build/libgpuprobe.so.1 is missing (the build stage failed?)"; return 1; }
    py=$(python_with_pytest) || skip_stage "no python3 with pytest found (Debian: python3-pytest): the Python package is not tested"
    echo "+ $py -m pytest python/tests (against build/)"
    PYTHONDONTWRITEBYTECODE=1 GPUPROBE_BUILD_DIR="$ROOT/build" \
        "$py" -m pytest -q -rs -p no:cacheprovider python/tests
}
register_stage python stage_python "pytest python/tests: the gpuprobe package against build/ and the simulated stack"
