"""JSON form of profiles (docs/profile-schema.md), driven by the dataclass fields."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Sequence
from typing import Any

from graphc.profile.data import model
from graphc.profile.data.model import FunctionProfile

SCHEMA_VERSION = 1


def to_plain(obj: Any) -> Any:
    """Dataclasses to dicts, tuples to lists."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, list | tuple):
        return [to_plain(x) for x in obj]
    return obj


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, vars(model))


def from_plain(tp: Any, data: Any) -> Any:
    """Rebuild a value of type ``tp`` from :func:`to_plain` output."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return from_plain(inner, data)
    if origin is list:
        (inner,) = typing.get_args(tp)
        return [from_plain(inner, x) for x in data]
    if origin is tuple:
        inner = typing.get_args(tp)[0]
        return tuple(from_plain(inner, x) for x in data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        kwargs = {
            f.name: from_plain(hints[f.name], data[f.name])
            for f in dataclasses.fields(tp)
            if f.name in data
        }
        return tp(**kwargs)
    if tp is float and isinstance(data, int):
        return float(data)
    return data


def dumps(functions: Sequence[FunctionProfile], name: str | None) -> str:
    """The JSON document for a list of function profiles."""
    doc = {
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "functions": [to_plain(f) for f in functions],
    }
    return json.dumps(doc, indent=1, sort_keys=True)


def loads(text: str) -> tuple[list[FunctionProfile], str | None]:
    """Parse a JSON document into function profiles and the stats name."""
    doc = json.loads(text)
    version = doc.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ValueError(f"unsupported profile schema_version {version!r}")
    return [from_plain(FunctionProfile, f) for f in doc["functions"]], doc.get("name")
