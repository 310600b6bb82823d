"""TritonScaling: GPUUtilization (per-GPU target x GPU count) and InvocationsPerInstance tracking."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest

from cdk_triton.constructs import ModelArtifacts, TargetTrackingOptions, TritonEndpoint
from cdk_triton.constructs.scaling import TARGET_TRACKING_OPTIONS
from tests.unit.constructs.support import EXAMPLE, new_stack, only, template


def _ep(stack: cdk.Stack, endpoint: str = "classifier", **kw: Any) -> TritonEndpoint:
    kw.setdefault("instance_type", "ml.g5.xlarge")
    return TritonEndpoint(
        stack, "Ep", artifacts=ModelArtifacts.from_manifest(EXAMPLE, endpoint), endpoint_name="clf", **kw
    )


def test_scalable_target_of_the_variant() -> None:
    stack = new_stack()
    _ep(stack, variant_name="Main").auto_scale(min_capacity=2, max_capacity=6)
    tpl = template(stack)
    endpoint_id = next(iter(tpl.find_resources("AWS::SageMaker::Endpoint")))
    target = only(tpl, "AWS::ApplicationAutoScaling::ScalableTarget")["Properties"]
    assert target == {
        "ServiceNamespace": "sagemaker",
        "ScalableDimension": "sagemaker:variant:DesiredInstanceCount",
        "MinCapacity": 2,
        "MaxCapacity": 6,
        "ResourceId": {
            "Fn::Join": ["", ["endpoint/", {"Fn::GetAtt": [endpoint_id, "EndpointName"]}, "/variant/Main"]]
        },
    }


def test_gpu_utilization_seed_example_single_gpu() -> None:
    stack = new_stack()
    _ep(stack).auto_scale(max_capacity=4).scale_on_gpu_utilization(
        target_percent=60,
        scale_in_cooldown=cdk.Duration.seconds(600),
        scale_out_cooldown=cdk.Duration.seconds(200),
    )
    tpl = template(stack)
    endpoint_id = next(iter(tpl.find_resources("AWS::SageMaker::Endpoint")))
    target_id = next(iter(tpl.find_resources("AWS::ApplicationAutoScaling::ScalableTarget")))
    policy = only(tpl, "AWS::ApplicationAutoScaling::ScalingPolicy")["Properties"]
    assert policy["PolicyType"] == "TargetTrackingScaling"
    assert policy["ScalingTargetId"] == {"Ref": target_id}
    assert policy["TargetTrackingScalingPolicyConfiguration"] == {
        "TargetValue": 60,
        "ScaleInCooldown": 600,
        "ScaleOutCooldown": 200,
        "CustomizedMetricSpecification": {
            "Namespace": "/aws/sagemaker/Endpoints",
            "MetricName": "GPUUtilization",
            "Statistic": "Average",
            "Dimensions": [
                {"Name": "EndpointName", "Value": {"Fn::GetAtt": [endpoint_id, "EndpointName"]}},
                {"Name": "VariantName", "Value": "AllTraffic"},
            ],
        },
    }


def test_gpu_target_is_multiplied_by_the_gpu_count() -> None:
    stack = new_stack()
    _ep(stack, instance_type="ml.g5.12xlarge").auto_scale(max_capacity=2).scale_on_gpu_utilization(70)
    policy = only(template(stack), "AWS::ApplicationAutoScaling::ScalingPolicy")["Properties"]
    assert policy["TargetTrackingScalingPolicyConfiguration"]["TargetValue"] == 280  # 70 % x 4 GPUs


def test_invocations_per_instance() -> None:
    stack = new_stack()
    _ep(stack, "multi").auto_scale(max_capacity=3).scale_on_invocations_per_instance(
        250, disable_scale_in=True
    )
    config = only(template(stack), "AWS::ApplicationAutoScaling::ScalingPolicy")["Properties"][
        "TargetTrackingScalingPolicyConfiguration"
    ]
    assert config == {
        "TargetValue": 250,
        "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"},
        "ScaleInCooldown": 600,
        "ScaleOutCooldown": 200,
        "DisableScaleIn": True,
    }


def test_instance_count_outside_range_warns() -> None:
    from aws_cdk.assertions import Annotations, Match

    stack = new_stack()
    _ep(stack, instance_count=5).auto_scale(min_capacity=1, max_capacity=3)
    assert Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("outside 1..3"))


def test_one_options_value_serves_both_policies() -> None:
    """TargetTrackingOptions is written once; each policy renders the same cooldown block from it."""
    stack = new_stack()
    options: TargetTrackingOptions = {
        "scale_in_cooldown": cdk.Duration.minutes(15),
        "scale_out_cooldown": cdk.Duration.seconds(90),
        "disable_scale_in": True,
    }
    scaling = _ep(stack).auto_scale(max_capacity=4)
    scaling.scale_on_gpu_utilization(50, **options)
    scaling.scale_on_invocations_per_instance(800, **options)
    policies = template(stack).find_resources("AWS::ApplicationAutoScaling::ScalingPolicy").values()
    blocks = [
        {
            k: v
            for k, v in p["Properties"]["TargetTrackingScalingPolicyConfiguration"].items()
            if k in _OPTION_KEYS
        }
        for p in policies
    ]
    assert blocks == [{"ScaleInCooldown": 900, "ScaleOutCooldown": 90, "DisableScaleIn": True}] * 2


def test_options_default_to_the_seed_example_and_refuse_unknown_names() -> None:
    stack = new_stack()
    scaling = _ep(stack).auto_scale(max_capacity=4)
    scaling.scale_on_invocations_per_instance(800)
    config = only(template(stack), "AWS::ApplicationAutoScaling::ScalingPolicy")["Properties"][
        "TargetTrackingScalingPolicyConfiguration"
    ]
    assert {k: v for k, v in config.items() if k in _OPTION_KEYS} == {
        "ScaleInCooldown": 600,
        "ScaleOutCooldown": 200,
    }
    with pytest.raises(
        TypeError, match="scale_on_gpu_utilization.. got an unexpected keyword argument 'cooldown'"
    ):
        scaling.scale_on_gpu_utilization(60, cooldown=cdk.Duration.seconds(60))  # type: ignore[call-arg]
    assert {"scale_in_cooldown", "scale_out_cooldown", "disable_scale_in"} == TARGET_TRACKING_OPTIONS


_OPTION_KEYS = {"ScaleInCooldown", "ScaleOutCooldown", "DisableScaleIn"}


def test_the_default_cooldowns_are_durations_made_on_first_use() -> None:
    from cdk_triton.constructs import scaling

    assert int(scaling.DEFAULT_SCALE_IN_COOLDOWN.to_seconds()) == scaling.DEFAULT_SCALE_IN_COOLDOWN_S == 600
    assert int(scaling.DEFAULT_SCALE_OUT_COOLDOWN.to_seconds()) == scaling.DEFAULT_SCALE_OUT_COOLDOWN_S == 200
    assert vars(scaling)["DEFAULT_SCALE_IN_COOLDOWN"] is scaling.DEFAULT_SCALE_IN_COOLDOWN  # kept
    with pytest.raises(AttributeError, match="has no attribute 'DEFAULT_NOPE'"):
        scaling.DEFAULT_NOPE  # noqa: B018
