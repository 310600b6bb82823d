"""The build pipeline's registration: every build a version in each endpoint's model package group.

``TritonPipeline(registry=RegistryOptions(groups={"classifier": "classifier"}))`` makes the Synth step run
``cdk-triton register`` (the line ``cdk_triton.config.registry.register_command`` writes) for each named
endpoint, after the build uploaded and ``cdk synth`` succeeded: a build whose app does not synthesize is
never a version a reviewer could approve. Without fan-out the Synth step is the step that runs
``cdk-triton build --upload``; with fan-out the Merge step writes the final manifest and the Synth step
fetches exactly those bytes (``fanout_job get``), so the registration runs there too, after the fetch
(the Merge step is retried by Step Functions and its shards may be redriven: the fetched manifest is the
one the rest of the pipeline deploys). Registering the same manifest again creates nothing.

The Synth step's role gets exactly what ``cdk-triton register`` calls: ``DescribeModelPackageGroup``,
``ListModelPackages``, ``DescribeModelPackage`` and ``CreateModelPackage`` on each group and its
``model-package/<group>/*`` (the ARNs keep the name's case, as ``constructs/registry.py`` builds them),
``s3:PutObject`` / ``s3:GetObject`` on each endpoint's evidence prefix (``<location>registry/<endpoint>/*``,
``config.layout``), and the artifact key when the evidence lies in the artifact bucket.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3

from cdk_triton.config import layout
from cdk_triton.config import registry as rules
from cdk_triton.errors import TritonValidationError

#: What ``cdk-triton register`` calls on a group and its versions (no wildcard action).
REGISTER_ACTIONS = (
    "sagemaker:CreateModelPackage",
    "sagemaker:DescribeModelPackage",
    "sagemaker:DescribeModelPackageGroup",
    "sagemaker:ListModelPackages",
)
EVIDENCE_ACTIONS = ("s3:GetObject", "s3:PutObject")
#: PutObject with SSE-KMS (GenerateDataKey) and GetObject (Decrypt) on the artifact key.
EVIDENCE_KMS_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey")


class NamedModelPackageGroup(Protocol):
    """A model package group construct (``TritonModelPackageGroup`` or one imported by name)."""

    @property
    def model_package_group_name(self) -> str: ...


@dataclass(frozen=True, kw_only=True, slots=True)
class RegistryOptions:
    """Register every build of the pipeline in the SageMaker Model Registry, one group per endpoint.

    Attributes:
        groups: endpoint key of models.yaml -> its model package group: a name (1-63 of [a-zA-Z0-9-]) or
            a ``TritonModelPackageGroup`` (its name; the pipeline then waits for the group to exist).
        evidence_location: ``s3://bucket/prefix`` for the evidence. Default: the pipeline's artifact
            location (where ``TritonPromotionPipeline`` reads the registered manifest).
        approval_status: the new versions' ``ModelApprovalStatus``. Default: PendingManualApproval (a
            reviewer approves in the registry).
    """

    groups: Mapping[str, str | NamedModelPackageGroup]
    evidence_location: str | None = None
    approval_status: str = rules.DEFAULT_APPROVAL_STATUS

    def group_names(self) -> dict[str, str]:
        """Endpoint key -> group name, in the given order."""
        return {
            str(ep): g if isinstance(g, str) else g.model_package_group_name for ep, g in self.groups.items()
        }

    def errors(self, endpoints: Sequence[str], path: str) -> list[TritonValidationError]:
        """Every problem at once: no groups, an endpoint models.yaml does not declare, a group name
        SageMaker refuses (config.registry's one rule), an approval status, an evidence location."""
        errs: list[TritonValidationError] = []
        if not self.groups:
            errs.append(
                _invalid(
                    "registry.groups",
                    {},
                    "is empty: nothing would be registered",
                    "endpoint key -> group name",
                    "name a group per endpoint, e.g. groups={'classifier': 'classifier'}",
                    path,
                )
            )
        unknown = [ep for ep in self.group_names() if ep not in endpoints]
        if unknown:
            errs.append(
                TritonValidationError(
                    "RegistryForUnknownEndpoint",
                    prop="registry.groups",
                    value=unknown,
                    problem="names endpoints the declaration does not declare",
                    allowed=", ".join(endpoints) or "(no endpoint declared)",
                    fix="use the endpoint keys of models.yaml (endpoints[].name)",
                    path=path,
                )
            )
        for ep, name in self.group_names().items():
            if cdk.Token.is_unresolved(name):
                continue
            bad = rules.check_model_package_group_name(name, prop=f"registry.groups[{ep!r}]", path=path)
            if bad is not None:
                errs.append(bad)
        if self.approval_status not in rules.APPROVAL_STATUSES:
            errs.append(
                _invalid(
                    "registry.approval_status",
                    self.approval_status,
                    "is not a ModelApprovalStatus",
                    ", ".join(rules.APPROVAL_STATUSES),
                    "leave it unset (PendingManualApproval: a reviewer approves in the registry)",
                    path,
                )
            )
        if self.evidence_location is not None and _bucket_and_prefix(self.evidence_location) is None:
            errs.append(
                TritonValidationError(
                    "InvalidS3Uri",
                    prop="registry.evidence_location",
                    value=self.evidence_location,
                    problem="is not an S3 URI",
                    allowed="s3://bucket/prefix",
                    fix="leave it unset (the artifact location, where a promotion reads the registered manifest)",
                    path=path,
                )
            )
        return errs

    def commands(self, manifest: str) -> list[str]:
        """The Synth step's lines: one ``cdk-triton register`` per endpoint (the venv's executable)."""
        status = None if self.approval_status == rules.DEFAULT_APPROVAL_STATUS else self.approval_status
        return [
            ".venv/bin/"
            + rules.register_command(
                endpoint=ep,
                group=group,
                manifest=manifest,
                evidence_location=self.evidence_location,
                approval_status=status,
            )
            for ep, group in self.group_names().items()
        ]

    def statements(
        self, stack: cdk.Stack, *, bucket: s3.IBucket, prefix: str, key: kms.IKey | None
    ) -> list[iam.PolicyStatement]:
        """The Synth role's statements for the registration (see the module docstring)."""
        names = list(dict.fromkeys(self.group_names().values()))
        arns = [
            arn
            for name in names
            for arn in (
                stack.format_arn(service="sagemaker", resource="model-package-group", resource_name=name),
                stack.format_arn(service="sagemaker", resource="model-package", resource_name=f"{name}/*"),
            )
        ]
        out = [iam.PolicyStatement(actions=list(REGISTER_ACTIONS), resources=arns)]
        endpoints = list(self.group_names())
        located = _bucket_and_prefix(self.evidence_location) if self.evidence_location else None
        in_artifact_bucket = located is None or located[0] == bucket.bucket_name
        if located is None:
            evidence = [bucket.arn_for_objects(_evidence_pattern(prefix, ep)) for ep in endpoints]
        else:
            evidence = [
                f"arn:{stack.partition}:s3:::{located[0]}/{_evidence_pattern(located[1], ep)}"
                for ep in endpoints
            ]
        out.append(iam.PolicyStatement(actions=list(EVIDENCE_ACTIONS), resources=evidence))
        if key is not None and in_artifact_bucket:
            out.append(iam.PolicyStatement(actions=list(EVIDENCE_KMS_ACTIONS), resources=[key.key_arn]))
        return out


def _evidence_pattern(prefix: str, endpoint: str) -> str:
    """Every build's evidence of ``endpoint`` under ``prefix``: ``<prefix>registry/<endpoint>/*``."""
    return f"{prefix}{layout.REGISTRY_FOLDER}/{endpoint}/*"


def _bucket_and_prefix(uri: str) -> tuple[str, str] | None:
    """(bucket, prefix ending '/' or empty) of ``s3://bucket/prefix``, or None when it is not one."""
    if not isinstance(uri, str) or not uri.startswith("s3://"):
        return None
    bucket, _, prefix = uri[5:].partition("/")
    if not bucket:
        return None
    p = prefix.strip("/")
    return bucket, f"{p}/" if p else ""


def _invalid(
    prop: str, value: object, problem: str, allowed: str, fix: str, path: str
) -> TritonValidationError:
    return TritonValidationError(
        "InvalidRegistryOption", prop=prop, value=value, problem=problem, allowed=allowed, fix=fix, path=path
    )
