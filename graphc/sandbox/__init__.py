"""Theano's ``sandbox`` names graphc provides (``rng_mrg``); its GPU back ends it does not."""


def __getattr__(name: str):
    if name in ("cuda", "gpuarray"):
        raise NotImplementedError(f"graphc.sandbox.{name}: graphc has no GPU back end")
    raise AttributeError(f"module 'graphc.sandbox' has no attribute {name!r}")
