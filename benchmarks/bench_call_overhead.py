"""Per-call overhead of graphc.function: ``x + 1`` on a scalar and a 10-vector, and a
100-node elemwise chain (optimizer=None, so nothing fuses).

Run: ``python benchmarks/bench_call_overhead.py [--repeats N] [--breakdown]``.

Variants: the Cython VM and the Python VM, each with input checking and with
``trust_input=True``; numpy's own ``x + 1`` (or the chain as numpy calls); PyTensor
(``Mode(linker="cvm", optimizer="fast_run")``) when it is importable. Each number is the
median over ``--repeats`` interleaved rounds (every variant timed once per round, in turn)
of the mean time per call in a round. ns/node for the chain is (chain call - x+1 call)
divided by the difference in scheduled nodes (99) with the same variant, so the per-call
cost cancels. ``--breakdown`` shows where a scalar
``x + 1`` call goes (argument conversion, the VM, result handling) and a cProfile listing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import graphc
import graphc.tensor as gt

N_CHAIN = 100
NODES: dict[tuple[str, str], int] = {}  # graphc (case, variant) -> nodes in the schedule


def _inner_loop(fn: Callable, args: tuple, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter() - t0) / n


def chain(x, n: int, one=1.0, half=0.5):
    """``n`` small elemwise nodes: alternately ``+ one`` and ``* half``."""
    y = x
    for k in range(n):
        y = y + one if k % 2 == 0 else y * half
    return y


def _vec_const(v: float):
    """A constant of shape (1,): broadcasts against a vector without a DimShuffle node
    (with optimizer=None nothing would fold one)."""
    return gt.constant(np.array([v]))


def numpy_chain(x, n: int = N_CHAIN):
    y = x
    for k in range(n):
        y = y + 1.0 if k % 2 == 0 else y * 0.5
    return y


def graphc_variants(linker: str) -> dict[str, Callable[[object, object], Callable]]:
    def make(vm: str, trust: bool):
        def build(x, out):
            mode = graphc.Mode(linker=linker, optimizer=None, vm=vm)
            return graphc.function([x], out, mode=mode, trust_input=trust)

        return build

    return {
        "graphc cvm": make("cvm", False),
        "graphc cvm trust": make("cvm", True),
        "graphc py-vm": make("py", False),
        "graphc py-vm trust": make("py", True),
    }


def pytensor_variant():
    try:
        import pytensor
        import pytensor.tensor as pt
    except Exception:  # noqa: BLE001 - optional comparison
        return None

    def build(kind: str):
        x = pt.dscalar("x") if kind == "scalar" else pt.dvector("x")
        out = x + 1 if kind != "chain" else chain(x, N_CHAIN)
        mode = pytensor.compile.mode.Mode(linker="cvm", optimizer="fast_run")
        return pytensor.function([x], out, mode=mode)

    return build


def build_all(linker: str):
    """Per case: (symbolic input, expression, argument); the chain is always case 3."""
    chain_case = f"chain({N_CHAIN}) vector(10)"
    cases = {
        "scalar x+1": (gt.scalar("x"), lambda x: x + np.float64(1.0), np.asarray(2.0)),
        "scalar x+1, float arg": (gt.scalar("x"), lambda x: x + np.float64(1.0), 2.0),
        "vector(10) x+1": (gt.vector("x"), lambda x: x + _vec_const(1.0), np.arange(10.0)),
        chain_case: (
            gt.vector("x"),
            lambda x: chain(x, N_CHAIN, _vec_const(1.0), _vec_const(0.5)),
            np.arange(10.0),
        ),
    }
    fns: dict[tuple[str, str], tuple[Callable, tuple]] = {}
    for case, (x, expr, arg) in cases.items():
        for vname, build in graphc_variants(linker).items():
            if "trust" in vname and not isinstance(arg, np.ndarray):
                continue  # trust_input needs arguments of the exact type
            f = build(x, expr(x))
            NODES[(case, vname)] = len(f.linked.schedule)
            fns[(case, vname)] = (f, (arg,))
        if case == chain_case:
            fns[(case, "numpy")] = (numpy_chain, (arg,))
        else:
            fns[(case, "numpy")] = (np.add, (arg, 1.0))
    pt_build = pytensor_variant()
    if pt_build is not None:
        for case, kind in zip(cases, ("scalar", "scalar", "vector", "chain")):
            fns[(case, "pytensor")] = (pt_build(kind), (cases[case][2],))
    return list(cases), fns


def run(repeats: int, linker: str, target_s: float = 0.02):
    cases, fns = build_all(linker)
    inner = {}
    for key, (fn, args) in fns.items():
        fn(*args)  # warm up, and check it runs
        per = _inner_loop(fn, args, 50)
        inner[key] = max(5, int(target_s / max(per, 1e-9)))
    samples: dict[tuple[str, str], list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for key, (fn, args) in fns.items():
            samples[key].append(_inner_loop(fn, args, inner[key]))
    med = {k: statistics.median(v) for k, v in samples.items()}
    return cases, med


def report(cases, med) -> None:
    variants = sorted({v for _, v in med}, key=_variant_order)
    print("\nmicroseconds per call (median of interleaved repeats); ratio to numpy in ()\n")
    w = max(len(v) for v in variants) + 2
    print("variant".ljust(w) + "".join(c.rjust(26) for c in cases))
    for v in variants:
        row = v.ljust(w)
        for c in cases:
            if (c, v) in med:
                us = med[(c, v)] * 1e6
                ratio = med[(c, v)] / med[(c, "numpy")]
                row += f"{us:12.2f} us ({ratio:6.1f}x)".rjust(26)
            else:
                row += "-".rjust(26)
        print(row)
    chain_case = cases[3]
    print(f"\nper-node cost in the {N_CHAIN}-node chain: (chain - vector x+1) / the "
          "difference in scheduled nodes (numpy: calls)\n")  # fmt: skip
    for v in variants:
        if (chain_case, v) in med and (cases[2], v) in med:
            extra = NODES.get((chain_case, v), N_CHAIN) - NODES.get((cases[2], v), 1)
            ns = (med[(chain_case, v)] - med[(cases[2], v)]) / extra * 1e9
            print(f"  {v.ljust(w)} {ns:8.0f} ns/node")
    print("\nratios between graphc variants (scalar x+1):")
    base = med.get((cases[0], "graphc cvm"))
    for v in variants:
        if (cases[0], v) in med and base:
            print(f"  {v.ljust(w)} {med[(cases[0], v)] / base:6.2f}x graphc cvm")


def _variant_order(v: str):
    order = ["numpy", "graphc cvm", "graphc cvm trust", "graphc py-vm", "graphc py-vm trust",
             "pytensor"]  # fmt: skip
    return order.index(v) if v in order else len(order)


def breakdown(linker: str, n: int = 200_000) -> None:
    """Where the time of a scalar ``x + 1`` call goes, with the Cython VM."""
    x = gt.scalar("x")
    f = graphc.function([x], x + np.float64(1.0),
                        mode=graphc.Mode(linker=linker, optimizer=None, vm="cvm"))  # fmt: skip
    arg = np.asarray(2.0)
    f(arg)
    vm = f.vm
    values = f._convert_args((arg,), {})
    outs = vm(list(values))
    parts = {
        "whole f(x)": (f, (arg,)),
        "f._convert_args": (f._convert_args, ((arg,), {})),
        "f.vm(values)": (lambda: vm([arg]), ()),
        "f._finish(outs)": (lambda: f._finish(list(outs)), ()),
        "numpy x + 1": (np.add, (arg, 1.0)),
    }
    res = {k: [] for k in parts}
    for _ in range(7):
        for k, (fn, args) in parts.items():
            res[k].append(_inner_loop(fn, args, n // 7))
    print("\nbreakdown of one scalar x+1 call (Cython VM), ns:")
    for k, v in res.items():
        print(f"  {k:20s} {statistics.median(v) * 1e9:8.0f}")

    import cProfile
    import pstats

    pr = cProfile.Profile()
    pr.enable()
    for _ in range(50_000):
        f(arg)
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--linker", default="py", help="graphc linker (default: py)")
    ap.add_argument("--breakdown", action="store_true", help="time the parts of a call")
    a = ap.parse_args()
    cases, med = run(a.repeats, a.linker)
    report(cases, med)
    if a.breakdown:
        breakdown(a.linker)


if __name__ == "__main__":
    main()
