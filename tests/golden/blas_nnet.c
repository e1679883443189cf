/* ---- thunk body of node 0: Gemm{no_inplace} */

    if (PyArray_TYPE(i0) != NPY_FLOAT64 || PyArray_NDIM(i0) != 2) {
        PyErr_SetString(PyExc_TypeError, "Gemm{no_inplace}: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_TYPE(i2) != NPY_FLOAT64 || PyArray_NDIM(i2) != 2) {
        PyErr_SetString(PyExc_TypeError, "Gemm{no_inplace}: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_TYPE(i3) != NPY_FLOAT64 || PyArray_NDIM(i3) != 2) {
        PyErr_SetString(PyExc_TypeError, "Gemm{no_inplace}: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_DIM(i2, 1) != PyArray_DIM(i3, 0) || PyArray_DIM(i0, 0) != PyArray_DIM(i2, 0) || PyArray_DIM(i0, 1) != PyArray_DIM(i3, 1)) {
        PyObject *s0 = graphc_shape_tuple(i0), *s2 = graphc_shape_tuple(i2);
        PyObject *s3 = graphc_shape_tuple(i3);
        if (s0 && s2 && s3) PyErr_Format(PyExc_ValueError, "Gemm{no_inplace}: shape mismatch Z %R, X %R, Y %R", s0, s2, s3);
        Py_XDECREF(s0);
        Py_XDECREF(s2);
        Py_XDECREF(s3);
        FAIL;
    }
    double alpha_d;
    if (graphc_as_double(i1, &alpha_d) < 0) FAIL;
    const npy_float64 alpha = (npy_float64)alpha_d;
    double beta_d;
    if (graphc_as_double(i4, &beta_d) < 0) FAIL;
    const npy_float64 beta = (npy_float64)beta_d;
    PyArrayObject *out = graphc_out_array(o0, 2, PyArray_DIMS(i0), NPY_FLOAT64);
    if (out == NULL) FAIL;
    if ((beta != 0 && PyArray_CopyInto(out, i0) < 0) ||
        graphc_dgemm_into(out, alpha, i2, i3, beta) < 0) {
        Py_DECREF(out);
        FAIL;
    }
    Py_XSETREF(*o0, (PyObject *)out);

/* ---- thunk body of node 1: Dot22 */

    if (PyArray_TYPE(i0) != NPY_FLOAT64 || PyArray_NDIM(i0) != 2) {
        PyErr_SetString(PyExc_TypeError, "Dot22: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_TYPE(i1) != NPY_FLOAT64 || PyArray_NDIM(i1) != 2) {
        PyErr_SetString(PyExc_TypeError, "Dot22: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_DIM(i0, 1) != PyArray_DIM(i1, 0)) {
        PyArrayObject *ab[2] = {i0, i1};
        graphc_shape_error(PyExc_ValueError, "Dot22: shapes not aligned: ", 2, ab);
        FAIL;
    }
    npy_intp dims[2] = {PyArray_DIM(i0, 0), PyArray_DIM(i1, 1)};
    PyArrayObject *out = graphc_out_array(o0, 2, dims, NPY_FLOAT64);
    if (out == NULL) FAIL;
    if (graphc_dgemm_into(out, 1, i0, i1, 0) < 0) {
        Py_DECREF(out);
        FAIL;
    }
    Py_XSETREF(*o0, (PyObject *)out);

/* ---- thunk body of node 2: dot */

    if (PyArray_TYPE(i0) != NPY_FLOAT64 || PyArray_NDIM(i0) != 2) {
        PyErr_SetString(PyExc_TypeError, "dot: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_TYPE(i1) != NPY_FLOAT64 || PyArray_NDIM(i1) != 1) {
        PyErr_SetString(PyExc_TypeError, "dot: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_DIM(i0, 1) != PyArray_DIM(i1, 0)) {
        PyArrayObject *ab[2] = {i0, i1};
        graphc_shape_error(PyExc_ValueError, "dot: shapes not aligned: ", 2, ab);
        FAIL;
    }
    npy_intp dims[1] = {PyArray_DIM(i0, 0)};
    PyArrayObject *out = graphc_out_array(o0, 1, dims, NPY_FLOAT64);
    if (out == NULL) FAIL;
    if (graphc_dgemv_into(out, 1, i0, i1, 0) < 0) {
        Py_DECREF(out);
        FAIL;
    }
    Py_XSETREF(*o0, (PyObject *)out);

/* ---- thunk body of node 3: Softmax{axis=1} */

    if (PyArray_TYPE(i0) != NPY_FLOAT64 || PyArray_NDIM(i0) != 2) {
        PyErr_SetString(PyExc_TypeError, "Softmax{axis=1}: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (graphc_softmax_f64(i0, 1, 0, o0) < 0) FAIL;

/* ---- thunk body of node 4: CrossentropySoftmax1Hot */

    if (PyArray_TYPE(i0) != NPY_FLOAT64 || PyArray_NDIM(i0) != 2) {
        PyErr_SetString(PyExc_TypeError, "CrossentropySoftmax1Hot: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_TYPE(i1) != NPY_INT32 || PyArray_NDIM(i1) != 1) {
        PyErr_SetString(PyExc_TypeError, "CrossentropySoftmax1Hot: class indices of an unexpected dtype");
        FAIL;
    }
    PyArrayObject *yv = i1;
    const npy_intp rows = PyArray_DIM(i0, 0), cols = PyArray_DIM(i0, 1);
    if (PyArray_DIM(yv, 0) != rows) {
        PyErr_Format(PyExc_ValueError, "CrossentropySoftmax1Hot: %zd rows but %zd class indices",
                     (Py_ssize_t)rows, (Py_ssize_t)PyArray_DIM(yv, 0));
        FAIL;
    }
    const npy_intp ys = PyArray_STRIDE(yv, 0);
    const char *yp = PyArray_DATA(yv);
    for (npy_intp i = 0; i < rows; i++) {
        npy_int32 c = *(const npy_int32 *)(yp + i * ys);
        if (!(c >= 0 && (npy_uint64)c < (npy_uint64)cols)) {
            PyErr_Format(PyExc_IndexError, "CrossentropySoftmax1Hot: class index out of range [0, %zd)",
                         (Py_ssize_t)cols);
            FAIL;
        }
    }
    if (cols == 0 && rows > 0) {
        PyErr_SetString(PyExc_IndexError, "CrossentropySoftmax1Hot: no classes");
        FAIL;
    }
    /* log-softmax rows into the sm slot, then nll = -lsm[y] and sm = exp(lsm) */
    if (graphc_softmax_f64(i0, 1, 1, o1) < 0) FAIL;
    PyArrayObject *sm = (PyArrayObject *)*o1;
    npy_intp nr = rows;
    PyArrayObject *nll = graphc_out_array(o0, 1, &nr, NPY_FLOAT64);
    if (nll == NULL) FAIL;
    npy_float64 *s = (npy_float64 *)PyArray_DATA(sm);
    npy_float64 *l = (npy_float64 *)PyArray_DATA(nll);
    for (npy_intp i = 0; i < rows; i++) {
        npy_float64 *row = s + i * cols;
        l[i] = -row[(npy_intp)*(const npy_int32 *)(yp + i * ys)];
#pragma omp simd
        for (npy_intp j = 0; j < cols; j++) row[j] = gc_vm_exp_npy_float64(row[j]);
    }
    Py_XSETREF(*o0, (PyObject *)nll);

/* library text: graphc.linker.c.common.COMMON */

/* library text: graphc.linker.c.gen_blas.loader() for scipy's BLAS */

/* library text: graphc.linker.c.gen_blas.HELPERS */

/* z <- beta * z for a 1-d or 2-d array (beta == 0 writes zeros without reading z). */
static void graphc_dscale(PyArrayObject *z, npy_float64 beta) {
    const int nd = PyArray_NDIM(z);
    const npy_intp m = nd > 1 ? PyArray_DIM(z, 0) : 1, n = PyArray_DIM(z, nd - 1);
    const npy_intp s0 = nd > 1 ? PyArray_STRIDE(z, 0) : 0, s1 = PyArray_STRIDE(z, nd - 1);
    for (npy_intp i = 0; i < m; i++) {
        char *row = (char *)PyArray_DATA(z) + i * s0;
        for (npy_intp j = 0; j < n; j++) {
            npy_float64 *p = (npy_float64 *)(row + j * s1);
            *p = beta == 0 ? (npy_float64)0 : beta * *p;
        }
    }
}

/* Z <- beta Z + alpha X Y in place (Z M x N, X M x K, Y K x N; shapes checked by the
   caller). Z is not read when beta == 0. */
static int graphc_dgemm_into(PyArrayObject *Z, npy_float64 alpha, PyArrayObject *X, PyArrayObject *Y,
                             npy_float64 beta) {
    const npy_intp M = PyArray_DIM(Z, 0), N = PyArray_DIM(Z, 1), K = PyArray_DIM(X, 1);
    if (M == 0 || N == 0) return 0;
    if (K == 0) {
        graphc_dscale(Z, beta);
        return 0;
    }
    if (M > GRAPHC_BINT_MAX || N > GRAPHC_BINT_MAX || K > GRAPHC_BINT_MAX) {
        PyErr_SetString(PyExc_ValueError, "gemm: dimension too large for BLAS");
        return -1;
    }
    graphc_fmat fx, fy, fz;
    int rc = -1;
    PyArrayObject *Xc, *Yc, *Zc = NULL;
    Xc = graphc_maybe_copy(X, graphc_fmat_of(X, &fx) < 0 || graphc_overlap(X, Z));
    Yc = graphc_maybe_copy(Y, graphc_fmat_of(Y, &fy) < 0 || graphc_overlap(Y, Z));
    if (Xc == NULL || Yc == NULL) goto done;
    graphc_fmat_of(Xc, &fx);
    graphc_fmat_of(Yc, &fy);
    if (graphc_fmat_of(Z, &fz) < 0) {
        /* strided output: compute in a C-ordered buffer, copy back below */
        Zc = beta == 0 ? (PyArrayObject *)PyArray_EMPTY(2, PyArray_DIMS(Z), NPY_FLOAT64, 0)
                       : (PyArrayObject *)PyArray_NewCopy(Z, NPY_CORDER);
        if (Zc == NULL) goto done;
        graphc_fmat_of(Zc, &fz);
    }
    {
        graphc_bint m = (graphc_bint)M, n = (graphc_bint)N, k = (graphc_bint)K;
        /* let other threads run during big products (only C data is touched below) */
        PyThreadState *ts = (double)M * N * K > 1e6 ? PyEval_SaveThread() : NULL;
        if (fz.trans == 'N') { /* Z column-major: Z = op(X) op(Y) */
            graphc_dgemm(&fx.trans, &fy.trans, &m, &n, &k, &alpha, (npy_float64 *)fx.data, &fx.ld,
                         (npy_float64 *)fy.data, &fy.ld, &beta, (npy_float64 *)fz.data, &fz.ld);
        } else { /* Z row-major, i.e. Z^T column-major: Z^T = Y^T X^T */
            char ta = fy.trans == 'N' ? 'T' : 'N', tb = fx.trans == 'N' ? 'T' : 'N';
            graphc_dgemm(&ta, &tb, &n, &m, &k, &alpha, (npy_float64 *)fy.data, &fy.ld, (npy_float64 *)fx.data,
                         &fx.ld, &beta, (npy_float64 *)fz.data, &fz.ld);
        }
        if (ts != NULL) PyEval_RestoreThread(ts);
    }
    if (Zc != NULL && PyArray_CopyInto(Z, Zc) < 0) goto done;
    rc = 0;
done:
    Py_XDECREF(Xc);
    Py_XDECREF(Yc);
    Py_XDECREF(Zc);
    return rc;
}

/* y <- beta y + alpha A x in place (y M, A M x N, x N). y is not read when beta == 0. */
static int graphc_dgemv_into(PyArrayObject *y, npy_float64 alpha, PyArrayObject *A, PyArrayObject *x,
                             npy_float64 beta) {
    const npy_intp M = PyArray_DIM(A, 0), N = PyArray_DIM(A, 1);
    if (M == 0) return 0;
    if (N == 0) {
        graphc_dscale(y, beta);
        return 0;
    }
    if (M > GRAPHC_BINT_MAX || N > GRAPHC_BINT_MAX) {
        PyErr_SetString(PyExc_ValueError, "gemv: dimension too large for BLAS");
        return -1;
    }
    graphc_fmat fa;
    int rc = -1;
    graphc_bint incx, incy;
    PyArrayObject *Ac, *xc, *yc = NULL;
    Ac = graphc_maybe_copy(A, graphc_fmat_of(A, &fa) < 0 || graphc_overlap(A, y));
    xc = graphc_maybe_copy(x, graphc_inc_of(x) == 0 || graphc_overlap(x, y));
    if (Ac == NULL || xc == NULL) goto done;
    graphc_fmat_of(Ac, &fa);
    incx = graphc_inc_of(xc);
    incy = graphc_inc_of(y);
    if (incy == 0) {
        yc = beta == 0 ? (PyArrayObject *)PyArray_EMPTY(1, PyArray_DIMS(y), NPY_FLOAT64, 0)
                       : (PyArrayObject *)PyArray_NewCopy(y, NPY_CORDER);
        if (yc == NULL) goto done;
        incy = 1;
    }
    {
        npy_float64 *yd = (npy_float64 *)PyArray_DATA(yc != NULL ? yc : y), *xd = (npy_float64 *)PyArray_DATA(xc);
        graphc_bint m = (graphc_bint)M, n = (graphc_bint)N;
        if (fa.trans == 'N') {
            char t = 'N';
            graphc_dgemv(&t, &m, &n, &alpha, (npy_float64 *)fa.data, &fa.ld, xd, &incx,
                         &beta, yd, &incy);
        } else { /* row-major A is column-major A^T (N x M) */
            char t = 'T';
            graphc_dgemv(&t, &n, &m, &alpha, (npy_float64 *)fa.data, &fa.ld, xd, &incx,
                         &beta, yd, &incy);
        }
    }
    if (yc != NULL && PyArray_CopyInto(y, yc) < 0) goto done;
    rc = 0;
done:
    Py_XDECREF(Ac);
    Py_XDECREF(xc);
    Py_XDECREF(yc);
    return rc;
}

/* a . b for vectors of equal length. */
static int graphc_ddot_vv(PyArrayObject *a, PyArrayObject *b, npy_float64 *out) {
    const npy_intp n = PyArray_DIM(a, 0);
    if (n == 0) {
        *out = 0;
        return 0;
    }
    if (n > GRAPHC_BINT_MAX) {
        PyErr_SetString(PyExc_ValueError, "dot: dimension too large for BLAS");
        return -1;
    }
    PyArrayObject *ac = graphc_maybe_copy(a, graphc_inc_of(a) == 0);
    PyArrayObject *bc = graphc_maybe_copy(b, graphc_inc_of(b) == 0);
    if (ac == NULL || bc == NULL) {
        Py_XDECREF(ac);
        Py_XDECREF(bc);
        return -1;
    }
    graphc_bint nn = (graphc_bint)n, ia = graphc_inc_of(ac), ib = graphc_inc_of(bc);
    if (sizeof(npy_float64) < sizeof(double)) { /* a sum: accumulated in double, as Sum's */
        const npy_float64 *p = (const npy_float64 *)PyArray_DATA(ac), *q = (const npy_float64 *)PyArray_DATA(bc);
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        if (ia == 1 && ib == 1) {
            const npy_intp m = n / 4;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
            for (npy_intp i = 0; i < m; i++) {
                s0 += (double)p[i] * q[i]; s1 += (double)p[i + m] * q[i + m];
                s2 += (double)p[i + 2 * m] * q[i + 2 * m];
                s3 += (double)p[i + 3 * m] * q[i + 3 * m];
            }
            for (npy_intp i = 4 * m; i < n; i++) s0 += (double)p[i] * q[i];
        } else { /* positive increments (graphc_inc_of) */
            for (npy_intp i = 0; i < n; i++) s0 += (double)p[i * ia] * q[i * ib];
        }
        *out = (npy_float64)((s0 + s1) + (s2 + s3));
    } else {
        *out = graphc_ddot(&nn, (npy_float64 *)PyArray_DATA(ac), &ia, (npy_float64 *)PyArray_DATA(bc), &ib);
    }
    Py_DECREF(ac);
    Py_DECREF(bc);
    return 0;
}

/* library text: graphc.linker.c.gen_nnet._SHARED */

/* library text: graphc.linker.c.elemwise_support.VECMATH */

/* softmax (take_log 0) or log-softmax (take_log 1) of the contiguous row x[0..n) into y. */
static void graphc_softmax_row_f64(const npy_float64 *x, npy_float64 *y, npy_intp n, int take_log) {
    npy_float64 m = x[0];
#pragma omp simd reduction(max : m)
    for (npy_intp j = 1; j < n; j++) m = x[j] > m ? x[j] : m;
    if (take_log) {
        if (!isfinite(m)) m = 0;
        double s = 0; /* sums accumulate in double, as Sum of float32 does */
#pragma omp simd reduction(+ : s)
        for (npy_intp j = 0; j < n; j++) s += (double)gc_vm_exp_npy_float64(x[j] - m);
        const npy_float64 ls = log((npy_float64)s);
#pragma omp simd
        for (npy_intp j = 0; j < n; j++) y[j] = (x[j] - m) - ls;
    } else {
        double s = 0;
#pragma omp simd reduction(+ : s)
        for (npy_intp j = 0; j < n; j++) {
            y[j] = gc_vm_exp_npy_float64(x[j] - m);
            s += (double)y[j];
        }
#pragma omp simd
        for (npy_intp j = 0; j < n; j++) y[j] = y[j] / s;
    }
}

/* The same over the middle axis of a C-ordered (outer, n, inner) block, inner > 1:
   the loops run along `inner` (contiguous). `buf` holds 2 * inner scratch doubles. */
static void graphc_softmax_block_f64(const npy_float64 *x, npy_float64 *y, npy_intp n, npy_intp inner,
                                     int take_log, double *buf) {
    double *m = buf, *s = buf + inner;
    for (npy_intp k = 0; k < inner; k++) {
        m[k] = x[k];
        s[k] = 0;
    }
    for (npy_intp j = 1; j < n; j++)
        for (npy_intp k = 0; k < inner; k++) {
            const npy_float64 v = x[j * inner + k];
            m[k] = v > m[k] ? v : m[k];
        }
    if (take_log)
        for (npy_intp k = 0; k < inner; k++) m[k] = isfinite(m[k]) ? m[k] : 0;
    for (npy_intp j = 0; j < n; j++)
#pragma omp simd
        for (npy_intp k = 0; k < inner; k++) {
            npy_float64 e = gc_vm_exp_npy_float64((npy_float64)(x[j * inner + k] - m[k]));
            s[k] += e;
            if (!take_log) y[j * inner + k] = e;
        }
    if (take_log) {
        for (npy_intp k = 0; k < inner; k++) s[k] = (double)log((npy_float64)s[k]);
        for (npy_intp j = 0; j < n; j++)
            for (npy_intp k = 0; k < inner; k++)
                y[j * inner + k] = (x[j * inner + k] - m[k]) - s[k];
    } else {
        for (npy_intp j = 0; j < n; j++)
            for (npy_intp k = 0; k < inner; k++) y[j * inner + k] = y[j * inner + k] / s[k];
    }
}

/* (log-)softmax of `a` along `axis` into a new (or reused) output slot. */
static int graphc_softmax_f64(PyArrayObject *a, int axis, int take_log, PyObject **slot) {
    const int nd = PyArray_NDIM(a);
    PyArrayObject *x = graphc_carray(a);
    if (x == NULL) return -1;
    PyArrayObject *out = graphc_out_array(slot, nd, PyArray_DIMS(a), NPY_FLOAT64);
    if (out == NULL) {
        Py_DECREF(x);
        return -1;
    }
    npy_intp outer = 1, inner = 1, n = PyArray_DIM(a, axis);
    for (int k = 0; k < axis; k++) outer *= PyArray_DIM(a, k);
    for (int k = axis + 1; k < nd; k++) inner *= PyArray_DIM(a, k);
    const npy_float64 *xd = (const npy_float64 *)PyArray_DATA(x);
    npy_float64 *yd = (npy_float64 *)PyArray_DATA(out);
    if (n > 0 && inner == 1) {
        for (npy_intp o = 0; o < outer; o++)
            graphc_softmax_row_f64(xd + o * n, yd + o * n, n, take_log);
    } else if (n > 0 && inner > 0 && outer > 0) {
        double *buf = PyMem_Malloc(2 * inner * sizeof(double));
        if (buf == NULL) {
            Py_DECREF(x);
            Py_DECREF(out);
            PyErr_NoMemory();
            return -1;
        }
        for (npy_intp o = 0; o < outer; o++)
            graphc_softmax_block_f64(xd + o * n * inner, yd + o * n * inner, n, inner, take_log,
                                     buf);
        PyMem_Free(buf);
    }
    Py_DECREF(x);
    Py_XSETREF(*slot, (PyObject *)out);
    return 0;
}

/* ---- module init */
if (graphc_blas_load() < 0) FAIL;
