"""The fast loop of a step that is one element-wise node: the whole loop in one C loop.

When the compiled step (after rewrites) is a single ``Elemwise`` node with C code whose
inputs are the step's own inputs or constants and whose outputs are the step's outputs,
each step is only that node's contiguous kernel over one row per operand. Then, instead
of calling the step's VM per step (views of the rows, the VM's call, the thunk's checks,
a copy of each output into its row), ``graphc.vm._loop.run_kernel`` computes the row
addresses (a sequence's row ``t``, a state's previous rows in its own buffer, fixed
non-sequences) and calls the kernel with the output pointers on the state's next row and
the stacked output's row ``t``.

What can take it is decided once, when the loop's thunk is made (``plan_fast_loop``);
each call then checks its arrays (``FastLoop.operands``): every row C-contiguous, aligned,
native-order, of the node's dtype and of one shape (a non-sequence or constant of one
element, as a hoisted scalar, is expanded to a row once per call, as the thunk's driver
does per step), rows of at most ``PAR_MIN`` elements under ``openmp`` (longer ones are
the thunk's to split). Anything else runs the general loop, whose results these are bit
for bit: the same kernel over the same elements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphc.flags import config
from graphc.tensor.buffers import array_for
from graphc.tensor.elemwise import Elemwise

try:
    from graphc.vm._cvm import CVM
    from graphc.vm._loop import run_kernel
except ImportError:  # pragma: no cover - a source tree without the extensions built
    CVM = run_kernel = None  # type: ignore[assignment,misc]

__all__ = ["FastLoop", "plan_fast_loop"]

#: rows a one-element operand is expanded to at most: the thunk's driver expands it into a
#: block of GC_BLK elements and runs the kernel over runs of at most that (elemwise_driver.c)
FILL_MAX_ELEMS = 512
#: one-element operands expanded at most (GC_MAXBC: beyond, the driver runs the strided kernel)
FILL_MAX_OPERANDS = 8
#: steps below which the general loop runs: the fast loop's checks in Python cost ~43,000
#: instructions per call more than the general loop's setup, which saves ~750 per step
#: (callgrind, an 8-element add)
MIN_STEPS = 64


@dataclass(frozen=True)
class _In:
    """Where a kernel input's rows come from: ``seq`` k (row t), ``tap`` (state k at tap
    ``tap``), ``nonseq`` k, or ``const`` (``value``)."""

    kind: str
    k: int = 0
    tap: int = 0
    value: Any = None


@dataclass(frozen=True)
class _Out:
    """Where a kernel output's rows go: ``state`` k, ``nit`` j (stacked) or ``cond``."""

    kind: str
    k: int = 0


class FastLoop:
    """One loop node's fast loop: its kernel and where each operand's rows are."""

    def __init__(self, op: Any, vm: Any, kernel: Any, ins: list[_In], outs: list[_Out],
                 dtypes: tuple[list[np.dtype], list[np.dtype]],
                 deps: list[tuple[int, ...]] | None):  # fmt: skip
        self.op = op
        self.vm = vm
        self.kernel = kernel
        self.ins, self.outs = ins, outs
        self.in_dtypes, self.out_dtypes = dtypes
        #: per output, the inputs it reads (None: all); an output that reads only expanded
        #: one-element inputs is that small in the thunk (its own loop): not done here
        self.deps = deps
        self.cond = next((len(ins) + j for j, o in enumerate(outs) if o.kind == "cond"), -1)
        self.par_min = int(config.openmp_elemwise_minsize) if config.openmp else None
        self.runs = 0  # calls that ran here (not the general loop)
        self.min_steps = MIN_STEPS
        info = op.info  # read once: lags is computed from the taps
        self.lags, self.state_last, self.n_nit = info.lags, info.state_last, info.n_nit

    def run(
        self, n: int, seqs: list, states: list, nonseqs: list, prev_nits: list | None = None
    ) -> tuple[int, list] | None:
        """Run the loop into ``states``: ``(steps done, stacked outputs)`` as the loop
        driver returns them, or None (nothing done) when this call's arrays do not fit or
        it runs fewer than ``min_steps`` steps. ``prev_nits``: per stacked output an array
        to write it into if it has the right shape (or None)."""
        if n < self.min_steps:
            return None
        got = self.operands(n, seqs, states, nonseqs, prev_nits)
        if got is None:
            return None
        n_elem, operands, nits = got
        done = run_kernel(self.vm, self.kernel, n, n_elem, operands, self.cond)
        if done < 0:  # the VM records what only its own steps give
            return None
        self.runs += 1
        return done, nits

    def operands(
        self, n: int, seqs: list, states: list, nonseqs: list, prev_nits: list | None = None
    ) -> tuple | None:
        """``(elements per row, operands for run_kernel, stacked outputs)`` or None."""
        lags, state_last = self.lags, self.state_last
        shapes: list[tuple[int, ...]] = []
        for src in self.ins:
            shape = self._in_shape(src, seqs, states, nonseqs)
            if shape is None:
                return None
            shapes.append(shape)
        if not shapes:
            return None
        row = next((s for s in shapes if math.prod(s) != 1), shapes[0])
        n_elem = math.prod(row)
        if self.par_min is not None and n_elem >= self.par_min:
            return None
        ops: list[tuple[Any, int, int]] = []
        filled: set[int] = set()
        for k, (src, shape, dt) in enumerate(zip(self.ins, shapes, self.in_dtypes)):
            if src.kind == "seq":
                a = seqs[src.k]
                if shape != row or not _rows_fit(a, dt):
                    return None
                ops.append((a, 0, a.strides[0]))
            elif src.kind == "tap":
                buf, lag = states[src.k], lags[src.k]
                if shape != row or buf.dtype != dt:
                    return None
                step = 0 if state_last[src.k] else buf.strides[0]
                ops.append((buf, (lag + src.tap) * buf.strides[0], step))
            else:
                v = nonseqs[src.k] if src.kind == "nonseq" else src.value
                if shape != row:
                    filled.add(k)
                    if len(filled) > FILL_MAX_OPERANDS or n_elem > FILL_MAX_ELEMS:
                        return None
                    v = np.ascontiguousarray(np.broadcast_to(v, row))
                if not _fits(v, dt):
                    return None
                ops.append((v, 0, 0))
        if filled and self.deps is not None and any(filled.issuperset(d) for d in self.deps):
            return None
        nits: list = [None] * self.n_nit
        for dst, dt in zip(self.outs, self.out_dtypes):
            if dst.kind == "state":
                buf, lag = states[dst.k], lags[dst.k]
                if buf.shape[1:] != row or buf.dtype != dt:  # the general loop says why
                    return None
                last = state_last[dst.k]
                ops.append((buf, (lag - 1 if last else lag) * buf.strides[0],
                            0 if last else buf.strides[0]))  # fmt: skip
            elif dst.kind == "nit":
                prev = prev_nits[dst.k] if prev_nits else None
                out = nits[dst.k] = array_for(prev, (n, *row), dt)
                ops.append((out, 0, out.strides[0]))
            else:
                ops.append((np.zeros((), dtype=bool), 0, 0))
        return n_elem, ops, nits

    @staticmethod
    def _in_shape(src: _In, seqs: list, states: list, nonseqs: list) -> tuple | None:
        if src.kind == "seq":
            a = seqs[src.k]
            return a.shape[1:] if isinstance(a, np.ndarray) else None
        if src.kind == "tap":
            return states[src.k].shape[1:]
        v = nonseqs[src.k] if src.kind == "nonseq" else src.value
        return v.shape if isinstance(v, np.ndarray) else None


def _fits(a: np.ndarray, dt: np.dtype) -> bool:
    """``a`` is a C-contiguous, aligned array of exactly ``dt`` (native order)."""
    return a.dtype == dt and a.flags.c_contiguous and a.flags.aligned


def _rows_fit(a: np.ndarray, dt: np.dtype) -> bool:
    """Every row of ``a`` is a C-contiguous, aligned run of ``dt`` elements."""
    if a.dtype != dt or not a.flags.aligned:
        return False
    want = a.itemsize
    for size, stride in zip(reversed(a.shape[1:]), reversed(a.strides[1:])):
        if size != 1 and stride != want:
            return False
        want *= size
    return True


def plan_fast_loop(op: Any, fn: Any) -> FastLoop | None:
    """The fast loop of loop node ``op`` whose compiled step is ``fn``, or None when the
    step is not one element-wise node with a C kernel over the step's own values."""
    vm = getattr(fn, "vm", None)
    linked = getattr(fn, "linked", None)
    if run_kernel is None or type(vm) is not CVM or linked is None:
        return None
    prog = linked.program
    if len(prog.nodes) != 1 or linked.impls[0].c_kernel is None:
        return None
    node = linked.schedule[0]
    if not isinstance(node.op, Elemwise) or node.op.inplace_pattern:
        return None
    ins = _inputs(op, prog, node)
    outs = _outputs(op, prog, node)
    if ins is None or outs is None:
        return None
    dtypes = ([np.dtype(v.type.dtype) for v in node.inputs],
              [np.dtype(v.type.dtype) for v in node.outputs])  # fmt: skip
    if not _destinations_fit(op, node, outs, dtypes[1]):
        return None
    all_deps = getattr(node.op.scalar_op, "output_deps", None)
    deps = None
    if all_deps is not None:  # as the thunk reads them (gen_elemwise: empty is all inputs)
        deps = [tuple(d) or tuple(range(len(node.inputs))) for d in all_deps]
    return FastLoop(op, vm, linked.impls[0].c_kernel, ins, outs, dtypes, deps)


def _inputs(op: Any, prog: Any, node: Any) -> list[_In] | None:
    """Per node input, where its rows come from (None: a value the step computes)."""
    info = op.info
    kinds: list[_In] = [_In("seq", k) for k in range(info.n_seqs)]
    for k, taps in enumerate(info.state_taps):
        kinds += [_In("tap", k, t) for t in taps]
    kinds += [_In("nonseq", k) for k in range(info.n_nonseqs)]
    by_slot = dict(zip(prog.inputs, kinds))
    consts = dict(prog.constants)
    ins = []
    for slot in prog.nodes[0].inputs:
        if slot in by_slot:
            ins.append(by_slot[slot])
        elif slot in consts and isinstance(consts[slot], np.ndarray):
            ins.append(_In("const", value=consts[slot]))
        else:
            return None
    return ins


def _outputs(op: Any, prog: Any, node: Any) -> list[_Out] | None:
    """Per node output, the loop output it is (None unless each is exactly one)."""
    info = op.info
    spec = prog.nodes[0]
    if len(set(prog.outputs)) != len(prog.outputs) or set(prog.outputs) != set(spec.outputs):
        return None
    outs: list[_Out] = []
    for slot in spec.outputs:
        j = prog.outputs.index(slot)
        if j < info.n_states:
            outs.append(_Out("state", j))
        elif j < info.n_states + info.n_nit:
            outs.append(_Out("nit", j - info.n_states))
        else:
            outs.append(_Out("cond"))
    return outs


def _destinations_fit(op: Any, node: Any, outs: list[_Out], dtypes: list[np.dtype]) -> bool:
    """Each output's dtype is its destination's; a state kept last only has one row (its
    window is shifted per step otherwise); a stop condition is a bool of a 0-d node."""
    info = op.info
    _, taps, _ = op.inner_split()
    for dst, dt in zip(outs, dtypes):
        if dst.kind == "state":
            if dt != np.dtype(taps[dst.k][0].type.dtype):
                return False
            if info.state_last[dst.k] and info.lags[dst.k] != 1:
                return False
        elif dst.kind == "cond" and (dt != np.dtype(bool) or node.outputs[0].type.ndim != 0):
            return False
    return True
