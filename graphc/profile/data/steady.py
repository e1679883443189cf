"""The steady state of a profile: its counts without each function's first call.

A first call pays one-off costs (page faults of fresh buffers, BLAS thread start-up, lazy
imports, cold caches): in a short profile it can dwarf every later call and decide the
sort order. Profiles record the first call's times apart, so the tables can leave it out
(``all_calls=False``; by default they count every call, as Theano's did).
"""

from __future__ import annotations

import copy

from graphc.profile.data.model import FunctionProfile, NodeRecord


def has_first_call(fp: FunctionProfile) -> bool:
    """Whether leaving the first call(s) out leaves calls to describe."""
    return 0 < fp.first_calls < fp.calls


def steady_state(fp: FunctionProfile) -> FunctionProfile:
    """``fp`` without its first call(s); ``fp`` itself when that would leave nothing."""
    if not has_first_call(fp):
        return fp
    out = copy.copy(fp)
    out.calls = fp.calls - fp.first_calls
    out.call_ns = max(fp.call_ns - fp.first_call_ns, 0)
    out.vm_ns = max(fp.vm_ns - fp.first_vm_ns, 0)
    out.first_calls = out.first_call_ns = out.first_vm_ns = 0
    out.nodes = [_steady_node(n) for n in fp.nodes]
    return out


def _steady_node(node: NodeRecord) -> NodeRecord:
    if node.first_calls == 0 or node.calls <= node.first_calls:
        return node
    out = copy.copy(node)
    if node.inner is not None:
        out.inner = steady_state(node.inner)
    out.calls = node.calls - node.first_calls
    out.ns_total = max(node.ns_total - node.first_ns, 0)
    samples = list(node.ns_samples)
    if node.first_calls == 1 and node.first_ns in samples:  # still in the recent samples
        samples.remove(node.first_ns)
    out.ns_samples = samples
    out.first_calls = out.first_ns = 0
    return out
