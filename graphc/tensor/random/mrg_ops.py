"""Ops of Theano's ``MRG_RandomStreams``: MRG31k3p uniforms and what Theano builds on them.

``MRGUniform(dtype, ndim)(rstate, size, low, high) -> [new_rstate, sample]`` draws from an
int32 ``(streams, 6)`` state (``graphc.tensor.random.mrg31k3p``) and maps each ``u`` in
``(0, 1)`` to ``u * (high - low) + low`` in ``dtype``, as Theano does. ``BoxMuller`` turns
uniforms into normals; ``MultinomialFromUniform`` and ``ChoiceFromUniform`` turn one
uniform per row (and per draw) into counts or indices, as Theano's ops of those names do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Op, Variable
from graphc.tensor.math import cast
from graphc.tensor.random import mrg31k3p
from graphc.tensor.random.op import RandomSample, keep_off_high, size_length
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable

if TYPE_CHECKING:
    from typing import Any

RSTATE_TYPE = TensorType("int32", (None, 6))


def _shape(size: np.ndarray, opname: str) -> tuple[int, ...]:
    shape = tuple(int(s) for s in size)
    if any(s < 0 for s in shape):
        raise ValueError(f"{opname}: negative dimensions in size {shape}")
    if int(np.prod(shape, dtype=np.int64)) > mrg31k3p.M1:
        raise ValueError(f"{opname}: more than 2**31 - 1 samples ({shape})")
    return shape


class MRGUniform(Op):
    """Uniform samples on ``[low, high)`` drawn from an MRG31k3p state matrix."""

    __props__ = ("dtype", "ndim")

    def __init__(self, dtype: str, ndim: int):
        self.dtype = str(np.dtype(dtype))
        self.ndim = int(ndim)

    def __str__(self) -> str:
        return f"MRGUniform{{{self.dtype},{self.ndim}}}"

    def make_node(self, rstate: Variable, size: Variable, low: Variable, high: Variable):
        rstate = as_tensor_variable(rstate)
        if RSTATE_TYPE.convert_variable(rstate) is None:
            raise TypeError(f"{self}: the state must be {RSTATE_TYPE}, got {rstate.type}")
        size = as_tensor_variable(size)
        if size.ndim != 1 or size.dtype != "int64":
            raise TypeError(f"{self}: size must be an int64 vector, got {size.type}")
        if size_length(size) not in (None, self.ndim):
            raise ValueError(f"{self}: size {size} does not have {self.ndim} entries")
        low, high = (cast(as_tensor_variable(b), self.dtype) for b in (low, high))
        if max(low.ndim, high.ndim) > self.ndim:
            raise ValueError(f"{self}: low and high have more dimensions than the sample")
        sample = RandomSample(TensorType(self.dtype, (None,) * self.ndim))
        return Apply(self, [rstate, size, low, high], [rstate.type(), sample])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        rstate, size, low, high = inputs
        shape = _shape(size, str(self))
        if np.broadcast_shapes(shape, low.shape, high.shape) != shape:
            raise ValueError(f"{self}: low {low.shape} and high {high.shape} do not "
                             f"broadcast to the size {shape}")  # fmt: skip
        if rstate.ndim != 2 or rstate.shape[1] != 6 or not len(rstate):
            raise ValueError(f"{self}: the state must be a (streams, 6) matrix, got {rstate.shape}")
        raw, new_state = mrg31k3p.draw(rstate, int(np.prod(shape, dtype=np.int64)))
        u = mrg31k3p.to_unit(raw, self.dtype).reshape(shape)
        with np.errstate(over="ignore", invalid="ignore"):
            sample = (u * (high - low) + low).astype(self.dtype, copy=False)
        output_storage[0][0] = new_state
        output_storage[1][0] = keep_off_high(sample, low, high)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        size = node.inputs[1]
        return [shapes[0], tuple(size[k] for k in range(self.ndim))]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [None] * len(inputs)  # samples are constants for the gradient


class BoxMuller(Op):
    """Normals of shape ``size`` from an even number of uniforms, as Theano pairs them:
    ``u1`` the first half, ``u2`` the second, ``r = sqrt(-2 log u1)``, ``theta = 2 pi u2``,
    samples ``join(r cos theta, r sin theta)`` (the odd one out dropped), then
    ``* std + avg``. With ``truncate``, values outside [-2, 2] take a fresh radius from the
    extra uniforms ``u_fix`` (on ``[exp(-2), 1)``) at the same angle, valid ones first."""

    __props__ = ("dtype", "ndim", "truncate")

    def __init__(self, dtype: str, ndim: int, truncate: bool = False):
        self.dtype, self.ndim, self.truncate = str(np.dtype(dtype)), int(ndim), bool(truncate)

    def make_node(self, u: Variable, size: Variable, avg: Variable, std: Variable,
                  u_fix: Variable | None = None) -> Apply:  # fmt: skip
        ins = [as_tensor_variable(u), as_tensor_variable(size)]
        ins += [cast(as_tensor_variable(v), self.dtype) for v in (avg, std)]
        if self.truncate:
            ins.append(as_tensor_variable(u_fix))
        return Apply(self, ins, [TensorType(self.dtype, (None,) * self.ndim)()])

    def halves(self, u: np.ndarray):
        """``r``, ``cos theta`` and ``sin theta`` of the pairs."""
        dt = np.dtype(self.dtype)
        half = len(u) // 2
        r = np.sqrt(dt.type(-2.0) * np.log(u[:half]))
        theta = dt.type(2.0 * np.pi) * u[half:]
        return r, np.cos(theta), np.sin(theta)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        u, size, avg, std, *fix = inputs
        shape = _shape(size, "MRG_RandomStreams.normal")
        r, cos_t, sin_t = self.halves(u)
        z0, z1 = r * cos_t, r * sin_t
        if self.truncate:
            bad0, bad1 = np.abs(z0) > 2, np.abs(z1) > 2
            r_fix = np.sqrt(np.dtype(self.dtype).type(-2.0) * np.log(fix[0]))
            n0 = int(bad0.sum())
            parts = [z0[~bad0], r_fix[:n0] * cos_t[bad0], z1[~bad1], r_fix[n0:] * sin_t[bad1]]
        else:
            parts = [z0, z1]
        n = int(np.prod(shape, dtype=np.int64))
        z = np.concatenate(parts)[:n].reshape(shape)
        output_storage[0][0] = (z * std + avg).astype(self.dtype, copy=False)

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [None] * len(inputs)


class OutsideTwo(Op):
    """How many of the Box-Muller normals of ``u`` lie outside [-2, 2] (an int64 scalar)."""

    __props__ = ()

    def make_node(self, u: Variable) -> Apply:
        return Apply(self, [as_tensor_variable(u)], [TensorType("int64", ())()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        (u,) = inputs
        r, cos_t, sin_t = BoxMuller(u.dtype, 1).halves(u)
        count = (np.abs(r * cos_t) > 2).sum() + (np.abs(r * sin_t) > 2).sum()
        output_storage[0][0] = np.asarray(count, dtype=np.int64)

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [None]


class MultinomialFromUniform(Op):
    """``n`` draws per row of ``pvals``: draw ``c`` of row ``k`` is the first outcome whose
    cumulative probability (in float64) exceeds ``unis[c * rows + k]``."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str):
        self.dtype = str(np.dtype(dtype))

    def make_node(self, pvals: Variable, unis: Variable, n: Variable) -> Apply:
        pvals, unis, n = (as_tensor_variable(v) for v in (pvals, unis, n))
        if pvals.ndim != 2 or unis.ndim != 1 or n.ndim != 0:
            raise TypeError(f"{type(self).__name__}: pvals must be a matrix, unis a vector "
                            "and n a scalar")  # fmt: skip
        return Apply(self, [pvals, unis, n], [TensorType(self.dtype, (None, None))()])

    def picks(self, pvals: np.ndarray, unis: np.ndarray, n: int) -> np.ndarray:
        """``(rows, n)`` chosen outcomes (-1 where the cumulative sum never exceeds ``u``)."""
        rows = pvals.shape[0]
        if unis.shape[0] != rows * n:
            raise ValueError(f"{self}: {unis.shape[0]} uniforms for {rows} rows x {n} draws")
        cum = np.cumsum(pvals, axis=1, dtype=np.float64)
        u = unis.reshape(n, rows).T.astype(np.float64)
        idx = (cum[:, None, :] > u[:, :, None]).argmax(axis=2)
        found = np.take_along_axis(cum, idx, axis=1) > u
        return np.where(found, idx, -1)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        pvals, unis, n = inputs
        picks = self.picks(pvals, unis, int(n))
        out = np.zeros(pvals.shape, dtype=self.dtype)
        rows = np.broadcast_to(np.arange(pvals.shape[0])[:, None], picks.shape)
        ok = picks >= 0
        np.add.at(out, (rows[ok], picks[ok]), 1)
        output_storage[0][0] = out

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [None] * len(inputs)


class ChoiceFromUniform(MultinomialFromUniform):
    """``n`` distinct column indices per row of ``pvals``: each pick is taken as by
    ``MultinomialFromUniform`` and its probability then set to 0 and the row renormalized."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        pvals, unis, n = inputs
        n, rows = int(n), pvals.shape[0]
        if n > pvals.shape[1]:
            raise ValueError(f"{self}: cannot draw {n} distinct values from {pvals.shape[1]}")
        if unis.shape[0] != rows * n:
            raise ValueError(f"{self}: {unis.shape[0]} uniforms for {rows} rows x {n} draws")
        p = np.array(pvals, copy=True)
        out = np.full((rows, n), -1, dtype=self.dtype)
        for c in range(n):
            pick = self.picks(p, unis[c * rows : (c + 1) * rows], 1)[:, 0]
            out[:, c] = pick
            for k in np.flatnonzero(pick >= 0):
                p[k, pick[k]] = 0
                p[k] /= p[k].sum()
        output_storage[0][0] = out
