"""Shared test configuration."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["tests.goldens_hook"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")


def _has_cuda() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (gpu marker); none on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def example_manifest_path() -> Path:
    return FIXTURES / "manifests" / "example.json"
