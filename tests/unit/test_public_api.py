"""Every public package declares ``__all__``; each name it lists exists, has its own docstring, and is on a
page of the API reference (a ``::: package`` directive of docs/reference renders the package's ``__all__``).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: the packages users import (the others, cli and demo, are commands)
PUBLIC = (
    "cdk_triton",
    "cdk_triton.config",
    "cdk_triton.config.declaration",
    "cdk_triton.config.server_options",
    "cdk_triton.constructs",
    "cdk_triton.builder",
    "cdk_triton.local",
    "cdk_triton.pipeline",
    "cdk_triton.registry",
    "cdk_triton.capacity",
    "cdk_triton.tune",
    "cdk_triton.scaffold",
    "cdk_triton.runtimes",
)


def _pages() -> set[str]:
    """Packages rendered by a ``::: name`` directive (static pages, and the generated declaration page)."""
    text = "".join(p.read_text() for p in (ROOT / "docs").rglob("*.md"))
    hooks = (ROOT / "docs" / "hooks.py").read_text()
    return set(re.findall(r"^::: ([\w.]+)", text, re.M)) | set(re.findall(r"::: ([\w.]+)", hooks))


def test_every_subpackage_of_cdk_triton_is_public_or_a_command() -> None:
    packages = {p.parent.name for p in (ROOT / "cdk_triton").glob("*/__init__.py")}
    assert packages - {m.split(".")[1] for m in PUBLIC if "." in m} == {"demo"}


@pytest.mark.parametrize("package", PUBLIC)
def test_every_public_name_exists_has_a_docstring_and_a_page(package: str) -> None:
    module = importlib.import_module(package)
    assert isinstance(getattr(module, "__all__", None), list), f"{package} has no __all__"
    assert package in _pages(), f"no docs/reference page renders {package} (::: {package})"
    undocumented = []
    for name in module.__all__:
        obj = getattr(module, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue  # constants: documented by their module
        doc = obj.__doc__ or ""
        auto = dataclasses.is_dataclass(obj) and doc.startswith(f"{obj.__name__}(")
        if not doc.strip() or auto:
            undocumented.append(name)
    assert not undocumented, f"{package}: public names without a docstring: {undocumented}"


def test_the_check_fails_on_a_name_without_a_docstring() -> None:
    @dataclasses.dataclass
    class Bare:
        x: int

    assert (Bare.__doc__ or "").startswith("Bare(")
