"""graphc.config: GRAPHC_FLAGS, the rc file, assignment, change_flags and value checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as gt
from graphc.flags import FLAGS, Config

ROOT = Path(__file__).resolve().parents[1]


def run_graphc(code: str, env_extra: dict[str, str], tmp_path: Path):
    """Run ``code`` in a fresh interpreter (so graphc.config is read from the environment)."""
    env = {k: v for k, v in os.environ.items() if k not in ("GRAPHC_FLAGS", "GRAPHCRC")}
    env["HOME"] = str(tmp_path)  # no ~/.graphcrc from the user running the tests
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)  # fmt: skip


SHOW = (
    "import graphc; c = graphc.config; "
    "print(c.floatX, c.profiling__n_apply, c.allow_gc, c.mode, c.is_set('floatX'))"
)


def test_graphc_flags_environment_variable(tmp_path):
    r = run_graphc(SHOW, {"GRAPHC_FLAGS": "floatX=float32, profiling__n_apply=7,allow_gc=False"},
                   tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["float32", "7", "False", "FAST_RUN", "True"]


def test_defaults_without_environment(tmp_path):
    r = run_graphc(SHOW, {}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["float64", "5", "True", "FAST_RUN", "False"]


@pytest.mark.parametrize(
    "flags, message",
    [("no_such_flag=1", "no_such_flag"), ("floatX=float128", "floatX"), ("floatX", "name=value")],
)
def test_bad_graphc_flags_fail_at_import(tmp_path, flags, message):
    r = run_graphc("import graphc", {"GRAPHC_FLAGS": flags}, tmp_path)
    assert r.returncode != 0
    assert message in r.stderr


def test_rc_file_via_graphcrc(tmp_path):
    rc = tmp_path / "rc"
    rc.write_text("floatX = float32\nmode = FAST_COMPILE\n\n[profiling]\nn_apply = 3\n")
    r = run_graphc(SHOW, {"GRAPHCRC": str(rc)}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["float32", "3", "True", "FAST_COMPILE", "True"]
    # GRAPHC_FLAGS wins over the rc file
    r = run_graphc(SHOW, {"GRAPHCRC": str(rc), "GRAPHC_FLAGS": "floatX=float64"}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:2] == ["float64", "3"]


def test_rc_file_with_a_global_section_header(tmp_path):
    rc = tmp_path / "rc"
    rc.write_text("[global]\nfloatX = float32\n[profiling]\nn_apply = 4\n")
    r = run_graphc(SHOW, {"GRAPHCRC": str(rc)}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:2] == ["float32", "4"]


def test_home_graphcrc_is_read(tmp_path):
    (tmp_path / ".graphcrc").write_text("[profiling]\nn_apply = 9\n")
    r = run_graphc(SHOW, {}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[1] == "9"


def test_rc_file_with_an_unknown_flag_fails(tmp_path):
    rc = tmp_path / "rc"
    rc.write_text("[profiling]\nno_such = 1\n")
    r = run_graphc("import graphc", {"GRAPHCRC": str(rc)}, tmp_path)
    assert r.returncode != 0 and "profiling__no_such" in r.stderr


def test_floatx_changes_the_dtype_of_float_constructors():
    old = graphc.config.floatX
    try:
        graphc.config.floatX = "float32"
        assert gt.vector().dtype == "float32"
        assert gt.matrix("m").dtype == "float32"
        assert graphc.shared(1.5).dtype == "float32"
        graphc.config.floatX = "float64"
        assert gt.vector().dtype == "float64"
    finally:
        graphc.config.floatX = old
    with graphc.config.change_flags(floatX="float32"):
        assert gt.scalar().dtype == "float32"
    assert gt.scalar().dtype == old


def test_floatx_float16_makes_float16_constructors_and_constants():
    """Theano accepted floatX=float16: constructors, Python float constants, shared values
    and zeros take it, and a function of them computes in float16."""
    with graphc.config.change_flags(floatX="float16"):
        m = gt.matrix("m")
        c = gt.as_tensor_variable(0.1)
        z = gt.zeros((2,))
        s = graphc.shared(1.5)
        assert (m.dtype, c.dtype, z.dtype, s.dtype) == ("float16",) * 4
        y = m * 0.1 + s
        assert y.dtype == "float16"
        f = graphc.function([m], y)
    mv = np.arange(6, dtype="float16").reshape(2, 3)
    got = f(mv)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, mv * np.float16(0.1) + np.float16(1.5))


def test_change_flags_restores_values_and_explicitness_even_on_error():
    cfg = graphc.config
    before = (cfg.floatX, cfg.profiling__n_apply, cfg.is_set("profiling__n_apply"))
    with cfg.change_flags(floatX="float32", profiling__n_apply=3):
        assert (cfg.floatX, cfg.profiling__n_apply) == ("float32", 3)
        assert cfg.is_set("profiling__n_apply")
    assert (cfg.floatX, cfg.profiling__n_apply, cfg.is_set("profiling__n_apply")) == before
    with pytest.raises(RuntimeError), cfg.change_flags(floatX="float32"):
        raise RuntimeError
    assert cfg.floatX == before[0]
    # a bad value in the middle of the changes leaves nothing changed
    with pytest.raises(ValueError), cfg.change_flags(profiling__n_apply=5, allow_gc="maybe"):
        pass
    assert cfg.profiling__n_apply == before[1]


def test_change_flags_with_dotted_names_restores():
    cfg = graphc.config
    before = cfg.profiling__n_apply
    with cfg.change_flags(**{"profiling.n_apply": before + 1}):
        assert cfg.profiling__n_apply == before + 1
    assert cfg.profiling__n_apply == before


def test_unknown_flag_names_raise():
    with pytest.raises(AttributeError, match="no_such_flag"):
        graphc.config.no_such_flag = 1
    with pytest.raises(AttributeError, match="no_such_flag"):
        graphc.config.no_such_flag  # noqa: B018
    with (
        pytest.raises(AttributeError, match="no_such_flag"),
        graphc.config.change_flags(no_such_flag=1),
    ):
        pass


@pytest.mark.parametrize(
    "name, value",
    [("floatX", "float128"), ("allow_gc", "maybe"), ("vm", "java"), ("profiling__n_apply", "x"),
     ("compute_test_value", "sometimes")],
)  # fmt: skip
def test_bad_values_raise_value_error(name, value):
    before = getattr(graphc.config, name)
    with pytest.raises(ValueError, match=name):
        setattr(graphc.config, name, value)
    assert getattr(graphc.config, name) == before


@settings(max_examples=50, deadline=None)
@given(
    n=st.integers(0, 10**6),
    gc=st.sampled_from(["1", "0", "true", "False", "YES", "no", "on", "OFF"]),
    fx=st.sampled_from(["float32", "float64"]),
    sep=st.sampled_from([",", " , ", ",,"]),
)
def test_flags_string_parsing(n, gc, fx, sep):
    cfg = Config()
    cfg.load_flags_string(sep.join([f"profiling__n_apply={n}", f"allow_gc={gc}",
                                    f"floatX = {fx}", "profiling.n_ops=2"]))  # fmt: skip
    assert cfg.profiling__n_apply == n
    assert cfg.allow_gc is (gc.lower() in ("1", "true", "yes", "on"))
    assert cfg.floatX == fx and cfg.profiling__n_ops == 2
    assert all(cfg.is_set(k) for k in ("profiling__n_apply", "allow_gc", "floatX"))
    assert not cfg.is_set("mode")


@settings(max_examples=25, deadline=None)
@given(value=st.text(max_size=10))
def test_flag_values_are_checked(value):
    cfg = Config()
    try:
        cfg.floatX = value
    except ValueError:
        assert value not in ("float32", "float64")
    else:
        assert value in ("float32", "float64") and cfg.floatX == value


def test_every_flag_is_documented_and_its_default_parses():
    for f in FLAGS:
        assert f.doc
        assert f.parse(f.default) == f.default
    assert "floatX" in graphc.config.describe()
