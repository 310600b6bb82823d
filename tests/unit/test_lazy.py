"""``cdk_triton._lazy``: the packages' one first-use import of their public names."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("package", "name"),
    [
        ("cdk_triton", "read_manifest"),
        ("cdk_triton.builder", "run_build"),
        ("cdk_triton.local", "invoke_sample"),
        ("cdk_triton.tune", "TuneRequest"),
        ("cdk_triton.capacity", "build_report"),
        ("cdk_triton.pipeline", "GpuBuildOptions"),
    ],
)
def test_a_public_name_loads_on_first_use_and_stays(package: str, name: str) -> None:
    pkg = importlib.import_module(package)
    value = getattr(pkg, name)
    assert vars(pkg)[name] is value  # kept: the next access is a plain attribute


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    import cdk_triton.builder

    with pytest.raises(AttributeError, match=r"module 'cdk_triton.builder' has no attribute 'nope'"):
        cdk_triton.builder.nope  # noqa: B018


def test_importing_a_package_imports_none_of_its_modules() -> None:
    code = "import sys, cdk_triton.builder; print(sorted(m for m in sys.modules if m.startswith('cdk_triton.builder.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
