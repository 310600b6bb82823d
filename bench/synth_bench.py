"""Synth time of the example app (cdk-triton constructs) vs an equivalent hand-written L1 stack.

Both stacks read the same manifest and define the same template: two endpoints (SME classifier
with Triton metrics and GPU autoscaling, MME multi with invocations autoscaling), roles and managed
policies (each Model DependsOn its policy), the TargetModel SSM parameter, a dashboard, six alarms,
an encrypted SNS topic, retained KMS key and log group, and the same four outputs (endpoint names,
TargetModel map and its SSM path). The templates are equal but for logical ids and the stacks
acknowledge the same cdk-nag findings (bench/equivalence.py; tests/unit/constructs/test_app.py). The
constructs' side is the example's stack class (``app.TritonExampleStack``) without ``build_app``'s
context reads; the example's own acknowledgments on its metrics log group are written the same way
on both sides (``cdk.Validations.of(group).acknowledge``). Each round synthesizes both in this process
(CloudFormation schema validation off, cdk-nag off, so the ratio measures the constructs' own
overhead), alternating which goes first; the medians give the ratio (target: within 1.1x). Then fresh
processes, one synth each (what ``cdk synth`` runs), both sides back to back in each round, the order
alternating: their wall times, and their CPU times (python and node) as the figure a busy machine blurs
less. The fresh-process ratio compares each round's two runs only with each other, two rounds of opposite
order together (``pair_ratio``: a shared machine's speed drifts between rounds, and which side runs first
costs something too); the ratio of the medians is kept beside it. Writes bench/results/synth.json.

Run: ``.venv/bin/python bench/synth_bench.py [--rounds N] [--manifest PATH]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

import aws_cdk as cdk  # noqa: E402
from aws_cdk import aws_applicationautoscaling as appscaling  # noqa: E402
from aws_cdk import aws_cloudwatch as cloudwatch  # noqa: E402
from aws_cdk import aws_ec2 as ec2  # noqa: E402
from aws_cdk import aws_iam as iam  # noqa: E402
from aws_cdk import aws_kms as kms  # noqa: E402
from aws_cdk import aws_logs as logs  # noqa: E402
from aws_cdk import aws_sagemaker as sagemaker  # noqa: E402
from aws_cdk import aws_sns as sns  # noqa: E402
from aws_cdk import aws_ssm as ssm  # noqa: E402

from cdk_triton.config import advisories  # noqa: E402
from cdk_triton.config.manifest import Manifest, read_manifest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MANIFEST = ROOT / "tests" / "fixtures" / "manifests" / "example.json"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3"
ENV = cdk.Environment(account="123456789012", region="us-east-1")


def _load_app() -> Any:
    spec = importlib.util.spec_from_file_location("cdk_triton_example_app", ROOT / "app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def synth_constructs(app_module: Any, manifest: Path, outdir: str | None = None) -> dict[str, Any]:
    """The example's stack (``app.TritonExampleStack``) in a new App (``outdir``: keep the assembly).

    The stack class directly, not ``build_app``: the app's context plumbing (six ``try_get_context``
    reads) is the example's command line, not the constructs, and the hand-written side has none. The
    deploy verification (a custom resource) is left out: the hand-written stack has none.
    """
    with tempfile.TemporaryDirectory() as tmp:
        app = cdk.App(outdir=outdir or tmp, builtin_cloud_formation_validation=False)
        app_module.TritonExampleStack(app, "CdkTritonExample", manifest=str(manifest), verify=False, env=ENV)
        assembly = app.synth()
        tpl: dict[str, Any] = assembly.get_stack_by_name("CdkTritonExample").template
        return tpl


_DASHBOARD = ROOT / "bench" / "l1_dashboard.json"
_dashboard_body: list[str] = []  # the hand-written body, read once per process


def _role(
    stack: cdk.Stack, name: str, statements: list[dict[str, Any]]
) -> tuple[iam.CfnRole, iam.CfnManagedPolicy]:
    role = iam.CfnRole(
        stack,
        f"{name}Role",
        assume_role_policy_document={
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "sagemaker.amazonaws.com"},
                    "Action": "sts:AssumeRole",
                }
            ],
        },
        description="cdk-triton execution role of a Triton model",
    )
    policy = iam.CfnManagedPolicy(
        stack,
        f"{name}Policy",
        roles=[role.ref],
        description="cdk-triton: least-privilege grants of a Triton model",
        policy_document={"Version": "2012-10-17", "Statement": statements},
    )
    return role, policy


def _alarm(stack: cdk.Stack, cid: str, topic: str, **props: Any) -> None:
    cloudwatch.CfnAlarm(
        stack,
        cid,
        evaluation_periods=3,
        comparison_operator="GreaterThanThreshold",
        treat_missing_data="notBreaching",
        alarm_actions=[topic],
        ok_actions=[topic],
        **props,
    )


class L1Network(NamedTuple):
    """Where the hand-written models run: the subnets (refs) and the VPC (ref) a security group per model joins."""

    vpc_id: str
    subnet_ids: list[str]


_LOG_ACTIONS = ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]
_VPC_ACTIONS = [
    "ec2:CreateNetworkInterface",
    "ec2:CreateNetworkInterfacePermission",
    "ec2:DeleteNetworkInterface",
    "ec2:DeleteNetworkInterfacePermission",
    "ec2:DescribeDhcpOptions",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSubnets",
    "ec2:DescribeVpcs",
]


def _statements(uri: str, endpoint_name: str) -> list[dict[str, Any]]:
    """The model's grants every endpoint needs: its artifacts, the image, its endpoint log group."""
    part = cdk.Aws.PARTITION
    bucket, _, key = uri[5:].partition("/")
    logs_arn = f"arn:{part}:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/{endpoint_name}"
    return [
        {
            "Sid": "ReadModelArtifacts",
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": f"arn:{part}:s3:::{bucket}/{key}*",
        },
        {
            "Sid": "ListModelArtifacts",
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": f"arn:{part}:s3:::{bucket}",
            "Condition": {"StringLike": {"s3:prefix": [f"{key}*"]}},
        },
        {
            "Sid": "PullTritonImage",
            "Effect": "Allow",
            "Action": ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"],
            "Resource": f"arn:{part}:ecr:us-east-1:763104351884:repository/sagemaker-tritonserver",
        },
        {
            "Sid": "EcrAuthorizationToken",
            "Effect": "Allow",
            "Action": "ecr:GetAuthorizationToken",
            "Resource": "*",
        },
        {"Sid": "EndpointLogGroup", "Effect": "Allow", "Action": "logs:CreateLogGroup", "Resource": logs_arn},
        {"Sid": "EndpointLogStreams", "Effect": "Allow", "Action": _LOG_ACTIONS, "Resource": f"{logs_arn}:*"},
    ]


def _model(
    stack: cdk.Stack,
    name: str,
    endpoint_name: str,
    entry: Any,
    network: L1Network | None,
    log_group_acks: dict[str, str] | None = None,
) -> sagemaker.CfnModel:
    """Security group, metrics log group, role, managed policy and the SageMaker Model of one endpoint.

    ``log_group_acks``: findings the app acknowledges on the metrics log group, with the public API
    the example app uses (``cdk.Validations.of(group).acknowledge``).
    """
    mme = entry.hosting_mode.loads_on_demand
    uri = entry.s3_prefix if mme else entry.s3_uri
    assert uri is not None
    statements = _statements(uri, endpoint_name)
    env: dict[str, Any] = (
        {"SAGEMAKER_MULTI_MODEL": "true"}
        if mme
        else {"SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": entry.default_model or name}
    )
    if not mme:
        group = logs.CfnLogGroup(stack, f"{name}Metrics", retention_in_days=30)
        group.apply_removal_policy(cdk.RemovalPolicy.RETAIN)
        if log_group_acks:
            cdk.Validations.of(group).acknowledge(
                *(cdk.Acknowledgment(id=rule, reason=reason) for rule, reason in log_group_acks.items())
            )
        env.update(
            {
                "SAGEMAKER_TRITON_ALLOW_METRICS": "true",
                "SAGEMAKER_TRITON_METRICS_PORT": "8002",
                "SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH": "true",
                "SAGEMAKER_TRITON_CLOUDWATCH_METRIC_NAMESPACE": f"Triton/{endpoint_name}",
                "SAGEMAKER_TRITON_CLOUDWATCH_LOG_GROUP": group.ref,
            }
        )
        statements[4:4] = [
            {
                "Sid": "WriteTritonMetricsLogs",
                "Effect": "Allow",
                "Action": _LOG_ACTIONS,
                "Resource": group.attr_arn,
            },
            {
                "Sid": "PutTritonMetrics",
                "Effect": "Allow",
                "Action": "cloudwatch:PutMetricData",
                "Resource": "*",
                "Condition": {"StringEquals": {"cloudwatch:namespace": f"Triton/{endpoint_name}"}},
            },
        ]
    vpc_config: dict[str, Any] | None = None
    if network is not None:
        sg = ec2.CfnSecurityGroup(
            stack,
            f"{name}SecurityGroup",
            group_description="cdk-triton model: outbound to S3, ECR and CloudWatch",
            vpc_id=network.vpc_id,
            security_group_egress=[
                {
                    "cidrIp": "0.0.0.0/0",
                    "ipProtocol": "-1",
                    "description": "Allow all outbound traffic by default",
                }
            ],
        )
        vpc_config = {"securityGroupIds": [sg.attr_group_id], "subnets": network.subnet_ids}
        statements.append(
            {"Sid": "VpcNetworkInterfaces", "Effect": "Allow", "Action": _VPC_ACTIONS, "Resource": "*"}
        )
    role, policy = _role(stack, name, statements)
    container: dict[str, Any] = {
        "image": IMAGE,
        "environment": env,
        "mode": "MultiModel" if mme else "SingleModel",
    }
    if mme or entry.packaging == "tar.gz":
        container["modelDataUrl"] = uri
    else:
        container["modelDataSource"] = {
            "s3DataSource": {"s3Uri": uri, "s3DataType": "S3Prefix", "compressionType": "None"}
        }
    model = sagemaker.CfnModel(
        stack,
        f"{name}Model",
        execution_role_arn=role.attr_arn,
        primary_container=container,
        vpc_config=vpc_config,
    )
    model.add_resource_dependency(policy)
    return model


def _scaling(stack: cdk.Stack, name: str, endpoint: sagemaker.CfnEndpoint, mme: bool) -> None:
    target = appscaling.CfnScalableTarget(
        stack,
        f"{name}Target",
        service_namespace="sagemaker",
        min_capacity=1,
        max_capacity=4,
        scalable_dimension="sagemaker:variant:DesiredInstanceCount",
        resource_id=cdk.Fn.join("", ["endpoint/", endpoint.attr_endpoint_name, "/variant/AllTraffic"]),
    )
    tracking: dict[str, Any] = {"targetValue": 60, "scaleInCooldown": 600, "scaleOutCooldown": 200}
    if mme:
        tracking["targetValue"] = 1000
        tracking["predefinedMetricSpecification"] = {
            "predefinedMetricType": "SageMakerVariantInvocationsPerInstance"
        }
    else:
        tracking["customizedMetricSpecification"] = {
            "namespace": "/aws/sagemaker/Endpoints",
            "metricName": "GPUUtilization",
            "statistic": "Average",
            "dimensions": [
                {"name": "EndpointName", "value": endpoint.attr_endpoint_name},
                {"name": "VariantName", "value": "AllTraffic"},
            ],
        }
    appscaling.CfnScalingPolicy(
        stack,
        f"{name}Scaling",
        policy_name=cdk.Fn.join(
            "", [endpoint.attr_endpoint_name, "-InvocationsPerInstance" if mme else "-GpuUtilization"]
        ),
        policy_type="TargetTrackingScaling",
        scaling_target_id=target.ref,
        target_tracking_scaling_policy_configuration=tracking,
    )


def _topic(stack: cdk.Stack) -> str:
    """The encrypted alarm topic (retained key, TLS-only publishing); its ref."""
    part = cdk.Aws.PARTITION
    topic_key = kms.CfnKey(
        stack,
        "TopicKey",
        description="cdk-triton: alarm topic encryption",
        enable_key_rotation=True,
        key_policy={
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": f"arn:{part}:iam::123456789012:root"},
                    "Action": "kms:*",
                    "Resource": "*",
                },
                {
                    "Sid": "AllowCloudWatchAlarms",
                    "Effect": "Allow",
                    "Principal": {"Service": "cloudwatch.amazonaws.com"},
                    "Action": ["kms:Decrypt", "kms:GenerateDataKey*"],
                    "Resource": "*",
                    "Condition": {
                        "StringEquals": {"aws:SourceAccount": "123456789012"},
                        "ArnLike": {"aws:SourceArn": f"arn:{part}:cloudwatch:us-east-1:123456789012:alarm:*"},
                    },
                },
            ],
        },
    )
    topic_key.apply_removal_policy(cdk.RemovalPolicy.RETAIN)
    topic = sns.CfnTopic(
        stack, "Topic", display_name="cdk-triton alarms", kms_master_key_id=topic_key.attr_arn
    )
    sns.CfnTopicPolicy(
        stack,
        "TopicPolicy",
        topics=[topic.ref],
        policy_document={
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "AllowPublishThroughSSLOnly",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "sns:Publish",
                    "Resource": topic.ref,
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        },
    )
    return topic.ref


def _alarms(stack: cdk.Stack, name: str, endpoint_name: str, topic: str, *, mme: bool = False) -> None:
    dims = [{"name": "EndpointName", "value": endpoint_name}, {"name": "VariantName", "value": "AllTraffic"}]

    def stat(cid: str, metric: str) -> dict[str, Any]:
        return {
            "id": cid,
            "returnData": False,
            "metricStat": {
                "metric": {"namespace": "AWS/SageMaker", "metricName": metric, "dimensions": dims},
                "period": 60,
                "stat": "Sum",
            },
        }

    _alarm(
        stack,
        f"{name}Errors",
        topic,
        alarm_description=f"cdk-triton: 5XX errors above 5 % of invocations on {endpoint_name}",
        threshold=5,
        metrics=[
            {
                "id": "rate",
                "expression": "IF(inv > 0, 100 * err / inv, 0)",
                "label": "5XX error rate (%)",
                "returnData": True,
            },
            stat("err", "Invocation5XXErrors"),
            stat("inv", "Invocations"),
        ],
    )
    _alarm(
        stack,
        f"{name}P99",
        topic,
        alarm_description=f"cdk-triton: p99 ModelLatency above 1000 ms on {endpoint_name}",
        namespace="AWS/SageMaker",
        metric_name="ModelLatency",
        extended_statistic="p99",
        period=60,
        threshold=1_000_000,
        dimensions=dims,
    )
    _alarm(
        stack,
        f"{name}Gpu",
        topic,
        alarm_description=f"cdk-triton: GPU memory above 90 % per GPU on {endpoint_name} (1 GPU)",
        namespace="/aws/sagemaker/Endpoints",
        metric_name="GPUMemoryUtilization",
        statistic="Average",
        period=60,
        threshold=90,
        dimensions=dims,
    )
    if mme:  # the loading alarms TritonAlarms adds to a multi-model endpoint
        _loading_alarms(stack, name, endpoint_name, topic, dims)


def _loading_alarms(stack: cdk.Stack, name: str, endpoint_name: str, topic: str, dims: list[Any]) -> None:
    cloudwatch.CfnAlarm(
        stack,
        f"{name}CacheHit",
        evaluation_periods=3,
        comparison_operator="LessThanThreshold",
        treat_missing_data="notBreaching",
        alarm_actions=[topic],
        ok_actions=[topic],
        alarm_description=f"cdk-triton: cache-hit ratio (ModelCacheHit Average) below 0.8 on {endpoint_name}",
        namespace="AWS/SageMaker",
        metric_name="ModelCacheHit",
        statistic="Average",
        period=60,
        threshold=0.8,
        dimensions=dims,
    )
    _alarm(
        stack,
        f"{name}LoadingWait",
        topic,
        alarm_description=f"cdk-triton: mean ModelLoadingWaitTime above 2000 ms on {endpoint_name}",
        namespace="AWS/SageMaker",
        metric_name="ModelLoadingWaitTime",
        statistic="Average",
        period=60,
        threshold=2_000_000,
        dimensions=dims,
    )


_KMS_RULES = [
    f"{pack}::{pack}-SageMakerEndpointConfigurationKMSKeyConfigured"
    for pack in ("HIPAA.Security", "NIST.800.53.R5", "NIST.800.53.R4", "PCI.DSS.321")
]
_ack_key: list[str] = []  # Validations.ACKNOWLEDGED_RULES_METADATA_KEY, read once per process


def _acknowledgments(uri: str, endpoint_name: str) -> dict[str, str]:
    """The cdk-nag findings of one endpoint's grants and config, acknowledged with their reasons."""
    bucket_and_key = uri[5:]
    logs_arn = (
        f"arn:<AWS::Partition>:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/{endpoint_name}"
    )
    iam5 = "AwsSolutions::AwsSolutions-IAM5[Resource::"
    acks = {
        f"{iam5}arn:<AWS::Partition>:s3:::{bucket_and_key}*]": "every object under one build prefix",
        f"{iam5}*]": "ecr:GetAuthorizationToken, cloudwatch:PutMetricData and the ENI actions take no resource",
        f"{iam5}{logs_arn}:*]": "SageMaker creates the endpoint's log streams at run time",
    }
    acks.update({rule: "local NVMe storage is hardware-encrypted" for rule in _KMS_RULES})
    return acks


def define_l1(
    stack: cdk.Stack,
    manifest: Manifest,
    *,
    prefix: str = "",
    network: L1Network | None = None,
    log_group_acks: dict[str, str] | None = None,
) -> None:
    """The example's resources written with L1 constructs and raw dictionaries into ``stack``.

    ``prefix`` prefixes the endpoint names; ``network`` puts each model in the VPC (a security group
    allowing all outbound and the network-interface grant), as ``TritonEndpoint(vpc=...)`` does. The
    template equals the constructs' one, logical ids aside, and the stack acknowledges the same cdk-nag
    findings in one metadata entry (bench/equivalence.py; unit tests); ``log_group_acks`` are the app's
    own, on the metrics log group, written the way the example app writes them.
    """
    if not _dashboard_body:
        _dashboard_body.append(json.dumps(json.loads(_DASHBOARD.read_text()), separators=(",", ":")))
    if not _ack_key:
        _ack_key.append(str(cdk.Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
    body = _dashboard_body[0]
    names = []
    acks: dict[str, str] = {}
    accepted = advisories.check_release(
        manifest.triton_version, acknowledged=manifest.acknowledged_advisories, region=stack.region
    ).acknowledged
    for name, entry in manifest.endpoints.items():
        mme = entry.hosting_mode.loads_on_demand
        endpoint_name = f"{prefix}{name}"
        model = _model(stack, name, endpoint_name, entry, network, log_group_acks)
        if accepted:  # the written acceptance of the release's NVIDIA advisories, as the construct records it
            model.add_metadata(advisories.METADATA_KEY, advisories.metadata(accepted))
        config = sagemaker.CfnEndpointConfig(
            stack,
            f"{name}Config",
            production_variants=[
                {
                    "variantName": "AllTraffic",
                    "modelName": model.attr_model_name,
                    "initialInstanceCount": 1,
                    "initialVariantWeight": 1,
                    "instanceType": entry.instance_types[0],
                    # by hand, as gpu_hosts decides it: the default ml.g5 host (driver 470) is unconfirmed
                    # for CUDA 12.6; the AMI listed for g5 with driver 535 runs every CUDA 12 release
                    "inferenceAmiVersion": "al2-ami-sagemaker-inference-gpu-2",
                }
            ],
        )
        endpoint = sagemaker.CfnEndpoint(
            stack,
            f"{name}Endpoint",
            endpoint_name=endpoint_name,
            endpoint_config_name=config.attr_endpoint_config_name,
        )
        cdk.CfnOutput(stack, f"{name}EndpointName", value=endpoint.attr_endpoint_name)
        if mme:
            target_models = json.dumps(entry.target_model_map(), separators=(",", ":"))
            ssm.CfnParameter(
                stack,
                f"{name}Map",
                type="String",
                tier="Standard",
                name=f"/cdk-triton/{endpoint_name}/target-models/000",
                description=f"cdk-triton: TargetModel map of endpoint {endpoint_name} (part 1/1)",
                value=target_models,
            )
            cdk.CfnOutput(
                stack,
                f"{name}MapPath",
                value=f"/cdk-triton/{endpoint_name}/target-models",
                description="SSM path of the logical model name -> TargetModel map (GetParametersByPath)",
            )
            cdk.CfnOutput(
                stack,
                f"{name}MapOutput",
                value=target_models,
                description="logical model name -> TargetModel",
            )
        _scaling(stack, name, endpoint, mme)
        names.append((name, endpoint_name, mme))
        acks.update(_acknowledgments(entry.s3_prefix if mme else entry.s3_uri or "", endpoint_name))
        body = body.replace(f"@{name}@", endpoint_name)
    topic = _topic(stack)
    for name, endpoint_name, mme in names:
        _alarms(stack, name, endpoint_name, topic, mme=mme)
    cloudwatch.CfnDashboard(stack, "Dashboard", dashboard_body=body)
    stack.node.add_metadata(_ack_key[0], acks)


#: The example app's own acknowledgments (its metrics log group; app.py LOG_GROUP_ACKS), by hand.
EXAMPLE_APP_ACKS = {
    f"{pack}::{pack}-CloudWatchLogGroupEncrypted": "only the Triton CloudWatch agent's own logs"
    for pack in ("HIPAA.Security", "NIST.800.53.R4", "NIST.800.53.R5", "PCI.DSS.321")
}


def synth_l1(manifest_path: Path, outdir: str | None = None) -> dict[str, Any]:
    """The same resources written with L1 constructs and raw dictionaries (``outdir``: keep the assembly)."""
    manifest = read_manifest(manifest_path)
    with tempfile.TemporaryDirectory() as tmp:
        app = cdk.App(outdir=outdir or tmp, builtin_cloud_formation_validation=False)
        stack = cdk.Stack(app, "HandWritten", env=ENV)
        define_l1(stack, manifest, log_group_acks=EXAMPLE_APP_ACKS)
        assembly = app.synth()
        tpl: dict[str, Any] = assembly.get_stack_by_name("HandWritten").template
        return tpl


def shape(tpl: dict[str, Any]) -> dict[str, Any]:
    """What must match for the two stacks to be equivalent: resource types, outputs, policies, DependsOn."""
    res = tpl["Resources"].values()
    return {
        "types": sorted(r["Type"] for r in res),
        "outputs": len(tpl.get("Outputs", {})),
        "retained": sorted(r["Type"] for r in res if r.get("DeletionPolicy") == "Retain"),
        "depends_on": sorted(r["Type"] for r in res if r.get("DependsOn")),
    }


_E2E = """
import os, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {bench!r})
import synth_bench as sb
which, manifest = sys.argv[1], sys.argv[2]
if which == "constructs":
    n = len(sb.synth_constructs(sb._load_app(), sb.Path(manifest))["Resources"])
else:
    n = len(sb.synth_l1(sb.Path(manifest))["Resources"])
print(n, time.perf_counter() - t0)
"""


def end_to_end(which: str, manifest: Path, pycache: str) -> tuple[int, float, float]:
    """Wall time of a fresh Python process: imports, jsii/node start, define, synth (what a user waits for).

    Also its CPU time, user and system, with the node process jsii starts (both exit before ``run``
    returns): on a shared machine the wall time carries the other processes' load, the CPU time much
    less of it. Bytecode is cached under ``pycache`` (PYTHONPYCACHEPREFIX, outside the source tree)
    so neither side pays for compiling its modules, as in a normal install; a warm-up run per side
    fills the cache.
    """
    import resource
    import subprocess

    code = _E2E.format(bench=str(Path(__file__).resolve().parent))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = pycache
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, which, str(manifest)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    n = int(proc.stdout.strip().splitlines()[-1].split()[0])
    return n, wall, cpu


def pair_ratio(runs: dict[str, list[float]]) -> float | None:
    """Constructs over L1, round by round: the median over each two rounds of the geometric mean of their
    ratios. A round runs both sides back to back and the order alternates, so two rounds together cancel
    what the order itself costs (on a shared machine the second process of a round often runs faster),
    and rounds are never compared with each other (the machine's speed drifts between them). An odd last
    round is left out."""
    ratios = [c / l1 for c, l1 in zip(runs["constructs"], runs["l1"], strict=True)]
    both_orders = [math.sqrt(a * b) for a, b in zip(ratios[0::2], ratios[1::2], strict=False)]
    return statistics.median(both_orders) if both_orders else None


def _load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the platform has none): how busy the machine was."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--e2e-rounds", type=int, default=16, help="fresh-process rounds (0 to skip)")
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "synth.json")
    args = parser.parse_args(argv)
    load_before = _load_average()
    app_module = _load_app()
    synth_constructs(app_module, args.manifest)  # warm-up: jsii start, module loading
    synth_l1(args.manifest)
    times: dict[str, list[float]] = {"constructs": [], "l1": []}
    resources: dict[str, int] = {}
    for i in range(args.rounds):
        order = ("constructs", "l1") if i % 2 == 0 else ("l1", "constructs")
        for which in order:
            t0 = time.perf_counter()
            tpl = (
                synth_constructs(app_module, args.manifest)
                if which == "constructs"
                else synth_l1(args.manifest)
            )
            n = len(tpl["Resources"])
            times[which].append(time.perf_counter() - t0)
            resources[which] = n
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = med["constructs"] / med["l1"]
    e2e: dict[str, list[float]] = {"constructs": [], "l1": []}
    e2e_cpu: dict[str, list[float]] = {"constructs": [], "l1": []}
    with tempfile.TemporaryDirectory(prefix="synth-bench-pycache-") as pycache:
        if args.e2e_rounds:
            for which in ("constructs", "l1"):
                end_to_end(which, args.manifest, pycache)  # warm-up: fills the bytecode cache
        for i in range(args.e2e_rounds):
            order = ("constructs", "l1") if i % 2 == 0 else ("l1", "constructs")
            for which in order:
                _, wall, cpu = end_to_end(which, args.manifest, pycache)
                e2e[which].append(wall)
                e2e_cpu[which].append(cpu)
    e2e_med = {k: statistics.median(v) for k, v in e2e.items() if v}
    medians_ratio = e2e_med["constructs"] / e2e_med["l1"] if len(e2e_med) == 2 else None
    e2e_ratio = pair_ratio(e2e)
    cpu_med = {k: statistics.median(v) for k, v in e2e_cpu.items() if v}
    cpu_ratio = pair_ratio(e2e_cpu)
    summary = [
        {
            "label": "synth in process, constructs vs hand-written L1 (time ratio)",
            "value": round(ratio, 3),
            "unit": "x",
            "target": "<= 1.1x",
        },
    ]
    if e2e_ratio:
        summary.append(
            {
                "label": "synth in a fresh process (cdk synth path), constructs vs L1 (time ratio)",
                "value": round(e2e_ratio, 3),
                "unit": "x",
                "target": "<= 1.1x",
            }
        )
    result = {
        "name": "synth",
        "command": "python -m bench.synth_bench",
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}",
        "summary": summary,
        "benchmark": "synth_bench",
        "what": "in-process synth of the example app (cdk-triton constructs) vs an equivalent hand-written L1 stack",
        "baseline": "hand-written L1 stack with the example's resource types, 4 outputs, retained KMS key and "
        "log group, Model DependsOn policy (shape() equality is a unit test)",
        "rounds": args.rounds,
        "median_seconds": {k: round(v, 4) for k, v in med.items()},
        "all_seconds": {k: [round(x, 4) for x in v] for k, v in times.items()},
        "resources": resources,
        "ratio_constructs_over_l1": round(ratio, 3),
        "end_to_end": {
            "what": "fresh python process per synth: imports, jsii/node start, define, synth "
            "(bytecode cached outside the tree; one warm-up per side)",
            "rounds": args.e2e_rounds,
            "median_seconds": {k: round(v, 3) for k, v in e2e_med.items()},
            "all_seconds": {k: [round(x, 3) for x in v] for k, v in e2e.items()},
            "ratio_constructs_over_l1": round(e2e_ratio, 3) if e2e_ratio else None,
            "ratio_what": "each round runs both sides back to back, the order alternating; the median over "
            "each two rounds of the geometric mean of their ratios (pair_ratio): the order's own cost and the "
            "machine's drift between rounds cancel",
            "ratio_of_medians": round(medians_ratio, 3) if medians_ratio else None,
            "cpu": {
                "what": "user + system CPU seconds of the same processes, python and node together "
                "(less sensitive than the wall time to the other load of a shared machine)",
                "median_seconds": {k: round(v, 3) for k, v in cpu_med.items()},
                "all_seconds": {k: [round(x, 3) for x in v] for k, v in e2e_cpu.items()},
                "ratio_constructs_over_l1": round(cpu_ratio, 3) if cpu_ratio else None,
                "ratio_of_medians": round(cpu_med["constructs"] / cpu_med["l1"], 3)
                if len(cpu_med) == 2
                else None,
            },
            "load_average": {"before": load_before, "after": _load_average()},
        },
        "target_ratio": 1.1,
        "within_target_in_process": ratio <= 1.1,
        "within_target_end_to_end": bool(e2e_ratio and e2e_ratio <= 1.1),
        "python": platform.python_version(),
        "aws_cdk_lib": cdk.__version__ if hasattr(cdk, "__version__") else "2.275.0",
        "manifest": str(
            args.manifest.relative_to(ROOT) if args.manifest.is_relative_to(ROOT) else args.manifest
        ),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"in-process synth: constructs {med['constructs']:.3f} s ({resources['constructs']} resources), "
        f"hand-written L1 {med['l1']:.3f} s ({resources['l1']} resources): ratio {ratio:.2f}x"
    )
    if e2e_ratio and cpu_ratio:
        print(
            f"end-to-end (fresh process): constructs {e2e_med['constructs']:.2f} s, "
            f"hand-written L1 {e2e_med['l1']:.2f} s (medians): ratio {e2e_ratio:.3f}x over "
            f"{len(e2e['l1'])} rounds, round by round (of the medians: {medians_ratio:.3f}x; CPU, python and "
            f"node: {cpu_ratio:.3f}x)"
        )
    print(f"target <= 1.1x -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
