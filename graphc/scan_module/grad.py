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

import graphc.tensor as T
from graphc.gradient import grad
from graphc.graph.basic import Variable, clone_replace
from graphc.scan_module.build import build_scan
from graphc.scan_module.op import GRADIENT_RULE

__all__ = ["scan_grad"]

FLOATS = ("float16", "float32", "float64")


def _is_float(v: Variable) -> bool:
    return getattr(v.type, "dtype", None) in FLOATS


def _zeros_for(g, like: Variable):
    return g if g is not None else T.zeros_like(like)


def scan_grad(op, inputs: list, outs: list, output_grads: list) -> list:
    """Gradients of a Scan node's inputs from its outputs and their gradients."""
    info = op.info
    name = info.name or "scan"
    if info.as_while:
        raise NotImplementedError(f"gradient of {name}: a scan that stops early (until)")
    n_steps, seqs, inits, nonseqs = op.outer_split(inputs)
    in_seqs, in_taps, in_nonseqs = op.inner_split()
    if any(info.state_last):
        return _grad_with_every_state_stored(op, inputs, outs, output_grads)
    reg = list(range(info.n_states))
    lags = info.lags
    inner_states = [op.inner.outputs[k] for k in reg]
    inner_nits = op.inner.outputs[info.n_states : info.n_states + info.n_nit]
    g_bufs = [_zeros_for(output_grads[k], outs[k]) for k in reg]
    g_nits = [
        _zeros_for(g, o) for g, o in zip(output_grads[info.n_states :], outs[info.n_states :])
    ]

    # backward sequences, all reversed: the forward rows, each tap's stored value, and
    # the direct gradients of the step's outputs
    def last_n(x, start=0):
        return x[start : start + n_steps][::-1]

    seq_vals = [last_n(s) for s in seqs]
    tap_vals = [last_n(outs[k], lags[k] + t) for k in reg for t in info.state_taps[k]]
    g_rows = [last_n(g, lags[k]) for k, g in zip(reg, g_bufs)]
    gy_rows = [last_n(g) for g in g_nits]
    float_nonseqs = [k for k, v in enumerate(nonseqs) if _is_float(v)]
    windows = [T.zeros_like(inits[k][: lags[k]]) for k in reg]
    accums = [T.zeros_like(nonseqs[k]) for k in float_nonseqs]
    n_seq, n_tap, n_g, n_gy, n_reg = (len(seq_vals), len(tap_vals), len(g_rows), len(gy_rows),
                                      len(reg))  # fmt: skip
    flat_taps = [v for k in reg for v in in_taps[k]]

    def step(*args):
        p = 0
        xs = list(args[p : p + n_seq])
        p += n_seq  # noqa: E702
        taps = list(args[p : p + n_tap])
        p += n_tap  # noqa: E702
        gs = list(args[p : p + n_g])
        p += n_g  # noqa: E702
        gys = list(args[p : p + n_gy])
        p += n_gy  # noqa: E702
        ws = list(args[p : p + n_reg])
        p += n_reg  # noqa: E702
        acc = list(args[p : p + len(accums)])
        p += len(accums)  # noqa: E702
        outer_nonseqs = list(args[p:])
        replace: dict[Any, Any] = dict(zip(in_seqs, xs))
        replace.update(zip(flat_taps, taps))
        replace.update(zip(in_nonseqs, outer_nonseqs))
        recomputed = clone_replace(inner_states + inner_nits, replace)
        known = {}
        for o, g, w in zip(recomputed[:n_reg], gs, ws):
            if _is_float(o):
                known[o] = g + w[0]
        for o, g in zip(recomputed[n_reg:], gys):
            if _is_float(o):
                known[o] = g
        wrt_all = xs + taps + [outer_nonseqs[k] for k in float_nonseqs]
        wrt = [v for v in wrt_all if _is_float(v)]
        grads = dict(zip(wrt, grad(None, wrt, known_grads=known, disconnected_inputs="ignore")
                         if known and wrt else [T.zeros_like(v) for v in wrt]))  # fmt: skip
        new_windows = []
        pos = 0
        for j, k in enumerate(reg):
            tk = info.state_taps[k]
            row_zero = T.zeros_like(ws[j][0])
            sent = [row_zero] * lags[k]
            for t, v in zip(tk, taps[pos : pos + len(tk)]):
                if v in grads:
                    sent[-t - 1] = sent[-t - 1] + grads[v]
            pos += len(tk)
            if lags[k] == 1:
                new_windows.append(T.shape_padleft(sent[0]))
            else:
                shifted = T.concatenate([ws[j][1:], T.shape_padleft(row_zero)], axis=0)
                new_windows.append(shifted + T.stack(sent))
        new_acc = [a + grads[outer_nonseqs[k]] for a, k in zip(acc, float_nonseqs)]
        g_xs = [grads[x] if x in grads else T.zeros_like(x) for x in xs]
        return new_windows + new_acc + g_xs

    n_back = n_steps if info.truncate_gradient < 0 else T.minimum(n_steps, info.truncate_gradient)
    n_acc = len(accums)
    _, _, back = build_scan(
        step,
        sequences=seq_vals + tap_vals + g_rows + gy_rows,
        outputs_info=windows + accums + [None] * n_seq,
        non_sequences=list(nonseqs),
        n_steps=n_back,
        name=f"grad_of_{name}",
        last_only=range(n_reg + n_acc),
    )
    result: list = [None] * len(inputs)
    # sequences: the reversed row gradients, zeros for steps the truncation cut off
    for s_idx, g_rev in enumerate(back[n_reg + n_acc :]):
        s = seqs[s_idx]
        if not _is_float(s):
            continue
        g = g_rev[::-1]
        if info.truncate_gradient >= 0:
            pad = T.zeros_like(s[: n_steps - n_back])
            g = T.concatenate([pad, g], axis=0)
        rest = T.zeros_like(s[n_steps:])
        result[1 + s_idx] = T.concatenate([g, rest], axis=0)
    # initial states: the last window (reversed into row order) plus the direct gradient
    for j, k in enumerate(reg):
        x = inits[k]
        if not _is_float(x):
            continue
        window = back[j][0][::-1]
        if info.truncate_gradient >= 0:
            window = T.switch(T.le(n_steps, info.truncate_gradient), window, 0 * window)
        g = window + g_bufs[j][: lags[k]]
        extra = T.zeros_like(x[lags[k] :])
        result[1 + info.n_seqs + k] = T.concatenate([g, extra], axis=0)
    base = 1 + info.n_seqs + info.n_states
    for j, k in enumerate(float_nonseqs):
        result[base + k] = back[n_reg + j][0]
    return result


def _grad_with_every_state_stored(op, inputs: list, outs: list, output_grads: list) -> list:
    """The gradient of a loop that keeps only the last values of some states (a shared
    variable or random state updated inside it, or itself a gradient loop): the backward
    pass needs every step's value, so it differentiates the same loop with every state
    stored; the kept windows are the last rows of those buffers."""
    from graphc.scan_module.op import Scan

    info = op.info
    full = Scan(dataclasses.replace(info, state_last=(False,) * info.n_states), op.inner)
    full_outs = full(*inputs)
    full_outs = full_outs if isinstance(full_outs, list) else [full_outs]
    grads = list(output_grads)
    for k in range(info.n_states):
        g = output_grads[k]
        if info.state_last[k] and g is not None:
            lag = info.lags[k]
            grads[k] = T.set_subtensor(T.zeros_like(full_outs[k])[-lag:], g)
    return scan_grad(full, inputs, full_outs, grads)


GRADIENT_RULE["scan"] = scan_grad
