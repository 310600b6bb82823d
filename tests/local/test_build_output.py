"""The real build output of the example (build/models.yaml built by the build stage).

Builds the example into a temporary directory (so the test never depends on, or disturbs, a
build/out/ of the checkout), serves every endpoint of its manifest and invokes every model with its
sample over JSON and binary payloads, comparing with the eager model's outputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cdk_triton.config.manifest import read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint, invoke_sample

pytestmark = [pytest.mark.triton, pytest.mark.slow]

EXAMPLE = Path(__file__).resolve().parents[2] / "build" / "models.yaml"


@pytest.fixture(scope="module")
def example_manifest_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cdk_triton.builder import run_build

    result = run_build(EXAMPLE, out_dir=tmp_path_factory.mktemp("example-build"), progress=False)
    return Path(result.manifest_path)


def test_every_endpoint_and_model_of_the_build_output_answers_its_sample(example_manifest_path: Path) -> None:
    manifest = read_manifest(example_manifest_path)
    declared = yaml.safe_load(EXAMPLE.read_text())["endpoints"]
    assert set(manifest.endpoints) == {e["name"] for e in declared}  # every declared endpoint was built
    for name, entry in sorted(manifest.endpoints.items()):
        if (
            entry.hosting_mode.components
        ):  # served and invoked by `make demo` and tests/local/test_components.py
            continue
        if (
            entry.async_inference is not None
        ):  # InvokeEndpointAsync: tests/local/test_async_serve.py, make demo
            continue
        with LocalEndpoint(manifest, name, overlay=CpuOverlay(instance_count=1)) as ep:
            targets = sorted(entry.target_models) if entry.hosting_mode.loads_on_demand else [None]
            for target in targets:
                sample_owner = entry.target_models[target] if target else entry
                assert sample_owner.sample is not None and sample_owner.sample.response, (name, target)
                for binary in (False, True):
                    result = invoke_sample(ep, target, binary=binary)
                    assert result.status == 200, (name, target, binary, result.error)
                    assert result.matched is True, (name, target, binary, result.max_abs_diff)
