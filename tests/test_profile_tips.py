"""Each tip rule on its own."""

from __future__ import annotations

from profile_factory import DOT, node

from graphc.profile import FunctionProfile, ValueInfo
from graphc.profile.summaries.tips import (
    blas_spread_tip,
    first_call_tip,
    float64_tip,
    fusion_tip,
    longest_elemwise_chain,
    py_share_tip,
    py_with_c_tip,
    tips,
)

F64 = ValueInfo("float64", (3,), (8,))
F32 = ValueInfo("float32", (3,), (4,))


def fn(*nodes, excluded=()):
    return FunctionProfile("f", nodes=list(nodes), rewrites_excluded=list(excluded))


def test_float64_counts_nodes_with_float64_outputs():
    f = fn(node(0, "a", "a", outputs=[F64]), node(1, "b", "b", outputs=[F32]))
    assert float64_tip([f]) == [
        "Try the graphc flag floatX=float32 (1 Apply node(s) produce float64)"
    ]
    assert float64_tip([fn(node(0, "b", "b", outputs=[F32]))]) == []


def test_py_with_c_elsewhere_in_profile():
    py = node(0, "dot(x, y)", "dot", DOT, impl="Py")
    c = node(0, "dot(u, v)", "dot", DOT, impl="C")
    assert py_with_c_tip([fn(py)]) == []
    tip = py_with_c_tip([fn(py), fn(c)])
    assert len(tip) == 1 and tip[0].startswith("Op dot runs its Python implementation")


def test_py_with_declared_c_impl():
    py = node(0, "dot(x, y)", "dot", DOT, impl="Py", has_c_impl=True)
    assert len(py_with_c_tip([fn(py)])) == 1
    py.has_c_impl = False
    assert py_with_c_tip([fn(py)]) == []


def _chain(n: int, excluded=()):
    nodes = [node(i, f"e{i}", f"e{i}", input_slots=[i], output_slots=[i + 1]) for i in range(n)]
    return fn(*nodes, excluded=excluded)


def test_elemwise_chain_length():
    assert longest_elemwise_chain(_chain(4)) == 4
    f = _chain(4)
    f.nodes[2].op_class = DOT  # breaks the chain into 2 + 1
    assert longest_elemwise_chain(f) == 2


def test_fusion_tip_threshold_and_advice():
    assert fusion_tip([_chain(2)]) == []
    assert fusion_tip([_chain(3, excluded=["fusion"])]) == [
        "f: a chain of 3 Elemwise nodes is not fused; do not exclude the `fusion` rewrite"
    ]
    assert fusion_tip([_chain(3)]) == [
        "f: a chain of 3 Elemwise nodes is not fused; check why the `fusion` rewrite left it"
    ]


def test_py_share():
    f = fn(
        node(0, "a", "a", impl="Py", ns_total=600),
        node(1, "b", "b", impl="C", ns_total=400),
    )
    assert py_share_tip([f]) == [
        "60.0% of the time in nodes is spent in Python implementations; "
        "Ops with C implementations (linker=c|py) are usually faster"
    ]
    f.nodes[0].ns_total = 400
    f.nodes[1].ns_total = 600
    assert py_share_tip([f]) == []
    assert py_share_tip([fn()]) == []


def test_tips_runs_rules_in_order():
    f = fn(node(0, "a", "a", impl="Py", ns_total=1, outputs=[F64]))
    out = tips([f])
    assert out[0].startswith("Try the graphc flag floatX=float32")
    assert out[1].startswith("100.0% of the time")


def test_blas_spread_tip_needs_a_3x_spread_between_calls():
    steady = [1_000_000 + 10_000 * k for k in range(20)]
    assert blas_spread_tip([fn(node(0, "Gemm(w, x)", "Gemm", DOT, ns_samples=steady))]) == []
    noisy = [1_000_000] * 10 + [4_000_000] * 10  # half the calls wait 4x as long
    (tip,) = blas_spread_tip([fn(node(0, "Gemm(w, x)", "Gemm", DOT, ns_samples=noisy))])
    assert "f: Gemm(w, x) took 1.00-4.00 ms (10th-90th percentile, 4.0x)" in tip
    assert "blas_threads=1" in tip
    # not for other Ops, nor for tiny nodes or a handful of samples
    assert blas_spread_tip([fn(node(0, "add(x, y)", "add", ns_samples=noisy))]) == []
    tiny = [t // 100 for t in noisy]
    assert blas_spread_tip([fn(node(0, "Gemm(w, x)", "Gemm", DOT, ns_samples=tiny))]) == []
    few = noisy[8:13]
    assert blas_spread_tip([fn(node(0, "Gemm(w, x)", "Gemm", DOT, ns_samples=few))]) == []


def test_blas_spread_tip_names_the_widest_spread_once_for_all_nodes():
    mild = [1_000_000] * 10 + [4_000_000] * 10
    wild = [1_000_000] * 10 + [9_000_000] * 10
    f = fn(node(0, "Gemm(w, x)", "Gemm", DOT, ns_samples=mild),
           node(1, "Dot22(a, b)", "Dot22", DOT, ns_samples=wild))  # fmt: skip
    (tip,) = blas_spread_tip([f, fn(node(0, "Gemv(v, y)", "Gemv", DOT, ns_samples=mild))])
    assert tip.startswith("f: Dot22(a, b) took 1.00-9.00 ms (10th-90th percentile, 9.0x)")
    assert "(and 2 more BLAS nodes)" in tip


def test_first_call_tip_needs_20x_the_median_and_names_the_largest_once():
    steady = [50_000] * 9

    def slow_first(pos, name, first_ns):
        return node(pos, name, "add", first_calls=1, first_ns=first_ns, ns_samples=steady)

    assert first_call_tip([fn(slow_first(0, "add(x, y)", 900_000))]) == []  # under 1 ms
    assert first_call_tip([fn(slow_first(0, "add(x, y)", 1_000_000))]) == []  # exactly 20x
    (tip,) = first_call_tip([fn(slow_first(0, "add(x, y)", 2_000_000))])
    assert tip.startswith("f: the first call of add(x, y) took 2.0 ms, 40x its median;")
    (tip,) = first_call_tip([fn(slow_first(0, "add(x, y)", 2_000_000),
                                slow_first(1, "mul(x, y)", 3_000_000))])  # fmt: skip
    assert tip.startswith("f: the first call of mul(x, y) took 3.0 ms, 60x its median")
    assert "(and 1 more such nodes)" in tip
