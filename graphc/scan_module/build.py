"""``scan``: build a Scan node from a Python step function, with Theano's signature."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from graphc.flags import config
from graphc.graph.basic import Constant, Variable, clone_replace, graph_inputs, io_toposort
from graphc.scan_module.op import Scan, ScanInfo, ScanInner
from graphc.tensor.basic import shape_padleft as t_shape_padleft
from graphc.tensor.math import cast as t_cast
from graphc.tensor.math import maximum as t_maximum
from graphc.tensor.math import minimum as t_minimum
from graphc.tensor.shape import shape as t_shape
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable as t_as_tensor_variable

if TYPE_CHECKING:
    from collections.abc import Sequence

    from graphc.compile.mode import Mode
    from graphc.tensor.variable import TensorLike

__all__ = ["scan", "until"]


class until:  # noqa: N801 - Theano's name
    """Returned by a step function (with its outputs) to stop the loop after the step in
    which ``condition`` is true."""

    def __init__(self, condition):
        self.condition = t_as_tensor_variable(condition)
        if self.condition.ndim != 0:
            raise TypeError(f"until: the condition must be a scalar, got {self.condition.type}")


@dataclass
class _Seq:
    outer: Any
    taps: list[int]


@dataclass
class _Out:
    initial: Any | None  # None: not fed back (stacked only)
    taps: list[int] = field(default_factory=list)
    last_only: bool = False  # keep only the final values, not every step's


def _row_type(t: Any) -> TensorType:
    return TensorType(t.dtype, t.shape[1:])


def _placeholder(t: Any, name: str) -> Any:
    v = t()
    v.name = name
    return v


def _test_row(placeholder: Any, source: Any, row: int | None) -> Any:
    """``placeholder`` carrying row ``row`` (None: all) of ``source``'s test value, when
    test values are on and ``source`` has one (as Theano's scan gives its step's inputs)."""
    if config.compute_test_value != "off":
        try:
            value = source.get_test_value()
            placeholder.tag.test_value = value if row is None else value[row]
        except (AttributeError, IndexError):
            pass  # reported, as the flag says, by the first node that needs it
    return placeholder


def _as_seq(s, k: int) -> _Seq:
    if isinstance(s, dict):
        unknown = set(s) - {"input", "taps"}
        if unknown or "input" not in s:
            raise TypeError(f"scan: sequence {k} as a dict needs 'input' (and optionally "
                            f"'taps'), got keys {sorted(s)}")  # fmt: skip
        x, taps = s["input"], s.get("taps", [0])
    else:
        x, taps = s, [0]
    x = t_as_tensor_variable(x)
    if x.ndim == 0:
        raise TypeError(f"scan: sequence {k} ({x}) is a scalar; sequences are iterated over "
                        "their first dimension")  # fmt: skip
    taps = [int(t) for t in ([taps] if isinstance(taps, int | np.integer) else taps)]
    if not taps:
        raise ValueError(f"scan: sequence {k} has an empty taps list")
    return _Seq(x, taps)


def _as_out(o, k: int) -> _Out:
    if o is None:
        return _Out(None)
    if isinstance(o, dict):
        unknown = set(o) - {"initial", "taps", "return_steps", "store_steps"}
        if unknown:
            raise TypeError(f"scan: outputs_info {k} has unknown keys {sorted(unknown)}")
        init = o.get("initial")
        if init is None:
            if o.get("taps"):
                raise ValueError(f"scan: outputs_info {k} has taps but no 'initial' value")
            return _Out(None)
        taps = o.get("taps", [-1])
        taps = [int(t) for t in ([taps] if isinstance(taps, int | np.integer) else taps)]
    else:
        init, taps = o, [-1]
    if not taps:  # Theano: an initial value with no taps is an output not fed back
        return _Out(None)
    if any(t >= 0 for t in taps):
        raise ValueError(f"scan: outputs_info {k} has taps {taps}; an output can only "
                         "read its past values (negative taps)")  # fmt: skip
    return _Out(t_as_tensor_variable(init), taps)


def _parse_return(ret, n_outputs_info: int | None) -> tuple[list, list, Any]:
    """``(outputs, updates, condition)`` from what a step function returned."""

    def is_updates(x) -> bool:
        if isinstance(x, dict):
            return True
        return (
            isinstance(x, list | tuple) and len(x) > 0
            and all(isinstance(p, tuple) and len(p) == 2 and hasattr(p[0], "get_value")
                    for p in x)
        )  # fmt: skip

    updates: list = []
    cond = None
    outputs: list = []
    items = list(ret) if isinstance(ret, tuple) else [ret]
    if isinstance(ret, list) and not is_updates(ret):
        # a list holding an until or updates is read as the tuple would be (as Theano)
        marked = any(isinstance(x, until) or is_updates(x) for x in ret)
        items = list(ret) if marked else [ret]
    rest = []
    for it in items:
        if isinstance(it, until):
            cond = it.condition
        elif is_updates(it):
            updates += list(it.items()) if isinstance(it, dict) else list(it)
        else:
            rest.append(it)
    if len(rest) == 1 and isinstance(rest[0], list | tuple):
        outputs = list(rest[0])
    elif len(rest) == 1 and rest[0] is None:
        outputs = []
    else:
        outputs = rest
    return [t_as_tensor_variable(o) for o in outputs], updates, cond


def scan(
    fn: Callable,
    sequences: Variable | Sequence[Any] | None = None,
    outputs_info: Any = None,
    non_sequences: Variable | Sequence[Variable] | None = None,
    n_steps: TensorLike | None = None,
    truncate_gradient: int = -1,
    go_backwards: bool = False,
    mode: Mode | str | None = None,
    name: str | None = None,
    profile: bool = False,
    allow_gc: bool | None = None,
    strict: bool = False,
    return_list: bool = False,
):
    """Loop ``fn`` over ``sequences``, feeding back ``outputs_info``; Theano's ``scan``.

    ``fn`` receives, in order, a row of each sequence (one per tap), the past values of each
    output that has an initial value (one per tap), then the ``non_sequences``. It returns
    its outputs, optionally a dict of shared-variable updates and an ``until(condition)``.
    Returns ``(outputs, updates)``: each output stacked over the steps (a single Variable
    when there is one, unless ``return_list``), and the updates to pass to ``function``.
    A constant negative ``n_steps`` runs ``-n_steps`` steps in the other direction.

    The step graph is compiled with ``mode`` (a Mode or its name) when given, else with the
    enclosing function's optimizer and linker; either way its profile is part of the
    enclosing function's. ``profile`` and ``allow_gc`` are accepted for Theano
    compatibility.
    """
    del profile, allow_gc  # the enclosing function's settings apply
    results, updates, _ = build_scan(fn, sequences, outputs_info, non_sequences, n_steps,
                                     truncate_gradient, go_backwards, name, strict,
                                     mode=mode)  # fmt: skip
    if not results:
        return None, updates
    if len(results) == 1 and not return_list:
        return results[0], updates
    return results, updates


def build_scan(
    fn: Callable,
    sequences: Variable | Sequence[Any] | None = None,
    outputs_info: Any = None,
    non_sequences: Variable | Sequence[Variable] | None = None,
    n_steps: TensorLike | None = None,
    truncate_gradient: int = -1,
    go_backwards: bool = False,
    name: str | None = None,
    strict: bool = False,
    last_only=(),
    mode: Mode | str | None = None,
):
    """``(outputs, updates, node outputs)``: ``scan``'s work, also giving the Scan node's
    raw outputs (each state's whole buffer, initial rows included). The ``outputs_info``
    entries numbered in ``last_only`` keep only their final window (no stacked output)."""
    seqs = [_as_seq(s, k) for k, s in enumerate(as_list(sequences))]
    outs_info = None if outputs_info is None else [
        _as_out(o, k) for k, o in enumerate(as_list(outputs_info))
    ]  # fmt: skip
    for k in last_only:
        assert outs_info is not None and outs_info[k].initial is not None
        outs_info[k].last_only = True
    explicit_nonseqs = [t_as_tensor_variable(v) if not isinstance(v, Variable) else v
                        for v in as_list(non_sequences)]  # fmt: skip
    n_steps, go_backwards = _direction(n_steps, go_backwards)
    if go_backwards:
        seqs = [_Seq(s.outer[::-1], s.taps) for s in seqs]
    n_steps_var = _steps(seqs, n_steps, name)
    seq_outer, seq_inner = _sequence_rows(seqs, n_steps, n_steps_var)
    state_outs = [] if outs_info is None else [o for o in outs_info if o.initial is not None]
    state_inits, state_inner = _state_taps(state_outs)
    args = seq_inner + [v for taps in state_inner for v in taps]

    ret = fn(*args, *explicit_nonseqs)
    outputs, updates, cond = _parse_return(ret, None if outs_info is None else len(outs_info))
    if outs_info is None:
        outs_info, state_outs = [_Out(None) for _ in outputs], []
    if len(outputs) != len(outs_info):
        raise ValueError(f"scan: the step function returned {len(outputs)} outputs but "
                         f"outputs_info has {len(outs_info)} entries")  # fmt: skip
    new_states = [o for o, info in zip(outputs, outs_info) if info.initial is not None]
    nits = [o for o, info in zip(outputs, outs_info) if info.initial is None]
    for k, (new, taps) in enumerate(zip(new_states, state_inner)):
        _check_state(k, new, taps[0], name)
    # shared variables updated inside the loop become states kept last only
    shared_states = [
        (s, _placeholder(s.type, f"{s.name or 'shared'}[t-1]"), t_as_tensor_variable(e))
        for s, e in _with_default_updates(updates, outputs + [u for _, u in updates], cond)
    ]  # fmt: skip
    inner_outs = new_states + [e for _, _, e in shared_states] + nits
    inner_outs += [cond] if cond is not None else []
    nonseq_outer, nonseq_inner, inner_outs = _loop_inputs(
        inner_outs, args, shared_states, explicit_nonseqs, strict
    )
    info = ScanInfo(
        n_seqs=len(seq_outer),
        state_taps=tuple(tuple(o.taps) for o in state_outs) + ((-1,),) * len(shared_states),
        state_last=tuple(o.last_only for o in state_outs) + (True,) * len(shared_states),
        n_nit=len(nits),
        n_nonseqs=len(nonseq_outer),
        as_while=cond is not None,
        name=name,
        truncate_gradient=int(truncate_gradient),
        mode=mode,
    )
    inner_inputs = args + [ph for _, ph, _ in shared_states] + nonseq_inner
    op = Scan(info, ScanInner(inner_inputs, inner_outs))
    shared_inits = [t_shape_padleft(s) for s, _, _ in shared_states]
    node_outs = op(n_steps_var, *seq_outer, *state_inits, *shared_inits, *nonseq_outer)
    node_outs = node_outs if isinstance(node_outs, list) else [node_outs]
    results = _user_outputs(outs_info, node_outs, len(state_outs), len(shared_states), name)
    return results, _shared_updates(shared_states, node_outs, len(state_outs)), node_outs


def _sequence_rows(seqs: list[_Seq], n_steps, n_steps_var) -> tuple[list, list]:
    """Per sequence and tap: the outer slice the loop walks and the step's placeholder."""
    outer: list[Any] = []
    inner: list[Any] = []
    for k, s in enumerate(seqs):
        lo, hi = min(s.taps), max(s.taps)
        for t in s.taps:
            start = t - lo
            if n_steps is not None:
                outer.append(s.outer[start : start + n_steps_var])
            elif start == 0 and t == hi:  # every row: no slice (its gradient would copy)
                outer.append(s.outer)
            else:
                end = t - hi
                outer.append(s.outer[start : (end if end != 0 else None)])
            name = f"{s.outer.name or f'seq{k}'}[t{t:+d}]"
            inner.append(_test_row(_placeholder(_row_type(s.outer.type), name), outer[-1], 0))
    return outer, inner


def _state_taps(state_outs: list[_Out]) -> tuple[list, list[list]]:
    """Per fed-back output: its initial rows (``(L, *S)``) and a placeholder per tap."""
    inits: list[Any] = []
    taps: list[list[Any]] = []
    for k, o in enumerate(state_outs):
        init = o.initial
        assert init is not None
        sit_sot = o.taps == [-1]
        if not sit_sot and init.ndim == 0:
            raise TypeError(
                f"scan: the initial value of an output with taps {o.taps} must "
                "have one more dimension than the output (one row per tap)"
            )
        row_t = init.type if sit_sot else _row_type(init.type)
        inits.append(t_shape_padleft(init) if sit_sot else init[: -min(o.taps)])
        taps.append([
            _test_row(_placeholder(row_t, f"{init.name or f'out{k}'}[t{t:+d}]"), init,
                      None if sit_sot else t - min(o.taps))
            for t in o.taps
        ])  # fmt: skip
    return inits, taps


def _loop_inputs(inner_outs: list, args: list, shared_states: list, explicit_nonseqs: list,
                 strict: bool) -> tuple[list, list, list]:  # fmt: skip
    """The loop's non-sequence inputs: the outer values the step reads (explicit
    non-sequences, shared and other outer variables, and any expression of them alone,
    computed once before the loop). Returns them, their placeholders, and the step's
    outputs rewritten over the placeholders."""
    replace_shared = {s: ph for s, ph, _ in shared_states}
    nonseq_outer = _loop_invariants(inner_outs, set(args) | set(replace_shared))
    if strict:
        allowed = set(explicit_nonseqs) | set(args) | set(replace_shared)
        stray = [v for v in graph_inputs(nonseq_outer, allowed)
                 if v not in allowed and not isinstance(v, Constant)]  # fmt: skip
        if stray:
            raise ValueError(f"scan (strict=True): the step function uses {stray[0]}, which "
                             "is not among sequences, outputs_info or non_sequences")  # fmt: skip
    nonseq_inner = [_placeholder(v.type, v.name or "nonseq") for v in nonseq_outer]
    replace = dict(zip(nonseq_outer, nonseq_inner))
    replace.update(replace_shared)
    return nonseq_outer, nonseq_inner, clone_replace(inner_outs, replace)


def _user_outputs(outs_info: list[_Out], node_outs: list, n_st: int, n_shared: int,
                  name: str | None) -> list:  # fmt: skip
    """What ``scan`` returns per output: a state's buffer without its initial rows, or
    the stacked output."""
    results: list[Any] = []
    k_state = k_nit = 0
    for o in outs_info:
        if o.initial is not None:
            results.append(node_outs[k_state][-min(o.taps) :])
            k_state += 1
        else:
            results.append(node_outs[n_st + n_shared + k_nit])
            k_nit += 1
    for r in results:
        r.name = f"{name}_out" if name else None
    return results


def _shared_updates(shared_states: list, node_outs: list, n_st: int) -> OrderedDict:
    """Each shared variable updated in the loop -> its value after the last step."""
    updates: OrderedDict = OrderedDict()
    for j, (s, _, _) in enumerate(shared_states):
        updates[s] = node_outs[n_st + j][0]
        if getattr(s, "default_update", None) is not None:
            # the step's own update expression reads the step's placeholders: a function
            # that uses this loop without its updates advances the state past the loop
            s.default_update = updates[s]
    return updates


def as_list(x) -> list:
    """``None`` -> ``[]``, a list or tuple -> a list, anything else -> ``[x]``."""
    if x is None:
        return []
    return list(x) if isinstance(x, list | tuple) else [x]


def _loop_invariants(outputs: list, placeholders: set) -> list[Any]:
    """The outer Variables the step graph reads: those that do not depend on a placeholder
    but feed a node that does (or are outputs). Everything above them is computed once."""
    nodes = io_toposort(graph_inputs(outputs), outputs)
    varying = set(placeholders)
    for node in nodes:
        if any(i in varying for i in node.inputs):
            varying.update(node.outputs)
    found: list[Any] = []
    for node in nodes:
        if node.outputs[0] in varying:
            found += [i for i in node.inputs if i not in varying and not isinstance(i, Constant)]
    found += [o for o in outputs if o not in varying and not isinstance(o, Constant)]
    return list(dict.fromkeys(found))


def _direction(n_steps: Any, go_backwards: bool) -> tuple[Any, bool]:
    """A constant negative ``n_steps`` runs ``-n_steps`` steps the other way (as Theano)."""
    if n_steps is None:
        return None, go_backwards
    n = t_as_tensor_variable(n_steps)
    if isinstance(n, Constant) and n.data.ndim == 0 and int(n.data) < 0:
        return -int(n.data), not go_backwards
    return n_steps, go_backwards


def _steps(seqs: list[_Seq], n_steps, name: str | None) -> Any:
    """The number of steps: ``n_steps`` if given, else the shortest sequence (after taps)."""
    if n_steps is not None:
        n = t_as_tensor_variable(n_steps)
        if n.ndim != 0 or n.dtype[:3] not in ("int", "uin"):
            raise TypeError(f"scan: n_steps must be an integer scalar, got {n_steps!r}")
        return t_cast(n, "int64")
    if not seqs:
        raise ValueError(f"scan{f' {name}' if name else ''}: no sequences, so n_steps must be "
                         "given")  # fmt: skip
    spans = [max(s.taps) - min(s.taps) for s in seqs]
    lengths = [t_shape(s.outer)[0] - span if span else t_shape(s.outer)[0]
               for s, span in zip(seqs, spans)]  # fmt: skip
    n = lengths[0]
    for m in lengths[1:]:
        n = t_minimum(n, m)
    n = t_cast(n, "int64")
    return t_maximum(n, 0) if any(spans) else n


def _check_state(k: int, new: Any, tap: Any, name: str | None) -> None:
    where = f"scan{f' {name}' if name else ''}"
    if new.dtype != tap.dtype:
        raise TypeError(
            f"{where}: the initial state (outputs_info) of output {k} has dtype {tap.dtype}, "
            f"while the step function (fn) returns dtype {new.dtype}. This can happen if "
            "the step function upcasts or downcasts; cast one of them explicitly."
        )
    if new.ndim != tap.ndim:
        raise TypeError(f"{where}: output {k} has {new.ndim} dimensions but its initial state "
                        f"has {tap.ndim} per step ({tap.type})")  # fmt: skip
    for a, b in zip(new.type.shape, tap.type.shape):
        if a is not None and b is not None and a != b:
            raise TypeError(f"{where}: output {k} has static shape {new.type.shape} but its "
                            f"initial state rows have {tap.type.shape}")  # fmt: skip


def _with_default_updates(updates: list, roots: list, cond) -> list:
    """Explicit updates plus the ``default_update`` of every shared variable the step reads
    (random streams advance once per step)."""
    given = {s for s, _ in updates}
    out = list(updates)
    pending = list(roots) + ([cond] if cond is not None else [])
    seen: set = set()
    while pending:
        found: list[Any] = [
            v for v in graph_inputs(pending)
            if v not in seen and hasattr(v, "get_value") and v not in given
            and getattr(v, "default_update", None) is not None
        ]  # fmt: skip
        pending = []
        for v in found:
            seen.add(v)
            given.add(v)
            update = v.default_update
            out.append((v, update))
            pending.append(update)
    return out
