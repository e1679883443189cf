"""A real VM run, copied into a profile: the memory model agrees with the VM's own peak."""

from __future__ import annotations

import io

import numpy as np
import pytest

from graphc.profile import FunctionProfile, NodeRecord, ProfileStats, StorageRecord
from graphc.profile.data.vmstats import update_from_vm_stats
from graphc.profile.summaries.memory import memory_figures

program_mod = pytest.importorskip("graphc.linker.program")
vm_mod = pytest.importorskip("graphc.vm")


def _perform(fn):
    def perform(inputs, cells):
        cells[0][0] = fn(*inputs)

    return perform


def _program():
    P, N = program_mod.Program, program_mod.NodeSpec
    nodes = (
        N("add(x, y)", (0, 1), (2,), perform=_perform(np.add)),
        N("mul(add.0, x)", (2, 0), (3,), perform=_perform(np.multiply)),
        N("sum(mul.0)", (3,), (4,), perform=_perform(np.sum)),
    )
    return P(n_storage=5, inputs=(0, 1), outputs=(4,), constants=(), nodes=nodes)


def _profile(program) -> FunctionProfile:
    schedule = program_mod.gc_schedule(program)
    return FunctionProfile(
        "f",
        vm_kind="py",
        memory_recorded=True,
        inputs=[StorageRecord("x", 0, 8000), StorageRecord("y", 1, 8000)],
        output_slots=list(program.outputs),
        nodes=[
            NodeRecord(
                i,
                spec.name,
                spec.name.split("(")[0],
                "graphc.tensor.elemwise.Elemwise",
                input_slots=list(spec.inputs),
                output_slots=list(spec.outputs),
                output_kinds=["c"] * len(spec.outputs),
                frees_after=list(schedule[i]),
            )
            for i, spec in enumerate(program.nodes)
        ],
    )


@pytest.mark.parametrize("kind", ["py", "cvm"])
def test_model_peak_matches_vm_peak(kind):
    if kind == "cvm" and not vm_mod.cvm_available():
        pytest.skip("Cython VM not built")
    program = _program()
    vm = vm_mod.make_vm(program, kind=kind, allow_gc=True)
    vm.set_profiling(timing=True, memory=True, shapes=True)
    x = np.ones(1000)
    for _ in range(3):
        vm([x, x])
    fp = _profile(program)
    update_from_vm_stats(fp, vm.stats())
    assert [n.calls for n in fp.nodes] == [3, 3, 3]
    assert fp.nodes[2].out_bytes_max == [8]
    # add.0 and mul.0 (8000B each) are alive together at node 1; then mul.0 + the 8B sum
    assert memory_figures(fp).peak_gc == 16000 == fp.measured_peak_bytes
    assert memory_figures(fp).peak_no_gc == 16008
    out = io.StringIO()
    ProfileStats([fp]).summary(file=out)
    assert any(
        line.startswith("    float64 (1000,)") and "->" in line
        for line in out.getvalue().splitlines()
    )
