"""What an endpoint gets for a prop left out: its physical name, its ML storage volume's key, the
namespace of Triton's metrics (``TritonEndpoint`` and ``TritonComponentsEndpoint`` share them)."""

from __future__ import annotations

import re

import aws_cdk as cdk
from aws_cdk import aws_kms as kms
from constructs import Construct

from cdk_triton.constructs._tokens import is_token, pseudo
from cdk_triton.constructs.model_props import TritonMetrics


def default_endpoint_name(scope: Construct) -> str:
    """A deterministic endpoint name from the construct path (at most 63 of [A-Za-z0-9-])."""
    raw = cdk.Names.unique_resource_name(scope, max_length=63, separator="-")
    name = re.sub(r"[^A-Za-z0-9-]", "", raw).strip("-")
    name = re.sub(r"-{2,}", "-", name)
    return name[:63].rstrip("-") or "triton"


def define_volume_key(
    scope: Construct, supplied: kms.IKey | None, *, local_storage: bool, endpoint_name: str, account: str
) -> tuple[kms.IKey | kms.CfnKey | None, str | None]:
    """The ML storage volume's key (child "VolumeKey" of ``scope``, rotation on, retained) and its ARN:
    none on local-NVMe types (hardware-encrypted; CreateEndpointConfig refuses a KmsKeyId), the supplied
    one, else a new key."""
    if local_storage:
        return None, None
    if supplied is not None:
        return supplied, supplied.key_arn
    key = kms.CfnKey(
        scope,
        "VolumeKey",
        enable_key_rotation=True,
        description=f"cdk-triton: ML storage volume of endpoint {endpoint_name}",
        key_policy={
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": f"arn:{pseudo().partition}:iam::{account}:root"},
                    "Action": "kms:*",
                    "Resource": "*",
                }
            ],
        },
    )
    key.apply_removal_policy(cdk.RemovalPolicy.RETAIN)
    return key, key.attr_arn


def default_namespace(metrics: TritonMetrics | None, endpoint_name: str) -> TritonMetrics | None:
    """Triton's metrics namespace defaults to ``Triton/<endpoint name>`` when the name is known."""
    if metrics is None or metrics.namespace is not None or is_token(endpoint_name):
        return metrics
    return TritonMetrics(
        namespace=f"Triton/{endpoint_name}",
        log_retention=metrics.log_retention,
        encryption_key=metrics.encryption_key,
        metrics_port=metrics.metrics_port,
    )
