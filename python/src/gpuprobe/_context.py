"""Context: one gpuprobe_context handle and the Pythonic API over it.

A context caches what the library enumerated (devices, the CUDA answer)
and owns the CUDA state of its GPU matmuls. It is closed deterministically:
``with gpuprobe.Context() as ctx: ...`` or ``ctx.close()``; the module's
default context (used by the module-level functions) is closed at exit.
One context is used by one thread at a time: each Context holds a lock
around its calls, so sharing one between threads is safe but serialised.
"""

from __future__ import annotations

import _thread
import ctypes
import os

from . import _lib
from ._errors import Error, InvalidArgumentError, UnsupportedError, VerifyFailedError
from ._status import CudaStatus

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

    from ._types import Device, MatmulResult, Model, Plan, Speed, Workload

    DeviceArg = Union[str, int, Device, None]
    SizeArg = Union[int, float, str, None]

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_SIZE = r"\s*([0-9]+(?:\.[0-9]*)?(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*$"
# Other names people give dtypes (PyTorch's, NumPy's), read as the library's.
_DTYPE_ALIASES = {"float32": "fp32", "float": "fp32", "float64": "fp64", "double": "fp64",
                  "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
                  "float8_e4m3fn": "fp8", "float8_e5m2": "fp8"}
# The torch_dtype values that give a plan's weights dtype (gpuprobe-fit's).
_TORCH_DEFAULT_DTYPES = {"float32": "fp32", "float": "fp32", "fp32": "fp32",
                         "float64": "fp64", "double": "fp64", "float16": "fp16",
                         "half": "fp16", "fp16": "fp16", "bfloat16": "bf16",
                         "bf16": "bf16", "int8": "int8"}
# The largest context a plan takes from max_position_embeddings by default.
DEFAULT_CONTEXT_CAP = 8192


def _with_model_defaults(m: Any, w: Any) -> Any:
    """The workload with what the model's config gives where it was not
    asked: the weights dtype (torch_dtype) and the context
    (max_position_embeddings, at most DEFAULT_CONTEXT_CAP), as
    gpuprobe-fit --model sets them."""
    import dataclasses
    change = {}
    if w.weights_dtype is None and m.torch_dtype in _TORCH_DEFAULT_DTYPES:
        change["weights_dtype"] = _TORCH_DEFAULT_DTYPES[m.torch_dtype]
    if w.context is None and m.max_position_embeddings:
        change["context"] = min(m.max_position_embeddings, DEFAULT_CONTEXT_CAP)
    return dataclasses.replace(w, **change) if change else w


def _types() -> Any:
    """The dataclasses' module, imported at the first call that needs it."""
    from . import _types as module

    return module


def parse_size(value: SizeArg, what: str) -> int:
    """Bytes from an int or a string such as "8GiB", "20e9", "500 MB"."""
    if isinstance(value, bool):
        raise TypeError("%s must be a byte count, not a bool" % what)
    if isinstance(value, (int, float)):
        n = value
    elif isinstance(value, str):
        import re

        m = re.match(_SIZE, value)
        if not m or m.group(2).lower() not in _UNITS:
            raise InvalidArgumentError("%s %r is not a size (e.g. 8GiB, 500MB, 20e9)" % (what, value))
        n = float(m.group(1)) * _UNITS[m.group(2).lower()]
    else:
        raise TypeError("%s must be a byte count or a size string, not %s" % (what, type(value).__name__))
    if n != n or n < 0 or n >= 2**64:
        raise InvalidArgumentError("%s %r is out of range" % (what, value))
    return int(n)


def _cuda_version(v: int) -> str:
    """CUDA's encoding (1000 * major + 10 * minor) as "12.4"."""
    return "%d.%d" % (v // 1000, v % 1000 // 10)


class Context:
    """A libgpuprobe context. Use it as a context manager, or call
    :meth:`close`; its methods are the module-level functions' (which use
    :func:`gpuprobe.default_context`)."""

    def __init__(self) -> None:
        self._lib = _lib.load()
        self._c = self._lib.c
        self._lock = _thread.RLock()  # type: ignore[attr-defined]
        handle = ctypes.c_void_p()
        self._lib.check(self._c.gpuprobe_context_create(ctypes.byref(handle), 0))
        self._handle: Optional[int] = handle.value

    # ---- lifetime --------------------------------------------------------

    def close(self) -> None:
        """Destroy the context (releasing the CUDA state of its matmuls).
        Closing twice is harmless."""
        with self._lock:
            if self._handle is not None:
                self._c.gpuprobe_context_destroy(self._handle)
                self._handle = None

    @property
    def closed(self) -> bool:
        return self._handle is None

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:  # a safety net; close() is the way
        try:
            self.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return "<gpuprobe.Context %s, libgpuprobe %s>" % (state, self._lib.version)

    def _h(self) -> int:
        if self._handle is None:
            raise ValueError("operation on a closed gpuprobe.Context")
        return self._handle

    def _check(self, status: int) -> None:
        self._lib.check(status, self._handle)

    def _text(self, raw: Optional[bytes]) -> str:
        return raw.decode("utf-8", "replace") if raw else ""

    # ---- CUDA ------------------------------------------------------------

    def cuda_status(self) -> CudaStatus:
        """Is CUDA usable, and if not, why? Loads the CUDA runtime and driver
        (never cuBLAS) and creates no CUDA context."""
        with self._lock:
            h = self._h()
            cause, detail = ctypes.c_int(), ctypes.c_char_p()
            self._check(self._c.gpuprobe_cuda_status(h, ctypes.byref(cause), ctypes.byref(detail)))
            text = self._text(detail.value)
            versions = []
            for fn in (self._c.gpuprobe_cuda_driver_version, self._c.gpuprobe_cuda_runtime_version):
                v = ctypes.c_int()
                versions.append(_cuda_version(v.value) if fn(h, ctypes.byref(v)) == _lib.OK else None)
            return CudaStatus(
                available=cause.value == _lib.CUDA_AVAILABLE,
                cause=self._text(self._c.gpuprobe_cuda_cause_name(cause.value)),
                reason=self._text(self._c.gpuprobe_cuda_cause_string(cause.value)),
                detail=text, driver_version=versions[0], runtime_version=versions[1])

    # ---- devices ---------------------------------------------------------

    def device_count(self) -> int:
        """1 (the CPU) plus every usable CUDA device."""
        with self._lock:
            n = ctypes.c_size_t()
            self._check(self._c.gpuprobe_device_count(self._h(), ctypes.byref(n)))
            return n.value

    def devices(self) -> List[Device]:
        """Every device: the CPU first, then each CUDA device in CUDA's
        order, read through NVML and sysfs without creating a CUDA context
        or allocating anything."""
        with self._lock:
            return [self._device(i) for i in range(self.device_count())]

    def _attr(self, index: int, name: str) -> Any:
        """One attribute, or None when the library says it is unsupported."""
        h, attr = self._h(), _lib.ATTR[name]
        if name in _lib.STRING_ATTRS:
            s = ctypes.c_char_p()
            st = self._c.gpuprobe_device_get_string(h, index, attr, ctypes.byref(s))
            value: Any = self._text(s.value)
        else:
            i = ctypes.c_int64()
            st = self._c.gpuprobe_device_get_int(h, index, attr, ctypes.byref(i))
            value = i.value
        if st == _lib.ERR_UNSUPPORTED:
            return None
        self._check(st)
        return value

    def _memory(self, index: int) -> Dict[str, Any]:
        info = _lib.new_struct(_lib.MemoryInfo)
        st = self._c.gpuprobe_device_memory(self._h(), index, ctypes.byref(info),
                                            _lib.DEVICE_MEMORY_NO_CONTEXT)
        if st == _lib.ERR_UNSUPPORTED:  # only a CUDA context could read it
            return {}
        self._check(st)
        return dict(free_memory=info.available_bytes, used_memory=info.used_bytes,
                    memory_source=_lib.MEMORY_SOURCES[info.source]
                    if info.source < len(_lib.MEMORY_SOURCES) else str(info.source),
                    context_held=bool(info.context_held) if info.source else None)

    def _device(self, index: int, reason: Optional[str] = None) -> Device:
        a = lambda name: self._attr(index, name)  # noqa: E731
        kind = "cuda" if a("kind") == _lib.DEVICE_CUDA else "cpu"
        f: Dict[str, Any] = dict(index=index, spec=a("spec"), kind=kind, name=a("name"),
                                 total_memory=a("total_memory"), reason=reason)
        f.update(self._memory(index))
        if kind == "cpu":
            simd = a("simd")
            f.update(logical_cores=a("logical_cores"), clock_khz=a("clock_khz"),
                     simd=_lib.SIMD_NAMES[simd] if simd is not None and simd < len(_lib.SIMD_NAMES)
                     else simd)
            return _types().Device(**f)
        for name in ("cuda_index", "nvml_index", "uuid", "pci_bus_id", "multiprocessors",
                     "clock_khz", "memory_clock_khz", "memory_bus_bits", "temperature_c",
                     "power_mw", "power_limit_mw", "mig_index", "mig_parent_uuid", "mig_count",
                     "memory_utilization", "numa_node", "local_cpus", "pcie_gen",
                     "pcie_width", "pcie_max_gen", "pcie_max_width"):
            f[name] = a(name)
        major, minor = a("cc_major"), a("cc_minor")
        f["compute_capability"] = (major, minor) if major is not None else None
        f["utilization"] = a("gpu_utilization")
        f["processes"] = a("compute_processes")
        for name in ("mig_mode", "mig_instance"):
            v = a(name)
            f[name] = None if v is None else bool(v)
        return _types().Device(**f)

    # ---- selection -------------------------------------------------------

    def select(self, spec: str = "auto", *, min_free: SizeArg = None,
               min_cc: Union[Tuple[int, int], str, float, None] = None,
               max_utilization: Optional[int] = None, no_other_process: bool = False,
               model: Any = None, ignore_env: bool = False, **workload: Any) -> Device:
        """Choose the device a program should use, as the lesson's
        ``torch.device("cuda" if torch.cuda.is_available() else "cpu")``,
        with requirements and a reason (``Device.reason``).

        ``spec``: ``"auto"`` (the usable GPU with the most free memory that
        meets the requirements, else the CPU), ``"cuda"`` (GPUs only),
        ``"cuda:N"``, ``"cpu"``. ``GPUPROBE_DEVICE`` in the environment
        replaces it unless ``ignore_env``. Requirements: ``min_free`` (bytes
        or "8GiB"), ``min_cc`` ((8, 0) or "8.0"), ``max_utilization``
        (percent), ``no_other_process``, and ``model`` (anything
        :func:`plan` takes, with its workload keywords): the device must
        have free memory for the model's plan (see docs/python.md).
        Reads free memory through NVML: no CUDA context is created.
        Raises NoFitError (no device meets them, the message says why),
        CudaUnavailableError, NotFoundError, InvalidArgumentError.
        """
        with self._lock, _Made(self._lib) as made:
            req = self._requirements(min_free, min_cc, max_utilization, no_other_process,
                                     model, workload, made)
            index, reason = self._select(spec, req, ignore_env)
            return self._device(index, reason)

    def _select(self, spec: str, req: "_lib.Requirements", ignore_env: bool) -> Tuple[int, str]:
        if not isinstance(spec, str):
            raise TypeError("a device spec is a string such as 'auto' or 'cuda:1', not %s"
                            % type(spec).__name__)
        index, reason = ctypes.c_size_t(), ctypes.c_char_p()
        flags = _lib.SELECT_IGNORE_ENV if ignore_env else 0
        self._check(self._c.gpuprobe_select(self._h(), spec.encode("utf-8", "replace"),
                                            ctypes.byref(req), flags, ctypes.byref(index),
                                            ctypes.byref(reason)))
        return index.value, self._text(reason.value)

    def _requirements(self, min_free: SizeArg, min_cc: Any, max_utilization: Optional[int],
                      no_other_process: bool, model: Any, workload: Dict[str, Any],
                      made: "_Made") -> "_lib.Requirements":
        unknown = set(workload) - set(_types().Workload.__dataclass_fields__)
        if unknown:
            raise TypeError("select() got unexpected keyword argument(s): %s"
                            % ", ".join(sorted(unknown)))
        v12 = self._lib.version_number >= 10200
        req = _lib.new_requirements(_lib.Requirements12 if v12 else _lib.Requirements)
        need = 0 if min_free is None else parse_size(min_free, "min_free")
        if model is not None and v12:
            # The library's own requirement: the model's plan on each
            # device (its own context cost, what allocations get there)
            # fits, and the most room left wins.
            m = self.load_model(model)
            w = _with_model_defaults(m, _types().Workload(**workload))
            req.fit_model = made.params("model", m.parameters)
            req.fit_plan = made.params("plan", self._plan_values(w))
        elif model is not None:
            # A 1.1 library: free memory for the plan's total (weights, KV
            # cache, activations, the CUDA context's default cost, the
            # margin).
            need = max(need, self.plan(model, device=None, **workload).total_bytes)
        elif workload:
            raise TypeError("%s given without a model" % ", ".join(sorted(workload)))
        req.min_free_bytes = need
        if min_cc is not None:
            if isinstance(min_cc, (str, float)):
                parts = str(min_cc).split(".")
                try:
                    min_cc = (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
                except ValueError:
                    raise InvalidArgumentError("min_cc %r is not a compute capability such as "
                                               "'8.0'" % (min_cc,)) from None
            req.min_cc_major, req.min_cc_minor = int(min_cc[0]), int(min_cc[1])
        if max_utilization is not None:
            req.max_utilization = int(max_utilization)
        req.no_other_process = 1 if no_other_process else 0
        return req

    def device(self, which: DeviceArg = "auto") -> Device:
        """One device: by spec (as :meth:`select`, without requirements),
        by index, or a Device (read again now)."""
        with self._lock:
            return self._device(*self._index(which))

    def _index(self, which: DeviceArg) -> Tuple[int, Optional[str]]:
        """(device index, reason) of a device argument."""
        if which is None:
            which = "auto"
        if isinstance(which, _types().Device):
            return which.index, which.reason
        if isinstance(which, int) and not isinstance(which, bool):
            if not 0 <= which < self.device_count():
                raise self._lib.error(_lib.ERR_NOT_FOUND, message="device index %d: there are "
                                      "%d devices" % (which, self.device_count()))
            return which, None
        if not isinstance(which, str):
            raise TypeError("a device is a spec such as 'cuda:1', an index or a Device, not %s"
                            % type(which).__name__)
        return self._select(which, _lib.new_requirements(), False)

    def visible_devices(self, spec: Union[str, Device, Sequence[Device]] = "auto",
                        **requirements: Any) -> str:
        """The value to give ``CUDA_VISIBLE_DEVICES`` before a framework is
        imported, so that it sees the chosen GPU (as its ``cuda:0``): the
        UUID of the device :meth:`select` chooses (a MIG instance's own
        ``MIG-`` UUID), or ``""`` when it chooses the CPU (hiding every GPU).
        Given a Device or a list of them (:meth:`fewest_gpus`), their UUIDs,
        comma-separated."""
        if isinstance(spec, str):
            devices: Sequence[Device] = [self.select(spec, **requirements)]
        elif requirements:
            raise TypeError("requirements apply to a spec, not to devices already chosen")
        elif isinstance(spec, _types().Device):
            devices = [spec]
        else:
            devices = list(spec)  # type: ignore[arg-type]
        ids = []
        for d in devices:
            if d.kind != "cuda":
                continue
            if not d.uuid:
                raise self._lib.error(_lib.ERR_UNSUPPORTED, message="%s has no UUID to name it by"
                                      % d.spec)
            ids.append(d.uuid)
        return ",".join(ids)

    # ---- matmul ----------------------------------------------------------

    def matmul(self, n: int = 5000, dtype: str = "fp32", device: DeviceArg = "auto", *,
               shape: Optional[Tuple[int, int, int]] = None, **options: Any) -> MatmulResult:
        """Time C = A x B (n x n, or ``shape=(m, n, k)``) on a device, the
        lesson's benchmark done properly: setup timed apart, warm-up, repeated
        runs (CUDA events on a GPU), seeded inputs, the result verified.

        ``dtype``: fp32, fp64 (CPU), tf32, fp16 (GPU), bf16 (GPU; CPU with AMX
        or AVX512-BF16). ``device``: a spec (``"auto"``: as :meth:`select`),
        an index or a Device. Options
        (``gpuprobe_matmul_param``, the library's defaults when not given):
        warmup, min_runs, max_runs, budget_ms, transfers, verify, seed,
        cpu_threads, verify_samples, batch. Raises VerifyFailedError (with
        ``.result``) when the result is wrong.
        """
        unknown = set(options) - set(_lib.MATMUL_PARAM)
        if unknown or {"m", "n", "k", "dtype"} & set(options):
            raise TypeError("unknown matmul option(s): %s" % ", ".join(sorted(unknown or options)))
        values: Dict[str, Any] = dict(options)
        m_, n_, k_ = shape if shape is not None else (n, n, n)
        values.update(m=m_, n=n_, k=k_, dtype=self._dtype(dtype))
        c = self._c
        with self._lock, _Made(self._lib) as made:
            index, reason = self._index(device)
            opts = made.params("matmul", {k: v for k, v in values.items() if v is not None})
            result = ctypes.c_void_p()
            try:
                st = c.gpuprobe_matmul_run(self._h(), index, opts, 0, ctypes.byref(result))
                error: Optional[Error] = self._lib.error(st, self._handle) if st != _lib.OK else None
                out: Optional[MatmulResult] = (self._matmul_result(result, index, reason)
                                               if result.value else None)
            finally:
                c.gpuprobe_matmul_result_destroy(result)
        if error is not None:
            if isinstance(error, VerifyFailedError):
                error.result = out
            raise error
        assert out is not None
        return out

    def _matmul_result(self, result: ctypes.c_void_p, index: int,
                       reason: Optional[str]) -> MatmulResult:
        c, f = self._c, {}
        for name, (metric, kind) in _lib.MATMUL_METRIC.items():
            if kind == "d":
                d = ctypes.c_double()
                st = c.gpuprobe_matmul_result_get_double(result, metric, ctypes.byref(d))
                value: Any = d.value
            elif kind == "i":
                i = ctypes.c_int64()
                st = c.gpuprobe_matmul_result_get_int(result, metric, ctypes.byref(i))
                value = i.value
            else:
                s = ctypes.c_char_p()
                st = c.gpuprobe_matmul_result_get_string(result, metric, ctypes.byref(s))
                value = self._text(s.value)
            self._lib.check(st)
            f[name] = value
        f["dtype"] = self._text(c.gpuprobe_dtype_name(f["dtype"]))
        f["verified"] = {1: True, 0: False}.get(f["verified"])
        for name in ("peak_gflops", "peak_fraction"):
            f[name] = f[name] or None  # 0: the peak is unknown
        f["device"] = self._device(f["device"], reason)
        return _types().MatmulResult(**f)

    # ---- plans -----------------------------------------------------------

    def load_model(self, model: Any) -> Model:
        """A Model from a parameter count, a dict (a config.json's
        contents), a path to a config.json or a directory holding one, a
        Hugging Face id in the local hub cache, or a shipped config's name
        (docs/python.md: where each is looked for). Checked by the library
        as a whole; raises InvalidArgumentError (a bad config: the message
        names the key), NotFoundError (saying where it looked),
        SystemError (a file that cannot be read), OverflowError."""
        from . import _models

        m = _models.make_model(model, self._lib.path)
        with self._lock, _Made(self._lib) as made:
            handle = made.params("model", m.parameters)
            try:
                self._plan_struct("compute", None, handle, None)
            except Error as exc:
                if m.source in ("dict", "parameter count"):
                    raise
                # A file's faults begin with its path, as the C reader's do.
                raise type(exc)("%s: %s" % (m.source, exc.message), status=exc.status,
                                name=exc.name, text=exc.text) from None
        return m

    def plan(self, model: Any, *, device: DeviceArg = "auto", **workload: Any) -> Plan:
        """What a model needs (weights, KV cache, activations, overhead,
        margin) and, against a device, whether it fits there, with the
        largest context and batch that do.

        ``model``: as :meth:`load_model`. ``device``: a spec (``"auto"``:
        the device :meth:`select` picks without requirements), an index, a
        Device, or ``None`` for the arithmetic alone (no device looked at).
        Workload keywords (:class:`Workload`; the library's defaults when
        not given): workload ("inference", "training", "weights"),
        weights_dtype, kv_dtype, context, batch, prefill_chunk,
        checkpointing, quant_group, gpus (tensor-parallel share), overhead,
        margin (bytes or sizes such as "2GiB").
        """
        m = self.load_model(model)
        w = _with_model_defaults(m, _types().Workload(**workload))
        with self._lock, _Made(self._lib) as made:
            dev_index, reason = self._index(device) if device is not None else (None, None)
            handle = made.params("model", m.parameters)
            opts = made.params("plan", self._plan_values(w))
            ps = self._plan_struct("device" if dev_index is not None else "compute",
                                   dev_index, handle, opts)
            dev = self._device(dev_index, reason) if dev_index is not None else None
        return _plan_of(ps, m, w, dev)

    def speed(self, model: Any, *, prompt: int = 512, generate: int = 128,
              device: DeviceArg = "auto", layer_overhead_ns: Optional[int] = None,
              efficiency: Optional[int] = None, budget_ms: Optional[int] = None,
              buffer_bytes: SizeArg = None, cpu_threads: Optional[int] = None,
              **workload: Any) -> "Speed":
        """How fast the model runs on a device: the time to the first token
        of a ``prompt``-token prompt and decode tokens/s over ``generate``
        tokens, predicted from the memory read rate and the matmul
        throughput measured there (briefly; kept in this context, so a
        second call measures nothing) at the model's own shapes, as
        ``gpuprobe-fit --prompt P --generate G`` does (docs/speed.md).
        ``model`` and the workload keywords are :meth:`plan`'s (the context
        defaults to prompt + generate); ``device`` as :meth:`plan`.
        ``layer_overhead_ns`` (default 5000), ``efficiency`` (percent of the
        measured rates, default 100), ``budget_ms`` and ``buffer_bytes``
        tune the estimate and its measurement; ``cpu_threads`` is the
        threads the engine runs with on a CPU (the read rate and the
        matmuls are measured with as many; default: one per core). Needs
        libgpuprobe 1.2."""
        if self._lib.version_number < 10200:
            raise UnsupportedError("the speed estimate needs libgpuprobe 1.2 or later; %s is %s"
                                   % (self._lib.path, self._lib.version))
        m = self.load_model(model)
        if "context" not in workload and isinstance(prompt, int) and isinstance(generate, int):
            workload = dict(workload, context=prompt + generate)
        w = _with_model_defaults(m, _types().Workload(**workload))
        values = {"prompt": prompt, "generate": generate}
        for name, v in (("layer_overhead_ns", layer_overhead_ns), ("efficiency", efficiency),
                        ("budget_ms", budget_ms), ("cpu_threads", cpu_threads)):
            if v is not None:
                values[name] = v
        if buffer_bytes is not None:
            values["buffer_bytes"] = parse_size(buffer_bytes, "buffer_bytes")
        c = self._c
        with self._lock, _Made(self._lib) as made:
            index, reason = self._index(device)
            handle = made.params("model", m.parameters)
            opts = made.params("plan", self._plan_values(w))
            sopts = made.params("speed", values)
            fig = _lib.new_struct(_lib.SpeedFigures)
            fig.dtype = -1
            self._check(c.gpuprobe_speed_measure(self._h(), index, handle, opts, sopts, 0,
                                                 ctypes.byref(fig)))
            sp = _lib.new_struct(_lib.SpeedStruct)
            self._check(c.gpuprobe_speed_compute(self._h(), handle, opts, sopts, ctypes.byref(fig),
                                                 0, ctypes.byref(sp)))
            dev = self._device(index, reason)
        names = dtype_names(self._lib)
        return _types().Speed(
            model=m, workload=w, device=dev, prompt=prompt, generate=generate,
            prefill_s=sp.prefill_s, prefill_bound=_lib.SPEED_BOUNDS.get(sp.prefill_bound, "?"),
            prefill_flop=sp.prefill_flop, prefill_bytes=sp.prefill_bytes,
            decode_tokens_per_s=sp.decode_tokens_per_s,
            decode_batch_tokens_per_s=sp.decode_batch_tokens_per_s,
            decode_bound=_lib.SPEED_BOUNDS.get(sp.decode_bound, "?"),
            decode_bytes_mean=sp.decode_bytes_mean, decode_flop_mean=sp.decode_flop_mean,
            total_s=sp.total_s, read_bytes_per_s=sp.read_bytes_per_s,
            matmul_flops=max(fig.decode_flops, fig.prefill_flops, fig.prefill_attn_flops),
            matmul_dtype=names[fig.dtype] if 0 <= fig.dtype < len(names) else None,
            dtype_substituted=bool(fig.flags & _lib.SPEED_DTYPE_SUBSTITUTED),
            cached=bool(fig.flags & _lib.SPEED_CACHED),
            tensor_parallel_not_modelled=bool(sp.flags & _lib.SPEED_TP_NOT_MODELLED),
            cpu_threads=fig.cpu_threads)

    def fewest_gpus(self, model: Any, **workload: Any) -> List[Device]:
        """The fewest GPUs that hold the model with tensor parallelism (the
        ones with the most free memory), for :meth:`visible_devices`.
        Raises NoFitError when no number of them does, CudaUnavailableError."""
        m = self.load_model(model)
        w = _with_model_defaults(m, _types().Workload(**workload))
        with self._lock, _Made(self._lib) as made:
            handle = made.params("model", m.parameters)
            opts = made.params("plan", self._plan_values(w))
            cap = self.device_count()
            out = (ctypes.c_size_t * cap)()
            count = ctypes.c_size_t()
            self._check(self._c.gpuprobe_plan_gpus(self._h(), handle, opts, 0,
                                                   ctypes.byref(count), out, cap))
            return [self._device(out[i]) for i in range(min(count.value, cap))]

    def _plan_values(self, w: Workload) -> Dict[str, int]:
        """The workload's parameters that were given, as the library's numbers."""
        values = {}
        for name in _lib.PLAN_PARAM:
            value = getattr(w, name)
            if value is None:
                continue
            if name == "workload":
                value = _workload_value(self._lib, value)
            elif name in ("weights_dtype", "kv_dtype"):
                value = self._dtype(value)
            elif name in ("overhead", "margin"):
                value = parse_size(value, name)
            values[name] = value
        return values

    def _plan_struct(self, how: str, index: Optional[int], model: int,
                     opts: Optional[int]) -> "_lib.PlanStruct":
        ps = _lib.new_struct(_lib.PlanStruct)
        if how == "device":
            st = self._c.gpuprobe_plan_device(self._h(), index, model, opts, 0, ctypes.byref(ps))
        else:
            st = self._c.gpuprobe_plan_compute(self._h(), model, opts, 0, ctypes.byref(ps))
        self._check(st)
        return ps

    def _dtype(self, name: Any) -> int:
        text = str(name)
        text = text[6:] if text.startswith("torch.") else text
        text = _DTYPE_ALIASES.get(text, text)
        v = ctypes.c_int()
        if self._c.gpuprobe_dtype_parse(text.encode("utf-8", "replace"), ctypes.byref(v)) != _lib.OK:
            raise InvalidArgumentError("unknown dtype %r: one of %s" % (name, ", ".join(dtype_names(self._lib))))
        return v.value


Context.__module__ = "gpuprobe"


def dtype_names(lib: "_lib.Library") -> List[str]:
    """The library's dtype names, in enum order."""
    names = []
    for i in range(64):
        n = lib.c.gpuprobe_dtype_name(i).decode("ascii")
        if n == "unknown":
            break
        names.append(n)
    return names


def _workload_value(lib: "_lib.Library", name: str) -> int:
    for i in range(len(_lib.WORKLOADS)):
        if lib.c.gpuprobe_workload_name(i).decode("ascii") == name:
            return i
    raise InvalidArgumentError("unknown workload %r: one of %s" % (name, ", ".join(_lib.WORKLOADS)))


class _Made:
    """The library's parameter objects (models, plan and matmul options) made
    for one call, all destroyed when its ``with`` block ends."""

    # kind: (create, destroy, set, bounds, parameter numbers)
    KINDS = {
        "model": ("gpuprobe_model_create", "gpuprobe_model_destroy", "gpuprobe_model_set",
                  "gpuprobe_model_param_bounds", _lib.MODEL_PARAM),
        "plan": ("gpuprobe_plan_options_create", "gpuprobe_plan_options_destroy",
                 "gpuprobe_plan_options_set", "gpuprobe_plan_param_bounds", _lib.PLAN_PARAM),
        "speed": ("gpuprobe_speed_options_create", "gpuprobe_speed_options_destroy",
                  "gpuprobe_speed_options_set", "gpuprobe_speed_param_bounds", _lib.SPEED_PARAM),
        "matmul": ("gpuprobe_matmul_options_create", "gpuprobe_matmul_options_destroy",
                   "gpuprobe_matmul_options_set", "gpuprobe_matmul_param_bounds",
                   _lib.MATMUL_PARAM),
    }

    def __init__(self, lib: "_lib.Library") -> None:
        self.lib = lib
        self.made: List[Tuple[Any, int]] = []

    def __enter__(self) -> "_Made":
        return self

    def __exit__(self, *exc: Any) -> None:
        while self.made:
            destroy, obj = self.made.pop()
            destroy(obj)

    def params(self, kind: str, values: Dict[str, int]) -> int:
        """A new object of `kind` with `values` set (0 is "not given", which
        every model parameter accepts: left unset)."""
        create, destroy, setter, bounds, numbers = self.KINDS[kind]
        c = self.lib.c
        obj = ctypes.c_void_p()
        self.lib.check(getattr(c, create)(ctypes.byref(obj)))
        assert obj.value is not None
        self.made.append((getattr(c, destroy), obj.value))
        for name, value in values.items():
            if kind != "model" or value != 0:
                _set_param(self.lib, getattr(c, setter), getattr(c, bounds), obj.value,
                           numbers[name], value, name)
        return obj.value


def _set_param(lib: "_lib.Library", setter: Any, bounds: Any, obj: Any, param: int,
               value: Any, label: str) -> None:
    """Set an enum-keyed parameter, saying which and the library's range
    when the value is refused."""
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise TypeError("%s must be an integer, not %r" % (label, value))
    lo, hi = ctypes.c_int64(), ctypes.c_int64()
    lib.check(bounds(param, ctypes.byref(lo), ctypes.byref(hi)))
    if not lo.value <= value <= hi.value:
        raise InvalidArgumentError("%s is %d: out of range (%d to %d)" % (label, value, lo.value, hi.value))
    lib.check(setter(obj, param, value))


def _plan_of(ps: "_lib.PlanStruct", m: Model, w: Workload, dev: Optional[Device]) -> Plan:
    figures = {name: getattr(ps, name) for name in (
        "params", "active_params", "kv_bytes_per_token", "weights_bytes", "gradient_bytes",
        "optimizer_bytes", "kv_cache_bytes", "activation_bytes", "overhead_bytes",
        "margin_bytes", "total_bytes")}
    by_params = bool(ps.flags & _lib.PLAN_BY_PARAMS)
    extra: Dict[str, Any] = {}
    if dev is not None:
        extra = dict(available_bytes=ps.available_bytes, fits=bool(ps.fits))
        if not by_params:
            extra.update(largest_context=ps.largest_context, largest_batch=ps.largest_batch)
    src = ps.overhead_source
    return _types().Plan(model=m, workload=w, device=dev,
                overhead_source=_lib.RESERVE_SOURCES[src] if src < len(_lib.RESERVE_SOURCES) else str(src),
                by_params=by_params, windowed=bool(ps.flags & _lib.PLAN_WINDOWED),
                **figures, **extra)


# ---- the module's default context ------------------------------------------

_DEFAULT: Optional[Context] = None
_DEFAULT_LOCK = _thread.allocate_lock()
_AT_EXIT = False


def default_context() -> Context:
    """The context the module-level functions use, created at first use
    and closed when the interpreter exits (or by :func:`close`)."""
    global _DEFAULT, _AT_EXIT
    ctx = _DEFAULT
    if ctx is not None and not ctx.closed:
        return ctx
    with _DEFAULT_LOCK:
        if _DEFAULT is None or _DEFAULT.closed:
            if not _AT_EXIT:
                import atexit

                atexit.register(close)  # once: close() closes whichever is current
                _AT_EXIT = True
            _DEFAULT = Context()
        return _DEFAULT


def close() -> None:
    """Close the default context now (a later call makes a new one)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is not None:
            _DEFAULT.close()
            _DEFAULT = None


def _forget_default_in_child() -> None:
    # After fork(), the child must not tear down the parent's CUDA state
    # through an inherited context (see the header): drop it unclosed.
    global _DEFAULT
    if _DEFAULT is not None:
        _DEFAULT._handle = None
    _DEFAULT = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_default_in_child)
