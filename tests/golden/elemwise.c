/* ---- thunk body of node 0: DimShuffle{x,0} */
    const char *name = "DimShuffle{x,0}";
    PyArrayObject *x = gc_input(inputs[0], 0, 1, NPY_FLOAT32, name);
    if (x == NULL) FAIL;
    npy_intp dims[2], strides[2];
    dims[0] = 1; strides[0] = 0;
    dims[1] = PyArray_DIM(x, 0); strides[1] = PyArray_STRIDE(x, 0);
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    PyObject *r = PyArray_NewFromDescr(&PyArray_Type, descr, 2, dims, strides,
        PyArray_DATA(x), PyArray_FLAGS(x) & NPY_ARRAY_WRITEABLE, NULL);
    if (r == NULL) { Py_DECREF(x); FAIL; }
    if (PyArray_SetBaseObject((PyArrayObject *)r, (PyObject *)x) < 0) {
        Py_DECREF(r);
        FAIL;
    }
    Py_XSETREF(*o0, r);

/* ---- thunk body of node 1: Elemwise{Composite{(((exp(i0) * i1) + sqrt(abs(i0))) - tanh(i1))},no_inplace} */
    const char *name = "Elemwise{Composite{(((exp(i0) * i1) + sqrt(abs(i0))) - tanh(i1))},no_inplace}";
    PyArrayObject *in[2], *tmp[2], *own[2];
    npy_intp shape[2], st[6];
    char *data[3];
    int es[3];
    int rc = -1;
    for (int k = 0; k < 2; k++) tmp[k] = own[k] = NULL;
    PyArrayObject *const *fin = (PyArrayObject *const *)inputs;
    int flat = gc_flat_inputs(fin, 2, 2);
    if (flat) {
        data[0] = PyArray_BYTES(fin[0]); es[0] = 4;
        data[1] = PyArray_BYTES(fin[1]); es[1] = 4;
        { PyArrayObject *a = gc_prepare_output(o0, 2, PyArray_DIMS(fin[0]), NPY_FLOAT32);
          if (a == NULL) FAIL; data[2] = PyArray_BYTES(a); }
        es[2] = 4;
        gc_ew_flat(3, PyArray_SIZE(fin[0]), data, es, gc_ew_665332f0d536_c);
        return 0;
    }
    if (!(own[0] = in[0] = gc_input(inputs[0], 0, 2, NPY_FLOAT32, name))) goto done;
    if (!(own[1] = in[1] = gc_input(inputs[1], 1, 2, NPY_FLOAT32, name))) goto done;
    if (gc_broadcast(in, 2, 2, shape, name) < 0) goto done;
    if (!PyArray_ISALIGNED(in[0])) {
        if (!(tmp[0] = (PyArrayObject *)PyArray_NewCopy(in[0], NPY_CORDER))) goto done;
        in[0] = tmp[0];
    }
    if (!PyArray_ISALIGNED(in[1])) {
        if (!(tmp[1] = (PyArrayObject *)PyArray_NewCopy(in[1], NPY_CORDER))) goto done;
        in[1] = tmp[1];
    }
    data[0] = PyArray_BYTES(in[0]); es[0] = 4;
    gc_strides(in[0], 2, &st[0]);
    data[1] = PyArray_BYTES(in[1]); es[1] = 4;
    gc_strides(in[1], 2, &st[2]);
    { PyArrayObject *a = gc_prepare_output(o0, 2, shape, NPY_FLOAT32);
      if (a == NULL) goto done;
      data[2] = PyArray_BYTES(a); es[2] = 4; gc_strides(a, 2, &st[4]); }
    gc_ew_loop(3, 2, 2, shape, data, st, es, gc_ew_665332f0d536_c, gc_ew_665332f0d536_s);
    rc = 0;
done:
    Py_XDECREF(tmp[0]); Py_XDECREF(own[0]);
    Py_XDECREF(tmp[1]); Py_XDECREF(own[1]);
    if (rc < 0) FAIL;

/* ---- thunk body of node 2: Elemwise{le,no_inplace} */
    const char *name = "Elemwise{le,no_inplace}";
    PyArrayObject *in[2], *tmp[2], *own[2];
    npy_intp shape[1], st[3];
    char *data[3];
    int es[3];
    int rc = -1;
    for (int k = 0; k < 2; k++) tmp[k] = own[k] = NULL;
    PyArrayObject *const *fin = (PyArrayObject *const *)inputs;
    int flat = gc_flat_inputs(fin, 2, 1);
    if (flat) {
        data[0] = PyArray_BYTES(fin[0]); es[0] = 8;
        data[1] = PyArray_BYTES(fin[1]); es[1] = 8;
        { PyArrayObject *a = gc_prepare_output(o0, 1, PyArray_DIMS(fin[0]), NPY_BOOL);
          if (a == NULL) FAIL; data[2] = PyArray_BYTES(a); }
        es[2] = 1;
        gc_ew_flat(3, PyArray_SIZE(fin[0]), data, es, gc_ew_058905ad5e2f_c);
        return 0;
    }
    if (!(own[0] = in[0] = gc_input(inputs[0], 0, 1, NPY_INT64, name))) goto done;
    if (!(own[1] = in[1] = gc_input(inputs[1], 1, 1, NPY_UINT64, name))) goto done;
    if (gc_broadcast(in, 2, 1, shape, name) < 0) goto done;
    if (!PyArray_ISALIGNED(in[0])) {
        if (!(tmp[0] = (PyArrayObject *)PyArray_NewCopy(in[0], NPY_CORDER))) goto done;
        in[0] = tmp[0];
    }
    if (!PyArray_ISALIGNED(in[1])) {
        if (!(tmp[1] = (PyArrayObject *)PyArray_NewCopy(in[1], NPY_CORDER))) goto done;
        in[1] = tmp[1];
    }
    data[0] = PyArray_BYTES(in[0]); es[0] = 8;
    gc_strides(in[0], 1, &st[0]);
    data[1] = PyArray_BYTES(in[1]); es[1] = 8;
    gc_strides(in[1], 1, &st[1]);
    { PyArrayObject *a = gc_prepare_output(o0, 1, shape, NPY_BOOL);
      if (a == NULL) goto done;
      data[2] = PyArray_BYTES(a); es[2] = 1; gc_strides(a, 1, &st[2]); }
    gc_ew_loop(3, 2, 1, shape, data, st, es, gc_ew_058905ad5e2f_c, gc_ew_058905ad5e2f_s);
    rc = 0;
done:
    Py_XDECREF(tmp[0]); Py_XDECREF(own[0]);
    Py_XDECREF(tmp[1]); Py_XDECREF(own[1]);
    if (rc < 0) FAIL;

/* ---- thunk body of node 3: Sum{axis=[0]} */
    const char *name = "Sum{axis=[0]}";
    PyArrayObject *own = gc_input(inputs[0], 0, 2, NPY_FLOAT32, name);
    if (own == NULL) FAIL;
    PyArrayObject *x = own, *tmp = NULL;
    npy_intp kd[1], ks[1], rd[1], rs[1];
    kd[0] = PyArray_DIM(x, 1);
    rd[0] = PyArray_DIM(x, 0);
    if (!PyArray_ISALIGNED(x)) {
        tmp = (PyArrayObject *)PyArray_NewCopy(x, NPY_CORDER);
        if (tmp == NULL) { Py_DECREF(own); FAIL; }
        x = tmp;
    }
    ks[0] = PyArray_STRIDE(x, 1);
    rs[0] = PyArray_STRIDE(x, 0);
    PyArrayObject *out = gc_prepare_output(o0, 1, kd, NPY_FLOAT32);
    if (out == NULL) { Py_XDECREF(tmp); Py_DECREF(own); FAIL; }
    static const int is_red[2] = {1, 0}; (void)is_red;
    PyArrayObject *at = (PyArrayObject *)PyArray_EMPTY(1, kd, NPY_FLOAT64, 0);
    if (at == NULL) { Py_XDECREF(tmp); Py_DECREF(own); FAIL; }
    int done_t = gc_reduce_acc(x, is_red, at, gc_red_c0106d042b74_init, gc_red_c0106d042b74_fa, gc_red_c0106d042b74_c, gc_red_c0106d042b74_s);
    if (!done_t &&
        1) gc_reduce(1, kd, ks, 1, rd, rs, 1, PyArray_BYTES(x), PyArray_BYTES(out), 4,
              gc_red_c0106d042b74_init, gc_red_c0106d042b74_step, gc_red_c0106d042b74_fin);
    if (done_t && PyArray_CopyInto(out, at) < 0) {
        Py_DECREF(at); Py_XDECREF(tmp); Py_DECREF(own); FAIL;
    }
    Py_DECREF(at);
    Py_XDECREF(tmp);
    Py_DECREF(own);

/* ---- thunk body of node 4: Argmax{axis=[1]} */
    const char *name = "Argmax{axis=[1]}";
    PyArrayObject *own = gc_input(inputs[0], 0, 2, NPY_FLOAT32, name);
    if (own == NULL) FAIL;
    PyArrayObject *x = own, *tmp = NULL;
    npy_intp kd[1], ks[1], rd[1], rs[1];
    kd[0] = PyArray_DIM(x, 0);
    rd[0] = PyArray_DIM(x, 1);
    if (rd[0] == 0) { PyErr_Format(PyExc_ValueError, "%s: attempt to get the argmax of an empty axis", name); Py_DECREF(own); FAIL; }
    if (!PyArray_ISALIGNED(x)) {
        tmp = (PyArrayObject *)PyArray_NewCopy(x, NPY_CORDER);
        if (tmp == NULL) { Py_DECREF(own); FAIL; }
        x = tmp;
    }
    ks[0] = PyArray_STRIDE(x, 0);
    rs[0] = PyArray_STRIDE(x, 1);
    PyArrayObject *out = gc_prepare_output(o0, 1, kd, NPY_INT64);
    if (out == NULL) { Py_XDECREF(tmp); Py_DECREF(own); FAIL; }
    static const int is_red[2] = {0, 1}; (void)is_red;
    if (1) gc_reduce(1, kd, ks, 1, rd, rs, 0, PyArray_BYTES(x), PyArray_BYTES(out), 8,
              gc_arg_6e4c92bdc210_init, gc_arg_6e4c92bdc210_step, gc_arg_6e4c92bdc210_fin);
    Py_XDECREF(tmp);
    Py_DECREF(own);

/* ---- thunk body of node 5: DimShuffle{0,x} */
    const char *name = "DimShuffle{0,x}";
    PyArrayObject *x = gc_input(inputs[0], 0, 1, NPY_FLOAT32, name);
    if (x == NULL) FAIL;
    npy_intp dims[2], strides[2];
    dims[0] = PyArray_DIM(x, 0); strides[0] = PyArray_STRIDE(x, 0);
    dims[1] = 1; strides[1] = 0;
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    PyObject *r = PyArray_NewFromDescr(&PyArray_Type, descr, 2, dims, strides,
        PyArray_DATA(x), PyArray_FLAGS(x) & NPY_ARRAY_WRITEABLE, NULL);
    if (r == NULL) { Py_DECREF(x); FAIL; }
    if (PyArray_SetBaseObject((PyArrayObject *)r, (PyObject *)x) < 0) {
        Py_DECREF(r);
        FAIL;
    }
    Py_XSETREF(*o0, r);

/* library text: graphc.linker.c.elemwise_support.SUPPORT[0] */

/* library text: graphc.linker.c.elemwise_support.VECMATH */

/* library text: graphc.linker.c.elemwise_support._DRIVER */

static inline npy_int8 gc_abs_npy_int8(npy_int8 a) { return a < 0 ? (npy_int8)(0 - (npy_uint64)a) : a; }
static inline npy_int16 gc_abs_npy_int16(npy_int16 a) { return a < 0 ? (npy_int16)(0 - (npy_uint64)a) : a; }
static inline npy_int32 gc_abs_npy_int32(npy_int32 a) { return a < 0 ? (npy_int32)(0 - (npy_uint64)a) : a; }
static inline npy_int64 gc_abs_npy_int64(npy_int64 a) { return a < 0 ? (npy_int64)(0 - (npy_uint64)a) : a; }
static inline npy_uint8 gc_abs_npy_uint8(npy_uint8 a) { return a < 0 ? (npy_uint8)(0 - (npy_uint64)a) : a; }
static inline npy_uint16 gc_abs_npy_uint16(npy_uint16 a) { return a < 0 ? (npy_uint16)(0 - (npy_uint64)a) : a; }
static inline npy_uint32 gc_abs_npy_uint32(npy_uint32 a) { return a < 0 ? (npy_uint32)(0 - (npy_uint64)a) : a; }
static inline npy_uint64 gc_abs_npy_uint64(npy_uint64 a) { return a < 0 ? (npy_uint64)(0 - (npy_uint64)a) : a; }
static inline npy_bool gc_abs_npy_bool(npy_bool a) { return a < 0 ? (npy_bool)(0 - (npy_uint64)a) : a; }

GCVM_NOINLINE void gc_ew_665332f0d536_t(npy_intp i0, npy_intp n, char **p) {
    const npy_float32 *q0 = (const npy_float32 *)p[0];
    const npy_float32 *q1 = (const npy_float32 *)p[1];
    npy_float32 *q2 = (npy_float32 *)p[2];
#pragma omp simd
    for (npy_intp i = i0; i < n; i++) {
        const npy_float32 x0 = q0[i];
        const npy_float32 x1 = q1[i];
        npy_float32 t0 = gc_vm_exp_npy_float32((npy_float32)x0);
        npy_float32 t1 = (((npy_float32)t0) * ((npy_float32)x1));
        npy_float32 t2 = fabsf((npy_float32)x0);
        npy_float32 t3 = sqrtf((npy_float32)t2);
        npy_float32 t4 = (((npy_float32)t1) + ((npy_float32)t3));
        npy_float32 t5 = gc_vm_tanh_npy_float32((npy_float32)x1);
        npy_float32 t6 = (((npy_float32)t4) - ((npy_float32)t5));
        q2[i] = (npy_float32)(t6);
    }
}
GCVM_INLINE void gc_ew_665332f0d536_b(const npy_float32 *restrict b0, const npy_float32 *restrict b1, npy_float32 *restrict o0) {
#pragma omp simd
    for (npy_intp j = 0; j < 64; j++) {
        const npy_float32 x0 = b0[j];
        const npy_float32 x1 = b1[j];
        npy_float32 t0 = gc_vm_exp_npy_float32((npy_float32)x0);
        npy_float32 t1 = (((npy_float32)t0) * ((npy_float32)x1));
        npy_float32 t2 = fabsf((npy_float32)x0);
        npy_float32 t3 = sqrtf((npy_float32)t2);
        npy_float32 t4 = (((npy_float32)t1) + ((npy_float32)t3));
        npy_float32 t5 = gc_vm_tanh_npy_float32((npy_float32)x1);
        npy_float32 t6 = (((npy_float32)t4) - ((npy_float32)t5));
        o0[j] = (npy_float32)(t6);
    }
}
GCVM_INLINE void gc_ew_665332f0d536_v(const npy_float32 *restrict b0, const npy_float32 *restrict b1, npy_float32 *restrict o0) {
#pragma omp simd
    for (npy_intp j = 0; j < 16; j++) {
        const npy_float32 x0 = b0[j];
        const npy_float32 x1 = b1[j];
        npy_float32 t0 = gc_vm_exp_npy_float32((npy_float32)x0);
        npy_float32 t1 = (((npy_float32)t0) * ((npy_float32)x1));
        npy_float32 t2 = fabsf((npy_float32)x0);
        npy_float32 t3 = sqrtf((npy_float32)t2);
        npy_float32 t4 = (((npy_float32)t1) + ((npy_float32)t3));
        npy_float32 t5 = gc_vm_tanh_npy_float32((npy_float32)x1);
        npy_float32 t6 = (((npy_float32)t4) - ((npy_float32)t5));
        o0[j] = (npy_float32)(t6);
    }
}
GCVM_INLINE void gc_ew_665332f0d536_l(const npy_float32 *b0, const npy_float32 *b1, npy_float32 *o0) {
    npy_float32 r0[64];
#pragma omp simd
    for (npy_intp j = 0; j < 64; j++) {
        const npy_float32 x0 = b0[j];
        const npy_float32 x1 = b1[j];
        npy_float32 t0 = gc_vm_exp_npy_float32((npy_float32)x0);
        npy_float32 t1 = (((npy_float32)t0) * ((npy_float32)x1));
        npy_float32 t2 = fabsf((npy_float32)x0);
        npy_float32 t3 = sqrtf((npy_float32)t2);
        npy_float32 t4 = (((npy_float32)t1) + ((npy_float32)t3));
        npy_float32 t5 = gc_vm_tanh_npy_float32((npy_float32)x1);
        npy_float32 t6 = (((npy_float32)t4) - ((npy_float32)t5));
        r0[j] = (npy_float32)(t6);
    }
#pragma omp simd
    for (npy_intp j = 0; j < 64; j++) {
        o0[j] = r0[j];
    }
}
static void gc_ew_665332f0d536_c(npy_intp n, char **p) {
    const npy_float32 *q0 = (const npy_float32 *)p[0];
    const npy_float32 *q1 = (const npy_float32 *)p[1];
    npy_float32 *q2 = (npy_float32 *)p[2];
    npy_intp i0 = 0;
    if (((npy_uintp)q2 < (npy_uintp)(q0 + n) && (npy_uintp)q0 < (npy_uintp)(q2 + n)) || ((npy_uintp)q2 < (npy_uintp)(q1 + n) && (npy_uintp)q1 < (npy_uintp)(q2 + n))) {
        for (; i0 + 64 <= n; i0 += 64) {
            gc_ew_665332f0d536_l(q0 + i0, q1 + i0, q2 + i0);
        }
    } else {
        for (; i0 + 64 <= n; i0 += 64) {
            gc_ew_665332f0d536_b(q0 + i0, q1 + i0, q2 + i0);
        }
        for (; i0 + 16 <= n; i0 += 16) {
            gc_ew_665332f0d536_v(q0 + i0, q1 + i0, q2 + i0);
        }
    }
    if (i0 < n) gc_ew_665332f0d536_t(i0, n, p);
}
static void gc_ew_665332f0d536_s(npy_intp n, char **p, const npy_intp *s) {
    for (npy_intp i = 0; i < n; i++) {
        const npy_float32 x0 = *(const npy_float32 *)(p[0] + i * s[0]);
        const npy_float32 x1 = *(const npy_float32 *)(p[1] + i * s[1]);
        npy_float32 t0 = gc_vmo_exp_npy_float32((npy_float32)x0);
        npy_float32 t1 = (((npy_float32)t0) * ((npy_float32)x1));
        npy_float32 t2 = fabsf((npy_float32)x0);
        npy_float32 t3 = sqrtf((npy_float32)t2);
        npy_float32 t4 = (((npy_float32)t1) + ((npy_float32)t3));
        npy_float32 t5 = gc_vmo_tanh_npy_float32((npy_float32)x1);
        npy_float32 t6 = (((npy_float32)t4) - ((npy_float32)t5));
        *(npy_float32 *)(p[2] + i * s[2]) = (npy_float32)(t6);
    }
}

static void gc_ew_058905ad5e2f_c(npy_intp n, char **p) {
    const npy_int64 *q0 = (const npy_int64 *)p[0];
    const npy_uint64 *q1 = (const npy_uint64 *)p[1];
    npy_bool *q2 = (npy_bool *)p[2];
#pragma omp simd
    for (npy_intp i = 0; i < n; i++) {
        const npy_int64 x0 = q0[i];
        const npy_uint64 x1 = q1[i];
        q2[i] = (npy_bool)(((((npy_int64)x0) < 0 || ((npy_uint64)((npy_int64)x0) <= ((npy_uint64)x1)))) != 0);
    }
}
static void gc_ew_058905ad5e2f_s(npy_intp n, char **p, const npy_intp *s) {
    for (npy_intp i = 0; i < n; i++) {
        const npy_int64 x0 = *(const npy_int64 *)(p[0] + i * s[0]);
        const npy_uint64 x1 = *(const npy_uint64 *)(p[1] + i * s[1]);
        *(npy_bool *)(p[2] + i * s[2]) = (npy_bool)(((((npy_int64)x0) < 0 || ((npy_uint64)((npy_int64)x0) <= ((npy_uint64)x1)))) != 0);
    }
}

static void gc_red_c0106d042b74_init(void *acc) { *(npy_float64 *)acc = (npy_float64)(0); }
static void gc_red_c0106d042b74_step(npy_intp n, const char *p, npy_intp s, void *acc) {
    npy_float64 a = *(npy_float64 *)acc;
    if (s == (npy_intp)sizeof(npy_float32) && n >= 64) {
        const npy_float32 *q = (const npy_float32 *)p;
        npy_intp m = n / 4;
        npy_float64 s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+:s0, s1, s2, s3)
        for (npy_intp i = 0; i < m; i++) {
            s0 += (npy_float64)q[i]; s1 += (npy_float64)q[i + m];
            s2 += (npy_float64)q[i + 2 * m]; s3 += (npy_float64)q[i + 3 * m];
        }
        for (npy_intp i = 4 * m; i < n; i++) s0 += (npy_float64)q[i];
        a += (s0 + s1) + (s2 + s3);
    } else {
        for (npy_intp i = 0; i < n; i++) a += (npy_float64)*(const npy_float32 *)(p + i * s);
    }
    *(npy_float64 *)acc = a;
}
static void gc_red_c0106d042b74_fin(const void *acc, char *out) { *(npy_float32 *)out = (npy_float32)(*(const npy_float64 *)acc); }
static void gc_red_c0106d042b74_c(npy_intp n, char **p) {
    const npy_float32 *q = (const npy_float32 *)p[0]; const npy_float64 *r = (const npy_float64 *)p[1];
    npy_float64 *o = (npy_float64 *)p[2];
#pragma omp simd
    for (npy_intp i = 0; i < n; i++) {
        const npy_float32 x0 = q[i]; const npy_float64 x1 = r[i]; o[i] = (npy_float64)(((npy_float64)x1 + (npy_float64)x0));
    }
}
static void gc_red_c0106d042b74_s(npy_intp n, char **p, const npy_intp *s) {
    for (npy_intp i = 0; i < n; i++) {
        const npy_float32 x0 = *(const npy_float32 *)(p[0] + i * s[0]);
        const npy_float64 x1 = *(const npy_float64 *)(p[1] + i * s[1]);
        *(npy_float64 *)(p[2] + i * s[2]) = (npy_float64)(((npy_float64)x1 + (npy_float64)x0));
    }
}
static void gc_red_c0106d042b74_fa(const void *acc, char *out) { *(npy_float64 *)out = *(const npy_float64 *)acc; }

typedef struct { npy_float32 best; npy_int64 idx, k; int have, nan; } gc_arg_6e4c92bdc210_acc;
static void gc_arg_6e4c92bdc210_init(void *acc) { memset(acc, 0, sizeof(gc_arg_6e4c92bdc210_acc)); }
static void gc_arg_6e4c92bdc210_step(npy_intp n, const char *p, npy_intp s, void *acc) {
    gc_arg_6e4c92bdc210_acc *st = (gc_arg_6e4c92bdc210_acc *)acc;
    if (n <= 0) return;
    if (!st->have) {
        npy_float32 v = *(const npy_float32 *)p;
        st->best = v; st->idx = st->k; st->have = 1;
        if (v != v) st->nan = 1;
        p += s; n--; st->k++;
    }
    if (st->nan) { st->k += n; return; }
    npy_float32 best = st->best;
    npy_intp bi = -1, len = n;
    if (s == (npy_intp)sizeof(npy_float32) && n >= 16) {
        const npy_float32 *q = (const npy_float32 *)p;
        npy_float32 m = q[0]; int nan = 0;
#pragma omp simd reduction(max:m) reduction(|:nan)
        for (npy_intp i = 0; i < n; i++) {
            npy_float32 v = q[i]; m = v > m ? v : m; nan |= (v != v);
        }
        if (nan) {
            for (npy_intp i = 0; i < n; i++) if (q[i] != q[i]) { bi = i; break; }
            best = q[bi];
        }
        if (bi < 0 && m > best) {
            for (npy_intp i = 0; i < n; i++) if (q[i] == m) { bi = i; break; }
            best = m;
        }
        n = 0;
    }
    for (npy_intp i = 0; i < n; i++) {
        npy_float32 v = *(const npy_float32 *)(p + i * s);
        if (v > best) { best = v; bi = i; } else if (v != v) { best = v; bi = i; break; }
    }
    if (bi >= 0) {
        st->best = best; st->idx = st->k + bi;
        if (best != best) st->nan = 1;
    }
    st->k += len;
}
static void gc_arg_6e4c92bdc210_fin(const void *acc, char *out) {
    *(npy_int64 *)out = ((const gc_arg_6e4c92bdc210_acc *)acc)->idx;
}

/* ---- module init */
