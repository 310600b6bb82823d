"""TritonDashboard and TritonAlarms."""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Match

from cdk_triton.constructs import ModelArtifacts, TritonAlarms, TritonDashboard, TritonEndpoint, TritonMetrics
from tests.unit.constructs.support import ENV, EXAMPLE, new_stack, only, template


def _ep(stack: cdk.Stack, endpoint: str, cid: str, **kw: Any) -> TritonEndpoint:
    kw.setdefault("instance_type", "ml.g5.xlarge")
    return TritonEndpoint(
        stack, cid, artifacts=ModelArtifacts.from_manifest(EXAMPLE, endpoint), endpoint_name=cid.lower(), **kw
    )


def _body(tpl: Any) -> str:
    body = only(tpl, "AWS::CloudWatch::Dashboard")["Properties"]["DashboardBody"]
    return json.dumps(body)


def test_sme_dashboard_metrics() -> None:
    stack = new_stack()
    ep = _ep(stack, "classifier", "Sme")
    ep.auto_scale(max_capacity=4)
    dash = TritonDashboard(stack, "Dash", endpoints=[ep])
    body = _body(template(stack))
    for name in (
        "Invocations",
        "Invocation4XXErrors",
        "Invocation5XXErrors",
        "ModelLatency",
        "OverheadLatency",
        "CPUUtilization",
        "MemoryUtilization",
        "DiskUtilization",
        "GPUUtilization",
        "GPUMemoryUtilization",
        "InvocationsPerInstance",
    ):
        assert f'\\"{name}\\"' in body, name
    for stat in ("p50", "p90", "p99"):
        assert f'\\"stat\\":\\"{stat}\\"' in body
    assert "max capacity" in body and "min capacity" in body
    assert "LoadedModelCount" not in body and "nv_inference" not in body
    assert dash.widget_count == 7  # header + 6 graphs


def test_mme_and_triton_metric_widgets() -> None:
    stack = new_stack()
    mme = _ep(stack, "multi", "Mme", metrics=TritonMetrics())
    TritonDashboard(stack, "Dash", endpoints=[mme])
    body = _body(template(stack))
    for name in (
        "LoadedModelCount",
        "ModelCacheHit",
        "ModelLoadingWaitTime",
        "ModelDownloadingTime",
        "ModelUnloadingTime",
        "nv_inference_request_success",
        "nv_inference_request_failure",
        "nv_inference_queue_duration_us",
        "nv_inference_compute_infer_duration_us",
        "nv_inference_count",
        "nv_inference_exec_count",
    ):
        assert name in body, name
    assert 'Namespace=\\\\\\"Triton/mme\\\\\\"' in body


def test_cpu_endpoint_has_no_gpu_widget() -> None:
    stack = new_stack()
    TritonDashboard(stack, "Dash", endpoints=[_ep(stack, "classifier", "Cpu", instance_type="ml.c6i.xlarge")])
    assert "GPUUtilization" not in _body(template(stack))


def test_alarms_with_created_encrypted_topic() -> None:
    stack = new_stack()
    ep = _ep(stack, "classifier", "Sme")
    alarms = TritonAlarms(
        stack,
        "Alarms",
        endpoint=ep,
        create_topic=True,
        error_rate_percent=2,
        p99_latency=cdk.Duration.millis(250),
        gpu_memory_percent=80,
    )
    tpl = template(stack)
    tpl.resource_count_is("AWS::CloudWatch::Alarm", 3)
    topic_id = next(iter(tpl.find_resources("AWS::SNS::Topic")))
    key_id = next(iter(tpl.find_resources("AWS::KMS::Key")))
    tpl.has_resource_properties("AWS::SNS::Topic", {"KmsMasterKeyId": {"Fn::GetAtt": [key_id, "Arn"]}})
    tpl.has_resource_properties(
        "AWS::KMS::Key",
        {
            "EnableKeyRotation": True,
            "KeyPolicy": {
                "Statement": Match.array_with(
                    [Match.object_like({"Principal": {"Service": "cloudwatch.amazonaws.com"}})]
                )
            },
        },
    )
    tpl.has_resource_properties(
        "AWS::SNS::TopicPolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}}
                        )
                    ]
                )
            }
        },
    )
    tpl.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Threshold": 250000,
            "MetricName": "ModelLatency",
            "ExtendedStatistic": "p99",
            "AlarmActions": [{"Ref": topic_id}],
            "OKActions": [{"Ref": topic_id}],
        },
    )
    tpl.has_resource_properties(
        "AWS::CloudWatch::Alarm", {"Threshold": 80, "MetricName": "GPUMemoryUtilization"}
    )
    tpl.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Threshold": 2,
            "Metrics": Match.array_with(
                [Match.object_like({"Expression": "IF(inv > 0, 100 * err / inv, 0)"})]
            ),
        },
    )
    assert alarms.topic is not None and len(alarms.alarms) == 3


def test_gpu_memory_threshold_scales_with_gpu_count_and_supplied_topic() -> None:
    stack = new_stack()
    topic = sns.Topic.from_topic_arn(stack, "T", "arn:aws:sns:us-east-1:123456789012:ops")
    ep = _ep(stack, "classifier", "Big", instance_type="ml.g5.12xlarge")
    TritonAlarms(stack, "Alarms", endpoint=ep, topic=topic, gpu_memory_percent=90)
    tpl = template(stack)
    tpl.resource_count_is("AWS::SNS::Topic", 0)
    tpl.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": "GPUMemoryUtilization",
            "Threshold": 360,
            "AlarmActions": ["arn:aws:sns:us-east-1:123456789012:ops"],
        },
    )


def test_cpu_endpoint_alarms_skip_gpu_memory() -> None:
    stack = new_stack()
    TritonAlarms(stack, "Alarms", endpoint=_ep(stack, "classifier", "Cpu", instance_type="ml.c6i.xlarge"))
    tpl = template(stack)
    tpl.resource_count_is("AWS::CloudWatch::Alarm", 2)
    for alarm in tpl.find_resources("AWS::CloudWatch::Alarm").values():
        assert "AlarmActions" not in alarm["Properties"]


def test_dashboard_body_is_plain_json_or_a_join_for_an_env_agnostic_region() -> None:
    stack = new_stack()
    TritonDashboard(stack, "Dash", endpoints=[_ep(stack, "classifier", "Sme")])
    body = only(template(stack), "AWS::CloudWatch::Dashboard")["Properties"]["DashboardBody"]
    assert json.loads(body)["widgets"][1]["properties"]["region"] == "us-east-1"
    agnostic = new_stack(env=None)
    TritonDashboard(agnostic, "Dash", endpoints=[_ep(agnostic, "classifier", "Sme")])
    body = only(template(agnostic), "AWS::CloudWatch::Dashboard")["Properties"]["DashboardBody"]
    assert {"Ref": "AWS::Region"} in body["Fn::Join"][1]


def test_topic_key_lets_cloudwatch_in_only_for_alarms_of_its_account_and_region() -> None:
    """Confused deputy: the CloudWatch statement of the topic key carries SourceAccount and SourceArn."""
    stack = new_stack()
    TritonAlarms(stack, "Alarms", endpoint=_ep(stack, "classifier", "Sme"), create_topic=True)
    policy = only(template(stack), "AWS::KMS::Key")["Properties"]["KeyPolicy"]
    [cw] = [s for s in policy["Statement"] if s.get("Principal") == {"Service": "cloudwatch.amazonaws.com"}]
    assert cw["Condition"]["StringEquals"] == {"aws:SourceAccount": "123456789012"}
    arn = cw["Condition"]["ArnLike"]["aws:SourceArn"]
    assert json.dumps(arn).count("cloudwatch") == 1 and "us-east-1:123456789012:alarm:*" in json.dumps(arn)


def test_topic_key_conditions_in_an_env_agnostic_stack_use_pseudo_parameters() -> None:
    stack = new_stack(env=None)
    TritonAlarms(stack, "Alarms", endpoint=_ep(stack, "classifier", "Sme"), create_topic=True)
    policy = only(template(stack), "AWS::KMS::Key")["Properties"]["KeyPolicy"]
    cw = policy["Statement"][1]
    assert cw["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    text = json.dumps(cw["Condition"]["ArnLike"])
    assert '{"Ref": "AWS::Region"}' in text and ":alarm:*" in text


def test_rollback_alarm_notifies_the_alarm_topic() -> None:
    """cdk-nag CloudWatchAlarmAction (HIPAA, NIST 800-53 R5): the rollback alarm gets the topic as action."""
    from cdk_triton.constructs import DeploymentGuardrails

    stack = new_stack()
    ep = _ep(stack, "classifier", "Sme", instance_count=4, deployment=DeploymentGuardrails.canary(percent=25))
    other = _ep(stack, "multi", "Mme", deployment=DeploymentGuardrails.all_at_once())
    alarms = TritonAlarms(stack, "Alarms", endpoint=ep, create_topic=True)
    TritonAlarms(stack, "MmeAlarms", endpoint=other, topic=alarms.topic)
    tpl = template(stack)
    rollback = {k: r for k, r in tpl.find_resources("AWS::CloudWatch::Alarm").items() if "RollbackAlarm" in k}
    assert len(rollback) == 2
    topic = next(iter(tpl.find_resources("AWS::SNS::Topic")))
    for r in rollback.values():
        assert r["Properties"]["AlarmActions"] == [{"Ref": topic}]
    assert ep.rollback_alarm is not None and other.rollback_alarm is not None


def test_rollback_alarm_of_another_stack_keeps_no_action() -> None:
    """A topic of another stack is not attached (the endpoint's stack would depend on the alarms' stack)."""
    from cdk_triton.constructs import DeploymentGuardrails

    stack = new_stack()
    ep = _ep(stack, "classifier", "Sme", deployment=DeploymentGuardrails.all_at_once())
    other = cdk.Stack(stack.node.scope, "AlarmStack", env=ENV)
    TritonAlarms(other, "Alarms", endpoint=ep, create_topic=True)
    assert ep.rollback_alarm is not None and ep.rollback_alarm.alarm_actions is None


def test_handed_out_topic_is_notified_in_its_own_stack_and_across_stacks() -> None:
    """``alarms.topic`` passed on: the same stack refers to the topic, another stack imports its ARN."""
    stack = new_stack()
    alarms = TritonAlarms(stack, "Alarms", endpoint=_ep(stack, "classifier", "Sme"), create_topic=True)
    topic = alarms.topic
    assert topic is not None and alarms.topic is topic
    TritonAlarms(stack, "MmeAlarms", endpoint=_ep(stack, "multi", "Mme"), topic=topic)
    other = cdk.Stack(stack.node.scope, "AlarmStack", env=ENV)
    TritonAlarms(other, "Alarms", endpoint=_ep(other, "multi", "Mme"), topic=topic)
    tpl = template(stack)
    topic_id = next(iter(tpl.find_resources("AWS::SNS::Topic")))
    actions = [r["Properties"]["AlarmActions"] for r in tpl.find_resources("AWS::CloudWatch::Alarm").values()]
    # 3 alarms on the SME, 3 + the 2 loading alarms (ModelCacheHit, ModelLoadingWaitTime) on the MME
    assert len(actions) == 8 and all(a == [{"Ref": topic_id}] for a in actions)
    imported = [
        r["Properties"]["AlarmActions"]
        for r in template(other).find_resources("AWS::CloudWatch::Alarm").values()
    ]
    assert len(imported) == 5  # the MME's 3 + its 2 loading alarms
    assert all(len(a) == 1 and set(a[0]) == {"Fn::ImportValue"} for a in imported)
