"""lambda/verify on an asynchronous endpoint: the sample is put under the input prefix, the endpoint is
invoked with InvokeEndpointAsync (boto3, as in Lambda) and the output object compared; a failure object
or no output before the deadline fails the check. S3 is moto on 127.0.0.1; the endpoint is the local
runtime front's async route (``cdk_triton.local.front``) writing to that S3, as ``serve`` does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from cdk_triton.local.front import AsyncRoute, Reply, RuntimeFront
from tests.moto_server import client, moto_server
from tests.unit.handlers.verify_module import load

V = load()
BUCKET = "artifacts"
PREFIX = f"s3://{BUCKET}/app/async/clf/"
ANSWER = {"outputs": [{"name": "y", "datatype": "FP32", "shape": [1, 2], "data": [0.25, 0.75]}]}


class Classifier:
    """Answers ANSWER (``wrong``: a different value; ``broken``: a model error; ``hang``: nothing)."""

    name = "clf"

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.bodies: list[bytes] = []

    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Reply:
        self.bodies.append(body)
        if self.mode == "broken":
            return 400, {}, b'{"error": "input x: expected shape [1, 4]"}'
        if self.mode == "hang":
            import time

            time.sleep(3)
        data = [0.5, 0.5] if self.mode == "wrong" else [0.25, 0.75]
        answer = {"outputs": [{**ANSWER["outputs"][0], "data": data}]}
        return 200, {"Content-Type": "application/json"}, json.dumps(answer).encode()


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with moto_server() as url:
        s3 = client("s3", url)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key="app/samples/clf.request.json", Body=b'{"inputs": []}')
        s3.put_object(Bucket=BUCKET, Key="app/samples/clf.response.json", Body=json.dumps(ANSWER).encode())
        yield url


def _front(moto_url: str, monkeypatch: pytest.MonkeyPatch, backend: Classifier, timeout_s: int = 60) -> Any:
    for k, v in {
        "AWS_ENDPOINT_URL_S3": moto_url,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
    }.items():
        monkeypatch.setenv(k, v)
    front = RuntimeFront().start()
    front.add_async(
        backend,  # type: ignore[arg-type]
        AsyncRoute(
            output_location=PREFIX + "output/",
            failure_location=PREFIX + "failure/",
            invocation_timeout_s=timeout_s,
        ),
    )
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", front.url)
    return front


def _props(**over: Any) -> dict[str, Any]:
    props: dict[str, Any] = {
        "EndpointName": "clf",
        "Routing": "default_model",
        "Checks": [
            {
                "Model": "clf",
                "Request": f"s3://{BUCKET}/app/samples/clf.request.json",
                "Response": f"s3://{BUCKET}/app/samples/clf.response.json",
                "Atol": "1e-5",
                "Rtol": "1e-4",
            }
        ],
        "DeadlineSeconds": "30",
        "Async": "true",
        "AsyncInputPrefix": PREFIX + "input/",
        "AsyncOutputPrefix": PREFIX + "output/",
        "AsyncFailurePrefix": PREFIX + "failure/",
        "InvocationTimeoutSeconds": "60",
    }
    props.update(over)
    return props


def _keys(moto_url: str, prefix: str) -> list[str]:
    import boto3

    s3 = boto3.client("s3", endpoint_url=moto_url)
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])]


def test_verifies_through_invoke_endpoint_async_and_the_output_object(
    moto_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = Classifier()
    front = _front(moto_url, monkeypatch, backend)
    try:
        report = V.verify(V.parse_spec(_props()))
    finally:
        front.stop()
    assert report.ok, report.summary()
    assert report.outcomes[0].detail == "answered as recorded (asynchronously)"
    assert backend.bodies == [b'{"inputs": []}']  # the recorded request, read from the input prefix
    inputs = _keys(moto_url, "app/async/clf/input/verify-clf-")
    outputs = _keys(moto_url, "app/async/clf/output/verify-clf-")
    assert inputs and outputs  # the request went through S3 both ways (InputLocation, OutputLocation)


@pytest.mark.parametrize(
    ("mode", "needle"),
    [
        ("wrong", "output y: max abs difference 0.25"),
        ("broken", "failure object s3://artifacts/app/async/clf/failure/"),
    ],
)
def test_a_wrong_output_or_a_failure_object_fails_the_check(
    moto_url: str, monkeypatch: pytest.MonkeyPatch, mode: str, needle: str
) -> None:
    front = _front(moto_url, monkeypatch, Classifier(mode))
    try:
        report = V.verify(V.parse_spec(_props()))
    finally:
        front.stop()
    assert not report.ok
    assert needle in report.outcomes[0].detail
    if mode == "broken":
        assert "expected shape [1, 4]" in report.outcomes[0].detail


def test_no_output_before_the_deadline_fails_naming_both_locations(
    moto_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    front = _front(moto_url, monkeypatch, Classifier("hang"))
    try:
        report = V.verify(V.parse_spec(_props()), deadline=time.monotonic() + 1.5)
    finally:
        front.stop()
    detail = report.outcomes[0].detail
    assert not report.ok and "no output at s3://artifacts/app/async/clf/output/" in detail
    assert "before the deadline" in detail and "failure/" in detail


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"AsyncOutputPrefix": ""}, "AsyncOutputPrefix: an s3://bucket/prefix/ location is required"),
        ({"InvocationTimeoutSeconds": "7200"}, "InvocationTimeoutSeconds: '7200' is not 1..3600"),
        ({"Routing": "target_model", "TargetModelParameterPath": "/p"}, "Async: asynchronous verification"),
    ],
)
def test_a_bad_async_spec_is_refused(over: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match="invalid verification spec") as err:
        V.parse_spec(_props(**over))
    assert needle in str(err.value)


def test_without_async_the_spec_stays_synchronous() -> None:
    spec = V.parse_spec({k: v for k, v in _props().items() if not k.startswith(("Async", "Invocation"))})
    assert spec.async_prefixes is None and spec.invocation_timeout_s is None
