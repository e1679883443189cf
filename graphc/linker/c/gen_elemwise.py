"""C thunks for Elemwise.

Numpy broadcasting checked at run time, any strides (negative, zero), in-place outputs,
output buffers reused when the slot's previous array is free. Each node gets two kernels
over one run of elements: a contiguous one (``#pragma omp simd``: exp, log, tanh, sigmoid,
... are graphc's inline vector math, ``vecmath.py``; other functions call libmvec's SIMD
variants) and a strided one. The shared driver ``gc_ew_loop``
(``elemwise_driver.c``) collapses dimensions and picks the kernel per run; zero-stride
(broadcast) operands of an otherwise contiguous run are expanded into a small block buffer
so the contiguous kernel still applies.

The thunk body is built in steps: declarations, input checks, in-place checks, operands,
outputs, then the loop call and the cleanup.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphc.graph.basic import Apply
from graphc.linker.c.common import c_string, ctype, typenum
from graphc.linker.c.elemwise_support import SUPPORT, _hash, _store
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.linker.c.vecmath import calls_bounded
from graphc.scalar.basic import Composite, ScalarOp
from graphc.scalar.c_code import c_expr, composite_c_body
from graphc.tensor.elemwise import Elemwise


def elemwise_exprs(
    op: ScalarOp, names: Sequence[str], in_dtypes: Sequence[str], out_dtypes: Sequence[str]
) -> tuple[list[str], list[str]] | None:
    """Statements and output expressions of a scalar Op over element names, or None."""
    if isinstance(op, Composite):
        return composite_c_body(op, names)
    if len(out_dtypes) != 1:
        return None
    e = c_expr(op, list(names), list(in_dtypes), out_dtypes[0])
    return None if e is None else ([], [e])


def scalar_code(
    op: ScalarOp, in_dt: Sequence[str], out_dt: Sequence[str]
) -> tuple[list[str], list[str]] | None:
    """``elemwise_exprs`` over the elements ``x0, x1...``, or None when ``op`` has no C."""
    names = [f"x{k}" for k in range(len(in_dt))]
    try:
        return elemwise_exprs(op, names, in_dt, out_dt)
    except (NotImplementedError, ValueError, TypeError):
        return None


def _kernels(in_dt: list[str], out_dt: list[str], lines: list[str], outs: list[str]) -> str:
    """NAME_c (contiguous run, vectorized) and NAME_s (strided run) of one node."""
    nin = len(in_dt)
    # Base pointers are loaded once, before the loop: read inside it (where a store through
    # an output could, for the compiler, change p[] itself) they become gathers/scatters.
    bases_c = [f"const {ctype(d)} *q{k} = (const {ctype(d)} *)p[{k}];" for k, d in enumerate(in_dt)]
    bases_c += [
        f"{ctype(d)} *q{nin + k} = ({ctype(d)} *)p[{nin + k}];" for k, d in enumerate(out_dt)
    ]
    reads_c = [f"const {ctype(d)} x{k} = q{k}[i];" for k, d in enumerate(in_dt)]
    reads_s = [
        f"const {ctype(d)} x{k} = *(const {ctype(d)} *)(p[{k}] + i * s[{k}]);"
        for k, d in enumerate(in_dt)
    ]
    writes_c = [f"q{nin + k}[i] = {_store(e, d)};" for k, (e, d) in enumerate(zip(outs, out_dt))]
    writes_s = [
        f"*({ctype(d)} *)(p[{nin + k}] + i * s[{nin + k}]) = {_store(e, d)};"
        for k, (e, d) in enumerate(zip(outs, out_dt))
    ]
    # Outputs are written after all inputs of the element are read (in-place safe).
    inner_c = "\n        ".join([*reads_c, *lines, *writes_c])
    inner_s = "\n        ".join([*reads_s, *lines, *writes_s])
    return calls_bounded(
        "static void NAME_c(npy_intp n, char **p) {\n"
        + "".join(f"    {b}\n" for b in bases_c)
        + "#pragma omp simd\n"
        "    for (npy_intp i = 0; i < n; i++) {\n"
        f"        {inner_c}\n"
        "    }\n"
        "}\n"
        "static void NAME_s(npy_intp n, char **p, const npy_intp *s) {\n"
        "    for (npy_intp i = 0; i < n; i++) {\n"
        f"        {inner_s}\n"
        "    }\n"
        "}\n"
    )


def _declarations(label: str, nin: int, nop: int, ndx: int) -> list[str]:
    return [
        f"    const char *name = {label};",
        f"    PyArrayObject *in[{nin}], *tmp[{nin}], *own[{nin}];",
        f"    npy_intp shape[{ndx}], st[{nop * ndx}];",
        f"    char *data[{nop}];",
        f"    int es[{nop}];",
        "    int rc = -1;",
        f"    for (int k = 0; k < {nin}; k++) tmp[k] = own[k] = NULL;",
    ]


def _input_checks(in_dt: list[str], nd: int, inplace: dict[int, int]) -> list[str]:
    """Inputs as arrays of the declared types, broadcast to ``shape``, aligned (copies of
    misaligned ones; an in-place input must be an aligned ndarray)."""
    nin = len(in_dt)
    b = [
        f"    if (!(own[{k}] = in[{k}] = gc_input(inputs[{k}], {k}, {nd}, {typenum(d)}, name)))"
        " goto done;"
        for k, d in enumerate(in_dt)
    ]
    for j in set(inplace.values()):
        b.append(
            f"    if ((PyObject *)in[{j}] != inputs[{j}]) {{ PyErr_Format(PyExc_TypeError, "
            '"%s: the in-place input is not an ndarray", name); goto done; }'
        )
    b.append(f"    if (gc_broadcast(in, {nin}, {nd}, shape, name) < 0) goto done;")
    for k in range(nin):
        if k in inplace.values():
            b.append(
                f"    if (!PyArray_ISALIGNED(in[{k}])) {{ PyErr_Format(PyExc_ValueError, "
                '"%s: the in-place input is not aligned", name); goto done; }'
            )
            continue
        b.append(
            f"    if (!PyArray_ISALIGNED(in[{k}])) {{\n"
            f"        if (!(tmp[{k}] = (PyArrayObject *)PyArray_NewCopy(in[{k}], NPY_CORDER)))"
            " goto done;\n"
            f"        in[{k}] = tmp[{k}];\n"
            "    }"
        )
    return b


def _inplace_checks(nin: int, nd: int, inplace: dict[int, int]) -> list[str]:
    """``fitJ``: whether in-place input J can hold the output. An in-place input the
    broadcast grows (an axis of unknown size that is 1 at run time) cannot: then the output
    is a new array, as without the pattern. Other inputs overlapping it are copied first."""
    b = []
    for j in set(inplace.values()):
        b.append(f"    int fit{j} = 1;")
        b.append(
            f"    for (int d = 0; d < {nd}; d++) fit{j} &= PyArray_DIM(in[{j}], d) == shape[d];"
        )
        b.append(
            f'    if (fit{j} && PyArray_FailUnlessWriteable(in[{j}], "an in-place input") < 0)'
            " goto done;"
        )
        for k in range(nin):
            if k == j:
                continue
            b.append(
                f"    if (fit{j} && !tmp[{k}] && in[{k}] != in[{j}] && gc_overlap(in[{k}], in[{j}])"
                f" && !gc_same_layout(in[{k}], in[{j}])) {{\n"
                f"        if (!(tmp[{k}] = (PyArrayObject *)PyArray_NewCopy(in[{k}], NPY_CORDER)))"
                " goto done;\n"
                f"        in[{k}] = tmp[{k}];\n"
                "    }"
            )
    return b


def _input_operands(in_dt: list[str], nd: int) -> list[str]:
    b = []
    for k, d in enumerate(in_dt):
        b.append(f"    data[{k}] = PyArray_BYTES(in[{k}]); es[{k}] = {np.dtype(d).itemsize};")
        b.append(f"    gc_strides(in[{k}], {nd}, &st[{k * max(nd, 1)}]);")
    return b


def _outputs(nin: int, out_dt: list[str], nd: int, inplace: dict[int, int]) -> list[str]:
    """Each output: its in-place input when that fits, else a reused or new array."""
    b = []
    for o, d in enumerate(out_dt):
        slot = nin + o
        if o in inplace:
            j = inplace[o]
            b.append(
                f"    {{ PyArrayObject *a = in[{j}];\n"
                f"      if (fit{j}) {{\n"
                f"        Py_INCREF((PyObject *)inputs[{j}]);\n"
                f"        Py_XSETREF(*o{o}, (PyObject *)inputs[{j}]);\n"
                f"      }} else if (!(a = gc_prepare_output(o{o}, {nd}, shape, {typenum(d)}))) {{\n"
                "        goto done;\n"
                "      }"
            )
        else:
            b.append(
                f"    {{ PyArrayObject *a = gc_prepare_output(o{o}, {nd}, shape, {typenum(d)});"
                "\n      if (a == NULL) goto done;"
            )
        b.append(
            f"      data[{slot}] = PyArray_BYTES(a); es[{slot}] = {np.dtype(d).itemsize};"
            f" gc_strides(a, {nd}, &st[{slot * max(nd, 1)}]); }}"
        )
    return b


def _loop_and_cleanup(name: str, nin: int, nop: int, nd: int) -> list[str]:
    return [
        f"    gc_ew_loop({nop}, {nin}, {nd}, shape, data, st, es, {name}_c, {name}_s);",
        "    rc = 0;",
        "done:",
        *(f"    Py_XDECREF(tmp[{k}]); Py_XDECREF(own[{k}]);" for k in range(nin)),
        "    if (rc < 0) FAIL;",
    ]


@register_c(Elemwise)
def gen_elemwise(node: Apply) -> CThunkCode | None:
    op = node.op
    in_dt = [i.type.dtype for i in node.inputs]
    out_dt = [o.type.dtype for o in node.outputs]
    nin, nop, nd = len(in_dt), len(in_dt) + len(out_dt), node.outputs[0].type.ndim
    if nop > 64 or nd > 32:
        return None
    got = scalar_code(op.scalar_op, in_dt, out_dt)
    if got is None:
        return None
    kern = _kernels(in_dt, out_dt, *got)
    name = "gc_ew_" + _hash(kern)
    kern = kern.replace("NAME", name)
    inplace = dict(op.inplace_pattern)
    body = [
        *_declarations(c_string(str(op)), nin, nop, max(nd, 1)),
        *_input_checks(in_dt, nd, inplace),
        *_inplace_checks(nin, nd, inplace),
        *_input_operands(in_dt, nd),
        *_outputs(nin, out_dt, nd, inplace),
        *_loop_and_cleanup(name, nin, nop, nd),
    ]
    return CThunkCode(body="\n".join(body), support=(*SUPPORT, kern))
