"""Adding profiles: counts and nanoseconds of the same function (name + graph) add up."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence

from graphc.profile.data import model as pm

Signature = tuple[str, tuple[tuple[int, str, str], ...]]


def signature(fp: pm.FunctionProfile) -> Signature:
    """Identity of a function for merging: its name and its scheduled Apply nodes."""
    return fp.name, tuple((n.position, n.op_name, n.apply_name) for n in fp.nodes)


def snapshot(fp: pm.FunctionProfile) -> pm.FunctionProfile:
    """A deep copy (later counts of the live function do not change it)."""
    return copy.deepcopy(fp)


def _min_nonzero_calls(a: pm.NodeRecord, b: pm.NodeRecord) -> int:
    if a.calls == 0:
        return b.ns_min
    if b.calls == 0:
        return a.ns_min
    return min(a.ns_min, b.ns_min)


def _flops(a: pm.NodeRecord, b: pm.NodeRecord) -> float | None:
    if a.flops_per_call is None or b.flops_per_call is None:
        return a.flops_per_call if b.flops_per_call is None else b.flops_per_call
    calls = a.calls + b.calls
    if calls == 0:
        return a.flops_per_call
    return (a.flops_per_call * a.calls + b.flops_per_call * b.calls) / calls


def _pairwise(a: list[int], b: list[int], fn: Callable[[int, int], int]) -> list[int]:
    if not a or not b:
        return list(a or b)
    return [fn(x, y) for x, y in zip(a, b)]


def merge_nodes(a: pm.NodeRecord, b: pm.NodeRecord) -> pm.NodeRecord:
    """Sum of two records of the same Apply node."""
    out = copy.deepcopy(a)
    out.calls = a.calls + b.calls
    out.ns_total = a.ns_total + b.ns_total
    out.ns_min = _min_nonzero_calls(a, b)
    out.ns_samples = (a.ns_samples + b.ns_samples)[-pm.SAMPLE_CAP :]
    out.n_below_resolution = a.n_below_resolution + b.n_below_resolution
    out.first_calls = a.first_calls + b.first_calls
    out.first_ns = a.first_ns + b.first_ns
    out.flops_per_call = _flops(a, b)
    if a.sampled_flops is None or b.sampled_flops is None:
        src = a if b.sampled_flops is None else b
        out.sampled_flops, out.sampled_ns = src.sampled_flops, src.sampled_ns
    else:
        out.sampled_flops = a.sampled_flops + b.sampled_flops
        out.sampled_ns = a.sampled_ns + b.sampled_ns
    out.out_bytes_min = _pairwise(a.out_bytes_min, b.out_bytes_min, min)
    out.out_bytes_max = _pairwise(a.out_bytes_max, b.out_bytes_max, max)
    out.workspace_bytes = max(a.workspace_bytes, b.workspace_bytes)
    if b.calls and b.inputs:
        out.inputs, out.outputs = copy.deepcopy(b.inputs), copy.deepcopy(b.outputs)
    if a.calls and b.calls:
        _note_shapes(out.inputs, a.inputs, b.inputs)
        _note_shapes(out.outputs, a.outputs, b.outputs)
    if a.inner is not None and b.inner is not None:  # a loop node: its steps add up too
        out.inner = merge_functions(a.inner, b.inner)
    else:
        out.inner = copy.deepcopy(a.inner if b.inner is None else b.inner)
    return out


def _known(shape: tuple[int, ...] | None) -> list[tuple[int, ...]]:
    return [] if shape is None else [shape]


def _note_shapes(out: list[pm.ValueInfo], a: list[pm.ValueInfo], b: list[pm.ValueInfo]) -> None:
    """Record in ``out`` every shape ``a`` and ``b`` saw, when they differ."""
    for v, x, y in zip(out, a, b):
        seen = {s for w in (x, y) for s in (w.shapes_seen or _known(w.shape))}
        v.shapes_seen = sorted(tuple(s) for s in seen) if len(seen) > 1 else []


def _merge_compile(a: pm.CompilePhases, b: pm.CompilePhases) -> pm.CompilePhases:
    return pm.CompilePhases(
        total_ns=a.total_ns + b.total_ns,
        rewrite_ns=a.rewrite_ns + b.rewrite_ns,
        validate_ns=a.validate_ns + b.validate_ns,
        linker_ns=a.linker_ns + b.linker_ns,
        codegen_ns=a.codegen_ns + b.codegen_ns,
        compile_ns=a.compile_ns + b.compile_ns,
        import_ns=a.import_ns + b.import_ns,
        python_import_ns=a.python_import_ns + b.python_import_ns,
        n_apply=max(a.n_apply, b.n_apply),
    )


def merge_optimizer(
    a: pm.OptimizerProfile | None, b: pm.OptimizerProfile | None
) -> pm.OptimizerProfile | None:
    if a is None or b is None:
        return copy.deepcopy(a if b is None else b)
    passes: dict[str, pm.PassRecord] = {}
    for p in a.passes + b.passes:
        passes.setdefault(p.name, pm.PassRecord(p.name)).ns += p.ns
    rewrites: dict[str, pm.RewriteRecord] = {}
    for r in a.rewrites + b.rewrites:
        acc = rewrites.setdefault(r.name, pm.RewriteRecord(r.name))
        acc.tried += r.tried
        acc.applied += r.applied
        acc.ns += r.ns
    return pm.OptimizerProfile(list(passes.values()), list(rewrites.values()))


def merge_functions(a: pm.FunctionProfile, b: pm.FunctionProfile) -> pm.FunctionProfile:
    """Sum of two profiles of the same function (equal :func:`signature`)."""
    if signature(a) != signature(b):
        raise ValueError(f"cannot merge profiles of different functions: {a.name!r}")
    out = snapshot(a)
    out.calls = a.calls + b.calls
    out.call_ns = a.call_ns + b.call_ns
    out.vm_ns = a.vm_ns + b.vm_ns
    out.unsampled_calls = a.unsampled_calls + b.unsampled_calls
    out.sampled_vm_ns_sq = a.sampled_vm_ns_sq + b.sampled_vm_ns_sq
    out.first_calls = a.first_calls + b.first_calls
    out.first_call_ns = a.first_call_ns + b.first_call_ns
    out.first_vm_ns = a.first_vm_ns + b.first_vm_ns
    out.waited_calls = a.waited_calls + b.waited_calls
    out.wait_ns = a.wait_ns + b.wait_ns
    out.compile = _merge_compile(a.compile, b.compile)
    out.timing_supported = a.timing_supported and b.timing_supported
    out.memory_recorded = a.memory_recorded or b.memory_recorded
    out.clock_resolution_ns = max(a.clock_resolution_ns, b.clock_resolution_ns)
    peaks = [p for p in (a.measured_peak_bytes, b.measured_peak_bytes) if p is not None]
    out.measured_peak_bytes = max(peaks) if peaks else None
    out.nodes = [merge_nodes(x, y) for x, y in zip(a.nodes, b.nodes)]
    out.optimizer_profile = merge_optimizer(a.optimizer_profile, b.optimizer_profile)
    return out


def merge_all(groups: Iterable[Iterable[pm.FunctionProfile]]) -> list[pm.FunctionProfile]:
    """Merge function lists: equal signatures add up, others are appended in order."""
    out: list[pm.FunctionProfile] = []
    index: dict[Signature, int] = {}
    for group in groups:
        for fp in group:
            key = signature(fp)
            if key in index:
                out[index[key]] = merge_functions(out[index[key]], fp)
            else:
                index[key] = len(out)
                out.append(snapshot(fp))
    return out


def combined_optimizer(fps: Sequence[pm.FunctionProfile]) -> pm.OptimizerProfile | None:
    """The optimizer profiles of ``fps`` added together (None when none was recorded)."""
    out: pm.OptimizerProfile | None = None
    for f in fps:
        if f.optimizer_profile is not None:
            out = merge_optimizer(out, f.optimizer_profile)
    return out
