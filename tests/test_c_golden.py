"""The C emitted for three representative graphs, compared with files kept in tests/golden.

The graphs are built by hand and compiled without rewrites, so only code generation
decides the text. A golden holds, per node, the thunk body its generator emits, then the
support code and module-init statements the nodes bring; library code kept verbatim as a
constant of a generator's module (the element-wise driver, the BLAS loader...) is named by
a one-line marker instead. The linker's module assembly around them is tested by running
it. After an intended change to the generated C, rewrite the files with
``GRAPHC_UPDATE_GOLDEN=1 pytest tests/test_c_golden.py`` and review their diff.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
from pathlib import Path

import numpy as np
import pytest

import graphc
import graphc.linker.c
import graphc.tensor as T
from graphc.linker import c_available
from graphc.linker.blas_lib import blas_library
from graphc.linker.c import gen_blas
from graphc.linker.c.generators import c_code_for
from graphc.scalar import basic as ps
from graphc.tensor import blas, nnet
from graphc.tensor.elemwise import Elemwise

pytestmark = pytest.mark.skipif(not c_available(), reason="no C compiler")

GOLDEN = Path(__file__).parent / "golden"
C_ONLY = graphc.Mode(linker="c|py", optimizer=None)


def _elemwise():
    """A fused Composite (float32, with a broadcast row), a mixed-sign integer comparison,
    a sum, an argmax and a DimShuffle."""
    x, y = T.matrix("x", dtype="float32"), T.vector("y", dtype="float32")
    i, u = T.vector("i", dtype="int64"), T.vector("u", dtype="uint64")
    a, b = ps.ScalarType("float32")(), ps.ScalarType("float32")()
    body = ps.sub(ps.add(ps.mul(ps.exp(a), b), ps.sqrt(ps.abs_(a))), ps.tanh(b))
    fused = Elemwise(ps.Composite([a, b], [body]))(x, y.dimshuffle("x", 0))
    outs = [fused, T.le(i, u), x.sum(axis=0), T.argmax(x, axis=1), y.dimshuffle(0, "x")]
    return [x, y, i, u], outs


def _blas_nnet():
    """Gemm, Dot22, a matrix-vector Dot, softmax and the fused softmax cross-entropy."""
    z, a, b = (T.matrix(n, dtype="float64") for n in "zab")
    v, alpha = T.vector("v", dtype="float64"), T.scalar("alpha", dtype="float64")
    labels = T.ivector("labels")
    outs = [
        blas.gemm(z, alpha, a, b, 0.5),
        blas.dot22(a, b),
        blas.dot(a, v),
        nnet.softmax(a),
        nnet.crossentropy_softmax_1hot(a, labels)[0],
    ]
    return [z, a, b, v, alpha, labels], outs


def _shape():
    """Shape_i, Alloc, Reshape, Join and a basic Subtensor with a symbolic bound."""
    x, n, s = T.matrix("x", dtype="float64"), T.iscalar("n"), T.lvector("s")
    outs = [x.shape[0], T.alloc(np.float64(1), n, 3), x.reshape(s, ndim=2),
            T.concatenate([x, x], axis=1), x[1:n, ::2]]  # fmt: skip
    return [x, n, s], outs


GRAPHS = {"elemwise": _elemwise, "blas_nnet": _blas_nnet, "shape": _shape}


def _library_texts() -> dict[str, str]:
    """Every C text kept as a module constant by the C generators (and the prelude)."""
    texts: dict[str, str] = {}
    for info in pkgutil.iter_modules(graphc.linker.c.__path__):
        mod = importlib.import_module(f"graphc.linker.c.{info.name}")
        for name, value in vars(mod).items():
            items = value if isinstance(value, tuple) else (value,)
            for k, item in enumerate(items):
                if isinstance(item, str) and item.count("\n") >= 3:
                    where = f"{mod.__name__}.{name}" + (f"[{k}]" if item is not value else "")
                    texts.setdefault(item, where)
    lib = blas_library()  # the BLAS loader: a template filled for the library in use
    texts[gen_blas.loader()] = f"graphc.linker.c.gen_blas.loader() for {lib.source}'s BLAS"
    return texts


def emitted(schedule) -> str:
    """Each node's thunk body, then the support and init code of all of them (in first-use
    order, once each), library texts as markers."""
    library = _library_texts()
    parts, support, init = [], {}, {}
    for k, node in enumerate(schedule):
        code = c_code_for(node)
        assert code is not None, str(node)
        parts.append(f"/* ---- thunk body of node {k}: {node.op} */\n{code.body}")
        support.update(dict.fromkeys(code.support))
        init.update(dict.fromkeys(code.init))
    for text in support:
        where = library.get(text)
        parts.append(text if where is None else f"/* library text: {where} */")
    parts.append("/* ---- module init */\n" + "\n".join(init))
    return "\n\n".join(parts)


def normalized(source: str) -> str:
    """Trailing blanks and runs of blank lines do not count."""
    lines = [line.rstrip() for line in source.strip().splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)) + "\n"


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_emitted_c_matches_golden(name):
    inputs, outputs = GRAPHS[name]()
    with graphc.config.change_flags(blas_library="scipy"):  # the same on every machine
        f = graphc.function(inputs, outputs, mode=C_ONLY)
        assert all(i.is_c for i in f.linked.impls), [
            str(n) for n, i in zip(f.linked.schedule, f.linked.impls) if not i.is_c
        ]
        got = normalized(emitted(f.linked.schedule))
    path = GOLDEN / f"{name}.c"
    if os.environ.get("GRAPHC_UPDATE_GOLDEN"):
        path.write_text(got)
    want = path.read_text()
    assert got == want, f"the C emitted for {name} changed; see the module docstring"
