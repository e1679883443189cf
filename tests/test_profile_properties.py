"""Invariants over random profiles: formatting, percentages, merging, JSON."""

from __future__ import annotations

import io
import re

from hypothesis import given, settings
from hypothesis import strategies as st

import graphc.profile as gp
from graphc.profile.render.legacy import diff_text, summary_text
from graphc.profile.summaries.tables import apply_table, class_table, op_table

OPS = [("add", "graphc.tensor.elemwise.Elemwise"), ("dot", "graphc.tensor.blas.Dot")]
OPS += [("sum", "graphc.tensor.math.Sum"), ("mul", "graphc.tensor.elemwise.Elemwise")]
# a float printed without a format spec (e.g. 0.001329094999988456) has many digits
RAW_FLOAT = re.compile(r"\d\.\d{7,}|\bnan\b|\binf\b", re.IGNORECASE)

ns = st.integers(0, 10**10)
value = st.builds(
    gp.ValueInfo,
    st.sampled_from(["float64", "float32", "int64"]),
    st.one_of(st.none(), st.tuples(st.integers(0, 50), st.integers(0, 50))),
    st.one_of(st.none(), st.tuples(st.integers(0, 400), st.integers(0, 8))),
)


@st.composite
def node_records(draw, position: int, n_slots: int) -> gp.NodeRecord:
    op, cls = draw(st.sampled_from(OPS))
    calls = draw(st.integers(0, 50))
    return gp.NodeRecord(
        position=position,
        apply_name=f"{op}(v{position})",
        op_name=op,
        op_class=cls,
        impl=draw(st.sampled_from(["C", "Py"])),
        calls=calls,
        ns_total=draw(ns) if calls else 0,
        ns_min=draw(st.integers(0, 10**6)),
        ns_samples=draw(st.lists(st.integers(0, 10**6), max_size=4)),
        n_below_resolution=draw(st.integers(0, calls)),
        flops_per_call=draw(st.one_of(st.none(), st.floats(0, 1e12))),
        inputs=draw(st.lists(value, max_size=2)),
        outputs=[draw(value)],
        output_kinds=[draw(st.sampled_from("civ"))],
        out_bytes_min=[draw(st.integers(0, 10**6))],
        out_bytes_max=[draw(st.integers(0, 10**7))],
        input_slots=draw(st.lists(st.integers(0, n_slots - 1), max_size=3)),
        output_slots=[n_slots + position],
    )


@st.composite
def functions(draw, name: str | None = None) -> gp.FunctionProfile:
    n = draw(st.integers(0, 6))
    nodes = [draw(node_records(i, 3)) for i in range(n)]
    opt = draw(
        st.one_of(
            st.none(),
            st.builds(
                gp.OptimizerProfile,
                st.lists(st.builds(gp.PassRecord, st.sampled_from("pq"), ns), max_size=2),
                st.lists(
                    st.builds(
                        gp.RewriteRecord,
                        st.sampled_from("rs"),
                        st.integers(0, 9),
                        st.integers(0, 9),
                        ns,
                    ),
                    max_size=2,
                ),
            ),
        )
    )
    return gp.FunctionProfile(
        name=name or draw(st.sampled_from(["f", "g"])),
        calls=draw(st.integers(0, 100)),
        call_ns=draw(ns),
        vm_ns=draw(ns),
        compile=gp.CompilePhases(total_ns=draw(ns), rewrite_ns=draw(ns), linker_ns=draw(ns)),
        allow_gc=draw(st.booleans()),
        memory_recorded=draw(st.booleans()),
        timing_supported=draw(st.booleans()),
        clock_resolution_ns=draw(st.integers(1, 1000)),
        nodes=nodes,
        output_slots=[3 + n - 1] if n else [],
        optimizer_profile=opt,
    )


stats_st = st.builds(gp.ProfileStats, st.lists(functions(), max_size=3))


def _check_text(text: str) -> None:
    assert "%%" not in text
    assert not RAW_FLOAT.search(text), RAW_FLOAT.search(text).group(0)


@settings(max_examples=150, deadline=None)
@given(stats_st, st.integers(0, 5), st.booleans(), st.booleans())
def test_summary_text_is_formatted(stats, n, memory, optimizer):
    out = io.StringIO()
    stats.summary(
        file=out, n_apply_to_print=n, n_ops_to_print=n, memory=memory, optimizer=optimizer
    )
    _check_text(out.getvalue())
    _check_text(summary_text(stats, gp.SummaryOptions(n_apply=n, n_ops=n)))


@settings(max_examples=150, deadline=None)
@given(stats_st, st.integers(0, 5))
def test_percentages(stats, n):
    for make in (class_table, op_table, apply_table):
        full = make(stats.functions, 10**6)
        cums = [r.cum_pct for r in full.rows]
        assert cums == sorted(cums)
        if full.total_ns:
            assert abs(sum(r.pct for r in full.rows) - 100.0) < 1e-6
            assert abs(cums[-1] - 100.0) < 1e-6
            # printed at one decimal: the rounded values still add up within rounding
            assert abs(sum(round(r.pct, 1) for r in full.rows) - 100.0) <= 0.05 * len(cums)
        cut = make(stats.functions, n)
        shown = sum(r.ns for r in cut.rows)
        assert shown + cut.remaining.ns == full.total_ns
        assert cut.remaining.count == max(len(full.rows) - n, 0)


@settings(max_examples=100, deadline=None)
@given(functions("f"), functions("f"))
def test_merge_adds(a, b):
    merged = gp.ProfileStats([a]) + gp.ProfileStats([b])
    same = [(x.position, x.op_name, x.apply_name) for x in a.nodes] == [
        (x.position, x.op_name, x.apply_name) for x in b.nodes
    ]
    assert len(merged.functions) == (1 if same else 2)
    assert sum(f.calls for f in merged.functions) == a.calls + b.calls
    assert sum(f.thunk_ns() for f in merged.functions) == a.thunk_ns() + b.thunk_ns()
    assert sum(f.call_ns for f in merged.functions) == a.call_ns + b.call_ns


@settings(max_examples=100, deadline=None)
@given(stats_st)
def test_json_round_trip(stats):
    assert gp.ProfileStats.from_json(stats.to_json()) == stats


@settings(max_examples=60, deadline=None)
@given(stats_st, stats_st)
def test_diff_never_crashes(a, b):
    _check_text(diff_text(a, b, gp.SummaryOptions(n_apply=3, n_ops=3)))


def test_zero_everything():
    fp = gp.FunctionProfile("z", nodes=[gp.NodeRecord(0, "a(x)", "a", "pkg.A")])
    out = io.StringIO()
    gp.ProfileStats([fp]).summary(file=out, memory=True, optimizer=True)
    text = out.getvalue()
    _check_text(text)
    assert "  Time in Function.fn.__call__: 0.000000e+00s (0.000%)" in text
    out = io.StringIO()
    gp.ProfileStats().summary(file=out)
    _check_text(out.getvalue())
