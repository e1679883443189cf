"""C thunk for DimShuffle: a view of the input with axes reordered, dropped or added."""

from __future__ import annotations

from graphc.graph.basic import Apply
from graphc.linker.c.common import c_string, typenum
from graphc.linker.c.elemwise_support import SUPPORT
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.tensor.elemwise import DimShuffle


@register_c(DimShuffle)
def gen_dimshuffle(node: Apply) -> CThunkCode | None:
    op = node.op
    dt = node.inputs[0].type.dtype
    nd_in, order = op.input_ndim, op.new_order
    nd_out = len(order)
    b = [
        f"    const char *name = {c_string(str(op))};",
        f"    PyArrayObject *x = gc_input(inputs[0], 0, {nd_in}, {typenum(dt)}, name);",
        "    if (x == NULL) FAIL;",
    ]
    for d in op.drop:
        b.append(
            f"    if (PyArray_DIM(x, {d}) != 1) {{ PyErr_Format(PyExc_ValueError, "
            f'"%s: cannot drop axis {d} of size %ld", name, (long)PyArray_DIM(x, {d}));'
            " Py_DECREF(x); FAIL; }"
        )
    b.append(f"    npy_intp dims[{max(nd_out, 1)}], strides[{max(nd_out, 1)}];")
    for k, o in enumerate(order):
        if o == "x":
            b.append(f"    dims[{k}] = 1; strides[{k}] = 0;")
        else:
            b.append(f"    dims[{k}] = PyArray_DIM(x, {o}); strides[{k}] = PyArray_STRIDE(x, {o});")
    b.append(
        "    PyArray_Descr *descr = PyArray_DESCR(x);\n"
        "    Py_INCREF(descr);\n"
        f"    PyObject *r = PyArray_NewFromDescr(&PyArray_Type, descr, {nd_out}, dims, strides,\n"
        "        PyArray_DATA(x), PyArray_FLAGS(x) & NPY_ARRAY_WRITEABLE, NULL);\n"
        "    if (r == NULL) { Py_DECREF(x); FAIL; }\n"
        "    if (PyArray_SetBaseObject((PyArrayObject *)r, (PyObject *)x) < 0) {\n"
        "        Py_DECREF(r);\n"
        "        FAIL;\n"
        "    }\n"
        "    Py_XSETREF(*o0, r);"
    )
    return CThunkCode(body="\n".join(b), support=SUPPORT)
