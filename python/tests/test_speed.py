"""gpuprobe.speed(): the library's speed estimate (gpuprobe_speed_measure()
and gpuprobe_speed_compute()) from Python, held to what gpuprobe-fit
--prompt --generate says of the same question: the arithmetic on this CPU
(the measured rates differ from one process to the next, the FLOP and
bytes do not), every figure on a simulated H200 (whose time model makes
the rates exact)."""

import json
import subprocess

import pytest

from conftest import BUILD, FLEET_H200, child_env, cpu_bf16_kernel, needs_sim, run_python

FIT = BUILD / "tools" / "gpuprobe-fit"
QUICK = dict(prompt=64, generate=4, budget_ms=2, buffer_bytes="1MiB")
QUICK_ARGS = ["--model", "Qwen2.5-0.5B", "--prompt", "64", "--generate", "4",
              "--speed-budget", "2", "--speed-bytes", "1MiB", "--json"]

needs_fit = pytest.mark.skipif(not FIT.exists(), reason="%s was not built" % FIT)


def fit_speed(env, *args):
    """The first device's speed in gpuprobe-fit's JSON."""
    p = subprocess.run([str(FIT)] + QUICK_ARGS + list(args), capture_output=True, text=True,
                       env=env)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)["devices"][0]["speed"]


@needs_fit
def test_speed_on_the_cpu(gp):
    s = gp.speed("Qwen2.5-0.5B", device="cpu", **QUICK)
    assert s.device.spec == "cpu" and s.prompt == 64 and s.generate == 4
    assert s.workload.context == 68  # the plan holds the prompt and what is generated
    assert s.prefill_bound in ("compute", "memory") and s.decode_bound in ("compute", "memory")
    assert s.prefill_s > 0 and s.decode_tokens_per_s > 0 and s.total_s >= s.prefill_s
    # bf16 weights: in bf16 where the CPU has a bf16 kernel (AMX tiles or
    # AVX512-BF16), else this CPU's matmuls run in fp32, and it says so
    bf16 = cpu_bf16_kernel() is not None
    assert (s.matmul_dtype, s.dtype_substituted) == (("bf16", False) if bf16 else ("fp32", True))
    assert not s.cached and s.read_bytes_per_s > 0 and s.matmul_flops > 0
    # measured once per context: the second estimate measures nothing
    again = gp.speed("Qwen2.5-0.5B", device="cpu", **QUICK)
    assert again.cached and again.read_bytes_per_s == s.read_bytes_per_s
    # the arithmetic is the command's, to the FLOP and the byte
    want = fit_speed(child_env(), "--device", "cpu")
    assert s.prefill_flop == want["prefill_flop"]
    assert s.prefill_bytes == want["prefill_bytes"]
    assert s.decode_bytes_mean == want["decode_bytes_mean"]
    assert s.decode_flop_mean == want["decode_flop_mean"]


@needs_fit
def test_speed_cpu_threads(gp):
    """cpu_threads: the figures measured with that many threads, kept per
    count, as gpuprobe-fit --threads measures them."""
    s = gp.speed("Qwen2.5-0.5B", device="cpu", cpu_threads=3, **QUICK)
    assert s.cpu_threads == 3 and not s.cached
    again = gp.speed("Qwen2.5-0.5B", device="cpu", cpu_threads=3, **QUICK)
    assert again.cached and again.cpu_threads == 3
    one = gp.speed("Qwen2.5-0.5B", device="cpu", cpu_threads=1, **QUICK)
    assert one.cpu_threads == 1 and not one.cached
    assert fit_speed(child_env(), "--device", "cpu", "--threads", "3")["measured"]["cpu_threads"] == 3
    with pytest.raises(gp.InvalidArgumentError, match="cpu_threads"):
        gp.speed("Qwen2.5-0.5B", device="cpu", cpu_threads=1025, **QUICK)


def test_speed_errors(gp):
    with pytest.raises(gp.InvalidArgumentError, match="prompt"):
        gp.speed("Qwen2.5-0.5B", device="cpu", prompt=0)
    with pytest.raises(gp.UnsupportedError):  # a parameter count has no shapes
        gp.speed(7e9, device="cpu", prompt=8, generate=2)
    with pytest.raises(TypeError):
        gp.speed("Qwen2.5-0.5B", device="cpu", contxt=8)


@needs_sim
@needs_fit
def test_speed_on_a_simulated_h200(tmp_path):
    env = child_env({"SIMCUDA_FLEET": FLEET_H200}, sim=True)
    code = ("import gpuprobe, json\n"
            "s = gpuprobe.speed('Qwen2.5-0.5B', device='cuda:0', prompt=64, generate=4, "
            "budget_ms=2, buffer_bytes='1MiB')\n"
            "print(json.dumps([s.device.spec, s.prefill_s, s.decode_tokens_per_s, "
            "s.read_bytes_per_s, s.prefill_bound, s.decode_bound, s.matmul_dtype, "
            "s.cpu_threads]))\n")
    proc, _stats = run_python(code, env, tmp_path)
    spec, prefill_s, tps, read, pb, db, dt, threads = json.loads(proc.stdout)
    want = fit_speed(env, "--device", "cuda:0")
    assert spec == "cuda:0" and dt == "bf16" and threads == 0
    assert prefill_s == pytest.approx(want["prefill_s"], rel=1e-9)
    assert tps == pytest.approx(want["decode_tokens_per_s"], rel=1e-9)
    assert read == pytest.approx(want["read_bytes_per_s"], rel=1e-9)
    assert (pb, db) == (want["prefill_bound"], want["decode_bound"])
