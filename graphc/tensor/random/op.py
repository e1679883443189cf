"""RandomVariable: draw samples from an explicit generator state, returning the next state.

The state is an ordinary uint64 vector (a Philox key and counter, ``STATE_SIZE`` words), so
it lives in a shared variable like any other value, pickles, and threads through a graph
(or a loop) as an input and an output: ``new_state, sample = op(state, size, *params)``.
The same state always gives the same sample; the Op never writes its inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from graphc.flags import config
from graphc.graph.basic import Apply, Constant, Op, Variable
from graphc.scalar.basic import INT_DTYPES
from graphc.tensor.basic import MakeVector, _make_shape_vector, _shape_vector
from graphc.tensor.math import cast
from graphc.tensor.type import TensorType
from graphc.tensor.variable import TensorVariable, as_tensor_variable

if TYPE_CHECKING:
    from typing import Any

STATE_SIZE = 6  # Philox: 2 key words then 4 counter words
STATE_TYPE = TensorType("uint64", (STATE_SIZE,))


def state_from_seed(seed: int) -> np.ndarray:
    """A fresh generator state for an integer seed (different seeds, unrelated streams)."""
    key = np.random.SeedSequence(int(seed)).generate_state(2, dtype=np.uint64)
    return np.concatenate([key, np.zeros(4, dtype=np.uint64)])


def generator(state: np.ndarray) -> np.random.Generator:
    """A numpy Generator positioned at ``state`` (which must be a valid state vector)."""
    state = np.asarray(state)
    if state.shape != (STATE_SIZE,) or state.dtype != np.uint64:
        raise ValueError(
            f"a random state must be a uint64 vector of length {STATE_SIZE}, got "
            f"{state.dtype} of shape {state.shape}"
        )
    return np.random.Generator(np.random.Philox(key=state[:2], counter=state[2:]))


def next_state(gen: np.random.Generator, state: np.ndarray) -> np.ndarray:
    """The state after ``gen``'s draws: same key, the counter past every block used."""
    counter = gen.bit_generator.state["state"]["counter"]
    return np.concatenate([state[:2], np.asarray(counter, dtype=np.uint64)])


def keep_off_high(sample: np.ndarray, low, high) -> np.ndarray:
    """``sample`` with every value equal to ``high`` (in the sample's dtype) moved one step
    toward ``low``: ``low + (high - low) * u`` with ``u < 1`` can still round to ``high``
    (in the arithmetic, or when a float64 draw is rounded to a narrower dtype). Samples then
    lie in ``[low, high)``, or in ``(high, low]`` when ``low > high``; ``low == high`` gives
    ``low``."""
    sample = np.asarray(sample)
    if sample.dtype.kind != "f":
        return sample
    high = np.asarray(high, dtype=sample.dtype)
    below = np.nextafter(high, np.asarray(low, dtype=sample.dtype))
    hit = sample == high
    if hit.any():
        sample = np.where(hit, below, sample).astype(sample.dtype, copy=False)
    return sample


def _uniform(gen: np.random.Generator, size, params: list):
    """``low + (high - low) * u`` as numpy's Generator computes it, but allowing
    ``low > high`` as Theano does (samples in ``(high, low]``)."""
    low, high = (np.asarray(p, dtype=np.float64) for p in params)
    shape = np.broadcast_shapes(low.shape, high.shape) if size is None else size
    if np.broadcast_shapes(low.shape, high.shape, shape) != tuple(shape):
        raise ValueError(f"low {low.shape} and high {high.shape} do not broadcast to {shape}")
    scale = high - low
    if not np.isfinite(scale).all():
        raise OverflowError("Range exceeds valid bounds")
    return low + scale * gen.random(size=shape)


# A distribution: how many extra output axes each sample has beyond ``size`` (from the
# parameters' values), and the draw itself.
Draw = Callable[[np.random.Generator, tuple | None, list], np.ndarray]


def _multinomial(gen: np.random.Generator, size, params: list):
    n, pvals = params
    return gen.multinomial(n, pvals, size=size)


def _choice(gen: np.random.Generator, size, params: list, replace: bool):
    a, p = params
    a = a.item() if a.ndim == 0 else a
    if p.size == 0:
        return np.asarray(gen.choice(a, size=size, replace=replace))
    return np.asarray(gen.choice(a, size=size, replace=replace, p=p))


def _permutation(gen: np.random.Generator, size, params: list):
    (n,) = params
    n = int(n)
    shape = () if size is None else size
    out = np.empty((*shape, n), dtype=np.int64)
    for idx in np.ndindex(*shape):
        out[idx] = gen.permutation(n)
    return out


_DRAWS: dict[str, tuple[int, Draw]] = {
    "uniform": (0, _uniform),
    "normal": (0, lambda g, s, p: g.normal(p[0], p[1], size=s)),
    "binomial": (0, lambda g, s, p: g.binomial(p[0], p[1], size=s)),
    "random_integers": (0, lambda g, s, p: g.integers(p[0], p[1], size=s, endpoint=True)),
    "multinomial": (1, _multinomial),
    "choice": (0, lambda g, s, p: _choice(g, s, p, True)),
    "choice_no_replace": (0, lambda g, s, p: _choice(g, s, p, False)),
    "permutation": (1, _permutation),
}


class RandomSample(TensorVariable):
    """A sample's Variable; Theano's ``.rng`` (the state it was drawn from) and ``.update``
    (``(state, new_state)``) read its node."""

    __slots__ = ()

    @property
    def rng(self) -> Variable:
        return self.owner.inputs[0]

    @property
    def update(self) -> tuple[Variable, Variable]:
        return (self.owner.inputs[0], self.owner.outputs[0])


class RandomVariable(Op):
    """``RandomVariable(dist, dtype, ndim)(state, size, *params) -> [new_state, sample]``.

    ``size`` is an int64 vector (empty: the parameters' broadcast shape, as numpy does);
    ``ndim`` is the sample's number of dimensions.
    """

    __props__ = ("dist", "dtype", "ndim")
    state_type = STATE_TYPE
    DRAWS = _DRAWS

    def __init__(self, dist: str, dtype: str, ndim: int):
        if dist not in self.DRAWS:
            raise ValueError(f"unknown distribution {dist!r}; known: {', '.join(self.DRAWS)}")
        self.dist = dist
        self.dtype = str(np.dtype(config.floatX if dtype == "floatX" else dtype))
        self.ndim = int(ndim)

    def __str__(self) -> str:
        return f"RandomVariable{{{self.dist},{self.dtype}}}"

    def make_node(self, state: Variable, size: Variable, *params: Variable) -> Apply:
        state = as_tensor_variable(state)
        if self.state_type.convert_variable(state) is None:
            raise TypeError(f"{self}: the state must be {self.state_type}, got {state.type}")
        size = as_tensor_variable(size)
        if size.ndim != 1 or size.dtype != "int64":
            raise TypeError(f"{self}: size must be an int64 vector, got {size.type}")
        params = [as_tensor_variable(p) for p in params]
        sample = RandomSample(TensorType(self.dtype, (None,) * self.ndim))
        return Apply(self, [state, size, *params], [self.state_type(), sample])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        state, size, *params = inputs
        shape = tuple(int(s) for s in size) if len(size) else None
        try:
            new_state, sample = self.draw(state, shape, params)
        except ValueError as e:
            raise ValueError(f"{self}: bad parameters for {self.dist}: {e}") from None
        sample = np.asarray(sample)
        if sample.ndim != self.ndim:
            raise ValueError(
                f"{self}: the sample has {sample.ndim} dimensions (shape {sample.shape}) but "
                f"the graph expects {self.ndim}; pass size or ndim to match the parameters"
            )
        sample = sample.astype(self.dtype, copy=False)
        if self.dist == "uniform":
            sample = keep_off_high(sample, params[0], params[1])
        output_storage[0][0] = new_state
        output_storage[1][0] = sample

    def draw(self, state: np.ndarray, shape: tuple | None, params: list):
        """``(new_state, sample)`` of this distribution from ``state``."""
        gen = generator(state)
        sample = self.DRAWS[self.dist][1](gen, shape, params)
        return next_state(gen, state), sample

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        size = node.inputs[1]
        n = size_length(size)
        if not n or n + self.DRAWS[self.dist][0] != self.ndim:
            return [shapes[0], (None,) * self.ndim]  # known only from the values
        sample_shape = [size[k] for k in range(n)]
        if self.dist == "multinomial":
            sample_shape.append(node.inputs[3].shape[-1])
        elif self.dist == "permutation":
            sample_shape.append(node.inputs[2].astype("int64"))
        return [shapes[0], tuple(sample_shape)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        # samples are treated as constants: no gradient flows to the state, the size or
        # the distribution's parameters
        return [None] * len(inputs)


def size_length(size: Variable) -> int | None:
    """The static length of a size vector (None when only known at run time)."""
    if isinstance(size, Constant):
        return len(size.data)
    return size.type.shape[0]


def size_vector(size, opname: str) -> Variable:
    """``size`` (None, ints, symbolic scalars or an int vector) as an int64 vector."""
    if size is None or (isinstance(size, Sequence) and len(size) == 0):
        return _make_shape_vector([])
    if (
        isinstance(size, Variable)
        and size.ndim == 1
        and size.dtype in INT_DTYPES
        and size_length(size) is None
        and not (size.owner is not None and isinstance(size.owner.op, MakeVector))
    ):
        return size if size.dtype == "int64" else cast(size, "int64")  # length known at run time
    return _make_shape_vector(_shape_vector(size, opname))
