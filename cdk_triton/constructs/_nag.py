"""cdk-nag acknowledgments the constructs add for what must stay, each with its reason.

cdk-nag 3 is a CDK validation plugin; findings are acknowledged with
``cdk.Validations.of(construct).acknowledge(cdk.Acknowledgment(id=..., reason=...))``. An IAM5 finding
is per wildcard (``AwsSolutions::AwsSolutions-IAM5[Resource::<flattened ARN>]``), so the wildcard
resources of a policy are flattened the way cdk-nag flattens them and acknowledged one by one:
nothing is acknowledged wholesale.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any

import aws_cdk as cdk
from constructs import IConstruct

from cdk_triton.constructs._tokens import pseudo

#: What the constructs acknowledge (on the exact finding, never a whole rule), with the reason.
ACKNOWLEDGMENTS: dict[str, str] = {
    "AwsSolutions-IAM5[Resource::*] (ecr:GetAuthorizationToken)": (
        "ecr:GetAuthorizationToken has no resource-level permissions; it must be granted on '*'"
    ),
    "AwsSolutions-IAM5[Resource::*] (cloudwatch:PutMetricData)": (
        "no resource-level permissions; a cloudwatch:namespace condition limits it to the Triton namespace"
    ),
    "AwsSolutions-IAM5[Resource::*] (ec2 network interfaces, VPC only)": (
        "SageMaker attaches the model to the VPC through network interfaces; no resource-level scoping"
    ),
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::<bucket>/<prefix>*]": (
        "the model artifacts are every object under one build prefix (one statement, not one per model)"
    ),
    "AwsSolutions-IAM5[Resource::arn:...:log-group:/aws/sagemaker/Endpoints/<name>:*]": (
        "SageMaker creates the log streams of the endpoint's own log group at run time"
    ),
    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::<capture bucket>/<prefix>*]": (
        "data capture writes one object per captured batch under its prefix"
    ),
    "<pack>-SageMakerEndpointConfigurationKMSKeyConfigured (HIPAA, NIST 800-53 R4/R5, PCI DSS 3.2.1)": (
        "local NVMe storage is hardware-encrypted and CreateEndpointConfig rejects a KmsKeyId for it"
    ),
}

ENDPOINT_CONFIG_KMS_RULES = (
    "HIPAA.Security::HIPAA.Security-SageMakerEndpointConfigurationKMSKeyConfigured",
    "NIST.800.53.R5::NIST.800.53.R5-SageMakerEndpointConfigurationKMSKeyConfigured",
    "NIST.800.53.R4::NIST.800.53.R4-SageMakerEndpointConfigurationKMSKeyConfigured",
    "PCI.DSS.321::PCI.DSS.321-SageMakerEndpointConfigurationKMSKeyConfigured",
)


def local_storage_kms_acks(instance_type: str, local_storage: bool) -> list[cdk.Acknowledgment]:
    """The EndpointConfig KMS rule's acknowledgments on a local-NVMe instance type (none elsewhere)."""
    if not local_storage:
        return []
    reason = (
        f"{instance_type} has local NVMe storage, which is hardware-encrypted; "
        "CreateEndpointConfig rejects a KmsKeyId for it"
    )
    return [cdk.Acknowledgment(id=rule, reason=reason) for rule in ENDPOINT_CONFIG_KMS_RULES]


def acknowledge(scope: IConstruct, rule_id: str, reason: str) -> None:
    """Acknowledge one cdk-nag finding on ``scope`` (and its children)."""
    cdk.Validations.of(scope).acknowledge(cdk.Acknowledgment(id=rule_id, reason=reason))


@cache
def _acknowledged_rules_key() -> str:
    """``Validations.ACKNOWLEDGED_RULES_METADATA_KEY``, read through jsii once per process."""
    return str(cdk.Validations.ACKNOWLEDGED_RULES_METADATA_KEY)


def acknowledge_all(scope: IConstruct, acks: Sequence[cdk.Acknowledgment]) -> None:
    """Acknowledge exact findings on ``scope`` (and its children) in one metadata entry.

    ``Validations.of(scope).acknowledge(*acks)`` writes one metadata entry per finding, each with a
    captured stack trace, plus an annotation acknowledgment per finding (for construct-annotation
    warnings, which these ids never are): about 1.5 ms per endpoint at definition and again at synth.
    This writes what the validation report reads (``aws:cdk:acknowledged-rules``: fully qualified
    id -> reason) in one call, without traces. tests/unit/constructs run real cdk-nag packs
    (AwsSolutions, HIPAA) and assert the findings are reported as acknowledged with their reasons.
    """
    for ack in acks:
        if "::" not in ack.id or " " in ack.id:  # pragma: no cover - guards the id format
            raise ValueError(f"acknowledgment id {ack.id!r} must be '<pack>::<rule>' without spaces")
    scope.node.add_metadata(_acknowledged_rules_key(), {ack.id: ack.reason for ack in acks})


def flatten(value: Any) -> str:
    """cdk-nag's ``flattenCfnReference``: a resolved CloudFormation value as the string in finding ids."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.replace("${", "<").replace("}", ">")
    if isinstance(value, dict):
        if "Fn::Join" in value:
            delimiter, items = value["Fn::Join"]
            return delimiter.join(flatten(i) for i in items)
        if "Fn::Sub" in value:
            return flatten(value["Fn::Sub"])
        if "Fn::GetAtt" in value:
            resource, attribute = value["Fn::GetAtt"]
            return f"<{flatten(resource)}.{flatten(attribute)}>"
        if "Fn::ImportValue" in value:
            return flatten(value["Fn::ImportValue"])
        if "Ref" in value:
            return f"<{flatten(value['Ref'])}>"
    return json.dumps(value, separators=(",", ":"))


#: The pseudo parameters as cdk-nag writes them in a flattened string (``Pseudo``'s attribute, text).
_PSEUDO_FLAT = (
    ("partition", "<AWS::Partition>"),
    ("region", "<AWS::Region>"),
    ("account", "<AWS::AccountId>"),
    ("url_suffix", "<AWS::URLSuffix>"),
)


def flatten_string(scope: IConstruct, value: str) -> str:
    """cdk-nag's flattened form of a string that may hold tokens (pseudo parameters without a call)."""
    p = pseudo()
    text = value
    # one pseudo parameter after the other, each read only while a token is left (a stack with an
    # environment has literal region and account: its ARNs hold the partition alone)
    for name, flat in _PSEUDO_FLAT:
        if "${Token[" not in text:
            return text
        text = text.replace(getattr(p, name), flat)
    if "${Token[" not in text:
        return text
    return flatten(cdk.Stack.of(scope).resolve(value))
