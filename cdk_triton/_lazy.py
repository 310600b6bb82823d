"""Names a package exports but imports on first use (PEP 562): ``import cdk_triton.<package>`` stays light.

Every package that re-exports names from its modules writes ``__getattr__ = lazy_exports(__name__, WHERE)``
with ``WHERE`` mapping each public name to the module defining it (dotted, or relative to the package). A
name is imported once and then kept in the package's namespace. Standard library only.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The package's ``__getattr__``: ``where[name]`` imported on first use (an unknown name: AttributeError)."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module if "." in module else f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
