"""Theano's ``gpuarray`` back end: graphc runs on the CPU only, so each name raises
NotImplementedError naming itself."""


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(f"graphc.gpuarray.{name}: graphc has no GPU back end")
