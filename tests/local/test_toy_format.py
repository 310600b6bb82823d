"""Adding a format is one registry row, one exporter module and one CPU stand-in: a test-only ``toy``
format is built, packaged and served by the real local Triton server with nothing else changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cdk_triton.builder import run_build
from cdk_triton.config import formats
from cdk_triton.config.manifest import read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint, invoke_sample
from tests.toy_format import ROW
from tests.unit.builder.helpers import tiny, write_decl

pytestmark = pytest.mark.triton

ENDPOINTS = """
  - name: toy_sme
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [toy_model]
    packaging: tar.gz
"""


@pytest.fixture()
def toy() -> Iterator[formats.Format]:
    with formats.registered(ROW) as row:
        yield row


def test_a_registered_format_builds_packages_and_serves(toy: formats.Format, tmp_path: Path) -> None:
    decl = write_decl(tmp_path, tiny("toy_model", "toy"), endpoints=ENDPOINTS)
    result = run_build(decl, out_dir=tmp_path / "out", progress=False)
    manifest = read_manifest(result.manifest_path)
    entry = manifest.models["toy_model"]
    assert entry.format == "toy" and entry.backend == "toy" and entry.platform is None
    assert entry.config["backend"] == "toy" and "1/model.json" in entry.files
    assert manifest.endpoint("toy_sme").packaging == "tar.gz"
    with LocalEndpoint(manifest, "toy_sme", overlay=CpuOverlay(instance_count=1)) as ep:
        result = invoke_sample(ep)
    assert result.status == 200, result.error
    assert result.matched is True


def test_an_unregistered_format_is_refused_again(tmp_path: Path) -> None:
    with formats.registered(ROW):
        assert "toy" in formats.names()
    decl = write_decl(tmp_path, tiny("toy_model", "toy"))
    with pytest.raises(Exception, match=r"UnknownFormat"):
        run_build(decl, out_dir=tmp_path / "out", progress=False)
