"""Two inference components served by real tritonservers behind one front: an ensemble (with its step
in its archive) and a python model, each invoked through boto3's InferenceComponentName, the invoke
helpers and ``cdk-triton invoke --component``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import boto3
import numpy as np
import pytest
from botocore.exceptions import ClientError

from cdk_triton.builder import run_build
from cdk_triton.config.manifest import read_manifest
from cdk_triton.local import CpuOverlay
from cdk_triton.local import commands as local_commands
from cdk_triton.local.client import build_request, invoke_sample, parse_response
from cdk_triton.local.components import ComponentsEndpoint
from tests.unit.builder.helpers import python_model, write_decl

pytestmark = pytest.mark.triton

ENSEMBLE = """
  - name: ens
    format: ensemble
    inputs: [{name: IMAGE, dtype: UINT8, shape: [32, 32, 3]}]
    outputs: [{name: PIXELS, dtype: FP32, shape: [3, 32, 32]}]
    max_batch_size: 4
    steps:
      - {model: pre, input_map: {IMAGE: IMAGE}, output_map: {PIXELS: PIXELS}}
"""
ENDPOINTS = """
  - name: ics
    mode: components
    instance_types: [ml.c5.xlarge]
    models: [ens, pre_2]
    min_instances: 0
    components:
      ens: {min_copies: 0, max_copies: 2}
      pre_2: {min_copies: 0, max_copies: 1}  # min_instances 0: every component may scale in to zero
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ComponentsEndpoint]:
    tmp = tmp_path_factory.mktemp("components")
    decl = write_decl(tmp, python_model() + ENSEMBLE + python_model("pre_2"), endpoints=ENDPOINTS)
    run_build(decl, out_dir=tmp / "out", progress=False)
    with ComponentsEndpoint(
        read_manifest(tmp / "out"), "ics", overlay=CpuOverlay(instance_count=1), namespace=True
    ) as ep:
        yield ep


def test_each_component_is_invoked_by_its_name_through_boto3(served: ComponentsEndpoint) -> None:
    client = boto3.client(
        "sagemaker-runtime",
        endpoint_url=served.url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )
    image = np.full((1, 32, 32, 3), 255, dtype=np.uint8)
    body, content_type = build_request({"IMAGE": image})
    outputs = {}
    for name in ("ics-ens", "pre_2"):  # the component name, the logical name
        resp = client.invoke_endpoint(
            EndpointName="ics", InferenceComponentName=name, Body=body, ContentType=content_type
        )
        outputs[name] = parse_response(resp["Body"].read(), resp["ContentType"])["PIXELS"]
    assert outputs["ics-ens"].shape == (1, 3, 32, 32)
    np.testing.assert_allclose(outputs["ics-ens"], outputs["pre_2"])  # the same preprocess, two servers
    with pytest.raises(ClientError, match="Inference Component Name header is required"):
        client.invoke_endpoint(EndpointName="ics", Body=body, ContentType=content_type)
    servers = {ep.server.socket_path for ep in served.components.values() if ep.server}
    assert len(servers) == 2  # one tritonserver per component


def test_invoke_sample_and_the_cli_take_a_component(
    served: ComponentsEndpoint, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("ens", "ics-pre-2"):
        result = invoke_sample(served, component=name)
        assert result.ok and result.matched, result
    args = argparse.Namespace(
        endpoint="ics",
        target_model=None,
        component="ens",
        input=None,
        sample=True,
        binary=False,
        top_k=1,
        url=served.url,
        manifest=served.manifest.path,
        state_dir=str(Path(served.manifest.path or ".").parent / "state"),
    )
    assert local_commands.cmd_invoke(args) == 0
    assert "sample response matches" in capsys.readouterr().out
    assert json.dumps(served.describe()["components"]) == json.dumps({"ens": "ics-ens", "pre_2": "ics-pre-2"})


def test_the_verify_handler_invokes_each_component_by_name(
    served: ComponentsEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from moto.server import ThreadedMotoServer

    from tests.unit.handlers.verify_module import load

    verify = load()
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    try:
        host, port = moto.get_host_and_port()
        with socket.socket() as s:  # no SageMaker control plane here: the copy count is unknown, so invoked
            s.bind(("127.0.0.1", 0))
            closed = s.getsockname()[1]
        for name, value in {
            "AWS_ENDPOINT_URL_S3": f"http://{host}:{port}",
            "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": served.url,
            "AWS_ENDPOINT_URL_SAGEMAKER": f"http://127.0.0.1:{closed}",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "x",
            "AWS_SECRET_ACCESS_KEY": "x",
        }.items():
            monkeypatch.setenv(name, value)
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket="samples")
        base = Path(served.manifest.path or ".").parent
        checks = []
        for logical, target in served.entry.target_models.items():
            assert target.sample is not None and target.sample.response is not None
            for kind, rel in (("request", target.sample.request), ("response", target.sample.response)):
                s3.put_object(Bucket="samples", Key=f"{logical}.{kind}.json", Body=(base / rel).read_bytes())
            checks.append(
                {
                    "Model": logical,
                    "Request": f"s3://samples/{logical}.request.json",
                    "Response": f"s3://samples/{logical}.response.json",
                }
            )
        spec = {
            "EndpointName": "ics",
            "Mode": "InferenceComponents",
            "Checks": checks,
            "Components": served.entry.component_map(),
            "DeadlineSeconds": "3",
        }
        report = verify.handler(spec)
        assert report["Ok"] and {m["InferenceComponent"] for m in report["Models"]} == {
            "ics-ens",
            "ics-pre-2",
        }
        with pytest.raises(verify.VerificationFailed, match="not found"):
            verify.handler({**spec, "Components": {"ens": "ics-nope", "pre_2": "ics-pre-2"}})
    finally:
        moto.stop()
