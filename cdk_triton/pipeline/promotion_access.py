"""The promotion pipeline's access: the stage account's verify role, the policies of your buckets, acknowledgments.

``StageAccess`` is the stack each stage with a Verify or Bake step gets (in the stage account): one role,
trusted by exactly the pipeline account's step role, with exactly the reads it needs. The bucket and key
policy documents are what YOU add to the buckets you own. The cdk-nag acknowledgments each name the exact
finding and why it stays (most are CDK Pipelines' or aws-cdk-lib's own grants: documented, not claimed).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from constructs import Node

from cdk_triton.config import layout
from cdk_triton.config.manifest import ArtifactLocation
from cdk_triton.pipeline._nag import flatten
from cdk_triton.pipeline.pipeline import EndpointVerification, verify_invoke_statements


class PromotionOwner(Protocol):
    """What this module reads of the promotion pipeline (``promotion.TritonPromotionPipeline``)."""

    @property
    def node(self) -> Node: ...

    stack: cdk.Stack
    model_package_groups: list[str]
    artifact_bucket: s3.IBucket
    artifact_prefix: str
    artifact_key: kms.IKey | None
    regional: dict[str, Any]
    trigger_function: Any

    def verify_role_name(self, stage: cdk.Stage) -> str: ...

    def step_role_name(self, stage: cdk.Stage) -> str: ...


@dataclass(frozen=True, kw_only=True, slots=True)
class ShadowBake:
    """Bake a shadow before its promotion: the comparison alarms must stay out of ALARM for ``bake_time``.

    Attributes:
        endpoint_name: the deployed endpoint holding the shadow variant.
        alarm_names: the comparison alarms (``ShadowComparison.alarm_names``) in the stage account.
        shadow_variant: Default: ``Shadow``.
        bake_time: Default: one hour.
    """

    endpoint_name: str
    alarm_names: Sequence[str]
    shadow_variant: str = "Shadow"
    bake_time: cdk.Duration = field(default_factory=lambda: cdk.Duration.hours(1))


def package_arns(stack: cdk.Stack, groups: Sequence[str]) -> list[str]:
    """The ARNs of every version of ``groups`` (the exact and the lower-case group name)."""
    names = sorted({g for g in groups} | {g.lower() for g in groups})  # SageMaker lower-cases its ARNs
    return [
        stack.format_arn(service="sagemaker", resource="model-package", resource_name=f"{g}/*") for g in names
    ]


def bucket_read_policy(bucket: str, prefix: str, accounts: Sequence[str]) -> dict[str, object]:
    """A bucket policy letting ``accounts`` read objects under ``prefix`` (and list it)."""
    principals = [f"arn:aws:iam::{a}:root" for a in accounts]
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "CdkTritonStagesRead",
                "Effect": "Allow",
                "Principal": {"AWS": principals},
                "Action": "s3:GetObject",
                "Resource": f"arn:aws:s3:::{bucket}/{prefix}*",
            },
            {
                "Sid": "CdkTritonStagesList",
                "Effect": "Allow",
                "Principal": {"AWS": principals},
                "Action": "s3:ListBucket",
                "Resource": f"arn:aws:s3:::{bucket}",
                "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}},
            },
        ],
    }


def key_read_statement(accounts: Sequence[str]) -> dict[str, object]:
    """A key policy statement letting ``accounts`` decrypt through S3 only."""
    return {
        "Sid": "CdkTritonStagesDecrypt",
        "Effect": "Allow",
        "Principal": {"AWS": [f"arn:aws:iam::{a}:root" for a in accounts]},
        "Action": "kms:Decrypt",
        "Resource": "*",
        "Condition": {"StringLike": {"kms:ViaService": "s3.*.amazonaws.com"}},
    }


def regional_bucket_policy(
    target: ArtifactLocation, replicate_role: str, stage_root: str
) -> dict[str, object]:
    """A regional bucket's policy: the Replicate role writes under the prefix, the stage account reads."""
    objects = f"arn:aws:s3:::{target.bucket}/{target.prefix}*"
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "CdkTritonReplicateWrite",
                "Effect": "Allow",
                "Principal": {"AWS": replicate_role},
                "Action": ["s3:GetObject", "s3:PutObject"],
                "Resource": objects,
            },
            {
                "Sid": "CdkTritonStageRead",
                "Effect": "Allow",
                "Principal": {"AWS": stage_root},
                "Action": "s3:GetObject",
                "Resource": objects,
            },
            {
                "Sid": "CdkTritonList",
                "Effect": "Allow",
                "Principal": {"AWS": [replicate_role, stage_root]},
                "Action": "s3:ListBucket",
                "Resource": f"arn:aws:s3:::{target.bucket}",
                "Condition": {"StringLike": {"s3:prefix": [f"{target.prefix}*"]}},
            },
        ],
    }


def s3_read(bucket_arn: str, objects_arn: str, prefix: str) -> list[iam.PolicyStatement]:
    return [
        iam.PolicyStatement(actions=["s3:GetObject"], resources=[objects_arn]),
        iam.PolicyStatement(
            actions=["s3:ListBucket"],
            resources=[bucket_arn],
            conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}},
        ),
    ]


class StageAccess(cdk.Stack):
    """The stage account's role the pipeline's Verify step assumes: invoke, read samples, watch the shadow."""

    def __init__(
        self,
        owner: PromotionOwner,
        stage: cdk.Stage,
        *,
        verify: list[EndpointVerification],
        bake: ShadowBake | None,
    ) -> None:
        super().__init__(
            stage,
            "PromotionAccess",
            env=cdk.Environment(account=stage.account, region=stage.region),
            description="cdk-triton: the role the promotion pipeline's Verify step assumes",
        )
        pipeline_account = owner.stack.account
        names = [v.deployed_name for v in verify] + ([bake.endpoint_name] if bake else [])
        part = self.partition
        regional = owner.regional.get(stage.stage_name)
        samples = (
            ArtifactLocation.from_uri(regional.uri, kms_key_arn=regional.kms_key_arn) if regional else None
        )
        statements = access_statements(
            owner, part, str(stage.region), str(stage.account), verify, bake, samples
        )
        self.role = iam.Role(
            self,
            "VerifyRole",
            role_name=owner.verify_role_name(stage),
            assumed_by=iam.ArnPrincipal(
                f"arn:{part}:iam::{pipeline_account}:role/{owner.step_role_name(stage)}"
            ),
            description=f"cdk-triton: the promotion pipeline verifies {', '.join(names)} from this account",
        )
        self.policy = iam.ManagedPolicy(self, "VerifyPolicy", statements=statements, roles=[self.role])
        for st in statements:
            for r in st.resources:
                if "*" in r:
                    cdk.Validations.of(self.policy).acknowledge(
                        cdk.Acknowledgment(
                            id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{flat(self, r)}]",
                            reason="the recorded samples are content-addressed objects under the build's samples prefix",
                        )
                    )


def access_statements(
    owner: PromotionOwner,
    part: str,
    region: str,
    account: str,
    verify: list[EndpointVerification],
    bake: ShadowBake | None,
    regional: ArtifactLocation | None,
) -> list[iam.PolicyStatement]:
    """What the stage account's verify role may do: invoke and read samples; watch the shadow."""
    bucket = regional.bucket if regional else owner.artifact_bucket.bucket_name
    prefix = regional.prefix if regional else owner.artifact_prefix
    statements: list[iam.PolicyStatement] = []
    if verify:
        statements += [
            *verify_invoke_statements(part, region, account, [v.deployed_name for v in verify]),
            iam.PolicyStatement(
                actions=["s3:GetObject"],
                resources=[f"arn:{part}:s3:::{bucket}/{layout.samples_key_pattern(prefix)}"],
            ),
        ]
        key = (regional.kms_key_arn if regional else None) or (
            owner.artifact_key.key_arn if owner.artifact_key is not None and regional is None else None
        )
        if key:
            statements.append(iam.PolicyStatement(actions=["kms:Decrypt"], resources=[key]))
    if bake is not None:
        statements += [
            iam.PolicyStatement(
                actions=["sagemaker:DescribeEndpoint"],
                resources=[f"arn:{part}:sagemaker:{region}:{account}:endpoint/{bake.endpoint_name.lower()}"],
            ),
            iam.PolicyStatement(
                actions=["cloudwatch:DescribeAlarms"],
                resources=[f"arn:{part}:cloudwatch:{region}:{account}:alarm:{a}" for a in bake.alarm_names],
            ),
        ]
    return statements


def flat(scope: cdk.Stack, value: str) -> str:
    """cdk-nag's flattened form of ``value`` in ``scope``."""
    return flatten(scope.resolve(value))


def acknowledge_source_bucket(bucket: s3.Bucket) -> None:
    cdk.Validations.of(bucket).acknowledge(
        cdk.Acknowledgment(
            id="AwsSolutions::AwsSolutions-S1",
            reason="holds the one approved manifest the trigger writes (versioned); CloudTrail records access",
        )
    )


def acknowledge_trigger(owner: PromotionOwner, log_group: logs.LogGroup) -> None:
    cdk.Validations.of(owner.trigger_function).acknowledge(
        cdk.Acknowledgment(
            id="AwsSolutions::AwsSolutions-L1",
            reason="the handler is tested on python3.12 (boto3 only); the runtime is pinned so a new runtime "
            "never changes promotion without a test",
        )
    )
    stack = owner.stack
    prefix = flat(stack, owner.artifact_bucket.arn_for_objects(f"{owner.artifact_prefix}*"))
    cdk.Validations.of(owner.node.find_child("TriggerPolicy")).acknowledge(
        cdk.Acknowledgment(
            id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{prefix}]",
            reason="the registered manifests lie under the build's artifact prefix (evidence/<sha>/manifest.json)",
        )
    )


def acknowledge_regional(owner: PromotionOwner) -> None:
    """The regional buckets' ``<prefix>*`` of the Replicate steps' roles."""
    for child in owner.node.find_all():
        if not isinstance(child, (iam.CfnPolicy, iam.CfnManagedPolicy)):
            continue
        for r in owner.regional.values():
            loc = ArtifactLocation.from_uri(r.uri)
            cdk.Validations.of(child).acknowledge(
                cdk.Acknowledgment(
                    id=f"AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::{loc.bucket}/{loc.prefix}*]",
                    reason="the stage's own bucket prefix in its region, where the Replicate step copies the build",
                )
            )


#: CodePipeline's own grants for a stage in another region (the replication bucket in that region and its key,
#: referenced by alias, hence "*"): CDK's, documented, not claimed
_CROSS_REGION = (
    (
        r"Resource::arn:<AWS::Partition>:s3:::[a-z0-9.-]*replicationbucket[a-z0-9]*/\*",
        "objects of CodePipeline's "
        "own artifact replication bucket in the stage's region (aws-cdk-lib's cross-region support stack)",
    ),
    (
        r"Resource::\*",
        "CodePipeline's grant on the replication bucket's key in the stage's region, which "
        "aws-cdk-lib references by alias (its cross-region support stack)",
    ),
)


def acknowledge_cross_region(owner: PromotionOwner) -> None:
    """What aws-cdk-lib adds for a stage in another region: the support stack's bucket, the pipeline role's grants."""
    if not owner.regional:
        return
    stack = owner.stack
    for child in owner.node.find_all():
        if not isinstance(child, iam.CfnPolicy):
            continue
        for st in stack.resolve(child.policy_document).get("Statement", []):
            resources = st.get("Resource", [])
            actions = st.get("Action", [])
            for r in resources if isinstance(resources, list) else [resources]:
                finding = f"Resource::{flat(stack, r) if not isinstance(r, str) else r}"
                for pattern, reason in _CROSS_REGION:
                    kms_only = all(
                        str(a).startswith("kms:")
                        for a in (actions if isinstance(actions, list) else [actions])
                    )
                    if re.fullmatch(pattern, finding) and (finding != "Resource::*" or kms_only):
                        cdk.Validations.of(child).acknowledge(
                            cdk.Acknowledgment(
                                id=f"AwsSolutions::AwsSolutions-IAM5[{finding}]", reason=reason
                            )
                        )
    for support in owner.node.root.node.children:
        if isinstance(support, cdk.Stack) and support.node.id.startswith("cross-region-stack-"):
            for c in support.node.find_all():
                if isinstance(c, s3.CfnBucket):
                    cdk.Validations.of(c).acknowledge(
                        cdk.Acknowledgment(
                            id="AwsSolutions::AwsSolutions-S1",
                            reason="CodePipeline's artifact replication bucket of aws-cdk-lib's cross-region "
                            "support stack (transient, KMS-encrypted stage artifacts)",
                        )
                    )


def acknowledge_packages(owner: PromotionOwner) -> None:
    """The ``model-package/<group>/*`` wildcard of every role reading or writing back versions."""
    stack = owner.stack
    ids = [
        f"AwsSolutions::AwsSolutions-IAM5[Resource::{flat(stack, arn)}]"
        for arn in package_arns(stack, owner.model_package_groups)
    ]
    for child in owner.node.find_all():
        if isinstance(child, (iam.CfnPolicy, iam.CfnManagedPolicy)):
            for rule in ids:
                cdk.Validations.of(child).acknowledge(
                    cdk.Acknowledgment(
                        id=rule,
                        reason="every version of a promoted model package group (versions are numbered at "
                        "registration; the approved one is known only at run time)",
                    )
                )
