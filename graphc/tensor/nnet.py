"""nnet Ops."""

__all__: list[str] = []
