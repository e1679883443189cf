"""Tests for graphc.linker.program and the VMs (Cython "cvm" and reference "py")."""

from __future__ import annotations

import gc
import importlib.util
import shutil
import subprocess
import sys
import sysconfig
import threading
import warnings
import weakref
from pathlib import Path

import numpy as np
import pytest

import graphc.vm as vm_pkg
from graphc.linker.program import NodeSpec, Program, gc_schedule, last_readers
from graphc.vm import make_vm
from graphc.vm.pyvm import FunctionBusy, PyVM

try:
    from graphc.vm._cvm import CVM
except ImportError:  # pragma: no cover - extension not built
    CVM = None

KINDS = ["cvm", "py"]


def new_vm(kind: str, program: Program, allow_gc: bool = True):
    if kind == "py":
        return PyVM(program, allow_gc=allow_gc)
    if CVM is None:
        pytest.skip("graphc.vm._cvm is not built (python setup.py build_ext --inplace)")
    return CVM(program, allow_gc=allow_gc)


@pytest.fixture(params=KINDS)
def kind(request):
    return request.param


def fn(f):
    """A perform from a plain function of the input values returning the output(s)."""

    def perform(inputs, cells):
        r = f(*inputs)
        if len(cells) == 1:
            cells[0][0] = r
        else:
            for cell, v in zip(cells, r):
                cell[0] = v

    return perform


def node(name, ins, outs, f=None, **kw):
    return NodeSpec(name, tuple(ins), tuple(outs), perform=fn(f) if f else None, **kw)


def prog(n, inputs, outputs, nodes, constants=()):
    return Program(n, tuple(inputs), tuple(outputs), tuple(constants), tuple(nodes))


class Box:
    """A weak-referenceable value."""

    def __init__(self, v):
        self.v = v


# -- C thunks compiled for the tests -------------------------------------------------------


@pytest.fixture(scope="module")
def cthunks(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = Path(__file__).with_name("c_thunks_fixture.c")
    out_dir = tmp_path_factory.mktemp("cthunks")
    so = out_dir / ("_graphc_test_thunks" + sysconfig.get_config_var("EXT_SUFFIX"))
    paths = sysconfig.get_paths()
    cmd = [cc, "-shared", "-fPIC", "-O2", "-Wall", "-Werror", f"-I{paths['include']}"]
    cmd += [f"-I{paths['platinclude']}", str(src), "-o", str(so)]
    subprocess.run(cmd, check=True, capture_output=True)
    spec = importlib.util.spec_from_file_location("_graphc_test_thunks", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cnode(mod, name, ins, outs, thunk, params=None):
    return NodeSpec(name, tuple(ins), tuple(outs), c_thunk=getattr(mod, thunk), c_params=params)


# -- Program -------------------------------------------------------------------------------


def test_program_validation():
    ok = node("a", [0], [1], lambda x: x)
    prog(2, [0], [1], [ok])
    with pytest.raises(ValueError, match="contiguous"):
        node("a", [0], [1, 3], lambda x: (x, x))
    with pytest.raises(ValueError, match="one of"):
        NodeSpec("a", (0,), (1,))
    with pytest.raises(ValueError, match="lazy"):
        NodeSpec("a", (0,), (1,), perform=fn(abs), lazy=lambda *a: ())
    with pytest.raises(ValueError, match="out of range"):
        prog(2, [0], [1], [node("a", [0], [2], abs)])
    with pytest.raises(ValueError, match="already written"):
        prog(2, [0], [1], [node("a", [0], [0], abs)])
    with pytest.raises(ValueError, match="before"):
        prog(3, [0], [2], [node("a", [1], [2], abs), node("b", [0], [1], abs)])
    with pytest.raises(ValueError, match="never written"):
        prog(3, [0], [2], [node("a", [0], [1], abs)])
    with pytest.raises(ValueError, match="destroys"):
        node("a", [0], [1], abs, destroys=(1,))
    # a C thunk may carry a perform fallback
    NodeSpec("a", (0,), (1,), perform=fn(abs), c_thunk=object())
    # built from tuples of ints, as the VMs read them: nothing is converted after the fact
    with pytest.raises(TypeError, match="inputs must be a tuple of ints"):
        NodeSpec("a", [0], (1,), perform=fn(abs))
    with pytest.raises(TypeError, match="outputs must be a tuple of ints"):
        Program(2, (0,), (np.int64(1),), (), (ok,))
    with pytest.raises(TypeError, match="n_storage must be an int"):
        Program(2.0, (0,), (1,), (), (ok,))
    with pytest.raises(TypeError, match="constant slots"):
        Program(3, (0,), (1,), (("2", 1.0),), (ok,))


def test_last_readers_and_gc_schedule():
    p = prog(
        6,
        [0],
        [3],
        [
            node("a", [0], [1], abs),
            node("b", [1, 0], [2], max),
            node("dead", [1], [4, 5], lambda x: (x, x)),
            node("c", [2], [3], abs),
        ],
    )
    assert last_readers(p) == [1, 2, 3, -1, -1, -1]
    # slot 1 dies after "dead"; 4 and 5 are never read; 3 is an output
    assert gc_schedule(p) == [(), (), (1, 4, 5), (2,)]


# -- Python performs -------------------------------------------------------------------------


def test_outputs_constants_and_passthrough(kind):
    p = prog(
        6,
        [0, 1],
        [3, 0, 2, 5],
        [node("add", [0, 1], [3], lambda x, y: x + y), node("mul", [3, 2], [4], np.multiply)],
        constants=[(2, 10), (5, "c")],
    )
    vm = new_vm(kind, p)
    assert vm([1, 2]) == [3, 1, 10, "c"]
    assert vm([5, 6]) == [11, 5, 10, "c"]
    assert vm.failed_node is None


def test_multiple_outputs_and_make_vm(kind):
    p = prog(4, [0, 1], [3, 2], [node("swap", [0, 1], [2, 3], lambda a, b: (b, a))])
    vm = make_vm(p, kind=kind) if kind == "py" or CVM is not None else new_vm(kind, p)
    assert vm(["x", "y"]) == ["x", "y"]
    assert vm.kind == kind
    with pytest.raises(ValueError):
        make_vm(p, kind="nope")


def _gc_program(log, refs):
    """x -> a (a Box) -> b -> c; node "check" runs after a's last reader."""

    def make_a(inputs, cells):
        log.append(("prev_a", cells[0][0] is not None))
        box = Box(inputs[0])
        refs["a"] = weakref.ref(box)
        cells[0][0] = box

    def check(inputs, cells):
        log.append(("a_alive", refs["a"]() is not None))
        cells[0][0] = inputs[0] + 1

    return prog(
        4,
        [0],
        [3],
        [
            NodeSpec("make_a", (0,), (1,), perform=make_a),
            node("read_a", [1], [2], lambda a: a.v * 2),
            NodeSpec("check", (2,), (3,), perform=check),
        ],
    )


def test_gc_frees_intermediates_after_last_reader(kind):
    log, refs = [], {}
    vm = new_vm(kind, _gc_program(log, refs))
    assert vm([5]) == [11]
    assert vm([5]) == [11]
    assert log == [("prev_a", False), ("a_alive", False)] * 2
    assert refs["a"]() is None


def test_no_gc_keeps_intermediates(kind):
    log, refs = [], {}
    vm = new_vm(kind, _gc_program(log, refs), allow_gc=False)
    assert vm([5]) == [11]
    assert refs["a"]() is not None  # kept between calls for reuse
    assert vm([5]) == [11]
    assert log == [("prev_a", False), ("a_alive", True), ("prev_a", True), ("a_alive", True)]


@pytest.mark.parametrize("allow_gc", [True, False])
def test_vm_keeps_no_reference_to_inputs_or_outputs(kind, allow_gc):
    # the intermediate holds no reference to x: without gc it may stay in the VM
    p = prog(3, [0], [2], [node("a", [0], [1], lambda b: Box(b.v)), node("b", [1], [2], Box)])
    vm = new_vm(kind, p, allow_gc=allow_gc)
    x = Box(1)
    rx = weakref.ref(x)
    (out,) = vm([x])
    ro = weakref.ref(out)
    assert out.v.v == 1
    del x, out
    gc.collect()
    assert rx() is None
    assert ro() is None


def test_unset_output_is_an_error(kind):
    p = prog(2, [0], [1], [NodeSpec("lazybones", (0,), (1,), perform=lambda i, o: None)])
    vm = new_vm(kind, p)
    with pytest.raises(ValueError, match=r"node 0 \('lazybones'\) did not set output 0"):
        vm([1])
    assert vm.failed_node == 0


def test_errors_set_failed_node_and_clear_slots(kind):
    err = KeyError("boom")
    refs = {}

    def boom(inputs, cells):
        raise err

    def keep(inputs, cells):
        b = Box(inputs[0])
        refs["a"] = weakref.ref(b)
        cells[0][0] = b

    p = prog(
        4,
        [0],
        [3],
        [
            NodeSpec("keep", (0,), (1,), perform=keep),
            NodeSpec("boom", (1,), (2,), perform=boom),
            node("after", [2], [3], abs),
        ],
    )
    for allow_gc in (True, False):
        vm = new_vm(kind, p, allow_gc=allow_gc)
        x = Box(0)
        rx = weakref.ref(x)
        with pytest.raises(KeyError) as info:
            vm([x])
        assert info.value is err
        assert vm.failed_node == 1
        err.__traceback__ = None  # its frames hold the perform's inputs
        del x, info
        gc.collect()
        assert rx() is None and refs["a"]() is None


def test_failed_node_reset_after_success(kind):
    def maybe(inputs, cells):
        if inputs[0] < 0:
            raise ArithmeticError
        cells[0][0] = inputs[0]

    vm = new_vm(kind, prog(2, [0], [1], [NodeSpec("m", (0,), (1,), perform=maybe)]))
    with pytest.raises(ArithmeticError):
        vm([-1])
    assert vm.failed_node == 0
    assert vm([3]) == [3]
    assert vm.failed_node is None


def test_wrong_argument_count(kind):
    vm = new_vm(kind, prog(2, [0], [1], [node("a", [0], [1], abs)]))
    with pytest.raises(TypeError):
        vm([1, 2])


# -- lazy ----------------------------------------------------------------------------------


def ifelse_thunk(computed, inputs, cells):
    """Lazy ifelse(cond, then, else): asks for the condition, then one branch."""
    if not computed[0]:
        return (0,)
    branch = 1 if inputs[0] else 2
    if not computed[branch]:
        return (branch,)
    cells[0][0] = inputs[branch]
    return ()


def _lazy_program(counts):
    def counted(name, f):
        def perform(inputs, cells):
            counts[name] = counts.get(name, 0) + 1
            cells[0][0] = f(*inputs)

        return perform

    # slots: 0 c, 1 x, 2 cond, 3 then, 4 else, 5 out, 6 out2 (reads out), 7 shared
    return prog(
        8,
        [0, 1],
        [6, 5],
        [
            NodeSpec("cond", (0,), (2,), perform=counted("cond", bool)),
            NodeSpec("shared", (1,), (7,), perform=counted("shared", lambda x: x * 10)),
            NodeSpec("then", (7,), (3,), perform=counted("then", lambda s: s + 1)),
            NodeSpec("else", (7, 1), (4,), perform=counted("else", lambda s, x: s - x)),
            NodeSpec("ifelse", (2, 3, 4), (5,), lazy=ifelse_thunk),
            NodeSpec("out2", (5,), (6,), perform=counted("out2", lambda v: -v)),
        ],
    )


@pytest.mark.parametrize("allow_gc", [True, False])
def test_lazy_untaken_branch_never_runs(kind, allow_gc):
    counts = {}
    vm = new_vm(kind, _lazy_program(counts), allow_gc=allow_gc)
    assert vm([1, 2]) == [-21, 21]
    assert counts == {"cond": 1, "shared": 1, "then": 1, "out2": 1}
    counts.clear()
    assert vm([0, 2]) == [-18, 18]
    assert counts == {"cond": 1, "shared": 1, "else": 1, "out2": 1}
    assert vm.failed_node is None


def test_lazy_profiling_and_errors(kind):
    counts = {}
    vm = new_vm(kind, _lazy_program(counts))
    vm.set_profiling(timing=True)
    vm([1, 2])
    st = vm.stats()
    assert st["calls"].tolist() == [1, 1, 1, 0, 1, 1]  # "else" never ran
    # an exception inside a lazily demanded node
    p = _lazy_program(counts)
    nodes = list(p.nodes)
    nodes[2] = NodeSpec("then", (7,), (3,), perform=lambda i, o: 1 / 0)
    vm = new_vm(kind, prog(8, [0, 1], [6, 5], nodes))
    with pytest.raises(ZeroDivisionError):
        vm([1, 2])
    assert vm.failed_node == 2
    assert vm([0, 2]) == [-18, 18]


def test_lazy_gc_frees_after_all_readers(kind):
    refs = {}

    def make(inputs, cells):
        b = Box(inputs[0])
        refs["s"] = weakref.ref(b)
        cells[0][0] = b

    def probe(inputs, cells):
        cells[0][0] = refs["s"]() is None

    # slots: 0 c, 1 x, 2 shared (Box), 3 then, 4 else, 5 ifelse out, 6 probe (dead?)
    p = prog(
        7,
        [0, 1],
        [5, 6],
        [
            NodeSpec("shared", (1,), (2,), perform=make),
            node("then", [2], [3], lambda s: s.v + 1),
            node("else", [1], [4], lambda x: x - 1),
            NodeSpec("ifelse", (0, 3, 4), (5,), lazy=ifelse_thunk),
            NodeSpec("probe", (0,), (6,), perform=probe),
        ],
    )
    assert new_vm(kind, p)([1, 5]) == [6, True]
    assert new_vm(kind, p, allow_gc=False)([1, 5]) == [6, False]


# -- profiling -------------------------------------------------------------------------------


def _chain(n, f=lambda x: x + 1):
    return prog(n + 1, [0], [n], [node(f"n{i}", [i], [i + 1], f) for i in range(n)])


@pytest.mark.parametrize("memory", [False, True])
def test_a_failing_call_times_the_nodes_that_ran(kind, memory):
    def fail_on_negative(inputs, cells):
        if inputs[0] < 0:
            raise ValueError("negative")
        cells[0][0] = inputs[0]

    p = prog(4, [0], [3], [node("a", [0], [1], lambda v: v + 1),
                           NodeSpec("check", (1,), (2,), perform=fail_on_negative),
                           node("c", [2], [3], lambda v: v * 2)])  # fmt: skip
    vm = new_vm(kind, p)
    vm.set_profiling(timing=True, memory=memory)
    assert vm([1]) == [4]
    for _ in range(3):
        with pytest.raises(ValueError):
            vm([-5])
    assert vm([2]) == [6]
    st = vm.stats()
    assert st["calls"].tolist() == [5, 2, 2]  # the failing node and the rest: good calls only
    assert (st["ns_total"] > 0).all() and (st["ns_min"] > 0).all()
    assert (st["ns_min"] <= st["ns_max"]).all()
    ring = st["ns_samples"]
    assert [(ring[i] >= 0).sum() for i in range(3)] == [5, 2, 2]
    # the samples add up to the total (each converted from clock ticks on its own)
    assert abs(ring[0][ring[0] >= 0].sum() - st["ns_total"][0]) <= 5


def test_profiling_off_records_nothing(kind):
    vm = new_vm(kind, _chain(5))
    for _ in range(3):
        vm([0])
    st = vm.stats()
    for key in ("calls", "ns_total", "ns_min", "ns_max", "n_below_resolution"):
        assert not st[key].any(), key
    assert (st["ns_samples"] == -1).all()
    assert st["calls_total"] == 0 and st["peak_bytes"] == 0
    assert len(st["trace"]) == 0 and st["trace_dropped"] == 0
    assert st["shapes"] == [[]] * 5
    assert st["clock_resolution_ns"] >= 1


def test_timing_counts_one_call_per_node(kind):
    vm = new_vm(kind, _chain(5))
    vm.set_profiling(timing=True, trace_capacity=12)
    for _ in range(3):
        assert vm([0]) == [5]
    st = vm.stats()
    assert st["calls"].tolist() == [3] * 5
    assert st["calls_total"] == 3
    assert (st["ns_total"] >= 0).all()
    assert (st["ns_min"] <= st["ns_max"]).all()
    assert (st["ns_total"] >= st["ns_max"]).all()
    samples = st["ns_samples"]
    assert samples.shape == (5, 32)
    assert ((samples[:, :3] >= 0).all()) and (samples[:, 3:] == -1).all()
    # the cvm counts TSC ticks and converts each figure to ns on its own: < 1 ns per call
    assert (np.abs(samples[:, :3].sum(axis=1) - st["ns_total"]) <= 3).all()
    assert (st["n_below_resolution"] == (samples[:, :3] == 0).sum(axis=1)).all()
    trace = st["trace"]
    assert trace.shape == (12, 4) and st["trace_dropped"] == 3
    assert trace[:, 0].tolist() == [0] * 5 + [1] * 5 + [2] * 2
    assert trace[:, 1].tolist() == list(range(5)) * 2 + [0, 1]
    assert (np.diff(trace[:, 2]) >= 0).all()
    vm.reset_stats()
    st = vm.stats()
    assert not st["calls"].any() and st["calls_total"] == 0 and len(st["trace"]) == 0


def test_ring_wraps(kind):
    vm = new_vm(kind, _chain(1))
    vm.set_profiling(timing=True)
    for _ in range(40):
        vm([0])
    st = vm.stats()
    assert st["calls"][0] == 40
    assert (st["ns_samples"][0] >= 0).all()


@pytest.mark.parametrize("allow_gc, peak", [(True, 1600), (False, 2400)])
def test_memory_stats(kind, allow_gc, peak):
    x = np.zeros(100)  # 800 bytes; every node output is 800 bytes too
    vm = new_vm(kind, _chain(3), allow_gc=allow_gc)
    vm.set_profiling(memory=True)
    vm([x])
    st = vm.stats()
    # gc: a, then a+b (a dies), then b+c -> 1600; no gc: a+b+c
    assert st["peak_bytes"] == peak
    assert [b.tolist() for b in st["out_bytes_max"]] == [[800]] * 3
    assert st["calls"].tolist() == [1, 1, 1]
    assert not st["ns_total"].any()  # no timing requested


def test_memory_min_max_and_scalars(kind):
    p = prog(
        4,
        [0],
        [2, 3],
        [node("split", [0], [1, 2], lambda x: (x.sum(), x[:2])), node("s", [1], [3], str)],
    )
    vm = new_vm(kind, p)
    vm.set_profiling(memory=True)
    vm([np.ones(5, np.float32)])
    vm([np.ones(3, np.float32)])
    st = vm.stats()
    # x[:2] views the input: it allocates nothing, whatever its nbytes
    assert st["out_bytes_min"][0].tolist() == [4, 0]
    assert st["out_bytes_max"][0].tolist() == [4, 0]
    assert st["out_bytes_max"][1].tolist() == [0]  # a str


def test_shape_signatures(kind):
    vm = new_vm(kind, _chain(1, lambda x: x.T))
    vm.set_profiling(shapes=True)
    for n in range(1, 7):
        vm([np.zeros((n, 2))])
    vm([np.zeros((1, 2))])
    sigs = vm.stats()["shapes"][0]
    assert len(sigs) == 4
    assert sigs[0] == ((("<f8", (1, 2), (16, 8)),), (("<f8", (2, 1), (8, 16)),))


# -- reentrancy ----------------------------------------------------------------------------


def test_reentrant_call_raises(kind):
    holder = {}

    def recurse(inputs, cells):
        with pytest.raises(RuntimeError, match="a node of it called it again") as err:
            holder["vm"]([0])
        assert not isinstance(err.value, FunctionBusy)  # not worth waiting for: it fails
        cells[0][0] = 1

    holder["vm"] = vm = new_vm(
        kind, prog(2, [0], [1], [NodeSpec("r", (0,), (1,), perform=recurse)])
    )
    assert vm([0]) == [1]


def test_concurrent_call_from_thread_raises(kind):
    entered, release = threading.Event(), threading.Event()

    def wait(inputs, cells):
        entered.set()
        release.wait(5)
        cells[0][0] = inputs[0]

    vm = new_vm(kind, prog(2, [0], [1], [NodeSpec("w", (0,), (1,), perform=wait)]))
    result = []
    t = threading.Thread(target=lambda: result.append(vm([7])))
    t.start()
    assert entered.wait(5)
    try:
        with pytest.raises(FunctionBusy, match="already running in another thread"):
            vm([8])  # the VM refuses; Function.__call__ waits for its turn (test_threads)
    finally:
        release.set()
        t.join(5)
    assert result == [[7]]
    assert vm([9]) == [9]


# -- C thunks --------------------------------------------------------------------------------


def test_c_thunks_agree(kind, cthunks):
    p = prog(
        6,
        [0, 1],
        [5, 4, 3],
        [
            cnode(cthunks, "add1", [0], [2], "add1"),
            cnode(cthunks, "swap", [2, 1], [3, 4], "swap"),
            cnode(cthunks, "addp", [3], [5], "add_param", cthunks.PARAMS_10),
        ],
    )
    for allow_gc in (True, False):
        vm = new_vm(kind, p, allow_gc=allow_gc)
        assert vm([1, 100]) == [110, 2, 100]
        assert vm([np.float64(1.5), 3]) == [13, 2.5, 3]
        out = vm([np.arange(3), 0])
        assert out[0] == 10 and out[1].tolist() == [1, 2, 3]


def test_c_and_python_nodes_mixed(kind, cthunks):
    p = prog(
        4,
        [0],
        [3],
        [
            cnode(cthunks, "add1", [0], [1], "add1"),
            node("double", [1], [2], lambda v: v * 2),
            cnode(cthunks, "add1b", [2], [3], "add1"),
        ],
    )
    vm = new_vm(kind, p)
    vm.set_profiling(timing=True)
    assert vm([3]) == [9]
    assert vm.stats()["calls"].tolist() == [1, 1, 1]


def test_c_thunk_failure(kind, cthunks):
    p = prog(
        4,
        [0],
        [3],
        [
            cnode(cthunks, "ok", [0], [1], "add1"),
            cnode(cthunks, "bad", [1], [2], "fail"),
            cnode(cthunks, "after", [2], [3], "add1"),
        ],
    )
    vm = new_vm(kind, p)
    x = Box(1)
    rx = weakref.ref(x)
    with pytest.raises(ValueError, match="fail thunk always fails"):
        vm([np.ones(2)])
    assert vm.failed_node == 1
    with pytest.raises(TypeError):  # add1 on a Box
        vm([x])
    assert vm.failed_node == 0
    del x
    gc.collect()
    assert rx() is None


def test_c_thunk_null_output(kind, cthunks):
    vm = new_vm(kind, prog(2, [0], [1], [cnode(cthunks, "nul", [0], [1], "null_out")]))
    with pytest.raises(SystemError, match="nul"):
        vm([1])
    assert vm.failed_node == 0


def test_wrong_capsule_name_rejected(kind, cthunks):
    with pytest.raises(ValueError):
        new_vm(kind, prog(2, [0], [1], [cnode(cthunks, "p", [0], [1], "PARAMS_10")]))


@pytest.mark.parametrize("allow_gc", [True, False])
def test_c_refcounts_stable(kind, cthunks, allow_gc):
    p = prog(
        5,
        [0, 1],
        [4, 0, 3],
        [
            cnode(cthunks, "copy", [0], [2], "copy"),
            cnode(cthunks, "swap", [2, 1], [3, 4], "swap"),
        ],
    )
    vm = new_vm(kind, p, allow_gc=allow_gc)
    a, b = object(), np.zeros(3)
    vm([a, b])
    ra, rb = sys.getrefcount(a), sys.getrefcount(b)
    for _ in range(10_000):
        out = vm([a, b])
    assert out == [a, a, b]
    del out
    assert (sys.getrefcount(a), sys.getrefcount(b)) == (ra, rb)


def test_c_thunk_reuses_previous_value_without_gc(kind, cthunks):
    """Without gc the thunk finds its previous output in the slot (and may reuse it)."""
    p = prog(3, [0], [2], [cnode(cthunks, "a", [0], [1], "add1"), node("b", [1], [2], abs)])
    vm = new_vm(kind, p, allow_gc=False)
    v = 12345.5
    vm([v])
    r = sys.getrefcount(v)
    for _ in range(1000):
        vm([v])
    assert sys.getrefcount(v) == r


# -- make_vm fallback ----------------------------------------------------------------------


def test_make_vm_falls_back_with_one_warning(monkeypatch):
    monkeypatch.setattr(vm_pkg, "_load_cvm", lambda: None)
    monkeypatch.setattr(vm_pkg, "_warned", False)
    p = _chain(1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v1 = make_vm(p)
        v2 = make_vm(p)
    assert isinstance(v1, PyVM) and isinstance(v2, PyVM)
    assert len(caught) == 1
    msg = str(caught[0].message)
    assert "pip install -e ." in msg and "build_ext --inplace" in msg


def test_node_times_are_nanoseconds(kind):
    """Times read from the CPU's tick counter are converted to real nanoseconds."""
    import time

    def slow(x):
        time.sleep(0.005)
        return x

    vm = new_vm(kind, _chain(2, slow))
    vm.set_profiling(timing=True, trace_capacity=4)
    vm([0])
    st = vm.stats()
    assert (st["ns_total"] >= 4_500_000).all() and (st["ns_total"] < 200_000_000).all()
    start, dur = st["trace"][:, 2], st["trace"][:, 3]
    assert (dur >= 4_500_000).all()
    assert 0 <= start[1] - (start[0] + dur[0]) < 1_000_000  # the second starts as the first ends
    assert abs(start[0] - time.monotonic_ns()) < 5_000_000_000  # CLOCK_MONOTONIC ns
