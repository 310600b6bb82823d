"""The local InferenceComponents endpoint without a server: the fit check, routing by boto3's
InferenceComponentName through the real front, the invoke helpers' component resolution."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from cdk_triton.config.manifest import Manifest, manifest_from_dict
from cdk_triton.errors import TritonValidationError
from cdk_triton.local.client import resolve_sample
from cdk_triton.local.components import (
    COMPONENT_HEADER,
    MISSING_COMPONENT_MESSAGE,
    ComponentsEndpoint,
    single_model_entry,
)
from cdk_triton.local.front import RuntimeFront

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "tests" / "fixtures" / "manifests" / "example.json"


def components_doc(**component: Any) -> dict[str, Any]:
    """The example manifest with an InferenceComponents endpoint ``ics`` made of the MME's archives."""
    doc = json.loads(EXAMPLE.read_text())
    doc["schema_version"] = 3
    ics = copy.deepcopy(doc["endpoints"]["multi"])
    ics.update(name="ics", mode="InferenceComponents")
    ics["components"] = {
        k: {"logical_name": k, "component_name": f"ics-{k.replace('_', '-')}", "target_model": k}
        for k in ics["target_models"]
    }
    ics["components"]["classifier"].update(component)
    ics["target_models"]["classifier"]["sample"] = {"request": "samples/classifier.request.json"}
    doc["endpoints"]["ics"] = ics
    return doc


def components_manifest(**component: Any) -> Manifest:
    return manifest_from_dict(components_doc(**component), source=str(EXAMPLE))


class Recording:
    """A component's server stand-in: answers with its own name and the headers it saw."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.healthy = True
        self.failed = None
        self.seen: list[dict[str, str]] = []

    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Any:
        self.seen.append(headers)
        return 200, {"Content-Type": "application/json"}, json.dumps({"served_by": self.name}).encode()

    async def handle_invocation_async(self, body: bytes, headers: Any) -> Any:
        return None  # the thread-pool path


@pytest.fixture
def routed() -> Any:
    front = RuntimeFront().start()
    ep = ComponentsEndpoint(components_manifest(), "ics", front=front)
    ep.components = {k: Recording(k) for k in ep.components}  # type: ignore[misc]
    ep.front = front
    front.add(ep)
    client = boto3.client(
        "sagemaker-runtime",
        endpoint_url=front.url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )
    yield ep, client
    front.stop()


def test_each_component_is_a_single_model_server_of_its_archive() -> None:
    m = components_manifest()
    ep = ComponentsEndpoint(m, "ics")
    assert sorted(ep.components) == ["classifier", "resnet_ts"]
    sub = ep.components["classifier"]
    assert sub.entry.mode == "SingleModel" and sub.entry.packaging == "tar.gz"
    assert sub.entry.local_path == m.endpoint("ics").target_models["classifier"].local_path
    assert sub.server_options.default_model_name == "classifier"  # SAGEMAKER_TRITON_DEFAULT_MODEL_NAME
    assert sub.name == "ics-classifier"
    assert (
        single_model_entry(m.endpoint("ics"), m.endpoint("ics").components["resnet_ts"]).default_model
        == "resnet_ts"
    )


def test_boto3_inference_component_name_selects_the_component(routed: Any) -> None:
    ep, client = routed
    for name, served in (
        ("classifier", "classifier"),
        ("ics-resnet-ts", "resnet_ts"),
        ("resnet_ts", "resnet_ts"),
    ):
        resp = client.invoke_endpoint(
            EndpointName="ics", InferenceComponentName=name, Body=b"{}", ContentType="application/json"
        )
        assert json.loads(resp["Body"].read()) == {"served_by": served}
    assert all(
        COMPONENT_HEADER not in h for h in ep.components["resnet_ts"].seen
    )  # the container never sees it


def test_a_missing_or_unknown_component_is_a_validation_error(routed: Any) -> None:
    _, client = routed
    with pytest.raises(ClientError) as missing:
        client.invoke_endpoint(EndpointName="ics", Body=b"{}", ContentType="application/json")
    err = missing.value.response
    assert (err["Error"]["Code"], err["ResponseMetadata"]["HTTPStatusCode"]) == ("ValidationError", 400)
    assert err["Error"]["Message"] == MISSING_COMPONENT_MESSAGE
    assert MISSING_COMPONENT_MESSAGE.startswith("Inference Component Name header is required")
    with pytest.raises(ClientError) as unknown:
        client.invoke_endpoint(
            EndpointName="ics", InferenceComponentName="nope", Body=b"{}", ContentType="application/json"
        )
    err = unknown.value.response
    assert (err["Error"]["Code"], err["Error"]["Message"]) == (
        "ValidationError",
        "Inference Component nope of endpoint ics not found.",
    )
    with pytest.raises(ClientError, match="TargetModel is not supported"):
        client.invoke_endpoint(
            EndpointName="ics",
            InferenceComponentName="classifier",
            TargetModel="classifier",
            Body=b"{}",
            ContentType="application/json",
        )


@pytest.mark.parametrize(
    ("requirements", "prop"),
    [
        ({"accelerators": 2}, "component 'classifier' accelerators"),  # ml.g5.xlarge has 1 GPU
        ({"cpu_cores": 8}, "component 'classifier' cpu_cores"),  # and 4 vCPUs
        ({"min_memory_mb": 64 * 1024}, "component 'classifier' memory_mb"),  # and 16 GiB
    ],
)
def test_fails_a_component_that_does_not_fit_the_instance_type_before_anything_starts(
    requirements: dict[str, Any], prop: str
) -> None:
    with pytest.raises(TritonValidationError) as info:
        ComponentsEndpoint(components_manifest(**requirements), "ics")
    assert (info.value.code, info.value.prop) == ("ComponentDoesNotFit", prop)
    assert (
        "ml.g5.xlarge" in info.value.problem
        and info.value.path == "manifest endpoint 'ics' components.classifier"
    )
    ComponentsEndpoint(
        components_manifest(**requirements), "ics", instance_type="ml.g5.12xlarge"
    ) if "cpu" in prop else None


def test_the_recorded_memory_counts_when_no_memory_is_declared() -> None:
    doc = components_doc()
    doc["models"]["resnet"]["memory_bytes"] = 40 * 2**30  # one instance of a step above 16 GiB
    with pytest.raises(TritonValidationError, match="ComponentDoesNotFit"):
        ComponentsEndpoint(manifest_from_dict(doc, source=str(EXAMPLE)), "ics")


def test_the_sample_of_a_component_is_its_archives_with_the_component_name_as_header() -> None:
    m = components_manifest()
    ep = type("E", (), {"manifest": m, "entry": m.endpoint("ics"), "name": "ics"})()
    sample, header = resolve_sample(ep, None, "classifier")
    assert header == "ics-classifier" and sample.request.endswith("classifier.request.json")
    assert resolve_sample(ep, None, "ics-classifier")[1] == "ics-classifier"
