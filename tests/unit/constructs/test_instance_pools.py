"""Instance pools on the production variant (``TritonEndpoint(instance_pools=...)``, ``config.instance_pools``)."""

from __future__ import annotations

import dataclasses
from typing import Any
from unittest import mock

import aws_cdk as cdk
import pytest
from aws_cdk import aws_s3 as s3

from cdk_triton.config import gpu_hosts, modes
from cdk_triton.constructs import ModelArtifacts, TritonEndpoint
from cdk_triton.constructs.variant import VariantFacts, build_variant
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import EXAMPLE, TENSORRT, new_stack, only, template


def _endpoint(
    stack: cdk.Stack, key: str = "classifier", manifest: Any = EXAMPLE, **kw: Any
) -> TritonEndpoint:
    return TritonEndpoint(stack, "Ep", artifacts=ModelArtifacts.from_manifest(manifest, key), **kw)


def _codes(err: TritonValidationError) -> list[str]:
    return [e.code for e in getattr(err, "errors", [err])]


def test_pools_replace_instance_type_in_priority_order() -> None:
    stack = new_stack()
    ep = _endpoint(
        stack,
        instance_pools=["ml.g5.xlarge", "ml.g6.xlarge"],
        instance_provision_timeout=cdk.Duration.minutes(15),
    )
    variant = only(template(stack), "AWS::SageMaker::EndpointConfig")["Properties"]["ProductionVariants"][0]
    assert "InstanceType" not in variant
    assert variant["InstancePools"] == [
        {"InstanceType": "ml.g5.xlarge", "Priority": 1},
        {"InstanceType": "ml.g6.xlarge", "Priority": 2},
    ]
    assert variant["VariantInstanceProvisionTimeoutInSeconds"] == 900
    assert ep.instance_type == "ml.g5.xlarge"  # the first pool: GPU scaling, storage, host limits


def test_single_instance_type_unchanged() -> None:
    stack = new_stack()
    _endpoint(stack, instance_type="ml.g5.xlarge")
    variant = only(template(stack), "AWS::SageMaker::EndpointConfig")["Properties"]["ProductionVariants"][0]
    assert variant["InstanceType"] == "ml.g5.xlarge"
    assert "InstancePools" not in variant and "VariantInstanceProvisionTimeoutInSeconds" not in variant


@pytest.mark.parametrize(
    "kw",
    [
        {"instance_type": "ml.g5.xlarge", "instance_pools": ["ml.g6.xlarge"]},
        {"instance_type": "ml.g5.xlarge", "instance_provision_timeout": cdk.Duration.minutes(10)},
    ],
)
def test_instance_type_and_pools_are_exclusive(kw: dict[str, Any]) -> None:
    with pytest.raises(TritonValidationError) as info:
        _endpoint(new_stack(), **kw)
    assert "InstanceTypeOrPools" in _codes(info.value)
    assert "Ep" in str(info.value)


def test_instance_type_defaults_to_the_manifest_s_one_instance_type() -> None:
    stack = new_stack()
    ep = _endpoint(stack)  # models.yaml: instance_types: [ml.g5.xlarge]
    variant = only(template(stack), "AWS::SageMaker::EndpointConfig")["Properties"]["ProductionVariants"][0]
    assert variant["InstanceType"] == "ml.g5.xlarge" == ep.instance_type
    assert ep.variant_hosting.instances.instance_type == "ml.g5.xlarge"


def test_fails_without_instance_type_nor_declaration() -> None:
    stack = new_stack()
    bucket = s3.Bucket.from_bucket_name(stack, "Models", "models-123456789012")
    with pytest.raises(TritonValidationError) as info:
        TritonEndpoint(
            stack, "Ep", artifacts=ModelArtifacts.from_bucket(bucket, "repo/v1/", default_model="resnet")
        )
    assert _codes(info.value) == ["InstanceTypeOrPools"]
    assert "Ep" in str(info.value)


@pytest.mark.parametrize(
    ("pools", "timeout_s", "prop"),
    [
        (["ml.g5.xlarge"] * 2, None, "instance_pools"),
        (
            [f"ml.g5.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")],
            None,
            "instance_pools",
        ),
        ([], None, "instance_pools"),
        (["ml.g5.xlarge"], 299, "instance_provision_timeout"),
        (["ml.g5.xlarge"], 3601, "instance_provision_timeout"),
    ],
)
def test_pool_limits(pools: list[str], timeout_s: int | None, prop: str) -> None:
    timeout = cdk.Duration.seconds(timeout_s) if timeout_s is not None else None
    with pytest.raises(TritonValidationError) as info:
        _endpoint(new_stack(), instance_pools=pools, instance_provision_timeout=timeout)
    errs = getattr(info.value, "errors", [info.value])
    assert any(e.code == "InvalidInstancePools" and e.prop == prop for e in errs)


def test_pools_of_mixed_storage_refused() -> None:
    with pytest.raises(TritonValidationError) as info:
        _endpoint(new_stack(), instance_pools=["ml.g5.xlarge", "ml.g4dn.xlarge", "ml.m5.xlarge"])
    assert "InvalidInstancePools" in _codes(info.value)
    assert "NVMe" in str(info.value)


def test_pools_on_multi_model_refused_by_the_row() -> None:
    with pytest.raises(TritonValidationError) as info:
        _endpoint(new_stack(), key="multi", instance_pools=["ml.g5.xlarge", "ml.g6.xlarge"])
    assert "InstancePoolsOnMultiModel" in _codes(info.value)
    assert "realtime-endpoints-heterogeneous" in str(info.value)
    assert modes.MULTI_MODEL.refusal("instance_pools") is not None
    assert modes.SINGLE_MODEL.supports("instance_pools")


def test_each_pool_checked_against_the_tensorrt_plans() -> None:
    """The fixture's plans are sm86 (ml.g5): a g6 (sm89) pool is refused like instance_type would be."""
    with pytest.raises(TritonValidationError) as info:
        _endpoint(new_stack(), key="trt", manifest=TENSORRT, instance_pools=["ml.g5.xlarge", "ml.g6.xlarge"])
    errs = getattr(info.value, "errors", [info.value])
    assert [e.value for e in errs if e.code == "GpuArchitectureMismatch"] == ["ml.g6.xlarge"]


def test_plans_for_every_pool_architecture_deploy(tmp_path: Any) -> None:
    """Plans recorded for sm86 and sm89 (one repository, cc_model_filenames picks the plan per GPU):
    both pools pass, and the one Model serves them (no ModelNameOverride needed)."""
    import json

    data = json.loads(TENSORRT.read_text())
    data["endpoints"]["trt"]["gpu_architectures"] = ["sm86", "sm89"]
    data["endpoints"]["trt"]["instance_types"] = ["ml.g5.xlarge", "ml.g6.xlarge"]
    for m in data["models"].values():
        if m.get("gpu_architectures"):
            m["gpu_architectures"] = ["sm86", "sm89"]
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data))
    stack = new_stack()
    _endpoint(stack, key="trt", manifest=str(path), instance_pools=["ml.g5.xlarge", "ml.g6.xlarge"])
    tpl = template(stack)
    variant = only(tpl, "AWS::SageMaker::EndpointConfig")["Properties"]["ProductionVariants"][0]
    assert [p["InstanceType"] for p in variant["InstancePools"]] == ["ml.g5.xlarge", "ml.g6.xlarge"]
    assert all("ModelNameOverride" not in p for p in variant["InstancePools"])
    assert len(tpl.find_resources("AWS::SageMaker::Model")) == 1


#: A 24.09 variant pooled on ml.g5 then ml.g6.
G5_THEN_G6 = VariantFacts(
    variant_name="AllTraffic",
    model_name="m",
    instance_type="ml.g5.xlarge",
    instance_count=1,
    triton_version="24.09",
    instance_pools=(("ml.g5.xlarge", None), ("ml.g6.xlarge", None)),
)


def test_pools_share_the_ami_chosen_for_one_when_every_pool_accepts_and_runs_it() -> None:
    """24.09: g5's default host is unconfirmed (gpu-2 chosen), g6's runs it; gpu-2 is listed for g6 too
    and runs 24.09 there, so one InferenceAmiVersion serves both pools."""
    built = build_variant(G5_THEN_G6)
    assert built.errors == ()
    assert built.inference_ami_version == "al2-ami-sagemaker-inference-gpu-2"


def test_pools_needing_different_host_images_refused() -> None:
    def decide(*, release: Any, instance_type: str, inference_ami_version: Any, path: Any = None) -> Any:
        ami = "al2-ami-sagemaker-inference-gpu-3-1" if "g6" in instance_type else None
        return gpu_hosts.HostDecision(outcome="choose" if ami else "unchanged", inference_ami_version=ami)

    with mock.patch.object(gpu_hosts, "decide_host", decide):
        built = build_variant(G5_THEN_G6)
    assert [e.code for e in built.errors] == ["InstancePoolsHostMismatch"]
    assert "ml.g6.xlarge: al2-ami-sagemaker-inference-gpu-3-1" in str(built.errors[0])


def test_gpu_targets_are_sized_for_the_pool_with_the_fewest_gpus() -> None:
    """A 4-GPU pool before a 1-GPU one: 60 % x 4 would never be reached on the 1-GPU pool, 60 % x 1 is
    reached on both (the 4-GPU pool scales out earlier, never later)."""
    stack = new_stack()
    ep = _endpoint(stack, instance_pools=["ml.g5.12xlarge", "ml.g5.xlarge"])
    assert ep.gpu_count == 1
    ep.auto_scale(max_capacity=2).scale_on_gpu_utilization(60)
    [policy] = template(stack).find_resources("AWS::ApplicationAutoScaling::ScalingPolicy").values()
    assert policy["Properties"]["TargetTrackingScalingPolicyConfiguration"]["TargetValue"] == 60


def test_each_pool_s_host_warning_names_its_pool() -> None:
    """26.05 pinned to the CUDA 13 AMI (no primary source lists its families) on two g6 sizes: the second
    pool's warning is said too, naming its pool, not the first pool's alone."""
    built = build_variant(
        dataclasses.replace(
            G5_THEN_G6,
            instance_type="ml.g6.xlarge",
            triton_version="26.05",
            inference_ami_version="al2023-ami-sagemaker-inference-gpu-4-1",
            instance_pools=(("ml.g6.xlarge", None), ("ml.g6.2xlarge", None)),
        )
    )
    assert built.errors == ()
    assert [w for _, w in built.warnings if w.startswith("instance pool ml.g6.2xlarge: ")]
    assert len(built.warnings) == 2
