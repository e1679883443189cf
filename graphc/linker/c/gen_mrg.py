"""C for MRGUniform: the MRG31k3p steps, Theano's normalisations and the map to
``[low, high)``, drawing exactly what ``MRGUniform.perform`` draws (the reference).

Covered: float32 and float64 samples with scalar ``low`` and ``high``; other nodes run
their ``perform``.
"""

from __future__ import annotations

from graphc.graph.basic import Apply
from graphc.linker.c.common import COMMON, ctype, typenum
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.tensor.random.mrg_ops import MRGUniform

MRG = r"""
/* One MRG31k3p step of the state row x (six int32, newest first); the raw draw in [1, M1]. */
static inline npy_int64 graphc_mrg_step(npy_int32 *x) {
    const npy_int64 m1 = 2147483647LL, m2 = 2147462579LL;
    npy_int64 y1 = (4194304LL * x[1] + 129LL * x[2]) % m1;
    npy_int64 y2 = (32768LL * x[3] + 32769LL * x[5]) % m2;
    x[2] = x[1]; x[1] = x[0]; x[0] = (npy_int32)y1;
    x[5] = x[4]; x[4] = x[3]; x[3] = (npy_int32)y2;
    return y1 - y2 <= 0 ? y1 - y2 + m1 : y1 - y2;
}
"""

_UNIT = {
    "float64": "(double)raw * 4.656612873077392578125e-10",
    "float32": "(npy_float32)raw * 4.6566126e-10f",
}
_NEXTAFTER = {"float32": "nextafterf", "float64": "nextafter"}


@register_c(MRGUniform)
def gen_mrg(node: Apply) -> CThunkCode | None:
    op = node.op
    dt = op.dtype
    if dt not in _UNIT or any(p.ndim != 0 for p in node.inputs[2:]):
        return None
    ct, nd = ctype(dt), op.ndim
    body = f"""
    if (PyArray_NDIM(i0) != 2 || PyArray_DIM(i0, 1) != 6 || PyArray_DIM(i0, 0) < 1 ||
        PyArray_NDIM(i1) != 1 || PyArray_DIM(i1, 0) != {nd}) {{
        PyErr_SetString(PyExc_ValueError, "{op}: the state must be a (streams, 6) matrix and "
                        "size a vector of {nd} entries");
        FAIL;
    }}
    npy_intp dims[{max(nd, 1)}];
    npy_int64 n = 1;
    for (int k = 0; k < {nd}; k++) {{
        dims[k] = (npy_intp)*(npy_int64 *)PyArray_GETPTR1(i1, k);
        if (dims[k] < 0) {{
            PyErr_SetString(PyExc_ValueError, "{op}: negative dimensions in size");
            FAIL;
        }}
        n *= dims[k];
    }}
    if (n > 2147483647LL) {{
        PyErr_SetString(PyExc_ValueError, "{op}: more than 2**31 - 1 samples");
        FAIL;
    }}
    const {ct} low = *({ct} *)PyArray_DATA(i2), high = *({ct} *)PyArray_DATA(i3);
    const {ct} range = high - low, below = {_NEXTAFTER[dt]}(high, low);
    PyArrayObject *state = (PyArrayObject *)PyArray_NewCopy(i0, NPY_CORDER);
    if (state == NULL) FAIL;
    PyArrayObject *out = graphc_out_array(o1, {nd}, dims, {typenum(dt)});
    if (out == NULL) {{ Py_DECREF(state); FAIL; }}
    npy_int32 *rows = (npy_int32 *)PyArray_DATA(state);
    const npy_int64 streams = PyArray_DIM(state, 0);
    {ct} *data = ({ct} *)PyArray_DATA(out);
    for (npy_int64 i = 0; i < n; i++) {{
        npy_int64 raw = graphc_mrg_step(rows + 6 * (i % streams));
        volatile {ct} scaled = ({_UNIT[dt]}) * range;  /* no fused multiply-add */
        {ct} v = scaled + low;
        data[i] = v == high ? below : v;
    }}
    Py_XSETREF(*o1, (PyObject *)out);
    Py_XSETREF(*o0, (PyObject *)state);
"""
    key = ("MRGUniform", op, tuple(p.type for p in node.inputs[2:]))
    return CThunkCode(body=body, support=(COMMON, MRG), key=key)
