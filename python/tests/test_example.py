"""examples/python/choose_gpu.py: the choice is made, and
CUDA_VISIBLE_DEVICES set, before PyTorch is imported; without PyTorch the
script stops cleanly after the choice."""

import pytest

from conftest import FLEET_TWO, REPO, child_env, needs_sim, run_python

SCRIPT = REPO / "examples" / "python" / "choose_gpu.py"

# A stand-in for PyTorch that records what it found at import and does
# the few things the script asks of it.
FAKE_TORCH = '''
import os
__version__ = "0.0-fake"
SEEN = os.environ.get("CUDA_VISIBLE_DEVICES")
print("torch imported with CUDA_VISIBLE_DEVICES=%r" % SEEN)
class device:
    def __init__(self, spec):
        self.type = spec.split(":")[0]
        self.spec = spec
    def __str__(self):
        return self.spec
class _T:
    def __matmul__(self, other):
        return self
def randn(*shape, device=None):
    return _T()
class cuda:
    @staticmethod
    def synchronize():
        pass
'''


def test_without_pytorch(tmp_path):
    hide = tmp_path / "hide"  # PyTorch absent, even where it is installed
    hide.mkdir()
    (hide / "torch.py").write_text("raise ImportError('No module named torch')\n")
    env = child_env({"GPUPROBE_CUDA": "off"})
    env["PYTHONPATH"] += ":" + str(hide)
    proc, _ = run_python("", env, tmp_path, args=(str(SCRIPT),))
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Using: cpu (")
    assert lines[1].startswith("Reason: auto: CUDA not usable (CUDA was turned off by the user")
    assert lines[2:] == ["CUDA_VISIBLE_DEVICES=",
                         "PyTorch is not installed: stopping after the choice (pip install torch)"]


@needs_sim
def test_pytorch_sees_only_the_chosen_gpu(tmp_path):
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "torch.py").write_text(FAKE_TORCH)
    env = child_env({"SIMCUDA_FLEET": FLEET_TWO}, sim=True)
    env["PYTHONPATH"] += ":" + str(fake)
    proc, stats = run_python("", env, tmp_path, args=(str(SCRIPT), "--min-free", "100GiB"))
    lines = proc.stdout.splitlines()
    assert lines[0] == "Using: cuda:1 (NVIDIA H200)"
    assert lines[2] == "CUDA_VISIBLE_DEVICES=GPU-5e1e0000-4200-4000-8000-00000000000b"
    assert lines[3] == "torch imported with CUDA_VISIBLE_DEVICES=" \
                       "'GPU-5e1e0000-4200-4000-8000-00000000000b'"
    assert lines[4].startswith("PyTorch 0.0-fake on cuda:0: 2048x2048 matmul in ")
    assert stats["contexts_created"] == 0


@needs_sim
def test_nothing_fits(tmp_path):
    env = child_env({"SIMCUDA_FLEET": FLEET_TWO}, sim=True)
    proc, _ = run_python("", env, tmp_path, args=(str(SCRIPT), "--model", "Llama-3.1-70B",
                                                  "--context", "131072"), check=False)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("choose_gpu: no device meets the requirements: cuda:0 ")


@pytest.mark.parametrize("args", [("--min-free", "lots")])
def test_bad_arguments(tmp_path, args):
    proc, _ = run_python("", child_env({"GPUPROBE_CUDA": "off"}), tmp_path,
                         args=(str(SCRIPT),) + args, check=False)
    assert proc.returncode == 1 and "not a size" in proc.stderr
