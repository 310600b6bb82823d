"""The host decision on real endpoints: InferenceAmiVersion emitted, chosen with an info, or refused."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk.assertions import Annotations, Match

from cdk_triton.constructs import ModelArtifacts, TritonEndpoint, TritonImage, TritonModel
from cdk_triton.constructs.variant import VariantFacts, build_variant
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import EXAMPLE, new_stack, only, template

GPU2 = "al2-ami-sagemaker-inference-gpu-2"
GPU41 = "al2023-ami-sagemaker-inference-gpu-4-1"


def _variant(stack: Any) -> dict[str, Any]:
    [variant] = only(template(stack), "AWS::SageMaker::EndpointConfig")["Properties"]["ProductionVariants"]
    return dict(variant)


def _messages(stack: Any, kind: str) -> list[str]:
    found = getattr(Annotations.from_stack(stack), f"find_{kind}")("*", Match.any_value())
    return [str(m.entry.data) for m in found]


def _classifier() -> ModelArtifacts:
    return ModelArtifacts.from_manifest(EXAMPLE, "classifier")


def test_25_04_on_g5_gets_the_ami_and_an_info_naming_release_family_and_why() -> None:
    stack = new_stack()
    TritonEndpoint(
        stack,
        "Ep",
        artifacts=_classifier(),
        instance_type="ml.g5.xlarge",
        image=TritonImage.for_version("25.04"),
    )
    assert _variant(stack)["InferenceAmiVersion"] == GPU2
    [info] = _messages(stack, "info")
    assert "25.04" in info and "g5" in info and "470" in info and GPU2 in info


def test_24_09_on_g5_gets_the_listed_ami_that_runs_it() -> None:
    stack = new_stack()
    TritonEndpoint(stack, "Ep", artifacts=_classifier(), instance_type="ml.g5.xlarge")
    assert _variant(stack)["InferenceAmiVersion"] == GPU2
    assert not any("HostDriverUnconfirmed" in w for w in _messages(stack, "warning"))
    [info] = _messages(stack, "info")
    assert "24.09" in info and "unconfirmed" in info and GPU2 in info


def test_the_prop_pins_the_ami_on_the_model_path_too() -> None:
    stack = new_stack()
    model = TritonModel(stack, "Model", artifacts=_classifier(), image=TritonImage.for_version("25.09"))
    TritonEndpoint(stack, "Ep", model=model, instance_type="ml.g6.xlarge", inference_ami_version=GPU41)
    assert _variant(stack)["InferenceAmiVersion"] == GPU41
    assert any("InferenceAmiFamilyUnconfirmed" in w for w in _messages(stack, "warning"))


def test_cuda_13_on_g5_without_an_ami_fails_naming_the_fix() -> None:
    stack = new_stack()
    with pytest.raises(TritonValidationError) as info:
        TritonEndpoint(
            stack,
            "Ep",
            artifacts=_classifier(),
            instance_type="ml.g5.xlarge",
            image=TritonImage.for_version("25.09"),
        )
    assert info.value.code == "NoHostForRelease" and GPU41 in info.value.fix
    assert info.value.path == "TestStack/Ep"
    assert not stack.node.try_find_child("Ep") or not stack.node.find_child("Ep").node.try_find_child(
        "EndpointConfig"
    )


def test_the_builder_keeps_todays_variant_when_nothing_is_decided() -> None:
    built = build_variant(
        VariantFacts(
            variant_name="AllTraffic", model_name="m", instance_type="ml.m5.xlarge", instance_count=2
        )
    )
    assert built.production_variant == {
        "variantName": "AllTraffic",
        "modelName": "m",
        "initialInstanceCount": 2,
        "initialVariantWeight": 1,
        "instanceType": "ml.m5.xlarge",
    }
    assert (built.infos, built.warnings, built.errors, built.inference_ami_version) == ((), (), (), None)


def test_the_builder_leaves_tokens_alone() -> None:
    built = build_variant(
        VariantFacts(
            variant_name="v",
            model_name="m",
            instance_type="${Token[TOKEN.1]}",
            instance_count=1,
            triton_version="25.09",
        )
    )
    assert built.host.outcome == "unchanged" and built.inference_ami_version is None


def _pinned_in_manifest(data: dict[str, Any]) -> None:
    data["endpoints"]["classifier"]["inference_ami_version"] = "al2-ami-sagemaker-inference-gpu-2-1"


def test_models_yaml_key_reaches_the_variant_and_the_prop_wins() -> None:
    from tests.unit.constructs.support import manifest_with

    stack = new_stack()
    artifacts = ModelArtifacts.from_manifest(manifest_with(_pinned_in_manifest), "classifier")
    TritonEndpoint(stack, "Ep", artifacts=artifacts, instance_type="ml.g5.xlarge")
    assert _variant(stack)["InferenceAmiVersion"] == "al2-ami-sagemaker-inference-gpu-2-1"
    stack = new_stack("Other")
    artifacts = ModelArtifacts.from_manifest(manifest_with(_pinned_in_manifest), "classifier")
    TritonEndpoint(stack, "Ep", artifacts=artifacts, instance_type="ml.g5.xlarge", inference_ami_version=GPU2)
    assert _variant(stack)["InferenceAmiVersion"] == GPU2
