"""Finding and loading libgpuprobe.so.1: GPUPROBE_LIBRARY, a copy beside
the package, the system loader; the version check; what is said when the
library is missing or too old."""

import re
import shutil

import pytest

from conftest import FAKELIB, LIBRARY, REPO, SRC, child_env, loader_finds, run_python

PROBE = "import gpuprobe; print(gpuprobe.library_path()); print(gpuprobe.cuda_status().cause)"
FAIL = ("import gpuprobe\n"
        "try:\n    gpuprobe.cuda_status()\n"
        "except gpuprobe.LibraryError as e:\n"
        "    assert isinstance(e, gpuprobe.Error) and e.status is None and e.name == 'library'\n"
        "    print(e)\n"
        "else:\n    raise SystemExit('loaded')\n")


def test_gpuprobe_library_names_the_file(tmp_path):
    proc, _ = run_python(PROBE, child_env({"GPUPROBE_CUDA": "off"}), tmp_path)
    path, cause = proc.stdout.split()
    assert path == str(LIBRARY)
    assert cause == "disabled"


def test_import_needs_no_library(tmp_path):
    # Importing loads nothing: the error comes with the first call.
    code = "import gpuprobe; print(gpuprobe.__version__, gpuprobe.CudaStatus.__name__)"
    proc, _ = run_python(code, child_env({"GPUPROBE_LIBRARY": "/nonexistent/libgpuprobe.so.1"}),
                         tmp_path)
    assert proc.stdout.split() == ["1.2.0", "CudaStatus"]


def test_gpuprobe_library_wrong_path_is_not_replaced(tmp_path):
    # A GPUPROBE_LIBRARY that does not load is an error, never a reason to
    # load another copy.
    env = child_env({"GPUPROBE_LIBRARY": str(tmp_path / "missing.so"), "LD_LIBRARY_PATH": str(LIBRARY.parent)})
    proc, _ = run_python(FAIL, env, tmp_path)
    assert "missing.so" in proc.stdout
    assert "looked GPUPROBE_LIBRARY" in proc.stdout


def test_empty_gpuprobe_library_counts_as_unset(tmp_path):
    env = child_env({"GPUPROBE_LIBRARY": "", "LD_LIBRARY_PATH": str(LIBRARY.parent)})
    proc, _ = run_python(PROBE, env, tmp_path)
    assert proc.stdout.split()[0] == str(LIBRARY)


def test_beside_the_package(tmp_path):
    pkg = tmp_path / "site"
    shutil.copytree(SRC / "gpuprobe", pkg / "gpuprobe")
    shutil.copy(LIBRARY, pkg / "gpuprobe" / "libgpuprobe.so.1")
    env = child_env({"PYTHONPATH": str(pkg)})
    del env["GPUPROBE_LIBRARY"]
    proc, _ = run_python(PROBE, env, tmp_path)
    assert proc.stdout.split()[0] == str(pkg / "gpuprobe" / "libgpuprobe.so.1")


def test_system_loader(tmp_path):
    env = child_env({"LD_LIBRARY_PATH": str(LIBRARY.parent)})
    del env["GPUPROBE_LIBRARY"]
    proc, _ = run_python(PROBE, env, tmp_path)
    # dladdr gives the file the loader mapped.
    assert proc.stdout.split()[0] == str(LIBRARY)


def test_missing_says_where_it_looked(tmp_path):
    if loader_finds("libgpuprobe.so.1"):
        pytest.skip("a libgpuprobe.so.1 is installed on this machine's loader path")
    env = child_env()
    del env["GPUPROBE_LIBRARY"]
    proc, _ = run_python(FAIL, env, tmp_path)
    text = proc.stdout.strip()
    assert text.startswith("libgpuprobe.so.1 not found: looked beside the package (")
    assert str(SRC / "gpuprobe" / "libgpuprobe.so.1") + ": no such file" in text
    assert "on the system loader's path (libgpuprobe.so.1: cannot open shared object file" in text
    assert text.endswith("or set GPUPROBE_LIBRARY to the library's path")
    # python -m gpuprobe says the same on stderr, exit status 1
    proc, _ = run_python("", env, tmp_path, args=("-m", "gpuprobe"), check=False)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("gpuprobe: libgpuprobe.so.1 not found: looked beside")


@pytest.mark.parametrize("fake, expect", [
    ("gpuprobe-1.0", r" is libgpuprobe 1\.0\.3, too old: this gpuprobe package needs 1\.1 or "
                     r"a later 1\.x \(the GPUPROBE_1\.1 functions\); install a newer libgpuprobe1$"),
    ("gpuprobe-2.1", r" is libgpuprobe 2\.1\.0: this gpuprobe package needs major version 1 "
                     r"\(1\.1 or a later 1\.x\)$"),
    ("gpuprobe-none", r" has no gpuprobe_version\(\): it is not libgpuprobe$"),
])
def test_version_check(tmp_path, fake, expect):
    lib = FAKELIB / fake / "libgpuprobe.so.1"
    if not lib.exists():
        pytest.skip("%s was not built (tests/fakelib.cmake)" % lib)
    proc, _ = run_python(FAIL, child_env({"GPUPROBE_LIBRARY": str(lib)}), tmp_path)
    assert re.search("^" + re.escape("%s (GPUPROBE_LIBRARY)" % lib) + expect, proc.stdout.strip())


def test_versions_agree(gp):
    """The package, the library it loads and the CMake project are one version."""
    cmake = (REPO / "CMakeLists.txt").read_text()
    project = re.search(r"project\(gpuprobe VERSION ([0-9.]+)", cmake).group(1)
    pyproject = (REPO / "python" / "pyproject.toml").read_text()
    assert re.search(r'^version = "%s"$' % re.escape(project), pyproject, re.M)
    assert gp.__version__ == project
    assert gp.library_version() == project
