"""Deployment guardrails and data capture rendered without an endpoint."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_s3 as s3

from cdk_triton.constructs import DataCapture, DeploymentGuardrails
from cdk_triton.constructs.deployment import (
    data_capture_prefix,
    render_data_capture,
    render_deployment_config,
)


def test_data_capture_prefix_and_config() -> None:
    stack = cdk.Stack()
    bucket = s3.Bucket.from_bucket_name(stack, "B", "captures")
    assert data_capture_prefix(DataCapture(bucket=bucket, prefix="/dc")) == "dc/"
    assert data_capture_prefix(DataCapture(bucket=bucket, prefix="")) == ""
    cfg = render_data_capture(DataCapture(bucket=bucket, capture_output=False, sampling_percentage=20), "dc/")
    assert cfg.destination_s3_uri == "s3://captures/dc/" and cfg.initial_sampling_percentage == 20
    assert [o.capture_mode for o in cfg.capture_options] == ["Input"]  # type: ignore[union-attr]


def test_deployment_config() -> None:
    rolling = render_deployment_config(DeploymentGuardrails.rolling(percent=25), ["alarm"])
    assert rolling.blue_green_update_policy is None and rolling.rolling_update_policy is not None
    canary = render_deployment_config(DeploymentGuardrails.canary(percent=10), ["a", "b"])
    routing = canary.blue_green_update_policy.traffic_routing_configuration  # type: ignore[union-attr]
    assert routing.type == "CANARY" and routing.canary_size.value == 10  # type: ignore[union-attr]
    alarms = canary.auto_rollback_configuration.alarms  # type: ignore[union-attr]
    assert [a.alarm_name for a in alarms] == ["a", "b"]  # type: ignore[union-attr]
