"""The values the API returns (but CudaStatus, in _status): plain,
immutable snapshots of what the library answered (frozen dataclasses),
with readable reprs. None of them holds a library handle. Imported at the
first call that returns one: dataclasses cost more to import than the
whole of a cuda_status() call."""

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple


def _gb(n: Optional[int]) -> str:
    """Bytes as the library's messages write them: decimal GB, one digit."""
    return "?" if n is None else "%.1f GB" % (n / 1e9)


@dataclass(frozen=True, repr=False)
class Device:
    """One device as the library sees it: the CPU (always index 0) or a
    CUDA device (a GPU or a MIG instance), read without creating a CUDA
    context. A snapshot: the figures are those of the moment it was read.

    Fields the device does not have, or that the driver cannot tell
    (NVML missing, a query a GPU lacks, utilisation in MIG mode), are
    ``None``. Memory is in bytes. ``free_memory`` and ``used_memory`` of a
    GPU come from NVML and are ``None`` when only a CUDA context could
    read them (the library would have to create one).
    """

    index: int
    """The library's device index (0 is the CPU; ``cuda:N`` is N + 1)."""
    spec: str
    """The spec that selects it: ``"cpu"`` or ``"cuda:N"``."""
    kind: str
    """``"cpu"`` or ``"cuda"``."""
    name: str
    total_memory: int
    """GPU: device memory as CUDA counts it; CPU: RAM (the cgroup limit when lower)."""
    free_memory: Optional[int] = None
    """GPU: free device memory (NVML); CPU: available RAM (cgroup-aware)."""
    used_memory: Optional[int] = None
    memory_source: Optional[str] = None
    """Where the memory figures came from: ``"host"``, ``"nvml"``."""
    context_held: Optional[bool] = None
    """GPU: this process holds a CUDA context there (its cost is then already counted as used)."""
    cuda_index: Optional[int] = None
    """The CUDA ordinal, as this process numbers devices (after ``CUDA_VISIBLE_DEVICES``)."""
    nvml_index: Optional[int] = None
    """The index nvidia-smi shows (by PCI bus id), which can differ from ``cuda_index``."""
    uuid: Optional[str] = None
    """``"GPU-..."``, or a MIG instance's own ``"MIG-..."``."""
    pci_bus_id: Optional[str] = None
    compute_capability: Optional[Tuple[int, int]] = None
    multiprocessors: Optional[int] = None
    clock_khz: Optional[int] = None
    memory_clock_khz: Optional[int] = None
    memory_bus_bits: Optional[int] = None
    utilization: Optional[int] = None
    """Percent of the last sample period a kernel ran (NVML)."""
    memory_utilization: Optional[int] = None
    temperature_c: Optional[int] = None
    power_mw: Optional[int] = None
    power_limit_mw: Optional[int] = None
    processes: Optional[int] = None
    """Processes with a CUDA context on the device (this one included when it holds one)."""
    mig_mode: Optional[bool] = None
    mig_instance: Optional[bool] = None
    mig_index: Optional[int] = None
    mig_parent_uuid: Optional[str] = None
    mig_count: Optional[int] = None
    numa_node: Optional[int] = None
    local_cpus: Optional[str] = None
    pcie_gen: Optional[int] = None
    pcie_width: Optional[int] = None
    pcie_max_gen: Optional[int] = None
    pcie_max_width: Optional[int] = None
    logical_cores: Optional[int] = None
    """CPU: logical CPUs online."""
    simd: Optional[str] = None
    """CPU: ``"none"``, ``"sse4_2"``, ``"avx"``, ``"avx2_fma"`` or ``"avx512"``."""
    reason: Optional[str] = None
    """Set by :func:`gpuprobe.select`: why this device was chosen."""

    @property
    def torch_device(self) -> str:
        """The string ``torch.device()`` takes for this device: ``"cpu"`` or
        ``"cuda:N"`` (PyTorch numbers CUDA devices as this process does)."""
        return self.spec

    @property
    def is_cuda(self) -> bool:
        return self.kind == "cuda"

    def __repr__(self) -> str:
        parts = [repr(self.spec), repr(self.name)]
        if self.free_memory is not None:
            parts.append("free=%s of %s" % (_gb(self.free_memory), _gb(self.total_memory)))
        else:
            parts.append("total=%s" % _gb(self.total_memory))
        if self.compute_capability:
            parts.append("cc=%d.%d" % self.compute_capability)
        if self.reason:
            parts.append("reason=%r" % self.reason)
        return "Device(%s)" % ", ".join(parts)


@dataclass(frozen=True, repr=False)
class MatmulResult:
    """A timed matmul C = A x B (:func:`gpuprobe.matmul`). Times are in
    seconds, per call, from the timed runs only (setup, warm-up and
    transfers are reported apart)."""

    device: Device
    dtype: str
    m: int
    n: int
    k: int
    median_s: float
    min_s: float
    max_s: float
    mean_s: float
    stddev_s: float
    gflops: float
    """2 m n k / median, in GFLOP/s."""
    setup_s: float
    h2d_s: float
    """Host-to-device copy of A and B (GPU; 0 on the CPU)."""
    d2h_s: float
    max_error: float
    tolerance: float
    peak_gflops: Optional[float]
    """The dtype's theoretical peak on this device; ``None`` when unknown."""
    peak_fraction: Optional[float]
    verified: Optional[bool]
    """True verified, False failed, None not checked."""
    runs: int
    batch: int
    """Calls per timed run (each run's time is divided by it)."""
    threads: int
    """CPU threads (OpenBLAS's, or the bf16 gemm's); 0 on a GPU."""
    device_name: str
    backend: str
    math_mode: str
    compute_type: str

    def __repr__(self) -> str:
        verdict = {True: "verified", False: "FAILED verification", None: "not verified"}
        return "MatmulResult(%s %s %dx%dx%d: median %.4g s, %.1f GFLOP/s, %s)" % (
            self.device.spec, self.dtype, self.m, self.n, self.k, self.median_s,
            self.gflops, verdict[self.verified])


@dataclass(frozen=True, repr=False)
class Model:
    """A model for :func:`gpuprobe.plan`: an architecture read from a
    ``config.json`` (or a dict of one), or a bare parameter count.
    Make one with :func:`gpuprobe.load_model`; any argument ``plan()``
    takes as a model goes through it."""

    name: str
    """What it was asked for as (a path, an id, a shipped name)."""
    source: str
    """Where it was read from: a file's path, ``"dict"``, ``"parameter count"``."""
    parameters: Dict[str, int] = field(default_factory=dict)
    """The library's model parameters that were set (``gpuprobe_model_param``
    names in lower case: ``layers``, ``hidden``, ``heads``, ``kv_heads``, ...)."""
    torch_dtype: Optional[str] = None
    """The config's ``torch_dtype`` (or ``dtype``, its newer name), as
    written. When it names a dtype the library has (float32, float64,
    float16, bfloat16, int8 and their short names), it is the plan's
    weights dtype unless ``weights_dtype`` is given, as in
    ``gpuprobe-fit --model``."""
    max_position_embeddings: Optional[int] = None
    """The config's ``max_position_embeddings``: the plan's context, at most
    8192 tokens, unless ``context`` is given, as in ``gpuprobe-fit --model``."""

    def __repr__(self) -> str:
        if set(self.parameters) == {"params"}:
            return "Model(%d parameters)" % self.parameters["params"]
        return "Model(%r from %s)" % (self.name, self.source)


@dataclass(frozen=True)
class Workload:
    """How a model runs (``gpuprobe_plan_options``): every field left
    ``None`` takes the library's default (inference, bf16 weights, the KV
    cache in the compute dtype, 4096 tokens, batch 1, the CUDA context's
    cost as overhead, a 1 GiB margin), except that a model read from a
    config gives the weights dtype (its ``torch_dtype``) and the context
    (its ``max_position_embeddings``, at most 8192), as ``gpuprobe-fit
    --model`` does."""

    workload: Optional[str] = None
    """``"inference"``, ``"training"`` or ``"weights"``."""
    weights_dtype: Optional[str] = None
    kv_dtype: Optional[str] = None
    context: Optional[int] = None
    batch: Optional[int] = None
    prefill_chunk: Optional[int] = None
    checkpointing: Optional[bool] = None
    quant_group: Optional[int] = None
    gpus: Optional[int] = None
    """Tensor-parallel GPUs; the plan is then one GPU's share."""
    overhead: Optional[int] = None
    margin: Optional[int] = None


@dataclass(frozen=True, repr=False)
class Plan:
    """What a model needs, and (against a device) whether it fits there
    (:func:`gpuprobe.plan`). Bytes, per device (with ``gpus`` > 1, one
    GPU's share). The formulas and their sources: docs/capacity.md."""

    model: Model
    workload: Workload
    device: Optional[Device]
    """The device held against, or None for a plan that looked at no device."""
    params: int
    active_params: int
    kv_bytes_per_token: int
    weights_bytes: int
    gradient_bytes: int
    optimizer_bytes: int
    kv_cache_bytes: int
    activation_bytes: int
    overhead_bytes: int
    margin_bytes: int
    total_bytes: int
    overhead_source: str
    """``"measured"``, ``"default"``, ``"context_held"`` or ``"none"``."""
    by_params: bool
    """The model is only a parameter count (KV cache and activations are the 20% rule)."""
    windowed: bool
    """The sliding window capped the KV cache below the context."""
    available_bytes: Optional[int] = None
    """Free memory of the device (CPU: available RAM); None without a device."""
    fits: Optional[bool] = None
    largest_context: Optional[int] = None
    """The largest context that fits with this batch (None: no device, or a bare parameter count)."""
    largest_batch: Optional[int] = None

    def __repr__(self) -> str:
        where = ""
        if self.device is not None:
            where = " on %s: %s, %s free" % (
                self.device.spec, "fits" if self.fits else "does not fit",
                _gb(self.available_bytes))
        return "Plan(%s needs %s%s)" % (self.model.name, _gb(self.total_bytes), where)

    def breakdown(self) -> Dict[str, Any]:
        """The byte figures by part, in the order they add up to the total."""
        return {k: getattr(self, k) for k in (
            "weights_bytes", "gradient_bytes", "optimizer_bytes", "kv_cache_bytes",
            "activation_bytes", "overhead_bytes", "margin_bytes", "total_bytes")}


for _cls in (Device, MatmulResult, Model, Workload, Plan):
    _cls.__module__ = "gpuprobe"  # as users name them


@dataclass(frozen=True, repr=False)
class Speed:
    """How fast a model runs on a device (:func:`gpuprobe.speed`): the time
    to the first token (prefill) and decode tokens/s, predicted from the
    memory read rate and the matmul throughput measured on the device at
    the model's shapes; what an efficient engine attains (docs/speed.md).
    Times in seconds, rates per second."""

    model: Model
    workload: Workload
    device: Device
    prompt: int
    generate: int
    prefill_s: float
    """The time to the first token."""
    prefill_bound: str
    """``"compute"`` or ``"memory"``: what set the prefill's time."""
    prefill_flop: float
    prefill_bytes: float
    decode_tokens_per_s: float
    """Tokens per second of each sequence after the first token."""
    decode_batch_tokens_per_s: float
    decode_bound: str
    decode_bytes_mean: float
    """Bytes one decode step reads, averaged over the steps."""
    decode_flop_mean: float
    total_s: float
    read_bytes_per_s: float
    """The memory read rate used (measured x efficiency)."""
    matmul_flops: float
    """The fastest matmul throughput measured at the model's shapes, FLOP/s."""
    matmul_dtype: Optional[str]
    """The precision the matmuls ran in (on a CPU, 16-bit weights run in fp32)."""
    dtype_substituted: bool
    cached: bool
    """The figures were measured before in this context (nothing was measured now)."""
    tensor_parallel_not_modelled: bool
    """With ``gpus`` > 1: one GPU's share; the communication is not counted."""
    cpu_threads: int = 0
    """On a CPU: the threads the figures were measured with (the fewest of
    the read test's and the matmuls'); 0 on a GPU."""

    def __repr__(self) -> str:
        return ("Speed(%s on %s: prefill %d tokens %.3g s (%s-bound), decode %.3g tok/s "
                "(%s-bound))" % (self.model.name, self.device.spec, self.prompt, self.prefill_s,
                                 self.prefill_bound, self.decode_tokens_per_s, self.decode_bound))
