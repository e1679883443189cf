"""Core IR: Type, Variable, Constant, Apply and Op, plus graph walks.

Ops and Types are immutable values: equal (and hashed) by their declared ``__props__``.
Variables and Apply nodes are compared by identity.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from types import FrameType
from typing import TYPE_CHECKING, Any, ClassVar

from graphc.flags import config


class PropsValue:
    """Value semantics from ``__props__``: equality, hashing, repr and pickling."""

    __props__: ClassVar[tuple[str, ...]] = ()

    def _props(self) -> tuple:
        return tuple(getattr(self, p) for p in self.__props__)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self) -> int:
        return hash((type(self), self._props()))

    def __repr__(self) -> str:
        if not self.__props__:
            return type(self).__name__
        args = ", ".join(f"{p}={getattr(self, p)!r}" for p in self.__props__)
        return f"{type(self).__name__}{{{args}}}"


class Type(PropsValue):
    """The type of a Variable: knows how to check and convert runtime values."""

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return ``value`` converted to this type, or raise TypeError/ValueError."""
        raise NotImplementedError(f"{type(self).__name__}.filter")

    def is_valid_value(self, value: Any) -> bool:
        try:
            self.filter(value, strict=True)
            return True
        except (TypeError, ValueError):
            return False

    def make_variable(self, name: str | None = None) -> Variable:
        return self.variable_type(self, None, name=name)

    def make_constant(self, value: Any, name: str | None = None) -> Constant:
        return self.constant_type(self, self.filter(value), name=name)

    def __call__(self, name: str | None = None) -> Variable:
        return self.make_variable(name)

    def convert_variable(self, var: Variable) -> Variable | None:
        """Return ``var`` viewed as this type if compatible (used by replace), else None."""
        return var if var.type == self else None

    variable_type: ClassVar[type]
    constant_type: ClassVar[type]


class Tag(dict):
    """Free-form annotations on a Variable or Apply: a dict whose keys are also attributes
    (``var.tag.test_value``, as in Theano, and ``var.tag["test_value"]``)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"tag has no attribute {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(f"tag has no attribute {name!r}") from None


class Variable:
    """A symbolic value: the input of a graph or an output of an Apply node.

    Libraries may store their own attributes on a Variable, as on Theano's: the
    ``__dict__`` slot holds them and costs nothing until the first one is set.
    """

    __slots__ = ("type", "owner", "index", "name", "tag", "__weakref__", "__dict__")
    _count = 0

    def __init__(
        self,
        type: Type,
        owner: Apply | None = None,
        index: int | None = None,
        name: str | None = None,
    ) -> None:
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.tag: Tag = Tag()

    def clone(self) -> Variable:
        """A new ownerless Variable with the same type and name."""
        cp = type(self)(self.type, None, None, self.name)
        cp.tag = Tag(self.tag)
        return cp

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        if self.owner is not None:
            op = self.owner.op
            if len(self.owner.outputs) == 1:
                return f"{op}.0"
            return f"{op}.{self.index}"
        return f"<{self.type}>"

    def __repr__(self) -> str:
        if config.print_test_value:
            try:
                return f"{self}\n{self.get_test_value()!r}"
            except AttributeError:
                pass
        return str(self)

    def get_test_value(self) -> Any:
        """Theano's test value: a Constant's data, a shared variable's value, else
        ``tag.test_value`` (as this Variable's type); AttributeError when there is none."""
        if isinstance(self, Constant):
            return self.data
        shared = self.tag.get("shared")
        if shared is not None:
            return shared.get_value(borrow=True)
        if "test_value" not in self.tag:
            raise AttributeError(f"{self} has no test value")
        try:
            return self.type.filter(self.tag["test_value"], allow_downcast=True)
        except (TypeError, ValueError) as e:
            raise TypeError(f"the test value of {self} does not fit {self.type}: {e}") from None

    def eval(self, inputs: dict | None = None) -> Any:
        """Evaluate with the reference evaluator (``Op.perform`` over the graph)."""
        return evaluate([self], inputs or {})[0]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.update((s, getattr(self, s)) for s in Variable.__slots__ if s[:2] != "__")
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)

    def __reduce_ex__(self, protocol: Any) -> Any:
        # An owned Variable pickles as its flat graph: following owner -> inputs -> owner
        # would recurse once per level and fail on graphs deeper than the recursion limit.
        if self.owner is None:
            return super().__reduce_ex__(protocol)
        return (_rebuild_owned, _flat_graph(self))


def _flat_graph(root: Variable) -> tuple[list, list, tuple[int, int]]:
    """``root``'s graph as free Variables plus nodes whose inputs refer to earlier entries:
    ``(-1, k)`` is free Variable ``k``, ``(n, j)`` is output ``j`` of node ``n``."""
    free: list[Variable] = []
    refs: dict[Variable, tuple[int, int]] = {}
    nodes: list[tuple] = []
    for n, node in enumerate(io_toposort([], [root])):
        in_refs = []
        for v in node.inputs:
            if v not in refs:  # only free Variables are unseen here (topological order)
                refs[v] = (-1, len(free))
                free.append(v)
            in_refs.append(refs[v])
        outs = [(type(o), o.type, o.name, o.tag, o.__dict__) for o in node.outputs]
        nodes.append((node.op, in_refs, outs, node.tag, node.origins))
        for j, o in enumerate(node.outputs):
            refs[o] = (n, j)
    return free, nodes, refs[root]


def _rebuild_owned(free: list, nodes: list, root: tuple[int, int]) -> Variable:
    built: list[list[Variable]] = []
    for op, in_refs, outs, tag, origins in nodes:
        inputs = [free[j] if n < 0 else built[n][j] for n, j in in_refs]
        outputs = []
        for cls, typ, name, vtag, attrs in outs:
            o = cls(typ, None, None, name)
            o.tag = vtag
            o.__dict__.update(attrs)
            outputs.append(o)
        node = Apply(op, inputs, outputs)
        node.tag, node.origins = tag, origins
        built.append(outputs)
    return built[root[0]][root[1]]


class Constant(Variable):
    """A Variable with a fixed value; equal constants share a ``signature``."""

    __slots__ = ("data",)

    def __init__(self, type: Type, data: Any, name: str | None = None) -> None:
        super().__init__(type, None, None, name)
        self.data = data

    def signature(self) -> tuple:
        return (self.type, _value_signature(self.data))

    def clone(self) -> Constant:
        cp = type(self)(self.type, self.data, self.name)
        cp.tag = Tag(self.tag)
        return cp

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        return _short_value(self.data)

    def __getstate__(self) -> dict[str, Any]:
        st = super().__getstate__()
        st["data"] = self.data
        return st


def _value_signature(data: Any) -> Any:
    try:
        import numpy as np

        if isinstance(data, np.ndarray | np.generic):
            arr = np.asarray(data)
            return (arr.dtype.str, arr.shape, arr.tobytes())
    except ImportError:  # pragma: no cover
        pass
    return data


def _short_value(data: Any) -> str:
    import numpy as np

    arr = np.asarray(data)
    if arr.ndim == 0:
        return str(arr.item())
    if arr.size <= 4:
        return str(arr.tolist())
    return f"TensorConstant{{{arr.shape} of {arr.dtype}}}"


_GRAPHC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NEW_NODE_ORIGINS: ContextVar[tuple[str, ...] | None] = ContextVar("origins", default=None)


#: Frames of a source line's call chain (the line, then its callers).
ORIGIN_DEPTH = 3
#: Separator of the frames of a call chain: ``"helper.py:4 <- model.py:20"``.
CHAIN = " <- "
_LIBRARY_DIRS = tuple({os.path.dirname(os.__file__) + os.sep, sys.prefix + os.sep,
                       sys.base_prefix + os.sep})  # fmt: skip


def user_origin() -> tuple[str, ...]:
    """``("file.py:line",)`` of the innermost caller outside graphc (empty if none); when
    that line is in a function, with its callers (``CHAIN``-separated, innermost first, up
    to ``ORIGIN_DEPTH`` frames, stopping at module level and at library code such as a
    test runner): two layers built by one helper then differ."""
    f: FrameType | None = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_GRAPHC_DIR):
        f = f.f_back
    if f is None:
        return ()
    chain = f"{f.f_code.co_filename}:{f.f_lineno}"
    for _ in range(ORIGIN_DEPTH - 1):
        if f.f_code.co_name == "<module>":
            break
        f = f.f_back
        if f is None:
            break
        path = f.f_code.co_filename
        if path.startswith(_LIBRARY_DIRS) or path.startswith(_GRAPHC_DIR) or path[0] == "<":
            break
        chain += f"{CHAIN}{path}:{f.f_lineno}"
    return (chain,)


@contextmanager
def new_node_origins(origins: tuple[str, ...]) -> Iterator[None]:
    """Nodes built inside the block get ``origins`` instead of the caller's line (rewrites
    build nodes with ``()``; a replacement then inherits the replaced node's lines)."""
    token = _NEW_NODE_ORIGINS.set(tuple(origins))
    try:
        yield
    finally:
        _NEW_NODE_ORIGINS.reset(token)


class Apply:
    """An application of an Op to input Variables, producing output Variables.

    ``origins`` are the user's source lines that built the node (``"path:line"``), kept
    through rewrites: a fused node carries the lines of every node it fused.
    """

    __slots__ = ("op", "inputs", "outputs", "tag", "origins", "__weakref__")

    def __init__(self, op: Op, inputs: Sequence[Variable], outputs: Sequence[Variable]) -> None:
        self.op = op
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.tag: Tag = Tag()
        preset = _NEW_NODE_ORIGINS.get()
        self.origins: tuple[str, ...] = user_origin() if preset is None else preset
        for i, out in enumerate(self.outputs):
            if out.owner is not None and out.owner is not self:
                raise ValueError(f"output {i} of {op} already has an owner")
            out.owner = self
            out.index = i

    @property
    def out(self) -> Variable:
        if len(self.outputs) != 1:
            raise AttributeError(f"{self.op} has {len(self.outputs)} outputs; use .outputs")
        return self.outputs[0]

    def clone_with_new_inputs(self, inputs: Sequence[Variable], strict: bool = True) -> Apply:
        """A copy of this node over ``inputs`` (types must match when ``strict``)."""
        if strict and all(a.type == b.type for a, b in zip(inputs, self.inputs)):
            new = Apply(self.op, inputs, [o.clone() for o in self.outputs])
        else:
            new = self.op.make_node(*inputs)
        new.tag = Tag(self.tag)
        new.origins = self.origins
        return new

    def __str__(self) -> str:
        return f"{self.op}({', '.join(str(i) for i in self.inputs)})"

    __repr__ = __str__

    def __getstate__(self) -> dict[str, Any]:
        return {s: getattr(self, s) for s in Apply.__slots__ if s != "__weakref__"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)


class Op(PropsValue):
    """An operation. Subclasses declare ``__props__``, ``make_node`` and ``perform``.

    Optional hooks: ``grad(inputs, output_grads)``, ``infer_shape(fgraph, node, shapes)``,
    ``flops(node, input_shapes, output_shapes)``, ``destroy_map`` / ``view_map``
    (``{output_index: [input_index]}``), ``lazy`` (the Op decides which inputs it needs).
    """

    destroy_map: ClassVar[dict[int, list[int]]] = {}
    view_map: ClassVar[dict[int, list[int]]] = {}
    lazy: ClassVar[bool] = False
    #: ``perform`` writes into an array its output cell holds on entry only through
    #: ``take_own_array`` (nothing else holds it), so the memory plan may lend it buffers
    reuses_outputs: ClassVar[bool] = False

    def make_node(self, *inputs: Variable) -> Apply:
        raise NotImplementedError(f"{type(self).__name__}.make_node")

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        raise NotImplementedError(f"{type(self).__name__}.perform")

    if TYPE_CHECKING:
        # The optional hooks, declared for the type checker only: callers look them up with
        # ``getattr(op, "grad", None)``, so an Op without one must not inherit a default.
        def grad(self, inputs: list[Variable], output_grads: list[Variable]) -> list[Variable]:
            """Symbolic gradients of the inputs given the outputs' gradients."""

        def infer_shape(
            self, fgraph: Any, node: Apply, input_shapes: list[tuple[Any, ...]]
        ) -> list[tuple[Any, ...]]:
            """Output shapes (symbolic or int) from the input shapes."""

        def flops(
            self,
            node: Apply,
            input_shapes: list[tuple[int, ...]],
            output_shapes: list[tuple[int, ...]],
        ) -> float:
            """Floating-point operations of one call, for the profiler."""

        def lazy_perform(
            self, node: Apply, computed: list[bool], inputs: list, output_cells: list[list]
        ) -> Sequence[int]:
            """Run with the inputs computed so far; return the indices still needed."""

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        """The node's output Variable, or the list of them when there are several (with
        ``config.compute_test_value`` on, their test values are computed now)."""
        node = self.make_node(*inputs, **kwargs)
        if config.compute_test_value != "off":
            compute_test_values(node)
        if len(node.outputs) == 1:
            return node.outputs[0]
        return node.outputs

    def __str__(self) -> str:
        if not self.__props__:
            return type(self).__name__
        return f"{type(self).__name__}{{{','.join(str(p) for p in self._props())}}}"

    __repr__ = __str__


# ---------------------------------------------------------------------------- graph walks


def ancestors(outputs: Iterable[Variable], blockers: Iterable[Variable] = ()) -> list[Variable]:
    """All Variables that ``outputs`` depend on (outputs included), stopping at blockers."""
    blocked = set(blockers)
    seen: set[Variable] = set()
    order: list[Variable] = []
    stack = list(outputs)[::-1]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        order.append(v)
        if v.owner is not None and v not in blocked:
            stack.extend(reversed(v.owner.inputs))
    return order


def graph_inputs(outputs: Iterable[Variable], blockers: Iterable[Variable] = ()) -> list[Variable]:
    """The ownerless (or blocked) Variables that ``outputs`` depend on."""
    blocked = set(blockers)
    return [v for v in ancestors(outputs, blocked) if v.owner is None or v in blocked]


def applys_between(inputs: Iterable[Variable], outputs: Iterable[Variable]) -> list[Apply]:
    """Apply nodes on a path from ``inputs`` to ``outputs``, in topological order."""
    return io_toposort(list(inputs), list(outputs))


def io_toposort(
    inputs: Sequence[Variable], outputs: Sequence[Variable], orderings: dict | None = None
) -> list[Apply]:
    """Apply nodes between ``inputs`` and ``outputs`` in a deterministic topological order.

    ``orderings`` maps an Apply to Apply nodes that must run before it (extra edges, used by
    the destroy handler). Ties are broken by depth-first discovery order, so the result is
    the same for the same graph on every run.
    """
    blocked = set(inputs)
    orderings = orderings or {}
    order: list[Apply] = []
    state: dict[Apply, int] = {}  # 1 = on stack, 2 = done
    for out in outputs:
        if out.owner is None or out in blocked:
            continue
        stack: list[tuple[Apply, bool]] = [(out.owner, False)]
        while stack:
            node, expanded = stack.pop()
            st = state.get(node)
            if expanded:
                if st != 2:
                    state[node] = 2
                    order.append(node)
                continue
            if st == 2:
                continue
            if st == 1:
                raise ValueError(f"graph contains a cycle through {node}")
            state[node] = 1
            stack.append((node, True))
            deps = [i.owner for i in node.inputs if i.owner is not None and i not in blocked]
            deps.extend(orderings.get(node, ()))
            for dep in reversed(deps):
                ds = state.get(dep)
                if ds == 1:
                    raise ValueError(f"graph contains a cycle through {dep}")
                if ds is None:
                    stack.append((dep, False))
    return order


def clone_get_equiv(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    copy_inputs: bool = True,
    memo: dict | None = None,
) -> dict:
    """Copy the graph between ``inputs`` and ``outputs``; return the old -> new mapping."""
    equiv: dict = {} if memo is None else memo
    for v in inputs:
        if v not in equiv:
            equiv[v] = v.clone() if copy_inputs else v
    for node in io_toposort(inputs, outputs):
        for v in node.inputs:
            if v not in equiv:
                if isinstance(v, Constant):
                    equiv[v] = v.clone() if copy_inputs else v
                else:
                    equiv[v] = v  # an ownerless free variable not listed as input
        new = node.clone_with_new_inputs([equiv[v] for v in node.inputs])
        equiv[node] = new
        for old, nw in zip(node.outputs, new.outputs):
            nw.name = old.name
            equiv[old] = nw
    for v in outputs:
        if v not in equiv:
            equiv[v] = v.clone() if copy_inputs and v.owner is None else v
    return equiv


def clone(
    inputs: Sequence[Variable], outputs: Sequence[Variable], copy_inputs: bool = True
) -> tuple[list[Variable], list[Variable]]:
    """Copy a graph; return the new inputs and outputs."""
    equiv = clone_get_equiv(inputs, outputs, copy_inputs)
    return [equiv[v] for v in inputs], [equiv[v] for v in outputs]


def clone_replace(outputs: Sequence[Variable], replace: dict[Variable, Variable]) -> list[Variable]:
    """Copy ``outputs``' graph with the Variables in ``replace`` substituted."""
    memo: dict = dict(replace)
    return [_clone_replace_one(o, memo) for o in outputs]


def _clone_replace_one(out: Variable, memo: dict) -> Variable:
    nodes = io_toposort(list(memo), [out])
    for node in nodes:
        if node.outputs[0] in memo:
            continue
        new_inputs = [memo.get(i, i) for i in node.inputs]
        if all(a is b for a, b in zip(new_inputs, node.inputs)):
            for o in node.outputs:
                memo[o] = o
            continue
        new = node.clone_with_new_inputs(new_inputs, strict=False)
        for o, n in zip(node.outputs, new.outputs):
            n.name = o.name
            memo[o] = n
    return memo.get(out, out)


def is_same_graph(a: Variable, b: Variable) -> bool:
    """Structural equality of two graphs (same Ops, same inputs, equal constants)."""
    memo: dict = {}

    def same(x: Variable, y: Variable) -> bool:
        key = (id(x), id(y))
        if key in memo:
            return memo[key]
        if isinstance(x, Constant) and isinstance(y, Constant):
            r = x.signature() == y.signature()
        elif x.owner is None or y.owner is None:
            r = x is y
        else:
            r = (
                x.owner.op == y.owner.op
                and x.index == y.index
                and len(x.owner.inputs) == len(y.owner.inputs)
                and all(same(i, j) for i, j in zip(x.owner.inputs, y.owner.inputs))
            )
        memo[key] = r
        return r

    return same(a, b)


# The reference evaluator: run ``Op.perform`` over a graph in topological order. It defines
# graphc's semantics (the linkers and VMs are tested against it) and lives here, beside the IR
# it walks, so that ``Variable.eval`` needs no import back into this module.
def evaluate(outputs: Sequence[Variable], inputs: dict) -> list:
    """Values of ``outputs`` given ``inputs`` (a dict Variable -> value)."""
    values: dict[Variable, object] = {}
    for var, val in inputs.items():
        values[var] = var.type.filter(val, allow_downcast=True)
    for v in graph_inputs(outputs, blockers=list(inputs)):
        if v in values:
            continue
        if isinstance(v, Constant):
            values[v] = v.data
        elif v.tag.get("shared") is not None:
            values[v] = v.tag["shared"].get_value(borrow=True)
        else:
            raise ValueError(f"no value given for input {v} (of type {v.type})")
    for node in io_toposort(list(values), list(outputs)):
        args = [values[i] for i in node.inputs]
        cells: list[list] = [[None] for _ in node.outputs]
        if node.op.lazy:
            _run_lazy(node, values, cells)
        else:
            node.op.perform(node, args, cells)
        for out, cell in zip(node.outputs, cells):
            if cell[0] is None:
                raise ValueError(f"{node} did not produce output {out.index}")
            values[out] = cell[0]
    return [values[o] for o in outputs]


def _missing_test_value(message: str, stacklevel: int = 4, error: type = ValueError) -> None:
    """What ``config.compute_test_value`` says to do about a missing test value."""
    mode = config.compute_test_value
    if mode == "raise":
        raise error(message)
    if mode == "warn":
        warnings.warn(message, stacklevel=stacklevel)
    elif mode == "pdb":
        import pdb

        pdb.set_trace()


def compute_test_values(node: Apply) -> None:
    """Theano's eager test values: run ``node`` on its inputs' test values and tag each
    output's ``test_value``. An input without one is reported as the flag says and the node
    is skipped; an error of the computation is raised now, naming the node."""
    if type(node.op).perform is Op.perform and not node.op.lazy:
        return  # no Python implementation to run
    values: dict[Variable, Any] = {}
    for i, inp in enumerate(node.inputs):
        try:
            values[inp] = inp.get_test_value()
        except AttributeError:
            _missing_test_value(
                f"Cannot compute test value: input {i} ({inp}) of Op {node} missing default value"
            )
            return
    for k in {k for ks in node.op.destroy_map.values() for k in ks}:
        values[node.inputs[k]] = values[node.inputs[k]].copy()  # test values stay intact
    cells: list[list] = [[None] for _ in node.outputs]
    try:
        if node.op.lazy:
            _run_lazy(node, values, cells)
        else:
            node.op.perform(node, [values[i] for i in node.inputs], cells)
    except Exception as e:
        note = f"computing the test value of {node} (compute_test_value is on)"
        try:
            err = type(e)(f"{e}\n{note}")
        except Exception:
            raise e from None  # an exception class that takes other arguments: as it is
        raise err.with_traceback(e.__traceback__) from e
    for out, cell in zip(node.outputs, cells):
        out.tag.test_value = cell[0]


def get_debug_values(*args: Variable) -> list:
    """Theano's ``get_debug_values``: ``[]`` when test values are off or one is missing
    (reported as the flag says), else ``[value]`` for one argument, ``[(values...)]``."""
    if config.compute_test_value == "off":
        return []
    vals = []
    for i, arg in enumerate(args):
        try:
            vals.append(arg.get_test_value())
        except AttributeError:
            name = f" ({arg.name!r})" if getattr(arg, "name", None) else ""
            _missing_test_value(f"Argument {i}{name} has no test value", 3, AttributeError)
            return []
    return vals if len(vals) == 1 else [tuple(vals)]


def _run_lazy(node: Apply, values: dict[Variable, Any], cells: list[list]) -> None:
    computed = [True] * len(node.inputs)
    args = [values[i] for i in node.inputs]
    needed = node.op.lazy_perform(node, computed, args, cells)
    if needed:
        raise RuntimeError(f"lazy {node} asked for inputs {needed} that are all computed")
