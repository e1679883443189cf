"""C for shape Ops: Shape, Shape_i, Alloc, Reshape, Join, and basic Subtensor and IncSubtensor."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from graphc.graph.basic import Apply
from graphc.linker.c.common import COMMON, DTYPES, ctype, typenum
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.tensor import basic as tb
from graphc.tensor.subtensor import IncSubtensor, SliceIdx, Subtensor

# ------------------------------------------------------------------ Shape, Shape_i


@register_c(tb.Shape)
def gen_shape(node: Apply) -> CThunkCode | None:
    nd = node.inputs[0].ndim
    body = f"""
    npy_intp n = {nd};
    PyArrayObject *out = graphc_out_array(o0, 1, &n, NPY_INT64);
    if (out == NULL) FAIL;
    for (int k = 0; k < {nd}; k++)
        ((npy_int64 *)PyArray_DATA(out))[k] = PyArray_DIM(i0, k);
    Py_XSETREF(*o0, (PyObject *)out);
"""
    return CThunkCode(body=body, support=(COMMON,), key=("Shape", nd))


@register_c(tb.Shape_i)
def gen_shape_i(node: Apply) -> CThunkCode | None:
    i = node.op.i
    body = f"""
    if (PyArray_NDIM(i0) <= {i}) {{
        PyErr_SetString(PyExc_IndexError, "Shape_i{{{i}}}: axis out of range");
        FAIL;
    }}
    PyArrayObject *out = graphc_out_array(o0, 0, NULL, NPY_INT64);
    if (out == NULL) FAIL;
    *(npy_int64 *)PyArray_DATA(out) = PyArray_DIM(i0, {i});
    Py_XSETREF(*o0, (PyObject *)out);
"""
    return CThunkCode(body=body, support=(COMMON,), key=("Shape_i", i))


# ------------------------------------------------------------------ Alloc


@register_c(tb.Alloc)
def gen_alloc(node: Apply) -> CThunkCode | None:
    out = node.outputs[0]
    dt, nd = out.type.dtype, out.ndim
    if dt not in DTYPES or node.inputs[0].dtype != dt:
        return None
    ct, tn = ctype(dt), typenum(dt)
    dims = "\n".join(
        f"    if (graphc_as_intp((PyArrayObject *)inputs[{k + 1}], &dims[{k}]) < 0) FAIL;"
        for k in range(nd)
    )
    body = f"""
    npy_intp dims[{max(nd, 1)}];
{dims}
    for (int k = 0; k < {nd}; k++) {{
        if (dims[k] < 0) {{
            PyErr_SetString(PyExc_ValueError, "Alloc: negative dimensions are not allowed");
            FAIL;
        }}
    }}
    if (PyArray_TYPE(i0) != {tn}) {{
        PyErr_SetString(PyExc_TypeError, "Alloc: unexpected value dtype");
        FAIL;
    }}
    PyArrayObject *out = graphc_out_array(o0, {nd}, dims, {tn});
    if (out == NULL) FAIL;
    if (PyArray_SIZE(i0) == 1 && PyArray_NDIM(i0) <= {nd}) {{
        /* a scalar value: fill without numpy's broadcasting machinery */
        const {ct} v = *(const {ct} *)PyArray_DATA(i0);
        {ct} *d = ({ct} *)PyArray_DATA(out);
        const npy_intp n = PyArray_SIZE(out);
        for (npy_intp k = 0; k < n; k++) d[k] = v;
    }} else if (PyArray_CopyInto(out, i0) < 0) {{
        Py_DECREF(out);
        PyObject *t = PyTuple_New({nd});
        if (t != NULL) {{
            for (int k = 0; k < {nd}; k++)
                PyTuple_SET_ITEM(t, k, PyLong_FromSsize_t(dims[k]));
            PyObject *vs = graphc_shape_tuple(i0);
            if (vs != NULL) {{
                PyErr_Format(PyExc_ValueError,
                             "Alloc: cannot broadcast a value of shape %R to %R", vs, t);
                Py_DECREF(vs);
            }}
            Py_DECREF(t);
        }}
        FAIL;
    }}
    Py_XSETREF(*o0, (PyObject *)out);
"""
    return CThunkCode(body=body, support=(COMMON,), key=("Alloc", dt, nd))


# ------------------------------------------------------------------ Reshape


@register_c(tb.Reshape)
def gen_reshape(node: Apply) -> CThunkCode | None:
    nd = node.op.ndim
    name = str(node.op)
    body = f"""
    if (PyArray_TYPE(i1) != NPY_INT64 || PyArray_NDIM(i1) != 1) {{
        PyErr_SetString(PyExc_TypeError, "{name}: the shape must be an int64 vector");
        FAIL;
    }}
    if (PyArray_SIZE(i1) != {nd}) {{
        PyErr_Format(PyExc_ValueError, "{name}: got a shape with %zd entries",
                     (Py_ssize_t)PyArray_SIZE(i1));
        FAIL;
    }}
    npy_intp dims[{max(nd, 1)}];
    int unknown = -1, bad = 0;
    npy_intp known = 1, total = PyArray_SIZE(i0);
    for (int k = 0; k < {nd}; k++) {{
        npy_int64 v = *(npy_int64 *)PyArray_GETPTR1(i1, k);
        dims[k] = (npy_intp)v;
        if (v == -1 && unknown < 0) unknown = k;
        else if (v < 0) bad = 1;
        else known *= (npy_intp)v;
    }}
    if (!bad && unknown >= 0) {{
        if (known == 0 || total % known) bad = 1;
        else dims[unknown] = total / known;
    }} else if (!bad && known != total) {{
        bad = 1;
    }}
    if (bad) {{
        PyObject *want = PyTuple_New({nd});
        PyObject *have = graphc_shape_tuple(i0);
        if (want != NULL && have != NULL) {{
            for (int k = 0; k < {nd}; k++)
                PyTuple_SET_ITEM(want, k,
                                 PyLong_FromLongLong(*(npy_int64 *)PyArray_GETPTR1(i1, k)));
            PyErr_Format(PyExc_ValueError,
                         "{name}: cannot reshape an array of shape %R into %R", have, want);
        }}
        Py_XDECREF(want);
        Py_XDECREF(have);
        FAIL;
    }}
    PyObject *out;
    if (PyArray_IS_C_CONTIGUOUS(i0)) {{
        /* a view sharing the input's buffer; its base is the input */
        PyArray_Descr *descr = PyArray_DESCR(i0);
        Py_INCREF(descr);
        int flags = NPY_ARRAY_C_CONTIGUOUS | (PyArray_FLAGS(i0) &
                    (NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED));
        out = PyArray_NewFromDescr(&PyArray_Type, descr, {nd}, dims, NULL,
                                   PyArray_DATA(i0), flags, NULL);
        if (out == NULL) FAIL;
        Py_INCREF(i0);
        if (PyArray_SetBaseObject((PyArrayObject *)out, (PyObject *)i0) < 0) {{
            Py_DECREF(out);
            FAIL;
        }}
    }} else {{
        PyArray_Dims shp = {{dims, {nd}}};
        out = PyArray_Newshape(i0, &shp, NPY_CORDER);  /* numpy: a view when strides allow */
        if (out == NULL) FAIL;
    }}
    Py_XSETREF(*o0, out);
"""
    return CThunkCode(body=body, support=(COMMON,), key=("Reshape", nd, name))


# ------------------------------------------------------------------ Join


@register_c(tb.Join)
def gen_join(node: Apply) -> CThunkCode | None:
    out = node.outputs[0]
    dt, nd, axis = out.type.dtype, out.ndim, node.op.axis
    n = len(node.inputs)
    if dt not in DTYPES or any(v.dtype != dt for v in node.inputs):
        return None
    tn = typenum(dt)
    name = str(node.op)
    body = f"""
    PyArrayObject *ins[{n}];
    for (int j = 0; j < {n}; j++) ins[j] = (PyArrayObject *)inputs[j];
    npy_intp dims[{nd}];
    for (int k = 0; k < {nd}; k++) dims[k] = PyArray_DIM(ins[0], k);
    dims[{axis}] = 0;
    for (int j = 0; j < {n}; j++) {{
        int ok = PyArray_NDIM(ins[j]) == {nd} && PyArray_TYPE(ins[j]) == {tn};
        for (int k = 0; ok && k < {nd}; k++)
            ok = k == {axis} || PyArray_DIM(ins[j], k) == dims[k];
        if (!ok) {{
            graphc_shape_error(PyExc_ValueError, "{name}: cannot join arrays of shapes ",
                               {n}, ins);
            FAIL;
        }}
        dims[{axis}] += PyArray_DIM(ins[j], {axis});
    }}
    PyArrayObject *out = graphc_out_array(o0, {nd}, dims, {tn});
    if (out == NULL) FAIL;
    const npy_intp es = PyArray_ITEMSIZE(out);
    npy_intp outer = 1, inner = es;  /* rows before the axis; bytes of one output row */
    for (int k = 0; k < {axis}; k++) outer *= dims[k];
    for (int k = {axis}; k < {nd}; k++) inner *= dims[k];
    npy_intp offset = 0;  /* bytes into an output row */
    for (int j = 0; j < {n}; j++) {{
        PyArrayObject *a = ins[j];
        npy_intp chunk = es;
        for (int k = {axis}; k < {nd}; k++) chunk *= PyArray_DIM(a, k);
        if (chunk == 0 || outer == 0) continue;
        if (PyArray_IS_C_CONTIGUOUS(a)) {{
            const char *src = PyArray_DATA(a);
            char *dst = (char *)PyArray_DATA(out) + offset;
            for (npy_intp r = 0; r < outer; r++)
                memcpy(dst + r * inner, src + r * chunk, chunk);
        }} else {{
            /* a strided view of the output's block for this input, then numpy's copy */
            npy_intp strides[{nd}];
            for (int k = 0; k < {nd}; k++) strides[k] = PyArray_STRIDE(out, k);
            PyArray_Descr *descr = PyArray_DESCR(out);
            Py_INCREF(descr);
            PyArrayObject *view = (PyArrayObject *)PyArray_NewFromDescr(
                &PyArray_Type, descr, {nd}, PyArray_DIMS(a), strides,
                (char *)PyArray_DATA(out) + offset, NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED, NULL);
            if (view == NULL || PyArray_CopyInto(view, a) < 0) {{
                Py_XDECREF(view);
                Py_DECREF(out);
                FAIL;
            }}
            Py_DECREF(view);
        }}
        offset += chunk;
    }}
    Py_XSETREF(*o0, (PyObject *)out);
"""
    return CThunkCode(body=body, support=(COMMON,), key=("Join", dt, nd, axis, n))


# ------------------------------------------------------------------ Subtensor (basic indexing)


def _index_value(var: str, part: str | int | None, k: int | None, default: str) -> str:
    """C setting ``var`` from a constant, the symbolic input ``k``, or ``default``."""
    if part is None:
        return f"    {var} = {default};"
    if isinstance(part, str):
        read = f"graphc_as_intp((PyArrayObject *)inputs[{k}], &v)"
        return f"    if ({read} < 0) FAIL;\n    {var} = v;"
    return f"    {var} = {int(part)};"


def _input_of(part: str | int | None, positions: Iterator[int]) -> int | None:
    """The input position of a symbolic part (inputs follow the index's order)."""
    return next(positions) if isinstance(part, str) else None


def _slice_axis(name: str, e: SliceIdx, positions: Iterator[int]) -> list[str]:
    """Output axis ``d`` as the slice ``e`` of the input's axis (``n`` long, stride ``s``)."""
    k_start, k_stop, k_step = (_input_of(p, positions) for p in (e.start, e.stop, e.step))
    return [
        _index_value("step", e.step, k_step, "1"),
        _index_value("start", e.start, k_start, "step < 0 ? PY_SSIZE_T_MAX : 0"),
        _index_value("stop", e.stop, k_stop, "step < 0 ? PY_SSIZE_T_MIN : PY_SSIZE_T_MAX"),
        f"""    if (step == 0) {{
        PyErr_SetString(PyExc_ValueError, "{name}: slice step cannot be zero");
        FAIL;
    }}
    {{
        Py_ssize_t a = start, b = stop;
        dims[d] = PySlice_AdjustIndices(n, &a, &b, step);
        start = a;
    }}
    strides[d] = s * step;
    if (dims[d] > 0) data += start * s;
    d++;""",
    ]


def _int_axis(name: str, axis: int, e: str | int, positions: Iterator[int]) -> list[str]:
    """The input's axis ``axis`` indexed by the integer ``e``: no output axis."""
    return [
        _index_value("v", e, _input_of(e, positions), "0"),
        f"""    if (v < -n || v >= n) {{
        PyErr_Format(PyExc_IndexError,
                     "{name}: index %zd is out of bounds for axis {axis} with size %zd",
                     (Py_ssize_t)v, (Py_ssize_t)n);
        FAIL;
    }}
    data += (v < 0 ? v + n : v) * s;""",
    ]


def _view(arr: str, first_rest: int, nd_in: int, nd_out: int) -> str:
    """The axes after the index, then ``view``: the region of ``arr`` (its base)."""
    return f"""    for (int k = {first_rest}; k < {nd_in}; k++, d++) {{
        dims[d] = PyArray_DIM({arr}, k);
        strides[d] = PyArray_STRIDE({arr}, k);
    }}
    PyArray_Descr *descr = PyArray_DESCR({arr});
    Py_INCREF(descr);
    PyObject *view = PyArray_NewFromDescr(&PyArray_Type, descr, {nd_out}, dims, strides, data,
                                          PyArray_FLAGS({arr}) & NPY_ARRAY_WRITEABLE, NULL);
    if (view == NULL) FAIL;
    Py_INCREF({arr});
    if (PyArray_SetBaseObject((PyArrayObject *)view, (PyObject *){arr}) < 0) {{
        Py_DECREF(view);
        FAIL;
    }}"""


def _region(op, arr: str, first_input: int, nd_in: int, nd_out: int) -> list[str]:
    """C making ``view``, the region of ``arr`` that ``op``'s ints and slices index (no
    copy; numpy's base rules); the index's symbolic parts are the node's inputs from
    ``first_input`` on, in the index's order."""
    name = str(op).replace('"', "'")
    positions = itertools.count(first_input)
    lines = [
        f"    npy_intp dims[{max(nd_out, 1)}], strides[{max(nd_out, 1)}];",
        f"    char *data = PyArray_DATA({arr});",
        "    npy_intp v, start, stop, step;",
        "    int d = 0;",
    ]
    for axis, e in enumerate(op.idx_list):
        lines.append(f"    {{ /* axis {axis}: {e} */")
        lines.append(
            f"    const npy_intp n = PyArray_DIM({arr}, {axis}), s = PyArray_STRIDE({arr}, {axis});"
        )
        if isinstance(e, SliceIdx):
            lines += _slice_axis(name, e, positions)
        else:
            lines += _int_axis(name, axis, e, positions)
        lines.append("    }")
    lines.append(_view(arr, len(op.idx_list), nd_in, nd_out))
    return lines


@register_c(Subtensor)
def gen_subtensor(node: Apply) -> CThunkCode | None:
    """A view of the input (no copy; numpy's base rules) for ints and slices."""
    nd_in, nd_out = node.inputs[0].ndim, node.outputs[0].ndim
    lines = _region(node.op, "i0", 1, nd_in, nd_out)
    body = "\n".join([*lines, "    Py_XSETREF(*o0, view);"])
    key = ("Subtensor", node.op.idx_list, tuple(v.type for v in node.inputs))
    return CThunkCode(body=body, support=(COMMON,), key=key)


_INC_SUPPORT = r"""
/* The error numpy set while writing y into x's region, restated with the node's name and
   both shapes (as the Python perform's message). */
static void graphc_region_error(const char *name, PyArrayObject *x, PyArrayObject *y) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *xs = graphc_shape_tuple(x), *ys = graphc_shape_tuple(y);
    if (type != NULL && value != NULL && xs != NULL && ys != NULL)
        PyErr_Format(type, "%s: %S (into an array of shape %S, value shape %S)", name, value,
                     xs, ys);
    else
        PyErr_Restore(type, value, tb), type = value = tb = NULL;
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    Py_XDECREF(xs);
    Py_XDECREF(ys);
}
"""


@register_c(IncSubtensor)
def gen_inc_subtensor(node: Apply) -> CThunkCode | None:
    """``x`` (in place, or a copy in the output's buffer) with its region set to or
    incremented by ``y`` through numpy (broadcasting and errors as the perform's)."""
    op = node.op
    x, y = node.inputs[:2]
    dt = x.type.dtype
    if dt not in DTYPES or y.type.dtype != dt:
        return None
    name = str(op).replace('"', "'")
    if op.inplace:
        take = "    Py_INCREF(i0);\n    Py_XSETREF(*o0, (PyObject *)i0);"
    else:
        take = f"""    PyArrayObject *copy =
        graphc_out_array(o0, {x.ndim}, PyArray_DIMS(i0), {typenum(dt)});
    if (copy == NULL) FAIL;
    Py_XSETREF(*o0, (PyObject *)copy);
    if (PyArray_CopyInto(copy, i0) < 0) FAIL;"""
    nd_region = x.ndim - sum(not isinstance(e, SliceIdx) for e in op.idx_list)
    region = _region(op, "out", 2, x.ndim, nd_region)
    write = (
        "    int rc = PyArray_CopyInto((PyArrayObject *)view, i1);"
        if op.set_instead_of_inc
        else "    PyObject *sum = PyNumber_InPlaceAdd(view, (PyObject *)i1);\n"
        "    int rc = sum == NULL ? -1 : 0;\n    Py_XDECREF(sum);"
    )
    fail = f"""    if (rc < 0) {{
        graphc_region_error("{name}", i0, i1);
        FAIL;
    }}"""
    lines = [take, "    PyArrayObject *out = (PyArrayObject *)*o0;", *region, write]
    body = "\n".join([*lines, "    Py_DECREF(view);", fail])
    key = ("IncSubtensor", op.idx_list, op.inplace, op.set_instead_of_inc,
           tuple(v.type for v in node.inputs))  # fmt: skip
    return CThunkCode(body=body, support=(COMMON, _INC_SUPPORT), key=key)
