"""Profile numbers that hold in awkward situations, each checked against an independent
measurement: calls that raise, outputs that are views or written in place (tracemalloc),
functions freed before their profile is read, and Theano's ProfileStats spellings."""

from __future__ import annotations

import gc
import io
import json
import re
import time
import tracemalloc

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.profile import allocated

VMS = ["cvm", "py"]


def _mode(vm, linker="c|py"):
    return graphc.Mode(linker=linker, optimizer="fast_run", vm=vm)


@pytest.mark.parametrize("vm", VMS)
def test_calls_that_raise_are_counted_and_thunks_le_vm_le_call(vm):
    x, i = T.dvector("x"), T.lscalar("i")
    f = graphc.function([x, i], T.exp(x).sum() + x[i], mode=_mode(vm), profile=True)
    t0 = time.perf_counter_ns()
    for _ in range(10):
        with pytest.raises(IndexError):
            f(np.ones(100), 500)
    f(np.ones(100), 5)
    wall = time.perf_counter_ns() - t0
    fp = f.profile.functions[0]
    f.profile.refresh()
    assert fp.calls == 11
    assert fp.thunk_ns() <= fp.vm_ns <= fp.call_ns <= wall
    out = io.StringIO()
    f.profile.summary(file=out, all_calls=True)
    text = out.getvalue()
    assert "Time in 11 calls" in text
    pct = float(text.split("Time in thunks:")[1].split("(")[1].split("%")[0])
    assert 0 < pct <= 100


@pytest.mark.parametrize("vm", VMS)
def test_view_outputs_allocate_nothing_in_the_vm_peak_and_allocated(vm):
    gc.collect()
    x = T.dmatrix("x")
    with graphc.config.change_flags(profile_memory=True):
        f = graphc.function([x], [x.T[:, :500], x[::2]], mode=_mode(vm), profile=True)
    xv = np.ones((1000, 1000))
    f(xv)
    st = f.vm.stats()
    assert st["peak_bytes"] == 0
    assert all(int(b) == 0 for outs in st["out_bytes_max"] for b in outs)
    current, peak = allocated()
    assert peak == current  # nothing beyond what functions hold between calls


def _traced_peak(f, *args) -> int:
    """The peak bytes tracemalloc sees during ``f(*args)``, above what was traced before."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = f(*args)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    del out
    return peak


@pytest.mark.parametrize("vm", VMS)
def test_vm_peak_equals_tracemalloc_with_in_place_nodes(vm):
    x = T.dvector("x")
    y = T.exp(x) + T.log(x) * x  # unfused: log * x and exp + that run in place
    mode = _mode(vm).excluding("fusion")
    with graphc.config.change_flags(profile_memory=True):
        f = graphc.function([x], y, mode=mode, profile=True)
    assert any(n.op.destroy_map for n in f.maker.fgraph.toposort())
    xv = np.ones(20000)
    peak = _traced_peak(f, xv)  # the first call: planned buffers are allocated then
    vm_peak = f.vm.stats()["peak_bytes"]
    assert vm_peak == 2 * xv.nbytes  # exp(x) and log(x); the rest reuse them
    assert vm_peak <= peak < vm_peak + 64 * 1024  # tracemalloc adds small objects


@pytest.mark.parametrize("vm", VMS)
def test_memory_numbers_hold_in_steady_state_with_a_memory_plan(vm):
    # Later calls borrow the plan's buffers (counted when lent, not re-measured): every
    # call must count the same bytes per output and reach the same peak as the first,
    # which tracemalloc sees allocate the buffers.
    x = T.dvector("x")
    y = ((T.exp(x) + 1.0) * 2.0 - T.log(x)) * x
    mode = _mode(vm).excluding("fusion", "inplace")
    with graphc.config.change_flags(profile_memory=True):
        f = graphc.function([x], y, mode=mode, profile=True)
    xv = np.ones(20000)
    first_peak = _traced_peak(f, xv)
    st1 = f.vm.stats()
    for _ in range(5):
        f(xv)
    st = f.vm.stats()
    nodes = f.maker.fgraph.toposort()
    assert len(nodes) == 6 and st["calls"].tolist() == [6] * 6
    for lo, hi in zip(st["out_bytes_min"], st["out_bytes_max"]):
        assert lo.tolist() == hi.tolist() == [xv.nbytes]  # no output is a view or in place
    assert st["peak_bytes"] == st1["peak_bytes"]
    assert st1["peak_bytes"] <= first_peak < st1["peak_bytes"] + 64 * 1024
    if vm == "cvm":
        assert st["plan_buffers"] > 0 and st["plan_bytes"] > 0  # the plan was in use


def test_profile_keeps_its_numbers_after_the_function_is_freed():
    x = T.dvector("x")

    def make():
        f = graphc.function([x], T.exp(x).sum(), profile=True)
        for _ in range(3):
            f(np.ones(10))
        return f.profile

    p = make()
    gc.collect()
    doc = json.loads(p.to_json())
    nodes = doc["functions"][0]["nodes"]
    assert nodes and all(n["calls"] == 3 for n in nodes)
    assert sum(n["ns_total"] for n in nodes) > 0
    out = io.StringIO()
    p.summary(file=out)
    assert "Time in thunks: 0.000000e+00s" not in out.getvalue()


def test_theano_profile_stats_spellings():
    from graphc.compile import ProfileStats

    assert ProfileStats is graphc.profile.ProfileStats
    s = ProfileStats(False, gpu_checks=False)
    assert s.atexit_print is False and s.functions == []
    x = T.dvector("x")
    f = graphc.function([x], x * 2, profile=s)
    f(np.ones(3))
    out = io.StringIO()
    s.print_summary(file=out)
    assert "Time in 1 calls" in out.getvalue()
    assert ProfileStats(message="train").name == "train"


def test_optimizer_section_only_when_asked():
    x = T.dvector("x")
    f = graphc.function([x], T.exp(x) * 2, profile=True)
    f(np.ones(3))
    out = io.StringIO()
    f.profile.summary(file=out)
    assert "Optimizer Profile" not in out.getvalue()
    with graphc.config.change_flags(profile_optimizer=True):
        g = graphc.function([x], T.exp(x) * 2, profile=True)
    g(np.ones(3))
    out = io.StringIO()
    g.profile.summary(file=out)
    assert "Optimizer Profile" in out.getvalue()


@pytest.mark.parametrize("vm, other", [("cvm", "py"), ("py", "cvm")])
def test_vm_kind_is_one_spelling_and_names_the_other_vm(vm, other):
    x = T.dvector("x")
    with graphc.config.change_flags(profile_memory=True):
        f = graphc.function([x], T.exp(x) * 2, mode=_mode(vm), profile=True)
    f(np.ones(3))
    fp = f.profile.functions[0]
    assert fp.vm_kind == vm
    out = io.StringIO()
    f.profile.summary(file=out, memory=True)
    assert f"Max peak memory with vm={other}" in out.getvalue()


COMPILE_SCRIPT = """
import io, json, numpy as np, graphc, graphc.tensor as T
a, b = T.dmatrix("a"), T.dmatrix("b")
f = graphc.function([a, b], T.dot(a, b) + 1, profile=True)
f(np.ones((3, 3)), np.ones((3, 3)))
out = io.StringIO()
f.profile.summary(file=out)
c = f.profile.functions[0].compile
print(json.dumps(dict(total=c.total_ns, rewrite=c.rewrite_ns, validate=c.validate_ns,
    linker=c.linker_ns, codegen=c.codegen_ns, compile=c.compile_ns, imp=c.import_ns,
    py=c.python_import_ns, prof=c.profiler_ns, other=c.other_ns(), text=out.getvalue())))
"""


def test_compile_phases_add_up_with_first_use_imports_on_their_own_line():
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT], capture_output=True, text=True,
                         check=True, timeout=300)  # fmt: skip
    d = json.loads(res.stdout.strip().splitlines()[-1])
    assert d["rewrite"] + d["linker"] + d["py"] + d["prof"] + d["other"] == d["total"]
    assert d["prof"] > 0  # the profiler's setup is part of the compile
    assert d["py"] > 0  # a fresh process imports the linker's modules on first use
    assert d["validate"] <= d["rewrite"]
    assert d["codegen"] + d["compile"] + d["imp"] <= d["linker"]
    for line in ("  Time in Function.fn.__call__:", "  Total compile time:",
                 "    graphc Optimizer time:", "       graphc validate time:",
                 "    graphc Linker time (includes C code generation/compiling):",
                 "    Python imports on first use:", "    Other compile time:",
                 ", profiler setup "):  # fmt: skip
        assert line in d["text"], line


class SlowFirstCall(graphc.graph.basic.Op):
    """Identity (a view of its input) that sleeps on its first call only (a one-off cost);
    a view, not a copy: a fresh 1.6 MB copy costs ~1 ms of page faults where the allocator
    has handed the last one back, more than the rest of the function."""

    __props__ = ()
    view_map = {0: [0]}

    def __init__(self):
        self.done = False

    def make_node(self, x):
        return graphc.graph.basic.Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        if not self.done:
            self.done = True
            time.sleep(0.3)
        output_storage[0][0] = inputs[0]


def _apply_rows(text: str) -> list[str]:
    block = text.split("\nApply\n------\n")[1].split("\n\n")[0]
    return [ln for ln in block.splitlines()[1:] if re.match(r"\s+\d+\.\d%", ln)]


def test_first_call_is_reported_apart_and_does_not_rank_first():
    x = T.dvector("x")
    y = SlowFirstCall()(x)
    f = graphc.function([x], T.exp(y).sum() + T.dot(y, y), profile=True)
    t0 = time.perf_counter_ns()
    for _ in range(5):
        f(np.ones(200_000))
    wall = time.perf_counter_ns() - t0
    out = io.StringIO()
    f.profile.summary(file=out, all_calls=False, width=300)  # wide enough for the names
    text = out.getvalue()
    # every call the program made is counted (5, by hand), and the time is theirs: more
    # than the 0.3 s sleep of the first, at most the stopwatch around the five
    m = re.search(r"Time in (\d+) calls to Function.__call__: (\S+)s", text)
    assert m is not None and int(m[1]) == 5 and 0.3 <= float(m[2]) <= wall / 1e9
    first = text.split("  First call: ")[1].split("s ")[0]
    assert float(first) >= 0.3
    assert "s); tables: the other 4 calls" in text
    rows = _apply_rows(text)
    assert not rows[0].endswith("SlowFirstCall(x)")
    assert "SlowFirstCall" in text.split("Here are tips")[1]  # the first-call tip names it
    for kw in ({}, {"all_calls": True}):  # the default counts it in the tables, as Theano
        out = io.StringIO()
        f.profile.summary(file=out, width=300, **kw)
        text = out.getvalue()
        assert "Time in 5 calls" in text and "s); the tables include it" in text
        assert _apply_rows(text)[0].endswith("SlowFirstCall(x)")
        tip = text.split("Here are tips")[1]
        assert "the tables include first calls" in tip and "all_calls=False" in tip


def test_steady_state_of_a_single_call_is_that_call():
    x = T.dvector("x")
    f = graphc.function([x], T.exp(x), profile=True)
    f(np.ones(3))
    out = io.StringIO()
    f.profile.summary(file=out)
    assert "Time in 1 calls" in out.getvalue() and "First call:" not in out.getvalue()


def test_first_call_survives_json_and_merging():
    from graphc.compile import ProfileStats

    x = T.dvector("x")
    f = graphc.function([x], T.exp(x), profile=True)
    for _ in range(3):
        f(np.ones(3))
    p = ProfileStats.from_json(f.profile.to_json())
    both = p + ProfileStats.from_json(f.profile.to_json())
    fp = both.functions[0]
    assert fp.calls == 6 and fp.first_calls == 2
    assert fp.first_call_ns == 2 * p.functions[0].first_call_ns > 0
    out = io.StringIO()
    both.summary(file=out)
    assert "Time in 6 calls" in out.getvalue() and "First calls (2)" in out.getvalue()
    assert "; the tables include them" in out.getvalue()
    out = io.StringIO()
    both.summary(file=out, all_calls=False)
    assert "; tables: the other 4 calls" in out.getvalue()


def _line() -> int:
    import inspect

    return inspect.currentframe().f_back.f_lineno


def test_source_lines_survive_fusion_and_reach_every_output():
    x = T.dvector("x")
    a, la = T.exp(x), _line()
    b, lb = T.sqrt(a) * 2, _line()
    c, lc = T.dot(b, b), _line()
    total, ls = b.sum(), _line()  # summed in the loop that makes b (b is not rewritten)
    f = graphc.function([x], [c, total], profile=True)
    nodes = f.maker.fgraph.toposort()
    fused = [n for n in nodes if "Composite" in str(n.op)]
    assert fused, "the exp/sqrt/mul chain is fused"
    want = {f"{__file__}:{la}", f"{__file__}:{lb}", f"{__file__}:{ls}"}
    assert set(fused[0].origins) == want
    dot = [n for n in nodes if "dot" in str(n.op).lower()][0]
    assert dot.origins == (f"{__file__}:{lc}",)
    for _ in range(3):
        f(np.ones(100))
    fp = f.profile.functions[0]
    by_name = {n.apply_name: n for n in fp.nodes}
    assert set(by_name[str(fused[0])].origins) == want
    doc = json.loads(f.profile.to_json())
    assert any(set(n["origins"]) == want for n in doc["functions"][0]["nodes"])
    out = io.StringIO()
    f.profile.summary(file=out, n_ops_to_print=10)  # every source line (there are four)
    text = out.getvalue()
    base = __file__.rsplit("/", 1)[-1]
    assert f"    from: {base}:{la}, {base}:{lb}, {base}:{ls}" in text
    sources = text.split("Source lines\n------------\n")[1].split("\n\n")[0]
    assert f"{base}:{lc}" in sources and f"{base}:{la}" in sources
    with graphc.config.change_flags(profile_trace=True):
        g = graphc.function([x], [c, total], profile=True)
    g(np.ones(10))
    trace = g.profile.to_chrome_trace(str(_tmp_trace()))
    args = [e["args"] for e in trace["traceEvents"] if e.get("ph") == "X" and "op" in e["args"]]
    assert any(set(a["source"]) == want for a in args)


def _tmp_trace():
    import tempfile

    return tempfile.mkstemp(suffix=".trace.json")[1]
