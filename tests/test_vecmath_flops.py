"""The vector math's flop counts (``vecmath.FLOPS``) are what ``scripts/vecmath_flops.py``
counts in the compiled code, and the element-wise loops' counts add them up."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

import graphc
import graphc.tensor as T
from graphc.linker.c.loop_flops import loops_flops
from graphc.linker.c.vecmath import FLOPS

_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "vecmath_flops.py"
_spec = importlib.util.spec_from_file_location("vecmath_flops", _SCRIPT)
assert _spec is not None and _spec.loader is not None
counter = importlib.util.module_from_spec(_spec)
sys.modules["vecmath_flops"] = counter
_spec.loader.exec_module(counter)

needs_toolchain = pytest.mark.skipif(
    not ((shutil.which("cc") or shutil.which("gcc")) and shutil.which("objdump")),
    reason="counting flops compiles and disassembles: needs cc and objdump",
)


@pytest.mark.parametrize(
    ("mnemonic", "operands", "flops"),
    [
        ("vaddsd", "%xmm1,%xmm2,%xmm3", 1),
        ("vfmadd231ss", "%xmm1,%xmm2,%xmm3", 2),
        ("vmulpd", "%zmm1,%zmm2,%zmm3", 8),  # 8 double lanes
        ("vfnmadd132ps", "%zmm1,%zmm2,%zmm3{%k1}", 32),  # 16 float lanes, 2 each
        ("vdivpd", "%ymm1,%ymm2,%ymm3", 4),
        ("vmaxps", "%xmm1,%xmm2,%xmm3", 4),
        ("vcmpltpd", "%zmm1,%zmm2,%k1", 0),
        ("vblendmpd", "%zmm1,%zmm2,%zmm3{%k1}", 0),
        ("vandpd", "%zmm1,%zmm2,%zmm3", 0),  # fabs
        ("vcvtqq2pd", "%zmm1,%zmm2", 0),
        ("vpaddq", "%zmm1,%zmm2,%zmm3", 0),
    ],
)
def test_instructions_count_as_a_roofline_counts_them(mnemonic, operands, flops):
    assert counter.instruction_flops(mnemonic, operands) == flops


def test_code_with_a_branch_is_refused():
    with pytest.raises(ValueError, match="not straight-line code: ja"):
        counter.count([("vaddsd", "%xmm0,%xmm1,%xmm1"), ("ja", "10 <f+0x10>")], 1)


@needs_toolchain
def test_a_known_kernel_counts_its_operations():
    # per element: a*x + b (an fma, 2), sqrt (1), a division (1); the select, fabs and
    # the compare are free: 4 flops
    src = (
        "#pragma omp declare simd notinbranch\n"
        "double k(double x) { double y = fabs(x) * 3.0 + 1.0;\n"
        "  return (x > 0.5 ? y : 2.0) / sqrt(y); }\n"
    )
    asm = counter.disassemble(counter.PRELUDE + src)
    assert counter.clone_flops(asm, "k") == 4


@needs_toolchain
def test_the_table_is_what_the_compiled_code_does():
    assert counter.vecmath_flops() == FLOPS, "stale: run scripts/vecmath_flops.py"


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_fused_loop_sums_its_scalar_nodes(dtype):
    x, y, z = (T.tensor(dtype, (None,), name=s) for s in "xyz")
    f = graphc.function([x, y, z], T.exp(x) * y + T.tanh(z) - x**2)
    nodes = f.maker.fgraph.toposort()
    assert len(nodes) == 1  # one fused loop
    # exp, tanh, then *, +, x**2 (one product) and -
    assert loops_flops(nodes) == FLOPS[dtype]["exp"] + FLOPS[dtype]["tanh"] + 4
    g = graphc.function([x, y, z], (x * y + z) * x - y)
    assert loops_flops(g.maker.fgraph.toposort()) == 4


def test_a_sum_in_the_loop_adds_one_and_integers_count_none():
    x, y = T.dvector("x"), T.dvector("y")
    t = T.exp(x)
    f = graphc.function([x, y], [t * 2, t.sum(), T.tanh(t) + y])
    # exp, *2 and the sum in one loop, tanh and + in the other
    assert (
        loops_flops(f.maker.fgraph.toposort())
        == FLOPS["float64"]["exp"] + 1 + 1 + FLOPS["float64"]["tanh"] + 1
    )
    i, j = T.lvector("i"), T.lvector("j")
    assert loops_flops(graphc.function([i, j], i * j + i).maker.fgraph.toposort()) == 0


def test_casts_negation_and_abs_are_free():
    x, y = T.dvector("x"), T.fvector("y")
    f = graphc.function([x, y], T.cast(x, "float32") * y + abs(-y))
    assert loops_flops(f.maker.fgraph.toposort()) == 2  # the product and the sum


def test_every_arithmetic_operator_is_counted():
    """Each of + - * / min max sqrt clip counts its operations (a class left without its
    count would raise NotImplementedError here)."""
    x, y = T.dvector("x"), T.dvector("y")
    cases = [(1, x / y), (2, x * y - y), (4, T.sqrt(T.maximum(x, y) + T.minimum(x, y))),
             (4, T.clip(x, 0, 1) + y * y)]  # fmt: skip
    for want, out in cases:
        f = graphc.function([x, y], out)
        assert loops_flops(f.maker.fgraph.toposort()) == want, out


def test_an_uncounted_function_is_named():
    x = T.dvector("x")
    f = graphc.function([x], T.sin(x) * x)
    with pytest.raises(NotImplementedError, match="'sin'"):
        loops_flops(f.maker.fgraph.toposort())
