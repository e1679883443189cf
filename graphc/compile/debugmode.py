"""DEBUG_MODE: run every node with its Python ``perform`` and its C thunk and check them.

A function compiled with ``mode="DEBUG_MODE"`` (or ``DebugMode(...)``) is compiled as
usual (the optimized FunctionGraph and the linked Program exist), but each call runs a
Python-level checking interpreter over the linked schedule instead of the VM. For every node:

* ``perform`` runs on private copies of its inputs; when the node has a C thunk, the thunk
  runs too (through the reference VM's ctypes trampoline) and the two must agree in dtype,
  shape and values (``BadThunkOutput``);
* no input may change unless the Op's ``destroy_map`` declares it (``BadDestroyMap``), and
  an output may share memory with an input only where ``view_map``/``destroy_map`` say so
  (``BadViewMap``);
* the C thunk (and ``perform``) run again with different output buffers (garbage-filled of
  the right shape, non-contiguous, Fortran-ordered, the wrong shape) and with strided and
  reversed copies of the inputs; all results must agree (``BadThunkOutput``);
* outputs must be valid values of their Variable's type, and with ``check_nan`` (default
  ``config.DebugMode__check_nan``) free of NaN/Inf (``InvalidValueError``).

Rewrites are checked per replacement: the maker keeps a copy of the graph before rewriting
(``FunctionMaker.unoptimized``); a clone of it gets a Feature recording
every ``change_input`` (old variable, new variable, rewrite name) is attached, and the mode's
optimizer is run again on that copy. Each call evaluates both sides of every recorded
replacement on the call's actual inputs with the reference semantics (``Op.perform``) and
raises ``BadOptimization`` naming the first rewrite whose new variable differs from the one it
replaced; the optimized outputs are also compared with the unoptimized graph's.

Speed is not a goal: a call costs several times the reference evaluation of the graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from graphc.compile.maker import StepCompiler
from graphc.compile.mode import Mode, register_mode
from graphc.compile.monitormode import NodeByNodeVM
from graphc.flags import config
from graphc.graph.basic import Constant, Variable, ancestors
from graphc.graph.fg import OUTPUT, Feature

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from numpy.typing import DTypeLike

    from graphc.graph.basic import Apply
    from graphc.graph.fg import FunctionGraph
    from graphc.linker.base import CompiledStep, Linked

__all__ = [
    "BadDestroyMap",
    "BadOptimization",
    "BadThunkOutput",
    "BadViewMap",
    "DebugMode",
    "DebugModeError",
    "DebugVM",
    "InvalidValueError",
    "compare_values",
]


# ------------------------------------------------------------------ errors


class DebugModeError(Exception):
    """Base class of the errors DEBUG_MODE raises."""


class BadThunkOutput(DebugModeError):
    """Two implementations of a node (perform / C, or one run under different buffers or
    input strides) returned different values."""


class BadOptimization(DebugModeError):
    """A rewrite replaced a variable by one with a different value on the actual inputs."""


class BadDestroyMap(DebugModeError):
    """A node modified an input its Op does not declare in ``destroy_map``."""


class BadViewMap(DebugModeError):
    """A node returned an output aliasing an input (or another output) without declaring it
    in ``view_map``/``destroy_map``."""


class InvalidValueError(DebugModeError):
    """A node produced a value that is not valid for its output type, or NaN/Inf under
    ``check_nan``."""


# ------------------------------------------------------------------ the mode


@dataclass(frozen=True)
class DebugMode(Mode):
    """A Mode whose functions check every node, rewrite and buffer variant on each call.

    ``check_c``: compare C thunks with ``perform``; ``check_optimizations``: per-rewrite
    value checks; ``check_preallocated_output``: re-run with pre-filled/odd output buffers;
    ``check_strides``: re-run with strided/reversed input copies; ``check_nan``: None reads
    ``config.DebugMode__check_nan``. ``rtol``/``atol`` override the per-dtype tolerances.
    """

    linker: str = "auto"
    optimizer: str | None = "fast_run"
    name: str = "DEBUG_MODE"
    check_c: bool = True
    check_optimizations: bool = True
    check_preallocated_output: bool = True
    check_strides: bool = True
    check_nan: bool | None = None
    rtol: float | None = None
    atol: float | None = None

    def make_vm(self, maker, linked) -> DebugVM:
        """Run instead of ``graphc.vm.make_vm``'s VM (``vm_factory``)."""
        return DebugVM(maker, linked, self)

    def vm_factory(self) -> Callable[[Any, Linked], DebugVM]:
        return self.make_vm

    def keeps_unoptimized_graph(self) -> bool:
        return self.check_optimizations


register_mode("DEBUG_MODE", DebugMode)
register_mode("DebugMode", DebugMode)


# ------------------------------------------------------------------ comparisons

_TOL = {  # dtype -> (rtol, atol)
    "float16": (1e-2, 1e-3),
    "float32": (1e-4, 1e-5),
    "float64": (1e-7, 1e-10),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-7, 1e-10),
}


def _fmt(v) -> str:
    s = np.array2string(np.asarray(v), threshold=20, edgeitems=3, precision=8)
    return s if len(s) < 400 else s[:400] + "..."


def _loosest(dtypes) -> str | None:
    """The float dtype among ``dtypes`` with the loosest tolerance (None if none is float)."""
    found = [str(d) for d in dtypes if str(d) in _TOL]
    return max(found, key=lambda d: _TOL[d][0], default=None)


def compare_values(
    a, b, rtol: float | None = None, atol: float | None = None, tol_dtype: str | None = None
) -> str | None:
    """None when ``a`` matches the reference ``b``; else what differs (dtype, shape, the max
    absolute difference and the first differing index). NaN matches NaN, inf matches inf.

    The tolerances are those of the values' dtype, or of ``tol_dtype`` when it is looser (a
    float64 result computed from float32 values carries float32 rounding)."""
    if not isinstance(b, np.ndarray | np.generic):
        if isinstance(a, np.ndarray | np.generic):
            return f"type: {type(a).__name__} vs reference {type(b).__name__}"
        try:
            return None if a == b else f"value {a!r} vs reference {b!r}"
        except Exception:  # noqa: BLE001 - objects without a usable ==
            return None if a is b else f"value {a!r} vs reference {b!r}"
    if not isinstance(a, np.ndarray | np.generic):
        return f"type: {type(a).__name__} vs reference ndarray"
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        return f"dtype {a.dtype} vs reference {b.dtype}"
    if a.shape != b.shape:
        return f"shape {a.shape} vs reference {b.shape}"
    if a.size == 0:
        return None
    if a.dtype.kind in "fc":
        d_rtol, d_atol = _TOL[_loosest([a.dtype, tol_dtype]) or "float64"]
        rtol = d_rtol if rtol is None else rtol
        atol = d_atol if atol is None else atol
        with np.errstate(all="ignore"):
            finite = np.isfinite(b)
            scale = float(np.max(np.abs(b[finite]))) if finite.any() else 1.0
            wide = np.complex128 if a.dtype.kind == "c" else np.float64
            diff = np.abs(a.astype(wide) - b.astype(wide))
            tol = atol * max(1.0, scale) + rtol * np.abs(b)
            bad_finite = finite & ~(diff <= tol)
            same_special = (np.isnan(a) & np.isnan(b)) | (a == b)
            bad = bad_finite | (~finite & ~same_special)
    else:
        diff = np.abs(a.astype(object) - b.astype(object)) if a.dtype.kind in "ui" else None
        bad = a != b
    if not bad.any():
        return None
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    if diff is not None:
        with np.errstate(all="ignore"):
            md = np.max(np.where(bad, diff, 0)) if diff.dtype != object else max(diff[bad])
        maxd = f"max abs diff {md}"
    else:
        maxd = "values differ"
    return (
        f"{maxd} ({int(bad.sum())} of {a.size} elements) first at index {first}: "
        f"{a[first]} vs reference {b[first]}; dtype {a.dtype}, shape {a.shape}"
    )


def _copy(v):
    if isinstance(v, np.ndarray):
        return np.array(v, copy=True)
    if isinstance(v, np.generic):
        return v.copy()
    return v


def _same_contents(a, b) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    return True


def _shares(a, b) -> bool:
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return False
    if a.size == 0 or b.size == 0 or not np.may_share_memory(a, b):
        return False
    try:
        # numpy takes any max_work (its stubs list only -1 and 0): bound the search
        return bool(np.shares_memory(a, b, max_work=10**6))  # type: ignore[arg-type]
    except np.exceptions.TooHardError:
        return True


def _alias_variants(node: Apply, args: list) -> list:
    """``(label, reference args, aliased args)`` makers that run a node with its inputs
    aliased: as they alias in the graph (one array passed twice), and, for an Op that
    destroys input ``i``, with every other input of the same dtype and shape being that very
    array (``Gemm{inplace}(z, 1, z, z, 1)``). The reference runs on separate copies of the
    same values, so an in-place ``perform`` that reads what it already overwrote differs."""
    arrays = [k for k, a in enumerate(args) if isinstance(a, np.ndarray) and a.size]
    groups: list[tuple[int, list[int]]] = []
    seen: set[int] = set()
    for k in arrays:
        same = [j for j in arrays if j > k and j not in seen and _shares(args[j], args[k])]
        if same:
            groups.append((k, same))
            seen.update(same)
    for i in sorted({i for ins in node.op.destroy_map.values() for i in ins}):
        if i not in arrays:
            continue
        like = [j for j in arrays if j != i and args[j].shape == args[i].shape
                and args[j].dtype == args[i].dtype]  # fmt: skip
        if like and all(not (k == i and set(js) >= set(like)) for k, js in groups):
            groups.append((i, like))

    def variant(src: int, dups: list[int]):
        def reference():
            return [_copy(args[src] if k in dups else a) for k, a in enumerate(args)]

        def aliased():
            ins = [_copy(a) for a in args]
            for j in dups:
                ins[j] = ins[src]
            return ins

        return (f"inputs {[src, *dups]} aliased (one array)", reference, aliased)

    return [variant(src, dups) for src, dups in groups]


def _output_input_pairs(ref: list, args: list) -> list[tuple[int, int]]:
    """``(output k, input i)`` pairs of the same dtype and shape: a VM may hand a node its
    previous output buffer while that array is also one of its inputs."""
    pairs = []
    for k, r in enumerate(ref):
        if not isinstance(r, np.ndarray) or not r.size:
            continue
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray) and a.shape == r.shape and a.dtype == r.dtype:
                pairs.append((k, i))
                break
    return pairs


def _garbage(shape: tuple[int, ...], dtype: DTypeLike, rng: np.random.Generator):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    raw = rng.integers(0, 256, size=nbytes, dtype=np.uint8)
    return raw.view(dt).reshape(shape) if nbytes else np.empty(shape, dt)


def _strided_copy(x, rng: np.random.Generator):
    """``x``'s values in a buffer with every other element along the last axis."""
    shape = x.shape[:-1] + (2 * x.shape[-1],)
    buf = _garbage(shape, x.dtype, rng)
    view = buf[..., ::2]
    view[...] = x
    return view


def _reversed_copy(x):
    """``x``'s values with negative strides on every axis."""
    rev = (slice(None, None, -1),) * x.ndim
    out = np.array(x[rev], copy=True)[rev]
    return out


# ------------------------------------------------------------------ rewrite tracking


class _ReplacementRecorder(Feature):
    """Records every ``change_input`` as (old, new, reason, node, position); a revert drops
    the change it undoes."""

    def __init__(self):
        self.records: list[tuple[Variable, Variable, str, Any, int]] = []

    def on_change_input(
        self, fgraph: FunctionGraph, node: Apply, i: int, old: Variable, new: Variable, reason: str
    ) -> None:
        if reason == "revert":
            for k in range(len(self.records) - 1, -1, -1):
                o, n, _, nd, pos = self.records[k]
                if nd is node and pos == i and o is new and n is old:
                    del self.records[k]
                    return
            return
        self.records.append((old, new, str(reason), node, i))


class _Evaluator:
    """Reference values (``Op.perform`` on copies of the inputs) of any variable reachable
    from the given roots, memoized."""

    def __init__(self, values: dict, thunks: ReferenceThunks):
        self.values = dict(values)
        self.thunks = thunks  # the reference thunks of graph-running nodes

    def __call__(self, var: Variable):
        if var in self.values:
            return self.values[var]
        stack = [var]
        while stack:
            v = stack[-1]
            if v in self.values:
                stack.pop()
                continue
            if isinstance(v, Constant):
                self.values[v] = v.data
                stack.pop()
                continue
            node = v.owner
            if node is None:
                shared = v.tag.get("shared") if hasattr(v, "tag") else None
                if shared is not None:
                    self.values[v] = shared.get_value(borrow=True)
                    stack.pop()
                    continue
                raise ValueError(f"no value for the free variable {v} (of type {v.type})")
            missing = [i for i in node.inputs if i not in self.values]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            args = [_copy(self.values[i]) for i in node.inputs]
            outs = _run_perform(node, args, thunk=self.thunks.get(node))
            for o, val in zip(node.outputs, outs):
                self.values[o] = val
        return self.values[var]


class ReferenceThunks:
    """The reference thunks of the nodes running a graph of their own (scan): their steps
    compiled when the function is built (with the loop's mode or the default one, as their
    ``perform`` would compile them on first use), so that no call compiles anything."""

    def __init__(self) -> None:
        self.compiler = StepCompiler()
        self.thunks: dict[Apply, Callable] = {}
        self.steps: dict[Any, CompiledStep] = {}  # equal loops share their compiled step

    def add(self, nodes: Iterable[Apply]) -> None:
        from graphc.linker.base import GraphRunningOp

        for node in nodes:
            op = node.op
            if node in self.thunks or not isinstance(op, GraphRunningOp):
                continue
            if op not in self.steps:
                self.steps[op] = self.compiler.compile_step(*op.inner_step())
            self.thunks[node] = op.make_perform(node, self.steps[op])

    def get(self, node: Apply) -> Callable | None:
        """The node's reference thunk; None for a node whose ``Op.perform`` is its own."""
        thunk = self.thunks.get(node)
        if thunk is None and hasattr(node.op, "inner_step"):
            raise RuntimeError(f"DEBUG_MODE: {node} has no reference thunk built with the function")
        return thunk


def _run_perform(node: Apply, args: Any, previous=None, thunk=None) -> list:
    """The node's reference outputs: ``Op.perform`` (or its lazy protocol), or ``thunk``
    for a node running a graph of its own (its step compiled with the function)."""
    cells = [[None if previous is None else previous[k]] for k in range(len(node.outputs))]
    if thunk is not None:
        thunk(args, cells)
    elif node.op.lazy:
        needed = node.op.lazy_perform(node, [True] * len(args), args, cells)
        if needed:
            raise RuntimeError(f"lazy {node} asked for inputs {needed} that are all computed")
    else:
        node.op.perform(node, args, cells)
    for k, cell in enumerate(cells):
        if cell[0] is None:
            raise ValueError(f"{node}: perform did not produce output {k}")
    return [c[0] for c in cells]


# ------------------------------------------------------------------ the checking VM


class DebugVM(NodeByNodeVM):
    """Stands in for the VM of a DEBUG_MODE Function: ``vm(values) -> outputs``."""

    kind = "debug"
    mode_name = "DEBUG_MODE"

    def __init__(self, maker, linked, mode: DebugMode):
        super().__init__(linked)
        self.maker = maker
        self.mode = mode
        self.calls = 0
        self.rng = np.random.default_rng(1234)
        self.c_thunks: list = []
        for node, impl, spec in zip(linked.schedule, linked.impls, linked.program.nodes):
            if impl.c_thunk is not None and mode.check_c:
                from graphc.vm.pyvm import _CThunk

                self.c_thunks.append(
                    _CThunk(
                        spec.name, impl.c_thunk, impl.c_params, len(node.inputs), len(node.outputs)
                    )  # fmt: skip
                )
            else:
                self.c_thunks.append(None)
        self.loose_dtype = _loosest(  # rewrites may move where float32 rounding happens
            getattr(v.type, "dtype", None) for v in maker.fgraph.variables
        )
        self.records: list = []
        self.ref_inputs: list[Variable] = []
        self.ref_outputs: list[Variable] = []
        self.thunks = ReferenceThunks()
        self.thunks.add(linked.schedule)
        if mode.check_optimizations:
            self._track_rewrites()

    # -------------------------------------------------------------- compile-time part
    def _track_rewrites(self) -> None:
        """Re-run the optimizer on a copy of the graph the maker kept before rewriting,
        recording every replacement (graphc.opt may have no per-rewrite hook: the
        FunctionGraph's ``on_change_input`` is one)."""
        from graphc.opt import rewrite_graph

        fg, _ = self.maker.unoptimized.clone_get_equiv()
        self.ref_inputs = list(fg.inputs)
        self.ref_outputs = list(fg.outputs)
        recorder = _ReplacementRecorder()
        fg.attach_feature(recorder)
        plan = self.maker.plan
        rewrite_graph(fg, plan.optimizer, plan.including, plan.excluding, plan.requiring)
        self.records = recorder.records
        compared = [v for old, new, *_ in self.records for v in (old, new)] + self.ref_outputs
        owners = (v.owner for v in ancestors(compared) if v.owner is not None)
        self.thunks.add(owners)

    # -------------------------------------------------------------- checks
    def _call(self, values: list) -> list:
        self.calls += 1
        if len(values) != len(self.in_vars):
            raise TypeError(f"expected {len(self.in_vars)} values, got {len(values)}")
        originals = [_copy(v) for v in values]
        storage = self._storage(values)
        for idx, node in enumerate(self.linked.schedule):
            args = [storage[v] for v in node.inputs]
            try:
                outs = self._check_node(idx, node, args)
            except DebugModeError:
                self.failed_node = None
                raise
            except Exception:
                self.failed_node = idx
                raise
            for var, val in zip(node.outputs, outs):
                storage[var] = val
        for k, (v, orig) in enumerate(zip(values, originals)):
            if not _same_contents(v, orig):
                raise BadDestroyMap(
                    f"input {k} ({self.in_vars[k]}) of the function was modified during the "
                    "call although every node ran on copies"
                )
        outputs = [storage[v] for v in self.out_vars]
        if self.mode.check_optimizations and self.ref_outputs:
            self._check_rewrites(originals, outputs)
        return [_copy(o) for o in outputs]

    def _tol(self):
        return self.mode.rtol, self.mode.atol

    def _check_node(self, idx: int, node: Apply, args: list) -> list:
        check = _NodeCheck(self, node, args, self.c_thunks[idx])
        result = check.reference()
        if node.op.lazy:
            return result
        check.aliased_inputs()
        if self.mode.check_preallocated_output:
            check.output_buffers()
        if self.mode.check_strides:
            check.input_strides()
        check.output_reusing_input()
        return result

    def _output_variants(self, ref: list):
        arrays = [r for r in ref if isinstance(r, np.ndarray)]
        if not arrays:
            return []
        rng = self.rng

        def each(f):
            return lambda: [f(r) if isinstance(r, np.ndarray) else None for r in ref]

        def noncontig(r):
            if r.ndim == 0:
                return _garbage((), r.dtype, rng)
            return _strided_copy(_garbage(r.shape, r.dtype, rng), rng)

        def fortran(r):
            return np.asfortranarray(_garbage(r.shape, r.dtype, rng))

        def wrong_shape(r):
            return _garbage(tuple(s + 1 for s in r.shape) + (() if r.ndim else (2,)),
                            r.dtype, rng)  # fmt: skip

        out = [
            ("garbage-filled", each(lambda r: _garbage(r.shape, r.dtype, rng))),
            ("non-contiguous", each(noncontig)),
            ("wrong-shape", each(wrong_shape)),
        ]
        if any(r.ndim >= 2 for r in arrays):
            out.append(("Fortran-ordered", each(fortran)))
        return out

    def _input_variants(self, args: list):
        rng = self.rng
        if not any(isinstance(a, np.ndarray) and a.ndim >= 1 and a.size for a in args):
            return []

        def strided():
            return [
                _strided_copy(a, rng) if isinstance(a, np.ndarray) and a.ndim >= 1 else _copy(a)
                for a in args
            ]

        def reversed_():
            return [
                _reversed_copy(a) if isinstance(a, np.ndarray) and a.ndim >= 1 else _copy(a)
                for a in args
            ]

        return [("strided", strided), ("reversed (negative strides)", reversed_)]

    def _compare(self, node: Apply, impl, outs, ref, what, rtol: float, atol: float) -> None:
        loose = _loosest(getattr(v.type, "dtype", None) for v in node.inputs + node.outputs)
        for k, (a, b) in enumerate(zip(outs, ref)):
            diff = compare_values(a, b, rtol, atol, loose)
            if diff is not None:
                raise BadThunkOutput(
                    f"node {node}: output {k} of the {impl}{what} differs from perform on "
                    f"contiguous inputs: {diff}\n  got:       {_fmt(a)}\n  reference: {_fmt(b)}"
                )

    def _check_valid(self, node: Apply, outs, ctx) -> None:
        check_nan = self.mode.check_nan
        if check_nan is None:
            check_nan = config.DebugMode__check_nan
        for k, (var, val) in enumerate(zip(node.outputs, outs)):
            t = var.type
            if hasattr(t, "dtype") and hasattr(t, "ndim"):
                try:
                    t.filter(val, strict=True)
                except (TypeError, ValueError) as e:
                    raise InvalidValueError(
                        f"node {node} ({ctx}): output {k} is not a valid {t}: {e}"
                    ) from None
            if check_nan and isinstance(val, np.ndarray | np.generic):
                arr = np.asarray(val)
                if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
                    bad = np.argwhere(~np.isfinite(arr))
                    first = tuple(int(i) for i in bad[0]) if arr.ndim else ()
                    raise InvalidValueError(
                        f"node {node} ({ctx}): output {k} has {len(bad)} NaN/Inf value(s), "
                        f"first at index {first}: {arr[first]!r}"
                    )

    def _check_rewrites(self, originals: list, outputs: list) -> None:
        rtol, atol = self._tol()
        ev = _Evaluator(dict(zip(self.ref_inputs, [_copy(v) for v in originals])), self.thunks)
        for old, new, reason, node, pos in self.records:
            try:
                a, b = ev(old), ev(new)
            except ValueError:
                continue  # a side depends on something that is not an input
            diff = compare_values(b, a, rtol, atol, self.loose_dtype)
            if diff is not None:
                where = "output" if node == OUTPUT else str(node)
                raise BadOptimization(
                    f"rewrite {reason!r} replaced {old} (computed by {old.owner}) by {new} "
                    f"(computed by {new.owner}) as input {pos} of {where}, and the value "
                    f"changed: {diff}\n  before: {_fmt(a)}\n  after: {_fmt(b)}"
                )
        for k, (var, got) in enumerate(zip(self.ref_outputs, outputs)):
            want = ev(var)
            diff = compare_values(got, want, rtol, atol, self.loose_dtype)
            if diff is not None:
                raise BadOptimization(
                    f"output {k} ({var}) of the optimized graph differs from the unoptimized "
                    f"graph's although no single recorded rewrite changed a value: {diff}"
                )


class _NodeCheck:
    """The checks of one node on one call: ``perform`` (and the C thunk) on copies of the
    arguments, checked for undeclared input changes and aliasing, then run again with
    aliased inputs, odd output buffers and strided inputs, all agreeing with ``perform``."""

    def __init__(self, vm: DebugVM, node: Apply, args: list, thunk):
        self.vm = vm
        self.node = node
        self.args = args
        self.thunk = thunk
        self.rtol, self.atol = vm._tol()
        op = node.op
        self.allowed = {k: set(op.view_map.get(k, ())) | set(op.destroy_map.get(k, ()))
                        for k in range(len(node.outputs))}  # fmt: skip
        self.destroyed = {i for ins in op.destroy_map.values() for i in ins}
        self.impls = [("perform", self._perform)]
        if thunk is not None:
            self.impls.append(("C thunk", self._c_run))
        self.ref: list = []

    def _perform(self, ins: list, previous) -> list:
        return _run_perform(self.node, ins, previous, self.vm.thunks.get(self.node))

    def _c_run(self, ins: list, previous) -> list:
        return self.thunk(ins, [None] * len(self.node.outputs) if previous is None else previous)

    def fresh_args(self) -> list:
        return [_copy(a) for a in self.args]

    def run(
        self, impl: str, fn: Callable[..., Any], ins: list, previous=None, what: str = ""
    ) -> list:
        """``fn(ins, previous)``, failing on an input changed or an output aliased without
        the Op declaring it, and on outputs invalid for their type."""
        node, op = self.node, self.node.op
        snapshot = [_copy(x) for x in ins]
        outs = fn(ins, previous)
        ctx = f"{impl}{what}"
        for i, (before, after) in enumerate(zip(snapshot, ins)):
            if i not in self.destroyed and not _same_contents(after, before):
                diff = compare_values(after, before, 0.0, 0.0) or "contents changed"
                raise BadDestroyMap(
                    f"node {node} ({ctx}) modified its input {i} ({node.inputs[i]}), which "
                    f"{op} does not declare in destroy_map: {diff}"
                )
        for k, out in enumerate(outs):
            for i, x in enumerate(ins):
                if i not in self.allowed[k] and (out is x or _shares(out, x)):
                    raise BadViewMap(
                        f"node {node} ({ctx}): output {k} shares memory with input {i} "
                        f"({node.inputs[i]}) but {op} declares view_map={op.view_map}, "
                        f"destroy_map={op.destroy_map}"
                    )
            for j in range(k):
                if _shares(out, outs[j]) or (out is outs[j] and isinstance(out, np.ndarray)):
                    raise BadViewMap(f"node {node} ({ctx}): outputs {j} and {k} share memory")
        self.vm._check_valid(node, outs, ctx)
        return outs

    def reference(self) -> list:
        """``perform`` on copies (the reference), and the C thunk, which must agree; the
        result the graph goes on with (the C thunk's when there is one)."""
        self.ref = self.run("perform", self._perform, self.fresh_args())
        if self.thunk is None:
            return self.ref
        c_out = self.run("C thunk", self._c_run, self.fresh_args())
        self.vm._compare(self.node, "C thunk", c_out, self.ref, "", self.rtol, self.atol)
        return c_out

    def rerun(
        self, impl: str, fn: Callable[..., Any], ins: list, previous, what: str, usual: str
    ) -> None:
        """Run ``impl`` again with ``what``; it must succeed, as with ``usual``, and agree."""
        try:
            outs = self.run(impl, fn, ins, previous, f" with {what}")
        except DebugModeError:
            raise
        except Exception as e:
            raise BadThunkOutput(
                f"node {self.node}: {impl} raised {type(e).__name__}: {e} with {what}, "
                f"but succeeded with {usual}"
            ) from e
        self.vm._compare(self.node, impl, outs, self.ref, f" with {what}", self.rtol, self.atol)

    def aliased_inputs(self) -> None:
        """The same value passed as two inputs (or inputs sharing memory) changes nothing."""
        node = self.node
        for label, make_ref, make_aliased in _alias_variants(node, self.args):
            ref_a = _run_perform(node, make_ref(), thunk=self.vm.thunks.get(node))
            for impl, fn in self.impls:
                try:
                    outs = fn(make_aliased(), None)
                except Exception as e:
                    raise BadThunkOutput(
                        f"node {node}: {impl} raised {type(e).__name__}: {e} with {label}, "
                        "but succeeded on unaliased copies"
                    ) from e
                self.vm._check_valid(node, outs, f"{impl} with {label}")
                self.vm._compare(node, impl, outs, ref_a, f" with {label}", self.rtol, self.atol)

    def output_buffers(self) -> None:
        for label, make in self.vm._output_variants(self.ref):
            for impl, fn in self.impls:
                prev = make()
                self.rerun(impl, fn, self.fresh_args(), prev, f"{label} output buffers",
                           "fresh ones")  # fmt: skip

    def input_strides(self) -> None:
        for label, make in self.vm._input_variants(self.args):
            for impl, fn in self.impls:
                self.rerun(impl, fn, make(), None, f"{label} inputs", "contiguous ones")

    def output_reusing_input(self) -> None:
        """An output's previous buffer being one of the inputs must not change the result."""
        for k, i in _output_input_pairs(self.ref, self.args):
            for impl, fn in self.impls:
                ins = self.fresh_args()
                prev = [None] * len(self.ref)
                prev[k] = ins[i]
                what = f"output {k}'s previous buffer being input {i}"
                self.rerun(impl, fn, ins, prev, what, "fresh ones")
