"""The verify handler on a fleet-sized MME: the checks read from S3 (hash verified), only the sampled
ones run, in parallel, and the coverage is reported. S3 and SSM are moto on 127.0.0.1; the endpoint
is a small HTTP server answering SageMaker Runtime's InvokeEndpoint with the TargetModel it was sent."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.moto_server import client, moto_server
from tests.unit.handlers.verify_module import load

V = load()
BUCKET = "fleet-specs"
PATH = "/cdk-triton/fleet/target-models"
N = 200


class _Endpoint(http.server.BaseHTTPRequestHandler):
    """Answers ``{"outputs": [{"name": "y", ... "data": [<digit of the TargetModel>]}]}`` after 50 ms;
    the TargetModel ``broken-*`` answers a wrong value."""

    calls: list[str] = []
    active = [0, 0]  # now, most at once
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        target = self.headers.get("X-Amzn-SageMaker-Target-Model", "")
        with self.lock:
            self.calls.append(target)
            self.active[0] += 1
            self.active[1] = max(self.active[1], self.active[0])
        time.sleep(0.05)
        with self.lock:
            self.active[0] -= 1
        value = 9.0 if target.startswith("broken") else 1.0
        body = json.dumps({"outputs": [{"name": "y", "datatype": "FP32", "shape": [1], "data": [value]}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def aws() -> Iterator[Any]:
    with moto_server() as url:
        s3, ssm = client("s3", url), client("ssm", url)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key="samples/r.request.json", Body=b'{"inputs": []}')
        response = {"outputs": [{"name": "y", "datatype": "FP32", "shape": [1], "data": [1.0]}]}
        s3.put_object(Bucket=BUCKET, Key="samples/r.response.json", Body=json.dumps(response).encode())
        names = {f"m{i:03d}": f"m{i:03d}-abc.tar.gz" for i in range(N)}
        names["m007"] = "broken-m007.tar.gz"
        for part in range(0, N, 80):
            chunk = dict(list(names.items())[part : part + 80])
            ssm.put_parameter(Name=f"{PATH}/{part // 80:03d}", Value=json.dumps(chunk), Type="String")
        yield url, s3


@pytest.fixture()
def endpoint(aws: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Endpoint]]:
    url, _ = aws
    handler = type("Ep", (_Endpoint,), {"calls": [], "active": [0, 0]})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for svc in ("S3", "SSM"):
        monkeypatch.setenv(f"AWS_ENDPOINT_URL_{svc}", url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", f"http://127.0.0.1:{server.server_address[1]}")
    for k, v in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
    }.items():
        monkeypatch.setenv(k, v)
    try:
        yield handler
    finally:
        server.shutdown()


def _spec(s3: Any, sampled: set[str], key: str) -> dict[str, Any]:
    checks = [
        {
            "Model": f"m{i:03d}",
            "Request": f"s3://{BUCKET}/samples/r.request.json",
            "Response": f"s3://{BUCKET}/samples/r.response.json",
            "Atol": "1e-5",
            "Rtol": "1e-4",
            "Sampled": f"m{i:03d}" in sampled,
        }
        for i in range(N)
    ]
    body = json.dumps({"Version": 1, "Total": N, "Checks": checks}).encode()
    s3.put_object(Bucket=BUCKET, Key=key, Body=body)
    return {
        "EndpointName": "fleet",
        "Routing": "target_model",
        "TargetModelParameterPath": PATH,
        "ChecksUri": f"s3://{BUCKET}/{key}",
        "ChecksSha256": hashlib.sha256(body).hexdigest(),
        "Parallelism": "8",
        "DeadlineSeconds": "60",
    }


def test_only_the_sample_runs_in_parallel_and_the_coverage_is_reported(aws: Any, endpoint: Any) -> None:
    _, s3 = aws
    sampled = {f"m{i:03d}" for i in range(100, 140)}
    report = V.verify(V.parse_spec(_spec(s3, sampled, "spec-ok.json")), log=lambda *_: None)
    assert report.ok, report.summary()
    assert sorted(endpoint.calls) == sorted(f"m{i:03d}-abc.tar.gz" for i in range(100, 140))
    assert endpoint.active[1] > 1  # several checks at once
    assert report.coverage() == "checked 40 of 200; skipped: 160 not in the sample"
    data = V.response_data(report)
    assert (data["Checked"], data["Total"]) == ("40", "200") and len(json.dumps(data)) < 1000


def test_a_wrong_target_model_in_the_sample_still_fails(aws: Any, endpoint: Any) -> None:
    _, s3 = aws
    report = V.verify(V.parse_spec(_spec(s3, {"m006", "m007", "m008"}, "spec-bad.json")), log=lambda *_: None)
    assert not report.ok
    [bad] = [o for o in report.outcomes if not o.ok]
    assert bad.model == "m007" and "max abs difference" in bad.detail
    assert "1 of 3 model(s) failed verification (checked 3 of 200" in report.summary()


def test_a_spec_whose_hash_differs_is_refused(aws: Any, endpoint: Any) -> None:
    _, s3 = aws
    props = {**_spec(s3, {"m001"}, "spec-hash.json"), "ChecksSha256": "0" * 64}
    report = V.verify(V.parse_spec(props), log=lambda *_: None)
    assert not report.ok and "is not the recorded" in report.outcomes[0].detail and endpoint.calls == []


def test_checks_not_started_before_the_deadline_are_skipped_and_counted() -> None:
    items = list(range(10))
    end = time.monotonic() + V.MIN_CHECK_S + 0.25  # room for the first round only

    def slow(i: int) -> int:
        time.sleep(0.5)
        return i

    results, late = V.run_parallel(items, slow, workers=2, end=end)
    assert results[:2] == [0, 1] and late == sum(r is None for r in results) and late >= 6


def test_the_answer_to_cloudformation_stays_under_4096_bytes_when_hundreds_fail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = V.Report("fleet", total=5000, skipped={"not in the sample": 4500})
    report.outcomes = [
        V.Outcome(f"model_{i:05d}", False, "output y: max abs difference 8 at value 0 (got 9, expected 1)", 1)
        for i in range(500)
    ]
    monkeypatch.setattr(V, "verify", lambda spec, **_: report)
    sent: list[dict[str, Any]] = []
    event = {
        "RequestType": "Create",
        "ResponseURL": "https://example.invalid/presigned",
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/" + "s" * 128 + "/guid",
        "RequestId": "r" * 36,
        "LogicalResourceId": "EpVerificationVerify0123456789abcdef",
        "ResourceProperties": {
            "EndpointName": "fleet",
            "Routing": "default_model",
            "ChecksUri": "s3://b/k",
            "ChecksSha256": "0" * 64,
        },
    }
    doc = V.custom_resource(event, None, send=lambda _url, d: sent.append(d))
    assert doc["Status"] == "FAILED" and doc["Data"]["Checked"] == "500" and doc["Data"]["Total"] == "5000"
    assert len(json.dumps(sent[0]).encode()) <= 4096
