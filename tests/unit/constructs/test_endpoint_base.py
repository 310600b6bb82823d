"""ITritonEndpoint: an endpoint defined in stack A, imported by attributes in stack B of the same App."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match

from cdk_triton.constructs import (
    EndpointAttributes,
    ITritonEndpoint,
    ModelArtifacts,
    TritonAlarms,
    TritonDashboard,
    TritonEndpoint,
)
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import ENV, EXAMPLE, only, template


def _two_stacks() -> tuple[cdk.Stack, cdk.Stack, TritonEndpoint]:
    app = cdk.App(builtin_cloud_formation_validation=False)
    a = cdk.Stack(app, "Serving", env=ENV)
    b = cdk.Stack(app, "Operations", env=ENV)
    ep = TritonEndpoint(
        a,
        "Classifier",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        instance_type="ml.g5.xlarge",
        endpoint_name="classifier-prod",
    )
    return a, b, ep


def test_both_kinds_are_an_itritonendpoint() -> None:
    a, b, ep = _two_stacks()
    imported = TritonEndpoint.from_endpoint_name(b, "Imported", "classifier-prod")
    assert isinstance(ep, ITritonEndpoint) and isinstance(imported, ITritonEndpoint)


def test_stack_b_scales_watches_and_grants_an_endpoint_of_stack_a() -> None:
    a, b, _ = _two_stacks()
    imported = TritonEndpoint.from_endpoint_attributes(
        b,
        "Classifier",
        EndpointAttributes(
            endpoint_name="classifier-prod",
            variant_name="AllTraffic",
            instance_type="ml.g5.12xlarge",
            mode="SingleModel",
            instance_count=1,
        ),
    )
    assert imported.gpu_count == 4 and imported.hosting_mode is not None
    assert imported.hosting_mode.loads_on_demand is False
    scaling = imported.auto_scale(max_capacity=4)
    scaling.scale_on_gpu_utilization(60)
    scaling.scale_on_invocations_per_instance(500)
    TritonDashboard(b, "Dashboard", endpoints=[imported])
    TritonAlarms(b, "Alarms", endpoint=imported, create_topic=True)
    role = iam.Role(b, "Caller", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    imported.grant_invoke(role)

    template(a).resource_count_is("AWS::SageMaker::Endpoint", 1)
    tpl = template(b)
    tpl.resource_count_is("AWS::SageMaker::Endpoint", 0)
    target = only(tpl, "AWS::ApplicationAutoScaling::ScalableTarget")["Properties"]
    assert target["ResourceId"] == "endpoint/classifier-prod/variant/AllTraffic"
    tpl.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {
            "PolicyName": "classifier-prod-GpuUtilization",
            "TargetTrackingScalingPolicyConfiguration": Match.object_like({"TargetValue": 240}),
        },
    )
    tpl.resource_count_is("AWS::CloudWatch::Alarm", 3)  # error rate, p99 latency, GPU memory
    tpl.has_resource_properties(
        "AWS::CloudWatch::Alarm", {"MetricName": "GPUMemoryUtilization", "Threshold": 360}
    )
    tpl.resource_count_is("AWS::CloudWatch::Dashboard", 1)
    tpl.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": Match.object_like(
                {
                    "Statement": [
                        Match.object_like(
                            {
                                "Action": "sagemaker:InvokeEndpoint",
                                "Resource": {
                                    "Fn::Join": [
                                        "",
                                        [
                                            "arn:",
                                            {"Ref": "AWS::Partition"},
                                            ":sagemaker:us-east-1:123456789012:endpoint/classifier-prod",
                                        ],
                                    ]
                                },
                            }
                        )
                    ]
                }
            )
        },
    )


def test_a_name_only_import_grants_invoke_and_its_arn_is_lower_case() -> None:
    _, b, _ = _two_stacks()
    imported = TritonEndpoint.from_endpoint_name(b, "Imported", "Classifier-Prod")
    assert b.resolve(imported.endpoint_arn)["Fn::Join"][1][-1].endswith(":endpoint/classifier-prod")
    given = TritonEndpoint.from_endpoint_attributes(
        b,
        "Given",
        EndpointAttributes(endpoint_name="x", endpoint_arn="arn:aws:sagemaker:us-east-1:1:endpoint/x"),
    )
    assert given.endpoint_arn == "arn:aws:sagemaker:us-east-1:1:endpoint/x"


def _missing(call: object) -> TritonValidationError:
    with pytest.raises(TritonValidationError) as info:
        call()  # type: ignore[operator]
    assert info.value.code == "MissingEndpointAttribute"
    return info.value


def test_features_name_the_attribute_they_miss() -> None:
    _, b, _ = _two_stacks()
    by_name = TritonEndpoint.from_endpoint_name(b, "ByName", "classifier-prod")
    for call in (
        lambda: by_name.auto_scale(max_capacity=2),
        lambda: by_name.metric_invocations(),
        lambda: TritonDashboard(b, "Dash", endpoints=[by_name]),
        lambda: TritonAlarms(b, "Alarms", endpoint=by_name),
    ):
        err = _missing(call)
        assert err.prop == "variant_name" and err.path is not None and err.path.startswith("Operations/")
        assert "from_endpoint_attributes" in err.fix
    no_gpus = TritonEndpoint.from_endpoint_attributes(
        b, "NoGpus", EndpointAttributes(endpoint_name="e", variant_name="AllTraffic")
    )
    err = _missing(lambda: no_gpus.auto_scale(max_capacity=2).scale_on_gpu_utilization(60))
    assert err.prop == "gpu_count"
    err = _missing(lambda: no_gpus.metric_loaded_model_count())
    assert err.prop == "mode" and "mode='MultiModel'" in err.problem


def test_a_variant_only_import_gets_a_dashboard_and_alarms_without_gpu_parts() -> None:
    _, b, _ = _two_stacks()
    ep = TritonEndpoint.from_endpoint_attributes(
        b, "Ep", EndpointAttributes(endpoint_name="e", variant_name="AllTraffic", mode="MultiModel")
    )
    assert ep.metric_model_cache_hit().metric_name == "ModelCacheHit"
    dash = TritonDashboard(b, "Dash", endpoints=[ep])
    alarms = TritonAlarms(b, "Alarms", endpoint=ep)
    assert alarms.gpu_memory_alarm is None and len(alarms.alarms) == 4  # + the MME's two loading alarms
    assert alarms.cache_hit_alarm is not None and alarms.loading_wait_alarm is not None
    warnings = Annotations.from_stack(b).find_warning("*", Match.string_like_regexp("no GPU-memory alarm"))
    assert len(warnings) == 1
    body = template(b).to_json()["Resources"]
    text = next(r for r in body.values() if r["Type"] == "AWS::CloudWatch::Dashboard")["Properties"][
        "DashboardBody"
    ]
    assert "MME: loaded models" in text and "GPU utilization" not in text and "instance type unknown" in text
    assert dash.widget_count > 0


def test_an_abbreviated_mode_still_reads_with_a_deprecation_warning() -> None:
    _, b, _ = _two_stacks()
    with pytest.warns(DeprecationWarning, match="mode='MultiModel'"):
        ep = TritonEndpoint.from_endpoint_attributes(
            b, "Ep", EndpointAttributes(endpoint_name="e", variant_name="AllTraffic", mode="MME")
        )
    assert ep.hosting_mode is not None and ep.hosting_mode.name == "MultiModel"
    with pytest.warns(DeprecationWarning, match="is_multi_model is deprecated"):
        assert ep.is_multi_model is True


def test_an_invalid_mode_is_refused() -> None:
    _, b, _ = _two_stacks()
    with pytest.raises(TritonValidationError) as info:
        TritonEndpoint.from_endpoint_attributes(b, "Ep", EndpointAttributes(endpoint_name="e", mode="multi"))
    assert info.value.code == "InvalidEndpointMode" and info.value.prop == "mode"


def test_a_defined_endpoints_attributes_import_it_in_another_stack() -> None:
    """One EndpointAttributes value: what a TritonEndpoint gives is what from_endpoint_attributes takes."""
    import dataclasses

    a, b, ep = _two_stacks()
    attrs = ep.attributes
    assert attrs == EndpointAttributes(
        endpoint_name="classifier-prod",
        variant_name="AllTraffic",
        instance_type="ml.g5.xlarge",
        gpu_count=1,
        mode="SingleModel",
        instance_count=1,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        attrs.mode = "MME"  # type: ignore[misc]
    imported = TritonEndpoint.from_endpoint_attributes(b, "Imported", attrs)
    assert imported.attributes is attrs
    for name in (
        "endpoint_name",
        "variant_name",
        "instance_type",
        "gpu_count",
        "hosting_mode",
        "instance_count",
    ):
        assert getattr(imported, name) == getattr(ep, name), name
    assert a.resolve(ep.metric_invocations().to_metric_config().metric_stat.dimensions) == b.resolve(
        imported.metric_invocations().to_metric_config().metric_stat.dimensions
    )
