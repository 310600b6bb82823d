"""The real build output (build/out/manifest.json, written by `cdk-triton build`), when present.

Serves every endpoint of the manifest and invokes every model with its sample, as the demo does.
Skipped when the build stage has not run here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk_triton.config.manifest import read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint, invoke_sample

pytestmark = [pytest.mark.triton, pytest.mark.slow]

MANIFEST = Path(__file__).resolve().parents[2] / "build" / "out" / "manifest.json"


@pytest.mark.skipif(not MANIFEST.is_file(), reason="no build output (run `cdk-triton build` first)")
def test_every_endpoint_and_model_of_the_build_output_answers_its_sample() -> None:
    manifest = read_manifest(MANIFEST)
    for name, entry in sorted(manifest.endpoints.items()):
        with LocalEndpoint(manifest, name, overlay=CpuOverlay(instance_count=1)) as ep:
            targets = sorted(entry.target_models) if entry.is_multi_model else [None]
            for target in targets:
                sample_owner = entry.target_models[target] if target else entry
                if sample_owner.sample is None:
                    continue
                result = invoke_sample(ep, target, binary=target is not None)
                assert result.status == 200, (name, target, result.error)
                assert result.matched is not False, (name, target, result.max_abs_diff)
