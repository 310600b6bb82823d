"""The deprecation path of a renamed public name (standard library only).

From 0.2.0 on, a public name that is renamed keeps working under its old name for one minor version:
each use warns with a ``DeprecationWarning`` that names the new name and the version the old one goes
away in, and CHANGELOG.md lists it under "Deprecated" (tests/unit/test_deprecation.py checks both).

Three shapes cover the public API:

- a renamed function or method: ``old = deprecated_function(new, old="pkg.old", since="0.3.0")``;
- a renamed module attribute (a class, a constant, a function imported by name): the module defines
  ``__getattr__ = deprecated_attributes(__name__, {"OldName": Renamed("NewName", since="0.3.0")}, globals())``
  (PEP 562), so ``from pkg import OldName`` and ``pkg.OldName`` both warn and return the new object
  itself (``isinstance`` keeps working);
- a renamed read-only property: ``old = deprecated_property(getter, old="pkg.Class.old", new="new",
  since="0.2.0")`` in the class body.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

#: every deprecation declared by an imported module: old qualified name -> (new qualified name, removal)
DECLARED: dict[str, tuple[str, str]] = {}


def removal_version(since: str) -> str:
    """The version an old name is removed in: the next minor after ``since`` ("0.3.0" -> "0.4.0")."""
    parts = since.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise ValueError(
            f"since '{since}' is not a version such as '0.3.0': give the release that renamed it"
        )
    return f"{parts[0]}.{int(parts[1]) + 1}.0"


def message(old: str, new: str, since: str) -> str:
    """The warning's text (one author for both shapes)."""
    return (
        f"{old} is deprecated since cdk-triton {since} and will be removed in {removal_version(since)}: "
        f"use {new} (see CHANGELOG.md)"
    )


def deprecated_function(new: Callable[P, R], *, old: str, since: str) -> Callable[P, R]:
    """``new`` under its old name ``old`` (a qualified name such as ``"cdk_triton.pipeline.plan_gpu_build"``):
    calling it warns once per call site and calls ``new`` with the same arguments."""
    new_name = f"{new.__module__}.{new.__qualname__}"
    text = message(old, new_name, since)
    DECLARED[old] = (new_name, removal_version(since))

    @functools.wraps(new)
    def alias(*args: P.args, **kwargs: P.kwargs) -> R:
        warnings.warn(text, DeprecationWarning, stacklevel=2)
        return new(*args, **kwargs)

    alias.__name__ = old.rsplit(".", 1)[-1]
    alias.__qualname__ = alias.__name__
    alias.__doc__ = f"Deprecated: {text}."
    return alias


@dataclass(frozen=True, kw_only=True, slots=True)
class Renamed:
    """A module attribute's new name and the release that renamed it."""

    new: str
    since: str


def deprecated_attributes(
    module: str, renamed: Mapping[str, Renamed], namespace: Mapping[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) that answers each old name in ``renamed`` with the object now
    named ``Renamed.new`` in ``namespace`` (the module's ``globals()``), after a DeprecationWarning."""
    for old, r in renamed.items():
        DECLARED[f"{module}.{old}"] = (f"{module}.{r.new}", removal_version(r.since))

    def __getattr__(name: str) -> Any:
        r = renamed.get(name)
        if r is None:
            raise AttributeError(f"module '{module}' has no attribute '{name}'")
        warnings.warn(
            message(f"{module}.{name}", f"{module}.{r.new}", r.since), DeprecationWarning, stacklevel=2
        )
        return namespace[r.new]

    return __getattr__


def deprecated_property(getter: Callable[[Any], Any], *, old: str, new: str, since: str) -> property:
    """A read-only property under its old name ``old`` (qualified: ``"pkg.Class.old"``) that warns and
    returns ``getter(self)``; ``new`` names what to use instead (``"hosting_mode.loads_on_demand"``)."""
    text = message(old, new, since)
    DECLARED[old] = (new, removal_version(since))

    def get(self: Any) -> Any:
        warnings.warn(text, DeprecationWarning, stacklevel=2)
        return getter(self)

    get.__name__ = old.rsplit(".", 1)[-1]
    get.__doc__ = f"Deprecated: {text}."
    return property(get)
