"""The noise-aware profile comparison: bootstrap intervals, unstable entries, coverage."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphc.profile import FunctionProfile, ProfileStats
from graphc.profile.cli import main
from graphc.profile.render.compare import render
from graphc.profile.summaries.compare import (
    Options,
    aligned_sum,
    compare,
    compare_runs,
    median_ratio_interval,
    paired_ratio_interval,
    t_quantile,
)
from tests.profile_factory import node


def _fn(name: str, scales: dict[str, float], n: int = 60, seed: int = 0, extra=()):
    """A function of an add and a mul node; per-call times around 100 us x scale."""
    rng = np.random.default_rng(seed)
    nodes = []
    for pos, op in enumerate(["add", "mul", *extra]):
        s = rng.normal(100_000 * scales.get(op, 1.0), 3_000, n).astype(int).tolist()
        nodes.append(node(pos, f"{op}(x, y)", op, calls=n, ns_total=sum(s), ns_samples=s))
    return FunctionProfile(name=name, calls=n, nodes=nodes)


def _entry(report, kind, label):
    (e,) = [e for e in report.entries if e.kind == kind and e.label == label]
    return e


def test_interval_brackets_the_true_ratio():
    rng = np.random.default_rng(1)
    base = rng.normal(1000, 50, 200)
    ratio, low, high = median_ratio_interval(base, 1.5 * rng.normal(1000, 50, 200))
    assert low < 1.5 < high and low < ratio < high
    assert high - low < 0.1


def test_identical_distributions_are_same():
    rep = compare([_fn("f", {}, seed=1)], [_fn("f", {}, seed=2)], Options(threshold=1.2))
    assert not rep.failed
    assert {e.verdict for e in rep.entries} == {"same"}


def test_more_work_fails_and_is_named():
    rep = compare([_fn("f", {})], [_fn("f", {"mul": 1.6}, seed=3)], Options(threshold=1.3))
    assert rep.failed
    names = {(e.kind, e.label) for e in rep.slower}
    assert ("op", "mul") in names and ("apply", "f: 1 mul(x, y)") in names
    assert ("op", "add") not in names
    fn = _entry(rep, "function", "f")  # 1.3x of the function: interval not wholly above
    assert fn.verdict != "slower" and 1.2 < fn.ratio < 1.4
    assert "FAILED: op mul:" in render(rep)


def test_too_few_samples_is_unstable_not_passed_or_failed():
    rep = compare([_fn("f", {}, n=3)], [_fn("f", {"add": 5.0}, n=3)], Options(threshold=1.3))
    e = _entry(rep, "op", "add")
    assert e.verdict == "unstable" and not e.failed
    assert "NOT JUDGED:" in render(rep) and "op add" in render(rep)


def test_spread_samples_are_unstable():
    rng = np.random.default_rng(4)
    wide = [_fn("f", {})]
    for nd in wide[0].nodes:
        # the same median as the other side (100 us), spread 1.5 in log: the interval
        # holds 1 but is too wide to call the two the same
        nd.ns_samples = rng.lognormal(np.log(100_000), 1.5, 40).astype(int).tolist()
    rep = compare(wide, [_fn("f", {})], Options(threshold=1.2))
    assert _entry(rep, "op", "add").verdict == "unstable"


def test_added_node_counts_toward_its_function():
    rep = compare([_fn("f", {})], [_fn("f", {}, extra=("exp", "log"))], Options(threshold=1.3))
    fn = _entry(rep, "function", "f")
    assert fn.verdict == "slower" and 1.8 < fn.ratio < 2.2
    exp = _entry(rep, "op", "exp")
    assert exp.verdict == "unmatched" and exp.n_base == 0 and exp.n_new == 60
    assert "unmatched (new only) exp" in render(rep)
    assert rep.coverage.matched_share == 1.0


def test_aligned_sum_uses_the_common_tail():
    assert aligned_sum([[1, 2, 3], [10, 20], []]) == [12, 23]


def test_per_process_medians():
    base = [[_fn("f", {}, seed=s)] for s in range(4)]
    drift = [[_fn("f", {"add": d, "mul": d}, seed=9 + s)] for s, d in enumerate([1.0, 1.1, 0.95])]
    rep = compare_runs(base, drift, Options(threshold=1.2))
    e = _entry(rep, "function", "f")
    assert (e.n_base, e.n_new) == (4, 3) and e.verdict == "same"
    slow = [[_fn("f", {"add": 1.6, "mul": 1.6}, seed=20 + s)] for s in range(3)]
    assert _entry(compare_runs(base, slow, Options(threshold=1.3)), "function", "f").failed


@pytest.fixture
def two_files(tmp_path):
    def write(name, fps):
        path = tmp_path / f"{name}.json"
        ProfileStats(fps).save(path)
        return str(path)

    return write


def test_nothing_in_common_exits_non_zero(two_files, capsys):
    a = two_files("a", [_fn("train", {})])
    b = two_files("b", [_fn("train_step", {})])
    assert main(["diff", a, b]) == 1
    out = capsys.readouterr().out
    assert "Matched: 0%" in out and "--rename train=train_step" in out
    assert main(["diff", a, b, "--rename", "train=train_step", "--fail-above", "1.2"]) == 0


def test_changed_graph_exits_non_zero(two_files, capsys):
    a = two_files("a", [_fn("f", {})])
    other = _fn("f", {})
    for nd in other.nodes:  # other Ops of another class: nothing to match them by
        nd.op_name, nd.op_class = "composite", "graphc.tensor.other.Other"
    b = two_files("b", [other])
    assert main(["diff", a, b, "--fail-above", "3"]) == 1
    assert "the graphs changed" in capsys.readouterr().out


def test_json_report(two_files, tmp_path, capsys):
    a = two_files("a", [_fn("f", {})])
    b = two_files("b", [_fn("f", {"add": 2.0}, seed=5)])
    out = tmp_path / "r.json"
    assert main(["diff", a, b, "--fail-above", "1.3", "--json", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["failed"] and doc["coverage"]["matched_share"] == 1.0
    (add,) = [e for e in doc["entries"] if e["kind"] == "op" and e["label"] == "add"]
    assert add["verdict"] == "slower" and add["low"] > 1.3 and add["failed"]
    capsys.readouterr()


def test_bad_rename_and_missing_base_are_clear_errors(two_files):
    a = two_files("a", [_fn("f", {})])
    with pytest.raises(SystemExit, match="--rename wants OLD=NEW"):
        main(["diff", a, a, "--rename", "f"])
    with pytest.raises(SystemExit, match="--base-tree DIR or --base-cmd"):
        main(["ab", "workload.py"])


@settings(max_examples=25, deadline=None)
@given(
    scale=st.floats(0.2, 5.0),
    n_base=st.integers(5, 60),
    n_new=st.integers(5, 60),
    seed=st.integers(0, 2**16),
)
def test_interval_scales_with_the_data(scale, n_base, n_new, seed):
    """new = scale x base (up to noise): the ratio is near scale, inside its interval, and
    the judgement is symmetric (swapping sides inverts the interval)."""
    rng = np.random.default_rng(seed)
    base = rng.lognormal(10, 0.05, n_base)
    new = scale * rng.lognormal(10, 0.05, n_new)
    ratio, low, high = median_ratio_interval(base, new)
    assert low <= ratio <= high
    assert abs(np.log(ratio / scale)) < 0.15
    r2, low2, high2 = median_ratio_interval(new, base)
    assert r2 == pytest.approx(1 / ratio)
    assert low2 <= 1 / ratio <= high2


def test_interval_wholly_above_one_is_never_same():
    """Per-process medians where every new one is above every base one (so any interval of
    the ratio lies above 1) but by less than the 1.5x gate: slower, below the gate."""
    base = [[_fn("f", {}, seed=s)] for s in range(4)]
    new = [[_fn("f", {"mul": k}, seed=10 + s)] for s, k in enumerate([1.25, 1.3, 1.35, 1.3])]
    worst_base = max(np.median(r[0].nodes[1].ns_samples) for r in base)
    best_new = min(np.median(r[0].nodes[1].ns_samples) for r in new)
    assert best_new > worst_base  # the hand check: no overlap, the ratio excludes 1
    rep = compare_runs(base, new)  # default options: the 1.5x gate
    e = _entry(rep, "apply", "f: 1 mul(x, y)")
    assert e.low > 1 and e.verdict == "slower, below the gate" and not rep.failed
    assert "SLOWER, BELOW THE GATE: " in render(rep) and "f: 1 mul(x, y) (1.3" in render(rep)


def _renamed(fp: FunctionProfile, position: int, scale: float = 1.0) -> FunctionProfile:
    """``fp`` with one node's Op renamed (same class, line and shapes) and ``scale`` x its time."""
    import copy

    out = copy.deepcopy(fp)
    nd = out.nodes[position]
    nd.op_name = nd.op_name + "_v2"
    nd.apply_name = f"{nd.op_name}(x, y)"
    nd.ns_samples = [int(s * scale) for s in nd.ns_samples]
    nd.ns_total = sum(nd.ns_samples)
    return out


def _with_lines(fp: FunctionProfile) -> FunctionProfile:
    from graphc.profile import ValueInfo

    for nd in fp.nodes:
        nd.origins = [f"model.py:{10 + nd.position}"]
        nd.outputs = [ValueInfo("float64", (1000,))]
    return fp


@pytest.mark.parametrize("scale, failed", [(1.0, False), (5.0, True)])
def test_a_renamed_node_is_matched_by_class_line_and_shapes(scale, failed):
    base = [[_with_lines(_fn("f", {}, seed=s))] for s in range(4)]
    new = [[_renamed(_with_lines(_fn("f", {}, seed=10 + s)), 1, scale)] for s in range(4)]
    rep = compare_runs(base, new)
    (e,) = [e for e in rep.entries if e.kind == "apply" and "mul(x, y)" in e.label]
    assert e.label == "f: 1 mul(x, y) -> 1 mul_v2(x, y)"
    assert rep.coverage.matched_share == 1.0 and rep.failed is failed
    assert abs(e.ratio - scale) < 0.1 * scale  # the medians were scaled by exactly `scale`
    assert e.verdict == ("slower" if failed else "same")


def test_a_fused_node_is_reported_unmatched_not_compared_with_a_part():
    """Two nodes of one class fused into one: the fused node is alike to both, so neither
    pair is compared; both sides' nodes are listed as unmatched."""
    from graphc.profile.summaries.diff import match_nodes

    base = _with_lines(_fn("f", {}))
    fused = _with_lines(_fn("f", {}))
    fused.nodes = [fused.nodes[0]]
    fused.nodes[0].op_name, fused.nodes[0].apply_name = "add_mul", "add_mul(x, y)"
    fused.nodes[0].origins = ["model.py:10", "model.py:11"]
    pairs = match_nodes(base.nodes, fused.nodes)
    named = {(x.op_name if x else "-", y.op_name if y else "-") for x, y in pairs}
    assert named == {("-", "add_mul"), ("add", "-"), ("mul", "-")}
    text = render(compare([base], [fused]))
    assert "unmatched (base only) f: 0 add(x, y)" in text and "NOT MATCHED: 3 Apply" in text


@pytest.mark.parametrize(
    "case, code",
    [("identical", 0), ("renamed", 0), ("renamed 5x", 1), ("slow 1.6x", 1)],
)
def test_diff_at_default_settings(two_files, capsys, case, code):
    """graphc-prof diff with no option: the 1.5x gate. The 1.6x node's samples are its base
    samples times 1.6 (so its interval lies around 1.6, above the gate)."""
    base = _with_lines(_fn("f", {}))
    new = {
        "identical": lambda: _with_lines(_fn("f", {}, seed=1)),
        "renamed": lambda: _renamed(_with_lines(_fn("f", {}, seed=1)), 1),
        "renamed 5x": lambda: _renamed(_with_lines(_fn("f", {}, seed=1)), 1, 5.0),
        "slow 1.6x": lambda: _with_lines(_fn("f", {"mul": 1.6}, seed=1)),
    }[case]()
    assert main(["diff", two_files("a", [base]), two_files("b", [new])]) == code
    out = capsys.readouterr().out
    assert "Matched: 100% of the base time" in out
    if code:
        assert "FAILED: apply f: 1 mul(x, y)" in out
    else:
        assert "OK: nothing slower than 1.5x beyond the noise" in out


def test_t_quantiles_are_students():
    # two-sided 95% and 99% points of Student's t (printed tables)
    table = {(1, 0.95): 12.706, (2, 0.95): 4.303, (3, 0.95): 3.182, (7, 0.95): 2.365,
             (30, 0.95): 2.042, (3, 0.99): 5.841}  # fmt: skip
    for (df, conf), t in table.items():
        assert t_quantile(conf, df) == pytest.approx(t, abs=1e-3)


def test_paired_ratios_cancel_a_drift_the_pair_shares():
    base = [100.0, 200.0, 400.0, 800.0]  # the machine got slower and slower
    new = [110.0, 218.0, 444.0, 872.0]  # 1.10, 1.09, 1.11, 1.09 of its pair
    ratio, low, high = paired_ratio_interval(base, new)
    assert 1.08 < low < ratio < high < 1.12
    r = np.log([1.10, 1.09, 1.11, 1.09])  # by hand: mean +/- t(3) sd / 2
    half = 3.182 * np.std(r, ddof=1) / 2
    assert (low, high) == pytest.approx((np.exp(r.mean() - half), np.exp(r.mean() + half)),
                                        rel=1e-4)  # fmt: skip
    runs_a = [[_fn("f", {"add": x / 100, "mul": x / 100}, seed=k)] for k, x in enumerate(base)]
    runs_b = [[_fn("f", {"add": x / 100, "mul": x / 100}, seed=9 + k)] for k, x in enumerate(new)]
    rep = compare_runs(runs_a, runs_b)
    assert {e.verdict for e in rep.entries} == {"slower, below the gate"}
    unpaired = compare_runs(runs_a, runs_b, Options(paired=False))
    assert {e.verdict for e in unpaired.entries} == {"unstable"}  # the drift hides it
