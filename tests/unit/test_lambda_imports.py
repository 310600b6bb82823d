"""lambda/ handlers ship as plain-Python CDK assets: none may import cdk_triton.

``lambda`` is a keyword and lambda/ is no package, so the import-linter contracts cannot see it:
every ``lambda/**/*.py`` is parsed here instead. The checker is proven on sources that do import
cdk_triton, so the test is not vacuous while lambda/ holds no Python file yet.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LAMBDA = Path(__file__).resolve().parents[2] / "lambda"


def _is_cdk_triton(name: str) -> bool:
    return name == "cdk_triton" or name.startswith("cdk_triton.")


def cdk_triton_imports(source: str) -> list[str]:
    """``line: module`` for each import of cdk_triton (import, from-import, importlib/__import__ by string)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0] if node.args else None
            if called in ("import_module", "__import__") and isinstance(first, ast.Constant):
                names = [str(first.value)]
        found += [f"{node.lineno}: {n}" for n in names if _is_cdk_triton(n)]
    return found


@pytest.mark.parametrize(
    "source",
    [
        "import cdk_triton\n",
        "import os, cdk_triton.config.manifest as m\n",
        "from cdk_triton.errors import CdkTritonError\n",
        "from cdk_triton import read_manifest\n",
        "def handler(event, context):\n    from cdk_triton.config import declaration\n",
        "import importlib\nmod = importlib.import_module('cdk_triton.config')\n",
        "from importlib import import_module\nimport_module('cdk_triton')\n",
        "__import__('cdk_triton.local')\n",
    ],
)
def test_checker_finds_an_import_of_cdk_triton(source: str) -> None:
    assert cdk_triton_imports(source), source


@pytest.mark.parametrize(
    "source",
    [
        "import boto3\nimport json\n",
        "from . import cdk_triton\n",  # a sibling module of the handler, not the package
        "import cdk_triton_helpers\n",
        "import importlib\nimportlib.import_module('boto3')\n",
        "NAME = 'cdk_triton'\n",
    ],
)
def test_checker_ignores_other_imports(source: str) -> None:
    assert cdk_triton_imports(source) == []


def test_no_lambda_handler_imports_cdk_triton() -> None:
    assert LAMBDA.is_dir()
    offenders = {
        str(path.relative_to(LAMBDA)): found
        for path in sorted(LAMBDA.rglob("*.py"))
        if (found := cdk_triton_imports(path.read_text()))
    }
    assert offenders == {}, f"lambda/ handlers must not import cdk_triton: {offenders}"
