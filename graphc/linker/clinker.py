"""The "c|py" linker: one C module per function, Python ``perform`` for the other nodes.

For each node of the schedule the registry (:func:`graphc.linker.c.registry.c_code_for`)
says whether it has C. All C nodes of a function go into ONE translation unit (identical
thunks and support code are emitted once), compiled through the compile cache; its module
exposes ``thunks()``, a tuple of ``"graphc.thunk"`` capsules. Without a compiler every node
runs in Python, with one warning saying why. A compile error of generated code is a bug and
is raised (the message shows the compiler output and where the source was kept).
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Sequence

from graphc.flags import config
from graphc.graph.basic import Apply, Variable
from graphc.graph.fg import FunctionGraph
from graphc.linker.base import Linked, NodeImpl, link, py_impl
from graphc.linker.c.registry import CThunkCode, c_code_for

__all__ = ["available", "has_c_code", "link_cpy", "generate_module", "reset_available"]

_avail_lock = threading.Lock()
_avail: dict[tuple[str, str], tuple[bool, str]] = {}


def _compiler():
    """The compiler, probed once per binary and remembered in the compile cache (a new
    process does not run ``cc --version`` and the libmvec link test again)."""
    from graphc.linker.cache import CacheError, get_cache
    from graphc.linker.compiler import find_compiler

    try:
        probe_dir = get_cache().dir / "compilers"
    except (CacheError, OSError):
        probe_dir = None
    return find_compiler(probe_dir)


def _probe() -> tuple[bool, str]:
    from graphc.linker.compiler import CompilerUnavailable

    key = (os.environ.get("CC", ""), os.environ.get("PATH", ""))
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
    """True when a C compiler works (memoized per ``$CC`` and ``$PATH``)."""
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
"""


def generate_module(codes: Sequence[CThunkCode]) -> tuple[str, list[int]]:
    """One C source for ``codes``; also the thunk index of each code (deduplicated)."""
    support: list[str] = []
    seen_support: set[str] = set()
    init: list[str] = []
    seen_init: set[str] = set()
    bodies: list[str] = []
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
        dkey = ("key", code.key) if code.key is not None else ("body", code.body)
        k = by_key.get(dkey)
        if k is None:
            k = by_key.get(("body", code.body))
            if k is None:
                k = len(bodies)
                bodies.append(code.body)
                by_key[("body", code.body)] = k
            by_key[dkey] = k
        index.append(k)
    parts = [_PRELUDE, *support]
    for k, body in enumerate(bodies):
        parts.append(_thunk(k, body))
    caps = "\n".join(
        f'    if (!(c = PyCapsule_New((void *)&thunk_{k}, "graphc.thunk", NULL))) goto fail;\n'
        f"    PyTuple_SET_ITEM(t, {k}, c);"
        for k in range(len(bodies))
    )
    init_body = "\n".join(f"    {s}" for s in init)
    parts.append(
        f"""
static int graphc_module_init(void) {{
{init_body}
    return 0;
}}

static PyObject *graphc_thunks(PyObject *self, PyObject *noargs) {{
    (void)self; (void)noargs;
    PyObject *c, *t = PyTuple_New({len(bodies)});
    if (!t) return NULL;
{caps}
    return t;
fail:
    Py_DECREF(t);
    return NULL;
}}

static PyMethodDef graphc_methods[] = {{
    {{"thunks", graphc_thunks, METH_NOARGS, "The thunks as graphc.thunk capsules."}},
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
    )
    return "\n".join(parts), index


def _thunk(k: int, body: str) -> str:
    return (
        f"static int thunk_{k}(void *params, PyObject *const *inputs, PyObject **outputs) {{\n"
        f"    (void)params; (void)inputs; (void)outputs;\n"
        f"{body}\n"
        f"    return 0;\n"
        f"}}\n"
    )


def _declare_io(node: Apply, body: str) -> str:
    lines = [
        f"    PyArrayObject *i{j} = (PyArrayObject *)inputs[{j}]; (void)i{j};"
        for j in range(len(node.inputs))
    ]
    lines += [f"    PyObject **o{j} = &outputs[{j}]; (void)o{j};" for j in range(len(node.outputs))]
    return "\n".join(lines) + "\n    {\n" + body + "\n    }"


def _extra_cflags() -> tuple[str, ...]:
    # -fwrapv: signed integer overflow wraps, as numpy's integer arithmetic does
    flags = ["-mprefer-vector-width=512", "-fwrapv"]
    if _compiler().has_mvec:
        flags.append("-DGRAPHC_HAVE_MVEC")
    if config.openmp:
        flags += ["-fopenmp", f"-DGC_PAR_MIN={int(config.openmp_elemwise_minsize)}"]
    return tuple(flags)


def link_cpy(fgraph: FunctionGraph, outputs: Sequence[Variable]) -> Linked:
    """The "c|py" linker: C thunks where the registry has code, ``perform`` elsewhere."""
    state: dict = {}

    def impl_for(order: list[Apply]) -> list[NodeImpl]:
        t0 = time.perf_counter_ns()
        ok, why = _probe()
        codes: list[CThunkCode | None] = [c_code_for(n) if ok else None for n in order]
        c_nodes = [k for k, c in enumerate(codes) if c is not None]
        impls = [py_impl(n) for n in order]
        state["codegen"] = time.perf_counter_ns() - t0
        if not ok:
            state["note"] = f"C not used: {why}"
            warnings.warn(
                f"graphc: the c|py linker runs every node in Python: {why}",
                RuntimeWarning,
                stacklevel=5,
            )
            return impls
        py_ops = sorted({str(order[k].op) for k, c in enumerate(codes) if c is None})
        if py_ops:
            n_py = len(order) - len(c_nodes)
            state["note"] = f"{n_py} of {len(order)} nodes run in Python: {', '.join(py_ops)}"
        if not c_nodes:
            return impls
        wrapped = [
            CThunkCode(
                body=_declare_io(order[k], codes[k].body),
                support=codes[k].support,
                init=codes[k].init,
                libraries=codes[k].libraries,
                key=None if codes[k].key is None else (codes[k].key, _io_arity(order[k])),
            )
            for k in c_nodes
        ]
        source, index = generate_module(wrapped)
        libraries = tuple(dict.fromkeys(lib for c in wrapped for lib in c.libraries))
        state["codegen"] = time.perf_counter_ns() - t0
        state["source"] = source
        from graphc.linker.cache import CompilerUnavailable, get_cache

        t1 = time.perf_counter_ns()
        cache = get_cache()
        stats0 = (cache.stats.compiled, cache.stats.disk_hits) if hasattr(cache, "stats") else None
        try:
            module = cache.load(source, extra_cflags=_extra_cflags(), libraries=libraries)
        except CompilerUnavailable as exc:
            state["note"] = f"C not used: {exc}"
            warnings.warn(
                f"graphc: the c|py linker runs every node in Python: {exc}",
                RuntimeWarning,
                stacklevel=5,
            )
            return impls
        t2 = time.perf_counter_ns()
        compiled = stats0 is not None and cache.stats.compiled > stats0[0]
        state["compile"] = t2 - t1 if compiled else 0
        capsules = module.thunks()
        state["import"] = time.perf_counter_ns() - t2 + (0 if compiled else t2 - t1)
        state["module"] = module
        for k, idx in zip(c_nodes, index):
            impls[k] = NodeImpl(perform=impls[k].perform, c_thunk=capsules[idx])
        return impls

    linked = link(fgraph, outputs, impl_for, "c|py")
    for phase in ("codegen", "compile", "import"):
        linked.phases[phase] = int(state.get(phase, 0))
    if "note" in state:
        linked.notes.append(state["note"])
    linked.c_source = state.get("source")  # type: ignore[attr-defined]
    linked.c_module = state.get("module")  # type: ignore[attr-defined]
    return linked


def _io_arity(node: Apply) -> tuple[int, int]:
    return (len(node.inputs), len(node.outputs))
