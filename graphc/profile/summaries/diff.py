"""Differences between two profiles, by Op class, by Op and by matched Apply node."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphc.profile.data.model import FunctionProfile, NodeRecord, ValueInfo


@dataclass(frozen=True)
class DiffRow:
    """One label's time and calls in profile a and b (None: absent from that side)."""

    label: str
    ns_a: int
    ns_b: int
    calls_a: int
    calls_b: int
    position_a: int | None = None
    position_b: int | None = None

    @property
    def diff_ns(self) -> int:
        """Time in a minus time in b."""
        return self.ns_a - self.ns_b


@dataclass(frozen=True)
class DiffTable:
    """Rows sorted by the size of the difference, the first ``n`` shown."""

    rows: tuple[DiffRow, ...]
    remaining: int
    remaining_abs_ns: int


def _cut(rows: list[DiffRow], n: int) -> DiffTable:
    rows.sort(key=lambda r: (-abs(r.diff_ns), r.label))
    shown, rest = rows[: max(n, 0)], rows[max(n, 0) :]
    return DiffTable(tuple(shown), len(rest), sum(abs(r.diff_ns) for r in rest))


def _grouped(a: Sequence[FunctionProfile], b: Sequence[FunctionProfile], attr: str, n: int):
    acc: dict[str, list[int]] = {}
    for side, fps in ((0, a), (1, b)):
        for f in fps:
            for node in f.nodes:
                cell = acc.setdefault(getattr(node, attr), [0, 0, 0, 0])
                cell[side] += node.ns_total
                cell[2 + side] += node.calls
    rows = [DiffRow(k, v[0], v[1], v[2], v[3]) for k, v in acc.items()]
    return _cut(rows, n)


def class_diff(a: Sequence[FunctionProfile], b: Sequence[FunctionProfile], n: int = 20):
    """Time per Op class in a and b."""
    return _grouped(a, b, "op_class", n)


def op_diff(a: Sequence[FunctionProfile], b: Sequence[FunctionProfile], n: int = 20):
    """Time per Op in a and b."""
    return _grouped(a, b, "op_name", n)


def _shape_sig(values: Sequence[ValueInfo]) -> tuple | None:
    """Dtypes and shapes of a node's values (None when no shape was recorded)."""
    shapes = [v.shape for v in values]
    if not values or any(shape is None for shape in shapes):
        return None
    return tuple((v.dtype, tuple(shape or ())) for v, shape in zip(values, shapes))


def _likeness(x: NodeRecord, y: NodeRecord) -> int:
    """How alike two nodes of the same Op class are in what they compute and where they
    come from: a shared source line counts most, then equal output and input shapes,
    then the same position in the schedule; 0 when nothing but the class is shared."""
    score = 0
    if set(x.origins) & set(y.origins):
        score += 4
    out_x = _shape_sig(x.outputs)
    if out_x is not None and out_x == _shape_sig(y.outputs):
        score += 2
    in_x = _shape_sig(x.inputs)
    if in_x is not None and in_x == _shape_sig(y.inputs):
        score += 1
    if x.position == y.position:
        score += 1
    return score


def _unique_likeness_pairs(
    a: Sequence[NodeRecord], b: Sequence[NodeRecord]
) -> dict[int, NodeRecord]:
    """Pairs (index in ``a`` -> node of ``b``) of the same Op class that are each other's
    only alike node (``_likeness`` > 0): when several are alike (a node fused with others
    into one), they stay unmatched rather than a part being compared with the whole."""
    alike = [[x.op_class == y.op_class and _likeness(x, y) > 0 for y in b] for x in a]
    out: dict[int, NodeRecord] = {}
    for i, row in enumerate(alike):
        if row.count(True) == 1:
            j = row.index(True)
            if sum(alike[k][j] for k in range(len(a))) == 1:
                out[i] = b[j]
    return out


def match_nodes(
    a: Sequence[NodeRecord], b: Sequence[NodeRecord]
) -> list[tuple[NodeRecord | None, NodeRecord | None]]:
    """Pair the nodes of two versions of a graph: by (position, op_name), then by op_name in
    schedule order, then (a renamed Op, a different fusion) by Op class and likeness (see
    ``_unique_likeness_pairs``). Unmatched nodes are paired with None."""
    free_b = list(b)
    pairs: list[tuple[NodeRecord | None, NodeRecord | None]] = []
    pending: list[NodeRecord] = []
    exact = {(n.position, n.op_name): n for n in b}
    for node in a:
        other = exact.get((node.position, node.op_name))
        if other is not None and other in free_b:
            free_b.remove(other)
            pairs.append((node, other))
        else:
            pending.append(node)
    unmatched: list[NodeRecord] = []
    for node in pending:
        other = next((o for o in free_b if o.op_name == node.op_name), None)
        if other is not None:
            free_b.remove(other)
            pairs.append((node, other))
        else:
            unmatched.append(node)
    taken_a = _unique_likeness_pairs(unmatched, free_b)
    taken_b = {id(y) for y in taken_a.values()}
    pairs += [(x, taken_a.get(i)) for i, x in enumerate(unmatched)]
    pairs += [(None, y) for y in free_b if id(y) not in taken_b]
    return pairs


FunctionPair = tuple[FunctionProfile | None, FunctionProfile | None]


def pair_functions(
    a: Sequence[FunctionProfile], b: Sequence[FunctionProfile]
) -> list[FunctionPair]:
    """Functions with the same name pair up; the others pair in order. Every pair has a
    function on at least one side."""
    by_name = {f.name: f for f in b}
    used: set[int] = set()
    pairs: list[FunctionPair] = []
    rest_a = []
    for f in a:
        g = by_name.get(f.name)
        if g is not None and id(g) not in used:
            used.add(id(g))
            pairs.append((f, g))
        else:
            rest_a.append(f)
    rest_b = [g for g in b if id(g) not in used]
    for i, f in enumerate(rest_a):
        pairs.append((f, rest_b[i] if i < len(rest_b) else None))
    pairs += [(None, g) for g in rest_b[len(rest_a) :]]
    return pairs


def function_name(pair: FunctionPair) -> str:
    """The name a pair of functions is shown by: a's, else b's."""
    fa, fb = pair
    shown = fa if fa is not None else fb
    if shown is None:
        raise ValueError("a pair of functions needs a function on one side")
    return shown.name


def shown_node(
    fa: FunctionProfile | None,
    x: NodeRecord | None,
    fb: FunctionProfile | None,
    y: NodeRecord | None,
) -> tuple[FunctionProfile, NodeRecord]:
    """The side a pair of matched nodes (``x`` of ``fa``, ``y`` of ``fb``) is shown by: a's
    when it has the node, else b's."""
    if x is not None and fa is not None:
        return fa, x
    if y is not None and fb is not None:
        return fb, y
    raise ValueError("a pair of matched nodes needs a node on one side")


def apply_diff(a: Sequence[FunctionProfile], b: Sequence[FunctionProfile], n: int = 15):
    """Time per matched Apply node in a and b."""
    rows: list[DiffRow] = []
    multi = max(len(a), len(b)) > 1
    for fa, fb in pair_functions(a, b):
        nodes_a = fa.nodes if fa else []
        nodes_b = fb.nodes if fb else []
        for x, y in match_nodes(nodes_a, nodes_b):
            fn, shown = shown_node(fa, x, fb, y)
            label = f"{fn.name}: {shown.apply_name}" if multi else shown.apply_name
            rows.append(
                DiffRow(
                    label,
                    x.ns_total if x else 0,
                    y.ns_total if y else 0,
                    x.calls if x else 0,
                    y.calls if y else 0,
                    x.position if x else None,
                    y.position if y else None,
                )
            )
    return _cut(rows, n)
