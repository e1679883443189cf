"""graphc.function: compile a graph into a callable.

Pipeline: clone the graph into a FunctionGraph (givens substituted, shared variables as
implicit inputs, updates as extra outputs) -> rewrite (graphc.opt) -> link (graphc.linker)
-> VM (graphc.vm). Profiling reads what the VM records (graphc.compile.profiling).
"""

from __future__ import annotations

import copy as _copy
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphc.compile.mode import Mode, get_mode, resolve_linker
from graphc.compile.profile_request import profiling_requested
from graphc.compile.sharedvalue import SharedVariable
from graphc.flags import config
from graphc.graph.basic import (
    Constant,
    Variable,
    ancestors,
    clone_replace,
    graph_inputs,
    new_node_origins,
)
from graphc.graph.fg import FunctionGraph
from graphc.import_clock import import_clock
from graphc.tensor.variable import as_tensor_variable


@dataclass
class In:
    """A function input with options: a default ``value``, a keyword ``name``, ``borrow``
    (the function may keep a reference) and ``mutable`` (the function may overwrite it)."""

    variable: Variable
    value: Any = None
    name: str | None = None
    borrow: bool = False
    mutable: bool = False

    def __post_init__(self):
        if self.name is None:
            self.name = self.variable.name


@dataclass
class Out:
    """A function output; ``borrow=True`` may return internal storage without a copy."""

    variable: Variable
    borrow: bool = False


class UnusedInputError(ValueError):
    """An input the outputs do not depend on (see ``on_unused_input``)."""


def function(
    inputs: Sequence,
    outputs=None,
    mode: Mode | str | None = None,
    updates=None,
    givens=None,
    name: str | None = None,
    profile=None,
    on_unused_input: str = "raise",
    allow_input_downcast: bool | None = None,
    trust_input: bool = False,
    no_default_updates=False,
) -> Function:
    """Compile ``outputs`` as a function of ``inputs``.

    ``updates``: pairs (shared variable, new expression) applied after the outputs are
    computed, all from the values before the call. ``givens``: pairs (variable, replacement)
    substituted before compiling. ``profile``: True, a ``ProfileStats`` to accumulate into,
    or None for ``config.profile``. A shared variable the graph reads that has a
    ``default_update`` and no explicit update is updated with it, unless
    ``no_default_updates`` is True or a list holding it.
    """
    if name is None:
        name = _caller_location()
    maker = FunctionMaker(
        inputs,
        outputs,
        get_mode(mode),
        updates=updates,
        givens=givens,
        name=name,
        profile=profile,
        on_unused_input=on_unused_input,
        allow_input_downcast=allow_input_downcast,
        no_default_updates=no_default_updates,
    )
    fn = maker.create()
    fn.trust_input = trust_input
    return fn


def replace_refs_back(flat, built):
    from graphc.graph.flat import replace_refs

    return replace_refs(flat, lambda r: built[r.index] if r.out < 0 else built[r.index][r.out])


def _caller_location() -> str:
    import inspect

    frame = inspect.currentframe()
    try:
        f = frame.f_back.f_back if frame and frame.f_back else None
        return f"{f.f_code.co_filename}:{f.f_lineno}" if f else "<unknown>"
    finally:
        del frame


def _pairs(x) -> list[tuple[Variable, Any]]:
    if x is None:
        return []
    if isinstance(x, dict):
        return list(x.items())
    return [tuple(p) for p in x]


class FunctionMaker:
    """Builds the optimized FunctionGraph and the Program for a function."""

    def __init__(self, inputs, outputs, mode: Mode, *, updates=None, givens=None, name=None,
                 profile=None, on_unused_input="raise", allow_input_downcast=None,
                 no_default_updates=False):  # fmt: skip
        t_start = time.perf_counter_ns()
        self.mode = mode
        self.name = name
        self.allow_input_downcast = allow_input_downcast
        self.original = dict(inputs=inputs, outputs=outputs, updates=updates, givens=givens,
                             name=name, on_unused_input=on_unused_input,
                             allow_input_downcast=allow_input_downcast,
                             no_default_updates=no_default_updates)  # fmt: skip
        self.inputs = [i if isinstance(i, In) else In(_as_input_var(i)) for i in inputs]
        self.return_list = isinstance(outputs, list | tuple)
        out_list = list(outputs) if self.return_list else ([] if outputs is None else [outputs])
        self.outputs = [o if isinstance(o, Out) else Out(as_tensor_variable(o)) for o in out_list]
        explicit = _pairs(updates)
        explicit += default_updates(
            [o.variable for o in self.outputs] + [as_tensor_variable(e) for _, e in explicit],
            {v for v, _ in explicit} | {a for a, _ in _pairs(givens)},
            no_default_updates,
        )
        self.updates = self._check_updates(explicit)
        in_vars = [i.variable for i in self.inputs]
        seen = set()
        for v in in_vars:
            if v in seen:
                raise ValueError(f"input {v} appears twice in the inputs of the function")
            if isinstance(v, SharedVariable):
                raise TypeError(
                    f"shared variable {v} cannot be an explicit input; it is an implicit one"
                )
            seen.add(v)

        # graph to compile: outputs then update expressions, with givens substituted
        targets = [o.variable for o in self.outputs] + [u for _, u in self.updates]
        givens_pairs = [(a, as_tensor_variable(b)) for a, b in _pairs(givens)]
        for a, b in givens_pairs:
            if a.type.convert_variable(b) is None:
                raise TypeError(f"givens: {b} of type {b.type} cannot replace {a} ({a.type})")
        if givens_pairs:
            targets = clone_replace(targets, dict(givens_pairs))
        free = [
            v for v in graph_inputs(targets)
            if not isinstance(v, Constant) and v not in seen
        ]  # fmt: skip
        self.shared = [v for v in free if isinstance(v, SharedVariable)]
        for v, _ in self.updates:
            if v not in self.shared:
                self.shared.append(v)
        missing = [v for v in free if not isinstance(v, SharedVariable)]
        if missing:
            from graphc.graph.fg import MissingInputError

            raise MissingInputError(
                f"the outputs depend on {missing[0]} (of type {missing[0].type}), which is "
                "neither an input nor a shared variable of the function"
            )
        self._check_unused(on_unused_input, targets)
        fgraph = FunctionGraph(in_vars + self.shared, targets, clone=True)
        self.n_outputs = len(self.outputs)
        self.phases: dict[str, int] = {}

        # rewrite
        from graphc.opt import rewrite_graph

        including, excluding, requiring = mode.effective_tags()
        t0 = time.perf_counter_ns()
        protected = fgraph.inputs[: len(in_vars)]
        mutable = [fgraph.inputs[k] for k, i in enumerate(self.inputs) if i.mutable]
        fgraph.protected_inputs = [v for v in protected if v not in mutable]  # type: ignore
        fgraph.update_mapping = {  # type: ignore[attr-defined]
            len(self.outputs) + k: len(in_vars) + self.shared.index(s)
            for k, (s, _) in enumerate(self.updates)
        }
        with import_clock() as imports, new_node_origins(()):
            self.rewrite_report = rewrite_graph(fgraph, mode.optimizer, including, excluding,
                                                requiring)  # fmt: skip
        self.phases["python_imports"] = imports.ns
        self.phases["rewrite"] = time.perf_counter_ns() - t0 - imports.ns
        self.phases["validate"] = getattr(self.rewrite_report, "validate_ns", 0)
        self.fgraph = fgraph
        self.linker = resolve_linker(mode.linker)
        self.allow_gc = config.allow_gc if self.linker.allow_gc is None else self.linker.allow_gc
        self.vm_kind = mode.vm or (self.linker.vm if self.linker.vm == "py" else config.vm)
        self.profile = profile
        self.t_start = t_start

    def _check_updates(self, pairs):
        out = []
        seen = set()
        for var, expr in pairs:
            if not isinstance(var, SharedVariable):
                raise TypeError(f"updates: {var} is not a shared variable")
            if var in seen:
                raise ValueError(f"updates: {var} is updated twice")
            seen.add(var)
            expr = as_tensor_variable(expr)
            if expr.type != var.type:
                if var.type.convert_variable(expr) is None:
                    if expr.dtype != var.dtype and expr.ndim == var.ndim:
                        raise TypeError(
                            f"updates: the new value of {var} has dtype {expr.dtype} but the "
                            f"shared variable has dtype {var.dtype}; cast it explicitly"
                        )
                    raise TypeError(
                        f"updates: the new value of {var} has type {expr.type}, expected {var.type}"
                    )
            out.append((var, expr))
        return out

    def _check_unused(self, policy: str, targets):
        if policy not in ("raise", "warn", "ignore"):
            raise ValueError(f"on_unused_input must be raise, warn or ignore, not {policy!r}")
        used = set(ancestors(targets))
        for k, i in enumerate(self.inputs):
            if i.variable not in used:
                msg = (
                    f"input {k} ({i.variable}) of the function is not used to compute any "
                    "output; pass on_unused_input='warn' or 'ignore' to allow it"
                )
                if policy == "raise":
                    raise UnusedInputError(msg)
                if policy == "warn":
                    warnings.warn(msg, stacklevel=4)

    def link(self):
        """Lower the optimized graph to a Program with the mode's linker."""
        from graphc.linker.base import link_py

        t0 = time.perf_counter_ns()
        with import_clock() as imports:
            if self.linker.use_c:
                # without a working compiler link_cpy runs every node in Python, with one
                # warning that says why
                from graphc.linker.clinker import link_cpy

                linked = link_cpy(self.fgraph, self.fgraph.outputs, self.compile_inner)
            else:
                linked = link_py(self.fgraph, self.fgraph.outputs, self.compile_inner)
        self.phases["python_imports"] = self.phases.get("python_imports", 0) + imports.ns
        self.phases["linker"] = time.perf_counter_ns() - t0 - imports.ns
        return linked

    def compile_inner(self, inputs: list, outputs: list) -> Function:
        """An inner graph (a scan's step) compiled with this function's optimizer and
        linker; its profile, if any, is collected by the enclosing function's."""
        mode = self.mode
        if getattr(mode, "profile_stats", None) is not None or mode.profile:
            mode = Mode(mode.linker, mode.optimizer, mode.included, mode.excluded,
                        mode.required, vm=mode.vm)  # fmt: skip
        maker = FunctionMaker(inputs, outputs, mode, name=f"{self.name or 'function'}/inner",
                              profile=False, on_unused_input="ignore")  # fmt: skip
        return maker.create()

    def create(self) -> Function:
        linked = self.link()
        self.phases["total"] = time.perf_counter_ns() - self.t_start
        return Function(self, linked)


def default_updates(roots: list, skip: set, no_default_updates) -> list[tuple]:
    """``(shared, shared.default_update)`` for every shared variable ``roots`` (and those
    updates) read that has one, is not in ``skip`` and not excluded by
    ``no_default_updates`` (True: all excluded; a list: those)."""
    if no_default_updates is True:
        return []
    excluded = set(no_default_updates or ()) | set(skip)
    found: list[tuple] = []
    seen: set = set()
    todo = list(roots)
    while todo:  # a default update may read further shared variables
        new = []
        for v in graph_inputs(todo):
            upd = getattr(v, "default_update", None) if isinstance(v, SharedVariable) else None
            if upd is None or v in seen or v in excluded:
                continue
            seen.add(v)
            new.append((v, upd))
        found += new
        todo = [u for _, u in new]
    return found


def _as_input_var(v) -> Variable:
    if not isinstance(v, Variable):
        raise TypeError(f"function inputs must be Variables or In(...), got {type(v).__name__}")
    if v.owner is not None:
        raise TypeError(
            f"input {v} is computed by {v.owner.op}; a function input must be a free "
            "variable (use givens to substitute an expression)"
        )
    if isinstance(v, Constant):
        raise TypeError(f"input {v} is a constant; constants cannot be function inputs")
    return v


class Function:
    """A compiled function: ``f(*args, **kwargs)`` returns the outputs' values."""

    def __init__(self, maker: FunctionMaker, linked):
        from graphc.vm import make_vm

        self.maker = maker
        self.linked = linked
        self.name = maker.name
        self.trust_input = False
        custom = getattr(maker.mode, "make_vm", None)  # e.g. DEBUG_MODE's checking VM
        if custom is not None:
            self.vm = custom(maker, linked)
        else:
            self.vm = make_vm(linked.program, kind=maker.vm_kind, allow_gc=maker.allow_gc)
        self.input_types = [i.variable.type for i in maker.inputs]
        self.input_names = [i.name for i in maker.inputs]
        self.defaults = [self._default_value(k, i) for k, i in enumerate(maker.inputs)]
        self.n_in = len(maker.inputs)
        # per input (position, dtype, ndim, static shape or None) for the call's fast check:
        # an exact ndarray of the right dtype, ndim and static sizes passes as is
        self._checks = tuple(
            (k, np.dtype(t.dtype), t.ndim, t.shape if _known_axes(t) else None)
            for k, t in enumerate(self.input_types)
        )
        self.shared = maker.shared
        n_out = maker.n_outputs
        self.update_targets = [(maker.shared.index(s), s) for s, _ in maker.updates]
        self._copy_outputs, self._copy_updates = _outputs_needing_copy(maker, linked)
        self.n_out = n_out
        # the common case: one output returned as is, no updates
        self._single = (
            not maker.return_list and n_out == 1 and not self.update_targets
            and not self._copy_outputs
        )  # fmt: skip
        self.profile = None
        self._calls = 0
        # calls with updates are serialized: reading the shared values, running the VM and
        # writing the updates back form one critical section, so no thread loses an update
        # (reentrant: a call from inside its own run still gets the VM's "already running")
        self._update_lock = threading.RLock() if self.update_targets else None
        if _profiling_requested(maker.profile, maker.mode):  # else skip importing it
            from graphc.compile.profiling import attach_profile

            attach_profile(self, maker.profile)

    def _default_value(self, k: int, inp: In):
        """``In(value=...)`` converted once to the input's type (None: no default)."""
        if inp.value is None:
            return None
        try:
            return inp.variable.type.filter(
                inp.value, allow_downcast=self.maker.allow_input_downcast
            )
        except (TypeError, ValueError) as e:
            label = inp.name or str(inp.variable)
            raise type(e)(
                f"{self.name}: default value of input {k} ({label}, expected "
                f"{inp.variable.type}): {e}"
            ) from None

    # ------------------------------------------------------------------ calling
    def _bind(self, args, kwargs) -> list:
        """Arguments by position, keyword and default, in input order (unchecked)."""
        n = self.n_in
        if len(args) > n:
            raise TypeError(f"{self.name}: takes at most {n} arguments ({len(args)} given)")
        values = list(args) + [_MISSING] * (n - len(args))
        for key, val in kwargs.items():
            try:
                k = self.input_names.index(key)
            except ValueError:
                raise TypeError(
                    f"{self.name}: unknown keyword argument {key!r}; inputs are "
                    f"{[nm for nm in self.input_names if nm]}"
                ) from None
            if values[k] is not _MISSING:
                raise TypeError(f"{self.name}: got multiple values for input {key!r}")
            values[k] = val
        for k in range(n):
            if values[k] is _MISSING:
                if self.defaults[k] is None:
                    raise TypeError(
                        f"{self.name}: missing input {k} "
                        f"({self.input_names[k] or self.maker.inputs[k].variable})"
                    )
                values[k] = self.defaults[k]
        return values

    def _filter(self, k: int, v):
        """Argument ``k`` converted to its input's type, or a TypeError / ValueError naming
        the input."""
        dt = self._checks[k][1]
        if self._checks[k][2] == 0 and (type(v) is dt.type or (type(v) is float and dt == _F8)):
            return np.asarray(v)  # a numpy scalar of the input's dtype, a float for float64
        try:
            return self.input_types[k].filter(v, allow_downcast=self.maker.allow_input_downcast)
        except (TypeError, ValueError) as e:
            label = self.input_names[k] or str(self.maker.inputs[k].variable)
            raise type(e)(
                f"{self.name}: bad argument {k} ({label}, expected {self.input_types[k]}): {e}"
            ) from None

    def __call__(self, *args, **kwargs):
        if self._update_lock is not None:
            with self._update_lock:
                return self._call(args, kwargs)
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        """One call: arguments checked, the VM run, outputs returned, updates written."""
        if self.profile is not None:
            return self._profiled_call(args, kwargs)
        values = self._prepare(args, kwargs)
        try:
            outs = self.vm(values)
        except Exception as e:
            raise self._node_error(e, values) from e
        if self._single:
            return outs[0]
        return self._finish(outs)

    def _prepare(self, args, kwargs) -> list:
        """The VM's arguments: inputs bound and checked (exact ndarrays pass on a fast
        path), then the shared values."""
        values = self._bind(args, kwargs) if kwargs or len(args) != self.n_in else list(args)
        if not self.trust_input:
            for k, dt, ndim, static in self._checks:
                v = values[k]
                if (
                    type(v) is not _ndarray
                    or v.ndim != ndim
                    or (v.dtype is not dt and v.dtype != dt)
                    or (static is not None and v.shape != static and not _fits(v.shape, static))
                ):
                    values[k] = self._filter(k, v)
        if self.shared:
            values += [s._value for s in self.shared]
        return values

    def _profiled_call(self, args, kwargs):
        pc = time.perf_counter_ns
        t0 = pc()
        values = self._prepare(args, kwargs)
        t1 = pc()
        prof = self._profiler
        try:
            outs = self.vm(values)
        except Exception as e:
            # a call that raises still counts: its nodes that ran were timed, so the
            # call's time must be in the totals too (thunks <= VM <= call always holds)
            t2 = pc()
            prof.on_call(t2 - t0, t2 - t1)
            raise self._node_error(e, values) from e
        t2 = pc()
        result = outs[0] if self._single else self._finish(outs)
        prof.on_call(pc() - t0, t2 - t1)
        return result

    def _recycle_replaced(self, old_values, new_values) -> None:
        """Give the VM the shared values just replaced: the next call writes the updates
        into them (double buffering) when nothing else holds them by then."""
        recycle = getattr(self.vm, "recycle", None)
        if recycle is not None:
            for j, (old, new) in enumerate(zip(old_values, new_values)):
                if old is not new:
                    recycle(self.n_out + j, old)

    def _finish(self, outs):
        n = self.n_out
        if self.update_targets:
            old_values = [s._value for _, s in self.update_targets]
            new_values = outs[n:]
            for k in self._copy_updates:
                new_values[k] = np.array(new_values[k], copy=True)
            for (_, s), v in zip(self.update_targets, new_values):
                s._value = v
            self._recycle_replaced(old_values, new_values)
        results = outs[:n]
        for k in self._copy_outputs:
            results[k] = np.array(results[k], copy=True)
        if self.maker.return_list:
            return results
        return results[0] if results else None

    def _node_error(self, exc: BaseException, values) -> BaseException:
        idx = getattr(self.vm, "failed_node", None)
        if idx is None:
            return exc
        node = self.linked.schedule[idx]
        lines = [
            f"Apply node that caused the error: {node}",
            f"Toposort index: {idx}",
            "Inputs types: [" + ", ".join(str(v.type) for v in node.inputs) + "]",
        ]
        shapes, strides = _runtime_inputs(node, self, values)
        if shapes is not None:
            lines.append(f"Inputs shapes: {shapes}")
            lines.append(f"Inputs strides: {strides}")
        lines.append(
            "HINT: use graphc.printing.debugprint(f) to see the compiled graph, or compile "
            "with optimizer=None to see the node as you wrote it."
        )
        msg = f"{exc}\n" + "\n".join(lines)
        try:
            new = type(exc)(msg)
        except Exception:  # noqa: BLE001 - exception types with unusual constructors
            exc.add_note("\n".join(lines))
            return exc
        return new

    # ------------------------------------------------------------------ misc
    def copy(self, share_memory: bool = False, swap: dict | None = None,
             delete_updates: bool = False, name: str | None = None,
             profile=None) -> Function:  # fmt: skip
        """A new Function over the same graph, with its own VM and storage.

        ``swap`` maps shared variables to others of the same type to use instead (in the
        copy only); ``delete_updates`` drops every update (explicit and default);
        ``name`` defaults to this function's. Both functions read and update the same
        shared variables. ``share_memory`` is accepted for Theano's signature: the copy's
        intermediate buffers are always its own.
        """
        if swap or delete_updates:
            fn = self._rebuilt(dict(swap or {}), delete_updates)
        else:
            maker = _copy.copy(self.maker)
            maker.profile = profile if profile is not None else (self.profile is not None or None)
            fn = Function(maker, maker.link())
        fn.trust_input = self.trust_input
        fn.name = name if name is not None else self.name
        return fn

    def _rebuilt(self, swap: dict, delete_updates: bool) -> Function:
        """This function compiled again with shared variables swapped or updates dropped."""
        for old, new in swap.items():
            if not isinstance(old, SharedVariable) or not isinstance(new, SharedVariable):
                raise TypeError(f"Function.copy: swap must map shared variables, got {old}")
            if old.type != new.type:
                raise TypeError(
                    f"Function.copy: cannot swap {old} ({old.type}) for {new} ({new.type})"
                )
        orig = self.maker.original
        updates = (
            [] if delete_updates else [(swap.get(v, v), e) for v, e in _pairs(orig["updates"])]
        )
        givens = _pairs(orig["givens"]) + list(swap.items())
        return function(
            orig["inputs"], orig["outputs"], mode=self.maker.mode, updates=updates,
            givens=givens, name=orig["name"],
            on_unused_input="ignore" if delete_updates else orig["on_unused_input"],
            allow_input_downcast=orig["allow_input_downcast"],
            no_default_updates=True if delete_updates else orig["no_default_updates"],
            profile=self.profile is not None or None,
        )  # fmt: skip

    def __reduce__(self):
        """Pickled as the graph it was built from (flat, so deep graphs pickle) + mode;
        re-linked on load, which the compile cache makes cheap."""
        from graphc.graph.flat import collect_vars, flatten, replace_refs

        original = self.maker.original
        entries, refs = flatten(collect_vars(original))
        flat_original = replace_refs(original, lambda v: refs[v])
        profiled = self.profile is not None
        args = (entries, flat_original, self.maker.mode, self.trust_input, profiled)
        return (_rebuild_function, args)

    @property
    def fgraph(self) -> FunctionGraph:
        return self.maker.fgraph

    def __repr__(self) -> str:
        return f"<graphc.Function {self.name}>"


_MISSING = object()


_profiling_requested = profiling_requested


_ndarray = np.ndarray
_F8 = np.dtype("float64")


def _fits(shape: tuple, static: tuple) -> bool:
    """Whether a run-time shape has the static sizes (None = any) of an input's type."""
    return all(b is None or a == b for a, b in zip(shape, static))


def _known_axes(t) -> bool:
    return any(s is not None for s in getattr(t, "shape", ()))


def _rebuild_function(entries, flat_original, mode, trust_input, profiled=False):
    from graphc.graph.flat import unflatten

    built = unflatten(entries)
    original = replace_refs_back(flat_original, built)
    fn = function(
        original["inputs"],
        original["outputs"],
        mode=mode,
        updates=original["updates"],
        givens=original["givens"],
        name=original["name"],
        on_unused_input=original["on_unused_input"],
        allow_input_downcast=original["allow_input_downcast"],
        no_default_updates=original.get("no_default_updates", False),
        profile=True if profiled else None,
    )
    fn.trust_input = trust_input
    return fn


def _outputs_needing_copy(maker: FunctionMaker, linked) -> tuple[list[int], list[int]]:
    """Outputs and updates whose value must be copied so that no two of the caller's arrays
    (returned outputs, new shared values, the caller's inputs) and no constant share memory.

    An output is copied (unless ``Out(borrow=True)``) when it may alias a function input, a
    shared value or a constant (through a view or an in-place chain), when it is also an
    update's new value, or when the same variable was returned earlier in the list.
    An update's new value is copied when it may alias anything but its own shared variable's
    old value or the old value of another updated shared variable that no other update keeps
    (so ``a <- b, b <- a`` swaps buffers without copying), or when it is the value of an
    earlier update."""
    fg = maker.fgraph
    roots = set(fg.inputs)
    memo: dict[Variable, frozenset] = {}

    def alias_roots(v: Variable) -> frozenset:
        if v in memo:
            return memo[v]
        if v in roots or isinstance(v, Constant):
            res = frozenset([v])
        else:
            res = frozenset()
            node = v.owner
            if node is not None:
                for mp in (node.op.view_map, node.op.destroy_map):
                    for i in mp.get(v.index, ()):
                        res = res | alias_roots(node.inputs[i])
        memo[v] = res
        return res

    n_out = len(maker.outputs)
    n_in = len(maker.inputs)
    upd_outs = fg.outputs[n_out:]
    upd_vars = [fg.inputs[n_in + maker.shared.index(s)] for s, _ in maker.updates]
    released = {s for s, e in zip(upd_vars, upd_outs) if s not in alias_roots(e)}
    claimed: set[Variable] = set()
    seen: set[Variable] = set()
    copy_updates = []
    for k, (s, e) in enumerate(zip(upd_vars, upd_outs)):
        allowed = {s} | (released - claimed)
        r = alias_roots(e)
        if e in seen or not r <= allowed:
            copy_updates.append(k)
        else:
            claimed |= r - {s}
            seen.add(e)
    updated = set(upd_outs)
    copy_outputs = []
    for k, out in enumerate(maker.outputs):
        v = fg.outputs[k]
        if not out.borrow and (alias_roots(v) or v in updated or v in fg.outputs[:k]):
            copy_outputs.append(k)
    return copy_outputs, copy_updates


def _runtime_inputs(node, fn: Function, values):
    try:
        slots = fn.linked.slots
        prog = fn.linked.program
        shapes, strides = [], []
        for v in node.inputs:
            s = slots[v]
            if s in prog.inputs:
                val = values[prog.inputs.index(s)]
            elif isinstance(v, Constant):
                val = v.data
            else:
                shapes.append("?")
                strides.append("?")
                continue
            arr = np.asarray(val)
            shapes.append(arr.shape)
            strides.append(arr.strides)
        return shapes, strides
    except Exception:  # noqa: BLE001 - best effort context for an error message
        return None, None
