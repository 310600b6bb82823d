"""Frozen dataclasses as JSON-ready values, fast: what ``Manifest.to_dict`` writes.

``json_ready`` is ``dataclasses.asdict`` with None-valued keys dropped, ``plain`` is ``asdict`` itself,
both without ``asdict``'s deep copies (the leaves are JSON scalars); standard library only.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any


def json_ready(value: Any) -> Any:
    """``dataclasses.asdict`` then None-valued keys dropped (in dicts and lists, not in tuples), in
    one pass and without asdict's deep copies (the leaves are JSON scalars): a no-op build of a fleet
    serializes its whole manifest."""
    if isinstance(value, _SCALARS):
        return value
    names = _field_names(value)
    if names is not None:
        items = ((n, getattr(value, n)) for n in names)
        return {n: json_ready(v) for n, v in items if v is not None}
    if isinstance(value, list):
        return [json_ready(v) for v in value]
    if isinstance(value, tuple):  # asdict keeps tuples; None inside one is kept, as before
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {plain(k): json_ready(v) for k, v in value.items() if v is not None}
    return value


def plain(value: Any) -> Any:
    """``dataclasses.asdict`` of ``value`` without its deep copies (None kept)."""
    if isinstance(value, _SCALARS):
        return value
    names = _field_names(value)
    if names is not None:
        return {n: plain(getattr(value, n)) for n in names}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    return value


_SCALARS = (str, int, float, type(None))
#: the field names of each dataclass met (``dataclasses.fields`` per call is most of the time)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(value: Any) -> tuple[str, ...] | None:
    """The field names of a dataclass instance (cached per type), None for anything else."""
    names = _FIELDS.get(type(value))
    if names is None and is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS[type(value)] = tuple(f.name for f in fields(value))
    return names
