"""``import theano`` served by graphc: the hook, the runner, graphc-prof --theano, the plugin."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import graphc
import graphc.compat.theano as hook
import graphc.tensor as GT
from graphc.compat.theano.shim import Shim
from graphc.compat.theano.table import MODULES


@pytest.fixture
def theano():
    hook.uninstall()
    hook.install()
    try:
        yield importlib.import_module("theano")
    finally:
        hook.uninstall()


def _run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def test_names_are_graphcs_own_objects(theano):
    import theano.tensor as T
    from theano.sandbox.rng_mrg import MRG_RandomStreams
    from theano.tensor.nnet import conv
    from theano.tensor.signal import downsample

    assert T.dot is GT.dot and T.TensorVariable is GT.TensorVariable
    assert theano.function is graphc.function and theano.shared is graphc.shared
    assert theano.config is graphc.config and theano.scan is graphc.scan_module.scan
    assert T.nnet.sigmoid is GT.nnet.sigmoid and T.nnet.nnet is GT.nnet
    assert conv is GT.conv and conv.conv2d is GT.conv.conv2d
    assert downsample is importlib.import_module("graphc.tensor.signal.downsample")
    assert MRG_RandomStreams is importlib.import_module("graphc.sandbox.rng_mrg").MRG_RandomStreams
    assert importlib.import_module("theano.tensor.blas") is GT.blas  # found by name
    assert theano.Variable is theano.gof.Variable is graphc.graph.Variable
    assert theano.tensor.sharedvar.TensorSharedVariable is graphc.SharedVariable
    assert isinstance(theano.shared(np.zeros(2)), T.sharedvar.TensorSharedVariable)


def test_the_added_theano_names_at_theanos_paths(theano):
    import theano.gof.graph
    import theano.scan_module.scan_utils
    import theano.tensor.nlinalg
    import theano.tensor.xlogx

    from graphc import grad_ops
    from graphc.compile import ops
    from graphc.graph import compare, utils

    assert theano.compile.ViewOp is ops.ViewOp and theano.compile.view_op is ops.view_op
    assert theano.gradient.grad_clip is grad_ops.grad_clip
    assert theano.gradient.grad_not_implemented is grad_ops.grad_not_implemented
    assert theano.scan_module.scan_utils.equal_computations is compare.equal_computations
    assert theano.gof.graph.is_same_graph is compare.is_same_graph
    assert theano.gof.graph.inputs is graphc.graph.graph_inputs
    assert theano.gof.utils is utils and theano.gof.Apply is graphc.graph.Apply
    assert theano.tensor.xlogx.xlogx is GT.xlogx.xlogx
    assert theano.tensor.nlinalg is GT.nlinalg and theano.tensor.nlinalg.det is GT.nlinalg.det
    assert theano.tensor.nnet.softsign is GT.nnet.softsign
    assert theano.tensor.isnan is GT.isnan and theano.tensor.roll is GT.roll


def test_a_theano_program_computes_as_numpy(theano):
    import theano.tensor as T

    x = T.dmatrix("x")
    w = theano.shared(np.arange(6.0).reshape(3, 2), name="w")
    f = theano.function([x], T.nnet.sigmoid(T.dot(x, w)).sum())
    xv = np.linspace(-1, 1, 12).reshape(4, 3)
    assert f(xv) == pytest.approx((1 / (1 + np.exp(-(xv @ w.get_value())))).sum())


def test_star_import_gives_the_tensor_namespace(theano):
    ns: dict = {}
    exec("from theano.tensor import *", ns)
    assert ns["dot"] is GT.dot and ns["matrix"] is GT.matrix and "nnet" in ns


def test_unknown_theano_module_is_a_clear_import_error(theano):
    with pytest.raises(ModuleNotFoundError, match="theano.no_such_module") as e:
        importlib.import_module("theano.no_such_module")
    assert e.value.name == "theano.no_such_module"
    with pytest.raises(AttributeError, match="no_such_name"):
        theano.tensor.no_such_name  # noqa: B018


def _import_every_table_module() -> None:
    hook.install()
    try:
        for name, target in MODULES.items():
            importlib.import_module(name)
            if isinstance(target, str):
                assert sys.modules[name] is importlib.import_module(target)
        importlib.import_module("theano.tensor.signal.downsample")
    finally:
        hook.uninstall()


def test_importing_theano_modules_leaves_graphc_untouched():
    """Aliases, not copies, and nothing written into graphc's modules (a first round loads
    the graphc modules themselves, which Python records on their parents as usual)."""
    hook.uninstall()
    _import_every_table_module()
    mods = [graphc, GT, GT.nnet, GT.signal, graphc.graph, graphc.compile]
    before = [dict(vars(m)) for m in mods]
    _import_every_table_module()
    for m, old in zip(mods, before):
        added = {k for k in vars(m) if k not in old and not k.startswith("__")}
        changed = {k for k in old if k in vars(m) and vars(m)[k] is not old[k]}
        assert (m.__name__, added, changed) == (m.__name__, set(), set())


def test_alias_children_of_aliased_packages_are_their_graphc_children():
    """Importing ``theano.P.c`` sets attribute ``c`` of ``theano.P``: when that is a graphc
    module, it must be the graphc module's own child, or graphc would be changed."""
    for name, target in MODULES.items():
        parent = name.rpartition(".")[0]
        if isinstance(target, str) and isinstance(MODULES.get(parent), str):
            assert target == f"{MODULES[parent]}.{name.rpartition('.')[2]}"
        if isinstance(target, Shim):
            assert all(s.startswith("graphc") for s in target.sources)


def test_install_refuses_to_shadow_another_theano(monkeypatch):
    hook.uninstall()
    monkeypatch.setitem(sys.modules, "theano", types.ModuleType("theano"))
    with pytest.raises(RuntimeError, match="already imported"):
        hook.install()
    assert not hook.installed()


def test_nothing_is_served_without_install():
    code = (
        "import importlib.util, sys, graphc, graphc.theano, graphc.compat.theano as h\n"
        "assert not h.installed() and 'theano' not in sys.modules\n"
        "print(importlib.util.find_spec('theano'))\n"
    )
    r = _run("-c", code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "None"


def test_import_theano_loads_the_submodules_theano_loads():
    code = (
        "import graphc.compat.theano as h; h.install()\n"
        "import theano\n"
        "print(theano.tensor.shared_randomstreams.RandomStreams.__module__)\n"
        "print(theano.tensor.nnet.conv.conv2d.__module__, theano.gof.graph.inputs.__name__)\n"
    )
    r = _run("-c", code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [
        "graphc.compile.randomstreams", "graphc.tensor.conv", "graph_inputs",
    ]  # fmt: skip


SCRIPT = """\
import sys
import numpy as np
import theano
import theano.tensor as T

x = T.dvector("x")
f = theano.function([x], T.exp(x).sum(), name="theano_script_fn")
print(__name__, sys.argv[1:], repr(float(f(np.array([0.0, 1.0])))))
sys.exit(int(sys.argv[1]))
"""


def test_runner_runs_the_script_as_main_with_its_argv(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    r = _run("-m", "graphc.theano", str(script), "3", "--flag", cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    name, args, value = r.stdout.split(" ", 2)
    assert name == "__main__" and args.startswith("['3'") and "--flag" in value
    assert float(value.split()[-1]) == pytest.approx(1 + np.e)
    r = _run("-m", "graphc.theano", str(tmp_path / "missing.py"))
    assert r.returncode == 2 and "no such script" in r.stderr
    assert _run("-m", "graphc.theano").returncode == 2


def test_graphc_prof_run_theano_profiles_an_unchanged_program(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    out = tmp_path / "p.json"
    r = _run("-m", "graphc.profile", "run", "--theano", "--json", str(out), str(script), "0")
    assert r.returncode == 0, r.stderr
    assert "1 function(s) profiled, 1 call(s)" in r.stderr
    assert "theano_script_fn" in out.read_text()
    plain = _run("-m", "graphc.profile", "run", str(script), "0")
    assert plain.returncode == 1 and "No module named 'theano'" in plain.stderr


def test_pytest_plugin_serves_theano_to_conftest_and_tests(tmp_path):
    (tmp_path / "conftest.py").write_text("import theano.tensor as T\nX = T.dvector\n")
    (tmp_path / "test_lib.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            import theano
            import theano.tensor as T

            def test_sum():
                x = T.dvector()
                assert theano.function([x], x.sum())(np.ones(4)) == 4.0
            """
        )
    )
    args = ("-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", str(tmp_path))
    r = _run(*args[:2], "-p", "graphc.theano", *args[2:], cwd=tmp_path)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
    r = _run(*args, cwd=tmp_path)
    assert r.returncode != 0 and "No module named 'theano'" in r.stdout + r.stderr


def test_star_import_leaves_out_helpers(theano):
    ns: dict = {}
    exec("from theano.tensor import *", ns)
    assert not {"np", "sys", "annotations", "TYPE_CHECKING"} & set(ns)


def test_theanos_float16_spellings_make_float16_tensors(theano):
    import theano.tensor as T

    v = T.TensorType("float16", (False,))("v")
    m = T.tensor(dtype="float16", shape=(None, None))
    assert v.type == GT.TensorType("float16", (None,)) and m.dtype == "float16"
    f = theano.function([v], T.sum(v * v))
    out = f(np.array([1.5, 2.0], dtype="float16"))
    assert out.dtype == np.float16 and out == np.float16(6.25)
