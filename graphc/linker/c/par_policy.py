"""The OpenMP side of the element-wise loops (``config.openmp``), seen from Python.

- ``COUNTS`` / ``counts()``: how the long runs of every compiled module went (serial,
  split, tries of the way not chosen, split runs that waited for a late thread); the
  generated C adds to ``COUNTS`` itself.
- ``configure_runtime()``: libgomp's idle threads (OpenMP regions: the bandwidth
  calibration's triad; the element-wise loops use a pool of their own) wait for the next
  region without spinning long (``GOMP_SPINCOUNT``), unless the environment already says
  how; called before the first module built with ``-fopenmp`` is loaded, since libgomp
  reads it only then.
- ``simulate()``: the split-or-serial policy (``elemwise_par.c``) fed with made-up
  timings, for tests and for reasoning about it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

COUNTS = np.zeros(4, dtype=np.int64)
_NAMES = ("serial", "split", "tries", "late_splits")

# A spinning worker keeps its core after a loop ends, which the main thread (or another
# process) needs next. PAUSE takes ~140 cycles on recent Intel cores, so libgomp's default
# 300000 spins hold the core ~20 ms; 1000 (tens of microseconds) still catch back-to-back
# loops.
SPINCOUNT = "1000"

_SIM_C = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
%(policy)s
/* simulate(threads, runs) -> [(way, tries, late, woke) ...]; runs: (serial_ns, split_ns,
   main_ns, n, n_main, woken_ns, pause) per run, the timing the way taken would show
   (woken_ns: a split that had to wake the workers; pause: the workers fell asleep before
   this run). The workers sleep until the first split, after a serial run (which tells
   the pool to rest) and after a pause. */
static PyObject *simulate(PyObject *self, PyObject *args) {
    int threads; PyObject *runs;
    if (!PyArg_ParseTuple(args, "iO!", &threads, &PyList_Type, &runs)) return NULL;
    gc_par_state s = GC_PAR_STATE_INIT;
    int asleep = 1;
    Py_ssize_t k, m = PyList_GET_SIZE(runs);
    PyObject *out = PyList_New(m);
    if (!out) return NULL;
    for (k = 0; k < m; k++) {
        double ser, spl, main_ns, n, n_main, woken_ns;
        int pause;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(runs, k), "ddddddp", &ser, &spl, &main_ns, &n,
                              &n_main, &woken_ns, &pause)) { Py_DECREF(out); return NULL; }
        asleep |= pause;
        int way = gc_par_decide(&s, threads), woke = way && asleep;
        asleep = !way;
        gc_par_learn(&s, way, way ? (woke ? woken_ns : spl) : ser, n, main_ns, n_main, woke);
        PyList_SET_ITEM(out, k, Py_BuildValue("(illi)", way, s.count[2], s.count[3], woke));
    }
    return out;
}
static PyMethodDef methods[] = {{"simulate", simulate, METH_VARARGS, "simulate"},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "graphc_par_policy", NULL, -1,
                                 methods};
PyMODINIT_FUNC GRAPHC_INIT(void) { return PyModule_Create(&mod); }
"""


def counts() -> dict[str, int]:
    """Long element-wise runs so far, over all modules: serial, split, tries, late splits."""
    return {k: int(v) for k, v in zip(_NAMES, COUNTS)}


def reset_counts() -> None:
    COUNTS[:] = 0


def configure_runtime(environ: dict[str, str] | None = None) -> bool:
    """Ask libgomp's idle threads to spin briefly (``GOMP_SPINCOUNT``) unless
    ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` is set; True when it set it. Effective only
    before libgomp is loaded."""
    env = os.environ if environ is None else environ
    if "OMP_WAIT_POLICY" in env or "GOMP_SPINCOUNT" in env:
        return False
    env["GOMP_SPINCOUNT"] = SPINCOUNT
    return True


def simulate(
    runs: Sequence[tuple[float, ...]], threads: int = 2
) -> list[tuple[int, int, int, int]]:
    """Run the policy over ``runs``; per run: the ns a serial run would take, the ns a
    split one would take, the ns its main thread took for its share, the elements, the
    main thread's elements, and optionally the ns of a split that has to wake the workers
    (default: as any split) and whether they fell asleep before it (a pause in the
    caller). Per run: the way taken (1 split), the tries and late splits so far, and
    whether the run woke the workers (they sleep until the first split and after a serial
    run)."""
    from graphc.linker.c.elemwise_support import PAR_POLICY
    from graphc.linker.cache import get_cache

    module = get_cache().load(_SIM_C % {"policy": PAR_POLICY}, name_hint="par_policy")
    full = [tuple(map(float, r[:5])) + (float(r[5] if len(r) > 5 else r[1]),
                                        bool(r[6]) if len(r) > 6 else False)
            for r in runs]  # fmt: skip
    return [tuple(r) for r in module.simulate(threads, full)]
