"""lambda/verify: comparison, spec checks and the CloudFormation custom-resource protocol.

The protocol tests send real CloudFormation request documents and receive the response over HTTP
(a 127.0.0.1 server stands in for the pre-signed S3 URL CloudFormation gives).
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.handlers.verify_module import load

V = load()


def out(name: str, data: list[Any], datatype: str = "FP32", shape: list[int] | None = None) -> dict[str, Any]:
    return {"name": name, "datatype": datatype, "shape": shape or [1, len(data)], "data": data}


def test_compare_accepts_values_within_tolerance() -> None:
    exp = {"outputs": [out("Y", [1.0, 2.0, 3.0])]}
    got = {"outputs": [out("Y", [1.0000001, 2.0, 3.0002])]}
    assert V.compare(got, exp, atol=1e-4, rtol=1e-3) is None


@pytest.mark.parametrize(
    ("got", "needle"),
    [
        ({"outputs": [out("Z", [1.0])]}, "output Y missing"),
        ({"outputs": [out("Y", [1.0], datatype="FP16")]}, "datatype FP16 != expected FP32"),
        ({"outputs": [out("Y", [1.0], shape=[1, 1, 1])]}, "shape [1, 1, 1] != expected [1, 1]"),
        ({"outputs": [out("Y", [1.5])]}, "max abs difference 0.5 at value 0"),
        ({"outputs": [out("Y", [float("nan")])]}, "value 0 is nan, expected 1.0"),
    ],
)
def test_compare_names_what_differed(got: dict[str, Any], needle: str) -> None:
    msg = V.compare(got, {"outputs": [out("Y", [1.0])]}, atol=1e-4, rtol=1e-3)
    assert msg is not None and needle in msg


def test_compare_bytes_exactly() -> None:
    exp = {"outputs": [out("L", ["cat", "dog"], datatype="BYTES", shape=[2])]}
    assert (
        V.compare({"outputs": [out("L", ["cat", "dog"], datatype="BYTES", shape=[2])]}, exp, atol=1, rtol=1)
        is None
    )
    msg = V.compare({"outputs": [out("L", ["cat", "cow"], datatype="BYTES", shape=[2])]}, exp, atol=1, rtol=1)
    assert msg == "output L: value 1 is 'cow', expected 'dog'"


def spec_props(**over: Any) -> dict[str, Any]:
    props: dict[str, Any] = {
        "EndpointName": "classifier",
        "Routing": "default_model",
        "Checks": [
            {
                "Model": "classifier",
                "Request": "s3://b/s/c.request.json",
                "Response": "s3://b/s/c.response.json",
                "Atol": "0.0001",
                "Rtol": "0.001",
            }
        ],
        "DeadlineSeconds": "2",
    }
    props.update(over)
    return props


def test_parse_spec_reads_cloudformation_strings() -> None:
    spec = V.parse_spec(spec_props())
    assert spec.deadline_s == 2.0 and spec.checks[0].atol == 1e-4 and spec.checks[0].rtol == 1e-3


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"Checks": []}, "Checks: at least one model with a recorded sample is required"),
        ({"Routing": "Multi"}, "Routing: 'Multi' is not one of"),
        ({"Routing": "target_model"}, "TargetModelParameterPath: routing by TargetModel needs"),
        ({"EndpointName": ""}, "EndpointName: a non-empty endpoint name is required"),
        (
            {"Checks": [{"Model": "m", "Request": "/tmp/x.json", "Response": "s3://b/k"}]},
            "Checks[0].Request: '/tmp/x.json' is not an s3:// URI",
        ),
        ({"DeadlineSeconds": "soon"}, "DeadlineSeconds: 'soon' is not a number"),
    ],
)
def test_fails_on_a_bad_spec(over: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match="invalid verification spec") as err:
        V.parse_spec(spec_props(**over))
    assert needle in str(err.value)


# ------------------------------------------------------------------------------ custom-resource protocol


class _Receiver(http.server.BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []

    def do_PUT(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def response_url() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []
    handler = type("Receiver", (_Receiver,), {"received": received})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/presigned?sig=1", received
    finally:
        server.shutdown()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture()
def nothing_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every AWS endpoint the handler uses points at a closed 127.0.0.1 port."""
    url = f"http://127.0.0.1:{_closed_port()}"
    for svc in ("S3", "SSM", "SAGEMAKER_RUNTIME"):
        monkeypatch.setenv(f"AWS_ENDPOINT_URL_{svc}", url)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")


class Ctx:
    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def request(
    kind: str, url: str, logical: str, props: dict[str, Any], physical: str | None = None
) -> dict[str, Any]:
    doc = {
        "RequestType": kind,
        "ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:verify",
        "ResponseURL": url,
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/app/guid",
        "RequestId": f"req-{kind}-{logical}",
        "ResourceType": "Custom::TritonVerification",
        "LogicalResourceId": logical,
        "ResourceProperties": {
            "ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:verify",
            **props,
        },
    }
    if physical:
        doc["PhysicalResourceId"] = physical
    return doc


def test_failed_update_and_its_rollback_send_only_answers_that_let_the_rollback_complete(
    response_url: tuple[str, list[dict[str, Any]]], nothing_answers: None
) -> None:
    """An update whose verification fails: Create of the new resource FAILED, then the rollback Delete SUCCESS."""
    url, received = response_url
    old_pid = "verify/classifier/aaaaaaaaaaaa/req-old"
    # 1. the update creates the verification resource of the new endpoint config; nothing answers: FAILED
    create = request("Create", url, "VerifyB1C2", spec_props())
    V.handler(create, Ctx())
    assert received[-1]["Status"] == "FAILED"
    assert (
        "classifier" in received[-1]["Reason"] and "cannot read the recorded sample" in received[-1]["Reason"]
    )
    new_pid = received[-1]["PhysicalResourceId"]
    assert new_pid.startswith("verify/classifier/") and new_pid != old_pid
    assert (
        received[-1]["RequestId"] == create["RequestId"] and received[-1]["LogicalResourceId"] == "VerifyB1C2"
    )
    # 2. the rollback deletes the resource it failed to create (its physical id), and must succeed
    V.handler(request("Delete", url, "VerifyB1C2", spec_props(), physical=new_pid), Ctx())
    assert received[-1]["Status"] == "SUCCESS" and received[-1]["PhysicalResourceId"] == new_pid
    # the old verification resource got no request at all: the previous endpoint config keeps serving
    assert [r["PhysicalResourceId"] for r in received] == [new_pid, new_pid]


def test_update_and_delete_never_verify_and_always_succeed(
    response_url: tuple[str, list[dict[str, Any]]], nothing_answers: None
) -> None:
    url, received = response_url
    pid = "verify/classifier/aaaaaaaaaaaa/req-old"
    V.handler(request("Update", url, "VerifyA", spec_props(), physical=pid), Ctx())
    V.handler(request("Delete", url, "VerifyA", {"garbage": True}, physical=pid), Ctx())
    assert [(r["Status"], r["PhysicalResourceId"]) for r in received] == [("SUCCESS", pid), ("SUCCESS", pid)]


def test_an_exception_still_answers_cloudformation(response_url: tuple[str, list[dict[str, Any]]]) -> None:
    url, received = response_url
    V.handler(request("Create", url, "VerifyX", {"EndpointName": "e", "Checks": "not-a-list"}), Ctx())
    assert received[-1]["Status"] == "FAILED"
    assert received[-1]["Reason"].startswith(
        "verification could not run: ValueError: invalid verification spec"
    )
    assert received[-1]["PhysicalResourceId"]


def test_a_new_physical_id_for_each_verification() -> None:
    a = V.physical_id(spec_props(), "req-1")
    assert a != V.physical_id(spec_props(), "req-2")
    assert a != V.physical_id(spec_props(EndpointName="other"), "req-1")


def test_direct_invocation_raises_on_failure(nothing_answers: None) -> None:
    with pytest.raises(V.VerificationFailed, match="1 of 1 model"):
        V.handler(spec_props(DeadlineSeconds="1"))


@pytest.mark.parametrize(
    ("over", "routing"),
    [
        ({}, "default_model"),
        ({"TargetModelParameterPath": "/cdk-triton/multi/target-models"}, "target_model"),
        ({"Components": {"classifier": "ics-classifier"}}, "component"),
        ({"ComponentNameParameterPath": "/cdk-triton/ics/components"}, "component"),
        # a spec that says its mode (a pipeline's, or an older synth's): the keys still say the route
        ({"Mode": "MultiModel", "TargetModelParameterPath": "/p"}, "target_model"),
    ],
)
def test_without_routing_the_keys_imply_it(over: dict[str, Any], routing: str) -> None:
    props = {k: v for k, v in spec_props().items() if k != "Routing"}
    assert V.parse_spec({**props, **over}).routing == routing


def test_the_handler_names_no_hosting_mode() -> None:
    """It gets routes (``Routing``, TargetModel map, component names), never a mode to branch on."""
    from cdk_triton.config import modes

    words = {w.lower() for m in modes.MODES.values() for w in (m.name, m.label)}
    lambda_dir = Path(__file__).resolve().parents[3] / "lambda"
    found = [
        f"{p.relative_to(lambda_dir)}:{n} {w}"
        for p in sorted([*lambda_dir.rglob("*.py"), *lambda_dir.rglob("*.md")])
        for n, line in enumerate(p.read_text().splitlines(), 1)
        for w in words
        if w in line.lower()
    ]
    assert found == []
