"""Shared set-up of the gpuprobe package's tests.

The tests run the package from python/src against a libgpuprobe build tree
($GPUPROBE_BUILD_DIR, default <repository>/build): in this process with
CUDA turned off (GPUPROBE_CUDA=off: the same answers on every machine),
and in child processes (run_python) against the simulated NVIDIA stack of
the build (build/simcuda/lib first on LD_LIBRARY_PATH, a fleet in
SIMCUDA_FLEET, the simulation's counters in SIMCUDA_STATS).
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Tuple

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent.parent
SRC = REPO / "python" / "src"
BUILD = Path(os.environ.get("GPUPROBE_BUILD_DIR") or REPO / "build").resolve()
LIBRARY = BUILD / "libgpuprobe.so.1"
SIMCUDA = BUILD / "simcuda"
FAKELIB = BUILD / "tests" / "fakelib"
MODELS = REPO / "examples" / "models"

# Variables a caller's environment may hold that change the answers.
_OURS = ("GPUPROBE_", "CUDA_", "SIMCUDA_", "HF_", "NVIDIA_")

if not LIBRARY.exists():
    pytest.exit("%s is missing: build libgpuprobe first (cmake --build build)" % LIBRARY, returncode=1)

for _k in [k for k in os.environ if k.startswith(_OURS)]:
    del os.environ[_k]
os.environ.update(GPUPROBE_LIBRARY=str(LIBRARY), GPUPROBE_CUDA="off",
                  GPUPROBE_MODELS_DIR=str(MODELS), HF_HUB_CACHE=str(TESTS / "no-hub-cache"))
sys.path.insert(0, str(SRC))

# Fleets of the simulated NVIDIA stack (docs/testing.md: configuring a fleet).
# Eight GPUs of four products, some busy, two with another program's context.
FLEET_EIGHT = (REPO / "tests" / "simcuda" / "fleet8.conf").read_text()
FLEET_TWO = ("[gpu];preset=A100-40GB;uuid=GPU-5e1e0000-a100-4000-8000-00000000000a;"
             "pci=0000:21:00.0;free=30GiB;[gpu];preset=H200;"
             "uuid=GPU-5e1e0000-4200-4000-8000-00000000000b;pci=0000:81:00.0;free=120GiB")
FLEET_H200 = "[gpu];preset=H200;uuid=GPU-5e1e0000-4200-4000-8000-00000000000b;pci=0000:19:00.0"
MIG_A = "MIG-7a1b0000-0000-4000-8000-000000000003"
MIG_B = "MIG-7a1b0000-0000-4000-8000-000000000004"
FLEET_MIG = ("[gpu];preset=H200;[mig];name=NVIDIA H200 MIG 3g.71gb;uuid=%s;total=64GiB;"
             "[mig];name=NVIDIA H200 MIG 2g.35gb;uuid=%s;total=32GiB;free=20GiB" % (MIG_A, MIG_B))


def child_env(extra: Optional[Dict[str, str]] = None, sim: bool = False) -> Dict[str, str]:
    """The environment of a child: this one's (already cleaned of the
    caller's CUDA and gpuprobe variables) without GPUPROBE_CUDA=off, the
    package on PYTHONPATH, the simulated stack first on the loader's path
    when `sim`."""
    env = {k: v for k, v in os.environ.items() if k != "GPUPROBE_CUDA"}
    env["PYTHONPATH"] = str(SRC)
    env.pop("LD_LIBRARY_PATH", None)
    if sim:
        env["LD_LIBRARY_PATH"] = str(SIMCUDA / "lib")
    env.update(extra or {})
    return env


def run_python(code: str, env: Dict[str, str], tmp_path: Path, args: Tuple[str, ...] = (),
               check: bool = True) -> Tuple[subprocess.CompletedProcess, Optional[dict]]:
    """Run `code` (or `-m ...` when args are given and code is empty) in a
    child; returns the finished process and the simulation's counters when
    it loaded the simulated stack."""
    stats = tmp_path / "simcuda-stats.json"
    if stats.exists():
        stats.unlink()
    env = dict(env, SIMCUDA_STATS=str(stats))
    cmd = [sys.executable] + (["-c", code] if code else []) + list(args)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120,
                          cwd=str(tmp_path))
    if check and proc.returncode != 0:
        raise AssertionError("exit status %d\nstdout:\n%s\nstderr:\n%s"
                             % (proc.returncode, proc.stdout, proc.stderr))
    counters = json.loads(stats.read_text()) if stats.exists() else None
    return proc, counters


def cpu_bf16_kernel() -> Optional[str]:
    """The kernel the library's bf16 gemm runs on this CPU, by its flags:
    "AMX-BF16", "AVX512-BF16", or None where it has neither."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(f.read().split())
    except OSError:
        return None
    if {"amx_bf16", "amx_tile"} <= flags:
        return "AMX-BF16"
    if {"avx512_bf16", "avx512bw"} <= flags:
        return "AVX512-BF16"
    return None


def loader_finds(soname: str) -> bool:
    """Whether the system loader, with no LD_LIBRARY_PATH, opens soname."""
    code = "import ctypes; ctypes.CDLL(%r)" % soname
    return subprocess.run([sys.executable, "-c", code], env=child_env(),
                          capture_output=True).returncode == 0


needs_sim = pytest.mark.skipif(not (SIMCUDA / "lib" / "libcuda.so.1").exists(),
                               reason="no simulated NVIDIA stack in %s (a build without "
                                      "the CUDA headers)" % BUILD)


@pytest.fixture
def gp():
    """The package, its default context closed after the test."""
    import gpuprobe

    yield gpuprobe
    gpuprobe.close()
