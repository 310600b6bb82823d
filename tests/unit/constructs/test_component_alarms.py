"""Per-component alarms of ``TritonAlarms`` and the import of a components endpoint into another stack.

One app: stack ``Serving`` defines the components endpoint (rolling updates; classifier keeps one copy,
resnet_ts may scale in to zero) with its alarms; stack ``Callers`` imports it by its ``attributes``
(component names included), grants a role the invoke, alarms on it again and shows it on a dashboard.
"""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam

from cdk_triton.constructs import (
    ComponentOptions,
    DeploymentGuardrails,
    EndpointAttributes,
    ModelArtifacts,
    TritonAlarms,
    TritonComponentsEndpoint,
    TritonDashboard,
    TritonEndpoint,
)
from cdk_triton.errors import TritonValidationError
from tests.acknowledgments import CONTEXT
from tests.unit.constructs.support import ENV, manifest_with, template, with_components

REAL = {"classifier": "prod-ic-classifier", "resnet_ts": "prod-ic-resnet-ts"}


def _of(tpl: dict[str, Any], rtype: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in tpl["Resources"].items() if v["Type"] == rtype}


def _component_alarms(tpl: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(component name, what) -> logical id of each alarm on one component."""
    out = {}
    for lid, a in _of(tpl, "AWS::CloudWatch::Alarm").items():
        p = a["Properties"]
        dims = p.get("Dimensions") or [
            d
            for q in p.get("Metrics", [])
            for d in q.get("MetricStat", {}).get("Metric", {}).get("Dimensions", [])
        ]
        names = {d["Value"] for d in dims if d["Name"] == "InferenceComponentName"}
        if len(names) == 1 and lid.startswith("AlarmsComponents"):
            what = p.get("MetricName") or "ErrorRate"
            out[(names.pop(), what)] = lid
    return out


@pytest.fixture(scope="module")
def app() -> dict[str, Any]:
    app = cdk.App(builtin_cloud_formation_validation=False, context=dict(CONTEXT))
    serving = cdk.Stack(app, "Serving", env=ENV)
    ep = TritonComponentsEndpoint(
        serving,
        "Components",
        artifacts=ModelArtifacts.from_manifest(manifest_with(with_components), "components"),
        instance_type="ml.g5.xlarge",
        endpoint_name="prod-ic",
        deployment=DeploymentGuardrails.rolling(percent=50),
        components={"classifier": ComponentOptions(copies=2, min_copies=1, max_copies=2)},
    )
    TritonAlarms(serving, "Alarms", endpoint=ep)
    callers = cdk.Stack(app, "Callers", env=ENV)
    imported = TritonEndpoint.from_endpoint_attributes(callers, "Imported", ep.attributes)
    role = iam.Role(callers, "Caller", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    imported.grant_invoke(role)
    TritonAlarms(callers, "Alarms", endpoint=imported)
    TritonDashboard(callers, "Dashboard", endpoints=[imported])
    return {
        "ep": ep,
        "imported": imported,
        "serving": template(serving).to_json(),
        "callers": template(callers).to_json(),
    }


def test_each_component_has_its_error_rate_and_latency_alarm_and_no_capacity_only_without_scale_from_zero(
    app: dict[str, Any],
) -> None:
    alarms = _component_alarms(app["serving"])
    assert set(alarms) == {
        (REAL["classifier"], "ErrorRate"),
        (REAL["classifier"], "ModelLatency"),
        (REAL["classifier"], "NoCapacityInvocationFailures"),  # one copy at least: no scale-from-zero alarm
        (REAL["resnet_ts"], "ErrorRate"),
        (REAL["resnet_ts"], "ModelLatency"),
    }
    no_capacity = [  # resnet_ts's scale-from-zero alarm is its only no-capacity alarm
        a for a in _of(app["serving"], "AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == "NoCapacityInvocationFailures"
    ]  # fmt: skip
    assert len(no_capacity) == 2
    latency = app["serving"]["Resources"][alarms[(REAL["resnet_ts"], "ModelLatency")]]["Properties"]
    assert (latency["Namespace"], latency["ExtendedStatistic"], latency["Threshold"]) == (
        "AWS/SageMaker",
        "p99",
        1e6,
    )


def test_each_components_rolling_update_rolls_back_on_its_own_error_rate_alarm_too(
    app: dict[str, Any],
) -> None:
    alarms = _component_alarms(app["serving"])
    for logical, real in REAL.items():
        (component,) = [
            c for c in _of(app["serving"], "AWS::SageMaker::InferenceComponent").values()
            if c["Properties"]["InferenceComponentName"] == real
        ]  # fmt: skip
        names = component["Properties"]["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"]
        assert {"AlarmName": {"Ref": alarms[(real, "ErrorRate")]}} in names, logical
        assert len(names) == 2  # the endpoint guardrails' alarm and its own


def test_the_import_round_trip_keeps_the_component_names(app: dict[str, Any]) -> None:
    imported = app["imported"]
    assert imported.attributes.component_names == REAL and imported.attributes.mode == "InferenceComponents"
    assert (
        imported.component_name("resnet_ts")
        == imported.component_name(REAL["resnet_ts"])
        == REAL["resnet_ts"]
    )
    assert cdk.Stack.of(imported).resolve(imported.component_arn("classifier")) == {
        "Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":sagemaker:us-east-1:123456789012:"
                          "inference-component/prod-ic-classifier"]]
    }  # fmt: skip
    with pytest.raises(TritonValidationError) as err:
        imported.component_name("nope")
    assert err.value.code == "UnknownComponent" and "classifier" in err.value.allowed
    (policy,) = _of(app["callers"], "AWS::IAM::Policy").values()
    (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Action"] == "sagemaker:InvokeEndpoint" and "endpoint/prod-ic" in str(
        statement["Resource"]
    )
    (dash,) = _of(app["callers"], "AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dash["Properties"]["DashboardBody"])
    assert "inference components (2)" in body and all(r in body for r in REAL.values())
    # the other stack alarms on each component by its real name; no rollback or no-capacity guess there
    assert set(_component_alarms(app["callers"])) == {
        (r, w) for r in REAL.values() for w in ("ErrorRate", "ModelLatency")
    }


@pytest.mark.parametrize(
    ("attributes", "code"),
    [
        ({"mode": "SingleModel", "component_names": {"a": "ep-a"}}, "InvalidEndpointMode"),
        ({"mode": "InferenceComponents", "component_names": {"a_b": "ep_a"}}, "InvalidComponentName"),
    ],
)
def test_import_refuses_component_names_that_cannot_be(attributes: dict[str, Any], code: str) -> None:
    stack = cdk.Stack(cdk.App(context=dict(CONTEXT)), "S", env=ENV)
    with pytest.raises(TritonValidationError) as err:
        TritonEndpoint.from_endpoint_attributes(
            stack, "I", EndpointAttributes(endpoint_name="ep", **attributes)
        )
    assert err.value.code == code


def test_the_component_alarms_can_be_left_out() -> None:
    stack = cdk.Stack(cdk.App(context=dict(CONTEXT)), "S", env=ENV)
    imported = TritonEndpoint.from_endpoint_attributes(
        stack,
        "I",
        EndpointAttributes(endpoint_name="ep", variant_name="AllTraffic", component_names={"a": "ep-a"}),
    )
    alarms = TritonAlarms(stack, "Alarms", endpoint=imported, component_alarms=False)
    assert alarms.component_alarms == {} and len(alarms.alarms) == 2
