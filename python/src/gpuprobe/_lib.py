"""Loading libgpuprobe.so.1 through ctypes: where it is looked for, the
version check, and the C prototypes and structures the package uses.

Nothing here computes anything the library computes: this module only
declares the library's ABI (function prototypes, the size-prefixed structs
as 1.1 lays them out, the enum values, which are fixed and never
renumbered) and turns a failed status into an exception.
"""

from __future__ import annotations

import _thread
import ctypes
import os

from ._errors import LibraryError, error_for_status

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, List, Optional, Tuple

SONAME = "libgpuprobe.so.1"
#: The ABI this package is written against: major 1, and the 1.1 functions
#: (the plans, the 1.1 fields of the memory and requirements structs).
REQUIRED = (1, 1)

# ---- enum values (include/gpuprobe.h; fixed, never renumbered) ------------

OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_NOT_FOUND = 4
ERR_UNSUPPORTED = 5
ERR_NO_FIT = 8
ERR_VERIFY_FAILED = 9
ERR_SYSTEM = 11

CUDA_AVAILABLE = 0
DEVICE_CPU = 0
DEVICE_CUDA = 1

DEVICE_MEMORY_NO_CONTEXT = 0x1
SELECT_IGNORE_ENV = 0x1
PLAN_BY_PARAMS = 0x1
PLAN_WINDOWED = 0x2

MEMORY_SOURCES = ("host", "nvml", "cuda_context")
RESERVE_SOURCES = ("none", "measured", "default", "context_held")
SIMD_NAMES = ("none", "sse4_2", "avx", "avx2_fma", "avx512")
WORKLOADS = ("weights", "inference", "training")

# gpuprobe_attr
ATTR = dict(
    kind=0, name=1, spec=2, cuda_index=3, uuid=4, pci_bus_id=5, cc_major=6,
    cc_minor=7, multiprocessors=8, clock_khz=9, memory_clock_khz=10,
    memory_bus_bits=11, total_memory=12, logical_cores=13, simd=14,
    nvml_index=18, mig_mode=19, mig_instance=20, mig_index=21,
    mig_parent_uuid=22, mig_count=23, gpu_utilization=24,
    memory_utilization=25, temperature_c=26, power_mw=27, power_limit_mw=28,
    compute_processes=29, numa_node=30, local_cpus=31, pcie_gen=32,
    pcie_width=33, pcie_max_gen=34, pcie_max_width=35,
)
STRING_ATTRS = frozenset(("name", "spec", "uuid", "pci_bus_id", "mig_parent_uuid", "local_cpus"))

# gpuprobe_matmul_param
MATMUL_PARAM = dict(
    m=0, n=1, k=2, dtype=3, warmup=4, min_runs=5, max_runs=6, budget_ms=7,
    transfers=8, verify=9, seed=10, cpu_threads=11, verify_samples=12, batch=13,
)
# gpuprobe_matmul_metric: (value, type) with type "d" double, "i" int, "s" string
MATMUL_METRIC = dict(
    median_s=(0, "d"), min_s=(1, "d"), max_s=(2, "d"), mean_s=(3, "d"),
    stddev_s=(4, "d"), gflops=(5, "d"), setup_s=(6, "d"), h2d_s=(7, "d"),
    d2h_s=(8, "d"), max_error=(9, "d"), tolerance=(10, "d"),
    peak_gflops=(11, "d"), peak_fraction=(12, "d"), verified=(13, "i"),
    runs=(14, "i"), threads=(15, "i"), m=(16, "i"), n=(17, "i"), k=(18, "i"),
    dtype=(19, "i"), device_name=(20, "s"), backend=(21, "s"),
    math_mode=(22, "s"), compute_type=(23, "s"), device=(24, "i"), batch=(25, "i"),
)
# gpuprobe_model_param
MODEL_PARAM = dict(
    params=0, layers=1, hidden=2, heads=3, kv_heads=4, head_dim=5,
    intermediate=6, vocab=7, tied_embeddings=8, experts=9,
    experts_per_token=10, sliding_window=11, qkv_bias=12,
)
# gpuprobe_plan_param
# gpuprobe_speed_param (1.2)
SPEED_PARAM = dict(prompt=0, generate=1, layer_overhead_ns=2, efficiency=3, budget_ms=4,
                   buffer_bytes=5, max_rows=6, cpu_threads=7)
SPEED_CACHED = 0x1
SPEED_DTYPE_SUBSTITUTED = 0x2
SPEED_TP_NOT_MODELLED = 0x1
SPEED_WINDOWED = 0x2
SPEED_BOUNDS = {1: "compute", 2: "memory"}
PLAN_PARAM = dict(
    workload=0, weights_dtype=1, kv_dtype=2, context=3, batch=4,
    prefill_chunk=5, checkpointing=6, quant_group=7, gpus=8, overhead=9,
    margin=10,
)

# ---- structures (size-prefixed; the 1.1 layouts) --------------------------


class MemoryInfo(ctypes.Structure):
    """gpuprobe_memory_info."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("total_bytes", ctypes.c_uint64),
        ("available_bytes", ctypes.c_uint64),
        ("physical_bytes", ctypes.c_uint64),
        ("cgroup_limit_bytes", ctypes.c_uint64),
        ("context_bytes", ctypes.c_uint64),
        ("flags", ctypes.c_uint32),
        ("used_bytes", ctypes.c_uint64),
        ("reserved_bytes", ctypes.c_uint64),
        ("source", ctypes.c_uint32),
        ("context_held", ctypes.c_uint32),
    ]


class Requirements(ctypes.Structure):
    """gpuprobe_requirements."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("min_free_bytes", ctypes.c_uint64),
        ("min_cc_major", ctypes.c_int32),
        ("min_cc_minor", ctypes.c_int32),
        ("fit_params", ctypes.c_uint64),
        ("fit_dtype", ctypes.c_int32),
        ("fit_workload", ctypes.c_int32),
        ("max_utilization", ctypes.c_int32),
        ("no_other_process", ctypes.c_int32),
    ]


class Requirements12(Requirements):
    """gpuprobe_requirements of 1.2: a model (and its workload) a device
    must hold."""

    _fields_ = [("fit_model", ctypes.c_void_p), ("fit_plan", ctypes.c_void_p)]


class SpeedFigures(ctypes.Structure):
    """gpuprobe_speed_figures (1.2)."""

    _fields_ = [("size", ctypes.c_size_t), ("read_bytes_per_s", ctypes.c_double),
                ("decode_flops", ctypes.c_double), ("prefill_flops", ctypes.c_double),
                ("prefill_attn_flops", ctypes.c_double), ("dtype", ctypes.c_int32),
                ("flags", ctypes.c_uint32), ("cpu_threads", ctypes.c_int32)]


SPEED_DOUBLES = (
    "prefill_s", "prefill_flop", "prefill_bytes", "prefill_compute_s", "prefill_memory_s",
    "prefill_flops", "decode_s", "decode_tokens_per_s", "decode_batch_tokens_per_s",
    "decode_weight_bytes", "decode_bytes_first", "decode_bytes_last", "decode_bytes_mean",
    "decode_flop_mean", "decode_step_first_s", "decode_step_last_s", "read_bytes_per_s",
    "decode_flops", "layer_overhead_s", "efficiency", "total_s",
)


class SpeedStruct(ctypes.Structure):
    """gpuprobe_speed (1.2)."""

    _fields_ = ([("size", ctypes.c_size_t)] + [(n, ctypes.c_double) for n in SPEED_DOUBLES]
                + [("prefill_bound", ctypes.c_uint32), ("decode_bound", ctypes.c_uint32),
                   ("decode_memory_steps", ctypes.c_uint64), ("flags", ctypes.c_uint32)])


class PlanStruct(ctypes.Structure):
    """gpuprobe_plan."""

    _fields_ = [("size", ctypes.c_size_t)] + [
        (name, ctypes.c_uint64)
        for name in (
            "params", "active_params", "kv_bytes_per_token", "weights_bytes",
            "gradient_bytes", "optimizer_bytes", "kv_cache_bytes",
            "activation_bytes", "overhead_bytes", "margin_bytes", "total_bytes",
            "available_bytes", "largest_context", "largest_batch",
        )
    ] + [
        ("overhead_source", ctypes.c_uint32),
        ("fits", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
    ]


def new_struct(kind: Any) -> Any:
    """A struct of `kind` with its size member set, as the _INIT macros do."""
    s = kind()
    s.size = ctypes.sizeof(kind)
    return s


def new_requirements(kind: Any = Requirements) -> Requirements:
    """GPUPROBE_REQUIREMENTS_INIT: no requirement (kind: Requirements, or
    Requirements12 for a 1.2 library)."""
    r = new_struct(kind)
    r.fit_dtype = 3  # fp16, as the initialiser has it
    r.max_utilization = -1
    return r


# ---- prototypes ------------------------------------------------------------

_p = ctypes.c_void_p
_pp = ctypes.POINTER(ctypes.c_void_p)
_st = ctypes.c_int
_u = ctypes.c_uint
_sz = ctypes.c_size_t
_i64 = ctypes.c_int64
_u64 = ctypes.c_uint64
_str = ctypes.c_char_p
_pstr = ctypes.POINTER(ctypes.c_char_p)
_pi64 = ctypes.POINTER(ctypes.c_int64)
_pu64 = ctypes.POINTER(ctypes.c_uint64)
_psz = ctypes.POINTER(ctypes.c_size_t)
_pint = ctypes.POINTER(ctypes.c_int)

# name: (restype, argtypes)
PROTOTYPES = {
    "gpuprobe_version": (_u, []),
    "gpuprobe_version_string": (_str, []),
    "gpuprobe_status_string": (_str, [_st]),
    "gpuprobe_status_name": (_str, [_st]),
    "gpuprobe_context_create": (_st, [_pp, _u]),
    "gpuprobe_context_destroy": (None, [_p]),
    "gpuprobe_last_error": (_str, [_p]),
    "gpuprobe_cuda_status": (_st, [_p, _pint, _pstr]),
    "gpuprobe_cuda_cause_string": (_str, [_st]),
    "gpuprobe_cuda_cause_name": (_str, [_st]),
    "gpuprobe_cuda_driver_version": (_st, [_p, _pint]),
    "gpuprobe_cuda_runtime_version": (_st, [_p, _pint]),
    "gpuprobe_device_count": (_st, [_p, _psz]),
    "gpuprobe_device_get_int": (_st, [_p, _sz, _st, _pi64]),
    "gpuprobe_device_get_string": (_st, [_p, _sz, _st, _pstr]),
    "gpuprobe_device_memory": (_st, [_p, _sz, ctypes.POINTER(MemoryInfo), _u]),
    "gpuprobe_dtype_name": (_str, [_st]),
    "gpuprobe_dtype_parse": (_st, [_str, _pint]),
    "gpuprobe_workload_name": (_str, [_st]),
    "gpuprobe_select": (_st, [_p, _str, ctypes.POINTER(Requirements), _u, _psz, _pstr]),
    "gpuprobe_matmul_options_create": (_st, [_pp]),
    "gpuprobe_matmul_options_destroy": (None, [_p]),
    "gpuprobe_matmul_options_set": (_st, [_p, _st, _i64]),
    "gpuprobe_matmul_param_bounds": (_st, [_st, _pi64, _pi64]),
    "gpuprobe_matmul_run": (_st, [_p, _sz, _p, _u, _pp]),
    "gpuprobe_matmul_result_destroy": (None, [_p]),
    "gpuprobe_matmul_result_get_double": (_st, [_p, _st, ctypes.POINTER(ctypes.c_double)]),
    "gpuprobe_matmul_result_get_int": (_st, [_p, _st, _pi64]),
    "gpuprobe_matmul_result_get_string": (_st, [_p, _st, _pstr]),
    "gpuprobe_model_create": (_st, [_pp]),
    "gpuprobe_model_destroy": (None, [_p]),
    "gpuprobe_model_set": (_st, [_p, _st, _i64]),
    "gpuprobe_model_get": (_st, [_p, _st, _pi64]),
    "gpuprobe_model_param_bounds": (_st, [_st, _pi64, _pi64]),
    "gpuprobe_plan_options_create": (_st, [_pp]),
    "gpuprobe_plan_options_destroy": (None, [_p]),
    "gpuprobe_plan_options_set": (_st, [_p, _st, _i64]),
    "gpuprobe_plan_param_bounds": (_st, [_st, _pi64, _pi64]),
    "gpuprobe_plan_compute": (_st, [_p, _p, _p, _u, ctypes.POINTER(PlanStruct)]),
    "gpuprobe_plan_device": (_st, [_p, _sz, _p, _p, _u, ctypes.POINTER(PlanStruct)]),
    "gpuprobe_plan_gpus": (_st, [_p, _p, _p, _u, _psz, _psz, _sz]),
}

# The 1.2 functions the package uses when the library has them.
PROTOTYPES_12 = {
    "gpuprobe_speed_options_create": (_st, [_pp]),
    "gpuprobe_speed_options_destroy": (None, [_p]),
    "gpuprobe_speed_options_set": (_st, [_p, _st, _i64]),
    "gpuprobe_speed_param_bounds": (_st, [_st, _pi64, _pi64]),
    "gpuprobe_speed_measure": (_st, [_p, _sz, _p, _p, _p, _u, ctypes.POINTER(SpeedFigures)]),
    "gpuprobe_speed_compute": (_st, [_p, _p, _p, _p, ctypes.POINTER(SpeedFigures), _u,
                                     ctypes.POINTER(SpeedStruct)]),
}


# ---- finding and loading the library --------------------------------------


def _candidates() -> List[Tuple[str, str]]:
    """Where the library is looked for, in order: (how, what to dlopen)."""
    env = os.environ.get("GPUPROBE_LIBRARY", "")
    if env:
        # Set: that file and nothing else (a wrong value is an error, not a
        # reason to load some other copy).
        return [("GPUPROBE_LIBRARY", os.path.abspath(env))]
    beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), SONAME)
    return [("beside the package", beside), ("on the system loader's path", SONAME)]


def _open(path: str) -> ctypes.CDLL:
    return ctypes.CDLL(path, mode=getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 2))


def _check_version(lib: ctypes.CDLL, where: str) -> None:
    try:
        fn = lib.gpuprobe_version
    except AttributeError:
        raise LibraryError("%s has no gpuprobe_version(): it is not libgpuprobe" % where) from None
    fn.restype = ctypes.c_uint
    fn.argtypes = []
    number = fn()
    major, minor, patch = number // 10000, number // 100 % 100, number % 100
    found = "%d.%d.%d" % (major, minor, patch)
    need = "%d.%d" % REQUIRED
    if major != REQUIRED[0]:
        raise LibraryError(
            "%s is libgpuprobe %s: this gpuprobe package needs major version %d "
            "(%s or a later 1.x)" % (where, found, REQUIRED[0], need))
    if minor < REQUIRED[1]:
        raise LibraryError(
            "%s is libgpuprobe %s, too old: this gpuprobe package needs %s or a "
            "later 1.x (the GPUPROBE_%s functions); install a newer libgpuprobe1"
            % (where, found, need, need))


def _bind(lib: ctypes.CDLL, where: str) -> None:
    for name, (restype, argtypes) in PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise LibraryError("%s lacks %s(), which libgpuprobe %d.%d has" % (
                where, name, REQUIRED[0], REQUIRED[1])) from None
        fn.restype = restype
        fn.argtypes = argtypes
    if lib.gpuprobe_version() >= 10200:
        for name, (restype, argtypes) in PROTOTYPES_12.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes


def _loaded_path(lib: ctypes.CDLL, fallback: str) -> str:
    """The file the dynamic loader mapped (dladdr), else what was asked for."""

    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

    for libc in (None, "libdl.so.2"):
        try:
            dladdr = ctypes.CDLL(libc).dladdr
        except (OSError, AttributeError):
            continue
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
        dladdr.restype = ctypes.c_int
        info = DlInfo()
        addr = ctypes.cast(lib.gpuprobe_version, ctypes.c_void_p).value
        if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
            return os.fsdecode(info.dli_fname)
    return fallback


class Library:
    """The loaded library: its ctypes handle, path and version."""

    def __init__(self, lib: ctypes.CDLL, path: str) -> None:
        self.c = lib
        self.path = path
        self.version = lib.gpuprobe_version_string().decode("ascii", "replace")
        self.version_number = lib.gpuprobe_version()

    def __repr__(self) -> str:
        return "<libgpuprobe %s at %s>" % (self.version, self.path)

    def check(self, status: int, ctx: Optional[int] = None, message: Optional[str] = None) -> None:
        """Raise the exception of a failed status, with the context's message."""
        if status == OK:
            return
        raise self.error(status, ctx, message)

    def error(self, status: int, ctx: Optional[int] = None, message: Optional[str] = None):
        """The exception for a failed status."""
        if message is None:
            message = self.c.gpuprobe_last_error(ctx).decode("ascii", "replace") if ctx else ""
        name = self.c.gpuprobe_status_name(status).decode("ascii")
        text = self.c.gpuprobe_status_string(status).decode("ascii")
        return error_for_status(status, name, text, message)


_LOCK = _thread.allocate_lock()
_LIBRARY: Optional[Library] = None


def load() -> Library:
    """The library, loaded at the first call: GPUPROBE_LIBRARY when set and
    not empty, else libgpuprobe.so.1 beside this package, else through the
    system loader. Raises LibraryError saying where it looked and why each
    place failed, or what is too old."""
    global _LIBRARY
    if _LIBRARY is not None:
        return _LIBRARY
    with _LOCK:
        if _LIBRARY is None:
            _LIBRARY = _load()
    return _LIBRARY


def _load() -> Library:
    tried = []
    for how, target in _candidates():
        if how == "beside the package" and not os.path.exists(target):
            tried.append("%s (%s: no such file)" % (how, target))
            continue
        try:
            lib = _open(target)
        except OSError as exc:
            tried.append("%s (%s)" % (how, exc))
            continue
        path = _loaded_path(lib, target) if hasattr(lib, "gpuprobe_version") else target
        where = "%s (%s)" % (path, how)
        _check_version(lib, where)
        _bind(lib, where)
        return Library(lib, path)
    raise LibraryError(
        "%s not found: looked %s. Install libgpuprobe (Debian: libgpuprobe1), "
        "or set GPUPROBE_LIBRARY to the library's path" % (SONAME, "; ".join(tried)))
