"""An asynchronous endpoint served by a real tritonserver: ``LocalEndpoint`` registers the front's async
route for an entry with an ``async:`` block (output and failure under the layout's keys of the chosen
location), boto3 ``invoke_endpoint_async`` gets 202 and the output file holds the model's answer, and
``AsyncClient`` (``cdk-triton invoke --async``) matches the recorded sample."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.config.async_inference import AsyncValues
from cdk_triton.config.manifest import Manifest
from cdk_triton.local import LocalEndpoint
from cdk_triton.local.client import AsyncClient, invoke_sample
from cdk_triton.local.overlay import CpuOverlay

pytestmark = [pytest.mark.triton]


def _async_manifest(manifest: Manifest) -> Manifest:
    entry = dataclasses.replace(
        manifest.endpoint("local"), async_inference=AsyncValues(invocation_timeout_s=60)
    )
    return dataclasses.replace(manifest, endpoints={**manifest.endpoints, "local": entry})


def test_boto3_invoke_endpoint_async_against_a_real_tritonserver(
    manifest: Manifest, tmp_path: Path, boto_runtime: Any
) -> None:
    served = _async_manifest(manifest)
    sample = served.endpoint("local").sample or served.models[served.endpoint("local").default_model].sample
    assert sample is not None and sample.response is not None
    request = served.resolve(sample.request)
    with LocalEndpoint(
        served, "local", overlay=CpuOverlay(instance_count=1), async_location=str(tmp_path)
    ) as ep:
        assert ep.async_route is not None
        assert ep.async_route.output_location == f"{tmp_path}/async/local/output/"
        resp = boto_runtime(ep.front.url).invoke_endpoint_async(  # type: ignore[union-attr]
            EndpointName="local", InputLocation=str(request), ContentType="application/json"
        )
        assert resp["ResponseMetadata"]["HTTPStatusCode"] == 202
        out = Path(resp["OutputLocation"])
        deadline = time.monotonic() + 60
        while not out.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        got = json.loads(out.read_bytes())
        expected = json.loads(served.resolve(sample.response).read_text())
        assert [o["name"] for o in got["outputs"]] == [o["name"] for o in expected["outputs"]]
        result = invoke_sample(AsyncClient(ep, location=str(tmp_path)))
        assert result.ok and result.matched, str(result)
