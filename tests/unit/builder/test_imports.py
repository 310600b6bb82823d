"""Heavy packages stay off the path of ``import cdk_triton.builder`` and of a build with nothing to export."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import cdk_triton.builder
from cdk_triton.builder import run_build
from tests.unit.builder.helpers import EXAMPLE, ROOT, python_model, write_decl

HEAVY = (
    "torch",
    "onnx",
    "onnxruntime",
    "tensorrt",
    "transformers",
    "numpy",
    "tritonclient",
    "google",
    "isal",
    "ruamel",
    "matplotlib",
)
MODULES = sorted(m.name for m in pkgutil.walk_packages(cdk_triton.builder.__path__, "cdk_triton.builder."))
REPORT = f"import sys; print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))"


def _heavy_after(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\n{REPORT}"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return out.stdout.strip().splitlines()[-1]


def test_importing_the_package_and_every_module_imports_nothing_heavy() -> None:
    assert {"cdk_triton.builder.steps", "cdk_triton.builder.export.step"} <= set(MODULES)
    assert _heavy_after(f"import cdk_triton.builder, {', '.join(MODULES)}") == "[]"


def test_importing_the_cli_imports_nothing_heavy() -> None:
    assert _heavy_after("import cdk_triton.cli") == "[]"


def test_noop_rebuild_of_a_python_model_imports_nothing_heavy(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, python_model())
    assert run_build(decl, out_dir=tmp_path / "out", progress=False).exported == 1
    code = (
        "from cdk_triton.builder import run_build\n"
        f"r = run_build({str(decl)!r}, out_dir={str(tmp_path / 'out')!r}, progress=False)\n"
        "assert r.exported == 0 and r.packaged == 0, r"
    )
    assert _heavy_after(code) == "[]"


def test_noop_cli_rebuild_of_the_example_imports_nothing_heavy(example_build) -> None:  # type: ignore[no-untyped-def]
    """`cdk-triton build` with nothing to export (the example, built once) imports none of the heavy
    packages: factories are hashed with ast, not imported; TensorRT is looked for only when a plan must
    be built; ONNX files are read only when their bytes changed."""
    out = example_build.manifest_path.parent
    (out / ".noop-stamp").unlink(missing_ok=True)  # the full check, not the stamp's answer (test_stamp.py)
    code = (
        "from cdk_triton.cli import main\n"
        f"rc = main(['build', '--config', {str(EXAMPLE)!r}, '--out', {str(out)!r}, '--no-progress'])\n"
        "assert rc == 0, rc"
    )
    proc = subprocess.run(
        [sys.executable, "-c", f"{code}\n{REPORT}"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "exported 0, reconfigured 0, packaged 0" in proc.stdout.replace("\n", " ")
    assert proc.stdout.strip().splitlines()[-1] == "[]"
