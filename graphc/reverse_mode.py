"""Differentiation: ``grad``, ``Lop`` and ``Rop`` (reverse and forward mode); ``jacobian``
and ``hessian``, which may loop with ``scan``, are in ``graphc/jacobian.py`` above scan.

``graphc.gradient`` is the public module (it adds ``verify_grad`` from ``graphc.testing``,
which checks ``grad`` against finite differences and so imports this module).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from graphc.grad_ops import check_not_null
from graphc.graph.basic import (
    Apply,
    Constant,
    Op,
    Variable,
    ancestors,
    clone_replace,
    graph_inputs,
    io_toposort,
)
from graphc.graph.rop import register_rop, rop_rule
from graphc.scalar.basic import FLOAT_DTYPES
from graphc.tensor.math import add, cast, mul, second
from graphc.tensor.math import sum as tsum
from graphc.tensor.type import TensorType
from graphc.tensor.variable import TensorConstant, as_tensor_variable

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DisconnectedInputError", "Lop", "Retype", "Rop", "constant", "grad", "zeros_like",
]  # fmt: skip


class DisconnectedInputError(ValueError):
    """The cost does not depend on a variable the gradient was asked for."""


class Retype(Op):
    """View a tensor as another TensorType of the same dtype and ndim (checked at run time).

    ``grad`` uses it to give a gradient exactly the static shape of its variable.
    """

    __props__ = ("type",)
    view_map = {0: [0]}

    def __init__(self, type: TensorType):
        self.type = type

    def __str__(self) -> str:
        return f"Retype{{{self.type}}}"

    def make_node(self, x: Variable) -> Apply:
        x = as_tensor_variable(x)
        t = self.type
        if x.dtype != t.dtype or x.ndim != t.ndim:
            raise TypeError(f"{self}: cannot view {x} of type {x.type} as {t}")
        for a, b in zip(x.type.shape, t.shape):
            if a is not None and b is not None and a != b:
                raise ValueError(f"{self}: static shapes of {x.type} and {t} conflict")
        return Apply(self, [x], [t()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        (x,) = inputs
        for axis, (want, got) in enumerate(zip(self.type.shape, x.shape)):
            if want is not None and want != got:
                raise ValueError(f"{self}: axis {axis} has size {got}, expected {want}")
        output_storage[0][0] = x.view()

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(shapes[0])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [gouts[0]]


@register_rop(Retype)
def _retype_rop(node: Apply, eval_points: list[Variable | None]):
    (v,) = eval_points
    return [None if v is None else node.op(v)]


def constant(value, dtype: str | None = None) -> TensorConstant:
    """A tensor constant with exactly ``value``'s shape (static 1 on its size-1 axes)."""
    arr = np.array(value, dtype=dtype, copy=True)
    arr.setflags(write=False)
    shape = tuple(1 if s == 1 else None for s in arr.shape)
    return TensorConstant(TensorType(str(arr.dtype), shape), arr)


def zeros_like(x, dtype: str | None = None):
    """Zeros with the shape (and static shape) of ``x``."""
    x = as_tensor_variable(x)
    return second(x, constant(np.zeros((), dtype=dtype or x.dtype)))


def _fit(g, var: Variable, exact: bool, where: str):
    """``g`` cast to ``var``'s dtype; with ``exact`` (or where ``var`` is broadcastable and
    ``g`` is not) retyped to ``var``'s static shape."""
    g = as_tensor_variable(g) if isinstance(g, Variable) else constant(g)
    if g.ndim != var.type.ndim:
        raise ValueError(
            f"{where} returned a {g.ndim}-d gradient ({g.type}) for {var} of type {var.type}"
        )
    if g.dtype != var.type.dtype:
        g = cast(g, var.type.dtype)
    want = var.type.shape
    have = g.type.shape
    for a, b in zip(have, want):
        if a is not None and b is not None and a != b:
            raise ValueError(
                f"{where} returned a gradient of type {g.type} for {var} of type {var.type}"
            )
    if exact and have != want or any(b == 1 and a != 1 for a, b in zip(have, want)):
        g = Retype(TensorType(var.type.dtype, want))(g)
    return g


def _is_float(v: Variable) -> bool:
    return getattr(v.type, "dtype", None) in FLOAT_DTYPES


def grad(
    cost: Variable | None,
    wrt: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
    known_grads: dict | None = None,
    return_disconnected: str = "zero",
):
    """Symbolic gradient of the scalar ``cost`` with respect to ``wrt`` (a Variable or a list).

    ``known_grads`` maps Variables to gradients to seed with (``cost`` may then be None);
    ``consider_constant`` Variables are not differentiated through. A ``wrt`` the cost does not
    depend on raises ``DisconnectedInputError`` (``disconnected_inputs="raise"``), or warns
    ("warn") or not ("ignore") and gives zeros (``return_disconnected="zero"``) or None.
    """
    if disconnected_inputs not in ("raise", "warn", "ignore"):
        raise ValueError(f"grad: disconnected_inputs must be raise, warn or ignore, "
                         f"got {disconnected_inputs!r}")  # fmt: skip
    if return_disconnected not in ("zero", "None", "Disconnected"):
        raise ValueError(f"grad: return_disconnected must be zero, None or Disconnected, "
                         f"got {return_disconnected!r}")  # fmt: skip
    single = isinstance(wrt, Variable)
    wrt_list = [wrt] if single else list(wrt)
    for w in wrt_list:
        if not isinstance(w, Variable):
            raise TypeError(f"grad: wrt must be Variables, got {type(w).__name__} {w!r:.60}")
    seeds = _seeds(cost, known_grads)
    blockers = set(consider_constant or ())
    reachable = set(ancestors(list(seeds), blockers))
    total = _backpropagate(seeds, wrt_list, reachable, blockers)
    results = []
    for w in wrt_list:
        if w not in reachable:
            if disconnected_inputs == "raise":
                raise DisconnectedInputError(
                    f"grad: the cost does not depend on {w} (of type {w.type}); pass "
                    "disconnected_inputs='ignore' or 'warn' to get zeros"
                )
            if disconnected_inputs == "warn":
                warnings.warn(
                    f"grad: the cost does not depend on {w} (of type {w.type})", stacklevel=2
                )
            results.append(zeros_like(w) if return_disconnected == "zero" else None)
            continue
        g = total(w)
        results.append(zeros_like(w) if g is None else _fit(g, w, exact=True, where="grad"))
    return results[0] if single else results


def _seeds(cost: Variable | None, known_grads: dict | None) -> dict[Variable, Variable]:
    """The gradients the backward walk starts from: one for ``cost``, plus ``known_grads``."""
    seeds: dict[Variable, Variable] = {}
    if cost is not None:
        if not isinstance(cost, Variable):
            raise TypeError(f"grad: cost must be a symbolic scalar, got {type(cost).__name__}")
        if not isinstance(cost.type, TensorType) or cost.type.ndim != 0:
            raise TypeError(
                f"grad: cost must be a scalar (0-d tensor), got {cost} of type {cost.type}"
            )
        seeds[cost] = constant(np.ones((), dtype=cost.type.dtype))
    for v, g in (known_grads or {}).items():
        if not isinstance(v, Variable):
            raise TypeError(f"grad: known_grads keys must be Variables, got {v!r:.60}")
        g = _fit(g, v, exact=False, where="known_grads")
        seeds[v] = add(seeds[v], g) if v in seeds else g
    if not seeds:
        raise ValueError("grad: cost is None and no known_grads were given")
    return seeds


def _backpropagate(seeds: dict, wrt_list: list, reachable: set, blockers: set):
    """Walk the nodes between ``wrt_list`` and the seeds backwards, calling each Op's
    ``grad``; returns ``total(v)``, the summed gradient of ``v`` (None when it has none)."""
    roots = list(seeds)
    nodes = io_toposort([b for b in blockers if b in reachable], roots)
    # Variables between some wrt and the roots: only their gradients are built.
    needed: set[Variable] = {w for w in wrt_list if w in reachable}
    for node in nodes:
        if any(i in needed for i in node.inputs):
            needed.update(node.outputs)
    terms: dict[Variable, list] = {v: [g] for v, g in seeds.items() if v in needed}
    cache: dict[Variable, Variable | None] = {}

    def total(v: Variable):
        if v in cache:
            return cache[v]
        parts = terms.get(v)
        if not parts or not _is_float(v):
            cache[v] = None
            return None
        g = parts[0] if len(parts) == 1 else add(*parts)
        g = _fit(g, v, exact=False, where=f"the gradient of {v}")
        cache[v] = g
        return g

    for node in reversed(nodes):
        if not any(i in needed for i in node.inputs):
            continue
        gouts = [total(o) for o in node.outputs]
        if all(g is None for g in gouts):
            continue
        for inp, gi in zip(node.inputs, _node_grads(node, gouts)):
            if gi is None or inp not in needed or not _is_float(inp):
                continue
            check_not_null(gi)
            terms.setdefault(inp, []).append(_fit(gi, inp, exact=False, where=f"{node.op}.grad"))
            cache.pop(inp, None)
    return total


def _node_grads(node: Apply, gouts: list) -> list:
    """The gradients of ``node``'s inputs given its outputs' (None ones become zeros)."""
    gouts = [zeros_like(o) if g is None else g for o, g in zip(node.outputs, gouts)]
    l_op = getattr(node.op, "L_op", None)  # Theano's: the gradient also sees the outputs
    grad_fn = getattr(node.op, "grad", None)
    if l_op is not None:
        gins = l_op(list(node.inputs), list(node.outputs), gouts)
    elif grad_fn is None:
        raise NotImplementedError(f"{node.op} ({type(node.op).__name__}) has no grad method")
    else:
        gins = grad_fn(list(node.inputs), gouts)
    if len(gins) != len(node.inputs):
        raise ValueError(
            f"{node.op}.grad returned {len(gins)} gradients for {len(node.inputs)} inputs"
        )
    return gins


# ------------------------------------------------------------------ Lop / Rop


def _format_as(as_list: bool, as_tuple: bool, outputs: list):
    if as_list:
        return list(outputs)
    if as_tuple:
        return tuple(outputs)
    return outputs[0]


def _as_list(v) -> list:
    return list(v) if isinstance(v, list | tuple) else [v]


def Lop(
    f: Variable | Sequence[Variable],
    wrt: Variable | Sequence[Variable],
    eval_points: list[Variable | None],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
):  # noqa: N802
    """``eval_points`` times the Jacobian of ``f`` with respect to ``wrt`` (Theano's ``Lop``):
    ``grad`` seeded with ``eval_points`` as the gradients of ``f``. Returns a list or tuple
    when ``wrt`` is one."""
    fs, eps = _as_list(f), _as_list(eval_points)
    if len(fs) != len(eps):
        raise ValueError(f"Lop: {len(fs)} outputs but {len(eps)} eval points")
    known: dict = {}
    for out, ep in zip(fs, eps):
        out = as_tensor_variable(out)
        ep = ep if isinstance(ep, Variable) else constant(ep)
        if ep.type.ndim != out.type.ndim:
            raise ValueError(f"Lop: eval point {ep} ({ep.type}) and output {out} ({out.type}) "
                             "have different numbers of dimensions")  # fmt: skip
        known[out] = ep
    res = grad(None, _as_list(wrt), consider_constant, disconnected_inputs, known_grads=known)
    return _format_as(isinstance(wrt, list), isinstance(wrt, tuple), res)


def _rop_by_transposing_grad(node: Apply, eval_points: list) -> list:
    """Output tangents of ``node`` from its gradient: ``grad`` is linear in the output
    gradients ``u``, so ``d/du sum(grad(u) * v) = J v``; ``u`` then only stands for its
    shape and is replaced by the output itself."""
    op = node.op
    l_op = getattr(op, "L_op", None)
    grad_fn = getattr(op, "grad", None)
    if l_op is None and grad_fn is None:
        raise NotImplementedError(
            f"Rop: {op} ({type(op).__name__}) has neither an R_op rule nor a grad method"
        )
    us = {k: o.type() for k, o in enumerate(node.outputs) if _is_float(o)}
    gouts = [us[k] if k in us else zeros_like(o) for k, o in enumerate(node.outputs)]
    try:
        if l_op is not None:
            gins = l_op(list(node.inputs), list(node.outputs), gouts)
        else:
            gins = grad_fn(list(node.inputs), gouts)
        terms = []
        for inp, gi, v in zip(node.inputs, gins, eval_points):
            if gi is None or v is None or not _is_float(inp):
                continue
            gi = _fit(gi, inp, exact=False, where=f"{op}.grad")
            terms.append(tsum(mul(gi, v)))
        if not terms:
            return [None] * len(node.outputs)
        cost = terms[0] if len(terms) == 1 else add(*terms)
        keys = list(us)
        rs = grad(cost, [us[k] for k in keys], disconnected_inputs="ignore",
                  return_disconnected="None")  # fmt: skip
    except NotImplementedError as e:
        raise NotImplementedError(
            f"Rop: {op} ({type(op).__name__}) has no R_op rule, and its gradient cannot be "
            f"differentiated again to transpose it: {e}"
        ) from e
    out: list = [None] * len(node.outputs)
    live = [(k, r) for k, r in zip(keys, rs) if r is not None]
    replaced = clone_replace([r for _, r in live], {us[k]: node.outputs[k] for k in keys})
    for (k, _), r in zip(live, replaced):
        out[k] = r
    return out


def _node_rop(node: Apply, eval_points: list) -> list:
    method = getattr(node.op, "R_op", None)
    if method is not None:
        res = method(list(node.inputs), eval_points)
    else:
        rule = rop_rule(node.op)
        res = NotImplemented if rule is None else rule(node, eval_points)
    if res is NotImplemented:
        res = _rop_by_transposing_grad(node, eval_points)
    res = list(res)
    if len(res) != len(node.outputs):
        raise ValueError(f"R_op of {node.op} gave {len(res)} tangents for "
                         f"{len(node.outputs)} outputs")  # fmt: skip
    where = f"R_op of {node.op}"
    return [
        None if r is None or not _is_float(o) else _fit(r, o, exact=False, where=where)
        for o, r in zip(node.outputs, res)
    ]


def _reading_inputs_of(out: Variable, r: Variable) -> Variable:
    """``r``, made to read every input ``out`` reads: as in Theano (whose Rop gives zero
    tangents to the other inputs and so keeps them in its graph), a function compiled from
    ``f``'s inputs and a tangent of an output linear in ``wrt`` must not find an input
    unused. Tied by ``second(out, r)`` only when something is missing."""
    read = set(ancestors([r]))
    if all(isinstance(i, Constant) or i in read for i in graph_inputs([out])):
        return r
    return second(out, r)


def Rop(
    f: Variable | Sequence[Variable],
    wrt: Variable | Sequence[Variable],
    eval_points: list[Variable | None],
    disconnected_outputs: str = "raise",  # noqa: N802
    return_disconnected: str = "zero",
):
    """The Jacobian of ``f`` with respect to ``wrt`` times ``eval_points`` (Theano's ``Rop``):
    ``R[i] = sum_j d f[i] / d wrt[j] . eval_points[j]``, computed forward through each node's
    R_op rule (``graphc.graph.rop``), or its gradient transposed where it has none.

    An output of ``f`` that does not depend on ``wrt`` raises ``DisconnectedInputError``
    (``disconnected_outputs="raise"``), or warns ("warn") or not ("ignore") and gives zeros
    (``return_disconnected="zero"``) or None. Returns a list or tuple when ``f`` is one.
    """
    if disconnected_outputs not in ("raise", "warn", "ignore"):
        raise ValueError(f"Rop: disconnected_outputs must be raise, warn or ignore, "
                         f"got {disconnected_outputs!r}")  # fmt: skip
    if return_disconnected.lower() not in ("zero", "none", "disconnected"):
        raise ValueError(f"Rop: return_disconnected must be zero, None or Disconnected, "
                         f"got {return_disconnected!r}")  # fmt: skip
    fs = [as_tensor_variable(o) for o in _as_list(f)]
    ws, eps = _as_list(wrt), _as_list(eval_points)
    if len(ws) != len(eps):
        raise ValueError(f"Rop: {len(ws)} variables in wrt but {len(eps)} eval points")
    tangent: dict[Variable, Variable | None] = {}
    for i, (w, ep) in enumerate(zip(ws, eps)):
        if not isinstance(w, Variable):
            raise TypeError(f"Rop: wrt must be Variables, got {type(w).__name__} {w!r:.60}")
        ep = ep if isinstance(ep, Variable) else constant(ep)
        if ep.type.ndim != w.type.ndim:
            raise ValueError(f"Element {i} of wrt/eval_point have mismatched dimensionality: "
                             f"{w.type.ndim} versus {ep.type.ndim}")  # fmt: skip
        if not _is_float(w):
            continue  # integer variables have no tangent
        if ep.dtype != w.dtype:
            ep = cast(ep, w.dtype)
        tangent[w] = _fit(ep, w, exact=False, where="Rop's eval point")
    for node in io_toposort(ws, fs):
        eps_in = [tangent.get(i) for i in node.inputs]
        if all(v is None for v in eps_in) or not any(_is_float(o) for o in node.outputs):
            continue
        for o, r in zip(node.outputs, _node_rop(node, eps_in)):
            if r is not None:
                tangent[o] = r
    results = []
    for out in fs:
        r = tangent.get(out)
        if r is not None and not any(out is w for w in ws):
            r = _reading_inputs_of(out, r)
        if r is None:
            msg = (f"Rop: the output {out} (of type {out.type}) does not depend on wrt, or only "
                   "through non-differentiable operations")  # fmt: skip
            if disconnected_outputs == "raise":
                raise DisconnectedInputError(msg)
            if disconnected_outputs == "warn":
                warnings.warn(msg, stacklevel=2)
            r = zeros_like(out) if return_disconnected.lower() == "zero" else None
        results.append(r)
    return _format_as(isinstance(f, list), isinstance(f, tuple), results)
