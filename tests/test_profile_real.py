"""The profiler on real compiled functions: invariants, the ways of turning it on, and the
legacy ProfileMode on a py and a c|py build of the same graph."""

import io
import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile.profilemode import ProfileMode
from graphc.profile import ProfileStats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _graph():
    x, y, z = T.dvectors("xyz")
    return [x, y, z], (x + y + z) * 2 + T.exp(x)


@pytest.mark.parametrize("linker", ["py", "c|py"])
@pytest.mark.parametrize("vm", ["cvm", "py"])
def test_invariants_on_real_runs(linker, vm):
    ins, out = _graph()
    mode = graphc.Mode(linker=linker, vm=vm).excluding("fusion")
    f = graphc.function(ins, out, mode=mode, profile=True, name="inv")
    v = np.ones(1000)
    for _ in range(7):
        f(v, v, v)
    f.profile.refresh()
    (fp,) = f.profile.functions
    assert fp.calls == 7
    assert all(n.calls == 7 for n in fp.nodes)
    assert 0 < fp.thunk_ns() <= fp.vm_ns <= fp.call_ns
    assert fp.linker == linker and fp.mode.startswith("Mode(")
    assert {n.impl for n in fp.nodes} == ({"C"} if linker == "c|py" else {"Py"})
    text = io.StringIO()
    f.profile.summary(file=text)
    out_text = text.getvalue()
    assert "Message: inv" in out_text and "excluding=fusion" in out_text
    assert "%%" not in out_text


def test_shared_profile_stats_over_two_functions():
    stats = ProfileStats()
    x = T.dvector("x")
    f = graphc.function([x], x * 2, profile=stats, name="f")
    g = graphc.function([x], T.exp(x) + 1, profile=stats, name="g")
    for _ in range(3):
        f(np.ones(4))
    g(np.ones(4))
    stats.refresh()
    assert [(fp.name, fp.calls) for fp in stats.functions] == [("f", 3), ("g", 1)]
    text = io.StringIO()
    stats.summary(file=text)
    assert "f" in text.getvalue() and "g" in text.getvalue()


def test_ignore_first_call():
    x = T.dvector("x")
    with graphc.config.change_flags(profiling__ignore_first_call=True):
        f = graphc.function([x], x * 2, profile=True)
    for _ in range(4):
        f(np.ones(4))
    f.profile.refresh()
    (fp,) = f.profile.functions
    assert fp.calls == 3 and all(n.calls == 3 for n in fp.nodes)


def test_legacy_profilemode_py_against_cpy():
    ins, out = _graph()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pm_py = ProfileMode(optimizer="fast_run", linker="py")
        pm_c = ProfileMode(optimizer="fast_run", linker="c|py")
    f_py = graphc.function(ins, out, mode=pm_py, name="f_py")
    f_c = graphc.function(ins, out, mode=pm_c, name="f_c")
    v = np.linspace(0, 1, 10**4)
    for _ in range(5):
        np.testing.assert_allclose(f_py(v, v, v), f_c(v, v, v))
    buf = io.StringIO()
    pm_c.print_summary(file=buf)
    text = buf.getvalue()
    assert "local_time" in text and "(*) Op is running a c implementation" in text
    # the c|py build marks its Ops with '*', the py build does not
    op_rows = text.split("Op-wise summary:")[1].split("(*)")[0].splitlines()[2:-1]
    assert op_rows and all(" * " in r for r in op_rows)
    buf = io.StringIO()
    pm_py.print_summary(file=buf)
    py_rows = buf.getvalue().split("Op-wise summary:")[1].split("(*)")[0].splitlines()[2:-1]
    assert py_rows and not any(" * " in r for r in py_rows)
    # compile times are real (Theano's legacy summary always printed 0)
    assert re.search(r"compile time: [1-9]\.\d{3}e[-+]0\ds", text)
    buf = io.StringIO()
    pm_c.print_diff_summary(pm_py, file=buf)
    diff = buf.getvalue()
    assert "Apply-wise summary difference" in diff
    assert "Composite" in diff  # the fused node appears, matched between the two builds


def _run(code: str, flags: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, GRAPHC_FLAGS=flags, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


SCRIPT = """
    import numpy as np, graphc, graphc.tensor as T
    x, y = T.dvectors("xy")
    f = graphc.function([x, y], x * y + 1, name="first")
    g = graphc.function([x], T.exp(x), name="second")
    f(np.ones(3), np.ones(3)); g(np.ones(3))
    print("done")
"""


def test_profile_flag_prints_every_function_and_the_sum_at_exit():
    r = _run(SCRIPT, "profile=True")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.index("done") < out.index("Message: first") < out.index("Message: second")
    assert "Sum of all(2) printed profiles at exit" in out


def test_profile_destination_file_and_memory_section(tmp_path):
    dest = tmp_path / "prof.txt"
    r = _run(SCRIPT, f"profile=True,profile_memory=True,profiling__destination={dest}")
    assert r.returncode == 0, r.stderr
    text = dest.read_text()
    assert "Message: first" in text and "Memory Profile" in text
    assert "Message: first" not in r.stdout


def test_profile_mode_prints_at_exit_and_optimizer_flags_apply():
    code = SCRIPT.replace('name="first"', 'name="first", mode="PROFILE_MODE"').replace(
        'name="second"', 'name="second", mode="PROFILE_MODE"'
    )
    r = _run(code, "optimizer_excluding=fusion")
    assert r.returncode == 0, r.stderr
    assert "mode=PROFILE_MODE" in r.stdout and "excluding=fusion" in r.stdout
    assert "Composite" not in r.stdout
