"""cdk-nag acknowledgments of the pipeline, each on the exact finding and with its reason.

CDK Pipelines defines most of the pipeline's roles itself (the artifact bucket grants, CodeBuild's log
group and report groups, the self-mutation's bootstrap roles). After the pipeline is built, every
wildcard of every policy under it is flattened the way cdk-nag names findings
(``AwsSolutions::AwsSolutions-IAM5[Resource::<flattened ARN>]``) and acknowledged when a rule below
explains it; a wildcard no rule explains is left for cdk-nag to report.
"""

from __future__ import annotations

import json
import re
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import IConstruct

PACK = "AwsSolutions::"

#: (regex on the finding id, reason). Ids are ``AwsSolutions-IAM5[Action::...]`` / ``[Resource::...]``.
WILDCARD_REASONS: list[tuple[str, str]] = [
    (
        r"Action::(s3:(GetObject|GetBucket|List|DeleteObject|Abort)|kms:(ReEncrypt|GenerateDataKey))\*",
        "CDK Pipelines' grant on its own KMS-encrypted artifact bucket and key (transient stage artifacts)",
    ),
    (
        r"Resource::<[A-Za-z0-9]*ArtifactsBucket[A-Za-z0-9]*\.Arn>/\*",
        "objects of the pipeline's own artifact bucket",
    ),
    (
        r"Resource::arn:[^\]]*:logs:[^\]]*:log-group:/aws/codebuild/<[A-Za-z0-9]+>:\*",
        "log streams of the project's own log group",
    ),
    (
        r"Resource::arn:[^\]]*:codebuild:[^\]]*:report-group/<[A-Za-z0-9]+>-\*",
        "report groups of the project itself",
    ),
    (
        r"Resource::arn:\*:iam::[^\]]*:role/\*",
        "self-mutation assumes the CDK bootstrap roles of each target account",
    ),
    (
        r"Resource::arn:[^\]]*:logs:[^\]]*:log-group:/aws/sagemaker/(Processing|Training)Jobs:\*",
        "SageMaker creates one log stream per GPU build job",
    ),
    (
        r"Resource::arn:[^\]]*:sagemaker:[^\]]*:(processing|training)-job/cdk-triton-trt-\*",
        "one GPU build job per pipeline run",
    ),
]

WILDCARD_REASONS += [
    (
        r"Resource::arn:[^\]]*:logs:[^\]]*:log-group:/aws/codebuild/\*",
        "CDK Pipelines' shared asset-publishing role writes the logs of its publishing projects (one per asset)",
    ),
    (
        r"Resource::arn:[^\]]*:codebuild:[^\]]*:report-group/\*",
        "CDK Pipelines' shared asset-publishing role reports for its publishing projects (one per asset)",
    ),
]
WILDCARD_REASONS += [
    (
        r"Resource::arn:.*:states:.*:execution:.*FanOutStateMachine.*:\*",
        "executions of the fan-out state machine itself: its Distributed Maps start, follow and redrive their "
        "child executions, the pipeline's invoke action follows the execution it starts",
    ),
]
WILDCARD_REASONS += [
    (
        r"Resource::arn:[^\]]*:sagemaker:[^\]]*:model-package/[A-Za-z0-9-]+/\*",
        "the versions of the endpoint's model package group: the build registers a new one per build",
    ),
    (
        r"Resource::arn:[^\]]*:s3:::[^\]]*/registry/[^/\]]+/\*",
        "the endpoint's registry evidence prefix (registry/<endpoint>/<manifest sha256>/, one per build)",
    ),
]
_LOG_DELIVERY = "CloudWatch Logs' vended log delivery of the state machine has no resource-level permissions"
_XRAY = "X-Ray tracing of the state machine has no resource-level permissions"
#: Actions granted on '*': no resource-level permissions, or CDK Pipelines' own choice.
STAR_ACTIONS = {
    "ecr:GetAuthorizationToken": "ECR's login has no resource-level permissions",
    "cloudformation:DescribeStacks": "self-mutation reads the stacks it deploys (CDK Pipelines)",
    "servicequotas:ListServiceQuotas": "the GPU job quota preflight; Service Quotas lists have no resource scope",
    "codebuild:BatchGetBuilds": "CDK Pipelines' asset-publishing role starts its own publishing projects (CDK Pipelines' own grant)",
    "codebuild:StartBuild": "CDK Pipelines' asset-publishing role starts its own publishing projects (CDK Pipelines' own grant)",
    "codebuild:StopBuild": "CDK Pipelines' asset-publishing role starts its own publishing projects (CDK Pipelines' own grant)",
    "s3:ListBucket": "self-mutation lists the CDK asset buckets of the target accounts (CDK Pipelines' own grant)",
    **{
        f"logs:{a}": _LOG_DELIVERY
        for a in (
            "CreateLogDelivery",
            "GetLogDelivery",
            "UpdateLogDelivery",
            "DeleteLogDelivery",
            "ListLogDeliveries",
            "PutResourcePolicy",
            "DescribeResourcePolicies",
            "DescribeLogGroups",
        )
    },
    **{
        f"xray:{a}": _XRAY
        for a in ("PutTraceSegments", "PutTelemetryRecords", "GetSamplingRules", "GetSamplingTargets")
    },
}


def flatten(value: Any) -> str:
    """cdk-nag's flattened form of a resolved CloudFormation value."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if "Fn::Join" in value:
            delimiter, items = value["Fn::Join"]
            return str(delimiter).join(flatten(i) for i in items)
        if "Fn::GetAtt" in value:
            resource, attribute = value["Fn::GetAtt"]
            return f"<{resource}.{attribute}>"
        if "Ref" in value:
            return f"<{value['Ref']}>"
    return json.dumps(value, separators=(",", ":"))


def _as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v]


def _reason(finding: str, actions: list[str]) -> str | None:
    if finding == "Resource::*":
        known = [STAR_ACTIONS[a] for a in actions if a in STAR_ACTIONS]
        return "; ".join(sorted(set(known))) if len(known) == len(actions) else None
    for pattern, reason in WILDCARD_REASONS:
        if re.fullmatch(pattern, finding):
            return reason
    return None


def acknowledge_wildcards(root: IConstruct, *, artifact_prefix_arn: str | None) -> None:
    """Acknowledge the explained IAM5 wildcards of every policy under ``root``.

    ``artifact_prefix_arn``: the flattened ``arn:...:s3:::<bucket>/<prefix>`` of the user's artifact
    prefix; objects under it (and under its ``samples/``) are what the build and verification use.
    """
    stack = cdk.Stack.of(root)
    for child in root.node.find_all():
        if not isinstance(child, iam.CfnPolicy):
            continue
        doc = stack.resolve(child.policy_document)
        acks: dict[str, str] = {}
        for st in doc.get("Statement", []):
            actions = [str(a) for a in _as_list(st.get("Action", []))]
            findings = [f"Action::{a}" for a in actions if "*" in a]
            findings += [
                f"Resource::{flatten(r)}" for r in _as_list(st.get("Resource", [])) if "*" in flatten(r)
            ]
            for finding in findings:
                reason = _reason(finding, actions)
                if (
                    reason is None
                    and artifact_prefix_arn
                    and finding.startswith(f"Resource::{artifact_prefix_arn}")
                ):
                    reason = "scoped to the user's artifact prefix: the build writes and verification reads objects under it"
                if reason:
                    acks[f"{PACK}AwsSolutions-IAM5[{finding}]"] = reason
        for rule, reason in sorted(acks.items()):
            cdk.Validations.of(child).acknowledge(cdk.Acknowledgment(id=rule, reason=reason))


def acknowledge_pipeline(root: IConstruct, *, artifact_bucket: s3.IBucket, artifact_prefix: str) -> None:
    """Every acknowledgment of the pipeline: wildcards, the artifact bucket's access logs, the GPU build image."""
    stack = cdk.Stack.of(root)
    prefix_arn = flatten(stack.resolve(artifact_bucket.arn_for_objects(artifact_prefix)))
    acknowledge_wildcards(root, artifact_prefix_arn=prefix_arn)
    for child in root.node.find_all():
        if isinstance(child, s3.CfnBucket):
            cdk.Validations.of(child).acknowledge(
                cdk.Acknowledgment(
                    id=f"{PACK}AwsSolutions-S1",
                    reason="CDK Pipelines' artifact bucket holds transient, KMS-encrypted stage artifacts; "
                    "CloudTrail records access to it",
                )
            )
        gpu = isinstance(child, codebuild.CfnProject) and "GPU" in str(stack.resolve(child.environment))
        if gpu:
            cdk.Validations.of(child).acknowledge(
                cdk.Acknowledgment(
                    id=f"{PACK}AwsSolutions-CB5",
                    reason="the GPU build image is the Triton release's own image with its TensorRT pin (a CDK asset)",
                )
            )
