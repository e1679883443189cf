"""Random sampling Ops: an explicit generator state in, the next state and a sample out.

``graphc.tensor.random.utils.RandomStream`` and Theano's ``RandomStreams`` keep that state
in shared variables updated by ``graphc.function``.
"""

from graphc.tensor.random.op import STATE_SIZE, STATE_TYPE, RandomVariable, state_from_seed

__all__ = ["STATE_SIZE", "STATE_TYPE", "RandomVariable", "state_from_seed"]
