"""Importing any public module gives complete rule tables: no table depends on an import
its user has to remember.

Each public module of graph, scalar, tensor, opt and linker is imported alone in a fresh
interpreter, which then reports, for every table it has loaded, the Op classes with a
rule: every class a full import has a rule for and whose module this import loaded (an
Op it can build) must have one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "graphc"
LAYERS = ("graph", "scalar", "tensor", "opt", "linker")

# Prints, as JSON, the tables loaded after the import given as argv[1]: table name -> the
# Op classes with a rule. A table is reported when its owner module is loaded and the
# package whose Ops fill it is too (a graph of tensor Ops exists only once graphc.tensor
# is imported); reading a table imports nothing.
PROBE = r"""
import importlib, json, sys
if sys.argv[1]:
    importlib.import_module(sys.argv[1])
m = sys.modules

def names(table):
    return sorted(f"{c.__module__}.{c.__qualname__}" for c in table)

def scalar_classes():
    ps = m["graphc.scalar.basic"]
    return [type(op) for op in ps.all_scalar_ops().values()]

out = {}
if "graphc.tensor" in m:
    out["gradient"] = names(m["graphc.tensor.elemwise"].GRAD_RULES)
    out["constant value"] = names(m["graphc.tensor.constant_value"].CONSTANT_RULES)
    if "graphc.graph.rop" in m:
        out["R_op"] = names(m["graphc.graph.rop"]._RULES)
    if "graphc.printing" in m:
        out["pprint"] = names(m["graphc.printing"].PPRINT_RULES)
    eg = m["graphc.tensor.elemwise_grad"]
    out["scalar gradient"] = sorted(
        c.__name__ for c in scalar_classes() if c.gradient != "rule" or eg.rule_of(c()) is not None
    )
if "graphc.scalar.c_code" in m:
    cc = m["graphc.scalar.c_code"]
    out["scalar C"] = sorted(
        c.__name__ for c in scalar_classes()
        if cc.code_for_op.get(c) is not None or c.libm is not None
    )
if "graphc.linker.c.registry" in m and "graphc.tensor" in m:
    reg = m["graphc.linker.c.registry"]
    out["C generator"] = sorted(n for n in names(reg._GENERATORS))
if "graphc.opt.passes" in m:
    out["rewrites"] = sorted(
        n for n, rw in m["graphc.opt.engine"].REWRITES.items()
        if rw.fn.__module__.startswith("graphc.opt.")
    )
out["loaded"] = sorted(k for k in m if k.startswith("graphc"))
print(json.dumps(out))
"""

FULL = "import graphc, graphc.tensor, graphc.printing, graphc.opt.passes, graphc.linker.clinker"


def public_modules() -> list[str]:
    mods = []
    for layer in LAYERS:
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if any(p.startswith("_") for p in parts):
                continue
            mods.append(".".join(parts))
    return mods


def _probe(module: str, before: str = "") -> dict[str, list[str]]:
    code = before + "\n" + PROBE
    run = subprocess.run(
        [sys.executable, "-c", code, module], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, f"import {module}: {run.stderr[-2000:]}"
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def full() -> dict[str, list[str]]:
    """The tables after importing everything, with the C generators loaded."""
    before = FULL + "\nimport graphc.linker.c.generators"
    got = _probe("", before)
    assert set(got) >= {"gradient", "R_op", "pprint", "scalar C", "C generator", "rewrites"}
    return got


def test_the_probe_sees_a_table_that_is_missing_an_entry():
    before = FULL + (
        "\nfrom graphc.tensor.elemwise import GRAD_RULES, DimShuffle\ndel GRAD_RULES[DimShuffle]"
    )
    got = _probe("", before)
    assert "graphc.tensor.elemwise.DimShuffle" not in got["gradient"]


def test_importing_any_public_module_alone_gives_complete_tables(full):
    mods = public_modules()
    assert "graphc.tensor.elemwise" in mods and "graphc.linker.c.registry" in mods
    with ThreadPoolExecutor(max_workers=4) as pool:
        reports = dict(zip(mods, pool.map(_probe, mods)))
    incomplete = {}
    for mod, tables in reports.items():
        loaded = set(tables.pop("loaded"))
        for table, classes in tables.items():
            if table == "C generator":
                # the lookup loads the generator modules: what a lookup sees is complete
                continue
            # rules for every Op class this import can build (an Op's module is loaded)
            want = {c for c in full[table] if c.rpartition(".")[0] in loaded or "." not in c}
            if want - set(classes):
                incomplete[f"{mod}: {table}"] = sorted(want - set(classes))
    assert incomplete == {}


def test_a_c_generator_lookup_loads_every_generator_module(full):
    code = (
        "import json, graphc.tensor as T\n"
        "from graphc.linker.c import generators as g, registry as r\n"
        "g.generator_for(T.Elemwise)\n"
        "print(json.dumps(sorted(f'{c.__module__}.{c.__qualname__}' for c in r._GENERATORS)))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(run.stdout) == full["C generator"]
