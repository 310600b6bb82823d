"""The layering contract of pyproject.toml ([tool.importlinter]) holds, and would fail on a breach."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
]


def _lint_imports(cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run(
        [*LINT_IMPORTS, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_layering_contract_is_kept() -> None:
    result = _lint_imports(ROOT, ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout
    assert "kept, 0 broken" in result.stdout


def _fake_package(root: Path, files: dict[str, str]) -> None:
    """A stand-in ``cdk_triton`` with the real package's top-level layout and the given module bodies."""
    layout = {
        "__init__.py": "",
        "cli.py": "import cdk_triton.demo\n",
        "demo/__init__.py": "",
        "demo/stages.py": "import cdk_triton.builder\n",
        "errors.py": "",
        "_deprecation.py": "",
        "_lazy.py": "",
        "config/__init__.py": "import cdk_triton.errors\n",
        "constructs/__init__.py": "",
        "constructs/endpoint.py": "import cdk_triton.config\n",
        "constructs/scaling.py": "",
        "builder/__init__.py": "",
        "local/__init__.py": "",
        "pipeline/__init__.py": "",
        "runtimes/__init__.py": "import cdk_triton.config\n",
        "tune/__init__.py": "import cdk_triton.local\n",
        "registry/__init__.py": "import cdk_triton.config\n",
        "capacity/__init__.py": "import cdk_triton.config\n",
        "scaffold/__init__.py": "import cdk_triton.config\n",
    }
    layout.update(files)
    for rel, body in layout.items():
        path = root / "cdk_triton" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def test_fake_package_with_the_real_layout_passes(tmp_path: Path) -> None:
    _fake_package(tmp_path, {})
    result = _lint_imports(tmp_path, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_fails_on_an_import_circle(tmp_path: Path) -> None:
    _fake_package(
        tmp_path,
        {
            "constructs/endpoint.py": "import cdk_triton.constructs.scaling\n",
            "constructs/scaling.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import cdk_triton.constructs.endpoint\n"
            ),
        },
    )
    result = _lint_imports(tmp_path, tmp_path)
    assert result.returncode == 1
    assert "No cycles are allowed in cdk_triton.constructs" in result.stdout


def test_fails_when_a_layer_imports_a_sibling_or_upwards(tmp_path: Path) -> None:
    _fake_package(
        tmp_path,
        {
            "constructs/scaling.py": "import cdk_triton.builder\n",
            "config/__init__.py": "import cdk_triton.local\n",
        },
    )
    result = _lint_imports(tmp_path, tmp_path)
    assert result.returncode == 1
    assert "cdk_triton.constructs.scaling -> cdk_triton.builder" in result.stdout
    assert "cdk_triton.config -> cdk_triton.local" in result.stdout


def test_fails_when_config_imports_a_third_party_package(tmp_path: Path) -> None:
    _fake_package(tmp_path, {"config/__init__.py": "import yaml\n"})
    (tmp_path / "yaml.py").write_text("")
    result = _lint_imports(tmp_path, tmp_path)
    assert result.returncode == 1
    assert "config is pure" in result.stdout
