"""`pip wheel .` from a clean checkout: the wheel holds the package and its data, and the example's
build/ folder (a promised root folder) holds only its tracked files afterwards."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tracked(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True)
    return [p for p in out.stdout.split("\0") if p]


@pytest.mark.slow
def test_pip_wheel_leaves_build_folder_as_tracked_and_ships_the_package(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    tracked = _tracked(ROOT)
    src = tmp_path / "src"
    for rel in tracked:
        if rel.startswith("node_modules/") or not (ROOT / rel).is_file():
            continue
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    dist = tmp_path / "dist"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist),
            ".",
        ],
        cwd=src,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    in_build = sorted(str(p.relative_to(src)) for p in (src / "build").rglob("*") if p.is_file())
    assert in_build == sorted(p for p in tracked if p.startswith("build/") and (ROOT / p).is_file())
    (wheel,) = dist.glob("cdk_triton-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "cdk_triton/config/data/triton-releases.json" in names
    assert "cdk_triton/py.typed" in names
    assert not [n for n in names if n.startswith(("build/", "tests/", "bench/", "lambda/"))]
