"""C support shared by the element-wise and reduction thunks.

Three top-level C texts every such thunk's module gets (``SUPPORT``): the libmvec SIMD
declarations, graphc's vector math (``vecmath.py``), and the drivers in
``elemwise_driver.c``: argument checks, broadcasting, output reuse, ``gc_ew_loop`` (the
element loop: it collapses dimensions and picks the contiguous or the strided kernel per
run, expanding broadcast operands into block buffers) and ``gc_reduce``/``gc_reduce_acc``
(the reduction loops). The kernels themselves are emitted per node by the generators, with
the helpers their scalar Ops' C expressions call (``c_support`` in
``graphc/scalar/c_code.py``, kept next to those expressions).
"""

from __future__ import annotations

import hashlib

from graphc.linker.c.common import c_source, ctype
from graphc.linker.c.vecmath import VECMATH

_UNARY_MVEC = (
    "acos asin atan cbrt cos cosh erf erfc exp exp10 exp2 expm1 log log10 log1p log2 "
    "sin sinh tan tanh acosh asinh atanh"
).split()
_BINARY_MVEC = ("pow", "atan2", "hypot")


def _mvec_decls() -> str:
    lines = ["#ifdef GRAPHC_HAVE_MVEC"]
    for f in _UNARY_MVEC:
        lines.append(f'__attribute__((simd("notinbranch"))) double {f}(double);')
        lines.append(f'__attribute__((simd("notinbranch"))) float {f}f(float);')
    for f in _BINARY_MVEC:
        lines.append(f'__attribute__((simd("notinbranch"))) double {f}(double, double);')
        lines.append(f'__attribute__((simd("notinbranch"))) float {f}f(float, float);')
    lines.append("#endif")
    return "\n".join(lines)


# The loop drivers, kept as C source beside this module (installed as package data).
PAR_POLICY = c_source("elemwise_par.c")
_DRIVER = "\n" + PAR_POLICY + c_source("elemwise_driver.c") + "\n"

SUPPORT = (_mvec_decls(), VECMATH, _DRIVER)


def _hash(text: str) -> str:
    """A short digest of a kernel's text: it names the kernel, so equal kernels share one."""
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _store(expr: str, dtype: str) -> str:
    """``expr`` converted for a store into ``dtype`` (bool: nonzero is true, as numpy)."""
    if dtype == "bool":
        return f"(npy_bool)(({expr}) != 0)"
    return f"({ctype(dtype)})({expr})"
