"""A multi-model endpoint: TargetModel archives loaded on demand, unloaded, reloaded and evicted."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from botocore.exceptions import ClientError

from cdk_triton.config.server_options import front_profile
from cdk_triton.local import (
    CpuOverlay,
    LocalEndpoint,
    build_request,
    invoke_sample,
    invoke_tensors,
    parse_response,
)
from cdk_triton.local.client import BINARY_CONTENT_TYPE, resolve_sample, tensors_from_kserve
from cdk_triton.local.repository import sha256_file

pytestmark = pytest.mark.triton


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
@pytest.mark.parametrize("target", ["pipe_a", "ts", "onnx", "py"])
def test_samples_of_every_target_match_the_eager_models(
    mme: LocalEndpoint, target: str, binary: bool
) -> None:
    result = invoke_sample(mme, target, binary=binary)
    assert result.status == 200, result.error
    assert result.matched is True


def test_archives_have_the_manifest_hashes(manifest) -> None:
    for tm in manifest.endpoint("multi").target_models.values():
        assert sha256_file(manifest.resolve(tm.local_path)) == tm.sha256


def test_two_archives_with_a_preprocess_step_each_keep_their_own(mme: LocalEndpoint, facts) -> None:
    a = invoke_tensors(mme, {"RAW": facts.raw}, target_model="pipe_a")
    b = invoke_tensors(mme, {"RAW": facts.raw}, target_model="pipe_b")
    assert a.status == b.status == 200, (a.error, b.error)
    x = facts.raw.astype(np.float32) / 255.0
    np.testing.assert_allclose(a.outputs["SCORES"], facts.eager("onnx", x), atol=1e-5)
    np.testing.assert_allclose(b.outputs["SCORES"], facts.eager("onnx_b", 2 * x), atol=1e-5)  # b's preprocess


def _sample(mme: LocalEndpoint, target: str) -> tuple[str, dict, dict]:
    """(TargetModel header, sample inputs, sample outputs) of one target model."""
    sample, header = resolve_sample(mme, target)
    inputs = tensors_from_kserve(json.loads(mme.manifest.resolve(sample.request).read_text()))
    expected = tensors_from_kserve(json.loads(mme.manifest.resolve(sample.response).read_text()), "outputs")
    assert header is not None
    return header, inputs, expected


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
@pytest.mark.parametrize("target", ["pipe_a", "ts", "onnx", "py"])
def test_every_target_through_boto3_and_the_container_invoke_route(
    mme: LocalEndpoint, boto_runtime, target: str, binary: bool
) -> None:
    header, inputs, expected = _sample(mme, target)
    body, ctype = build_request(inputs, binary=binary)
    resp = boto_runtime(mme.url).invoke_endpoint(
        EndpointName="multi", Body=body, ContentType=ctype, TargetModel=target
    )
    assert resp["ContentType"].startswith(BINARY_CONTENT_TYPE if binary else "application/json")
    via_boto3 = parse_response(resp["Body"].read(), resp["ContentType"])
    mme.models.load(target)  # loaded, as SageMaker does before it calls the container
    status, headers, data = mme.container("POST", f"/models/{header}/invoke", body, {"Content-Type": ctype})
    assert status == 200, data
    via_container = parse_response(data, headers["content-type"])
    for name, exp in expected.items():
        np.testing.assert_allclose(via_boto3[name], exp, atol=1e-5, rtol=1e-4)
        np.testing.assert_allclose(via_container[name], exp, atol=1e-5, rtol=1e-4)


def test_boto3_with_the_hashed_target_model_name(mme: LocalEndpoint, manifest, facts, boto_runtime) -> None:
    hashed = manifest.endpoint("multi").target_models["ts"].target_model
    body, ctype = build_request({"INPUT__0": facts.x}, binary=True)
    resp = boto_runtime(mme.url).invoke_endpoint(
        EndpointName="multi", Body=body, ContentType=ctype, TargetModel=hashed
    )
    out = parse_response(resp["Body"].read(), resp["ContentType"])
    np.testing.assert_allclose(out["OUTPUT__0"], facts.eager("ts", facts.x), atol=1e-5)


def test_load_invoke_unload_reload(mme: LocalEndpoint, manifest) -> None:
    hashed = manifest.endpoint("multi").target_models["pipe_a"].target_model
    assert invoke_sample(mme, "pipe_a").matched
    assert hashed in mme.models.loaded()
    mme.models.unload("pipe_a")
    assert hashed not in mme.models.loaded()
    status, _, data = mme.container("GET", "/models")
    assert hashed not in data.decode()
    assert invoke_sample(mme, "pipe_a").matched  # reload on demand
    assert hashed in mme.models.loaded()


def test_unknown_and_missing_target_model_are_validation_errors(mme: LocalEndpoint, boto_runtime) -> None:
    client = boto_runtime(mme.url)
    with pytest.raises(ClientError) as info:
        client.invoke_endpoint(
            EndpointName="multi", Body=b"{}", ContentType="application/json", TargetModel="nope.tar.gz"
        )
    err = info.value.response["Error"]
    assert err["Code"] == "ValidationError" and "Failed to download model data" in err["Message"]
    with pytest.raises(ClientError) as info:
        client.invoke_endpoint(EndpointName="multi", Body=b"{}", ContentType="application/json")
    assert info.value.response["Error"]["Code"] == "ValidationError"


def test_out_of_memory_load_unloads_then_retries(manifest) -> None:
    with LocalEndpoint(manifest, "multi", overlay=CpuOverlay(instance_count=1)) as ep:
        ep.models.load("pipe_b")
        status, _, data = ep.invoke(b"{}", "application/json", target_model="oom")
        err = json.loads(data)
        assert status == 424 and err["OriginalStatusCode"] == 507
        assert "Out of memory" in err["OriginalMessage"]
        actions = [(e.action, e.detail) for e in ep.models.events]
        assert ("unload", "507") in actions and any(a == "retry-after-507" for a, _ in actions)
        assert ep.models.loaded() == []
        assert invoke_sample(ep, "pipe_a").matched  # the endpoint still serves afterwards


@pytest.fixture(scope="module")
def budgeted(manifest):
    with LocalEndpoint(manifest, "multi", overlay=CpuOverlay(instance_count=1), memory_budget_bytes=1) as ep:
        yield ep


def test_eviction_under_a_small_memory_budget_fails_no_request(
    budgeted: LocalEndpoint, facts, manifest
) -> None:
    def call(i: int) -> tuple[int, str | None]:
        r = invoke_tensors(budgeted, {"RAW": facts.raw}, target_model=("pipe_a", "pipe_b")[i % 2])
        return r.status, r.error

    with ThreadPoolExecutor(4) as pool:  # both models wanted at once: evict only what is idle
        results = list(pool.map(call, range(12)))
    assert [s for s, _ in results] == [200] * 12, (results, budgeted.models.events)
    # one at a time: a load over the budget evicts the idle model
    budgeted.models.unload("pipe_b")
    assert call(0)[0] == 200  # pipe_a, loaded or reloaded
    assert call(1)[0] == 200  # pipe_b: loads, then pipe_a (idle) is evicted
    evictions = [e for e in budgeted.models.events if e.action == "unload" and "memory budget" in e.detail]
    assert evictions, budgeted.models.events
    assert budgeted.models.loaded() == [manifest.endpoint("multi").target_models["pipe_b"].target_model]


def test_a_request_waiting_too_long_for_a_load_is_model_not_ready(
    mme: LocalEndpoint, facts, boto_runtime
) -> None:
    mme.models.unload("ts")
    mme.models.load_wait_timeout = 0.2
    try:
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(invoke_tensors, mme, {"INPUT__0": facts.x}, target_model="ts")
            deadline = time.monotonic() + 10
            while not any(s.status == "loading" for s in mme.models._states.values()):
                assert time.monotonic() < deadline
                time.sleep(0.01)
            body, ctype = build_request({"INPUT__0": facts.x})
            with pytest.raises(ClientError) as info:
                boto_runtime(mme.url).invoke_endpoint(
                    EndpointName="multi", Body=body, ContentType=ctype, TargetModel="ts"
                )
            assert first.result().status == 200
    finally:
        mme.models.load_wait_timeout = 60.0
    assert info.value.response["Error"]["Code"] == "ModelNotReadyException"
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429


def test_an_empty_document_is_the_releases_status_on_mme(mme: LocalEndpoint) -> None:
    """Issue #8762: the multi-model invoke route answers an empty JSON document 400 (config.server_options.front)."""
    status, _, data = mme.invoke(b" ", "application/json", target_model="pipe_a")
    expected = front_profile(mme.manifest.triton_version).empty_body_status(multi_model=True)
    assert (status, json.loads(data)["OriginalStatusCode"]) == (424, expected)
