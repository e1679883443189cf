"""C support shared by the element-wise and reduction thunks.

Three top-level C texts every such thunk's module gets (``SUPPORT``): the libmvec SIMD
declarations, the scalar helpers the scalar Ops' C expressions call
(``graphc/scalar/c_code.py``), and the drivers in ``elemwise_driver.c``: argument checks,
broadcasting, output reuse, ``gc_ew_loop`` (the element loop: it collapses dimensions and
picks the contiguous or the strided kernel per run, expanding broadcast operands into block
buffers) and ``gc_reduce``/``gc_reduce_acc`` (the reduction loops). The kernels themselves
are emitted per node by the generators.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from graphc.linker.c.common import INT_DTYPES, ctype
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


_INT_CTYPES = tuple(ctype(dt) for dt in (*INT_DTYPES, "bool"))

# Helpers called by the scalar Ops' C expressions (graphc/scalar/c_code.py).
_SCALAR_HELPERS = (
    r"""
/* Python-semantics floor division and modulo; x // 0 == x % 0 == 0 as numpy. */
#define GC_DEF_INT(T)                                                              \
static inline T gc_floordiv_##T(T a, T b) {                                        \
    if (b == 0) return 0;                                                          \
    if ((T)-1 < 0 && b == (T)-1) return (T)(0 - (npy_uint64)a);                    \
    T q = a / b;                                                                   \
    if ((a % b) != 0 && ((a < 0) != (b < 0))) q--;                                 \
    return q;                                                                      \
}                                                                                  \
static inline T gc_mod_##T(T a, T b) {                                             \
    if (b == 0) return 0;                                                          \
    if ((T)-1 < 0 && b == (T)-1) return 0;                                         \
    T r = a % b;                                                                   \
    if (r != 0 && ((r < 0) != (b < 0))) r += b;                                    \
    return r;                                                                      \
}                                                                                  \
static inline T gc_abs_##T(T a) { return a < 0 ? (T)(0 - (npy_uint64)a) : a; }
"""
    + "\n".join(f"GC_DEF_INT({t})" for t in _INT_CTYPES)
    + r"""
#define GC_DEF_FLT(T, F)                                                           \
static inline T gc_floordiv_##T(T a, T b) {                                        \
    if (b == 0) return a / b;                                                      \
    T mod = fmod##F(a, b);                                                         \
    T div = (a - mod) / b;                                                         \
    if (mod != 0) { if ((b < 0) != (mod < 0)) div -= 1; }                          \
    if (div != 0) {                                                                \
        T fl = floor##F(div);                                                      \
        if (div - fl > (T)0.5) fl += 1;                                            \
        return fl;                                                                 \
    }                                                                              \
    return copysign##F((T)0, a / b);                                               \
}                                                                                  \
static inline T gc_mod_##T(T a, T b) {                                             \
    if (b == 0) return fmod##F(a, b);                                              \
    T mod = fmod##F(a, b);                                                         \
    if (mod != 0) { if ((b < 0) != (mod < 0)) mod += b; }                          \
    else mod = copysign##F((T)0, b);                                               \
    return mod;                                                                    \
}                                                                                  \
static inline T gc_sigmoid_##T(T x) {                                              \
    T e = exp##F(-fabs##F(x));                                                     \
    return x >= 0 ? (T)1 / ((T)1 + e) : e / ((T)1 + e);                           \
}                                                                                  \
static inline T gc_softplus_##T(T x) {                                             \
    return (x > 0 ? x : (T)0) + log1p##F(exp##F(-fabs##F(x)));                     \
}                                                                                  \
static inline T gc_max_##T(T a, T b) { return (a >= b || a != a) ? a : b; }        \
static inline T gc_min_##T(T a, T b) { return (a <= b || a != a) ? a : b; }
GC_DEF_FLT(npy_float64, )
GC_DEF_FLT(npy_float32, f)
"""
)

# The loop drivers, kept as C source beside this module (installed as package data).
_DRIVER = "\n" + Path(__file__).with_name("elemwise_driver.c").read_text(encoding="utf-8") + "\n"

SUPPORT = (_mvec_decls(), _SCALAR_HELPERS, VECMATH, _DRIVER)


def _hash(text: str) -> str:
    """A short digest of a kernel's text: it names the kernel, so equal kernels share one."""
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _store(expr: str, dtype: str) -> str:
    """``expr`` converted for a store into ``dtype`` (bool: nonzero is true, as numpy)."""
    if dtype == "bool":
        return f"(npy_bool)(({expr}) != 0)"
    return f"({ctype(dtype)})({expr})"
