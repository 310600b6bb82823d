"""One masked JSON snapshot per construct (asset hashes masked). Update with --snapshot-update."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from syrupy.extensions.json import JSONSnapshotExtension

from cdk_triton.constructs import (
    DeploymentGuardrails,
    ModelArtifacts,
    TritonAlarms,
    TritonDashboard,
    TritonEndpoint,
    TritonImage,
    TritonMetrics,
    TritonModel,
)
from tests.unit.constructs.support import EXAMPLE, TENSORRT, masked, new_stack, template


@pytest.fixture
def snap(snapshot: Any) -> Any:
    return snapshot.use_extension(JSONSnapshotExtension)


def _sme(stack: cdk.Stack, **kw: Any) -> TritonEndpoint:
    return TritonEndpoint(
        stack,
        "Classifier",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        instance_type="ml.g5.xlarge",
        endpoint_name="classifier",
        **kw,
    )


def test_triton_model(snap: Any) -> None:
    stack = new_stack("ModelStack")
    TritonModel(stack, "Model", artifacts=ModelArtifacts.from_manifest(TENSORRT, "trt"))
    assert masked(template(stack).to_json()) == snap


def test_triton_image_env_agnostic(snap: Any) -> None:
    stack = new_stack("ImageStack", env=None)
    TritonModel(
        stack,
        "Model",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "multi"),
        image=TritonImage.for_version("24.09"),
    )
    assert masked(template(stack).to_json()) == snap


def test_triton_endpoint_sme(snap: Any) -> None:
    stack = new_stack("SmeStack")
    _sme(stack, metrics=TritonMetrics(), deployment=DeploymentGuardrails.all_at_once())
    assert masked(template(stack).to_json()) == snap


def test_triton_endpoint_mme(snap: Any) -> None:
    stack = new_stack("MmeStack")
    TritonEndpoint(
        stack,
        "Multi",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "multi"),
        instance_type="ml.g5.xlarge",
        endpoint_name="multi",
    )
    assert masked(template(stack).to_json()) == snap


def test_triton_scaling(snap: Any) -> None:
    stack = new_stack("ScalingStack")
    _sme(stack).auto_scale(max_capacity=4).scale_on_gpu_utilization(60)
    tpl = template(stack).to_json()
    scaling = {
        k: v for k, v in tpl["Resources"].items() if v["Type"].startswith("AWS::ApplicationAutoScaling")
    }
    assert masked({"Resources": scaling}) == snap


def test_triton_dashboard(snap: Any) -> None:
    stack = new_stack("DashboardStack")
    ep = _sme(stack, metrics=TritonMetrics())
    TritonDashboard(stack, "Dashboard", endpoints=[ep])
    tpl = template(stack).to_json()
    dash = {k: v for k, v in tpl["Resources"].items() if v["Type"] == "AWS::CloudWatch::Dashboard"}
    assert masked({"Resources": dash}) == snap


def test_triton_alarms(snap: Any) -> None:
    stack = new_stack("AlarmsStack")
    ep = _sme(stack)
    TritonAlarms(stack, "Alarms", endpoint=ep, create_topic=True)
    ep.grant_invoke(iam.Role(stack, "Client", assumed_by=iam.AccountRootPrincipal()))
    tpl = template(stack).to_json()
    keep = (
        "AWS::CloudWatch::Alarm",
        "AWS::SNS::Topic",
        "AWS::SNS::TopicPolicy",
        "AWS::KMS::Key",
        "AWS::IAM::Policy",
    )
    assert masked({"Resources": {k: v for k, v in tpl["Resources"].items() if v["Type"] in keep}}) == snap
