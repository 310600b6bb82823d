"""``import cdk_triton.constructs`` pays for nothing it does not use: each name loads on first use."""

from __future__ import annotations

import importlib
import subprocess
import sys

import cdk_triton.constructs as constructs


def test_importing_the_package_imports_none_of_its_modules_nor_aws_cdk() -> None:
    code = (
        "import sys, cdk_triton.constructs; "
        "print(sorted(m for m in sys.modules if m.startswith('cdk_triton.constructs.') or m == 'aws_cdk'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_exported_name_is_its_owner_s_object() -> None:
    where = vars(constructs)["_WHERE"]
    assert sorted(where) == sorted(constructs.__all__)
    for name, module in where.items():
        assert getattr(constructs, name) is getattr(importlib.import_module(module), name), name
