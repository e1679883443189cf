"""blas Ops."""

__all__: list[str] = []
