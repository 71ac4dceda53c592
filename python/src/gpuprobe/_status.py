"""CudaStatus, the answer of cuda_status(): a named tuple, in a module of
its own that imports nothing costly (not even typing), so that "is CUDA
usable?" stays cheap."""

from collections import namedtuple

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple, Optional

    class CudaStatus(NamedTuple):
        available: bool
        cause: str
        reason: str
        detail: str
        driver_version: Optional[str]
        runtime_version: Optional[str]

else:

    class CudaStatus(namedtuple("CudaStatus", "available cause reason detail "
                                "driver_version runtime_version")):
        __slots__ = ()

CudaStatus.__module__ = "gpuprobe"
CudaStatus.__doc__ = """Is CUDA usable, and if not, why (:func:`gpuprobe.cuda_status`).

- ``available``: what ``torch.cuda.is_available()`` answers;
- ``cause``: a stable token: ``"available"``, ``"no_driver"``,
  ``"driver_too_old"``, ``"devices_hidden"``, ``"no_permission"``, ...;
- ``reason``: the cause in words;
- ``detail``: one line saying exactly what was found (versions, the CUDA
  error's name, the devices hidden);
- ``driver_version``: the CUDA version the driver supports, ``"13.0"``, or
  ``None`` when no driver library could be loaded;
- ``runtime_version``: the version of the CUDA runtime library loaded (what
  ``torch.version.cuda`` says of PyTorch's own), or ``None``.
"""
