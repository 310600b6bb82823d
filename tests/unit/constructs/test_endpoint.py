"""TritonEndpoint: EndpointConfig, instance checks, volume encryption, guardrails, MME map."""

from __future__ import annotations

import json
import re
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Annotations, Match

from cdk_triton.constructs import DataCapture, DeploymentGuardrails, ModelArtifacts, TritonEndpoint
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import EXAMPLE, TENSORRT, new_stack, only, template


def _ep(stack: cdk.Stack, endpoint: str = "classifier", manifest: Any = EXAMPLE, **kw: Any) -> TritonEndpoint:
    kw.setdefault("instance_type", "ml.g5.xlarge")
    return TritonEndpoint(
        stack, kw.pop("cid", "Ep"), artifacts=ModelArtifacts.from_manifest(manifest, endpoint), **kw
    )


def _variant(tpl: Any) -> dict[str, Any]:
    [variant] = only(tpl, "AWS::SageMaker::EndpointConfig")["Properties"]["ProductionVariants"]
    return dict(variant)


def test_endpoint_config_and_endpoint() -> None:
    stack = new_stack()
    ep = _ep(stack, instance_count=2, variant_name="Main", endpoint_name="clf")
    tpl = template(stack)
    model_id = next(iter(tpl.find_resources("AWS::SageMaker::Model")))
    assert _variant(tpl) == {
        "VariantName": "Main",
        "InitialInstanceCount": 2,
        "InitialVariantWeight": 1,
        "InstanceType": "ml.g5.xlarge",
        "ModelName": {"Fn::GetAtt": [model_id, "ModelName"]},
        "InferenceAmiVersion": "al2-ami-sagemaker-inference-gpu-2",  # 24.09 on g5: a confirmed host
    }
    config_id = next(iter(tpl.find_resources("AWS::SageMaker::EndpointConfig")))
    tpl.has_resource_properties(
        "AWS::SageMaker::Endpoint",
        {"EndpointName": "clf", "EndpointConfigName": {"Fn::GetAtt": [config_id, "EndpointConfigName"]}},
    )
    assert ep.resource.node.id == "Resource" and ep.node.default_child is ep.resource
    assert cdk.Stack.of(ep).resolve(ep.endpoint_arn) == {
        "Ref": next(iter(tpl.find_resources("AWS::SageMaker::Endpoint")))
    }


def test_default_endpoint_name_is_deterministic_and_valid() -> None:
    names = []
    for _ in range(2):
        stack = new_stack("Some-Long-Stack-Name-" + "y" * 40)
        names.append(_ep(stack, cid="A_Very-Long.Construct_Id_" + "x" * 60).endpoint_name)
    assert names[0] == names[1]
    assert re.fullmatch(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}", names[0])


def test_local_nvme_instance_gets_no_volume_key_and_acknowledges_nag() -> None:
    stack = new_stack()
    ep = _ep(stack, instance_type="ml.g4dn.xlarge")
    tpl = template(stack)
    assert "KmsKeyId" not in only(tpl, "AWS::SageMaker::EndpointConfig")["Properties"]
    tpl.resource_count_is("AWS::KMS::Key", 0)
    assert ep.volume_encryption_key is None and ep.has_local_storage
    acks = json.dumps([m.data for m in ep.node.metadata])  # on the endpoint: covers its EndpointConfig
    assert "HIPAA.Security-SageMakerEndpointConfigurationKMSKeyConfigured" in acks
    assert "hardware-encrypted" in acks


def test_local_nvme_kms_finding_is_acknowledged_in_a_real_hipaa_run(tmp_path: Any) -> None:
    from cdk_nag import HIPAASecurityChecks

    app = cdk.App(outdir=str(tmp_path), builtin_cloud_formation_validation=False)
    stack = cdk.Stack(app, "Hipaa", env=cdk.Environment(account="123456789012", region="us-east-1"))
    _ep(stack, instance_type="ml.g5.xlarge")
    cdk.Validations.of(app).add_plugins(HIPAASecurityChecks(app))
    app.synth()  # the stack passes the HIPAA pack; the KMS rule only through the acknowledgment
    [report] = json.loads((tmp_path / "validation-report.json").read_text())["pluginReports"]
    assert not any("KMSKeyConfigured" in v["ruleName"] for v in report["violations"]), report
    [ack] = [v for v in report["suppressedViolations"] if "KMSKeyConfigured" in v["ruleName"]]
    assert ack["violatingConstructs"][0]["constructPath"] == "Hipaa/Ep/EndpointConfig"
    assert "hardware-encrypted" in ack["reason"]


def test_ebs_only_instance_gets_a_rotating_volume_key() -> None:
    stack = new_stack()
    _ep(stack, instance_type="ml.p3.2xlarge")
    tpl = template(stack)
    key_id = next(iter(tpl.find_resources("AWS::KMS::Key")))
    tpl.has_resource_properties("AWS::KMS::Key", {"EnableKeyRotation": True})
    assert only(tpl, "AWS::SageMaker::EndpointConfig")["Properties"]["KmsKeyId"] == {
        "Fn::GetAtt": [key_id, "Arn"]
    }


def test_cpu_types_follow_the_local_storage_rule() -> None:
    stack = new_stack()
    ebs = _ep(stack, "classifier", instance_type="ml.c6i.xlarge", cid="Ebs")
    nvme = _ep(stack, "classifier", instance_type="ml.c5d.xlarge", cid="Nvme")
    assert not ebs.has_local_storage and ebs.volume_encryption_key is not None
    assert nvme.has_local_storage and nvme.volume_encryption_key is None


def test_supplied_volume_key_on_ebs_type_is_used() -> None:
    stack = new_stack()
    key = kms.Key(stack, "Mine", enable_key_rotation=True)
    _ep(stack, instance_type="ml.p3.2xlarge", volume_encryption_key=key)
    tpl = template(stack)
    tpl.resource_count_is("AWS::KMS::Key", 1)
    assert only(tpl, "AWS::SageMaker::EndpointConfig")["Properties"]["KmsKeyId"]["Fn::GetAtt"][0].startswith(
        "Mine"
    )


def test_timeouts_and_volume_size() -> None:
    stack = new_stack()
    _ep(
        stack,
        instance_type="ml.p3.2xlarge",
        container_startup_health_check_timeout=cdk.Duration.minutes(10),
        model_data_download_timeout=cdk.Duration.minutes(20),
        volume_size=cdk.Size.gibibytes(64),
    )
    v = _variant(template(stack))
    assert v["ContainerStartupHealthCheckTimeoutInSeconds"] == 600
    assert v["ModelDataDownloadTimeoutInSeconds"] == 1200
    assert v["VolumeSizeInGB"] == 64


def test_tensorrt_plans_on_matching_gpu() -> None:
    stack = new_stack()
    ep = _ep(stack, "trt", TENSORRT, instance_type="ml.g5.xlarge")
    assert ep.model.artifacts.gpu_architectures == ["sm86"]
    warnings = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    # only the host's (24.09 on the default g5 driver is unconfirmed), no architecture warning
    assert [
        w.entry.data
        for w in warnings
        if not any(c in str(w.entry.data) for c in ("HostDriverUnconfirmed", "Advisory]"))
    ] == []  # the release's advisory warnings: tests/unit/constructs/test_advisories.py


def test_tensorrt_on_same_arch_other_size_warns_not_packaged() -> None:
    stack = new_stack()
    _ep(stack, "trt", TENSORRT, instance_type="ml.g5.2xlarge")
    found = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("packaged for ml.g5.xlarge")
    )
    assert len(found) == 1


def test_unconfirmed_gpu_mme_type_warns() -> None:
    stack = new_stack()
    _ep(stack, "multi", instance_type="ml.g6.xlarge")
    found = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("documented for multi-model")
    )
    assert len(found) == 1


def test_canary_guardrails_with_default_rollback_alarm() -> None:
    stack = new_stack()
    _ep(
        stack,
        instance_type="ml.g5.xlarge",
        instance_count=4,
        endpoint_name="clf",
        deployment=DeploymentGuardrails.canary(percent=25, wait_interval=cdk.Duration.minutes(10)),
    )
    tpl = template(stack)
    alarm_id = next(iter(tpl.find_resources("AWS::CloudWatch::Alarm")))
    tpl.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": "Invocation5XXErrors",
            "Namespace": "AWS/SageMaker",
            "Dimensions": Match.array_with([{"Name": "EndpointName", "Value": "clf"}]),
        },
    )
    tpl.has_resource_properties(
        "AWS::SageMaker::Endpoint",
        {
            "DeploymentConfig": {
                "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": {"Ref": alarm_id}}]},
                "BlueGreenUpdatePolicy": {
                    "TrafficRoutingConfiguration": {
                        "Type": "CANARY",
                        "WaitIntervalInSeconds": 600,
                        "CanarySize": {"Type": "CAPACITY_PERCENT", "Value": 25},
                    }
                },
            }
        },
    )


def test_linear_all_at_once_and_rolling_guardrails() -> None:
    stack = new_stack()
    alarm = cloudwatch.Alarm.from_alarm_name(stack, "Existing", "my-alarm")
    _ep(stack, cid="Lin", instance_count=4, deployment=DeploymentGuardrails.linear(instance_count=1))
    _ep(stack, cid="All", deployment=DeploymentGuardrails.all_at_once(rollback_alarms=[alarm]))
    _ep(stack, cid="Roll", instance_count=4, deployment=DeploymentGuardrails.rolling(percent=50))
    tpl = template(stack)
    configs = {
        k[:3]: v["Properties"]["DeploymentConfig"]
        for k, v in tpl.find_resources("AWS::SageMaker::Endpoint").items()
    }
    assert configs["Lin"]["BlueGreenUpdatePolicy"]["TrafficRoutingConfiguration"]["LinearStepSize"] == {
        "Type": "INSTANCE_COUNT",
        "Value": 1,
    }
    assert configs["All"]["BlueGreenUpdatePolicy"]["TrafficRoutingConfiguration"]["Type"] == "ALL_AT_ONCE"
    assert configs["All"]["AutoRollbackConfiguration"] == {"Alarms": [{"AlarmName": "my-alarm"}]}
    assert configs["Rol"]["RollingUpdatePolicy"]["MaximumBatchSize"] == {
        "Type": "CAPACITY_PERCENT",
        "Value": 50,
    }
    assert "BlueGreenUpdatePolicy" not in configs["Rol"]
    tpl.resource_count_is("AWS::CloudWatch::Alarm", 2)  # Lin and Roll defaults; All uses the supplied one


def test_data_capture_config_and_grant() -> None:
    stack = new_stack()
    bucket = s3.Bucket.from_bucket_name(stack, "Cap", "capture-123456789012")
    _ep(
        stack,
        data_capture=DataCapture(bucket=bucket, prefix="cap", sampling_percentage=30, capture_output=False),
    )
    tpl = template(stack)
    assert only(tpl, "AWS::SageMaker::EndpointConfig")["Properties"]["DataCaptureConfig"] == {
        "EnableCapture": True,
        "InitialSamplingPercentage": 30,
        "DestinationS3Uri": "s3://capture-123456789012/cap/",
        "CaptureOptions": [{"CaptureMode": "Input"}],
    }
    statements = only(tpl, "AWS::IAM::ManagedPolicy")["Properties"]["PolicyDocument"]["Statement"]
    put = next(s for s in statements if s["Sid"] == "WriteDataCapture")
    assert put["Action"] == "s3:PutObject"
    assert put["Resource"]["Fn::Join"][1][-1] == ":s3:::capture-123456789012/cap/*"


def test_mme_publishes_target_model_map_as_output_and_ssm() -> None:
    stack = new_stack()
    ep = _ep(stack, "multi", endpoint_name="multi")
    tpl = template(stack)
    expected = {"classifier": "classifier-3e23e8160039.tar.gz", "resnet_ts": "resnet_ts-ca978112ca1b.tar.gz"}
    assert ep.target_model_map == expected
    param = only(tpl, "AWS::SSM::Parameter")["Properties"]
    assert param["Name"] == "/cdk-triton/multi/target-models/000"
    assert json.loads(param["Value"]) == expected
    assert param["Tier"] == "Standard"
    outputs = tpl.to_json()["Outputs"]
    by_suffix = {k.rstrip("0123456789ABCDEF"): v["Value"] for k, v in outputs.items()}
    assert json.loads(by_suffix["EpTargetModelsMap"]) == expected
    assert by_suffix["EpTargetModelsParameterPath"] == "/cdk-triton/multi/target-models"


def test_sme_publishes_no_target_model_map() -> None:
    stack = new_stack()
    _ep(stack)
    template(stack).resource_count_is("AWS::SSM::Parameter", 0)


def test_metric_helpers() -> None:
    stack = new_stack()
    ep = _ep(stack, endpoint_name="clf", variant_name="Main")
    m = ep.metric_gpu_utilization()
    assert isinstance(m, cloudwatch.Metric)
    assert (m.namespace, m.metric_name, m.statistic) == (
        "/aws/sagemaker/Endpoints",
        "GPUUtilization",
        "Average",
    )
    assert m.dimensions == {"EndpointName": "clf", "VariantName": "Main"}
    lat = ep.metric_model_latency()
    assert (lat.namespace, lat.metric_name, lat.statistic) == ("AWS/SageMaker", "ModelLatency", "p99")
    for name in (
        "invocations",
        "invocations_per_instance",
        "overhead_latency",
        "invocation4xx_errors",
        "invocation5xx_errors",
        "cpu_utilization",
        "memory_utilization",
        "gpu_memory_utilization",
        "disk_utilization",
        "loaded_model_count",
        "model_cache_hit",
        "model_loading_wait_time",
        "model_loading_time",
        "model_downloading_time",
        "model_unloading_time",
    ):
        metric = getattr(ep, f"metric_{name}")()
        assert isinstance(metric, cloudwatch.Metric) and metric.dimensions["EndpointName"] == "clf"


def test_grant_invoke_on_the_endpoint_arn_only() -> None:
    stack = new_stack()
    ep = _ep(stack, endpoint_name="clf")
    client = iam.Role(stack, "Client", assumed_by=iam.AccountRootPrincipal())
    grant = ep.grant_invoke(client)
    assert grant.success
    tpl = template(stack)
    endpoint_id = next(iter(tpl.find_resources("AWS::SageMaker::Endpoint")))
    tpl.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": [
                    {
                        "Action": "sagemaker:InvokeEndpoint",
                        "Effect": "Allow",
                        "Resource": {"Ref": endpoint_id},
                    }
                ]
            },
            "Roles": [{"Ref": Match.string_like_regexp("Client")}],
        },
    )


def test_unknown_gpu_like_instance_type_warns() -> None:
    stack = new_stack()
    ep = _ep(stack, instance_type="ml.g9.xlarge")
    assert ep.gpu_count == 0
    found = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("not in the vendored instance table")
    )
    assert len(found) == 1


def test_fails_when_linear_or_rolling_steps_leave_sagemakers_range() -> None:
    """Linear steps 10-50 % and rolling batches 5-50 % of the fleet; waits within 0..3600 s."""
    cases = {
        "Lin": dict(instance_count=4, deployment=DeploymentGuardrails.linear(percent=80)),
        "Roll": dict(instance_count=1, deployment=DeploymentGuardrails.rolling(instance_count=1)),
        "Wait": dict(deployment=DeploymentGuardrails.all_at_once(wait_interval=cdk.Duration.hours(2))),
    }
    expected = {
        "Lin": ("InvalidTrafficStep", "deployment.step", "80 %"),
        "Roll": ("InvalidTrafficStep", "deployment.rolling_batch", "1 instances"),
        "Wait": ("InvalidTimeout", "deployment.wait_interval", "7200 s"),
    }
    for cid, kw in cases.items():
        with pytest.raises(TritonValidationError) as info:
            _ep(new_stack(), cid=cid, **kw)
        assert (info.value.code, info.value.prop, info.value.value) == expected[cid]
    _ep(new_stack(), instance_count=20, deployment=DeploymentGuardrails.rolling(instance_count=1))  # 5 %
