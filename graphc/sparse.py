"""Theano's ``sparse`` names: graphc has no sparse tensors, so each raises
NotImplementedError naming itself."""


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(f"graphc.sparse.{name}: graphc does not support sparse tensors")
