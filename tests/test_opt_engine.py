"""Optimizer names, tag selection, warnings, the report, verbose output, determinism."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile.mode import Mode
from graphc.graph.fg import FunctionGraph
from graphc.opt import RewriteReport, rewrite_graph
from graphc.opt.passes import enabled_rewrites
from graphc.opt.pipeline import PIPELINE
from graphc.tensor.elemwise import Elemwise


def _graph():
    x, y = T.dvector("x"), T.dvector("y")
    return [x, y], [(T.exp(x) * y + T.exp(x) * y) ** T.constant(np.full(1, 2.0))]


def _compile(optimizer, *excluding, including=()):
    ins, outs = _graph()
    mode = Mode(linker="py", optimizer=optimizer).excluding(*excluding).including(*including)
    return graphc.function(ins, outs, mode=mode)


def test_optimizer_names_and_values():
    v = np.linspace(-1, 1, 5)
    sizes = {}
    for opt in ("None", "merge", "fast_compile", "fast_run"):
        f = _compile(opt)
        np.testing.assert_allclose(f(v, v)[0], (2 * np.exp(v) * v) ** 2)
        sizes[opt] = len(f.maker.fgraph.toposort())
        report = f.maker.rewrite_report
        assert isinstance(report, RewriteReport)
        if opt == "None":
            assert report.passes == [] and report.applied == []
    assert sizes["None"] == 6 and sizes["merge"] == 4
    assert sizes["fast_run"] == 1  # everything fused into one Composite
    assert sizes["fast_compile"] <= sizes["merge"]


def test_report_fields():
    rep = _compile("fast_run").maker.rewrite_report
    assert [p for p, _ in rep.passes] == [s.name for s in PIPELINE if s.name in dict(rep.passes)]
    assert all(ns >= 0 for _, ns in rep.passes)
    names = {r[0] for r in rep.rewrites}
    assert {"merge", "fuse_elemwise", "pow_specialize"} <= names
    for _name, tried, applied, ns in rep.rewrites:
        assert tried >= applied >= 0 and ns >= 0
    assert rep.applied.count("merge") >= 1 and "fuse_elemwise" in rep.applied
    assert rep.validate_ns >= 0


def test_excluding_a_tag_removes_every_rewrite_carrying_it():
    on = enabled_rewrites("fast_run")
    off = enabled_rewrites("fast_run", excluding=("canonicalize",))
    assert "flatten_add_mul" in on and "flatten_add_mul" not in off
    assert "collect_constants" not in off and "fuse_elemwise" in off
    assert enabled_rewrites("None") == set()
    assert enabled_rewrites("merge") == {"merge"}
    assert "fuse_elemwise" not in enabled_rewrites("fast_compile")
    assert "fuse_elemwise" in enabled_rewrites("fast_compile", including=("fusion",))
    assert "pow_specialize" not in enabled_rewrites("fast_run", excluding=("pow_specialize",))


def test_requiring_unknown_tag_raises_and_unknown_flags_warn_once():
    with pytest.raises(ValueError, match="does not exist"):
        enabled_rewrites("fast_run", requiring=("no_such_tag",))
    with pytest.raises(ValueError):
        enabled_rewrites("fast_run", excluding=("fusion",), requiring=("fusion",))
    assert "fuse_elemwise" in enabled_rewrites("None", requiring=("fusion",))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        enabled_rewrites("fast_run", excluding=("no_such_rewrite_xyz",))
        enabled_rewrites("fast_run", excluding=("no_such_rewrite_xyz",))
        enabled_rewrites("fast_run", including=("fusion",))
    msgs = [str(w.message) for w in rec]
    assert len([m for m in msgs if "no_such_rewrite_xyz" in m]) == 1 and len(msgs) == 1


def test_verbose_prints_replacements(capsys):
    old = graphc.config.optimizer_verbose
    graphc.config.optimizer_verbose = True
    try:
        _compile("fast_run")
    finally:
        graphc.config.optimizer_verbose = old
    out = capsys.readouterr().out
    assert "rewrite merge: " in out and "rewrite fuse_elemwise: " in out and " -> " in out


def test_rewrite_graph_direct_and_idempotent():
    ins, outs = _graph()
    fg = FunctionGraph(ins, outs)
    rewrite_graph(fg, "fast_run")
    first = [str(n) for n in fg.toposort()]
    rep = rewrite_graph(fg, "fast_run")
    assert [str(n) for n in fg.toposort()] == first and rep.applied == []


def test_deterministic_compilation():
    x, y, z = T.dmatrix("x"), T.dvector("y"), T.dscalar("z")
    e = T.exp(x) * y + T.tanh(x).sum(axis=0) * z - T.dot(x, y).dimshuffle(0, "x") ** 2
    outs = [e, e.sum(), T.log(1 + T.exp(e)).max()]
    from graphc.printing import debugprint

    seqs, prints = set(), set()
    for _ in range(10):
        f = graphc.function([x, y, z], outs, mode=Mode(linker="py"))
        seqs.add(tuple(str(n) for n in f.maker.fgraph.toposort()))
        prints.add(debugprint(f, file="str", print_destroy_map=True))
    assert len(seqs) == 1 and len(prints) == 1
    assert any("Composite" in s for s in next(iter(seqs)))
    assert "d={" in next(iter(prints))  # in-place nodes are part of the printed graph


def test_elemwise_only_visits_candidates():
    rep = _compile("fast_run").maker.rewrite_report
    tried = {r[0]: r[1] for r in rep.rewrites}
    # pow_specialize tracks only pow: tried once per pow node per traversal
    assert tried["pow_specialize"] <= 3
    assert not any(
        isinstance(op, Elemwise) and op.scalar_op.name == "pow"
        for op in (n.op for n in _compile("fast_run").maker.fgraph.toposort())
    )


def test_replace_all_validate_leaves_no_undo_log_attached():
    import graphc.tensor as T
    from graphc.graph.fg import FunctionGraph

    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x) + 0.0])
    n = len(fg.features)
    out = fg.outputs[0]
    fg.replace_all_validate([(out, T.exp(fg.inputs[0]))], reason="test")
    assert len(fg.features) == n


def test_pipeline_declares_every_pass_and_its_rule_modules():
    import graphc.scan_module  # noqa: F401 - registers the scan rewrites
    from graphc.opt.engine import PASSES

    assert list(PASSES) == [s.name for s in PIPELINE]
    for spec in PIPELINE:
        p = PASSES[spec.name]
        assert (p.kind, p.reverse) == (spec.kind, spec.reverse)
        # (tests register rewrites of their own: only graphc's modules are declared)
        modules = {rw.fn.__module__.removeprefix("graphc.") for rw in p.rewrites
                   if rw.fn.__module__.startswith("graphc.")}  # fmt: skip
        assert modules == set(spec.modules), spec.name


def test_registering_into_an_undeclared_pass_raises():
    from graphc.opt.engine import REWRITES, register

    with pytest.raises(ValueError, match="no pass 'no_such_pass' in the pipeline"):
        register("no_such_pass", "fast_run", name="never_registered")(lambda fg, node: None)
    assert "never_registered" not in REWRITES


def test_a_rewrite_defined_twice_differently_raises_and_the_first_stays():
    from graphc.opt import engine
    from graphc.opt.merge import constant_fold

    first = engine.REWRITES["constant_fold"]
    n = len(engine.PASSES["merge2"].rewrites)
    with pytest.raises(ValueError, match="rewrite 'constant_fold' is already defined"):
        engine.register("merge2", "fast_run", name="constant_fold")(lambda fg, node: None)
    assert engine.REWRITES["constant_fold"] is first and first.fn is constant_fold
    assert len(engine.PASSES["merge2"].rewrites) == n


def test_a_pass_declared_twice_in_the_pipeline_raises(monkeypatch):
    from graphc.opt import engine
    from graphc.opt.pipeline import PassSpec

    twice = (*PIPELINE, PassSpec("merge1", "equilibrium", ("opt.merge",)))
    monkeypatch.setattr(engine, "PIPELINE", twice)
    with pytest.raises(ValueError, match="pass 'merge1' is declared twice"):
        engine._declared_passes()
