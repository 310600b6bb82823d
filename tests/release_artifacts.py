"""The release artifacts built once per test session from a copy of the tracked tree: an sdist and a wheel
built from it (``artifacts``). tests/unit/test_packaging.py checks them; tests/release/ installs the wheel
into a clean venv and runs a scaffolded project from it. Registered in tests/conftest.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [p for p in out.stdout.split("\0") if p]


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An sdist from a copy of the tracked tree, then a wheel built from the unpacked sdist (as
    ``python -m build`` does), without build isolation (the running environment has setuptools)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    tmp = tmp_path_factory.mktemp("release")
    tracked = tracked_files()
    src = tmp / "src"
    for rel in tracked:
        if rel.startswith("node_modules/") or not (ROOT / rel).exists():
            continue
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / rel).is_symlink():
            os.symlink(os.readlink(ROOT / rel), src / rel)
        else:
            shutil.copy2(ROOT / rel, src / rel)
    dist = tmp / "dist"
    build = "from setuptools import build_meta as b; import sys; print(b.build_sdist(sys.argv[1]))"
    sdist = dist / run([sys.executable, "-c", build, str(dist)], src).strip().splitlines()[-1]
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp / "unpacked", filter="data")
    (unpacked,) = (tmp / "unpacked").iterdir()
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w"]
    run([*pip_wheel, str(dist), "."], unpacked)
    # and from the checkout copy, as `pip wheel .` in a clone does (the build/ folder's promise)
    run([*pip_wheel, str(tmp), "."], src)
    (wheel,) = dist.glob("cdk_triton-*.whl")
    return {"src": src, "tracked": tracked, "sdist": sdist, "wheel": wheel, "tmp": tmp}
