"""The package against the simulated NVIDIA stack (tests/simcuda, the same
libraries the scenario tests load), one child process per fleet: several
GPUs, MIG, no driver, a driver too old; that devices() and select() create
no CUDA context and allocate nothing (the simulation's own counters), and
what a per-GPU memory query through the CUDA runtime, as
torch.cuda.mem_get_info does it, costs instead."""

import json

import pytest

from conftest import (FLEET_EIGHT, FLEET_H200, FLEET_MIG, FLEET_TWO, MIG_B, SIMCUDA, child_env,
                      loader_finds, needs_sim, run_python)

pytestmark = needs_sim
GiB = 1 << 30


def sim(fleet, **extra):
    return child_env(dict({"SIMCUDA_FLEET": fleet}, **extra), sim=True)


def run_json(code, env, tmp_path):
    """Run code that prints one JSON document; (document, counters)."""
    proc, stats = run_python("import gpuprobe, json\n" + code, env, tmp_path)
    return json.loads(proc.stdout), stats


def untouched(stats):
    assert stats is not None, "the simulated stack was not loaded"
    assert stats["contexts_created"] == 0 and stats["context_bytes"] == 0
    assert stats["bytes_allocated"] == 0


def test_eight_gpus_without_a_context(tmp_path):
    code = """
devs = gpuprobe.devices()
best = gpuprobe.select()
idle = gpuprobe.select(max_utilization=20, no_other_process=True)
print(json.dumps(dict(
    devices=[[d.spec, d.name, d.free_memory, d.utilization, d.processes, d.nvml_index,
              d.memory_source, d.context_held] for d in devs],
    best=[best.spec, best.reason], idle=[idle.spec, idle.reason],
    visible=gpuprobe.visible_devices(), best_uuid=best.uuid,
    fewest=[d.spec for d in gpuprobe.fewest_gpus("Llama-3.1-70B", context=8192)],
    fewest_visible=gpuprobe.visible_devices(gpuprobe.fewest_gpus("Llama-3.1-70B", context=8192)),
    uuids={d.spec: d.uuid for d in devs})))
"""
    doc, stats = run_json(code, sim(FLEET_EIGHT), tmp_path)
    untouched(stats)
    devs = doc["devices"]
    assert [d[0] for d in devs] == ["cpu"] + ["cuda:%d" % i for i in range(8)]
    assert devs[1][1:5] == ["NVIDIA H200", 100 * GiB, 80, 0]
    assert devs[4][2:5] == [60 * GiB, 0, 1]  # another program's context: 10 GiB
    assert devs[8][2:5] == [110 * GiB, 50, 1]
    assert all(d[6] == "nvml" and d[7] is False for d in devs[1:])
    # NVML numbers GPUs by PCI bus id: the first GPU (c1:00.0) is nvidia-smi's 6
    assert devs[1][5] == 6 and devs[2][5] == 0
    # cuda:1 and cuda:4 have the most free memory; the less busy one wins
    assert doc["best"][0] == "cuda:4"
    assert doc["best"][1].startswith("auto: cuda:4 (NVIDIA H200) has the most free memory")
    assert doc["idle"][0] == "cuda:4" and "skipped" in doc["idle"][1]
    assert doc["visible"] == doc["best_uuid"] and doc["visible"].startswith("GPU-")
    assert doc["fewest"] and all(s.startswith("cuda:") for s in doc["fewest"])
    assert doc["fewest_visible"] == ",".join(doc["uuids"][s] for s in doc["fewest"])


# What torch.cuda.mem_get_info(i) does on each GPU, through the CUDA
# runtime the simulation provides (PyTorch itself does not load it): make
# device i current and ask the runtime, which creates its context there.
MEM_GET_INFO = """
import ctypes
rt = ctypes.CDLL("libcudart.so.13")
free, total = ctypes.c_size_t(), ctypes.c_size_t()
n = ctypes.c_int()
assert rt.cudaGetDeviceCount(ctypes.byref(n)) == 0
for i in range(n.value):
    assert rt.cudaSetDevice(i) == 0
    assert rt.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total)) == 0
print(n.value)
"""


def test_a_runtime_memory_query_creates_a_context_per_gpu(tmp_path):
    proc, stats = run_python(MEM_GET_INFO, sim(FLEET_EIGHT), tmp_path)
    assert proc.stdout.strip() == "8"
    assert stats["contexts_created"] == 8
    assert stats["context_bytes"] == 8 * 500 * (1 << 20)  # the simulation's 500 MiB each


def test_mig_instance(tmp_path):
    code = """
d = gpuprobe.devices()[1]
print(json.dumps(dict(d=[d.spec, d.uuid, d.mig_instance, d.mig_mode, d.mig_index, d.total_memory,
                         d.free_memory, d.utilization, d.mig_parent_uuid is not None],
                      visible=gpuprobe.visible_devices(), n=len(gpuprobe.devices()))))
"""
    doc, stats = run_json(code, sim(FLEET_MIG, CUDA_VISIBLE_DEVICES=MIG_B), tmp_path)
    untouched(stats)
    assert doc["n"] == 2
    assert doc["d"] == ["cuda:0", MIG_B, True, True, 1, 32 * GiB, 20 * GiB, None, True]
    assert doc["visible"] == MIG_B  # the instance's own UUID


def test_lesson_lines_on_two_gpus(tmp_path):
    proc, stats = run_python("", sim(FLEET_TWO), tmp_path, args=("-m", "gpuprobe"))
    untouched(stats)
    assert proc.stdout == ("CUDA available: True\nCUDA version: 13.0\n"
                           "GPU: NVIDIA A100-SXM4-40GB\nMemory: 42.5 GB\nUsing: cuda:1\n")
    assert proc.stderr == ""


def test_devices_hidden(tmp_path):
    proc, _ = run_python("", sim(FLEET_TWO, CUDA_VISIBLE_DEVICES=""), tmp_path,
                         args=("-m", "gpuprobe"))
    lines = proc.stdout.splitlines()
    assert lines[:2] == ["CUDA available: False", "CUDA version: 13.0"]
    assert lines[2].startswith("Reason: CUDA devices are hidden by CUDA_VISIBLE_DEVICES (")
    assert lines[3] == "Using: cpu"


def test_driver_too_old(tmp_path):
    env = sim("driver_version=12.4;" + FLEET_H200, GPUPROBE_CUDA_LIBDIR=str(SIMCUDA / "rt13"))
    code = """
s = gpuprobe.cuda_status()
try:
    gpuprobe.select("cuda")
except gpuprobe.CudaUnavailableError as e:
    err = [e.name, e.message]
print(json.dumps(dict(s=list(s), err=err)))
"""
    doc, stats = run_json(code, env, tmp_path)
    untouched(stats)
    available, cause, reason, detail, driver, runtime = doc["s"]
    assert (available, cause, driver, runtime) == (False, "driver_too_old", "12.4", "13.0")
    assert "12.4" in detail and "13.0" in detail
    assert doc["err"][0] == "cuda_unavailable" and "driver_too_old" in doc["err"][1]
    proc, _ = run_python("", env, tmp_path, args=("-m", "gpuprobe"))
    assert proc.stdout.splitlines()[2] == "Reason: %s (%s)" % (reason, detail)


def test_no_driver(tmp_path):
    if loader_finds("libcuda.so.1"):
        pytest.skip("this machine has an NVIDIA driver library (libcuda.so.1)")
    env = child_env({"GPUPROBE_CUDA_LIBDIR": str(SIMCUDA / "rt13")})
    proc, _ = run_python("", env, tmp_path, args=("-m", "gpuprobe"))
    lines = proc.stdout.splitlines()
    assert lines[:2] == ["CUDA available: False", "CUDA version: 13.0"]
    # the library's detail, whatever its words, names the missing library
    assert lines[2].startswith("Reason: no NVIDIA driver installed (libcuda.so.1 ")
    assert lines[3:] == ["Using: cpu"]


def test_plans_and_requirements_against_gpus(tmp_path):
    code = """
p = gpuprobe.plan("Llama-3.1-8B", device="cuda:1", context=8192)
pick = gpuprobe.select(model="Mixtral-8x7B-v0.1", context=4096)
try:
    gpuprobe.select(model="Llama-3.1-70B", weights_dtype="fp32")
except gpuprobe.NoFitError as e:
    nofit = e.message
print(json.dumps(dict(p=[p.device.spec, p.fits, p.available_bytes, p.overhead_source,
                         p.largest_context, p.largest_batch, p.total_bytes],
                      pick=[pick.spec, pick.reason], nofit=nofit)))
"""
    doc, stats = run_json(code, sim(FLEET_TWO), tmp_path)
    untouched(stats)
    spec, fits, available, source, ctx, batch, total = doc["p"]
    assert (spec, fits, source) == ("cuda:1", True, "default")
    assert 119 * GiB < available <= 120 * GiB  # NVML's free memory, less what cannot be had
    assert ctx > 8192 and batch > 1 and total < available
    # Mixtral's plan fits the H200 only: the library's model requirement,
    # with each device's own figures (as gpuprobe-select --model says them)
    assert doc["pick"][0] == "cuda:1"
    assert "left after the model's" in doc["pick"][1]
    assert "skipped cuda:0 (NVIDIA A100-SXM4-40GB): the model needs " in doc["pick"][1]
    assert doc["nofit"].startswith("cuda:0 (NVIDIA A100-SXM4-40GB): the model needs ")


def test_gpu_matmul(tmp_path):
    code = """
with gpuprobe.Context() as ctx:
    r = ctx.matmul(64, "bf16", "cuda:1", min_runs=3, budget_ms=0)
print(json.dumps([r.device.spec, r.dtype, r.verified, r.backend, r.math_mode, r.threads,
                  r.h2d_s > 0, r.device_name]))
"""
    doc, stats = run_json(code, sim(FLEET_TWO), tmp_path)
    assert doc[:3] == ["cuda:1", "bf16", True] and doc[3].startswith("cuBLAS")
    assert doc[5:] == [0, True, "NVIDIA H200"]
    assert stats["contexts_created"] == 1  # work makes a context, on that GPU only


@pytest.mark.parametrize("fault, error", [
    ("gemm_bug=rowmajor", "VerifyFailedError"),  # the negative control
    ("fail=cudaMalloc:1+", "DeviceOutOfMemoryError"),
    ("fail=cublasGemmEx:1+", "CudaError"),
])
def test_gpu_matmul_failures(tmp_path, fault, error):
    code = """
try:
    gpuprobe.matmul(64, "fp32", "cuda:0", min_runs=1, budget_ms=0)
except gpuprobe.Error as e:
    print(json.dumps([type(e).__name__, e.message, getattr(e, "result", None) is not None]))
"""
    doc, _ = run_json(code, sim(fault + ";" + FLEET_H200), tmp_path)
    assert doc[0] == error and doc[1]
    assert doc[2] == (error == "VerifyFailedError")
