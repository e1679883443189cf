"""Linkers: lower a FunctionGraph to a Program of thunks ("py" and "c|py")."""

from __future__ import annotations


def c_available() -> bool:
    """True when the "c|py" linker can build C thunks on this machine."""
    try:
        from graphc.linker.clinker import available
    except ImportError:
        return False
    return available()
