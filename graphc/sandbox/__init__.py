"""Theano's ``sandbox`` names graphc provides (``rng_mrg``); its GPU back ends it does not."""


def __getattr__(name: str):
    if name == "cuda":
        import graphc.sandbox.cuda

        return graphc.sandbox.cuda
    if name == "gpuarray":
        from graphc.gpuarray import unavailable

        raise unavailable("graphc.sandbox.gpuarray")
    raise AttributeError(f"module 'graphc.sandbox' has no attribute {name!r}")
