"""A single-model endpoint (ensemble: python preprocess -> ONNX) served by the real Triton server."""

from __future__ import annotations

import glob
import http.client
import json
import os
import socket
import stat

import numpy as np
import pytest
from botocore.exceptions import ClientError
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2 as mc

from cdk_triton.config.server_options import front_profile
from cdk_triton.local import LocalEndpoint, build_request, invoke_sample, invoke_tensors, parse_response
from cdk_triton.local.repository import sha256_file

pytestmark = pytest.mark.triton


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_sample_matches_eager_model_through_the_front(sme: LocalEndpoint, binary: bool) -> None:
    result = invoke_sample(sme, binary=binary)
    assert result.status == 200, result.error
    assert result.matched is True
    assert result.max_abs_diff is not None and result.max_abs_diff < 1e-5
    expected_type = "application/vnd.sagemaker-triton.binary+json" if binary else "application/json"
    assert (result.content_type or "").startswith(expected_type)


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_container_invocations_route_answers_like_the_eager_model(
    sme: LocalEndpoint, facts, binary: bool
) -> None:
    x = facts.raw[:2]
    body, ctype = build_request({"RAW": x}, binary=binary)
    status, headers, data = sme.container("POST", "/invocations", body, {"Content-Type": ctype})
    assert status == 200, data
    out = parse_response(data, headers.get("content-type"))
    np.testing.assert_allclose(out["SCORES"], facts.eager("onnx", x.astype(np.float32) / 255.0), atol=1e-5)


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_boto3_invoke_endpoint(sme: LocalEndpoint, facts, boto_runtime, binary: bool) -> None:
    body, ctype = build_request({"RAW": facts.raw}, binary=binary)
    resp = boto_runtime(sme.url).invoke_endpoint(EndpointName="local", Body=body, ContentType=ctype)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert resp["InvokedProductionVariant"] == "AllTraffic"
    out = parse_response(resp["Body"].read(), resp["ContentType"])
    np.testing.assert_allclose(
        out["SCORES"], facts.eager("onnx", facts.raw.astype(np.float32) / 255.0), atol=1e-5
    )


def test_ping_answers_ready(sme: LocalEndpoint) -> None:
    assert sme.container("GET", "/ping")[0] == 200


def _error(result_body: bytes) -> dict:
    return json.loads(result_body)


def test_wrong_shape_is_a_model_error_with_the_server_text(sme: LocalEndpoint, boto_runtime) -> None:
    body, ctype = build_request({"RAW": np.zeros((2, 5), np.uint8)})
    with pytest.raises(ClientError) as info:
        boto_runtime(sme.url).invoke_endpoint(EndpointName="local", Body=body, ContentType=ctype)
    err = info.value.response
    assert err["Error"]["Code"] == "ModelError"
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 424
    assert err["OriginalStatusCode"] == 400
    assert "unexpected shape for input" in err["OriginalMessage"]
    assert err["LogStreamArn"].startswith("arn:aws:logs:")


def test_wrong_dtype_and_batch_too_large_use_the_server_texts(sme: LocalEndpoint) -> None:
    body, ctype = build_request({"RAW": np.zeros((2, 8), np.float32)})
    status, _, data = sme.invoke(body, ctype)
    assert status == 424
    assert (
        "inference input 'RAW' data-type is 'FP32', but model 'pipeline' expects 'UINT8'"
        in (_error(data)["OriginalMessage"])
    )
    body, ctype = build_request({"RAW": np.zeros((9, 8), np.uint8)})
    status, _, data = sme.invoke(body, ctype)
    assert status == 424
    assert "inference request batch-size must be <= 8" in _error(data)["OriginalMessage"]


def test_unknown_endpoint_and_target_model_on_sme_are_validation_errors(
    sme: LocalEndpoint, boto_runtime
) -> None:
    client = boto_runtime(sme.url)
    body, ctype = build_request({"RAW": np.zeros((1, 8), np.uint8)})
    with pytest.raises(ClientError) as info:
        client.invoke_endpoint(EndpointName="nope", Body=body, ContentType=ctype)
    assert info.value.response["Error"]["Code"] == "ValidationError"
    assert "Endpoint nope of account" in info.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as info:
        client.invoke_endpoint(EndpointName="local", Body=body, ContentType=ctype, TargetModel="x.tar.gz")
    assert info.value.response["Error"]["Code"] == "ValidationError"


def test_unknown_model_on_the_container_is_404(sme: LocalEndpoint) -> None:
    # SME: only the default model (and its ensemble steps) is loaded; the route knows no other
    status, _, data = sme.container(
        "POST", "/models/ts_model/invoke", b"{}", {"Content-Type": "application/json"}
    )
    assert (status, data) == (404, b"")


def test_overlay_touches_only_instance_group_and_thread_parameters(sme: LocalEndpoint, manifest) -> None:
    source = manifest.resolve(manifest.endpoint("local").local_path)
    served = sme.workdir / "repository"
    fields = {(c.model, c.field) for c in sme.overlay_changes}
    assert ("ts_model", "instance_group") in fields and (
        "onnx_model",
        "parameters.intra_op_thread_count",
    ) in fields
    assert all(f == "instance_group" or f.startswith("parameters.") for _, f in fields)
    for model_dir in source.iterdir():
        before, after = mc.ModelConfig(), mc.ModelConfig()
        text_format.Parse((model_dir / "config.pbtxt").read_text(), before)
        text_format.Parse((served / model_dir.name / "config.pbtxt").read_text(), after)
        if after.platform != "ensemble":
            assert [g.kind for g in after.instance_group] == [mc.ModelInstanceGroup.KIND_CPU]
        for cfg in (before, after):
            del cfg.instance_group[:]
            for key in (
                "intra_op_thread_count",
                "inter_op_thread_count",
                "INTRA_OP_THREAD_COUNT",
                "INTER_OP_THREAD_COUNT",
            ):
                if key in cfg.parameters:
                    del cfg.parameters[key]
        assert before == after, model_dir.name
        for f in model_dir.rglob("*"):  # every other file is byte for byte the built one
            if f.is_file() and f.name != "config.pbtxt":
                assert sha256_file(f) == sha256_file(served / f.relative_to(source))
    assert json.loads((sme.workdir / "overlay.json").read_text())


def test_served_files_have_the_manifest_hashes(sme: LocalEndpoint, manifest) -> None:
    served = sme.workdir / "repository"
    for model in manifest.endpoint("local").models:
        for rel, digest in manifest.models[model].files.items():
            if rel != "config.pbtxt" or not [c for c in sme.overlay_changes if c.model == model]:
                assert sha256_file(served / model / rel) == digest, (model, rel)


def test_sagemaker_port_is_not_reachable_from_the_host(sme: LocalEndpoint) -> None:
    assert sme.server is not None and sme.server.namespace, "tests run where a private namespace can be made"
    assert stat.S_IMODE(os.stat(sme.server.socket_path).st_mode) == 0o600  # the bridge: this user only
    with socket.socket() as s:
        s.settimeout(1)
        assert s.connect_ex(("127.0.0.1", sme.server.port)) != 0 or pytest.skip("port taken on the host")


def test_shared_memory_log_and_server_config_are_owner_only(sme: LocalEndpoint) -> None:
    """Before: the python backend's regions were 0644 (readable by every user), the log 0644."""
    assert sme.server is not None and sme.workdir is not None
    regions = glob.glob(f"/dev/shm/{sme.server.shm_prefix}*")
    assert regions, "the python backend creates its regions when the models load"
    files = [*regions, str(sme.server.log_path), str(sme.workdir / "server.json")]
    modes = {p: oct(stat.S_IMODE(os.stat(p).st_mode)) for p in files}
    assert set(modes.values()) == {"0o600"}, modes
    assert stat.S_IMODE(os.stat(sme.workdir).st_mode) == 0o700


def test_a_web_page_and_a_rebound_host_are_refused_boto3_is_not(sme: LocalEndpoint, boto_runtime) -> None:
    """Before: ``Host: evil.example.com`` and a cross-origin text/plain POST were answered 200."""
    body, ctype = build_request({"RAW": np.zeros((1, 8), np.uint8)})
    path = "/endpoints/local/invocations"
    port = sme.front.port if sme.front else 0
    for headers in (
        {"Host": "evil.example.com"},
        {"Host": f"evil.example.com:{port}"},
        {"Origin": "https://evil.example.com", "Content-Type": "text/plain"},
        {"Sec-Fetch-Site": "cross-site"},
    ):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", path, body, {"Content-Type": ctype, **headers})
        resp = conn.getresponse()
        assert resp.status == 403 and resp.headers["x-amzn-ErrorType"].startswith("AccessDeniedException"), (
            headers
        )
        conn.close()
    resp = boto_runtime(sme.url).invoke_endpoint(EndpointName="local", Body=body, ContentType=ctype)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_invoke_tensors_reports_http_errors(sme: LocalEndpoint) -> None:
    result = invoke_tensors(sme, {"RAW": np.zeros((1, 3), np.uint8)})
    assert result.status == 424 and result.error and not result.ok


@pytest.mark.parametrize("body", [b" ", b"\x00"], ids=["whitespace", "nul"])
def test_an_empty_document_is_the_releases_status(sme: LocalEndpoint, body: bytes) -> None:
    """Issue #8762: single-model /invocations answers an empty JSON document 500 (config.server_options.front)."""
    status, _, data = sme.invoke(body, "application/json")
    expected = front_profile(sme.manifest.triton_version).empty_body_status(multi_model=False)
    assert (status, json.loads(data)["OriginalStatusCode"]) == (424, expected)
