"""Renamed public names keep working for a while: a property that warns (DeprecationWarning) and answers."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any


def deprecated_property(old: str, new: str, getter: Callable[[Any], Any]) -> Any:
    """A read-only property ``old`` that warns ``<Class>.<old> is deprecated: use <new>`` and returns
    ``getter(self)``."""

    def get(self: Any) -> Any:
        warnings.warn(
            f"{type(self).__name__}.{old} is deprecated: use {new}", DeprecationWarning, stacklevel=2
        )
        return getter(self)

    get.__name__ = old
    get.__doc__ = f"Deprecated: use ``{new}``."
    return property(get)
