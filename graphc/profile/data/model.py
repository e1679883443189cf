"""Plain profile data: what the VM and the compile steps record for one compiled function.

Nothing here knows about graphs, Ops or VMs; producers fill these records with strings,
ints and floats. Times are integer nanoseconds, sizes are bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graphc.profile.data.memplan import MemoryPlanRecord

#: How many recent per-call samples a merged node keeps for its median.
SAMPLE_CAP = 1024


@dataclass
class ValueInfo:
    """A value seen at run time by an Apply node (one input or output)."""

    dtype: str
    shape: tuple[int, ...] | None = None
    strides: tuple[int, ...] | None = None
    #: Every shape seen, when merged runs (e.g. workers) saw different ones; else empty.
    shapes_seen: list[tuple[int, ...]] = field(default_factory=list)


@dataclass
class NodeRecord:
    """One Apply node of one compiled function, with its run-time counters."""

    position: int
    apply_name: str
    op_name: str
    op_class: str
    impl: str = "Py"  # "C" or "Py"
    calls: int = 0
    ns_total: int = 0
    ns_min: int = 0
    ns_samples: list[int] = field(default_factory=list)
    n_below_resolution: int = 0
    flops_per_call: float | None = None
    #: flops and ns of the calls whose shapes were recorded (calls 1, 2, 4, ...; the first
    #: call left out when others were): Gflop/s from the same calls, each with its shapes
    sampled_flops: float | None = None
    sampled_ns: int = 0
    inputs: list[ValueInfo] = field(default_factory=list)
    outputs: list[ValueInfo] = field(default_factory=list)
    output_kinds: list[str] = field(default_factory=list)  # 'c', 'i' or 'v' per output
    output_aliases: list[int | None] = field(default_factory=list)  # input pos reused
    out_bytes_min: list[int] = field(default_factory=list)
    out_bytes_max: list[int] = field(default_factory=list)
    input_slots: list[int] = field(default_factory=list)
    output_slots: list[int] = field(default_factory=list)
    frees_after: list[int] | None = None
    has_c_impl: bool | None = None
    first_calls: int = 0  # how many of ``calls`` were a function's first call
    first_ns: int = 0  # their time (part of ns_total)
    origins: list[str] = field(default_factory=list)  # user source lines, "path:line"
    workspace_bytes: int = 0  # scratch a call allocates besides its outputs (e.g. im2col)
    #: A loop node's (scan's) step function: its calls are the steps, its nodes the
    #: loop body's, its first calls the steps run during the outer function's first call.
    inner: FunctionProfile | None = None


@dataclass
class CompilePhases:
    """Compile-time split of one function; ``total_ns`` is the whole compile call."""

    total_ns: int = 0
    rewrite_ns: int = 0
    validate_ns: int = 0
    linker_ns: int = 0  # includes C code generation and compiling
    codegen_ns: int = 0
    compile_ns: int = 0
    import_ns: int = 0
    python_import_ns: int = 0  # first-time Python imports, outside the phases above
    n_apply: int = 0
    loop_compile_ns: int = 0  # loop steps (scan) compiled while linking: in linker_ns
    profiler_ns: int = 0  # the profiler's own setup (importing it, describing the nodes)

    def other_ns(self) -> int:
        """The compile time outside every phase (building the graph, the Function...)."""
        named = self.rewrite_ns + self.linker_ns + self.python_import_ns + self.profiler_ns
        return max(self.total_ns - named, 0)


@dataclass
class PassRecord:
    """Time spent in one rewrite pass (e.g. ``canonicalize``)."""

    name: str
    ns: int = 0


@dataclass
class RewriteRecord:
    """One rewrite: how often it was tried, how often it changed the graph, its time."""

    name: str
    tried: int = 0
    applied: int = 0
    ns: int = 0


@dataclass
class OptimizerProfile:
    """The rewrite phase of one compile."""

    passes: list[PassRecord] = field(default_factory=list)
    rewrites: list[RewriteRecord] = field(default_factory=list)


@dataclass
class StorageRecord:
    """A function input or constant: storage the memory model lists but does not count."""

    name: str
    slot: int
    nbytes: int = 0
    dtype: str = ""
    shape: tuple[int, ...] | None = None


@dataclass
class TraceRecord:
    """Per-node event trace of one function (recorded only with ``config.profile_trace``).

    ``events`` are rows ``[call_index, position, start_ns, dur_ns]`` on the monotonic clock of
    process ``pid``; at most ``capacity`` are kept, later ones are counted in ``dropped``.
    ``compile_start_ns`` is when compiling began on the same clock (None: unknown).
    """

    pid: int = 0
    capacity: int = 0
    dropped: int = 0
    events: list[list[int]] = field(default_factory=list)
    compile_start_ns: int | None = None


@dataclass
class MachineLimits:
    """The machine's limits a roofline measures against: memory bandwidth (a triad loop over
    ``triad_n`` doubles) and peak rate (``gemm_n``-square float64 GEMMs through ``blas``)."""

    bandwidth_gbs: float = 0.0
    peak_gflops: float = 0.0
    triad_n: int = 0
    gemm_n: int = 0
    blas: str = ""


@dataclass
class FunctionProfile:
    """Everything recorded for one compiled function (plain data: the profiler of a live
    function fills it when the ProfileStats holding both is printed or saved)."""

    name: str
    calls: int = 0
    call_ns: int = 0
    vm_ns: int = 0
    first_calls: int = 0  # first calls included in the counts (one per process merged)
    first_call_ns: int = 0
    first_vm_ns: int = 0
    #: Calls (counted in ``calls``) that waited for another thread's call of this function
    #: and how long they waited in all; the wait is in no other time.
    waited_calls: int = 0
    wait_ns: int = 0
    compile: CompilePhases = field(default_factory=CompilePhases)
    mode: str = ""
    linker: str = ""
    optimizer: str = ""
    rewrites_excluded: list[str] = field(default_factory=list)
    rewrites_included: list[str] = field(default_factory=list)
    vm_kind: str = ""
    allow_gc: bool = True
    timing_supported: bool = True
    memory_recorded: bool = False
    clock_resolution_ns: int = 1
    nodes: list[NodeRecord] = field(default_factory=list)
    inputs: list[StorageRecord] = field(default_factory=list)
    constants: list[StorageRecord] = field(default_factory=list)
    output_slots: list[int] = field(default_factory=list)
    measured_peak_bytes: int | None = None
    optimizer_profile: OptimizerProfile | None = None
    trace: TraceRecord | None = None
    memory_plan: MemoryPlanRecord | None = None  # buffers the VM's memory plan keeps
    machine: MachineLimits | None = None  # this machine's bandwidth and peak (roofline)
    #: Sampling (``profile_sample``): every ``sample_every``-th call is timed; ``calls``
    #: counts those, ``unsampled_calls`` the others (summaries scale the times up).
    sample_every: int = 1
    unsampled_calls: int = 0
    #: sum of the timed calls' squared vm_ns (their spread); for a loop body (``inner``),
    #: of the squared time of its steps per timed call of the enclosing function
    sampled_vm_ns_sq: float = 0.0
    planned_slots: list[int] = field(default_factory=list)  # slots stored in those buffers

    def thunk_ns(self) -> int:
        """Time spent inside the nodes."""
        return sum(n.ns_total for n in self.nodes)
