"""The "c|py" linker: one C module per function, Python ``perform`` for the other nodes.

For each node of the schedule the registry (:func:`graphc.linker.c.generators.c_code_for`)
says whether it has C. All C nodes of a function go into ONE translation unit (identical
thunks and support code are emitted once), compiled through the compile cache; its module
exposes ``thunks()``, a tuple of ``"graphc.thunk"`` capsules, and ``kernels()``, per thunk
its element-wise kernel as a ``"graphc.ew_kernel"`` capsule or None (see
``graphc.linker.c.registry``). Without a compiler every node
runs in Python, with one warning saying why. A compile error of generated code is a bug and
is raised (the message shows the compiler output and where the source was kept).
"""

from __future__ import annotations

import os
import re
import threading
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from graphc.flags import config
from graphc.graph.basic import Apply, Variable
from graphc.graph.fg import FunctionGraph
from graphc.import_clock import imports_ns
from graphc.linker.base import InnerCompiler, Linked, NodeImpl, link, py_impl
from graphc.linker.blas_threads import coordinate
from graphc.linker.c.common import c_string
from graphc.linker.c.generators import c_code_for
from graphc.linker.c.registry import CThunkCode
from graphc.linker.cache import CacheError, get_cache
from graphc.linker.compiler import Compiler, CompilerUnavailable, compiler_source, find_compiler
from graphc.tensor.type import TensorType

__all__ = ["available", "has_c_code", "link_cpy", "generate_module", "reset_available"]

_avail_lock = threading.Lock()
_avail: dict[tuple[str, str], tuple[bool, str]] = {}


def _compiler() -> Compiler:
    """The compiler, probed once per binary and remembered in the compile cache (a new
    process does not run ``cc --version`` and the libmvec link test again)."""
    try:
        probe_dir = get_cache().dir / "compilers"
    except (CacheError, OSError):
        probe_dir = None
    return find_compiler(probe_dir)


def _probe() -> tuple[bool, str]:
    key = (compiler_source(), os.environ.get("PATH", ""))
    found = _avail.get(key)
    if found is not None:
        return found
    with _avail_lock:
        try:
            _compiler()
            found = (True, "")
        except CompilerUnavailable as exc:
            found = (False, str(exc))
        except OSError as exc:
            found = (False, f"cannot run the C compiler: {exc}")
        _avail[key] = found
    return found


def available() -> bool:
    """True when a C compiler works (memoized per compiler command and ``$PATH``)."""
    return _probe()[0]


def reset_available() -> None:
    """Forget the memoized answer of :func:`available`."""
    _avail.clear()


def has_c_code(node: Apply) -> bool:
    """Whether ``node`` gets a C thunk from the registry."""
    return c_code_for(node) is not None


_PRELUDE = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <numpy/arrayobject.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#define FAIL return -1

/* Every thunk runs behind graphc_checked: each array input must be an ndarray of the
   node's declared ndim and dtype (numpy scalars are converted), else TypeError. Generated
   bodies may then read their inputs without further checks, whatever a caller with
   trust_input=True hands them. */
typedef struct { int nd; int typenum; } graphc_in_spec; /* nd < 0: not an array input */
typedef int (*graphc_run_fn)(void *, PyObject *const *, PyObject **);

static int graphc_checked_slow(graphc_run_fn run, const graphc_in_spec *spec, int n,
                               const char *name, void *params, PyObject *const *inputs,
                               PyObject **outputs) {
    PyObject **tmp = PyMem_Calloc(n > 0 ? n : 1, sizeof(PyObject *));
    int rc = -1, j;
    if (tmp == NULL) { PyErr_NoMemory(); return -1; }
    for (j = 0; j < n; j++) {
        PyObject *o = inputs[j];
        if (spec[j].nd >= 0 && !PyArray_Check(o) && PyArray_IsScalar(o, Generic))
            o = PyArray_FromScalar(o, NULL);
        else
            Py_INCREF(o);
        if (o == NULL) goto done;
        tmp[j] = o;
        if (spec[j].nd < 0) continue;
        if (!PyArray_Check(o) || PyArray_NDIM((PyArrayObject *)o) != spec[j].nd
            || !PyArray_EquivTypenums(PyArray_TYPE((PyArrayObject *)o), spec[j].typenum)) {
            PyArray_Descr *want = PyArray_DescrFromType(spec[j].typenum);
            if (PyArray_Check(o))
                PyErr_Format(PyExc_TypeError,
                             "%s: input %d must be a %d-d array of dtype %S, got a %d-d array "
                             "of dtype %S", name, j, spec[j].nd, (PyObject *)want,
                             PyArray_NDIM((PyArrayObject *)o),
                             (PyObject *)PyArray_DESCR((PyArrayObject *)o));
            else
                PyErr_Format(PyExc_TypeError,
                             "%s: input %d must be a %d-d array of dtype %S, got %.100s", name,
                             j, spec[j].nd, (PyObject *)want, Py_TYPE(inputs[j])->tp_name);
            Py_XDECREF(want);
            goto done;
        }
    }
    rc = run(params, tmp, outputs);
done:
    for (j = 0; j < n; j++) Py_XDECREF(tmp[j]);
    PyMem_Free(tmp);
    return rc;
}

static inline int graphc_checked(graphc_run_fn run, const graphc_in_spec *spec, int n,
                                 const char *name, void *params, PyObject *const *inputs,
                                 PyObject **outputs) {
    for (int j = 0; j < n; j++) {
        PyObject *o = inputs[j];
        if (spec[j].nd < 0) continue;
        if (!PyArray_Check(o) || PyArray_NDIM((PyArrayObject *)o) != spec[j].nd
            || PyArray_TYPE((PyArrayObject *)o) != spec[j].typenum)
            return graphc_checked_slow(run, spec, n, name, params, inputs, outputs);
    }
    return run(params, inputs, outputs);
}
"""


def generate_module(codes: Sequence[CThunkCode]) -> tuple[str, list[int]]:
    """One C source for ``codes``; also the thunk index of each code (deduplicated)."""
    support: list[str] = []
    seen_support: set[str] = set()
    init: list[str] = []
    seen_init: set[str] = set()
    bodies: list[tuple[str, tuple[tuple[int, int], ...], str]] = []
    kernels: list[str] = []  # per body, its element-wise kernel's C name or ""
    by_key: dict[object, int] = {}
    index: list[int] = []
    for code in codes:
        for s in code.support:
            if s not in seen_support:
                seen_support.add(s)
                support.append(s)
        for s in code.init:
            if s not in seen_init:
                seen_init.add(s)
                init.append(s)
        full = (code.body, code.inputs, code.name)
        dkey = ("key", code.key, code.inputs) if code.key is not None else ("body", full)
        k = by_key.get(dkey)
        if k is None:
            k = by_key.get(("body", full))
            if k is None:
                k = len(bodies)
                bodies.append(full)
                kernels.append(code.kernel)
                by_key[("body", full)] = k
            by_key[dkey] = k
        index.append(k)
    _check_helpers_unique(support)
    parts = [_PRELUDE, *support]
    for k, (body, spec, name) in enumerate(bodies):
        parts.append(_thunk(k, body, spec, name))
    parts.append(_module_functions(len(bodies), kernels, init))
    return "\n".join(parts), index


def _module_functions(n: int, kernels: Sequence[str], init: Sequence[str]) -> str:
    """The module's init, ``thunks()`` and ``kernels()`` (``n`` thunks) and its tables."""
    caps = "\n".join(
        f'    if (!(c = PyCapsule_New((void *)&thunk_{k}, "graphc.thunk", NULL))) goto fail;\n'
        f"    PyTuple_SET_ITEM(t, {k}, c);"
        for k in range(n)
    )
    init_body = "\n".join(f"    {s}" for s in init)
    return f"""
static int graphc_module_init(void) {{
{init_body}
    return 0;
}}

static PyObject *graphc_thunks(PyObject *self, PyObject *noargs) {{
    (void)self; (void)noargs;
    PyObject *c, *t = PyTuple_New({n});
    if (!t) return NULL;
{caps}
    return t;
fail:
    Py_DECREF(t);
    return NULL;
}}

static PyObject *graphc_kernels(PyObject *self, PyObject *noargs) {{
    (void)self; (void)noargs;
    PyObject *c, *t = PyTuple_New({n});
    if (!t) return NULL;
{_kernel_capsules(kernels)}
    return t;
fail:
    Py_DECREF(t);
    return NULL;
}}

static PyMethodDef graphc_methods[] = {{
    {{"thunks", graphc_thunks, METH_NOARGS, "The thunks as graphc.thunk capsules."}},
    {{"kernels", graphc_kernels, METH_NOARGS, "Per thunk, its graphc.ew_kernel or None."}},
    {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef graphc_module = {{
    PyModuleDef_HEAD_INIT, "graphc_cthunks", NULL, -1, graphc_methods
}};

PyMODINIT_FUNC GRAPHC_INIT(void) {{
    import_array();
    if (graphc_module_init() < 0) {{
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "graphc: C module initialisation failed");
        return NULL;
    }}
    return PyModule_Create(&graphc_module);
}}
"""


def _kernel_capsules(kernels: Sequence[str]) -> str:
    """C filling tuple ``t`` with, per thunk, its kernel's capsule or None."""
    lines = ["    if (0) goto fail; /* a module without kernels uses no label */"]
    for k, name in enumerate(kernels):
        if name:
            lines.append(f'    if (!(c = PyCapsule_New((void *)&{name}, "graphc.ew_kernel", NULL)))'
                         " goto fail;")  # fmt: skip
        else:
            lines.append("    c = Py_None; Py_INCREF(c);")
        lines.append(f"    PyTuple_SET_ITEM(t, {k}, c);")
    return "\n".join(lines)


_C_DEFINITION = re.compile(r"^static\b[^;{=]*?\b(\w+)\s*\([^;]*?\)\s*\{", re.M | re.S)


def _check_helpers_unique(support: Sequence[str]) -> None:
    """Two different support blocks defining one C function would not compile (or worse,
    link the wrong one): say which generator's helper must move to a shared block."""
    owner: dict[str, int] = {}
    for k, text in enumerate(support):
        for name in _C_DEFINITION.findall(text):
            if owner.setdefault(name, k) != k:
                raise ValueError(
                    f"C helper {name!r} is defined in two different support blocks; "
                    "move it to a block of its own so it is emitted once"
                )


def _thunk(k: int, body: str, spec: tuple[tuple[int, int], ...], name: str) -> str:
    sig = "(void *params, PyObject *const *inputs, PyObject **outputs)"
    entries = ", ".join(f"{{{nd}, {num}}}" for nd, num in spec) or "{-1, 0}"
    return (
        f"static int thunk_{k}_run{sig} {{\n"
        f"    (void)params; (void)inputs; (void)outputs;\n"
        f"{body}\n"
        f"    return 0;\n"
        f"}}\n"
        f"static const graphc_in_spec thunk_{k}_in[] = {{{entries}}};\n"
        f"static int thunk_{k}{sig} {{\n"
        f"    return graphc_checked(thunk_{k}_run, thunk_{k}_in, {len(spec)}, {c_string(name)},\n"
        f"                          params, inputs, outputs);\n"
        f"}}\n"
    )


def _input_spec(node: Apply) -> tuple[tuple[int, int], ...]:
    """Per input, (ndim, numpy type number) for arrays, (-1, 0) for other values."""
    return tuple(
        (v.type.ndim, np.dtype(v.type.dtype).num) if isinstance(v.type, TensorType) else (-1, 0)
        for v in node.inputs
    )


def _with_io(node: Apply, code: CThunkCode) -> CThunkCode:
    """``code`` with its node's input/output declarations, keyed by its arity too."""
    return CThunkCode(
        body=_declare_io(node, code.body),
        inputs=_input_spec(node),
        name=str(node.op)[:200],
        support=code.support,
        init=code.init,
        libraries=code.libraries,
        kernel=code.kernel,
        key=None if code.key is None else (code.key, _io_arity(node)),
    )


def _declare_io(node: Apply, body: str) -> str:
    lines = [
        f"    PyArrayObject *i{j} = (PyArrayObject *)inputs[{j}]; (void)i{j};"
        for j in range(len(node.inputs))
    ]
    lines += [f"    PyObject **o{j} = &outputs[{j}]; (void)o{j};" for j in range(len(node.outputs))]
    return "\n".join(lines) + "\n    {\n" + body + "\n    }"


def _extra_cflags() -> tuple[str, ...]:
    # -fwrapv: signed integer overflow wraps, as numpy's integer arithmetic does.
    # -fno-trapping-math: no generated code reads the floating-point exception flags, and
    # without it gcc will not if-convert (so not vectorize) a select whose arms hold
    # floating-point operations, as the branch-free vector math (c/vecmath.py) has.
    # -fschedule-insns -fsched-pressure: gcc schedules x86 code only after register
    # allocation, so a loop body keeps its source order (all of exp, then all of tanh)
    # and the core's scheduler fills with one long chain's waiting operations; scheduled
    # before allocation too, the fused exp/tanh loop takes 0.84-0.93x the time in float64
    # (same bits) for 2% more compile time.
    flags = ["-mprefer-vector-width=512", "-fwrapv", "-fno-trapping-math"]
    flags += ["-fschedule-insns", "-fsched-pressure"]
    if _compiler().has_mvec:
        flags.append("-DGRAPHC_HAVE_MVEC")
    if config.openmp:
        from graphc.linker.c import par_pool
        from graphc.linker.c.par_policy import configure_runtime

        configure_runtime()  # before libgomp loads with the first such module
        par_pool.module()  # built now, not on the first long run
        flags += ["-fopenmp", f"-DGC_PAR_MIN={int(config.openmp_elemwise_minsize)}"]
        if config.openmp_policy != "auto":
            flags.append(f"-DGC_PAR_FORCE={int(config.openmp_policy == 'split')}")
    return tuple(flags)


def _phase_clock() -> int:
    """Nanoseconds that exclude first-time Python imports (shown as their own line)."""
    return time.perf_counter_ns() - imports_ns()


class _CModuleBuild:
    """The "c|py" linker's ``impl_for``: generates, compiles and imports one C module for
    the schedule, and keeps what the Linked result reports (phase times, a note, the
    source and the module)."""

    def __init__(self, compiler: InnerCompiler | None = None) -> None:
        self.compiler = compiler
        self.phases = {"codegen": 0, "compile": 0, "import": 0}  # ns
        self.note: str | None = None
        self.source: str | None = None
        self.module: Any = None

    def __call__(self, order: list[Apply]) -> list[NodeImpl]:
        t0 = _phase_clock()
        ok, why = _probe()
        codes: list[CThunkCode | None] = [c_code_for(n) if ok else None for n in order]
        c_nodes = [k for k, c in enumerate(codes) if c is not None]
        impls = [py_impl(n, self.compiler) for n in order]
        self.phases["codegen"] = _phase_clock() - t0
        if not ok:
            self._python_only(why)
            return impls
        py_ops = sorted({str(order[k].op) for k, c in enumerate(codes) if c is None})
        if py_ops:
            n_py = len(order) - len(c_nodes)
            self.note = f"{n_py} of {len(order)} nodes run in Python: {', '.join(py_ops)}"
        if not c_nodes:
            return impls
        wrapped = [_with_io(order[k], code) for k, code in enumerate(codes) if code is not None]
        source, index = generate_module(wrapped)
        libraries = tuple(dict.fromkeys(lib for c in wrapped for lib in c.libraries))
        self.phases["codegen"] = _phase_clock() - t0
        self.source = source
        t1 = _phase_clock()
        cache = get_cache()
        stats0 = (cache.stats.compiled, cache.stats.disk_hits) if hasattr(cache, "stats") else None
        try:
            module = cache.load(source, extra_cflags=_extra_cflags(), libraries=libraries)
        except CompilerUnavailable as exc:
            self._python_only(str(exc))
            return impls
        t2 = _phase_clock()
        compiled = stats0 is not None and cache.stats.compiled > stats0[0]
        self.phases["compile"] = t2 - t1 if compiled else 0
        capsules, kernels = module.thunks(), module.kernels()
        self.phases["import"] = _phase_clock() - t2 + (0 if compiled else t2 - t1)
        self.module = module
        for k, idx in zip(c_nodes, index):
            impls[k] = NodeImpl(perform=impls[k].perform, c_thunk=capsules[idx],
                                c_kernel=kernels[idx])  # fmt: skip
        if any(_calls_blas(order[k]) for k in c_nodes):  # the BLAS library is loaded by now
            coordinate()
        return impls

    def _python_only(self, why: str) -> None:
        self.note = f"C not used: {why}"
        warnings.warn(
            f"graphc: the c|py linker runs every node in Python: {why}",
            RuntimeWarning,
            stacklevel=6,
        )


def link_cpy(
    fgraph: FunctionGraph,
    outputs: Sequence[Variable],
    compiler: InnerCompiler | None = None,
) -> Linked:
    """The "c|py" linker: C thunks where the registry has code, ``perform`` elsewhere."""
    build = _CModuleBuild(compiler)
    linked = link(fgraph, outputs, build, "c|py")
    linked.phases.update({k: int(v) for k, v in build.phases.items()})
    if build.note is not None:
        linked.notes.append(build.note)
    linked.c_source = build.source
    linked.c_module = build.module
    return linked


def _calls_blas(node: Apply) -> bool:
    """Whether the node's C code calls BLAS (products and the im2col convolutions)."""
    return type(node.op).__module__ in ("graphc.tensor.blas", "graphc.tensor.conv")


def _io_arity(node: Apply) -> tuple[int, int]:
    return (len(node.inputs), len(node.outputs))
