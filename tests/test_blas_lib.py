"""Which BLAS the generated C calls (numpy's OpenBLAS, else scipy's), the same results from
either, and the thread pools left alone when graphc adds none."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import threadpoolctl

import graphc
import graphc.tensor as T
from graphc.linker import blas_lib
from graphc.linker import blas_threads as bt
from graphc.tensor.nnet import conv2d

C_ONLY = graphc.Mode(linker="c|py")


def _numpy_openblas_paths() -> list[str]:
    """Independently of graphc: the OpenBLAS libraries that live in numpy's install."""
    home = os.path.dirname(os.path.realpath(np.__file__))
    return [
        os.path.realpath(lib.filepath)
        for lib in threadpoolctl.ThreadpoolController().lib_controllers
        if lib.internal_api == "openblas"
        and os.path.realpath(lib.filepath).startswith((home + os.sep, home + ".libs" + os.sep))
    ]


def test_auto_picks_numpys_openblas_when_numpy_has_one():
    lib = blas_lib.blas_library("auto")
    paths = _numpy_openblas_paths()
    if paths:
        assert (lib.source, lib.filepath) == ("numpy", paths[0])
    else:
        assert lib.source == "scipy"
    assert len(lib.addresses) == len(blas_lib.ROUTINES) and all(lib.addresses)


def test_a_module_built_for_other_integers_refuses_to_load():
    lib = blas_lib.blas_library("auto")
    with pytest.raises(ImportError, match="other integers"):
        blas_lib.addresses(lib.source, not lib.ilp64)
    assert blas_lib.addresses(lib.source, lib.ilp64) == lib.addresses


def test_the_flag_rejects_unknown_libraries():
    with pytest.raises(ValueError), graphc.config.change_flags(blas_library="mkl"):
        pass


def _products():
    x, y, v = T.dmatrix("x"), T.dmatrix("y"), T.dvector("v")
    z = graphc.shared(np.ones((5, 4)), "z")
    xs, ys = T.fmatrix("xs"), T.fmatrix("ys")
    outs = [T.dot(x, y), T.dot(x, v[:3]), T.dot(v, v), T.dot(xs, ys.T), T.dot(xs[0], ys[1]),
            T.dot(xs, ys[0])]  # fmt: skip
    f = graphc.function([x, y, v, xs, ys], outs, updates=[(z, z - 0.5 * T.dot(x, y * 2))],
                        mode=C_ONLY)  # fmt: skip
    return f, z


@pytest.mark.parametrize("library", ["auto", "scipy"])
def test_either_library_computes_what_numpy_does(library):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 8))[:, :5]  # x.T: column-major with a leading dimension
    y = rng.standard_normal((3, 4))
    v = rng.standard_normal(7)[::2][:3]  # a BLAS increment of 2
    xs, ys = rng.standard_normal((4, 6)).astype("f4"), rng.standard_normal((5, 6)).astype("f4")
    with graphc.config.change_flags(blas_library=library):
        f, z = _products()
        got = [*f(x.T, y, v, xs, ys), z.get_value()]
    ops = {type(n.op).__name__: i.is_c for n, i in zip(f.linked.schedule, f.linked.impls)}
    assert all(ops.get(name) for name in ("Dot22", "Gemv", "Gemm", "Dot")), ops
    want = [x.T @ y, x.T @ v, v @ v, xs @ ys.T, xs[0] @ ys[1], xs @ ys[0],
            np.ones((5, 4)) - x.T @ y]  # fmt: skip
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5 if g.dtype == np.float32 else 1e-12)


def test_auto_threads_add_no_split_when_graphc_calls_numpys_pool():
    import scipy.linalg  # noqa: F401 - a second pool in the process

    numpy_pool = blas_lib.blas_library("auto").source == "numpy"
    before = {
        lib.filepath: lib.num_threads
        for lib in threadpoolctl.ThreadpoolController().lib_controllers
    }
    bt._reset_for_tests()
    try:
        with threadpoolctl.threadpool_limits(4, user_api="blas"):  # the pools oversubscribe
            counts = [p["num_threads"] for p in bt.pools()]
            with graphc.config.change_flags(blas_threads="auto"):
                x = T.dmatrix("x")
                graphc.function([x], T.dot(x, x.T), mode=C_ONLY)
            want = counts if numpy_pool else bt.plan_threads(counts, bt.usable_cpus(), "auto")
            assert [p["num_threads"] for p in bt.pools()] == want
    finally:
        for lib in threadpoolctl.ThreadpoolController().lib_controllers:
            if lib.filepath in before:
                lib.set_num_threads(before[lib.filepath])
        bt._reset_for_tests()


def test_no_second_blas_pool_is_loaded_by_either_linker():
    """In a fresh process, products compiled by both linkers leave scipy's BLAS unloaded
    (when numpy has its own): every product runs in numpy's pool."""
    code = """
import sys, numpy as np, graphc, graphc.tensor as T
x, z = T.dmatrix('x'), T.dmatrix('z')
outs = [T.dot(x, x.T), z - 0.1 * T.dot(x, x.T), T.dot(x, x[0])]
for linker in ('py', 'c|py'):
    f = graphc.function([x, z], outs, mode=graphc.Mode(linker=linker))
    a = np.arange(6.0).reshape(2, 3)
    got = f(a, np.ones((2, 2)))
    np.testing.assert_allclose(got[1], np.ones((2, 2)) - 0.1 * a @ a.T)
print(graphc.linker.blas_lib.blas_library().source, 'scipy.linalg' in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()  # fmt: skip
    source = blas_lib.blas_library("auto").source
    assert out == [source, str(source == "scipy")]


@pytest.mark.parametrize("library", ["auto", "scipy"])
def test_convolution_through_either_library_matches_the_python_implementation(library):
    x, w = T.dtensor4("x"), T.dtensor4("w")
    out = conv2d(x, w, border_mode="valid")
    cost = (out**2).sum()
    outs = [out, *graphc.grad(cost, [x, w])]
    rng = np.random.default_rng(3)
    args = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 2))
    want = graphc.function([x, w], outs, mode=graphc.Mode(linker="py"))(*args)
    with graphc.config.change_flags(blas_library=library):
        f = graphc.function([x, w], outs, mode=C_ONLY)
    assert sum(i.is_c for n, i in zip(f.linked.schedule, f.linked.impls)
               if "Conv" in type(n.op).__name__) >= 3  # fmt: skip
    for g, wv in zip(f(*args), want):
        np.testing.assert_allclose(g, wv, rtol=1e-10, atol=1e-12)
