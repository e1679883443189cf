"""``ifelse``: a lazy conditional that computes only the branch it takes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Op, Variable
from graphc.graph.rop import register_rop
from graphc.tensor.basic import zeros_like
from graphc.tensor.math import second
from graphc.tensor.type import TensorType
from graphc.tensor.variable import TensorConstant, as_tensor_variable

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from graphc.tensor.variable import TensorLike

__all__ = ["IfElse", "ifelse"]


def _as_tensor(x: TensorLike):
    """Like ``as_tensor_variable``; non-Variable values keep their exact shape."""
    if isinstance(x, Variable):
        return as_tensor_variable(x)
    arr = np.array(x)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"ifelse: cannot use {type(x).__name__} {x!r:.50} as a tensor")
    arr.setflags(write=False)
    return TensorConstant(TensorType(str(arr.dtype), [1 if s == 1 else None for s in arr.shape]),
                          arr)  # fmt: skip


class IfElse(Op):
    """``outputs = then_values if condition else else_values``, with ``n_outs`` outputs.

    Inputs are ``[condition, *then_values, *else_values]``. The Op is lazy: ``lazy_perform``
    asks for the condition first, then only for the inputs of the branch taken. Outputs are
    copies of the chosen inputs.
    """

    __props__ = ("n_outs", "name")
    lazy = True

    def __init__(self, n_outs: int, name: str | None = None):
        self.n_outs = int(n_outs)
        self.name = name

    def __str__(self) -> str:
        return f"if{{{self.name or ''}}}"

    def make_node(self, condition: Variable, *branches: Variable) -> Apply:
        n = self.n_outs
        if len(branches) != 2 * n:
            raise TypeError(f"{self} expects a condition and 2 * {n} branch values, "
                            f"got {len(branches)} values")  # fmt: skip
        cond = _as_tensor(condition)
        if cond.ndim != 0:
            raise TypeError(f"{self}: the condition must be a scalar, got {cond} of type "
                            f"{cond.type}")  # fmt: skip
        ts = [_as_tensor(v) for v in branches[:n]]
        es = [_as_tensor(v) for v in branches[n:]]
        outs = []
        for k, (t, e) in enumerate(zip(ts, es)):
            if t.dtype != e.dtype or t.ndim != e.ndim:
                raise TypeError(
                    f"{self}: then and else branches have different types at position {k}: "
                    f"{t} of type {t.type} vs {e} of type {e.type}"
                )
            shape = [a if a == b else None for a, b in zip(t.type.shape, e.type.shape)]
            outs.append(TensorType(t.dtype, shape)())
        return Apply(self, [cond, *ts, *es], outs)

    def _branch(self, cond) -> range:
        n = self.n_outs
        return range(1, n + 1) if bool(np.asarray(cond)) else range(n + 1, 2 * n + 1)

    def lazy_perform(
        self, node: Apply, computed: list[bool], inputs: list, output_cells: list[list]
    ) -> tuple:
        """The lazy-thunk protocol: return the input positions still needed, or ``()``."""
        if not computed[0]:
            return (0,)
        branch = self._branch(inputs[0])
        missing = tuple(i for i in branch if not computed[i])
        if missing:
            return missing
        for cell, i in zip(output_cells, branch):
            cell[0] = np.array(inputs[i], copy=True)
        return ()

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        for cell, i in zip(output_storage, self._branch(inputs[0])):
            cell[0] = np.array(inputs[i], copy=True)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        n = self.n_outs
        cond = node.inputs[0]
        out = []
        for ts, es in zip(shapes[1 : n + 1], shapes[n + 1 :]):
            dims = []
            for a, b in zip(ts, es):
                if a is b or (_static(a) is not None and _static(a) == _static(b)):
                    dims.append(a)
                else:
                    dims.append(IfElse(1)(cond, _as_tensor(a), _as_tensor(b)))
            out.append(tuple(dims))
        return out

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        n = self.n_outs
        cond, ts = inputs[0], inputs[1 : n + 1]
        gs = []
        for g, t in zip(gouts, ts):
            if t.dtype not in ("float16", "float32", "float64"):
                g = None
            gs.append(g)
        live = [k for k, g in enumerate(gs) if g is not None]
        result: list = [None] * len(inputs)
        if not live:
            return result
        zs = [second(gs[k], _as_tensor(np.zeros((), dtype=gs[k].dtype))) for k in live]
        g_live = [gs[k] for k in live]
        both = IfElse(2 * len(live), self.name)(cond, *g_live, *zs, *zs, *g_live)
        both = both if isinstance(both, list) else [both]
        for j, k in enumerate(live):
            result[1 + k] = both[j]
            result[1 + n + k] = both[len(live) + j]
        return result


@register_rop(IfElse)
def _ifelse_rop(node: Apply, eval_points: list[Variable | None]):
    """The tangents of the branch taken (zeros for a branch value without one)."""
    if all(v is None for v in eval_points[1:]):
        return [None] * len(node.outputs)
    branches = [zeros_like(b) if v is None else v for b, v in zip(node.inputs[1:], eval_points[1:])]
    out = node.op(node.inputs[0], *branches)
    return out if isinstance(out, list) else [out]


def _static(v):
    if isinstance(v, int | np.integer):
        return int(v)
    if isinstance(v, TensorConstant):
        return int(np.asarray(v.data).reshape(-1)[0]) if np.size(v.data) == 1 else None
    return None


def ifelse(
    condition: TensorLike,
    then_branch: Variable | Sequence[Variable],
    else_branch: Variable | Sequence[Variable],
    name: str | None = None,
):
    """``then_branch`` if ``condition`` (a scalar) is true, else ``else_branch``; only the
    branch taken is computed. Branches are a Variable or equally long lists of Variables with
    matching types; the result has the same structure."""
    single = not isinstance(then_branch, list | tuple)
    ts = [then_branch] if single else list(then_branch)
    es = [else_branch] if not isinstance(else_branch, list | tuple) else list(else_branch)
    if len(ts) != len(es):
        raise TypeError(
            f"ifelse: the then branch has {len(ts)} values and the else branch {len(es)}"
        )
    if not ts:
        raise TypeError("ifelse: empty branches")
    out = IfElse(len(ts), name)(condition, *ts, *es)
    if single:
        return out
    return out if isinstance(out, list) else [out]
