"""No reaching in: a module imports no other module's private name and reads no private attribute of
a module it imported; what another module needs is public where it is owned. A package-internal
module (``cdk_triton._deprecation``, ``pipeline._nag``) is a module, not a name inside one: importing it
is how the package shares it without making it public API."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cdk_triton"
#: the packages this guard covers (constructs/ and local/ have owners of their own who adopt it)
GUARDED = ("config", "builder", "pipeline", "capacity", "registry", "tune")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_module(qualified: str) -> bool:
    try:
        return importlib.util.find_spec(qualified) is not None
    except ModuleNotFoundError:
        return False


def reaching_in(source: str) -> list[str]:
    """``from cdk_triton.x import _name`` of a name that is not a module, and ``alias._name`` of a
    module imported from ``cdk_triton`` (``tables._load``)."""
    tree = ast.parse(source)
    found: list[str] = []
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cdk_triton"):
            for a in node.names:
                qualified = f"{node.module}.{a.name}"
                if _private(a.name) and not _is_module(qualified):
                    found.append(f"{node.lineno}: from {node.module} import {a.name}")
                if _is_module(qualified):
                    modules.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name.startswith("cdk_triton"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and ast.unparse(node.value) in modules:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_scan_sees_both_kinds_of_reaching_in() -> None:
    src = (
        "from cdk_triton.config import tables\n"
        "from cdk_triton.config.tables import _version_key\n"
        "from cdk_triton import _deprecation\n"
        "x = tables._load('a')\n"
        "y = self._cache\n"
    )
    assert reaching_in(src) == ["2: from cdk_triton.config.tables import _version_key", "4: tables._load"]


def test_no_guarded_module_reaches_into_another() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{hit}"
        for package in GUARDED
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for hit in reaching_in(path.read_text())
    ]
    assert not found, f"make the name public where it is owned, or move the caller: {found}"
