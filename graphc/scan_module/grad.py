"""Backpropagation through time: the gradient of a Scan is another Scan, run backwards.

Step ``i`` of the forward loop writes row ``L + i`` of each state buffer ``B`` and reads rows
``L + i + tap``. Going backwards, when step ``i`` is reached every reader of row ``L + i``
has been processed, so that row's adjoint is complete: the direct gradient on it plus what
later steps sent back. Each backward step keeps, per state, a window ``A`` of the adjoints
still being accumulated for the ``L`` rows before the current one, recomputes the forward
step from the stored values, and takes its vector-Jacobian product with ``grad``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from graphc.graph.basic import Constant, Variable, ancestors, clone_replace
from graphc.reverse_mode import grad
from graphc.scan_module.build import build_scan
from graphc.scan_module.op import Scan, ScanInner
from graphc.tensor.basic import concatenate as t_concatenate
from graphc.tensor.basic import shape_padleft as t_shape_padleft
from graphc.tensor.basic import stack as t_stack
from graphc.tensor.basic import zeros_like as t_zeros_like
from graphc.tensor.blas import Dot, Gemm, Gemv, MatMul
from graphc.tensor.conv import Conv2d
from graphc.tensor.elemwise import GRAD_RULES
from graphc.tensor.math import le as t_le
from graphc.tensor.math import minimum as t_minimum
from graphc.tensor.math import switch as t_switch
from graphc.tensor.shape import Shape, Shape_i
from graphc.tensor.shape import shape as t_shape
from graphc.tensor.subtensor import Subtensor
from graphc.tensor.subtensor import set_subtensor as t_set_subtensor

__all__ = ["scan_grad"]

FLOATS = ("float16", "float32", "float64")
# Ops whose results in the forward step the backward step reads from the forward loop
# (kept as extra per-step outputs) instead of computing them again
KEPT_FOR_BACKWARD: tuple[type, ...] = (Dot, Gemm, Gemv, MatMul, Conv2d)


def _is_float(v: Variable) -> bool:
    return getattr(v.type, "dtype", None) in FLOATS


def _placeholder_like(v: Variable) -> Variable:
    p = v.type()
    p.name = v.name
    return p


def _all_rows(n_steps: Variable, seq: Variable) -> bool:
    """Whether a loop of ``n_steps`` steps surely reads every row of ``seq``: ``n_steps`` is
    ``shape(seq)[0]`` (as scan builds it for one sequence) or both are the same constant."""
    node = n_steps.owner
    if node is not None and isinstance(node.op, Subtensor) and node.op.idx_list == (0,):
        node = node.inputs[0].owner
        return node is not None and isinstance(node.op, Shape) and node.inputs[0] is seq
    if node is not None and isinstance(node.op, Shape_i):
        return node.op.i == 0 and node.inputs[0] is seq
    rows = _rows(seq)
    return rows is not None and isinstance(n_steps, Constant) and int(n_steps.data) == rows


def _rows(v: Variable) -> int | None:
    """``v``'s static number of rows, if known."""
    shape = getattr(v.type, "shape", None)
    return shape[0] if shape else None


def _zeros_for(g, like: Variable):
    return g if g is not None else t_zeros_like(like)


def scan_grad(op: Scan, inputs: list, outs: list, output_grads: list) -> list:
    """Gradients of a Scan node's inputs from its outputs and their gradients."""
    info = op.info
    if any(info.state_last):
        return _grad_with_every_state_stored(op, inputs, outs, output_grads)
    kept = _values_to_keep(op)
    if kept:
        op, outs = _keeping(op, inputs, outs, kept)
    backward = _Backward(op, inputs, outs, output_grads, len(kept))
    n_back = backward.n_steps
    if info.truncate_gradient >= 0:
        n_back = t_minimum(n_back, info.truncate_gradient)
    _, _, back = build_scan(
        backward.step,
        sequences=backward.sequences(),
        outputs_info=backward.windows + backward.accums + [None] * len(backward.seqs),
        non_sequences=list(backward.nonseqs),
        n_steps=n_back,
        name=f"grad_of_{info.name or 'scan'}",
        last_only=range(info.n_states + len(backward.accums)),
    )
    return backward.gradients(back, n_back, len(inputs))


def _values_to_keep(op: Scan) -> list[Variable]:
    """The step's products (``KEPT_FOR_BACKWARD``) that change from step to step and whose
    values the step's vector-Jacobian product reads (through sigmoid's or tanh's gradient,
    say): the backward loop reads them instead of computing them again, as JAX keeps a
    loop's residuals. None for a ``while`` loop."""
    info = op.info
    if info.as_while:
        return []
    inner = op.inner
    outputs = inner.outputs[: info.n_states + info.n_nit]
    seqs, taps, _ = op.inner_split()
    varying = set(seqs) | {v for t in taps for v in t}
    products = [
        v
        for v in ancestors(outputs)
        if v.owner is not None
        and isinstance(v.owner.op, KEPT_FOR_BACKWARD)
        and v not in outputs
        and varying & set(ancestors([v]))
    ]
    if not products:
        return []
    seeds = {o: o.type() for o in outputs if _is_float(o)}
    wrt = [v for v in inner.inputs if _is_float(v)]
    if not (seeds and wrt):
        return []
    used = set(ancestors(grad(None, wrt, known_grads=seeds, disconnected_inputs="ignore")))
    return [v for v in products if v in used]


def _keeping(op: Scan, inputs: list, outs: list, kept: list[Variable]) -> tuple[Scan, list]:
    """The same loop with ``kept`` as extra per-step outputs (after its own), and its
    outputs. Its step graph shares the original's Variables, so ``scan_keep_merge`` lets
    the original loop's readers read this one instead: one forward loop, not two."""
    info = op.info
    inner = op.inner
    keeping = Scan(
        dataclasses.replace(info, n_nit=info.n_nit + len(kept)),
        ScanInner(inner.inputs, list(inner.outputs) + list(kept)),
    )
    new_outs = keeping(*inputs)
    return keeping, new_outs if isinstance(new_outs, list) else [new_outs]


class _Backward:
    """The backward loop of one Scan node: its sequences (all reversed: the forward rows,
    each tap's stored value, the direct gradients of each step's outputs), its states (per
    forward state the window of pending adjoints, per float non-sequence an accumulator),
    its step, and the gradients read off its result."""

    def __init__(self, op: Scan, inputs: list, outs: list, output_grads: list, n_kept: int = 0):
        info = self.info = op.info
        self.n_steps, self.seqs, self.inits, self.nonseqs = op.outer_split(inputs)
        if info.as_while:  # the steps the loop ran: its outputs' rows tell
            self.n_steps = t_shape(outs[0])[0] - (info.lags[0] if info.n_states else 0)
        self.in_seqs, in_taps, self.in_nonseqs = op.inner_split()
        self.flat_taps = [v for taps in in_taps for v in taps]
        ns, n_own = info.n_states, info.n_states + info.n_nit - n_kept
        self.forward_outputs = op.inner.outputs[:n_own]
        self.kept = op.inner.outputs[n_own : n_own + n_kept]  # step values the loop kept
        self.kept_rows = outs[n_own : n_own + n_kept]
        self.outs = outs
        self.g_bufs = [_zeros_for(output_grads[k], outs[k]) for k in range(ns)]
        self.g_nits = [_zeros_for(g, o) for g, o in zip(output_grads[ns:], outs[ns:n_own])]
        self.float_nonseqs = [k for k, v in enumerate(self.nonseqs) if _is_float(v)]
        self.windows = [t_zeros_like(x[:lag]) for x, lag in zip(self.inits, info.lags)]
        self.accums = [t_zeros_like(self.nonseqs[k]) for k in self.float_nonseqs]

    def _last_n(self, x, start: int = 0):
        return x[start : start + self.n_steps][::-1]

    def sequences(self) -> list:
        info = self.info
        taps = [self._last_n(self.outs[k], info.lags[k] + t)
                for k in range(info.n_states) for t in info.state_taps[k]]  # fmt: skip
        g_rows = [self._last_n(g, lag) for g, lag in zip(self.g_bufs, info.lags)]
        return ([self._last_n(s) for s in self.seqs] + taps + g_rows
                + [self._last_n(g) for g in self.g_nits]
                + [self._last_n(k) for k in self.kept_rows])  # fmt: skip

    def step(self, *args: Any):
        """One backward step: recompute the forward step, take its vector-Jacobian product,
        pass the adjoints of the state taps down the windows."""
        sizes = [len(self.seqs), len(self.flat_taps), len(self.g_bufs), len(self.g_nits),
                 len(self.kept), len(self.windows), len(self.accums)]  # fmt: skip
        parts, p = [], 0
        for n in sizes:
            parts.append(list(args[p : p + n]))
            p += n
        xs, taps, gs, gys, kept, ws, acc = parts
        nonseqs = list(args[p:])
        grads, g_nonseqs = self._vjp(xs, taps, gs, gys, kept, ws, nonseqs)
        new_acc = [a + g for a, g in zip(acc, g_nonseqs)]
        g_xs = [grads[x] if x in grads else t_zeros_like(x) for x in xs]
        return self._new_windows(taps, ws, grads) + new_acc + g_xs

    def _vjp(self, xs, taps, gs, gys, kept, ws, nonseqs) -> tuple[dict, list]:
        """The gradients of the step's float sequence rows and taps (by Variable), and of
        its float non-sequences (in ``float_nonseqs`` order). The non-sequences reach the
        step as the outer Variables, which may be expressions of one another (``w`` and the
        hoisted ``w * w``): each is differentiated as an independent leaf (a placeholder,
        put back afterwards), as the outer graph chains them itself. The gradient is taken
        through the recomputed step; the values the forward loop kept (``kept``) then
        stand in for their recomputation, which only the gradient's arithmetic read."""
        leaves = [_placeholder_like(v) for v in nonseqs]
        replace: dict[Any, Any] = dict(zip(self.in_seqs, xs))
        replace.update(zip(self.flat_taps, taps))
        replace.update(zip(self.in_nonseqs, leaves))
        n_own = len(self.forward_outputs)
        recomputed = clone_replace(self.forward_outputs + self.kept, replace)
        stand_ins = dict(zip(recomputed[n_own:], kept))
        recomputed = recomputed[:n_own]
        ns = self.info.n_states
        known: dict[Any, Any] = {}
        seeds = [(o, g + w[0]) for o, g, w in zip(recomputed[:ns], gs, ws)]
        for o, g in seeds + list(zip(recomputed[ns:], gys)):
            if _is_float(o):  # the step may return one Variable as several outputs
                known[o] = known[o] + g if o in known else g
        rows = [v for v in xs + taps if _is_float(v)]
        wrt = rows + [leaves[k] for k in self.float_nonseqs]
        if not (known and wrt):
            found = [t_zeros_like(v) for v in rows + [nonseqs[k] for k in self.float_nonseqs]]
        else:
            found = grad(None, wrt, known_grads=known, disconnected_inputs="ignore")
            found = clone_replace(found, stand_ins | dict(zip(leaves, nonseqs)))
        return dict(zip(rows, found[: len(rows)])), found[len(rows) :]

    def _new_windows(self, taps, ws, grads) -> list:
        """Shift each window by one row and add what this step sent to each tap."""
        info = self.info
        out, pos = [], 0
        for k, (tk, lag) in enumerate(zip(info.state_taps, info.lags)):
            row_zero = t_zeros_like(ws[k][0])
            sent = [row_zero] * lag
            for t, v in zip(tk, taps[pos : pos + len(tk)]):
                if v in grads:
                    sent[-t - 1] = sent[-t - 1] + grads[v]
            pos += len(tk)
            if lag == 1:
                out.append(t_shape_padleft(sent[0]))
            else:
                shifted = t_concatenate([ws[k][1:], t_shape_padleft(row_zero)], axis=0)
                out.append(shifted + t_stack(sent))
        return out

    def gradients(self, back: list, n_back, n_inputs: int) -> list:
        """The forward node's input gradients from the backward node's outputs."""
        info, n_steps = self.info, self.n_steps
        truncated = info.truncate_gradient >= 0
        ns, n_acc = info.n_states, len(self.accums)
        result: list = [None] * n_inputs
        # sequences: the reversed row gradients, zeros for steps the truncation cut off
        for k, (s, g_rev) in enumerate(zip(self.seqs, back[ns + n_acc :])):
            if not _is_float(s):
                continue
            g = g_rev[::-1]
            if truncated:
                g = t_concatenate([t_zeros_like(s[: n_steps - n_back]), g], axis=0)
            if not _all_rows(n_steps, s):
                g = t_concatenate([g, t_zeros_like(s[n_steps:])], axis=0)
            result[1 + k] = g
        # initial states: the last window (reversed into row order) plus the direct gradient
        for k, (x, lag) in enumerate(zip(self.inits, info.lags)):
            if not _is_float(x):
                continue
            window = back[k][0][::-1]
            if truncated:
                window = t_switch(t_le(n_steps, info.truncate_gradient), window, 0 * window)
            g = window + self.g_bufs[k][:lag]
            if _rows(x) != lag:  # rows past the taps' (read by no step)
                g = t_concatenate([g, t_zeros_like(x[lag:])], axis=0)
            result[1 + info.n_seqs + k] = g
        base = 1 + info.n_seqs + ns
        for j, k in enumerate(self.float_nonseqs):
            result[base + k] = back[ns + j][0]
        return result


def _grad_with_every_state_stored(op: Scan, inputs: list, outs: list, output_grads: list) -> list:
    """The gradient of a loop that keeps only the last values of some states (a shared
    variable or random state updated inside it, or itself a gradient loop): the backward
    pass needs every step's value, so it differentiates the same loop with every state
    stored; the kept windows are the last rows of those buffers."""
    info = op.info
    full = Scan(dataclasses.replace(info, state_last=(False,) * info.n_states), op.inner)
    full_outs = full(*inputs)
    full_outs = full_outs if isinstance(full_outs, list) else [full_outs]
    grads = list(output_grads)
    for k in range(info.n_states):
        g = output_grads[k]
        if info.state_last[k] and g is not None:
            lag = info.lags[k]
            grads[k] = t_set_subtensor(t_zeros_like(full_outs[k])[-lag:], g)
    return scan_grad(full, inputs, full_outs, grads)


GRAD_RULES.add(Scan, scan_grad)
