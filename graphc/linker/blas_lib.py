"""Which BLAS library the generated C calls: numpy's own OpenBLAS when numpy ships one.

numpy's wheels carry an OpenBLAS with 64-bit integers (``scipy_dgemm_64_``...), scipy's a
second one with 32-bit integers, each with its own pool of threads. Calling numpy's makes
graphc's products and the user's numpy products share one pool (two pools on the same cores
slow both, see ``blas_threads``) and run the same kernels. The ``blas_library`` flag picks:

- ``auto`` (default): numpy's OpenBLAS when it can be found, else scipy's ``cython_blas``;
- ``numpy``: numpy's OpenBLAS, or an error saying why it cannot be used;
- ``scipy``: scipy's ``cython_blas`` (32-bit integers).

The C code is generated for one library and integer width (``graphc_bint``) and asks for the
routines' addresses with ``addresses(source, ilp64)`` when its module loads.
"""

from __future__ import annotations

import ctypes
import functools
import os
from dataclasses import dataclass

import numpy as np

from graphc.flags import config

__all__ = ["ROUTINES", "BlasLibrary", "addresses", "blas_library"]

ROUTINES = ("sgemm", "dgemm", "sgemv", "dgemv", "sdot", "ddot")

# (symbol prefix, suffix) spellings of OpenBLAS builds, most specific first
_MANGLINGS = (("scipy_", "_64_"), ("", "_64_"), ("scipy_", "_"), ("", "_"))
_CONFIG_FNS = ("scipy_openblas_get_config64_", "openblas_get_config64_",
               "scipy_openblas_get_config", "openblas_get_config")  # fmt: skip


@dataclass(frozen=True)
class BlasLibrary:
    """A BLAS the generated C can call: ``source`` ('numpy' or 'scipy'), the shared
    library's path, whether its integers are 64-bit, and the addresses of ``ROUTINES``."""

    source: str
    filepath: str
    ilp64: bool
    addresses: tuple[int, ...]


class BlasUnavailable(RuntimeError):
    """The requested BLAS library cannot be used in this process."""


def _numpy_blas_path() -> str:
    """The path of the OpenBLAS numpy loaded (threadpoolctl sees the process's libraries)."""
    home = os.path.dirname(os.path.realpath(np.__file__))
    roots = (home + os.sep, home + ".libs" + os.sep)
    try:
        from threadpoolctl import ThreadpoolController  # optional: see blas_threads
    except ImportError:
        raise BlasUnavailable("threadpoolctl is not installed") from None
    for lib in ThreadpoolController().lib_controllers:
        path = os.path.realpath(lib.filepath or "")
        if lib.internal_api == "openblas" and path.startswith(roots):
            return path
    raise BlasUnavailable("numpy was not built with an OpenBLAS of its own")


def _symbol(lib: ctypes.CDLL, names) -> tuple[str, int] | None:
    for name in names:
        try:
            fn = getattr(lib, name)
        except AttributeError:
            continue
        return name, ctypes.cast(fn, ctypes.c_void_p).value or 0
    return None


def _numpy_library() -> BlasLibrary:
    path = _numpy_blas_path()
    lib = ctypes.CDLL(path)  # already loaded by numpy: this only looks it up
    found = _symbol(lib, _CONFIG_FNS)
    if found is None:
        raise BlasUnavailable(f"{path} has no openblas_get_config")
    getter = getattr(lib, found[0])
    getter.restype = ctypes.c_char_p
    ilp64 = b"USE64BITINT" in (getter() or b"")
    for prefix, suffix in _MANGLINGS:
        names = [prefix + r + suffix for r in ROUTINES]
        found_all = [_symbol(lib, [n]) for n in names]
        if all(found_all) and ilp64 == ("64" in suffix):
            return BlasLibrary("numpy", path, ilp64, tuple(f[1] for f in found_all if f))
    raise BlasUnavailable(f"{path} does not export the Fortran BLAS routines graphc calls")


def _scipy_library() -> BlasLibrary:
    from scipy.linalg import cython_blas  # ~0.1 s: loaded only when it is the one used

    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
    get_ptr.restype, get_ptr.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    capi = cython_blas.__pyx_capi__
    addrs = tuple(get_ptr(capi[r], get_name(capi[r])) or 0 for r in ROUTINES)
    return BlasLibrary("scipy", cython_blas.__file__ or "", False, addrs)


@functools.cache
def _found(source: str) -> BlasLibrary | BlasUnavailable:
    try:
        return _numpy_library() if source == "numpy" else _scipy_library()
    except BlasUnavailable as exc:
        return exc


def _library(source: str) -> BlasLibrary:
    found = _found(source)
    if isinstance(found, BlasUnavailable):
        raise found
    return found


def blas_library(choice: str | None = None) -> BlasLibrary:
    """The library the ``blas_library`` flag (or ``choice``) selects in this process."""
    choice = choice or config.blas_library
    if choice == "auto":
        try:
            return _library("numpy")
        except BlasUnavailable:
            return _library("scipy")
    try:
        return _library(choice)
    except BlasUnavailable as exc:
        raise BlasUnavailable(f"blas_library={choice}: {exc}") from None


def addresses(source: str, ilp64: bool) -> tuple[int, ...]:
    """The addresses of ``ROUTINES`` in ``source``'s library, for C compiled against it;
    ImportError when that library is not available or has another integer width."""
    try:
        lib = _library(source)
    except BlasUnavailable as exc:
        raise ImportError(f"graphc C module built for {source}'s BLAS: {exc}") from None
    if lib.ilp64 != bool(ilp64):
        raise ImportError(f"graphc C module built for {source}'s BLAS with other integers")
    return lib.addresses
