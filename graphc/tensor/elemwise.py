"""Elemwise (a scalar Op mapped over arrays with numpy broadcasting) and DimShuffle."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Op
from graphc.graph.rules import RuleTable
from graphc.scalar import basic as ps
from graphc.scalar.basic import ScalarOp
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable, constant

if TYPE_CHECKING:
    from typing import Any

    from graphc.graph.basic import Variable

# The gradients of DimShuffle and Elemwise are written with reductions and element-wise
# math, which build on these two Ops: tensor/elemwise_grad.py registers them here.
GRAD_RULES = RuleTable("gradient")


class DimShuffle(Op):
    """Reorder axes, insert broadcastable axes ('x') and drop size-1 axes; a view."""

    __props__ = ("input_ndim", "new_order")
    view_map = {0: [0]}

    def __init__(
        self,
        input_ndim: int | Sequence[bool],
        new_order: Sequence[int | str],
        inplace: bool = False,
    ):
        """``input_ndim`` may be Theano's ``input_broadcastable`` (one flag per axis);
        ``inplace`` is accepted for Theano's signature: the output is always a view."""
        if not isinstance(input_ndim, int | np.integer):
            input_ndim = len(input_ndim)
        self.input_ndim = int(input_ndim)
        order = tuple("x" if o == "x" else int(o) for o in new_order)
        kept = [o for o in order if o != "x"]
        for o in kept:
            if not 0 <= o < self.input_ndim:
                raise ValueError(
                    f"DimShuffle{order}: axis {o} out of range for {input_ndim}-d input"
                )
        if len(set(kept)) != len(kept):
            raise ValueError(f"DimShuffle{order}: an axis appears twice")
        self.new_order = order
        self.drop = tuple(i for i in range(self.input_ndim) if i not in kept)
        self.shuffle = tuple(kept)
        self.augment = tuple(i for i, o in enumerate(order) if o == "x")

    def __str__(self) -> str:
        return "DimShuffle{" + ",".join(str(o) for o in self.new_order) + "}"

    @property
    def is_transpose(self) -> bool:
        return not self.drop and not self.augment

    def make_node(self, x: Variable) -> Apply:
        x = as_tensor_variable(x)
        if x.ndim != self.input_ndim:
            raise TypeError(f"{self} expects a {self.input_ndim}-d input, got {x.type}")
        for d in self.drop:
            if x.type.shape[d] != 1:
                raise ValueError(
                    f"{self} drops axis {d} of {x.type}, which is not known to have size 1"
                )
        shape = tuple(1 if o == "x" else x.type.shape[o] for o in self.new_order)
        return Apply(self, [x], [TensorType(x.dtype, shape)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        (x,) = inputs
        res = x.transpose(self.shuffle + self.drop)
        res = res.reshape(tuple(res.shape[: len(self.shuffle)]))
        for ax in self.augment:
            res = np.expand_dims(res, ax)
        output_storage[0][0] = res

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        (ish,) = shapes
        return [tuple(1 if o == "x" else ish[o] for o in self.new_order)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return GRAD_RULES[self](self, inputs, gouts)


class Elemwise(Op):
    """Apply ``scalar_op`` element by element with numpy broadcasting.

    ``inplace_pattern`` maps output index -> input index whose buffer the output reuses.
    """

    __props__ = ("scalar_op", "inplace_pattern")

    def __init__(self, scalar_op: ScalarOp, inplace_pattern: dict | tuple = ()):
        self.scalar_op = scalar_op
        pattern = dict(inplace_pattern)
        self.inplace_pattern = tuple(sorted(pattern.items()))
        self.destroy_map = {o: [i] for o, i in self.inplace_pattern}

    def __str__(self) -> str:
        if not self.inplace_pattern:
            tag = "no_inplace"
        elif self.inplace_pattern == ((0, 0),):
            tag = "inplace"
        else:
            tag = "{" + ", ".join(f"{o}: {i}" for o, i in self.inplace_pattern) + "}"
        return f"Elemwise{{{self.scalar_op},{tag}}}"

    def make_node(self, *inputs: Variable) -> Apply:
        inputs = [as_tensor_variable(i) for i in inputs]
        nin = self.scalar_op.nin
        if nin != -1 and len(inputs) != nin:
            raise TypeError(f"{self} takes {nin} inputs, got {len(inputs)}")
        ndim = max((i.ndim for i in inputs), default=0)
        padded = []
        for i in inputs:
            if i.ndim < ndim:
                i = DimShuffle(i.ndim, ["x"] * (ndim - i.ndim) + list(range(i.ndim)))(i)
            padded.append(i)
        out_shape = broadcast_static_shapes(self, [i.type.shape for i in padded], padded)
        dtypes = self.scalar_op.output_dtypes(*(i.dtype for i in padded))
        outputs = [TensorType(dt, out_shape)() for dt in dtypes]
        for o, i in self.inplace_pattern:
            if padded[i].type.dtype != dtypes[o] or padded[i].type.shape != out_shape:
                if padded[i].type.dtype != dtypes[o] or any(
                    s == 1 and t != 1 for s, t in zip(padded[i].type.shape, out_shape)
                ):
                    raise TypeError(
                        f"{self}: output {o} cannot be computed in place of input {i} "
                        f"({padded[i].type} vs {TensorType(dtypes[o], out_shape)})"
                    )
        return Apply(self, padded, outputs)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        op = self.scalar_op
        with np.errstate(all="ignore"):
            if self.inplace_pattern and op.ufunc is not None and op.nout == 1 and op.nin != -1:
                ((o, i),) = self.inplace_pattern[:1]
                target = inputs[i]
                if target.shape == np.broadcast_shapes(*(a.shape for a in inputs)):
                    op.ufunc(*inputs, out=target, casting="unsafe")
                    output_storage[o][0] = target
                    return
            results = op.evaluate(node.outputs[0].type.dtype, *inputs)
        if not isinstance(results, tuple):
            results = (results,)
        for k, (cell, res, var) in enumerate(zip(output_storage, results, node.outputs)):
            arr = np.asarray(res)
            if arr.dtype != var.type.dtype:
                arr = arr.astype(var.type.dtype)
            dest = dict(self.inplace_pattern).get(k)
            if dest is not None and inputs[dest].shape == arr.shape:  # else broadcast grew it
                np.copyto(inputs[dest], arr, casting="unsafe")
                arr = inputs[dest]
            elif not arr.flags.writeable or (
                not arr.flags.owndata and any(np.shares_memory(arr, a) for a in inputs)
            ):
                # a value of its own that a later node may overwrite in place (numpy's
                # broadcast_to, e.g. second(x, 0.0), gives a read-only view)
                arr = arr.copy()
            cell[0] = arr

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        static = [i.type.shape for i in node.inputs]
        if len(node.outputs) == 1:
            return [broadcast_shape_symbolic(shapes, static)]
        # each output of a multi-output loop has the broadcast shape of the inputs it reads
        return [
            broadcast_shape_symbolic([shapes[k] for k in ks], [static[k] for k in ks])
            for ks in output_inputs(node)
        ]

    def output_inputs(self, node: Apply, k: int) -> tuple[int, ...]:
        """Indices of the inputs output ``k`` depends on (all for a single output)."""
        deps = getattr(self.scalar_op, "output_deps", None)
        if deps is None or not deps[k]:
            return tuple(range(len(node.inputs)))
        return deps[k]

    def flops(
        self, node: Apply, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]]
    ) -> float:
        """One flop per output element per scalar operation (Composite: per inner node)."""
        n = float(np.prod(output_shapes[0])) if output_shapes else 0.0
        per = len(getattr(self.scalar_op, "nodes", ())) or max(1, len(node.inputs) - 1)
        return n * per

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return GRAD_RULES[self](self, inputs, gouts)


def output_inputs(node: Apply) -> list[tuple[int, ...]]:
    """Per output of the Elemwise ``node``, the indices of the inputs it depends on."""
    return [node.op.output_inputs(node, k) for k in range(len(node.outputs))]


_ELEMWISE: dict[str, Elemwise] = {name: Elemwise(op) for name, op in ps.all_scalar_ops().items()}


def elemwise_op(name: str) -> Elemwise:
    """The (non in-place) Elemwise Op for the scalar Op called ``name``."""
    return _ELEMWISE[name]


def broadcast_static_shapes(op: Op, shapes, inputs=()) -> tuple[int | None, ...]:
    """The static output shape of broadcasting ``shapes`` (all the same length)."""
    out: list[int | None] = []
    for axis, sizes in enumerate(zip(*shapes)):
        known = {s for s in sizes if s is not None and s != 1}
        if len(known) > 1:
            types = ", ".join(str(i.type) for i in inputs)
            raise ValueError(
                f"{op}: shapes do not broadcast on axis {axis} (static sizes {sorted(known)}; "
                f"operands {types})"
            )
        if known:
            out.append(known.pop())
        elif all(s == 1 for s in sizes):
            out.append(1)
        else:
            out.append(None)
    return tuple(out)


def broadcast_shape_symbolic(shapes, static_shapes):
    """Symbolic output shape of broadcasting: per axis a known non-1 size, 1, or a max."""
    maximum = _ELEMWISE[ps.maximum.name]
    out = []
    for axis in range(len(static_shapes[0]) if static_shapes else 0):
        cands = [sh[axis] for sh, st in zip(shapes, static_shapes) if st[axis] != 1]
        known = [sh[axis] for sh, st in zip(shapes, static_shapes) if st[axis] not in (None, 1)]
        if known:
            out.append(known[0])
        elif not cands:
            out.append(constant(np.int64(1)))
        else:
            dim = cands[0]
            for c in cands[1:]:
                dim = maximum(dim, c)
            out.append(dim)
    return tuple(out)
