"""Programs in the style of the classic Theano tutorials (tests/programs/rand_*.py), written
against Theano's API with ``import graphc as theano``: each runs and its cost falls."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture
def load(monkeypatch):
    monkeypatch.syspath_prepend(str(PROGRAMS))

    def run(name: str) -> dict:
        sys.modules.pop(name, None)
        return runpy.run_path(str(PROGRAMS / f"{name}.py"), run_name=name)

    return run


def falls(costs, by: float) -> bool:
    """Ends at most ``by`` times its start, and the second half is below the first."""
    half = len(costs) // 2
    return costs[-1] <= by * costs[0] and max(costs[half:]) < min(costs[:half]) + 1e-12


def test_denoising_autoencoder_cost_falls(load):
    costs = load("rand_denoising_autoencoder")["main"](training_epochs=8)
    assert len(costs) == 8 and falls(costs, 0.6), costs


def test_stacked_autoencoder_pretraining_and_finetuning_costs_fall(load):
    pre, fine, (err_before, err_after) = load("rand_stacked_autoencoder")["main"](
        pretraining_epochs=4, finetune_epochs=8
    )
    for layer_costs in pre:
        assert layer_costs[-1] < layer_costs[0], pre
    assert falls(fine, 0.5), fine
    assert err_after < err_before / 2, (err_before, err_after)


def test_random_numbers_tutorial_page(load, capsys):
    costs = load("rand_random_numbers")["main"]()
    assert falls(costs, 0.3), costs[:: len(costs) // 5]
    assert "training accuracy" in capsys.readouterr().out


def test_more_examples_tutorial_page(load):
    costs = load("rand_more_examples")["main"]()
    assert falls(costs, 0.6), costs[:: len(costs) // 5]


def test_derivatives_conditions_and_debugging_tutorial_pages(load, capsys):
    costs = load("rand_tutorial_pages")["main"]()
    assert falls(costs, 0.05), costs[:: len(costs) // 5]
    out = capsys.readouterr().out
    assert "this is a very important value __str__ = [1. 2. 3.]" in out
    assert "*** NaN detected ***" in out


def test_loop_tutorial_page(load, capsys):
    load("scan_loop_tutorial")["main"]()
    out = capsys.readouterr().out
    for example in ("power", "polynomial", "jacobian_and_hessian", "taps_and_shared_updates"):
        assert f"{example}: ok" in out


def test_elman_rnn_cost_falls(load):
    # softmax of each step's vector is a (1, n) row, as in Theano (the program takes s[:, 0, :]);
    # the cost plateaus for ~5 epochs before it falls
    costs = load("scan_elman_rnn")["main"](epochs=10)
    assert falls(costs, 0.6), costs


def test_lstm_tutorial_cost_falls(load):
    costs = load("scan_lstm")["main"](epochs=10)
    assert falls(costs, 0.9), costs


def test_rbm_gibbs_chain_reconstruction_improves(load):
    program = load("scan_rbm")
    costs = program["main"](epochs=6)
    assert falls(costs, 0.7), costs
    program["main"](epochs=1, k=3, persistent=True)  # the persistent chain variant runs


def test_lstm_language_model_example_cost_falls():
    import runpy

    example = Path(__file__).parent.parent / "examples" / "lstm_language_model.py"
    costs = runpy.run_path(str(example), run_name="lstm_example")["main"](epochs=4, profile=False)
    assert falls(costs, 0.8), costs


def test_derivatives_page_r_and_l_operators(load):
    page = load("derivatives_rop_lop")
    rng = np.random.default_rng(0)
    w, big_v = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    x, v = rng.standard_normal(3), rng.standard_normal(2)
    # y = x W: its derivative along V is x V, and v times its Jacobian is outer(x, v)
    np.testing.assert_allclose(page["r_operator"](w, big_v, x), x @ big_v, rtol=1e-12)
    np.testing.assert_allclose(page["l_operator"](v, x), np.outer(x, v), rtol=1e-12)
    # y = sum(x**2) has Hessian 2 I
    vh, hv = page["hessian_times_vector"](x, rng.standard_normal(3))
    np.testing.assert_allclose(vh, hv, rtol=1e-12)
    x3 = rng.standard_normal(3)
    np.testing.assert_allclose(page["hessian_times_vector"](rng.standard_normal(3), x3)[1], 2 * x3)
