"""Keyword props typed by a ``TypedDict`` (``**props: Unpack[...]``): the names written once, checked here."""

from __future__ import annotations

from collections.abc import Collection, Mapping


def refuse_unknown(owner: str, given: Mapping[str, object], allowed: Collection[str]) -> None:
    """Refuse a keyword that is no prop, as Python refuses an unexpected keyword argument."""
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r}")
