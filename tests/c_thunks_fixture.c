/* Test-only C thunks following the graphc_thunk_fn ABI (see docs/architecture.md).
 * Compiled by a fixture in tests/test_vm.py; each thunk is exported as a PyCapsule named
 * "graphc.thunk", and PARAMS_10 as a "graphc.params" capsule holding a long. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static long params_10 = 10;

static void set_output(PyObject **slot, PyObject *value) {
    PyObject *old = *slot;
    *slot = value; /* owned */
    Py_XDECREF(old);
}

/* *out = x + c */
static int add_long(PyObject *x, long c, PyObject **out) {
    PyObject *n = PyLong_FromLong(c);
    if (n == NULL) return -1;
    PyObject *r = PyNumber_Add(x, n);
    Py_DECREF(n);
    if (r == NULL) return -1;
    set_output(out, r);
    return 0;
}

/* out0 = in0 + 1 */
static int add1(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params;
    return add_long(inputs[0], 1, &outputs[0]);
}

/* out0 = in0 + *(long *)params */
static int add_param(void *params, PyObject *const *inputs, PyObject **outputs) {
    return add_long(inputs[0], *(long *)params, &outputs[0]);
}

/* out0 = in0 (the same object): the cheapest possible thunk */
static int copy(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params;
    Py_INCREF(inputs[0]);
    set_output(&outputs[0], inputs[0]);
    return 0;
}

/* (out0, out1) = (in1, in0) */
static int swap(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params;
    Py_INCREF(inputs[1]);
    set_output(&outputs[0], inputs[1]);
    Py_INCREF(inputs[0]);
    set_output(&outputs[1], inputs[0]);
    return 0;
}

static int fail(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyErr_SetString(PyExc_ValueError, "fail thunk always fails");
    return -1;
}

/* Broken on purpose: success with the output left NULL. */
static int null_out(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs;
    set_output(&outputs[0], NULL);
    return 0;
}

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_graphc_test_thunks", NULL, -1};

static int add_capsule(PyObject *m, const char *name, void *ptr, const char *cname) {
    PyObject *cap = PyCapsule_New(ptr, cname, NULL);
    if (cap == NULL) return -1;
    if (PyModule_AddObject(m, name, cap) < 0) {
        Py_DECREF(cap);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__graphc_test_thunks(void) {
    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL) return NULL;
    if (add_capsule(m, "add1", (void *)add1, "graphc.thunk") < 0 ||
        add_capsule(m, "add_param", (void *)add_param, "graphc.thunk") < 0 ||
        add_capsule(m, "copy", (void *)copy, "graphc.thunk") < 0 ||
        add_capsule(m, "swap", (void *)swap, "graphc.thunk") < 0 ||
        add_capsule(m, "fail", (void *)fail, "graphc.thunk") < 0 ||
        add_capsule(m, "null_out", (void *)null_out, "graphc.thunk") < 0 ||
        add_capsule(m, "PARAMS_10", &params_10, "graphc.params") < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
