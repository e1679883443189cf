"""Theano's ``MRG_RandomStreams``: the same MRG31k3p numbers as Theano for the same seed.

The streams object holds ``rstate``, the start of its next stream. Each sample takes the
next stream: a shared int32 ``(nstreams, 6)`` matrix of substream states ``2**72`` steps
apart, after which ``rstate`` jumps ``2**134`` steps. ``nstreams`` is Theano's guess: for a
size that is a tuple of Python ints, its product (divided by 6 when above 6), at most
``60 * 256``; for any other size ``60 * 256``. ``normal``, ``multinomial`` and ``choice``
draw their uniforms with a symbolic size, hence from ``60 * 256`` substreams, as in Theano.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from graphc.compile.sharedvalue import SharedVariable, shared
from graphc.flags import config
from graphc.graph.basic import Constant, Variable
from graphc.scalar.basic import upcast
from graphc.tensor.math import cast, lt
from graphc.tensor.math import prod as _prod
from graphc.tensor.random import mrg31k3p
from graphc.tensor.random.mrg_ops import (
    BoxMuller,
    ChoiceFromUniform,
    MRGUniform,
    MultinomialFromUniform,
    OutsideTwo,
)
from graphc.tensor.random.op import size_length, size_vector
from graphc.tensor.variable import as_tensor_variable

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from graphc.tensor.variable import TensorLike


def guess_n_streams(size) -> int:
    """Theano's number of substreams for a sample of ``size`` (only Python ints count as
    known: a numpy integer entry gives ``60 * 256``, as in Theano)."""
    if isinstance(size, (tuple, list)) and all(isinstance(s, int) for s in size):
        r = int(np.prod([int(s) for s in size], dtype=np.int64))
        return min(r // 6 if r > 6 else r, mrg31k3p.MAX_STREAMS)
    return mrg31k3p.MAX_STREAMS


def _float_dtype(dtype: DTypeLike | None, *params) -> str:
    """``dtype``, or floatX upcast with the dtypes of the non-Python-number parameters."""
    if dtype is not None:
        return str(np.dtype(dtype))
    typed = [as_tensor_variable(p).dtype for p in params if not isinstance(p, (int, float))]
    return upcast(config.floatX, *typed)


def _is_one(n) -> bool:
    if isinstance(n, Constant):
        n = n.data
    return not isinstance(n, Variable) and np.ndim(n) == 0 and n == 1


class MRG_RandomStreams:  # noqa: N801 - Theano's name
    """Symbolic MRG31k3p samples; ``seed`` is one int in ``[1, 2**31 - 21069)`` or six."""

    def __init__(self, seed: int | Sequence[int] = 12345):
        self.state_updates: list[tuple[SharedVariable, Variable, object, int | None]] = []
        self.default_instance_seed = seed
        self.set_rstate(seed)

    def set_rstate(self, seed: int | Sequence[int]) -> None:
        self.rstate = mrg31k3p.check_seed(seed)

    def updates(self) -> list[tuple[SharedVariable, Variable]]:
        """``(state, new_state)`` pairs of every sample made so far."""
        return [(old, new) for old, new, _, _ in self.state_updates]

    def seed(self, seed: int | Sequence[int] | None = None) -> None:
        """Restart from ``seed`` (None: the constructor's) and give every state made so far,
        in order, the substreams it would have had."""
        self.set_rstate(self.default_instance_seed if seed is None else seed)
        for old, _, size, nstreams in self.state_updates:
            rstates = self.get_substream_rstates(nstreams or self.n_streams(size))
            old.set_value(rstates, borrow=True)

    def inc_rstate(self) -> None:
        """Move ``rstate`` ``2**134`` steps on, to the start of the next stream."""
        self.rstate = mrg31k3p.apply_jump(mrg31k3p.STREAM_JUMP, self.rstate)[0].astype(np.int32)

    def get_substream_rstates(self, n_streams: int, dtype: str | None = None,
                              inc_rstate: bool = True) -> np.ndarray:  # fmt: skip
        """``(n_streams, 6)`` substream states from ``rstate``, ``2**72`` steps apart."""
        rval = mrg31k3p.substream_states(self.rstate, int(n_streams))
        if inc_rstate:
            self.inc_rstate()
        return rval

    def n_streams(self, size) -> int:
        return guess_n_streams(size)

    # ------------------------------------------------------------------ distributions
    def uniform(self, size, low: TensorLike = 0.0, high: TensorLike = 1.0,
                ndim: int | None = None, dtype: DTypeLike | None = None,
                nstreams: int | None = None) -> Variable:  # fmt: skip
        """Samples on ``[low, high)`` (``(high, low]`` when ``low > high``: the map is
        ``u * (high - low) + low`` with ``u`` in ``(0, 1)``, as in Theano)."""
        dtype = _float_dtype(dtype, low, high)
        if isinstance(size, (int, np.integer)):
            size = (size,)
        if isinstance(size, list):
            size = tuple(size)
        if isinstance(size, tuple):
            if any(isinstance(s, (int, np.integer)) and s <= 0 for s in size):
                raise ValueError(f"MRG_RandomStreams: size {size} has a dimension <= 0")
        elif not (isinstance(size, Variable) and getattr(size, "ndim", None) == 1):
            raise TypeError(f"size must be a tuple of ints or a symbolic vector, got {size!r}")
        size_var = size_vector(size, "MRG_RandomStreams.uniform")
        n = size_length(size_var)
        if ndim is None:
            if n is None:
                raise ValueError(f"MRG_RandomStreams: the length of size {size} is not known; "
                                 "pass ndim")  # fmt: skip
            ndim = n
        rstates = self.get_substream_rstates(nstreams or self.n_streams(size), dtype)
        node_rstate = shared(rstates, borrow=True)
        node_rstate.tag.is_rng = True
        new_rstate, sample = MRGUniform(dtype, ndim)(node_rstate, size_var, low, high)
        node_rstate.default_update = new_rstate
        self.state_updates.append((node_rstate, new_rstate, size, nstreams))
        return sample

    def binomial(self, size=None, n: TensorLike = 1, p: TensorLike = 0.5,
                 ndim: int | None = None, dtype: DTypeLike = "int64",
                 nstreams: int | None = None) -> Variable:  # fmt: skip
        """``uniform(size) < p`` cast to ``dtype`` (Theano's MRG draws only ``n == 1``)."""
        if not _is_one(n):
            raise NotImplementedError("MRG_RandomStreams.binomial with n != 1")
        x = self.uniform(size=size, ndim=ndim, nstreams=nstreams)
        return cast(lt(x, as_tensor_variable(p)), str(np.dtype(dtype)))

    def normal(self, size, avg: TensorLike = 0.0, std: TensorLike = 1.0,
               ndim: int | None = None, dtype: DTypeLike | None = None,
               nstreams: int | None = None, truncate: bool = False) -> Variable:  # fmt: skip
        """Box-Muller normals from ``prod(size)`` (rounded up to even) uniforms; with
        ``truncate``, values beyond two standard deviations are redrawn once, as Theano."""
        dtype = _float_dtype(dtype, avg, std)
        size_var = size_vector(size, "MRG_RandomStreams.normal")
        if ndim is None:
            ndim = size_length(size_var)
            if ndim is None:
                raise ValueError(f"MRG_RandomStreams.normal: the length of size {size} is "
                                 "not known; pass ndim")  # fmt: skip
        n_odd = _prod(size_var)
        n_even = n_odd + n_odd % 2
        u = self.uniform((n_even,), 0.0, 1.0, ndim=1, dtype=dtype, nstreams=nstreams)
        if not truncate:
            return BoxMuller(dtype, ndim)(u, size_var, avg, std)
        lower = np.asarray(1.0 / np.e**2, dtype=dtype)
        u_fix = self.uniform((OutsideTwo()(u),), lower, 1.0, ndim=1, dtype=dtype,
                             nstreams=nstreams)  # fmt: skip
        return BoxMuller(dtype, ndim, truncate=True)(u, size_var, avg, std, u_fix)

    def truncated_normal(self, size, avg: TensorLike = 0.0, std: TensorLike = 1.0,
                         ndim: int | None = None, dtype: DTypeLike | None = None,
                         nstreams: int | None = None) -> Variable:  # fmt: skip
        """Normals truncated at two standard deviations, scaled so that ``std`` is theirs."""
        std = as_tensor_variable(std) / 0.87962566103423978
        return self.normal(size, avg, std, ndim=ndim, dtype=dtype, nstreams=nstreams,
                           truncate=True)  # fmt: skip

    def multinomial(self, size=None, n: TensorLike = 1, pvals: TensorLike | None = None,
                    ndim: int | None = None, dtype: DTypeLike = "int64",
                    nstreams: int | None = None) -> Variable:  # fmt: skip
        """One row of counts of ``n`` draws per row of the matrix ``pvals``."""
        if pvals is None:
            raise TypeError("MRG_RandomStreams.multinomial: pvals is required")
        if size is not None or ndim is not None:
            raise NotImplementedError("MRG_RandomStreams.multinomial with a size or ndim: the "
                                      "shape is that of pvals")  # fmt: skip
        pvals = as_tensor_variable(pvals)
        if pvals.ndim != 2:
            raise NotImplementedError("MRG_RandomStreams.multinomial needs a matrix pvals")
        unis = self.uniform((pvals.shape[0] * n,), ndim=1, nstreams=nstreams)
        return MultinomialFromUniform(str(np.dtype(dtype)))(pvals, unis, n)

    def choice(self, size: TensorLike = 1, a=None, replace: bool = False,
               p: TensorLike | None = None, ndim: int | None = None,
               dtype: DTypeLike = "int64", nstreams: int | None = None) -> Variable:  # fmt: skip
        """``size`` distinct column indices per row of the probability matrix ``p``."""
        if a is not None or replace or p is None or ndim is not None:
            raise NotImplementedError(
                "MRG_RandomStreams.choice supports only a=None, replace=False and a matrix p"
            )
        p = as_tensor_variable(p)
        if p.ndim != 2:
            raise NotImplementedError("MRG_RandomStreams.choice needs a matrix p")
        unis = self.uniform((p.shape[0] * size,), ndim=1, nstreams=nstreams)
        return ChoiceFromUniform(str(np.dtype(dtype)))(p, unis, size)
