"""Asynchronous endpoints: AsyncInferenceConfig (S3 locations from the layout, KMS, SNS), the derived
concurrency, backlog scaling to zero and back, the dashboard graph and alarm, the row's refusal."""

from __future__ import annotations

import json

import pytest

from cdk_triton.config import layout
from cdk_triton.constructs import ModelArtifacts, TritonAlarms, TritonDashboard, TritonEndpoint
from cdk_triton.constructs.async_inference import AsyncInferenceOptions
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import EXAMPLE, new_stack, only, resources, template


def _async_endpoint(stack: object, **opts: object) -> TritonEndpoint:
    return TritonEndpoint(
        stack,
        "Ep",
        artifacts=ModelArtifacts.from_manifest(str(EXAMPLE), "classifier"),
        instance_type="ml.g5.xlarge",
        endpoint_name="async-classifier",
        async_inference=AsyncInferenceOptions(**opts),  # type: ignore[arg-type]
    )


def test_async_config_writes_to_the_layout_keys_encrypted_and_notifies_two_topics() -> None:
    stack = new_stack()
    ep = _async_endpoint(stack, max_capacity=3)
    tpl = template(stack)
    out = only(tpl, "AWS::SageMaker::EndpointConfig")["Properties"]["AsyncInferenceConfig"]["OutputConfig"]
    base = "s3://example-artifacts-123456789012/cdk-triton/"
    assert out["S3OutputPath"] == base + layout.async_output_key("async-classifier")
    assert out["S3FailurePath"] == base + layout.async_failure_key("async-classifier")
    key_ref = out["KmsKeyId"]["Fn::GetAtt"][0]
    assert tpl.to_json()["Resources"][key_ref]["Properties"]["EnableKeyRotation"] is True
    topics = resources(tpl, "AWS::SNS::Topic")
    assert len(topics) == 2 and all(
        t["Properties"]["KmsMasterKeyId"]["Fn::GetAtt"][0] == key_ref for t in topics.values()
    )
    assert {
        out["NotificationConfig"]["SuccessTopic"]["Ref"],
        out["NotificationConfig"]["ErrorTopic"]["Ref"],
    } == set(topics)
    # the role: publish to these two topics only, write under output/ and failure/ only
    statements = {
        s["Sid"]: s
        for p in resources(tpl, "AWS::IAM::ManagedPolicy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    }
    assert {r["Ref"] for r in statements["PublishAsyncNotifications"]["Resource"]} == set(topics)
    written = json.dumps(statements["WriteAsyncOutput"]["Resource"])
    assert "/async/async-classifier/output/*" in written and "/async/async-classifier/failure/*" in written
    assert "s3:GetObject" not in json.dumps(statements["WriteAsyncOutput"]["Action"])
    assert ep.async_resources is not None and ep.async_resources.max_concurrency == 1


def test_scales_on_backlog_to_zero_and_back_from_zero_on_has_backlog_without_capacity() -> None:
    stack = new_stack()
    _async_endpoint(stack, max_capacity=3, backlog_per_instance=2)
    tpl = template(stack)
    target = only(tpl, "AWS::ApplicationAutoScaling::ScalableTarget")["Properties"]
    assert (target["MinCapacity"], target["MaxCapacity"]) == (0, 3)
    policies = {
        p["Properties"]["PolicyType"]: p["Properties"]
        for p in resources(tpl, "AWS::ApplicationAutoScaling::ScalingPolicy").values()
    }
    tracking = policies["TargetTrackingScaling"]["TargetTrackingScalingPolicyConfiguration"]
    assert tracking["CustomizedMetricSpecification"]["MetricName"] == "ApproximateBacklogSizePerInstance"
    assert tracking["TargetValue"] == 2
    step = policies["StepScaling"]["StepScalingPolicyConfiguration"]
    assert step["StepAdjustments"] == [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}]
    [alarm] = [
        a["Properties"]
        for a in resources(tpl, "AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == "HasBacklogWithoutCapacity"
    ]
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold" and alarm["Threshold"] == 1
    assert len(alarm["AlarmActions"]) == 1


def test_min_capacity_above_zero_has_no_scale_from_zero_policy() -> None:
    stack = new_stack()
    _async_endpoint(stack, min_capacity=1, max_capacity=2, notifications=False)
    tpl = template(stack)
    kinds = [
        p["Properties"]["PolicyType"]
        for p in resources(tpl, "AWS::ApplicationAutoScaling::ScalingPolicy").values()
    ]
    assert kinds == ["TargetTrackingScaling"]
    assert resources(tpl, "AWS::SNS::Topic") == {}
    out = only(tpl, "AWS::SageMaker::EndpointConfig")["Properties"]["AsyncInferenceConfig"]["OutputConfig"]
    assert "NotificationConfig" not in out


def test_dashboard_graphs_and_alarms_the_async_metrics() -> None:
    stack = new_stack()
    ep = _async_endpoint(stack, invocation_timeout=__import__("aws_cdk").Duration.minutes(5))
    TritonDashboard(stack, "Dash", endpoints=[ep])
    TritonAlarms(stack, "Alarms", endpoint=ep)
    tpl = template(stack)
    body = json.dumps(only(tpl, "AWS::CloudWatch::Dashboard")["Properties"])
    assert "ApproximateBacklogSize" in body and "HasBacklogWithoutCapacity" in body
    [oldest] = [
        a["Properties"]
        for a in resources(tpl, "AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == "ApproximateAgeOfOldestRequest"
    ]
    assert oldest["Threshold"] == 600 and oldest["Dimensions"] == [
        {"Name": "EndpointName", "Value": "async-classifier"}
    ]


@pytest.mark.parametrize(
    ("opts", "prop"),
    [
        (
            {"max_concurrent_invocations_per_instance": 1001},
            "async_inference.max_concurrent_invocations_per_instance",
        ),
        ({"min_capacity": 2, "max_capacity": 1}, "async_inference.max_capacity"),
        ({"backlog_per_instance": 0}, "async_inference.backlog_per_instance"),
    ],
)
def test_refuses_values_outside_sagemaker_limits(opts: dict[str, object], prop: str) -> None:
    with pytest.raises(TritonValidationError) as err:
        _async_endpoint(new_stack(), **opts)
    assert "[InvalidAsyncInference]" in str(err.value) and prop in str(err.value) and "Ep" in str(err.value)


def test_async_on_a_multi_model_endpoint_names_the_alternative() -> None:
    with pytest.raises(TritonValidationError) as err:
        TritonEndpoint(
            new_stack(),
            "Mme",
            artifacts=ModelArtifacts.from_manifest(str(EXAMPLE), "multi"),
            instance_type="ml.g5.xlarge",
            async_inference=AsyncInferenceOptions(),
        )
    text = str(err.value)
    assert "[AsyncNeedsSingleModel]" in text and "TargetModel" in text and "SingleModel" in text
