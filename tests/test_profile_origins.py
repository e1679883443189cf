"""Source lines through rewrites and helpers, checked against the lines of this file."""

from __future__ import annotations

import inspect
import io

import numpy as np

import graphc
import graphc.tensor as T


def _line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _at(line: int) -> str:
    return f"{__file__}:{line}"


def test_gemm_keeps_the_products_line_and_merge_keeps_both_duplicates():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    w = graphc.shared(np.zeros((30, 30)), name="w")
    prod, lp = T.dot(x, y), _line()
    upd, lu = w - 0.1 * prod, _line()
    f = graphc.function([x, y], [], updates=[(w, upd)], profile=True)
    (gemm,) = [n for n in f.profile.functions[0].nodes if "Gemm" in n.op_name]
    assert set(gemm.origins) == {_at(lp), _at(lu)}

    a, la = T.exp(x), _line()
    b, lb = T.exp(x), _line()
    g = graphc.function([x], [a, b], mode=graphc.Mode().excluding("fusion"), profile=True)
    (exp,) = [n for n in g.profile.functions[0].nodes if "exp" in n.op_name]
    assert set(exp.origins) == {_at(la), _at(lb)}


def _layer(h, w):
    return T.tanh(T.dot(h, w)), _line()  # the helper's body line


def test_two_layers_built_by_one_helper_show_their_callers():
    x = T.dmatrix("x")
    w1, w2 = T.dmatrix("w1"), T.dmatrix("w2")
    (h1, body), c1 = _layer(x, w1), _line()
    (h2, _), c2 = _layer(h1, w2), _line()
    f = graphc.function([x, w1, w2], h2, mode=graphc.Mode().excluding("fusion"), profile=True)
    rng = np.random.default_rng(0)
    f(rng.normal(size=(4, 5)), rng.normal(size=(5, 5)), rng.normal(size=(5, 5)))
    dots = [n for n in f.profile.functions[0].nodes if "Dot" in n.op_name]
    want = {f"{_at(body)} <- {_at(c1)}", f"{_at(body)} <- {_at(c2)}"}
    assert {o for n in dots for o in n.origins} == want
    buf = io.StringIO()
    f.profile.summary(file=buf, width=200)
    text = buf.getvalue()
    name = __file__.rsplit("/", 1)[-1]
    for caller in (c1, c2):  # both chains printed, as short paths
        assert f"{name}:{body} <- {name}:{caller}" in text
