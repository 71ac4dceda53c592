"""gpuprobe: what compute is here, and what can it do, from Python.

A ctypes binding over the installed C library libgpuprobe.so.1: nothing is
computed in Python, so the answers are the library's own and the same as
its commands'. Importing the package loads nothing; the library is loaded
at the first call (``GPUPROBE_LIBRARY`` when set, else a copy beside the
package, else the system loader's) and its version checked then.

    >>> import gpuprobe
    >>> gpuprobe.cuda_status()            # is CUDA usable, and if not, why
    >>> gpuprobe.devices()                # the CPU and every GPU, no CUDA context made
    >>> dev = gpuprobe.select("auto", min_free="8GiB")
    >>> dev.torch_device, dev.reason
    >>> gpuprobe.visible_devices()        # for CUDA_VISIBLE_DEVICES, before importing a framework
    >>> gpuprobe.matmul(5000, "fp32", "cpu")
    >>> gpuprobe.plan("Llama-3.1-8B", context=8192)

The module-level functions use one default :class:`Context`, created at
first use and closed at exit; make your own (``with gpuprobe.Context() as
ctx:``) to control when the library's state (the CUDA state of GPU
matmuls) is released. Failures raise :class:`Error` subclasses named after
the library's statuses (:class:`NoFitError`, :class:`CudaUnavailableError`,
...). See docs/python.md.
"""

from __future__ import annotations

from . import _lib
from ._context import Context, close, default_context
from ._errors import (
    CudaError,
    CudaUnavailableError,
    DeviceOutOfMemoryError,
    Error,
    InternalError,
    InvalidArgumentError,
    LibraryError,
    NoFitError,
    NotFoundError,
    OutOfMemoryError,
    OverflowError,
    SystemError,
    UnsupportedError,
    VerifyFailedError,
)
from ._status import CudaStatus

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, Dict, List, Sequence, Union

    from ._types import Device, MatmulResult, Model, Plan, Speed, Workload

_LAZY = ("Device", "MatmulResult", "Model", "Plan", "Speed", "Workload")

__version__ = "1.2.0"

# OverflowError and SystemError (the statuses' names) are left out of
# __all__ so that a star import does not shadow the builtins.
__all__ = [
    "Context", "CudaError", "CudaStatus", "CudaUnavailableError", "Device",
    "DeviceOutOfMemoryError", "Error", "InternalError", "InvalidArgumentError",
    "LibraryError", "MatmulResult", "Model", "NoFitError", "NotFoundError",
    "OutOfMemoryError", "Plan", "Speed", "UnsupportedError", "VerifyFailedError", "Workload",
    "close", "cuda_status", "default_context", "devices", "fewest_gpus",
    "library_path", "library_version", "load_model", "matmul", "plan", "select", "speed",
    "shipped_models", "visible_devices",
]


def __getattr__(name: str) -> Any:
    # The dataclasses are imported when first asked for: "import gpuprobe;
    # gpuprobe.cuda_status()" never pays for the dataclasses module.
    if name in _LAZY:
        from . import _types

        return getattr(_types, name)
    raise AttributeError("module 'gpuprobe' has no attribute %r" % name)


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_LAZY))


def library_version() -> str:
    """The loaded libgpuprobe's version, e.g. "1.2.0" (loads it)."""
    return _lib.load().version


def library_path() -> str:
    """The file of the loaded libgpuprobe (loads it)."""
    return _lib.load().path


def cuda_status() -> CudaStatus:
    """Is CUDA usable, and if not, why? See :meth:`Context.cuda_status`."""
    return default_context().cuda_status()


def devices() -> List[Device]:
    """The CPU and every usable CUDA device. See :meth:`Context.devices`."""
    return default_context().devices()


def select(spec: str = "auto", **requirements: Any) -> Device:
    """The device a program should use, with its reason. See :meth:`Context.select`."""
    return default_context().select(spec, **requirements)


def visible_devices(spec: Union[str, Device, Sequence[Device]] = "auto", **requirements: Any) -> str:
    """The value for ``CUDA_VISIBLE_DEVICES``. See :meth:`Context.visible_devices`."""
    return default_context().visible_devices(spec, **requirements)


def matmul(n: int = 5000, dtype: str = "fp32", device: Any = "auto", **options: Any) -> MatmulResult:
    """A timed, verified matmul. See :meth:`Context.matmul`."""
    return default_context().matmul(n, dtype, device, **options)


def load_model(model: Any) -> Model:
    """A model for :func:`plan`. See :meth:`Context.load_model`."""
    return default_context().load_model(model)


def plan(model: Any, **kwargs: Any) -> Plan:
    """Will this model fit, and with how much context? See :meth:`Context.plan`."""
    return default_context().plan(model, **kwargs)


def speed(model: Any, **kwargs: Any) -> Speed:
    """How fast will this model run here: the time to the first token and
    decode tokens/s, from figures measured on the device. See
    :meth:`Context.speed`."""
    return default_context().speed(model, **kwargs)


def fewest_gpus(model: Any, **workload: Any) -> List[Device]:
    """The fewest GPUs that hold the model. See :meth:`Context.fewest_gpus`."""
    return default_context().fewest_gpus(model, **workload)


def shipped_models() -> Dict[str, str]:
    """The model configs shipped with libgpuprobe that are installed here:
    name -> path (the names :func:`plan` takes)."""
    from . import _models

    return _models.shipped_models(_lib.load().path)
