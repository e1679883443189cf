"""Count the floating-point operations of graphc's vector math and print ``FLOPS``.

    python3 scripts/vecmath_flops.py      # needs a C compiler (cc) and objdump

graphc/linker/c/vecmath.py is compiled with the generated C's flags for AVX-512
(x86-64-v4, 512-bit vectors; ``-O3 -fno-math-errno -fno-trapping-math``), and the
floating-point arithmetic of each function's SIMD clone ``_ZGVeN<lanes>v_gc_vmo_<fn>_<ct>``
(the code a kernel runs per vector) is counted as a roofline tool counts executed
operations (Intel's FP_ARITH_INST_RETIRED events): per lane, add, sub, mul, div, sqrt,
min, max 1 and fused multiply-add 2; compares, blends, conversions, moves, integer and bit
operations (``fabs``, ``copysign``, negation) 0. The sum over the clone, divided by its
lanes, is the flops per element. Every select of the functions is a masked blend there: a
jump or a call in a clone is an error, since its count would then depend on the input.
(Scalar code is no use: gcc turns the selects into branches.)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CFLAGS = ("-O3", "-march=x86-64-v4", "-mprefer-vector-width=512", "-fopenmp-simd",
          "-fno-math-errno", "-fno-trapping-math", "-fwrapv", "-c")  # fmt: skip

PRELUDE = """#include <math.h>
#include <stdint.h>
#include <string.h>
typedef int64_t npy_int64;
typedef int32_t npy_int32;
typedef uint64_t npy_uint64;
typedef uint32_t npy_uint32;
typedef double npy_float64;
typedef float npy_float32;
"""

_ARITH = re.compile(r"^v?(add|sub|mul|div|sqrt|min|max)([ps])([sd])$")
_FMA = re.compile(r"^vf(n)?m(add|sub)(132|213|231)([ps])([sd])$")
_BRANCH = re.compile(r"^(j\w+|call\w*|loop\w*)$")
_REG_BYTES = {"xmm": 16, "ymm": 32, "zmm": 64}

_C_TYPES = {"float64": "npy_float64", "float32": "npy_float32"}


def instruction_flops(mnemonic: str, operands: str = "") -> int:
    """Flops one executed instruction does over all its lanes (0: not floating-point
    arithmetic). A packed instruction's lanes are its widest register over its element."""
    fma = _FMA.match(mnemonic)
    m = fma or _ARITH.match(mnemonic)
    if m is None:
        return 0
    packed, elem = m.group(m.lastindex - 1), m.group(m.lastindex)
    lanes = 1
    if packed == "p":
        widths = [_REG_BYTES[r] for r in re.findall(r"%([xyz]mm)\d+", operands)]
        if not widths:
            raise ValueError(f"{mnemonic} {operands}: no vector register, lanes unknown")
        lanes = max(widths) // (8 if elem == "d" else 4)
    return lanes * (2 if fma else 1)


def count(instructions: list[tuple[str, str]], lanes: int) -> float:
    """Flops per element of straight-line code over ``lanes`` elements; ValueError on a
    branch or call."""
    jumps = sorted({m for m, _ in instructions if _BRANCH.match(m)})
    if jumps:
        raise ValueError(f"not straight-line code: {', '.join(jumps)}")
    return sum(instruction_flops(m, ops) for m, ops in instructions) / lanes


def disassemble(source: str) -> dict[str, list[tuple[str, str]]]:
    """Compile ``source`` with :data:`CFLAGS`; per function symbol, its instructions as
    ``(mnemonic, operands)``."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or shutil.which("objdump") is None:
        raise FileNotFoundError("counting flops needs a C compiler (cc) and objdump")
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = Path(tmp, "flops.c"), Path(tmp, "flops.o")
        src.write_text(source, encoding="utf-8")
        subprocess.run([cc, *CFLAGS, str(src), "-o", str(obj)], check=True)
        text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(obj)], check=True,
                              capture_output=True, text=True).stdout  # fmt: skip
    out: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for line in text.splitlines():
        head = re.match(r"^[0-9a-f]+ <([\w.]+)>:$", line)
        if head:
            current = out.setdefault(head.group(1), [])
        elif current is not None and re.match(r"^\s+[0-9a-f]+:\t", line):
            parts = line.split("\t")[1].split(None, 1)
            current.append((parts[0], parts[1] if len(parts) > 1 else ""))
    return out


def clone_flops(asm: dict[str, list[tuple[str, str]]], name: str) -> float:
    """Flops per element of the AVX-512 SIMD clone of the C function ``name``."""
    clones = [s for s in asm if re.fullmatch(rf"_ZGVeN\d+v_{name}", s)]
    if len(clones) != 1:
        raise ValueError(f"expected one AVX-512 SIMD clone of {name}, found {clones}")
    lanes = int(re.match(r"_ZGVeN(\d+)", clones[0]).group(1))  # type: ignore[union-attr]
    return count(asm[clones[0]], lanes)


def vecmath_flops() -> dict[str, dict[str, float]]:
    """``dtype -> function -> flops per element`` of graphc/linker/c/vecmath.py."""
    from graphc.linker.c import vecmath

    # the clones are static (emitted only where called): export them here
    clones = vecmath._OUT_OF_LINE.replace(") static ", ") ")
    asm = disassemble(PRELUDE + vecmath._F64 + vecmath._F32 + clones)
    return {dt: {fn: clone_flops(asm, f"gc_vmo_{fn}_{ct}") for fn in vecmath.FUNCTIONS}
            for dt, ct in _C_TYPES.items()}  # fmt: skip


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    table = vecmath_flops()
    print("FLOPS: dict[str, dict[str, float]] = {")
    for dt, row in table.items():
        cells = [f'"{fn}": {n:g}' for fn, n in row.items()]
        print(f'    "{dt}": {{' + ", ".join(cells[:4]) + ",")
        print(" " * 16 + ", ".join(cells[4:]) + "},")
    print("}  # fmt: skip")


if __name__ == "__main__":
    main()
