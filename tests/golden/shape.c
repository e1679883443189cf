/* ---- thunk body of node 0: Shape */

    npy_intp n = 2;
    PyArrayObject *out = graphc_out_array(o0, 1, &n, NPY_INT64);
    if (out == NULL) FAIL;
    for (int k = 0; k < 2; k++)
        ((npy_int64 *)PyArray_DATA(out))[k] = PyArray_DIM(i0, k);
    Py_XSETREF(*o0, (PyObject *)out);

/* ---- thunk body of node 1: Subtensor{0} */
    npy_intp dims[1], strides[1];
    char *data = PyArray_DATA(i0);
    npy_intp v, start, stop, step;
    int d = 0;
    { /* axis 0: 0 */
    const npy_intp n = PyArray_DIM(i0, 0), s = PyArray_STRIDE(i0, 0);
    v = 0;
    if (v < -n || v >= n) {
        PyErr_Format(PyExc_IndexError,
                     "Subtensor{0}: index %zd is out of bounds for axis 0 with size %zd",
                     (Py_ssize_t)v, (Py_ssize_t)n);
        FAIL;
    }
    data += (v < 0 ? v + n : v) * s;
    }
    for (int k = 1; k < 1; k++, d++) {
        dims[d] = PyArray_DIM(i0, k);
        strides[d] = PyArray_STRIDE(i0, k);
    }
    PyArray_Descr *descr = PyArray_DESCR(i0);
    Py_INCREF(descr);
    PyObject *view = PyArray_NewFromDescr(&PyArray_Type, descr, 0, dims, strides, data,
                                          PyArray_FLAGS(i0) & NPY_ARRAY_WRITEABLE, NULL);
    if (view == NULL) FAIL;
    Py_INCREF(i0);
    if (PyArray_SetBaseObject((PyArrayObject *)view, (PyObject *)i0) < 0) {
        Py_DECREF(view);
        FAIL;
    }
    Py_XSETREF(*o0, view);

/* ---- thunk body of node 2: Elemwise{convert_to_int64,no_inplace} */
    const char *name = "Elemwise{convert_to_int64,no_inplace}";
    PyArrayObject *in[1], *tmp[1], *own[1];
    npy_intp shape[1], st[2];
    char *data[2];
    int es[2];
    int rc = -1;
    for (int k = 0; k < 1; k++) tmp[k] = own[k] = NULL;
    PyArrayObject *const *fin = (PyArrayObject *const *)inputs;
    int flat = gc_flat_inputs(fin, 1, 0);
    if (flat) {
        data[0] = PyArray_BYTES(fin[0]); es[0] = 4;
        { PyArrayObject *a = gc_prepare_output(o0, 0, PyArray_DIMS(fin[0]), NPY_INT64);
          if (a == NULL) FAIL; data[1] = PyArray_BYTES(a); }
        es[1] = 8;
        gc_ew_flat(2, PyArray_SIZE(fin[0]), data, es, gc_ew_14dc6f367924_c);
        return 0;
    }
    if (!(own[0] = in[0] = gc_input(inputs[0], 0, 0, NPY_INT32, name))) goto done;
    if (gc_broadcast(in, 1, 0, shape, name) < 0) goto done;
    if (!PyArray_ISALIGNED(in[0])) {
        if (!(tmp[0] = (PyArrayObject *)PyArray_NewCopy(in[0], NPY_CORDER))) goto done;
        in[0] = tmp[0];
    }
    data[0] = PyArray_BYTES(in[0]); es[0] = 4;
    gc_strides(in[0], 0, &st[0]);
    { PyArrayObject *a = gc_prepare_output(o0, 0, shape, NPY_INT64);
      if (a == NULL) goto done;
      data[1] = PyArray_BYTES(a); es[1] = 8; gc_strides(a, 0, &st[1]); }
    gc_ew_loop(2, 1, 0, shape, data, st, es, gc_ew_14dc6f367924_c, gc_ew_14dc6f367924_s);
    rc = 0;
done:
    Py_XDECREF(tmp[0]); Py_XDECREF(own[0]);
    if (rc < 0) FAIL;

/* ---- thunk body of node 3: Alloc */

    npy_intp dims[2];
    if (graphc_as_intp((PyArrayObject *)inputs[1], &dims[0]) < 0) FAIL;
    if (graphc_as_intp((PyArrayObject *)inputs[2], &dims[1]) < 0) FAIL;
    for (int k = 0; k < 2; k++) {
        if (dims[k] < 0) {
            PyErr_SetString(PyExc_ValueError, "Alloc: negative dimensions are not allowed");
            FAIL;
        }
    }
    if (PyArray_TYPE(i0) != NPY_FLOAT64) {
        PyErr_SetString(PyExc_TypeError, "Alloc: unexpected value dtype");
        FAIL;
    }
    PyArrayObject *out = graphc_out_array(o0, 2, dims, NPY_FLOAT64);
    if (out == NULL) FAIL;
    if (PyArray_SIZE(i0) == 1 && PyArray_NDIM(i0) <= 2) {
        /* a scalar value: fill without numpy's broadcasting machinery */
        const npy_float64 v = *(const npy_float64 *)PyArray_DATA(i0);
        npy_float64 *d = (npy_float64 *)PyArray_DATA(out);
        const npy_intp n = PyArray_SIZE(out);
        for (npy_intp k = 0; k < n; k++) d[k] = v;
    } else if (PyArray_CopyInto(out, i0) < 0) {
        Py_DECREF(out);
        PyObject *t = PyTuple_New(2);
        if (t != NULL) {
            for (int k = 0; k < 2; k++)
                PyTuple_SET_ITEM(t, k, PyLong_FromSsize_t(dims[k]));
            PyObject *vs = graphc_shape_tuple(i0);
            if (vs != NULL) {
                PyErr_Format(PyExc_ValueError,
                             "Alloc: cannot broadcast a value of shape %R to %R", vs, t);
                Py_DECREF(vs);
            }
            Py_DECREF(t);
        }
        FAIL;
    }
    Py_XSETREF(*o0, (PyObject *)out);

/* ---- thunk body of node 4: Reshape{2} */

    if (PyArray_TYPE(i1) != NPY_INT64 || PyArray_NDIM(i1) != 1) {
        PyErr_SetString(PyExc_TypeError, "Reshape{2}: the shape must be an int64 vector");
        FAIL;
    }
    if (PyArray_SIZE(i1) != 2) {
        PyErr_Format(PyExc_ValueError, "Reshape{2}: got a shape with %zd entries",
                     (Py_ssize_t)PyArray_SIZE(i1));
        FAIL;
    }
    npy_intp dims[2];
    int unknown = -1, bad = 0;
    npy_intp known = 1, total = PyArray_SIZE(i0);
    for (int k = 0; k < 2; k++) {
        npy_int64 v = *(npy_int64 *)PyArray_GETPTR1(i1, k);
        dims[k] = (npy_intp)v;
        if (v == -1 && unknown < 0) unknown = k;
        else if (v < 0) bad = 1;
        else known *= (npy_intp)v;
    }
    if (!bad && unknown >= 0) {
        if (known == 0 || total % known) bad = 1;
        else dims[unknown] = total / known;
    } else if (!bad && known != total) {
        bad = 1;
    }
    if (bad) {
        PyObject *want = PyTuple_New(2);
        PyObject *have = graphc_shape_tuple(i0);
        if (want != NULL && have != NULL) {
            for (int k = 0; k < 2; k++)
                PyTuple_SET_ITEM(want, k,
                                 PyLong_FromLongLong(*(npy_int64 *)PyArray_GETPTR1(i1, k)));
            PyErr_Format(PyExc_ValueError,
                         "Reshape{2}: cannot reshape an array of shape %R into %R", have, want);
        }
        Py_XDECREF(want);
        Py_XDECREF(have);
        FAIL;
    }
    PyObject *out;
    if (PyArray_IS_C_CONTIGUOUS(i0)) {
        /* a view sharing the input's buffer; its base is the input */
        PyArray_Descr *descr = PyArray_DESCR(i0);
        Py_INCREF(descr);
        int flags = NPY_ARRAY_C_CONTIGUOUS | (PyArray_FLAGS(i0) &
                    (NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED));
        out = PyArray_NewFromDescr(&PyArray_Type, descr, 2, dims, NULL,
                                   PyArray_DATA(i0), flags, NULL);
        if (out == NULL) FAIL;
        Py_INCREF(i0);
        if (PyArray_SetBaseObject((PyArrayObject *)out, (PyObject *)i0) < 0) {
            Py_DECREF(out);
            FAIL;
        }
    } else {
        PyArray_Dims shp = {dims, 2};
        out = PyArray_Newshape(i0, &shp, NPY_CORDER);  /* numpy: a view when strides allow */
        if (out == NULL) FAIL;
    }
    Py_XSETREF(*o0, out);

/* ---- thunk body of node 5: Join{axis=1} */

    PyArrayObject *ins[2];
    for (int j = 0; j < 2; j++) ins[j] = (PyArrayObject *)inputs[j];
    npy_intp dims[2];
    for (int k = 0; k < 2; k++) dims[k] = PyArray_DIM(ins[0], k);
    dims[1] = 0;
    for (int j = 0; j < 2; j++) {
        int ok = PyArray_NDIM(ins[j]) == 2 && PyArray_TYPE(ins[j]) == NPY_FLOAT64;
        for (int k = 0; ok && k < 2; k++)
            ok = k == 1 || PyArray_DIM(ins[j], k) == dims[k];
        if (!ok) {
            graphc_shape_error(PyExc_ValueError, "Join{axis=1}: cannot join arrays of shapes ",
                               2, ins);
            FAIL;
        }
        dims[1] += PyArray_DIM(ins[j], 1);
    }
    PyArrayObject *out = graphc_out_array(o0, 2, dims, NPY_FLOAT64);
    if (out == NULL) FAIL;
    const npy_intp es = PyArray_ITEMSIZE(out);
    npy_intp outer = 1, inner = es;  /* rows before the axis; bytes of one output row */
    for (int k = 0; k < 1; k++) outer *= dims[k];
    for (int k = 1; k < 2; k++) inner *= dims[k];
    npy_intp offset = 0;  /* bytes into an output row */
    for (int j = 0; j < 2; j++) {
        PyArrayObject *a = ins[j];
        npy_intp chunk = es;
        for (int k = 1; k < 2; k++) chunk *= PyArray_DIM(a, k);
        if (chunk == 0 || outer == 0) continue;
        if (PyArray_IS_C_CONTIGUOUS(a)) {
            const char *src = PyArray_DATA(a);
            char *dst = (char *)PyArray_DATA(out) + offset;
            for (npy_intp r = 0; r < outer; r++)
                memcpy(dst + r * inner, src + r * chunk, chunk);
        } else {
            /* a strided view of the output's block for this input, then numpy's copy */
            npy_intp strides[2];
            for (int k = 0; k < 2; k++) strides[k] = PyArray_STRIDE(out, k);
            PyArray_Descr *descr = PyArray_DESCR(out);
            Py_INCREF(descr);
            PyArrayObject *view = (PyArrayObject *)PyArray_NewFromDescr(
                &PyArray_Type, descr, 2, PyArray_DIMS(a), strides,
                (char *)PyArray_DATA(out) + offset, NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED, NULL);
            if (view == NULL || PyArray_CopyInto(view, a) < 0) {
                Py_XDECREF(view);
                Py_DECREF(out);
                FAIL;
            }
            Py_DECREF(view);
        }
        offset += chunk;
    }
    Py_XSETREF(*o0, (PyObject *)out);

/* ---- thunk body of node 6: Subtensor{1:int32, ::2} */
    npy_intp dims[2], strides[2];
    char *data = PyArray_DATA(i0);
    npy_intp v, start, stop, step;
    int d = 0;
    { /* axis 0: 1:int32 */
    const npy_intp n = PyArray_DIM(i0, 0), s = PyArray_STRIDE(i0, 0);
    step = 1;
    start = 1;
    if (graphc_as_intp((PyArrayObject *)inputs[1], &v) < 0) FAIL;
    stop = v;
    if (step == 0) {
        PyErr_SetString(PyExc_ValueError, "Subtensor{1:int32, ::2}: slice step cannot be zero");
        FAIL;
    }
    {
        Py_ssize_t a = start, b = stop;
        dims[d] = PySlice_AdjustIndices(n, &a, &b, step);
        start = a;
    }
    strides[d] = s * step;
    if (dims[d] > 0) data += start * s;
    d++;
    }
    { /* axis 1: ::2 */
    const npy_intp n = PyArray_DIM(i0, 1), s = PyArray_STRIDE(i0, 1);
    step = 2;
    start = step < 0 ? PY_SSIZE_T_MAX : 0;
    stop = step < 0 ? PY_SSIZE_T_MIN : PY_SSIZE_T_MAX;
    if (step == 0) {
        PyErr_SetString(PyExc_ValueError, "Subtensor{1:int32, ::2}: slice step cannot be zero");
        FAIL;
    }
    {
        Py_ssize_t a = start, b = stop;
        dims[d] = PySlice_AdjustIndices(n, &a, &b, step);
        start = a;
    }
    strides[d] = s * step;
    if (dims[d] > 0) data += start * s;
    d++;
    }
    for (int k = 2; k < 2; k++, d++) {
        dims[d] = PyArray_DIM(i0, k);
        strides[d] = PyArray_STRIDE(i0, k);
    }
    PyArray_Descr *descr = PyArray_DESCR(i0);
    Py_INCREF(descr);
    PyObject *view = PyArray_NewFromDescr(&PyArray_Type, descr, 2, dims, strides, data,
                                          PyArray_FLAGS(i0) & NPY_ARRAY_WRITEABLE, NULL);
    if (view == NULL) FAIL;
    Py_INCREF(i0);
    if (PyArray_SetBaseObject((PyArrayObject *)view, (PyObject *)i0) < 0) {
        Py_DECREF(view);
        FAIL;
    }
    Py_XSETREF(*o0, view);

/* library text: graphc.linker.c.common.COMMON */

/* library text: graphc.linker.c.elemwise_support.SUPPORT[0] */

/* library text: graphc.linker.c.elemwise_support.VECMATH */

/* library text: graphc.linker.c.elemwise_support._DRIVER */

static void gc_ew_14dc6f367924_c(npy_intp n, char **p) {
    const npy_int32 *q0 = (const npy_int32 *)p[0];
    npy_int64 *q1 = (npy_int64 *)p[1];
#pragma omp simd
    for (npy_intp i = 0; i < n; i++) {
        const npy_int32 x0 = q0[i];
        q1[i] = (npy_int64)(((npy_int64)x0));
    }
}
static void gc_ew_14dc6f367924_s(npy_intp n, char **p, const npy_intp *s) {
    for (npy_intp i = 0; i < n; i++) {
        const npy_int32 x0 = *(const npy_int32 *)(p[0] + i * s[0]);
        *(npy_int64 *)(p[1] + i * s[1]) = (npy_int64)(((npy_int64)x0));
    }
}

/* ---- module init */
