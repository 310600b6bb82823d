"""Shared test configuration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.capabilities import has_cuda, has_tensorrt, skip_reasons
from tests.release_artifacts import artifacts  # noqa: F401  (a session fixture: the sdist and wheel)

pytest_plugins = ["tests.goldens_hook"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
#: the user's environments of the release-runtime check, before any test moves XDG_CACHE_HOME (the tests marked
#: target_runtime share them; CI creates them once)
from cdk_triton.config import target_runtime as _target_runtime  # noqa: E402

RUNTIMES_ROOT = _target_runtime.root()
# builds in tests skip the release-runtime check (a few GB of environment) unless a test is marked target_runtime
os.environ.setdefault(_target_runtime.SWITCH_VARIABLE, "off")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # markers, not keywords: a parametrized id such as test_x[tensorrt] is a keyword too
    marked = {i: {m.name for m in i.iter_markers()} & {"gpu", "tensorrt"} for i in items}
    marked = {i: names for i, names in marked.items() if names}
    if not marked:
        return
    cuda = has_cuda()
    trt = has_tensorrt()
    for item, names in marked.items():
        reasons = skip_reasons(names, cuda=cuda, tensorrt=trt)
        if reasons:
            item.add_marker(pytest.mark.skip(reason="; ".join(reasons)))


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def example_manifest_path() -> Path:
    return FIXTURES / "manifests" / "example.json"
