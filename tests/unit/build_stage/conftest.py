"""Build-stage fixtures: one shared build of the example."""

from __future__ import annotations

import pytest
from build_stage_helpers import EXAMPLE


@pytest.fixture(scope="session")
def example_build(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The example declaration built once into a temp directory (~8 s)."""
    from cdk_triton.build import run_build

    out = tmp_path_factory.mktemp("example-out")
    return run_build(EXAMPLE, out_dir=out, progress=False)
