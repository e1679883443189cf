"""Small helpers Theano exposes as ``theano.gof.utils``."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

__all__ = ["MethodNotDefined", "difference", "flatten", "hash_from_code", "uniq"]


class MethodNotDefined(Exception):
    """An Op or Type lacks an optional method (Theano's ``gof.utils.MethodNotDefined``)."""


def flatten(a: Any) -> list:
    """Nested lists and tuples as one flat list, in order; anything else as ``[a]``."""
    if not isinstance(a, list | tuple):
        return [a]
    out: list = []
    for item in a:
        out.extend(flatten(item))
    return out


def uniq(seq: Iterable) -> list:
    """The items of ``seq`` without repeats, first occurrences in order."""
    return list(dict.fromkeys(seq))


def difference(seq1: Iterable, seq2: Iterable) -> list:
    """The items of ``seq1`` not in ``seq2``, in order."""
    exclude = list(seq2)
    return [x for x in seq1 if x not in exclude]


def hash_from_code(msg: str | bytes) -> str:
    """The md5 hex digest of ``msg`` (Theano's key for generated code)."""
    return hashlib.md5(msg.encode() if isinstance(msg, str) else msg).hexdigest()
