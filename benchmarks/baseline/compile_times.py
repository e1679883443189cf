"""Compile-time entries of the CI gate's workload: each graph is built afresh and compiled
``repeat`` times after one untimed warm-up compile (which fills the on-disk C cache and
loads its modules, so the timed compiles measure graphc's own work, not gcc's), and the
times of the compiles are reported as one timed entry of the profile.

A timed entry is a ``FunctionProfile`` whose ``vm_kind`` is ``"timed"`` and whose one node
holds the samples: ``graphc-prof ab`` judges it like a function (paired ratios of the
per-process medians) and shows it as a function row. Only profile records that every
version of graphc has are used here, since the gate runs this workload under the base
commit too.
"""

from __future__ import annotations

import resource
from collections.abc import Callable, Sequence
from typing import Any

import graphc
import graphc.tensor as T
from graphc.profile.data.model import FunctionProfile, NodeRecord
from graphc.profile.registry import REGISTRY
from graphc.profile.stats import ProfileStats

Graph = tuple[list[Any], list[Any]]
TIMED = "timed"  # the vm_kind of a timed entry (graphc.profile.summaries.compare)


def scan_grad_graph(steps: int = 4) -> Graph:
    """An RNN over ``steps`` steps and the gradient of its sum w.r.t. W and h0: the step
    graph of the gradient loop is the large one."""
    x, W, U = T.matrix("x"), T.matrix("W"), T.matrix("U")
    h0 = T.vector("h0")
    h, _ = graphc.scan(
        lambda x_t, h_tm1: T.tanh(T.dot(x_t, U) + T.dot(h_tm1, W)),
        sequences=x, outputs_info=h0, n_steps=steps,
    )  # fmt: skip
    cost = h.sum()
    return [x, W, U, h0], [cost, *graphc.grad(cost, [W, h0])]


def elemwise_chain_graph(nodes: int = 100) -> Graph:
    """A chain of ``nodes`` element-wise nodes on two vectors (fused by fast_run)."""
    x, y = T.vector("x"), T.vector("y")
    e = x
    for i in range(nodes // 4):
        e = T.sin(e * y + float(i)) - x
    return [x, y], [e]


def cpu_ns() -> int:
    """CPU time used so far by this process and its waited-for children (a compiler)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return round((me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime) * 1e9)


def time_compiles(build: Callable[[], Graph], repeat: int) -> list[int]:
    """CPU nanoseconds of ``repeat`` compiles of fresh copies of ``build()``'s graph, after
    one untimed warm-up. Unprofiled: the profiler's own setup is not part of a compile.
    CPU time, not wall time: with the cache warm a compile is one Python thread's work,
    and on a loaded machine its wall time mostly says how often the process was scheduled
    out. A compiler run after all (a cache that stopped hitting) counts as its CPU time;
    time spent waiting (sleeps, locks) does not count."""
    graphc.function(*build(), profile=False)
    times = []
    for _ in range(repeat):
        inputs, outputs = build()
        t0 = cpu_ns()
        graphc.function(inputs, outputs, profile=False)
        times.append(cpu_ns() - t0)
    return times


def timed_entry(name: str, samples: Sequence[int]) -> FunctionProfile:
    """A profile record holding ``samples`` (ns) as one timed entry called ``name``."""
    node = NodeRecord(0, name, name, "Compile", calls=len(samples), ns_total=sum(samples),
                      ns_min=min(samples), ns_samples=list(samples))  # fmt: skip
    return FunctionProfile(name, calls=len(samples), vm_kind=TIMED, nodes=[node])


def report_compile_times(repeat: int) -> None:
    """Time the compiles of the gate's graphs and register them for ``graphc-prof run``."""
    graphs = {"compile scan_grad": scan_grad_graph,
              "compile elemwise_chain100": elemwise_chain_graph}  # fmt: skip
    records = [timed_entry(name, time_compiles(build, repeat)) for name, build in graphs.items()]
    REGISTRY.register_at_exit(ProfileStats(records, "graphc compile times"))
