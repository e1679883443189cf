"""Estimates from a sampled profile (``profile_sample=N``: every N-th call timed).

The timed calls stand for all calls: each node's time and calls are scaled by the ratio
of all calls to timed ones, the nodes of a loop body (a scan's step function, whose steps
are timed only in the timed calls) by their function's ratio. The uncertainty of a node's
estimated total is that of a mean from a simple random sample of its calls (standard
deviation from its recent per-call samples, with the finite-population correction), as a
normal interval.
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from graphc.profile.data.model import FunctionProfile, NodeRecord

Z95 = 1.959963984540054


def factor(fp: FunctionProfile) -> float:
    """All calls over timed calls (1 when every call was timed)."""
    if fp.unsampled_calls <= 0 or fp.calls <= 0:
        return 1.0
    return (fp.calls + fp.unsampled_calls) / fp.calls


def _first(fp: FunctionProfile) -> int:
    """First calls among ``fp``'s timed calls that stand only for themselves (always timed)."""
    return fp.first_calls if 0 < fp.first_calls < fp.calls else 0


def _scaled_node(node: NodeRecord, k: float, first: bool) -> NodeRecord:
    out = copy.copy(node)
    n0, ns0 = (node.first_calls, node.first_ns) if first else (0, 0)
    out.calls = n0 + round((node.calls - n0) * k)
    out.ns_total = ns0 + round((node.ns_total - ns0) * k)
    out.n_below_resolution = round(node.n_below_resolution * k)
    if node.inner is not None:  # a loop body: its timed steps stand for all its steps
        out.inner = _scaled_by(node.inner, factor(node.inner))
    return out


def scaled(fp: FunctionProfile) -> FunctionProfile:
    """``fp`` with its timed calls standing for all calls (itself when not sampled). A first
    call still counted (not left out by ``steady_state``) is always timed: it stands for
    itself, the other timed calls for the rest."""
    if factor(fp) == 1.0:
        return fp
    n0 = _first(fp)
    k = (fp.calls - n0 + fp.unsampled_calls) / (fp.calls - n0)
    return _scaled_by(fp, k, n0)


def _scaled_by(fp: FunctionProfile, k: float, n0: int = 0) -> FunctionProfile:
    """``fp`` scaled by ``k`` but for its ``n0`` first calls, which stand for themselves;
    its ``calls + unsampled_calls`` are all its calls (for a loop body, its steps: those
    of untimed calls estimated, every timed step scaled alike)."""
    out = copy.copy(fp)
    out.calls = fp.calls + fp.unsampled_calls
    out.unsampled_calls = 0
    c0, v0 = (fp.first_call_ns, fp.first_vm_ns) if n0 else (0, 0)
    out.call_ns = c0 + round((fp.call_ns - c0) * k)
    out.vm_ns = v0 + round((fp.vm_ns - v0) * k)
    out.nodes = [_scaled_node(n, k, n0 > 0) for n in fp.nodes]
    return out


@dataclass(frozen=True)
class Estimate:
    """An estimated total (ns) with its half-width at 95% (None: too few samples)."""

    ns: float
    half_width: float | None


def node_estimate(node: NodeRecord, k: float) -> Estimate:
    """``node``'s total over all calls from its ``node.calls`` timed ones (scale ``k``)."""
    n = node.calls
    total = node.ns_total * k
    if k == 1.0:
        return Estimate(total, 0.0)
    samples = [s for s in node.ns_samples if s >= 0]
    if n < 2 or len(samples) < 2:
        return Estimate(total, None)
    population = n * k
    sd = statistics.stdev(samples)
    se = population * sd / math.sqrt(n) * math.sqrt(max(1.0 - n / population, 0.0))
    return Estimate(total, Z95 * se)


def total_estimate(n: int, population: int, total: float, total_sq: float) -> Estimate:
    """The total over ``population`` calls of a quantity whose ``n`` timed calls sum to
    ``total`` (their squares to ``total_sq``)."""
    if n <= 0:
        return Estimate(0.0, None)
    mean = total / n
    est = mean * population
    if n < 2 or population <= n:
        return Estimate(est, 0.0 if population <= n else None)
    var = max(total_sq - n * mean * mean, 0.0) / (n - 1)
    se = population * math.sqrt(var / n) * math.sqrt(1.0 - n / population)
    return Estimate(est, Z95 * se)


def vm_estimate(fp: FunctionProfile) -> Estimate:
    """The VM time of ``fp``'s calls after the first (as recorded: one first call, always
    timed and reported on its own line, is left out of both the sums and the count)."""
    n, total, sq = fp.calls, float(fp.vm_ns), fp.sampled_vm_ns_sq
    if fp.first_calls == 1 and 0 < fp.first_calls < fp.calls:
        n, total, sq = n - 1, total - fp.first_vm_ns, sq - float(fp.first_vm_ns) ** 2
    return total_estimate(n, n + fp.unsampled_calls, total, sq)


def loop_estimate(parent: FunctionProfile, body: FunctionProfile) -> Estimate:
    """The time of all the steps of loop body ``body`` over all of ``parent``'s calls: the
    sampling unit is the parent's call (its ``body.sampled_vm_ns_sq`` sums the squared step
    time of each timed call); the parent's first call is left out as in vm_estimate."""
    n, total, sq = parent.calls, float(body.vm_ns), body.sampled_vm_ns_sq
    if parent.first_calls == 1 and 0 < parent.first_calls < parent.calls:
        n, total, sq = n - 1, total - body.first_vm_ns, sq - float(body.first_vm_ns) ** 2
    return total_estimate(n, n + parent.unsampled_calls, total, sq)


def _spread(est: Estimate, unit: str) -> str:
    if est.half_width is None:
        return f"(too few timed {unit} for an interval)"
    return f"+/- {100 * est.half_width / est.ns if est.ns else 0.0:.1f}% (95%)"


def _loop_lines(parent: FunctionProfile, fp: FunctionProfile) -> list[str]:
    """The loop bodies of ``fp``'s nodes (nested ones too), against the sampled
    function ``parent`` whose calls are the sampling unit."""
    lines = []
    for node in fp.nodes:
        body = node.inner
        if body is None:
            continue
        est = loop_estimate(parent, body)
        first = body.first_calls if 0 < parent.first_calls < parent.calls else 0
        timed = body.calls - first
        lines.append(
            f"  Sampled {body.name}: the steps of the timed calls ({timed} of about "
            f"{timed + body.unsampled_calls}); scaled estimate "
            f"{est.ns / 1e9:.3e}s {_spread(est, 'calls')}"
        )
        lines += _loop_lines(parent, body)
    return lines


def sampling_lines(fps: Sequence[FunctionProfile]) -> list[str]:
    """One line per sampled function of ``fps`` (as recorded): how many calls were timed
    and the estimated VM time over all calls with its 95% interval; then one per loop
    body of its nodes, the estimated time of all its steps."""
    lines = []
    for fp in fps:
        if factor(fp) == 1.0:
            continue
        est = vm_estimate(fp)
        timed = fp.calls - (fp.first_calls if 0 < fp.first_calls < fp.calls else 0)
        lines.append(
            f"  Sampled {fp.name}: 1 call in {fp.sample_every} timed ({timed} of "
            f"{timed + fp.unsampled_calls}); scaled estimates, Function.fn.__call__ "
            f"{est.ns / 1e9:.3e}s {_spread(est, 'calls')}"
        )
        lines += _loop_lines(fp, fp)
    return lines
