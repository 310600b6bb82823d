"""`tune --prepare-endpoint --components`: the tuning endpoint as inference components, one per variant,
and the endpoint source invoking each variant by its component (botocore Stubber)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import boto3
import pytest
import yaml
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from cdk_triton.builder.declarations import load_declaration
from cdk_triton.cli import main
from cdk_triton.tune.sources import EndpointSource
from cdk_triton.tune.variants import Variant
from tests.unit.constructs.support import manifest_with, with_components
from tests.unit.tune.support import tune_argv

BUILD = Path(__file__).resolve().parents[3] / "build"


def test_prepare_endpoint_writes_a_components_declaration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(BUILD / "models.yaml", tmp_path / "models.yaml")
    argv = tune_argv(
        tmp_path / "models.yaml",
        "--prepare-endpoint",
        "tuning",
        "--instance-type",
        "ml.g5.xlarge",
        "--components",
    )
    assert main(argv) == 0
    path = tmp_path / "models.tune-classifier_onnx.yaml"
    (ep,) = yaml.safe_load(path.read_text())["endpoints"]
    assert ep["mode"] == "InferenceComponents" and "classifier_onnx__current" in ep["models"]
    assert "inference components of endpoint tuning" in capsys.readouterr().out
    spec = load_declaration(path)  # the build reads it: one component per variant
    (endpoint,) = spec.endpoints
    assert endpoint.mode == "InferenceComponents" and list(endpoint.models) == ep["models"]


def test_endpoint_source_invokes_a_variant_by_its_component() -> None:
    manifest = manifest_with(with_components)
    client = boto3.client("sagemaker-runtime", region_name="us-east-1")
    source = EndpointSource("components", manifest, _client=client)
    with Stubber(client) as stub:
        stub.add_response(
            "invoke_endpoint",
            {"Body": StreamingBody(io.BytesIO(b"{}"), 2)},
            {
                "EndpointName": "components",
                "InferenceComponentName": "components-classifier",
                "Body": ANY,
                "ContentType": ANY,
            },
        )
        with source.open(Variant(name="classifier")) as target:
            result = target.run(1, 1)
        stub.assert_no_pending_responses()
    assert result.errors == 0 and len(result.latencies) == 1
