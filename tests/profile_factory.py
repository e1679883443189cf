"""Hand-made profiles for the profiler tests (numbers as a fake clock would record)."""

from __future__ import annotations

from graphc.profile import CompilePhases, FunctionProfile, NodeRecord, ValueInfo

ELEMWISE = "graphc.tensor.elemwise.Elemwise"
DOT = "graphc.tensor.blas.Dot"
VEC = ValueInfo("float64", (1000,), (8,))


def node(position: int, apply_name: str, op_name: str, op_class: str = ELEMWISE, **kw):
    """A NodeRecord with defaults for everything the test does not care about."""
    return NodeRecord(
        position=position, apply_name=apply_name, op_name=op_name, op_class=op_class, **kw
    )


def four_node_function(name: str = "f") -> FunctionProfile:
    """Nodes of 3e6, 1e6, 5e5 and 5e5 ns over 10 calls; thunks total 5e6 ns.

    Class: Elemwise 4e6 (80%), Dot 1e6 (20%).  Ops: add 3.5e6 (70%), dot 1e6 (20%),
    mul 5e5 (10%).  Apply: add 60%, dot 20%, mul 10%, add 10%.
    """
    return FunctionProfile(
        name=name,
        calls=10,
        call_ns=8_000_000,
        vm_ns=6_000_000,
        compile=CompilePhases(
            total_ns=2_500_000_000,
            rewrite_ns=1_000_000_000,
            validate_ns=1_000_000,
            linker_ns=1_400_000_000,
            codegen_ns=200_000_000,
            compile_ns=1_000_000_000,
            import_ns=3_000_000,
            n_apply=4,
        ),
        mode="FAST_RUN",
        linker="c|py",
        optimizer="fast_run",
        rewrites_excluded=["fusion", "inplace"],
        vm_kind="cvm",
        clock_resolution_ns=50,
        nodes=[
            node(
                0,
                "add(x, y)",
                "add",
                impl="C",
                calls=10,
                ns_total=3_000_000,
                ns_min=250_000,
                ns_samples=[200_000, 300_000, 400_000],
                flops_per_call=1e6,
                inputs=[VEC, VEC],
                outputs=[VEC],
                input_slots=[0, 1],
                output_slots=[4],
            ),
            node(
                1,
                "dot(x, W)",
                "dot",
                DOT,
                impl="Py",
                calls=10,
                ns_total=1_000_000,
                ns_min=90_000,
                ns_samples=[100_000, 100_000],
                inputs=[VEC, ValueInfo("float64", (1000, 1000), (8, 8000))],
                outputs=[ValueInfo("float64", (1000,), (8,))],
                input_slots=[0, 2],
                output_slots=[5],
            ),
            node(
                2,
                "mul(add.0, 2.0)",
                "mul",
                impl="C",
                calls=10,
                ns_total=500_000,
                ns_min=40_000,
                ns_samples=[50_000],
                input_slots=[4, 3],
                output_slots=[6],
            ),
            node(
                3,
                "add(mul.0, dot.0)",
                "add",
                impl="C",
                calls=10,
                ns_total=500_000,
                ns_min=50_000,
                ns_samples=[50_000],
                input_slots=[6, 5],
                output_slots=[7],
            ),
        ],
        output_slots=[7],
    )


def noisy_run(seed: int, slower: float = 1.0, machine: float = 1.0) -> FunctionProfile:
    """``four_node_function`` as one fresh process on a loaded machine would record it: 32
    recent per-call samples per node around its mean, scaled by this process's own level
    (CPU frequency, neighbours: sd 8%) and by ``machine`` (a load that processes run close
    in time share), with 5% noise per call and 1 call in 20 preempted (5x). ``slower``
    multiplies the ``add(x, y)`` node's times. Deterministic per ``seed``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    fp = four_node_function("step")
    level = machine * float(np.exp(rng.normal(0.0, 0.08)))
    for n in fp.nodes:
        per_call = n.ns_total / n.calls * level * (slower if n.position == 0 else 1.0)
        s = per_call * np.exp(rng.normal(0.0, 0.05, 32))
        s[rng.random(32) < 0.05] *= 5
        n.ns_samples = [int(x) for x in s]
        n.calls, n.ns_total = 32, int(s.sum())
    return fp
