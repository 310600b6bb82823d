"""The front's InvokeEndpointAsync: 202 with InferenceId and the output/failure locations, the payload read
from InputLocation (a local path, or S3 through moto), the answer written where the route says, the
invocation timeout honoured, and boto3's invoke_endpoint_async working against it. No tritonserver."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from cdk_triton.local.front import AsyncRoute, Reply, RuntimeFront


class Upper:
    name = "ep"

    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Reply:
        if body == b"slow":
            time.sleep(2)
        if body == b"bad":
            return 400, {}, b'{"error": "bad input"}'
        return 200, {"Content-Type": "application/octet-stream"}, body.upper()


@pytest.fixture
def front(tmp_path: Path) -> Iterator[RuntimeFront]:
    f = RuntimeFront().start()
    route = AsyncRoute(
        output_location=str(tmp_path / "output"),
        failure_location=str(tmp_path / "failure"),
        invocation_timeout_s=1,
    )
    f.add_async(Upper(), route)  # type: ignore[arg-type]
    yield f
    f.stop()


def _client(front: RuntimeFront) -> object:
    return boto3.client(
        "sagemaker-runtime",
        endpoint_url=front.url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )


def _wait(path: Path, seconds: float = 5) -> bytes:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.is_file():
            return path.read_bytes()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def test_boto3_invoke_endpoint_async_writes_the_output_where_the_route_says(
    front: RuntimeFront, tmp_path: Path
) -> None:
    (tmp_path / "in.json").write_bytes(b"abc")
    resp = _client(front).invoke_endpoint_async(  # type: ignore[attr-defined]
        EndpointName="ep", InputLocation=f"file://{tmp_path / 'in.json'}", InferenceId="one"
    )
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 202 and resp["InferenceId"] == "one"
    assert resp["OutputLocation"] == str(tmp_path / "output" / "one.out")
    assert resp["FailureLocation"] == str(tmp_path / "failure" / "one-error.out")
    assert _wait(Path(resp["OutputLocation"])) == b"ABC"


def test_a_model_error_and_a_timeout_go_to_the_failure_location(front: RuntimeFront, tmp_path: Path) -> None:
    client = _client(front)
    for text in ("bad", "slow"):
        (tmp_path / text).write_bytes(text.encode())
        resp = client.invoke_endpoint_async(
            EndpointName="ep", InputLocation=str(tmp_path / text), InferenceId=text
        )  # type: ignore[attr-defined]
        failure = _wait(Path(resp["FailureLocation"]))
        assert (b"bad input" if text == "bad" else b"InvocationTimeoutSeconds 1") in failure
        assert not Path(resp["OutputLocation"]).exists()


def test_input_from_moto_s3_and_output_to_s3(tmp_path: Path) -> None:
    from moto import mock_aws

    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="async-bucket")
        s3.put_object(Bucket="async-bucket", Key="async/ep/input/x.json", Body=b"hello")
        f = RuntimeFront().start()
        try:
            f.add_async(
                Upper(),
                AsyncRoute(
                    output_location="s3://async-bucket/async/ep/output/",
                    failure_location="s3://async-bucket/async/ep/failure/",
                ),
            )  # type: ignore[arg-type]
            resp = _client(f).invoke_endpoint_async(
                EndpointName="ep", InputLocation="s3://async-bucket/async/ep/input/x.json"
            )  # type: ignore[attr-defined]
            assert (
                resp["OutputLocation"].startswith("s3://async-bucket/async/ep/output/")
                and resp["InferenceId"]
            )
            key = resp["OutputLocation"][len("s3://async-bucket/") :]
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                found = s3.list_objects_v2(Bucket="async-bucket", Prefix=key).get("KeyCount", 0)
                if found:
                    break
                time.sleep(0.05)
            assert s3.get_object(Bucket="async-bucket", Key=key)["Body"].read() == b"HELLO"
        finally:
            f.stop()


def test_a_real_time_endpoint_refuses_async_and_a_bad_timeout_is_validation_error(
    front: RuntimeFront,
) -> None:
    from botocore.exceptions import ClientError

    client = _client(front)
    with pytest.raises(ClientError, match="ValidationError"):
        client.invoke_endpoint_async(EndpointName="nope", InputLocation="s3://b/k")  # type: ignore[attr-defined]
    with pytest.raises(ClientError, match="InvocationTimeoutSeconds"):
        client.invoke_endpoint_async(
            EndpointName="ep", InputLocation="s3://b/k", InvocationTimeoutSeconds=3600 + 1
        )  # type: ignore[attr-defined]
