"""The ``Scan`` Op: a loop whose body is a graph, compiled once and run by the VM per step.

Outer inputs: ``[n_steps, *sequences, *state_inits, *non_sequences]``.

- a sequence is read one row per step (``seq[i]``); taps were sliced out beforehand, so
  each tap is its own sequence;
- a recurrent state ``k`` with taps ``(-L_k, ..., -1)`` starts from ``init_k[:L_k]`` (shape
  ``(L_k, *S_k)``); its output is the buffer of every value, ``(L_k + n_steps, *S_k)``, or
  only the final window ``(L_k, *S_k)`` for a state kept "last only" (a shared variable
  updated inside the loop);
- an output not fed back (``nit``) is stacked: ``(n_steps, *S_j)``.

Inner graph inputs: ``[*sequence rows, *state taps (per state, in tap order), *non_sequences]``;
inner outputs: ``[*new states, *nit outputs, (stop condition)]``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphc.compile.function import function
from graphc.graph.basic import Apply, Op, Variable, io_toposort
from graphc.linker.base import CompiledStep, StepClock
from graphc.scan_module.fastloop import plan_fast_loop
from graphc.scan_module.row_shapes import RowShapes
from graphc.tensor.buffers import array_for, take_own_array
from graphc.tensor.elemwise import GRAD_RULES
from graphc.tensor.shape import Shape_i
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable

try:  # the compiled loop driver (built with the package; the Python loop is its reference)
    from graphc.vm._loop import run_steps
except ImportError:  # pragma: no cover - a source tree without the extension built
    run_steps = None  # type: ignore[assignment]

__all__ = ["Scan", "ScanInfo", "ScanInner"]


@dataclasses.dataclass(frozen=True)
class ScanInfo:
    """The loop's layout: how many inputs and outputs of each kind, and their taps."""

    n_seqs: int
    state_taps: tuple[tuple[int, ...], ...]  # per state, its (negative) taps in fn order
    state_last: tuple[bool, ...]  # per state: keep only the final window
    n_nit: int
    n_nonseqs: int
    as_while: bool = False
    name: str | None = None
    truncate_gradient: int = -1
    mode: Any = None  # the step's compile mode (scan's ``mode=``); None: the enclosing one's

    @property
    def n_states(self) -> int:
        return len(self.state_taps)

    @property
    def lags(self) -> tuple[int, ...]:
        """Rows of history each state needs: ``-min(taps)``."""
        return tuple(-min(t) for t in self.state_taps)

    @property
    def n_inner_inputs(self) -> int:
        return self.n_seqs + sum(len(t) for t in self.state_taps) + self.n_nonseqs

    @property
    def n_inner_outputs(self) -> int:
        return self.n_states + self.n_nit + int(self.as_while)


class ScanInner:
    """The step graph: placeholder inputs and the outputs computed from them.

    Two ScanInners are equal when their graphs are the same up to the names of the
    placeholders, so identical loops merge.
    """

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable]):
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self._key: tuple | None = None

    def key(self) -> tuple:
        if self._key is None:
            index: dict[Any, Any] = {v: ("in", k) for k, v in enumerate(self.inputs)}
            parts = []
            for node in io_toposort(self.inputs, self.outputs):
                for v in node.inputs:
                    if v not in index:
                        index[v] = ("const", _constant_key(v))
                parts.append((node.op, tuple(index[v] for v in node.inputs)))
                for j, o in enumerate(node.outputs):
                    index[o] = ("node", len(parts) - 1, j)
            for v in self.outputs:
                if v not in index:
                    index[v] = ("const", _constant_key(v))
            self._key = (
                tuple(v.type for v in self.inputs),
                tuple(parts),
                tuple(index[v] for v in self.outputs),
            )
        return self._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ScanInner) and (self is other or self.key() == other.key())

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return f"ScanInner({len(self.inputs)} inputs, {len(self.outputs)} outputs)"


def _constant_key(v: Variable) -> Any:
    data = getattr(v, "data", None)
    if data is None:  # a free Variable: only equal to itself
        return ("var", id(v))
    arr = np.asarray(data)
    return (str(arr.dtype), arr.shape, arr.tobytes())


class Scan(Op):
    """A loop over a step graph (see the module docstring for the input layout)."""

    __props__ = ("info", "inner")
    # the state and stacked-output buffers of the last call are written again when
    # nothing else holds them (the memory plan lends them back)
    reuses_outputs = True

    def __init__(self, info: ScanInfo, inner: ScanInner):
        if len(inner.inputs) != info.n_inner_inputs:
            raise ValueError(f"scan: {len(inner.inputs)} inner inputs, expected "
                             f"{info.n_inner_inputs}")  # fmt: skip
        if len(inner.outputs) != info.n_inner_outputs:
            raise ValueError(f"scan: {len(inner.outputs)} inner outputs, expected "
                             f"{info.n_inner_outputs}")  # fmt: skip
        self.info = info
        self.inner = inner
        self._fallback: Any = None  # the step compiled on first use outside a function
        self._row_shapes: RowShapes | None = None  # see row_shapes()

    def __str__(self) -> str:
        return f"Scan{{{self.info.name or 'scan_fn'}}}"

    def inner_graph(self) -> tuple[list, list]:
        """The step graph's ``(inputs, outputs)`` (debugprint shows it under the node)."""
        return self.inner.inputs, self.inner.outputs

    # ------------------------------------------------------------------ layout
    def outer_split(self, inputs: Sequence) -> tuple[Any, list, list, list]:
        """``(n_steps, sequences, state_inits, non_sequences)`` of the outer inputs."""
        info = self.info
        a = 1 + info.n_seqs
        b = a + info.n_states
        return inputs[0], list(inputs[1:a]), list(inputs[a:b]), list(inputs[b:])

    def inner_split(self) -> tuple[list, list[list], list]:
        """Inner inputs as ``(sequence rows, taps per state, non_sequences)``."""
        info = self.info
        ins = self.inner.inputs
        seqs = ins[: info.n_seqs]
        pos = info.n_seqs
        taps = []
        for t in info.state_taps:
            taps.append(ins[pos : pos + len(t)])
            pos += len(t)
        return seqs, taps, ins[pos:]

    # ------------------------------------------------------------------ graph
    def make_node(self, n_steps: Any, *outer: Any) -> Apply:  # type: ignore[override]
        info = self.info
        n_steps = as_tensor_variable(n_steps)
        if n_steps.ndim != 0 or n_steps.dtype[:3] not in ("int", "uin"):
            raise TypeError(f"{self}: n_steps must be an integer scalar, got {n_steps.type}")
        tensors = [as_tensor_variable(v) for v in outer]
        want = info.n_seqs + info.n_states + info.n_nonseqs
        if len(tensors) != want:
            raise TypeError(f"{self}: expected {want} inputs after n_steps, got {len(tensors)}")
        _, seqs, inits, nonseqs = self.outer_split([n_steps, *tensors])
        in_seqs, in_taps, in_nonseqs = self.inner_split()
        for k, (s, row) in enumerate(zip(seqs, in_seqs)):
            _check_type(self, f"sequence {k}", s, row.type, extra_dim=True)
        for k, (x, taps) in enumerate(zip(inits, in_taps)):
            _check_type(self, f"initial state {k}", x, taps[0].type, extra_dim=True)
        for k, (x, v) in enumerate(zip(nonseqs, in_nonseqs)):
            _check_type(self, f"non-sequence {k}", x, v.type, extra_dim=False)
        outs = []
        for taps in in_taps:
            t = taps[0].type
            outs.append(TensorType(t.dtype, (None, *t.shape))())
        for o in self.inner.outputs[info.n_states : info.n_states + info.n_nit]:
            ot: Any = o.type
            outs.append(TensorType(ot.dtype, (None, *ot.shape))())
        return Apply(self, [n_steps, *tensors], outs)

    def infer_shape(self, fgraph: Any, node, shapes: list[tuple[Any, ...]]):
        """States: ``(L + n_steps, *S)`` (or ``(L, *S)`` kept last only); nit outputs: the
        step count, then the row shape the step graph gives its inputs' shapes (or, where
        that needs the step's values, the output's own sizes)."""
        info = self.info
        n_steps = node.inputs[0]
        _, seq_shapes, init_shapes, nonseq_shapes = self.outer_split(shapes)
        out = []
        for k, (lag, last, shp) in enumerate(zip(info.lags, info.state_last, init_shapes)):
            if last:
                rows = lag
            elif info.as_while:  # the loop decides how many steps it runs
                rows = Shape_i(0)(node.outputs[k])
            else:
                rows = lag + n_steps
            out.append((rows, *shp[1:]))
        inner_shapes = [shp[1:] for shp in seq_shapes]
        for shp, taps in zip(init_shapes, info.state_taps):
            inner_shapes += [shp[1:]] * len(taps)
        inner_shapes += nonseq_shapes
        for j, row in enumerate(self.row_shapes().outer(inner_shapes)):
            o = node.outputs[info.n_states + j]
            first = Shape_i(0)(o) if info.as_while else n_steps
            sizes = [Shape_i(d + 1)(o) if e is None else e for d, e in enumerate(row)]
            out.append((first, *sizes))
        return out

    def row_shapes(self) -> RowShapes:
        """The stacked outputs' row shapes from the step inputs' shapes (one walk of the
        step graph, made on first use and kept)."""
        if self._row_shapes is None:
            info = self.info
            nits = self.inner.outputs[info.n_states : info.n_states + info.n_nit]
            self._row_shapes = RowShapes(self.inner.inputs, nits)
        return self._row_shapes

    def L_op(self, inputs: list[Variable], outputs: list[Variable], output_grads: list[Variable]):  # noqa: N802 - Theano's name
        """Backpropagation through time: the rule ``graphc.scan_module.grad`` registers in
        the gradient rule table (it builds a Scan with ``scan``, above this module)."""
        return GRAD_RULES[self](self, inputs, outputs, output_grads)

    # ------------------------------------------------------------------ running
    def inner_step(self) -> tuple[list, list, Any]:
        """The step graph and its compile mode (None: the enclosing function's), which the
        linker compiles before the enclosing function's first call."""
        return self.inner.inputs, self.inner.outputs, self.info.mode

    def make_perform(self, node: Apply, step: CompiledStep) -> Callable:
        """The thunk running the compiled step ``step`` (reporting to its clock, if any)."""
        return _Runner(self, step.function, step.clock)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        if self._fallback is None:  # outside a compiled function (e.g. ``Variable.eval``)
            self._fallback = _Runner(
                self,
                function(
                    self.inner.inputs,
                    self.inner.outputs,
                    mode=self.info.mode,
                    on_unused_input="ignore",
                ),
            )
        self._fallback(inputs, output_storage)


def _check_type(op: Op, what: str, x: Any, inner: Any, extra_dim: bool) -> None:
    ndim = inner.ndim + int(extra_dim)
    if not isinstance(x.type, TensorType) or x.dtype != inner.dtype or x.ndim != ndim:
        raise TypeError(
            f"{op}: {what} is {x} of type {x.type}; the step function expects "
            f"dtype {inner.dtype} with {ndim} dimensions"
        )


BLOCK = 256  # steps whose input rows are sliced at once


def _rows(a: np.ndarray, lo: int, hi: int) -> list:
    """Views of rows ``lo:hi`` of ``a`` (0-d arrays, not scalars, for a vector)."""
    if a.ndim > 1:
        return list(a[lo:hi])
    return [a[j, ...] for j in range(lo, hi)]


def _step_inputs(readers: list, n: int):
    """Per step, the tuple of rows the step reads: ``(array, first row, rows per step)``
    readers, their views made a block of steps at a time (in C, not per step)."""
    for i0 in range(0, n, BLOCK):
        i1 = min(i0 + BLOCK, n)
        cols = []
        for a, o, m in readers:
            if m:
                cols.append(_rows(a, o + i0, o + i1))
            else:  # a window that shifts in place: the same rows every step
                cols.append([a[o, ...]] * (i1 - i0))
        if cols:
            yield from zip(*cols)
        else:
            yield from ((),) * (i1 - i0)


class _Runner:
    """Runs the loop: one VM call per step, outputs written into preallocated buffers."""

    def __init__(self, op: Scan, fn: Any, clock: StepClock | None = None):
        self.op = op
        self.inner_function = fn  # the compiled step
        self.vm = fn.vm
        #: the step's profiler: each timed call's steps go to its ``on_step``
        self.clock = clock
        #: run the steps with the compiled driver (False: the Python reference loop)
        self.compiled_loop = True
        self._twin: Any = None  # the VM of that loop's trial step (see _trial_vm)
        #: the whole loop as one C loop, when the step is one element-wise node (else None)
        self.fast = plan_fast_loop(op, fn)

    def __call__(self, inputs: list, output_storage: list) -> None:
        op, info = self.op, self.op.info
        n_raw, seqs, inits, nonseqs = op.outer_split(inputs)
        n = int(n_raw)
        name = op.info.name or "scan"
        if n < 0:
            raise ValueError(f"{name}: n_steps must be >= 0, got {n} (a negative n_steps runs "
                             "backwards only when it is a constant)")  # fmt: skip
        for k, s in enumerate(seqs):
            if s.shape[0] < n:
                raise ValueError(f"{name}: sequence {k} has {s.shape[0]} rows, fewer than the "
                                 f"{n} steps to run")  # fmt: skip
        lags = info.lags
        prev = [take_own_array(cell) for cell in output_storage]  # last call's, if let go
        states = []  # per state: (buffer, row shape)
        for k, (x, lag) in enumerate(zip(inits, lags)):
            if x.shape[0] < lag:
                raise ValueError(f"{name}: initial state {k} has {x.shape[0]} rows; its taps "
                                 f"need {lag}")  # fmt: skip
            rows = lag if info.state_last[k] else lag + n
            buf = array_for(prev[k], (rows, *x.shape[1:]), x.dtype)
            buf[:lag] = x[:lag]
            states.append(buf)
        # per inner input read each step: (array, first row, rows advanced per step)
        readers = [(s, 0, 1) for s in seqs]
        for buf, lag, last, tk in zip(states, lags, info.state_last, info.state_taps):
            readers += [(buf, lag + t, 0 if last else 1) for t in tk]
        ns, n_nit = info.n_states, info.n_nit
        prev_nits = prev[ns : ns + n_nit]
        driver = self.python_steps if run_steps is None or not self.compiled_loop else run_steps
        keep_last = list(info.state_last)
        clock = self.clock  # an untimed call (profile_sample) reads no clock per step
        on_step = clock.on_step if clock is not None and clock.timing else None
        fast, got = self.fast, None
        if fast is not None and driver is run_steps and n > 0 and self.vm is fast.vm:
            got = fast.run(n, seqs, states, nonseqs, prev_nits)  # None: the arrays do not fit
        if got is None:
            got = driver(self.vm, n, readers, list(nonseqs), states, list(lags), keep_last,
                         n_nit, info.as_while, name, on_step, prev_nits)  # fmt: skip
        done, nits = got
        for k, buf in enumerate(states):
            if info.as_while and not info.state_last[k]:
                buf = buf[: lags[k] + done]
            output_storage[k][0] = buf
        empty_shapes = None
        for j in range(n_nit):
            out = nits[j]
            if out is None:
                if empty_shapes is None:
                    empty_shapes = self._shapes_without_steps(seqs, states, nonseqs)
                out_type: Any = op.inner.outputs[ns + j].type
                dtype = out_type.dtype
                out = np.empty((0, *empty_shapes[j]), dtype=dtype)
            elif done < n:
                out = out[:done]
            output_storage[ns + j][0] = out

    @staticmethod
    def python_steps(
        vm: Callable[[list[Any]], list[Any]],
        n: int,
        readers: list[tuple[Any, int, int]],
        nonseqs: list[Any],
        states: list[Any],
        lags: list[int],
        last_only: list[bool],
        n_nit: int,
        as_while: bool,
        name: str,
        on_step: Callable[[int], None] | None,
        prev_nits: list | None = None,
    ) -> tuple[int, list]:
        """The loop in Python: the reference for ``graphc.vm._loop.run_steps`` (same
        arguments and result), used when that extension is not built."""
        row_shapes = [buf.shape[1:] for buf in states]
        nits: list[Any] = [None] * n_nit
        ns = len(states)
        steps = _step_inputs(readers, n)
        for i in range(n):
            args = [*next(steps), *nonseqs]
            if on_step is None:
                outs = vm(args)
            else:
                t0 = time.perf_counter_ns()
                try:
                    outs = vm(args)
                finally:
                    on_step(time.perf_counter_ns() - t0)
            for k in range(ns):
                v = np.asarray(outs[k])
                if v.shape != row_shapes[k]:
                    raise ValueError(
                        f"{name}: step {i} returned state {k} of shape {v.shape}; the state "
                        f"has shape {row_shapes[k]} (a state must keep its shape)"
                    )
                if last_only[k]:
                    buf, lag = states[k], lags[k]
                    buf[: lag - 1] = buf[1:lag].copy()
                    buf[lag - 1] = v
                else:
                    states[k][lags[k] + i] = v
            for j in range(n_nit):
                v = np.asarray(outs[ns + j])
                out = nits[j]
                if out is None:
                    prev = prev_nits[j] if prev_nits else None
                    out = nits[j] = array_for(prev, (n, *v.shape), v.dtype)
                elif v.shape != out.shape[1:]:
                    raise ValueError(
                        f"{name}: step {i} returned output {ns + j} of shape {v.shape}; "
                        f"step 0 returned {out.shape[1:]} (stacked outputs keep one shape)"
                    )
                out[i] = v
            if as_while and outs[ns + n_nit]:
                return i + 1, nits
        return n, nits

    def _trial_vm(self) -> Any:
        """An unprofiled twin of the step's VM: the trial step of a loop of no step is
        not a step, so it must not count in the step's profile."""
        if self._twin is None:
            vm = self.vm
            self._twin = type(vm)(vm.program, allow_gc=vm.allow_gc)
        return self._twin

    def _shapes_without_steps(self, seqs, states, nonseqs) -> list[tuple]:
        """Row shapes of the stacked outputs of a loop that ran no step: one trial step on
        zeros of the right shapes; if that step fails, the shapes ``Scan.row_shapes`` infers
        from its inputs' shapes (evaluated, not compiled); where even those need a value
        the step cannot compute, the static shapes (unknown as 0)."""
        info = self.op.info
        args = [np.zeros(s.shape[1:], dtype=s.dtype) for s in seqs]
        for buf, tk in zip(states, info.state_taps):
            args.extend(np.array(buf[0]) for _ in tk)
        args.extend(nonseqs)
        outs = self.op.inner.outputs[info.n_states : info.n_states + info.n_nit]
        with np.errstate(all="ignore"):
            try:
                values = self._trial_vm()(args)
                return [np.shape(v) for v in values[info.n_states : info.n_states + info.n_nit]]
            except Exception:  # noqa: BLE001 - the trial step is only a guess at the shapes
                pass
            rows = self.op.row_shapes().evaluate(args)  # the walk's shapes: no compile
        types: list[Any] = [o.type for o in outs]
        static = [tuple(0 if d is None else d for d in t.shape) for t in types]
        return [r if r is not None else st for r, st in zip(rows, static)]
