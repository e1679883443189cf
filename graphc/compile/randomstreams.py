"""Random streams: factories of random samples whose generator states are shared variables.

Each call (``uniform``, ``normal``, ...) makes a new shared state and a ``RandomVariable``
node; the state's ``default_update`` is the node's new state, so every ``graphc.function``
that uses the sample advances the stream by itself. ``seed(s)`` reseeds every state a
stream made, reproducibly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.compile.sharedvalue import SharedVariable, shared
from graphc.graph.basic import Variable
from graphc.tensor.random.legacy import LegacyRandomVariable, legacy_state_from_seed
from graphc.tensor.random.op import (
    RandomVariable,
    size_length,
    size_vector,
    state_from_seed,
)
from graphc.tensor.variable import as_tensor_variable

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from graphc.tensor.variable import TensorLike

_SEED_RANGE = 2**30


class RandomStreamsBase:
    """What every stream class shares: the seed, the shared states it made and ``gen``,
    which makes one sample. The subclasses spell the distributions as Theano's
    ``RandomStreams`` and PyTensor's ``RandomStream`` do (their signatures differ, so
    neither is a subclass of the other; ``MRG_RandomStreams`` is in
    ``graphc.compile.mrg_randomstreams``)."""

    rv_class: type[RandomVariable] = RandomVariable
    make_state = staticmethod(state_from_seed)

    def __init__(self, seed: int | None = None):
        self.default_instance_seed = seed
        self.state_updates: list[tuple[SharedVariable, Variable]] = []
        self.gen_seedgen = np.random.RandomState(seed)

    def updates(self) -> list[tuple[SharedVariable, Variable]]:
        """``(state, new_state)`` pairs of every sample made so far."""
        return list(self.state_updates)

    def seed(self, seed: int | None = None) -> None:
        """Reseed every state this stream made (``None``: the constructor's seed)."""
        seedgen = np.random.RandomState(self.default_instance_seed if seed is None else seed)
        for state, _ in self.state_updates:
            state.set_value(self.make_state(int(seedgen.randint(_SEED_RANGE))), borrow=True)

    # ------------------------------------------------------------------ building
    def new_state(self) -> SharedVariable:
        """A shared generator state seeded from this stream's seed generator."""
        seed = int(self.gen_seedgen.randint(_SEED_RANGE))
        value = self.make_state(seed)
        return shared(value, shape=value.shape, borrow=True)

    def gen(self, dist: str, size: TensorLike | None, params: list, dtype: DTypeLike,
            ndim: int | None, extra_axes: int = 0,
            ndim_from_params: bool = True) -> Variable:  # fmt: skip
        """A sample of ``dist`` from a new shared state whose default update advances it."""
        params = [as_tensor_variable(p) for p in params]
        size_var = size_vector(size, f"RandomStreams.{dist}")
        n_size = size_length(size_var)
        if n_size is None:  # a size vector whose length is only known at run time
            if ndim is None:
                raise ValueError(
                    f"RandomStreams.{dist}: the length of size {size} is not known; pass ndim"
                )
            want = ndim
        elif n_size:
            want = n_size + extra_axes
        elif ndim_from_params:
            want = max((p.ndim for p in params), default=0)
        else:
            want = extra_axes
        if ndim is not None and ndim != want:
            raise ValueError(
                f"RandomStreams.{dist}: ndim={ndim} does not match size {size} and the "
                f"parameters, which give {want} dimensions"
            )
        state = self.new_state()
        name = "floatX" if isinstance(dtype, str) and dtype == "floatX" else str(np.dtype(dtype))
        new_state, sample = self.rv_class(dist, name, want)(state, size_var, *params)
        state.default_update = new_state
        self.state_updates.append((state, new_state))
        return sample

    def _choice(self, size: TensorLike | None, a: TensorLike, replace: bool,
                p: TensorLike | None, ndim: int | None, dtype: DTypeLike) -> Variable:  # fmt: skip
        """Elements of ``a`` (or of ``range(a)``) drawn with probabilities ``p``."""
        p = np.zeros(0) if p is None else p
        dist = "choice" if replace else "choice_no_replace"
        return self.gen(dist, size, [a, p], dtype, ndim, ndim_from_params=False)

    def _permutation(
        self, size: TensorLike | None, n: TensorLike, ndim: int | None, dtype: DTypeLike
    ) -> Variable:
        """Permutations of ``range(n)``; shape ``size + (n,)``."""
        return self.gen("permutation", size, [n], dtype, ndim, extra_axes=1,
                        ndim_from_params=False)  # fmt: skip


class RandomStreams(RandomStreamsBase):
    """Theano's ``RandomStreams(seed)``: symbolic samples from independent shared states.

    As in Theano, a ``numpy.random.RandomState(seed)`` hands each sample the seed of its
    own ``RandomState`` (``randint(2**30)``), and samples are drawn with the legacy
    ``RandomState`` methods, so a seed gives Theano's numbers."""

    rv_class = LegacyRandomVariable
    make_state = staticmethod(legacy_state_from_seed)

    # ------------------------------------------------------------------ the distributions
    def uniform(
        self,
        size: TensorLike = (),
        low: TensorLike = 0.0,
        high: TensorLike = 1.0,
        ndim: int | None = None,
        dtype: DTypeLike | None = None,
    ):
        """Samples uniform on ``[low, high)`` in every dtype; ``low > high`` gives
        ``(high, low]`` (``low + (high - low) * u``, as Theano) in every mode."""
        return self.gen("uniform", size, [low, high], dtype or "floatX", ndim)

    def normal(
        self,
        size: TensorLike = (),
        avg: float = 0.0,
        std: float = 1.0,
        ndim: int | None = None,
        dtype: DTypeLike | None = None,
    ):
        """Normal samples of mean ``avg`` and standard deviation ``std``."""
        return self.gen("normal", size, [avg, std], dtype or "floatX", ndim)

    def binomial(
        self,
        size: TensorLike = (),
        n: TensorLike = 1,
        p: TensorLike = 0.5,
        ndim: int | None = None,
        dtype: DTypeLike = "int64",
    ):
        """Numbers of successes in ``n`` trials of probability ``p``."""
        return self.gen("binomial", size, [n, p], dtype, ndim)

    def random_integers(
        self,
        size: TensorLike = (),
        low: TensorLike = 0,
        high: TensorLike = 1,
        ndim: int | None = None,
        dtype: DTypeLike = "int64",
    ):
        """Integers uniform on ``[low, high]`` (both included)."""
        return self.gen("random_integers", size, [low, high], dtype, ndim)

    def multinomial(
        self,
        size: TensorLike = (),
        n: TensorLike = 1,
        pvals: TensorLike = (0.5, 0.5),
        ndim: int | None = None,
        dtype: DTypeLike = "int64",
    ):
        """Counts of ``n`` draws among ``len(pvals)`` outcomes; shape ``size + (len(pvals),)``."""
        return self.gen("multinomial", size, [n, pvals], dtype, ndim, extra_axes=1)

    def choice(
        self,
        size: TensorLike = (),
        a: TensorLike = 2,
        replace: bool = True,
        p: TensorLike | None = None,
        ndim: int | None = None,
        dtype: DTypeLike = "int64",
    ):
        """Elements of ``a`` (or of ``range(a)``) drawn with probabilities ``p``."""
        return self._choice(size, a, replace, p, ndim, dtype)

    def permutation(
        self,
        size: TensorLike = (),
        n: TensorLike = 1,
        ndim: int | None = None,
        dtype: DTypeLike = "int64",
    ):
        """Permutations of ``range(n)``; shape ``size + (n,)``."""
        return self._permutation(size, n, ndim, dtype)


class RandomStream(RandomStreamsBase):
    """PyTensor's ``RandomStream``: numpy-style signatures, parameters first and ``size``
    by keyword (``srng.normal(0, 1, size=(3,))``)."""

    def uniform(
        self,
        low: TensorLike = 0.0,
        high: TensorLike = 1.0,
        size: TensorLike | None = None,
        dtype: DTypeLike | None = None,
    ):
        """Samples on ``[low, high)``; ``low > high`` gives ``(high, low]``, as Theano's
        streams do (numpy's ``Generator.uniform`` would refuse it)."""
        return self.gen("uniform", size, [low, high], dtype or "floatX", None)

    def normal(
        self,
        loc: float = 0.0,
        scale: float = 1.0,
        size: TensorLike | None = None,
        dtype: DTypeLike | None = None,
    ):
        return self.gen("normal", size, [loc, scale], dtype or "floatX", None)

    def binomial(
        self,
        n: TensorLike,
        p: TensorLike,
        size: TensorLike | None = None,
        dtype: DTypeLike = "int64",
    ):
        return self.gen("binomial", size, [n, p], dtype, None)

    def bernoulli(self, p: TensorLike, size: TensorLike | None = None, dtype: DTypeLike = "int64"):
        return self.gen("binomial", size, [1, p], dtype, None)

    def integers(
        self,
        low: TensorLike,
        high: TensorLike | None = None,
        size: TensorLike | None = None,
        dtype: DTypeLike = "int64",
    ):
        """Integers on ``[low, high)`` (``[0, low)`` without ``high``)."""
        low, high = (0, low) if high is None else (low, high)
        return self.gen("random_integers", size, [low, as_tensor_variable(high) - 1], dtype,
                        None)  # fmt: skip

    def multinomial(
        self,
        n: TensorLike,
        p: TensorLike,
        size: TensorLike | None = None,
        dtype: DTypeLike = "int64",
    ):
        return self.gen("multinomial", size, [n, p], dtype, None, extra_axes=1)

    def choice(
        self,
        a: TensorLike,
        size: TensorLike | None = None,
        replace: bool = True,
        p: TensorLike | None = None,
        dtype: DTypeLike = "int64",
    ):
        return self._choice(() if size is None else size, a, replace, p, None, dtype)

    def permutation(self, x: TensorLike, dtype: DTypeLike = "int64"):
        """A permutation of ``range(x)`` for an integer ``x``."""
        return self._permutation((), x, None, dtype)
