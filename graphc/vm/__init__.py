"""VMs that run a :class:`~graphc.linker.program.Program`.

``make_vm(program, kind="cvm")`` returns the Cython stack VM (``_cvm``), or the reference
Python VM when the extension is not built (with one warning saying how to build it).
``VM`` is what the compile layer calls on any of them (also DEBUG_MODE's and MonitorMode's).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Protocol

from graphc.linker.program import Program
from graphc.vm.pyvm import PyVM
from graphc.vm.pyvm import first_unfit as _py_first_unfit

__all__ = ["VM", "make_vm", "PyVM", "cvm_available", "input_checker"]


class VM(Protocol):
    """A linked program's runner, as ``Function`` uses it."""

    failed_node: int | None  # schedule index of the node that raised in the last call

    @property
    def kind(self) -> str: ...  # "cvm", "py", "debug", "monitor"

    def __call__(self, args: Sequence[Any], /) -> list[Any]: ...  # inputs -> outputs, updates

    def stats(self) -> dict[str, Any]: ...  # run-time counters (profiling)


_CVM_MODULE: Any = None
_CVM_ERROR: str | None = None
_warned = False


def _cvm_module() -> Any:
    """The compiled extension (``graphc.vm._cvm``), imported on first use, or None when it
    is not built (``_CVM_ERROR`` says why)."""
    global _CVM_MODULE, _CVM_ERROR
    if _CVM_MODULE is None and _CVM_ERROR is None:
        try:
            from graphc.vm import _cvm
        except ImportError as exc:
            _CVM_ERROR = str(exc)
        else:
            _CVM_MODULE = _cvm
    return _CVM_MODULE


def _load_cvm() -> Any:
    module = _cvm_module()
    return None if module is None else module.CVM


def cvm_available() -> bool:
    """True when the compiled Cython VM can be imported."""
    return _load_cvm() is not None


def make_vm(program: Program, kind: str = "cvm", allow_gc: bool = True) -> VM:
    """A VM running ``program``: ``kind`` is "cvm" (Cython, the default) or "py"."""
    global _warned
    if kind == "py":
        return PyVM(program, allow_gc=allow_gc)
    if kind != "cvm":
        raise ValueError(f"unknown VM kind {kind!r} (expected 'cvm' or 'py')")
    cls = _load_cvm()
    if cls is None:
        if not _warned:
            _warned = True
            warnings.warn(
                f"graphc's compiled VM is unavailable ({_CVM_ERROR}); using the slower "
                "Python VM. Build it with `pip install -e .` or "
                "`python setup.py build_ext --inplace`.",
                RuntimeWarning,
                stacklevel=2,
            )
        return PyVM(program, allow_gc=allow_gc)
    return cls(program, allow_gc=allow_gc)


def input_checker() -> Any:
    """``first_unfit(values, checks, start)`` (see ``graphc.vm.pyvm.first_unfit``): the
    compiled VM's when it is built, else the Python one."""
    module = _cvm_module()
    return _py_first_unfit if module is None else module.first_unfit
