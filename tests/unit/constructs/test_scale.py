"""Scale: a 1,000-model MME stays one Model, small policies and a bounded dashboard; stack headroom."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match

from cdk_triton.constructs import (
    ModelArtifacts,
    TritonAlarms,
    TritonDashboard,
    TritonEndpoint,
    TritonMetrics,
    resource_headroom,
)
from cdk_triton.constructs.endpoint import SSM_STANDARD_LIMIT
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import EXAMPLE, big_mme_manifest, new_stack, template

IAM_MANAGED_POLICY_LIMIT = 6144
TEMPLATE_LIMIT = 1_000_000
DASHBOARD_BODY_LIMIT = 1_000_000  # CloudWatch PutDashboard: DashboardBody up to 1 MB


@pytest.fixture(scope="module")
def big() -> tuple[cdk.Stack, TritonEndpoint, dict]:  # type: ignore[type-arg]
    stack = new_stack("Big")
    ep = TritonEndpoint(
        stack,
        "Multi",
        artifacts=ModelArtifacts.from_manifest(big_mme_manifest(1000), "multi"),
        instance_type="ml.g5.xlarge",
        endpoint_name="multi",
        metrics=TritonMetrics(),
    )
    ep.auto_scale(max_capacity=4).scale_on_invocations_per_instance(500)
    TritonDashboard(stack, "Dashboard", endpoints=[ep])
    TritonAlarms(stack, "Alarms", endpoint=ep)
    return stack, ep, template(stack).to_json()


def test_1000_models_keep_one_model_resource(big) -> None:  # type: ignore[no-untyped-def]
    _, ep, tpl = big
    types = [r["Type"] for r in tpl["Resources"].values()]
    assert types.count("AWS::SageMaker::Model") == 1
    assert len(ep.target_model_map) == 1000


def test_1000_models_policy_is_one_prefix_statement_under_iam_limit(big) -> None:  # type: ignore[no-untyped-def]
    _, _, tpl = big
    [policy] = [r for r in tpl["Resources"].values() if r["Type"] == "AWS::IAM::ManagedPolicy"]
    doc = policy["Properties"]["PolicyDocument"]
    size = len(json.dumps(doc, separators=(",", ":")))
    assert size < IAM_MANAGED_POLICY_LIMIT, size
    assert size < 3000  # independent of the model count
    reads = [s for s in doc["Statement"] if s["Action"] == "s3:GetObject"]
    assert len(reads) == 1


def test_1000_models_template_and_dashboard_within_limits(big) -> None:  # type: ignore[no-untyped-def]
    stack, _, tpl = big
    assert len(json.dumps(tpl)) < TEMPLATE_LIMIT
    [dash] = [r for r in tpl["Resources"].values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
    body = json.dumps(dash["Properties"]["DashboardBody"])
    assert len(body) < 20_000 < DASHBOARD_BODY_LIMIT
    assert "model_0999" not in body  # no per-model widgets
    dashboard = stack.node.find_child("Dashboard")
    assert dashboard.widget_count <= 12


def test_1000_model_map_is_split_into_standard_ssm_parameters(big) -> None:  # type: ignore[no-untyped-def]
    _, ep, tpl = big
    params = [r["Properties"] for r in tpl["Resources"].values() if r["Type"] == "AWS::SSM::Parameter"]
    assert len(params) > 1
    merged: dict[str, str] = {}
    for p in sorted(params, key=lambda p: p["Name"]):
        assert p["Name"].startswith("/cdk-triton/multi/target-models/")
        assert len(p["Value"]) <= SSM_STANDARD_LIMIT and p["Tier"] == "Standard"
        merged.update(json.loads(p["Value"]))
    assert merged == ep.target_model_map
    names = [p["Name"] for p in sorted(params, key=lambda p: p["Name"])]
    assert names[0].endswith("/000") and names[1].endswith("/001")
    outputs = tpl["Outputs"]
    assert any(o["Value"] == "/cdk-triton/multi/target-models" for o in outputs.values())
    assert not any("model_0001" in json.dumps(o["Value"]) for o in outputs.values())  # too big for an output


def test_20_smes_report_headroom() -> None:
    stack = new_stack("Twenty")
    for i in range(20):
        ep = TritonEndpoint(
            stack,
            f"Ep{i}",
            artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
            instance_type="ml.g5.xlarge",
        )
        ep.auto_scale(max_capacity=2).scale_on_gpu_utilization(60)
    head = resource_headroom(stack, annotate=True)
    tpl = template(stack)
    assert head.resources == len(tpl.to_json()["Resources"]) == 20 * 7
    assert head.remaining == 500 - 140 and head.limit == 500
    infos = Annotations.from_stack(stack).find_info("*", Match.string_like_regexp("140 of 500"))
    assert len(infos) == 1
    assert not Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("resources used"))


def test_approaching_the_limit_warns() -> None:
    stack = new_stack("Near")
    for i in range(400):
        cdk.CfnWaitConditionHandle(stack, f"Filler{i}")
    TritonEndpoint(
        stack,
        "Ep",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        instance_type="ml.g5.xlarge",
    )
    found = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("405 of 500"))
    assert len(found) == 1


def test_exceeding_the_limit_names_the_split() -> None:
    stack = new_stack("Full")
    for i in range(498):
        cdk.CfnWaitConditionHandle(stack, f"Filler{i}")
    with pytest.raises(TritonValidationError) as info:
        TritonEndpoint(
            stack,
            "Ep",
            artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
            instance_type="ml.g5.xlarge",
        )
    err = info.value
    assert err.code == "StackResourceLimit"
    assert "split the endpoints into stacks of at most 80 endpoints" in err.fix
    assert "new stack" in err.fix and err.path == "Full/Ep"
