"""debugprint, pprint, to_dot and render_dot."""

from __future__ import annotations

import io
import shutil

import pytest

import graphc.tensor as gt
from graphc import printing
from graphc.graph.basic import Apply
from graphc.graph.fg import FunctionGraph
from graphc.printing import debugprint, dprint, pprint, render_dot, to_dot
from graphc.tensor.subtensor import inc_subtensor


def _graph():
    x, y = gt.matrix("x"), gt.vector("y")
    m = gt.mul(x, y)
    z = gt.add(gt.exp(m), m)
    z.name = "z"
    return x, y, m, z


def test_debugprint_tree_and_shared_subgraph():
    x, y, m, z = _graph()
    text = debugprint(z, file="str")
    assert text == (
        "Elemwise{add,no_inplace} [id A] 'z'\n"
        " |Elemwise{exp,no_inplace} [id B] ''\n"
        " | |Elemwise{mul,no_inplace} [id C] ''\n"
        " |   |x [id D]\n"
        " |   |DimShuffle{x,0} [id E] ''\n"
        " |     |y [id F]\n"
        " |Elemwise{mul,no_inplace} [id C] ''\n"
    )
    assert dprint is debugprint


def test_debugprint_options():
    x, y, m, z = _graph()
    typed = debugprint(z, file="str", print_type=True, ids="int")
    assert typed.splitlines()[0] == "Elemwise{add,no_inplace} [id 0] 'z' <Matrix(float64)>"
    assert " |   |x [id 3] <Matrix(float64)>" in typed
    shallow = debugprint(z, file="str", depth=2)
    assert shallow.splitlines() == [
        "Elemwise{add,no_inplace} [id A] 'z'",
        " |Elemwise{exp,no_inplace} [id B] ''",
        " |Elemwise{mul,no_inplace} [id C] ''",
    ]
    plain = debugprint(z, file="str", ids="")
    assert "[id" not in plain and plain.splitlines()[3] == " |   |x"
    by_id = debugprint(z, file="str", ids="id")
    assert f"[id {id(x)}]" in by_id
    with pytest.raises(ValueError, match="ids"):
        debugprint(z, ids="bogus")


def test_debugprint_done_dict_is_shared_between_calls():
    x, y, m, z = _graph()
    done: dict = {}
    first = debugprint(m, file="str", done=done)
    second = debugprint(z, file="str", done=done)
    assert first.splitlines()[0] == "Elemwise{mul,no_inplace} [id A] ''"
    assert "Elemwise{mul,no_inplace} [id A]" in second
    assert second.splitlines()[0].endswith("[id E] 'z'")


def test_debugprint_inputs_lists_applies_files_and_functions():
    x, y, m, z = _graph()
    lst = debugprint([m, y], file="str")
    assert lst.splitlines()[-1] == "y [id D]"
    assert debugprint(m.owner, file="str") == debugprint(m, file="str")
    assert isinstance(m.owner, Apply)
    buf = io.StringIO()
    assert debugprint(z, file=buf) is buf
    assert buf.getvalue() == debugprint(z, file="str")
    fg = FunctionGraph([x, y], [z, m])

    class Compiled:  # anything that shows its FunctionGraph, as a compiled function does
        fgraph = fg

    text = debugprint(fg, file="str")
    lines = text.splitlines()
    order = fg.toposort()
    assert lines[0] == f"Elemwise{{add,no_inplace}} [id A] 'z' {order.index(fg.outputs[0].owner)}"
    assert lines[-1].startswith("Elemwise{mul,no_inplace} [id C] ''")
    assert debugprint(Compiled(), file="str") == text
    with pytest.raises(TypeError, match="cannot print"):
        debugprint(3)


def test_debugprint_destroy_and_view_maps():
    x = gt.matrix("x")
    out = inc_subtensor(x[0], gt.vector("v"), inplace=True)
    text = debugprint([out, x[0]], file="str", print_destroy_map=True, print_view_map=True)
    first = text.splitlines()[0]
    assert first.startswith("IncSubtensor{InplaceInc;0} [id A]") and "d={0: [0]}" in first
    assert "Subtensor{0} [id D] '' v={0: [0]}" in text


def test_debugprint_stdout(capsys):
    x, y, m, z = _graph()
    debugprint(m)
    assert capsys.readouterr().out.startswith("Elemwise{mul,no_inplace} [id A]")


def test_pprint():
    x, y = gt.matrix("x"), gt.matrix("y")
    two = gt.constant(2.0)
    assert pprint(x + y * two) == "(x + (y * 2.0))"
    assert pprint(gt.exp(x)) == "exp(x)"
    assert pprint(gt.sum(x, axis=1)) == "sum(x, axis=[1])"
    assert pprint(x.T) == "x.T"
    assert pprint((x + y).T) == "(x + y).T"
    assert pprint(-x) == "-x"
    assert pprint(x[1:, 0]) == "x[1:, 0]"
    i = gt.lscalar("i")
    assert pprint(x[i, ::-1]) == "x[i, ::-1]"
    assert pprint(x[[0, 1]]) == "x[[0, 1]]"
    assert pprint(gt.set_subtensor(x[0], y[1])) == "set_subtensor(x[0], y[1])"
    assert pprint(gt.cast(x, "float32")) == "cast(x, 'float32')"
    assert pprint(x.shape[0]) == "x.shape[0]"
    assert pprint([x, y]) == "x\ny"
    assert pprint(gt.maximum(x, y)) == "maximum(x, y)"
    with pytest.raises(TypeError):
        pprint(3)


def test_to_dot_structure_and_edge_styles():
    x = gt.matrix("x")
    v = gt.vector("v")
    view = x[0]
    out = inc_subtensor(view, v, inplace=True)
    dot = to_dot([out, view])
    assert dot.startswith("digraph G {") and dot.rstrip().endswith("}")
    lines = dot.splitlines()
    applies = [ln for ln in lines if "shape=ellipse" in ln]
    assert len(applies) == 2
    boxes = [ln for ln in lines if "shape=box" in ln]
    assert len(boxes) == 4  # x, v, x[0], out
    assert any("destroyed" in ln and "color=red" in ln for ln in lines)
    assert any("view" in ln and "style=dashed" in ln for ln in lines)
    assert sum("->" in ln for ln in lines) == 2 + 3  # Subtensor: 1 in, 1 out; Inc: 2 in, 1 out
    assert 'label="x\\nMatrix(float64)"' in dot
    fg = FunctionGraph([x, v], [out, view])
    assert to_dot(fg).count("shape=ellipse") == 2


def test_render_dot_without_graphviz(monkeypatch, tmp_path):
    monkeypatch.setattr(printing.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match=r"Graphviz's `dot` .*not found.*install graphviz"):
        render_dot("digraph G {}", str(tmp_path / "g.svg"))


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_render_dot_with_graphviz(tmp_path):
    x, y, m, z = _graph()
    path = render_dot(to_dot(z), str(tmp_path / "g.svg"))
    assert (tmp_path / "g.svg").read_text().lstrip().startswith("<")
    assert path.endswith("g.svg")


def test_pprint_names_a_repeated_subterm_once():
    x = gt.vector("x")
    s = x + 1
    assert pprint(s * s) == "(%0 * %0)\nwhere %0 = (x + 1)"
    assert pprint(x * x) == "(x * x)"  # a name is short enough to repeat


def test_pprint_of_a_dag_grows_linearly_with_depth():
    x = gt.vector("x")
    y = x
    sizes = []
    for _ in range(30):  # a tree expansion would be 2**30 times the first layer
        y = y * gt.nnet.sigmoid(y)
        sizes.append(len(pprint(y)))
    assert sizes[-1] < 30 * 2 * sizes[0]
    assert pprint(y).splitlines()[0] == "(%28 * sigmoid(%28))"


def test_pprint_rules_are_registered_by_op_class():
    class Twice(gt.Elemwise.__mro__[1]):  # a new Op class, printed by its own rule
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

    x = gt.vector("x")
    node = Twice().make_node(x)
    assert pprint(node.outputs[0]) == "Twice(x)"  # the default rule
    printing.register_pprint(Twice)(lambda op, node, v, args: f"2*{args[0]}")
    try:
        assert pprint(node.outputs[0]) == "2*x"
    finally:
        del printing.PPRINT_RULES[Twice]
