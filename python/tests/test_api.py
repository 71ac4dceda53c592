"""The API against the build tree's library on this machine's CPU (CUDA
turned off, so that every machine answers the same): values, reprs,
exceptions, contexts."""

import re
import threading

import pytest

from conftest import FAKELIB, child_env, cpu_bf16_kernel, run_python


def test_cuda_status_disabled(gp):
    s = gp.cuda_status()
    assert isinstance(s, gp.CudaStatus) and isinstance(s, tuple)
    assert (s.available, s.cause, s.reason) == (False, "disabled", "CUDA was turned off by the user")
    assert s.detail  # the library's one-line explanation
    assert repr(s).startswith("CudaStatus(available=False, cause='disabled', ")


def test_devices_cpu(gp):
    devs = gp.devices()
    assert len(devs) == 1
    cpu = devs[0]
    assert isinstance(cpu, gp.Device)
    assert (cpu.index, cpu.spec, cpu.kind, cpu.torch_device, cpu.is_cuda) == (0, "cpu", "cpu", "cpu", False)
    assert cpu.name
    assert cpu.total_memory > 0 and 0 < cpu.free_memory <= cpu.total_memory
    assert cpu.used_memory == cpu.total_memory - cpu.free_memory
    assert cpu.memory_source == "host"
    assert cpu.logical_cores >= 1
    assert cpu.simd in ("none", "sse4_2", "avx", "avx2_fma", "avx512")
    assert cpu.uuid is None and cpu.compute_capability is None and cpu.utilization is None
    assert repr(cpu).startswith("Device('cpu', %r, free=" % cpu.name)
    with pytest.raises(AttributeError):
        cpu.name = "x"  # a frozen snapshot


def test_select_and_visible_devices(gp):
    d = gp.select()
    assert d.spec == "cpu"
    assert d.reason.startswith("auto: CUDA not usable (CUDA was turned off by the user")
    assert "reason=" in repr(d)
    assert gp.select("cpu", min_free=1, ignore_env=True).spec == "cpu"
    # The CPU chosen: hide every GPU from the framework.
    assert gp.visible_devices() == ""
    assert gp.visible_devices([]) == ""


def test_select_errors(gp):
    with pytest.raises(gp.CudaUnavailableError) as e:
        gp.select("cuda:0")
    err = e.value
    assert isinstance(err, gp.Error)
    assert (err.status, err.name) == (6, "cuda_unavailable")
    assert str(err) == "CUDA is not usable: " + err.message
    assert "disabled" in err.message

    with pytest.raises(gp.InvalidArgumentError) as e:
        gp.select("cuda:01")
    assert isinstance(e.value, ValueError)  # a bad value, as Python says it
    assert "cuda:01" in e.value.message

    with pytest.raises(gp.NoFitError) as e:
        gp.select("cpu", min_free="1000TiB")
    assert e.value.name == "no_fit"
    assert re.search(r"^cpu: .* available < 1\.1 PB required$", e.value.message)

    with pytest.raises(gp.NoFitError):
        gp.select(min_cc=(8, 0))  # a compute capability excludes the CPU
    with pytest.raises(gp.InvalidArgumentError):
        gp.select(max_utilization=101)
    with pytest.raises(gp.InvalidArgumentError, match="not a size"):
        gp.select(min_free="8 parsecs")
    with pytest.raises(TypeError, match="context given without a model"):
        gp.select(context=8192)  # a workload without a model
    with pytest.raises(TypeError, match="unexpected keyword argument.*: min_fre$"):
        gp.select(min_fre="8GiB")  # a typo is not taken for a workload
    with pytest.raises(TypeError, match="requirements apply to a spec"):
        gp.visible_devices(gp.devices()[0], min_free=1)
    with pytest.raises(TypeError):
        gp.select(7)


def test_device_by_index_and_spec(gp):
    with gp.Context() as ctx:
        assert ctx.device(0).spec == "cpu"
        assert ctx.device("cpu").index == 0
        with pytest.raises(gp.NotFoundError) as e:
            ctx.device(5)
        assert isinstance(e.value, LookupError)
        assert e.value.message == "device index 5: there are 1 devices"


def test_matmul_cpu(gp):
    r = gp.matmul(64, "fp32", "cpu", min_runs=3, budget_ms=0, seed=7)
    assert isinstance(r, gp.MatmulResult)
    assert (r.m, r.n, r.k, r.dtype, r.device.spec) == (64, 64, 64, "fp32", "cpu")
    assert r.verified is True
    assert r.runs == 3
    assert 0 < r.min_s <= r.median_s <= r.max_s
    assert r.gflops > 0 and r.max_error <= r.tolerance
    assert r.threads >= 1 and r.backend.startswith("OpenBLAS") and r.compute_type == "cblas_sgemm"
    assert (r.h2d_s, r.d2h_s) == (0.0, 0.0)
    assert repr(r).startswith("MatmulResult(cpu fp32 64x64x64: median ")
    rect = gp.matmul(dtype="float64", device="cpu", shape=(8, 16, 24), verify=False, min_runs=1,
                     budget_ms=0)
    assert (rect.m, rect.n, rect.k, rect.dtype, rect.verified) == (8, 16, 24, "fp64", None)


def test_matmul_errors(gp):
    with pytest.raises(gp.UnsupportedError):
        gp.matmul(64, "fp16", "cpu")
    with pytest.raises(gp.InvalidArgumentError, match=r"^unknown dtype 'fp12': one of fp32, fp64, tf32"):
        gp.matmul(64, "fp12", "cpu")
    with pytest.raises(gp.InvalidArgumentError, match=r"^min_runs is 0: out of range \(1 to 10000\)$"):
        gp.matmul(64, device="cpu", min_runs=0)
    with pytest.raises(TypeError, match="unknown matmul option"):
        gp.matmul(64, device="cpu", runs=3)
    with pytest.raises(TypeError):
        gp.matmul(64, device="cpu", seed="x")


def test_matmul_bf16_on_the_cpu(gp):
    # the library's own gemm, on AMX tiles or with AVX512-BF16 where the
    # CPU has either (the backend names which), else refused with the reason
    kernel = cpu_bf16_kernel()
    if kernel:
        r = gp.matmul(64, "bf16", "cpu", min_runs=2, budget_ms=0)
        assert (r.dtype, r.verified) == ("bf16", True) and kernel + " gemm" in r.backend
    else:
        with pytest.raises(gp.UnsupportedError, match="AMX-BF16"):
            gp.matmul(64, "bf16", "cpu")


def test_verification_failure_carries_the_result(tmp_path):
    # The negative control: an OpenBLAS whose gemm computes nothing.
    noop = FAKELIB / "openblas-noop"
    if not (noop / "libopenblas.so.0").exists():
        pytest.skip("the no-op OpenBLAS was not built (tests/fakelib.cmake)")
    code = ("import gpuprobe\n"
            "try:\n    gpuprobe.matmul(32, device='cpu', min_runs=1, budget_ms=0)\n"
            "except gpuprobe.VerifyFailedError as e:\n"
            "    print(e.name, e.result.verified, e.result.m, e.result.device.spec)\n")
    proc, _ = run_python(code, child_env({"LD_LIBRARY_PATH": str(noop)}), tmp_path)
    assert proc.stdout.split() == ["verify_failed", "False", "32", "cpu"]


def test_contexts_close(gp):
    ctx = gp.Context()
    assert not ctx.closed and "open" in repr(ctx)
    with ctx:
        assert ctx.device_count() == 1
    assert ctx.closed and "closed" in repr(ctx)
    ctx.close()  # twice: harmless
    with pytest.raises(ValueError, match="closed"):
        ctx.devices()
    d1 = gp.default_context()
    assert gp.default_context() is d1
    gp.close()
    assert d1.closed
    assert gp.default_context() is not d1  # a new one on demand


def test_threads_share_the_default_context(gp):
    out, errors = [], []

    def work():
        try:
            for _ in range(20):
                out.append(gp.devices()[0].spec)
                out.append(gp.select("cpu").spec)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and out == ["cpu"] * 160


def test_error_hierarchy(gp):
    names = {cls.name: cls for cls in (
        gp.InvalidArgumentError, gp.OutOfMemoryError, gp.DeviceOutOfMemoryError, gp.NotFoundError,
        gp.UnsupportedError, gp.CudaUnavailableError, gp.CudaError, gp.NoFitError,
        gp.VerifyFailedError, gp.OverflowError, gp.SystemError, gp.InternalError)}
    lib = gp._lib.load()
    for status in range(1, 13):
        err = lib.error(status, message="m")
        name = lib.c.gpuprobe_status_name(status).decode()
        assert type(err) is names[name] and err.status == status and err.name == name
        assert str(err) == lib.c.gpuprobe_status_string(status).decode() + ": m"
    assert issubclass(gp.OverflowError, OverflowError) and gp.OverflowError is not OverflowError
    unknown = lib.error(99, message="m")
    assert type(unknown) is gp.Error and unknown.name == "unknown"
    assert gp.NoFitError.__module__ == "gpuprobe"
    assert "OverflowError" not in gp.__all__ and "SystemError" not in gp.__all__

