"""The profile-coloured graph: DOT always, SVG through Graphviz when installed."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.profile import FunctionProfile, NodeRecord, StorageRecord, SummaryOptions
from graphc.profile.render import graphviz as gv
from graphc.profile.render.fmt import short_origin
from graphc.profile.render.formats import RENDERERS

OPTIONS = SummaryOptions(n_apply=5, n_ops=3)


def _profiled():
    x, y, z = T.vectors("xyz")
    with graphc.config.change_flags(profile_memory=True):
        f = graphc.function([x, y, z], [T.exp(x + y) * z, x[1:]], profile=True, name="g",
                            mode=graphc.Mode().excluding("fusion"))  # fmt: skip
    v = np.random.default_rng(0).random(5000)
    for _ in range(3):
        f(v, v, v)
    return f


def test_dot_has_every_apply_node_and_edges():
    f = _profiled()
    text = gv.to_dot(f.profile)
    fp = f.profile.functions[0]
    assert text.startswith("digraph")
    for n in fp.nodes:
        assert f"f0_n{n.position} [" in text
        tooltip = gv._quote(
            "\n".join([n.apply_name] + [f"from {short_origin(o)}" for o in n.origins])
        )
        assert tooltip in text  # full name and short source lines in the tooltip
        assert n.origins and n.origins[0].startswith(__file__)
        assert re.search(rf"-> f0_n{n.position}\b", text)
    assert "%" in text and "fillcolor=" in text
    assert "out " in text  # bytes, with the memory profile on
    assert 'label="view"' in text  # x[1:] is a view of x


def test_hottest_node_is_reddest():
    nodes = [
        NodeRecord(0, "a(x)", "a", "A", calls=1, ns_total=100, input_slots=[0], output_slots=[1]),
        NodeRecord(
            1,
            "b(a)",
            "b",
            "B",
            calls=1,
            ns_total=900,
            input_slots=[1],
            output_slots=[2],
            output_kinds=["i"],
            output_aliases=[0],
        ),  # fmt: skip
    ]
    fp = FunctionProfile("h", calls=1, nodes=nodes, inputs=[StorageRecord("x", 0)],
                         output_slots=[2])  # fmt: skip
    text = gv.to_dot(fp)
    assert 'f0_n1 [shape=box, style=filled, fillcolor="#ff0000"' in text
    assert "90.0%" in text and "10.0%" in text
    assert "f0_n0 -> f0_n1 [" + gv.DESTROY_STYLE + "]" in text
    assert gv.heat_color(0.0) == "#ffffff"


def test_first_call_counts_in_the_colours_unless_all_calls_is_false():
    # a's first call took 1000 ns, its next four 10 ns each; b took 50 ns every time
    nodes = [
        NodeRecord(0, "a(x)", "a", "A", calls=5, ns_total=1040, first_calls=1, first_ns=1000,
                   input_slots=[0], output_slots=[1]),
        NodeRecord(1, "b(a)", "b", "B", calls=5, ns_total=250, first_calls=1, first_ns=50,
                   input_slots=[1], output_slots=[2]),
    ]  # fmt: skip
    fp = FunctionProfile("h", calls=5, first_calls=1, first_call_ns=2000, first_vm_ns=1500,
                         call_ns=3000, vm_ns=2500, nodes=nodes,
                         inputs=[StorageRecord("x", 0)], output_slots=[2])  # fmt: skip
    text = gv.to_dot(fp, all_calls=False)
    assert 'f0_n1 [shape=box, style=filled, fillcolor="#ff0000"' in text  # b: 200 of 240 ns
    assert "83.3%" in text and "16.7%" in text
    assert "h (4 calls, 240 ns in nodes, first call left out)" in text
    for text in (gv.to_dot(fp), gv.to_dot(fp, all_calls=True)):  # every call by default
        assert 'f0_n0 [shape=box, style=filled, fillcolor="#ff0000"' in text  # a: 1040 ns
        assert "80.6%" in text and "19.4%" in text
        assert "h (5 calls, 1.3 us in nodes)" in text


def test_svg_or_clear_error(tmp_path, monkeypatch):
    f = _profiled()
    out = tmp_path / "g.svg"
    if shutil.which("dot"):
        svg = RENDERERS["svg"].write(f.profile, out, OPTIONS)
        assert "<svg" in svg
        for n in f.profile.functions[0].nodes:
            assert f"f0_n{n.position}" in svg
    monkeypatch.setattr(gv.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="Graphviz 'dot' was not found"):
        RENDERERS["svg"].write(f.profile, out, OPTIONS)
