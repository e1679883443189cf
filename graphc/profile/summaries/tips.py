"""Tips: small rules over profile data, each returning zero or more suggestions."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from graphc.profile.data.model import FunctionProfile, NodeRecord
from graphc.profile.summaries.roofline import roofline_tips
from graphc.profile.summaries.tables import pct

Rule = Callable[[Sequence[FunctionProfile]], list[str]]

#: Length of a chain of Elemwise nodes from which fusion is suggested.
MIN_ELEMWISE_CHAIN = 3
#: Share of node time in Python implementations from which a tip is given.
PY_SHARE_THRESHOLD = 50.0


def _nodes(fps: Sequence[FunctionProfile]) -> list[NodeRecord]:
    return [n for f in fps for n in f.nodes]


def float64_tip(fps: Sequence[FunctionProfile]) -> list[str]:
    """Nodes computing float64 results, where float32 is often precise enough."""
    n = sum(1 for node in _nodes(fps) if any(v.dtype == "float64" for v in node.outputs))
    if not n:
        return []
    return [f"Try the graphc flag floatX=float32 ({n} Apply node(s) produce float64)"]


def py_with_c_tip(fps: Sequence[FunctionProfile]) -> list[str]:
    """Ops running Python although a C implementation exists (flag or seen elsewhere)."""
    nodes = _nodes(fps)
    has_c = {n.op_name for n in nodes if n.impl == "C" or n.has_c_impl}
    slow = sorted({n.op_name for n in nodes if n.impl == "Py" and n.op_name in has_c})
    return [
        f"Op {name} runs its Python implementation although it has a C one; "
        "check the linker (c|py) and that a C compiler is available"
        for name in slow
    ]


def _is_elemwise(node: NodeRecord) -> bool:
    return node.op_class.rsplit(".", 1)[-1] == "Elemwise"


def longest_elemwise_chain(fp: FunctionProfile) -> int:
    """Number of nodes on the longest producer->consumer path of Elemwise nodes."""
    producer = {s: i for i, n in enumerate(fp.nodes) for s in n.output_slots}
    depth: list[int] = []
    for node in fp.nodes:
        d = 0
        if _is_elemwise(node):
            d = 1
            for s in node.input_slots:
                i = producer.get(s)
                if i is not None and i < len(depth) and depth[i]:
                    d = max(d, depth[i] + 1)
        depth.append(d)
    return max(depth, default=0)


def fusion_tip(fps: Sequence[FunctionProfile]) -> list[str]:
    """A chain of un-fused Elemwise nodes: fusion would run it as one loop."""
    out = []
    for f in fps:
        n = longest_elemwise_chain(f)
        if n < MIN_ELEMWISE_CHAIN:
            continue
        if "fusion" in f.rewrites_excluded:
            advice = "do not exclude the `fusion` rewrite"
        else:
            advice = "check why the `fusion` rewrite left it"
        out.append(f"{f.name}: a chain of {n} Elemwise nodes is not fused; {advice}")
    return out


def _impl_ns(fps: Sequence[FunctionProfile]) -> tuple[int, int]:
    """``(ns in nodes, ns in Python nodes)``: a loop node counts as its step's nodes (its
    own time is the loop driver's, not an implementation choice)."""
    total = py = 0
    for f in fps:
        for n in f.nodes:
            if n.inner is not None:
                t, p = _impl_ns([n.inner])
            else:
                t, p = n.ns_total, n.ns_total if n.impl == "Py" else 0
            total, py = total + t, py + p
    return total, py


def py_share_tip(fps: Sequence[FunctionProfile]) -> list[str]:
    """A large share of node time spent in Python implementations."""
    total, py = _impl_ns(fps)
    share = pct(py, total)
    if not total or share < PY_SHARE_THRESHOLD:
        return []
    return [
        f"{share:.1f}% of the time in nodes is spent in Python implementations; "
        "Ops with C implementations (linker=c|py) are usually faster"
    ]


#: A node's first call counts as a one-off cost when it takes this many times its median.
FIRST_CALL_RATIO = 20.0


def first_call_tip(fps: Sequence[FunctionProfile]) -> list[str]:
    """Nodes whose first call dwarfs their usual one (a cost steady-state calls never pay):
    one tip naming the largest, and how many others there are."""
    found = []  # (first call ns, ratio, function, node)
    for f in fps:
        for n in f.nodes:
            if n.first_calls != 1 or n.first_ns < 1_000_000:
                continue
            rest = sorted(n.ns_samples)
            if n.first_ns in rest:  # the first call may still be among the recent samples
                rest.remove(n.first_ns)
            if not rest:
                continue
            median = max(rest[len(rest) // 2], 1)
            if n.first_ns > FIRST_CALL_RATIO * median:
                found.append((n.first_ns, n.first_ns / median, f.name, n.apply_name))
    if not found:
        return []
    ns, ratio, fname, apply_name = max(found)
    others = f" (and {len(found) - 1} more such nodes)" if len(found) > 1 else ""
    return [
        f"{fname}: the first call of {apply_name} took {ns / 1e6:.1f} ms, {ratio:.0f}x its "
        f"median{others}; the tables include first calls, as Theano's did (one-off costs: "
        "fresh buffers, BLAS threads, lazy imports): summary(all_calls=False) or the flag "
        "profiling__all_calls=False leaves them out"
    ]


#: A BLAS node whose slow calls (90th percentile) take this many times its fast ones (10th).
BLAS_SPREAD_RATIO = 3.0
#: ...counted only from this many recent samples and a median of at least this many ns.
BLAS_SPREAD_MIN_SAMPLES = 8
BLAS_SPREAD_MIN_NS = 50_000
_BLAS_MODULES = ("graphc.tensor.blas.", "graphc.tensor.conv.")


def blas_spread_tip(fps: Sequence[FunctionProfile]) -> list[str]:
    """BLAS nodes whose time varies more than 3x between calls: their threads most likely
    wait for cores other threads hold (another BLAS pool, another process). One tip naming
    the widest spread, and how many others there are."""
    found = []  # (spread, fastest, slowest, samples, function, node)
    for f in fps:
        for n in f.nodes:
            if not n.op_class.startswith(_BLAS_MODULES):
                continue
            ts = sorted(t for t in n.ns_samples if t > 0)
            if len(ts) < BLAS_SPREAD_MIN_SAMPLES or ts[len(ts) // 2] < BLAS_SPREAD_MIN_NS:
                continue
            lo, hi = ts[len(ts) // 10], ts[(len(ts) * 9) // 10]
            if hi > BLAS_SPREAD_RATIO * lo:
                found.append((hi / lo, lo, hi, len(ts), f.name, n.apply_name))
    if not found:
        return []
    spread, lo, hi, count, fname, apply_name = max(found)
    others = f" (and {len(found) - 1} more BLAS nodes)" if len(found) > 1 else ""
    return [
        f"{fname}: {apply_name} took {lo / 1e6:.2f}-{hi / 1e6:.2f} ms (10th-90th percentile, "
        f"{spread:.1f}x) over its last {count} calls{others}; BLAS threads may be competing "
        "for the cores (numpy's and scipy's pools, or other processes): try the flag "
        "blas_threads=1 (needs threadpoolctl) or OPENBLAS_NUM_THREADS=1"
    ]


RULES: tuple[Rule, ...] = (
    float64_tip, py_with_c_tip, fusion_tip, py_share_tip, first_call_tip, blas_spread_tip,
    roofline_tips,
)  # fmt: skip


def tips(fps: Sequence[FunctionProfile], rules: Sequence[Rule] = RULES) -> list[str]:
    """All suggestions for ``fps``, in rule order."""
    return [tip for rule in rules for tip in rule(fps)]
