"""`pip install ./python` and `pip wheel ./python` offline, in a scratch
virtual environment, against the library installed in a scratch prefix
(as on a machine with the libgpuprobe1 package): no network, no build
isolation (pip would fetch setuptools), the system's setuptools and wheel
(Debian: python3-setuptools, python3-wheel, python3-venv)."""

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import BUILD, REPO, child_env

pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("venv", "ensurepip", "setuptools", "wheel")),
    reason="needs venv, ensurepip, setuptools and wheel for %s "
           "(Debian: python3-venv python3-setuptools python3-wheel)" % sys.executable)


def run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, "%s\nstdout:\n%s\nstderr:\n%s" % (cmd, proc.stdout, proc.stderr)
    return proc


def test_pip_install_and_wheel_offline(tmp_path):
    prefix = tmp_path / "prefix"
    run(["cmake", "--install", BUILD, "--prefix", prefix, "--component", "lib"])
    libdir = next(p.parent for p in prefix.rglob("libgpuprobe.so.1"))

    src = tmp_path / "src"  # a copy: an in-tree build writes build/ and *.egg-info
    shutil.copytree(REPO / "python", src, ignore=shutil.ignore_patterns(
        "__pycache__", "build", "dist", "*.egg-info", "tests"))
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    py = venv / "bin" / "python"
    pip_env = dict(child_env(), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
                   PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1")
    del pip_env["PYTHONPATH"]
    run([py, "-m", "pip", "install", "--no-build-isolation", src], env=pip_env)
    run([py, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", tmp_path / "wheels",
         src], env=pip_env)

    wheels = list((tmp_path / "wheels").glob("*.whl"))
    assert [w.name for w in wheels] == ["gpuprobe-1.2.0-py3-none-any.whl"]
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "gpuprobe/py.typed" in names and "gpuprobe/__main__.py" in names
    assert not [n for n in names if n.endswith(".so") or "tests" in n]

    # The installed package, the installed library, from elsewhere.
    env = dict(child_env({"LD_LIBRARY_PATH": str(libdir)}))
    for k in ("PYTHONPATH", "GPUPROBE_LIBRARY"):
        env.pop(k, None)
    code = ("import gpuprobe; print(gpuprobe.__file__); print(gpuprobe.library_path()); "
            "print(gpuprobe.cuda_status().available)")
    proc = run([py, "-c", code], env=env, cwd=str(tmp_path))
    where, lib, _ = proc.stdout.split("\n", 2)
    assert where.startswith(str(venv)) and lib == str(libdir / "libgpuprobe.so.1")
    proc = run([py, "-m", "gpuprobe"], env=env, cwd=str(tmp_path))
    assert proc.stdout.startswith("CUDA available: ")
