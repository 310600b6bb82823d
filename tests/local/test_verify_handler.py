"""lambda/verify against the local endpoint through boto3: healthy SME and MME pass; a wrong
artifact, a missing TargetModel and a stopped endpoint fail naming the model and what differed.

Samples and the TargetModel map live in moto (S3 and SSM on 127.0.0.1), as they live in S3 and SSM on AWS.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.config.manifest import Manifest
from cdk_triton.local import LocalEndpoint
from tests.moto_server import client, moto_server
from tests.unit.handlers.verify_module import load

pytestmark = [pytest.mark.triton]

V = load()
BUCKET = "verify-samples"
PATH = "/cdk-triton/multi/target-models"


@pytest.fixture(scope="module")
def aws(built: tuple[Any, Path], manifest: Manifest) -> Iterator[str]:
    """moto S3 + SSM holding the recorded samples and the published TargetModel map."""
    with moto_server() as url:
        s3, ssm = client("s3", url), client("ssm", url)
        s3.create_bucket(Bucket=BUCKET)
        out = built[1].parent
        for f in sorted((out / "samples").iterdir()):
            s3.put_object(Bucket=BUCKET, Key=f"samples/{f.name}", Body=f.read_bytes())
        names = {k: t.target_model for k, t in manifest.endpoints["multi"].target_models.items()}
        ssm.put_parameter(Name=f"{PATH}/000", Value=json.dumps(names), Type="String")
        yield url


@pytest.fixture()
def env(aws: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", aws)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SSM", aws)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")

    def runtime(url: str) -> None:
        monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", url)

    return runtime


def check(model: str, sample: str) -> dict[str, Any]:
    return {
        "Model": model,
        "Request": f"s3://{BUCKET}/samples/{sample}.request.json",
        "Response": f"s3://{BUCKET}/samples/{sample}.response.json",
        "Atol": "1e-5",
        "Rtol": "1e-4",
    }


def mme_props(checks: list[dict[str, Any]], **over: Any) -> dict[str, Any]:
    return {
        "EndpointName": "multi",
        "Mode": "MultiModel",
        "Checks": checks,
        "TargetModelParameterPath": PATH,
        "DeadlineSeconds": "20",
        **over,
    }


def test_healthy_sme_passes(sme: LocalEndpoint, env: Any) -> None:
    env(sme.url)
    report = V.verify(V.parse_spec({"EndpointName": "local", "Checks": [check("pipeline", "pipeline")]}))
    assert report.ok, report.summary()
    assert [(o.model, o.detail) for o in report.outcomes] == [("pipeline", "answered as recorded")]


def test_healthy_mme_passes_every_target_model(mme: LocalEndpoint, manifest: Manifest, env: Any) -> None:
    env(mme.url)
    checks = [
        check(k, Path(t.sample.request).name.split(".")[0])
        for k, t in sorted(manifest.endpoints["multi"].target_models.items())
        if t.sample
    ]
    assert len(checks) == 4
    report = V.verify(V.parse_spec(mme_props(checks, WarmUp=["ts"])))
    assert report.ok, report.summary()
    assert {o.target_model for o in report.outcomes} == {
        t.target_model for t in manifest.endpoints["multi"].target_models.values() if t.sample
    }


def test_fails_on_an_artifact_that_answers_wrong_values(mme: LocalEndpoint, env: Any) -> None:
    """pipe_b (another ONNX net behind a preprocess of another scale) checked against pipe_a's recorded answer."""
    env(mme.url)
    report = V.verify(V.parse_spec(mme_props([check("pipe_a", "pipeline"), check("pipe_b", "pipeline")])))
    assert not report.ok
    bad = [o for o in report.outcomes if not o.ok]
    assert [o.model for o in bad] == ["pipe_b"]
    assert "output SCORES: max abs difference" in bad[0].detail
    assert "pipe_b (TargetModel pipe_b-" in report.summary()


def test_fails_on_a_missing_target_model(mme: LocalEndpoint, env: Any) -> None:
    env(mme.url)
    report = V.verify(V.parse_spec(mme_props([check("renamed", "ts")])))
    assert not report.ok
    assert report.outcomes[0].model == "renamed"
    assert "no TargetModel for renamed in /cdk-triton/multi/target-models" in report.outcomes[0].detail


def test_fails_on_a_target_model_the_endpoint_does_not_have(mme: LocalEndpoint, aws: str, env: Any) -> None:
    import boto3

    env(mme.url)
    ssm = boto3.client(
        "ssm", endpoint_url=aws, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    ssm.put_parameter(
        Name="/cdk-triton/gone/target-models/000",
        Value=json.dumps({"ts": "ts-000000000000.tar.gz"}),
        Type="String",
    )
    report = V.verify(
        V.parse_spec(
            mme_props([check("ts", "ts")], TargetModelParameterPath="/cdk-triton/gone/target-models")
        )
    )
    assert not report.ok
    outcome = report.outcomes[0]
    assert outcome.model == "ts" and outcome.target_model == "ts-000000000000.tar.gz"
    assert outcome.detail.startswith("ValidationError: Failed to download model data")
    assert "ts-000000000000.tar.gz" in outcome.detail


def test_fails_on_a_stopped_endpoint_within_the_deadline(env: Any) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env(f"http://127.0.0.1:{port}")
    report = V.verify(
        V.parse_spec(
            {"EndpointName": "local", "Checks": [check("pipeline", "pipeline")], "DeadlineSeconds": "3"}
        ),
        sleep=lambda s: None,
    )
    assert not report.ok
    outcome = report.outcomes[0]
    assert outcome.model == "pipeline" and outcome.attempts >= 2
    assert "endpoint not reachable" in outcome.detail and "(deadline reached)" in outcome.detail


def test_custom_resource_create_on_a_healthy_endpoint_succeeds(sme: LocalEndpoint, env: Any) -> None:
    env(sme.url)
    sent: list[dict[str, Any]] = []
    event = {
        "RequestType": "Create",
        "ResponseURL": "http://127.0.0.1:9/unused",
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/app/guid",
        "RequestId": "req-1",
        "LogicalResourceId": "Verify0123",
        "ResourceProperties": {
            "ServiceToken": "arn:x",
            "EndpointName": "local",
            "Checks": [check("pipeline", "pipeline")],
        },
    }
    doc = V.custom_resource(event, None, send=lambda url, d: sent.append(d))
    assert doc["Status"] == "SUCCESS", doc["Reason"]
    assert sent == [doc] and doc["Data"] == {
        "Ok": "true",
        "Models": "1",
        "Checked": "1",
        "Total": "1",
        "Coverage": "checked 1 of 1",
    }
