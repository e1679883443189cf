"""Theano's ``sandbox`` names graphc provides (``rng_mrg``); its GPU back ends it does not."""


def __getattr__(name: str):
    if name == "cuda":
        import graphc.sandbox.cuda

        return graphc.sandbox.cuda
    if name == "gpuarray":
        raise NotImplementedError("graphc.sandbox.gpuarray: graphc has no GPU back end")
    raise AttributeError(f"module 'graphc.sandbox' has no attribute {name!r}")
