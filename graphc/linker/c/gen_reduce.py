"""C thunks for the reductions: CAReduce and Argmax.

A CAReduce or Argmax node gets three functions over one output element: ``NAME_init``
(the accumulator), ``NAME_step`` (one run of the reduced axes: n elements at byte stride
s) and ``NAME_fin`` (store into the output), driven by ``gc_reduce`` (``elemwise_driver.c``).
When the accumulator has the output's type a CAReduce also gets ``NAME_c``/``NAME_s``,
element kernels of ``out = op(out, x)`` that ``gc_reduce_acc`` runs over the input in
memory order when its innermost axis is kept. The kernels of each reduction are built from
the parts of its scalar Op's class in ``_REDUCTIONS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from graphc.graph.basic import Apply
from graphc.graph.rules import RuleTable
from graphc.linker.c.common import C_LIMITS, c_string, ctype, typenum
from graphc.linker.c.elemwise_support import SUPPORT, _hash, _store
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.scalar import basic as ps
from graphc.scalar.c_code import c_expr, c_support
from graphc.tensor.math import Argmax, CAReduce


class _Parts(NamedTuple):
    """One reduction kind's C, with ``$T`` the input, ``$A`` the accumulator and ``$O`` the
    output type: the accumulator's identity, the body of NAME_step (which updates ``a``
    from the run ``p``, ``n``, ``s``) and the combination of an output ``x1`` with an
    input element ``x0``."""

    acc: str
    ident: str
    step: str
    comb: str


PartsRule = Callable[[ps.ScalarOp, str, str], _Parts]


def _sum_parts(op: ps.ScalarOp, in_dt: str, acc_dt: str) -> _Parts:
    # float32 runs are converted to double in the vectorized loop (Theano's acc_dtype);
    # four contiguous streams, each vectorized: independent partial sums
    step = (
        "    if (s == (npy_intp)sizeof($T) && n >= 64) {\n"
        "        const $T *q = (const $T *)p;\n"
        "        npy_intp m = n / 4;\n"
        "        $A s0 = 0, s1 = 0, s2 = 0, s3 = 0;\n"
        "#pragma omp simd reduction(+:s0, s1, s2, s3)\n"
        "        for (npy_intp i = 0; i < m; i++) {\n"
        "            s0 += ($A)q[i]; s1 += ($A)q[i + m];\n"
        "            s2 += ($A)q[i + 2 * m]; s3 += ($A)q[i + 3 * m];\n"
        "        }\n"
        "        for (npy_intp i = 4 * m; i < n; i++) s0 += ($A)q[i];\n"
        "        a += (s0 + s1) + (s2 + s3);\n"
        "    } else {\n"
        "        for (npy_intp i = 0; i < n; i++) a += ($A)*(const $T *)(p + i * s);\n"
        "    }\n"
    )
    return _Parts(ctype(acc_dt), "0", step, "(($A)x1 + ($A)x0)")


def _product_parts(op: ps.ScalarOp, in_dt: str, acc_dt: str) -> _Parts:
    # products in numpy's (sequential) order: under/overflow depend on it
    step = "    for (npy_intp i = 0; i < n; i++) a *= ($A)*(const $T *)(p + i * s);\n"
    return _Parts(ctype(acc_dt), "1", step, "(($A)x1 * ($A)x0)")


def _extreme_parts(cmp: str) -> PartsRule:
    """maximum (``cmp`` ">") and minimum ("<"); floats propagate NaN as numpy does. An
    output and an input element combine through the scalar Op's own C expression."""
    red = "max" if cmp == ">" else "min"

    def parts(op: ps.ScalarOp, in_dt: str, acc_dt: str) -> _Parts:
        t = ctype(in_dt)
        is_f = in_dt in ("float32", "float64")
        lo, hi = C_LIMITS[in_dt]
        nan_decl = "    int nan = 0;\n" if is_f else ""
        nan_red = " reduction(|:nan)" if is_f else ""
        nan_upd = " nan |= (v != v);" if is_f else ""
        nan_fin = "    if (nan && a == a) a = NAN;\n" if is_f else ""
        step = (
            f"    $A m = a;\n{nan_decl}"
            "    if (s == (npy_intp)sizeof($T)) {\n"
            "        const $T *q = (const $T *)p;\n"
            f"#pragma omp simd reduction({red}:m){nan_red}\n"
            "        for (npy_intp i = 0; i < n; i++) {\n"
            f"            $T v = q[i]; m = v {cmp} m ? v : m;{nan_upd}\n"
            "        }\n"
            "    } else {\n"
            "        for (npy_intp i = 0; i < n; i++) {\n"
            f"            $T v = *(const $T *)(p + i * s); m = v {cmp} m ? v : m;{nan_upd}\n"
            "        }\n"
            "    }\n"
            "    if (a == a) a = m;\n"
            f"{nan_fin}"
        )
        comb = c_expr(op, ["x1", "x0"], [in_dt, in_dt], in_dt)
        assert comb is not None
        return _Parts(t, lo if cmp == ">" else hi, step, comb)

    return parts


def _logical_parts(symbol: str) -> PartsRule:
    """all (``symbol`` "&") and any ("|"), starting from the scalar Op's identity."""

    def parts(op: ps.ScalarOp, in_dt: str, acc_dt: str) -> _Parts:
        step = (
            "    for (npy_intp i = 0; i < n; i++)\n"
            f"        a {symbol}= (npy_bool)(*(const $T *)(p + i * s) != 0);\n"
        )
        ident = str(int(op.identity or 0))
        return _Parts("npy_bool", ident, step, f"(x1 {symbol} (npy_bool)(x0 != 0))")

    return parts


_REDUCTIONS: RuleTable[PartsRule] = RuleTable(
    "C reduction",
    {
        ps.Add: _sum_parts,
        ps.Mul: _product_parts,
        ps.Maximum: _extreme_parts(">"),
        ps.Minimum: _extreme_parts("<"),
        ps.And: _logical_parts("&"),
        ps.Or: _logical_parts("|"),
    },
)

# a sum or product with a bool output is numpy's any or all
_AS_BOOL: dict[type[ps.ScalarOp], ps.ScalarOp] = {ps.Add: ps.or_, ps.Mul: ps.and_}


def _accumulate_kernels(comb: str, out_dt: str) -> str:
    """NAME_c and NAME_s: ``out = comb(out, x)`` over a run, for ``gc_reduce_acc``."""
    return (
        "static void NAME_c(npy_intp n, char **p) {\n"
        "    const $T *q = (const $T *)p[0]; const $O *r = (const $O *)p[1];\n"
        "    $O *o = ($O *)p[2];\n"
        "#pragma omp simd\n"
        "    for (npy_intp i = 0; i < n; i++) {\n"
        f"        const $T x0 = q[i]; const $O x1 = r[i]; o[i] = {_store(comb, out_dt)};\n"
        "    }\n"
        "}\n"
        "static void NAME_s(npy_intp n, char **p, const npy_intp *s) {\n"
        "    for (npy_intp i = 0; i < n; i++) {\n"
        "        const $T x0 = *(const $T *)(p[0] + i * s[0]);\n"
        "        const $O x1 = *(const $O *)(p[1] + i * s[1]);\n"
        f"        *($O *)(p[2] + i * s[2]) = {_store(comb, out_dt)};\n"
        "    }\n"
        "}\n"
    )


def _reduce_kernels(op: ps.ScalarOp, in_dt: str, acc_dt: str, out_dt: str) -> str | None:
    """C of NAME_init/step/fin (one output element) and NAME_c/NAME_s (out = op(out, x)
    over runs, when the accumulator ``acc_dt`` is the output type) for one reduction."""
    if out_dt == "bool":
        op = _AS_BOOL.get(type(op), op)
    parts = _REDUCTIONS.get(op)
    if parts is None:
        return None
    acc, ident, step, comb = parts(op, in_dt, acc_dt)
    fin = _store("*(const $A *)acc", out_dt)
    code = (
        f"static void NAME_init(void *acc) {{ *($A *)acc = ($A)({ident}); }}\n"
        "static void NAME_step(npy_intp n, const char *p, npy_intp s, void *acc) {\n"
        "    $A a = *($A *)acc;\n"
        f"{step}"
        "    *($A *)acc = a;\n"
        "}\n"
        f"static void NAME_fin(const void *acc, char *out) {{ *($O *)out = {fin}; }}\n"
    )
    if acc == ctype(out_dt):
        code += _accumulate_kernels(comb, out_dt)
    elif op.reduce_accumulates:  # accumulated in a temporary of the accumulator's dtype
        code += _accumulate_kernels(comb, acc_dt).replace("$O", "$A")
        code += (
            "static void NAME_fa(const void *acc, char *out) { *($A *)out = *(const $A *)acc; }\n"
        )
    return code.replace("$T", ctype(in_dt)).replace("$A", acc).replace("$O", ctype(out_dt))


def _argmax_kernels(kind: str, in_dt: str) -> str:
    t = ctype(in_dt)
    is_f = in_dt in ("float32", "float64")
    cmp = ">" if kind == "max" else "<"
    nan_else = " else if (v != v) { best = v; bi = i; break; }" if is_f else ""
    nan_first = "        if (v != v) st->nan = 1;\n" if is_f else ""
    nan_last = "        if (best != best) st->nan = 1;\n" if is_f else ""
    red = "max" if kind == "max" else "min"
    nan_decl = " int nan = 0;" if is_f else ""
    nan_red = " reduction(|:nan)" if is_f else ""
    nan_upd = " nan |= (v != v);" if is_f else ""
    nan_search = (
        "        if (nan) {\n"
        "            for (npy_intp i = 0; i < n; i++) if (q[i] != q[i]) { bi = i; break; }\n"
        "            best = q[bi];\n"
        "        }\n"
        if is_f
        else ""
    )
    return (
        f"typedef struct {{ {t} best; npy_int64 idx, k; int have, nan; }} NAME_acc;\n"
        "static void NAME_init(void *acc) { memset(acc, 0, sizeof(NAME_acc)); }\n"
        "static void NAME_step(npy_intp n, const char *p, npy_intp s, void *acc) {\n"
        "    NAME_acc *st = (NAME_acc *)acc;\n"
        "    if (n <= 0) return;\n"
        "    if (!st->have) {\n"
        f"        {t} v = *(const {t} *)p;\n"
        "        st->best = v; st->idx = st->k; st->have = 1;\n"
        f"{nan_first}"
        "        p += s; n--; st->k++;\n"
        "    }\n"
        "    if (st->nan) { st->k += n; return; }\n"
        f"    {t} best = st->best;\n"
        "    npy_intp bi = -1, len = n;\n"
        # contiguous runs: a vectorized extreme (and NaN check), then the first index of it
        f"    if (s == (npy_intp)sizeof({t}) && n >= 16) {{\n"
        f"        const {t} *q = (const {t} *)p;\n"
        f"        {t} m = q[0];{nan_decl}\n"
        f"#pragma omp simd reduction({red}:m){nan_red}\n"
        "        for (npy_intp i = 0; i < n; i++) {\n"
        f"            {t} v = q[i]; m = v {cmp} m ? v : m;{nan_upd}\n"
        "        }\n"
        f"{nan_search}"
        f"        if (bi < 0 && m {cmp} best) {{\n"
        "            for (npy_intp i = 0; i < n; i++) if (q[i] == m) { bi = i; break; }\n"
        "            best = m;\n"
        "        }\n"
        "        n = 0;\n"
        "    }\n"
        "    for (npy_intp i = 0; i < n; i++) {\n"
        f"        {t} v = *(const {t} *)(p + i * s);\n"
        f"        if (v {cmp} best) {{ best = v; bi = i; }}{nan_else}\n"
        "    }\n"
        "    if (bi >= 0) {\n"
        "        st->best = best; st->idx = st->k + bi;\n"
        f"{nan_last}"
        "    }\n"
        "    st->k += len;\n"
        "}\n"
        "static void NAME_fin(const void *acc, char *out) {\n"
        "    *(npy_int64 *)out = ((const NAME_acc *)acc)->idx;\n"
        "}\n"
    )


def _reduce_body(
    node: Apply,
    axes: tuple[int, ...],
    kern_name: str,
    reorder: int,
    empty_error: str | None,
    label: str,
    accumulate: bool,
    acc_tmp: str | None = None,
) -> str:
    x = node.inputs[0]
    in_dt, out_dt = x.type.dtype, node.outputs[0].type.dtype
    nd = x.type.ndim
    keep = [d for d in range(nd) if d not in axes]
    nk, nr = len(keep), len(axes)
    b = [
        f"    const char *name = {label};",
        f"    PyArrayObject *own = gc_input(inputs[0], 0, {nd}, {typenum(in_dt)}, name);",
        "    if (own == NULL) FAIL;",
        "    PyArrayObject *x = own, *tmp = NULL;",
        f"    npy_intp kd[{max(nk, 1)}], ks[{max(nk, 1)}], rd[{max(nr, 1)}], rs[{max(nr, 1)}];",
    ]
    for k, d in enumerate(keep):
        b.append(f"    kd[{k}] = PyArray_DIM(x, {d});")
    for k, d in enumerate(axes):
        b.append(f"    rd[{k}] = PyArray_DIM(x, {d});")
        if empty_error:
            b.append(
                f"    if (rd[{k}] == 0) {{ PyErr_Format(PyExc_ValueError, {empty_error}, name);"
                " Py_DECREF(own); FAIL; }"
            )
    b.append(
        "    if (!PyArray_ISALIGNED(x)) {\n"
        "        tmp = (PyArrayObject *)PyArray_NewCopy(x, NPY_CORDER);\n"
        "        if (tmp == NULL) { Py_DECREF(own); FAIL; }\n"
        "        x = tmp;\n"
        "    }"
    )
    for k, d in enumerate(keep):
        b.append(f"    ks[{k}] = PyArray_STRIDE(x, {d});")
    for k, d in enumerate(axes):
        b.append(f"    rs[{k}] = PyArray_STRIDE(x, {d});")
    red = ", ".join("1" if d in axes else "0" for d in range(nd)) or "0"
    use_acc, post, kn = "", "", kern_name
    if acc_tmp is not None and nk:
        use_acc, post = "!done_t &&\n        ", _acc_tmp_post()
    elif accumulate:
        use_acc = (
            f"!gc_reduce_acc(x, is_red, out, {kn}_init, {kn}_fin, {kn}_c, {kn}_s) &&\n        "
        )
    b.append(
        f"    PyArrayObject *out = gc_prepare_output(o0, {nk}, kd, {typenum(out_dt)});\n"
        "    if (out == NULL) { Py_XDECREF(tmp); Py_DECREF(own); FAIL; }\n"
        f"    static const int is_red[{max(nd, 1)}] = {{{red}}}; (void)is_red;"
    )
    if post:
        b.append(_acc_tmp_pre(kn, nk, acc_tmp or ""))
    b.append(
        f"    if ({use_acc}1) gc_reduce({nk}, kd, ks, {nr}, rd, rs, {reorder}, PyArray_BYTES(x),"
        f" PyArray_BYTES(out), {np.dtype(out_dt).itemsize},\n"
        f"              {kern_name}_init, {kern_name}_step, {kern_name}_fin);\n"
        f"{post}"
        "    Py_XDECREF(tmp);\n"
        "    Py_DECREF(own);"
    )
    return "\n".join(b)


def _acc_tmp_pre(kn: str, nk: int, acc_dt: str) -> str:
    """Run ``out = op(out, x)`` in memory order into ``at``, a temporary of the
    accumulator's dtype (``done_t`` is 0 when the input's innermost axis is reduced)."""
    return (
        f"    PyArrayObject *at = (PyArrayObject *)PyArray_EMPTY({nk}, kd, {typenum(acc_dt)}, 0);\n"
        "    if (at == NULL) { Py_XDECREF(tmp); Py_DECREF(own); FAIL; }\n"
        f"    int done_t = gc_reduce_acc(x, is_red, at, {kn}_init, {kn}_fa, {kn}_c, {kn}_s);"
    )


def _acc_tmp_post() -> str:
    """Cast ``at`` into the output when it was used, then release it."""
    return (
        "    if (done_t && PyArray_CopyInto(out, at) < 0) {\n"
        "        Py_DECREF(at); Py_XDECREF(tmp); Py_DECREF(own); FAIL;\n"
        "    }\n"
        "    Py_DECREF(at);\n"
    )


@register_c(CAReduce)
def gen_careduce(node: Apply) -> CThunkCode | None:
    op = node.op
    in_dt, out_dt = node.inputs[0].type.dtype, node.outputs[0].type.dtype
    got = _reduce_kernels(op.scalar_op, in_dt, op.accumulator(in_dt), out_dt)
    if got is None or node.inputs[0].type.ndim > 32:
        return None
    code = got
    name = "gc_red_" + _hash(code)
    code = code.replace("NAME", name)
    empty = None
    if op.scalar_op.identity is None:
        fn = op.scalar_op.name
        empty = c_string(f"%s: zero-size array to reduction operation {fn} which has no identity")
    accumulate = f"{name}_c(" in code
    acc_tmp = op.accumulator(in_dt) if f"{name}_fa(" in code else None
    body = _reduce_body(
        node, tuple(op.axis), name, 1, empty, c_string(str(op)), accumulate, acc_tmp
    )
    return CThunkCode(body=body, support=(*SUPPORT, *c_support(op.scalar_op), code))


@register_c(Argmax)
def gen_argmax(node: Apply) -> CThunkCode | None:
    op = node.op
    in_dt = node.inputs[0].type.dtype
    if node.inputs[0].type.ndim > 32 or op.kind not in ("max", "min"):
        return None
    code = _argmax_kernels(op.kind, in_dt)
    name = "gc_arg_" + _hash(code)
    code = code.replace("NAME", name)
    empty = c_string(f"%s: attempt to get the arg{op.kind} of an empty axis")
    body = _reduce_body(node, tuple(op.axis), name, 0, empty, c_string(str(op)), False)
    return CThunkCode(body=body, support=(*SUPPORT, code))
