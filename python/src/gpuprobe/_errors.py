"""The exceptions: one class per gpuprobe_status the library returns, named
after the status (``no_fit`` is :class:`NoFitError`), all under
:class:`Error`, and :class:`LibraryError` when the library itself cannot
be used."""

from __future__ import annotations

import builtins

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Dict, Optional, Type

    from ._types import MatmulResult


class Error(Exception):
    """A libgpuprobe call failed.

    ``str(error)`` is ``"<status text>: <message>"``, as the library's own
    commands print it (errors raised by this package before any library
    call, such as a model that cannot be found, have the message alone).
    Attributes:

    - ``status``: the ``gpuprobe_status`` number (``None`` for
      :class:`LibraryError`);
    - ``name``: its stable name, e.g. ``"no_fit"``;
    - ``message``: the library's message saying exactly what failed.
    """

    status: Optional[int] = None
    name = "error"

    def __init__(self, message: str, *, status: Optional[int] = None,
                 name: Optional[str] = None, text: Optional[str] = None) -> None:
        if status is not None:
            self.status = status
        if name is not None:
            self.name = name
        self.message = message
        self.text = text
        if text and message:
            super().__init__("%s: %s" % (text, message))
        else:
            super().__init__(message or text or self.name)


class LibraryError(Error):
    """libgpuprobe.so.1 could not be loaded, or is too old for this package.
    The message says where it was looked for and what is missing."""

    name = "library"

    def __init__(self, message: str) -> None:
        super().__init__(message)


class InvalidArgumentError(Error, ValueError):
    """``invalid_argument``: a bad value, a malformed device spec or model."""

    status, name = 1, "invalid_argument"


class OutOfMemoryError(Error, MemoryError):
    """``out_of_memory``: host memory ran out, or a run would not fit under
    the host's or the process's limits (the message names the limit)."""

    status, name = 2, "out_of_memory"


class DeviceOutOfMemoryError(Error):
    """``device_out_of_memory``: a device allocation failed; nothing stays
    allocated."""

    status, name = 3, "device_out_of_memory"


class NotFoundError(Error, LookupError):
    """``not_found``: no such device, or (model resolution) no such model."""

    status, name = 4, "not_found"


class UnsupportedError(Error):
    """``unsupported``: a valid request this device or build cannot do (a
    dtype, a rule, memory that cannot be read without a CUDA context)."""

    status, name = 5, "unsupported"


class CudaUnavailableError(Error):
    """``cuda_unavailable``: CUDA was asked for and is not usable; the
    message gives the cause (see :func:`gpuprobe.cuda_status`)."""

    status, name = 6, "cuda_unavailable"


class CudaError(Error):
    """``cuda``: a CUDA or cuBLAS call failed; the message names the error."""

    status, name = 7, "cuda"


class NoFitError(Error):
    """``no_fit``: no device meets the requirements; the message says which
    requirement failed on which device."""

    status, name = 8, "no_fit"


class VerifyFailedError(Error):
    """``verify_failed``: a matmul result failed verification. ``result``
    holds the figures of the run (a :class:`gpuprobe.MatmulResult`)."""

    status, name = 9, "verify_failed"
    result: Optional[MatmulResult] = None


class OverflowError(Error, builtins.OverflowError):  # noqa: A001 (the status's name)
    """``overflow``: a size or count beyond what can be represented or a
    documented limit (e.g. more than 10**15 parameters)."""

    status, name = 10, "overflow"


class SystemError(Error):  # noqa: A001 (the status's name)
    """``system``: an operating-system query failed (or a model's file could
    not be read); the message names it."""

    status, name = 11, "system"


class InternalError(Error):
    """``internal``: a bug in libgpuprobe; please report it."""

    status, name = 12, "internal"


_BY_STATUS: Dict[int, Type[Error]] = {
    cls.status: cls  # type: ignore[misc]
    for cls in (InvalidArgumentError, OutOfMemoryError, DeviceOutOfMemoryError,
                NotFoundError, UnsupportedError, CudaUnavailableError, CudaError,
                NoFitError, VerifyFailedError, OverflowError, SystemError,
                InternalError)
}


for _cls in [Error, LibraryError] + list(_BY_STATUS.values()):
    _cls.__module__ = "gpuprobe"  # as users name them


def error_for_status(status: int, name: str, text: str, message: str) -> Error:
    """The exception of a failed gpuprobe_status (an unknown status, from a
    newer library, is a plain :class:`Error` with the library's names)."""
    cls = _BY_STATUS.get(status, Error)
    return cls(message, status=status, name=name, text=text)
