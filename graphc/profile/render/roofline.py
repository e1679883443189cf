"""The Roofline section of the text summary: the machine's limits (what 100% means), then
the nodes taking the most time with their bytes, intensity, rates and shares."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from graphc.profile.data.model import FunctionProfile
from graphc.profile.render.fmt import table
from graphc.profile.summaries.roofline import machine_of, roofline

#: The row count ``graphc-prof show/run --full`` asks for.
FULL = sys.maxsize

HEADERS = ["<% time>", "<B/call>", "<flop/B>", "<GB/s>", "<% bw>", "<GFLOP/s>", "<% peak>",
           "<bound>", "<id>", "<Apply name>"]  # fmt: skip


def _num(v: float | None, fmt: str = ".3g") -> str:
    return "-" if v is None else format(v, fmt)


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def _bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def render_roofline(fps: Sequence[FunctionProfile], n: int, width: int | None) -> list[str]:
    """The section with ``--full`` (``n`` of ``FULL``: every row; the default summary must
    fit one screen), else nothing; nothing either when the profiles carry no limits."""
    machine = machine_of(fps)
    if machine is None or n < FULL:
        return []
    points = roofline(fps)
    total = sum(p.ns for p in points)
    rows = [
        [
            _pct(p.ns / total if total else 0.0),
            _bytes(p.bytes_per_call),
            _num(p.intensity),
            _num(p.gbs),
            _pct(p.bw_share),
            _num(p.gflops),
            _pct(p.flop_share),
            p.bound or "-",
            str(p.position),
            p.name,
        ]  # fmt: skip
        for p in points
    ]
    lines = [
        "Roofline",
        "--------",
        f"  This machine: {machine.bandwidth_gbs:.1f} GB/s memory bandwidth (triad over "
        f"{machine.triad_n} doubles), {machine.peak_gflops:.1f} GFLOP/s peak",
        f"  (float64 GEMM of {machine.gemm_n}x{machine.gemm_n}, BLAS {machine.blas}); "
        "% bw and % peak are shares of these",
        "  (above 100% of the bandwidth: the data came from the caches, not from memory)",
    ]
    return lines + table(HEADERS, rows, width=width) + [""]
