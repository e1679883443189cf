"""Theano's graph comparisons: ``equal_computations`` and ``is_same_graph`` with givens."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graphc.graph.basic import Constant, Variable

__all__ = ["equal_computations", "is_same_graph"]


def equal_computations(
    xs: Sequence[Variable],
    ys: Sequence[Variable],
    in_xs: Sequence[Variable] | None = None,
    in_ys: Sequence[Variable] | None = None,
) -> bool:
    """Whether each ``xs[i]`` computes what ``ys[i]`` does: same Ops applied in the same
    way to the same inputs, equal constants; ``in_xs[k]`` counts as ``in_ys[k]``."""
    if len(xs) != len(ys):
        raise ValueError(f"equal_computations: {len(xs)} xs but {len(ys)} ys")
    in_xs, in_ys = list(in_xs or ()), list(in_ys or ())
    if len(in_xs) != len(in_ys):
        return False
    if any(a.type != b.type for a, b in zip(in_xs, in_ys)):
        return False
    memo: dict[tuple[int, int], bool] = {(id(a), id(b)): True for a, b in zip(in_xs, in_ys)}
    keep = [in_xs, in_ys]  # ids in memo stay valid while these live

    def same(x: Variable, y: Variable) -> bool:
        key = (id(x), id(y))
        if key in memo:
            return memo[key]
        if x.type != y.type:
            r = False
        elif isinstance(x, Constant) and isinstance(y, Constant):
            r = x.signature() == y.signature()
        elif x.owner is None or y.owner is None:
            r = x is y
        else:
            nx, ny = x.owner, y.owner
            r = (
                nx.op == ny.op
                and x.index == y.index
                and len(nx.inputs) == len(ny.inputs)
                and len(nx.outputs) == len(ny.outputs)
                and all(same(a, b) for a, b in zip(nx.inputs, ny.inputs))
            )
        keep.append([x, y])
        memo[key] = r
        return r

    return all(same(x, y) for x, y in zip(xs, ys))


def is_same_graph(
    var1: Variable,
    var2: Variable,
    givens: Mapping[Variable, Variable] | None = None,
    debug: bool = False,
) -> bool:
    """Theano's ``gof.graph.is_same_graph``: ``var1`` and ``var2`` compute the same thing,
    each key of ``givens`` in ``var1``'s graph standing for its value in ``var2``'s."""
    givens = dict(givens or {})
    return equal_computations([var1], [var2], list(givens), list(givens.values()))
