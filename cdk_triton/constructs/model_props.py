"""The props of a Triton model, written once.

``TritonModel(scope, id, artifacts=..., **props)`` takes them; ``TritonEndpoint`` takes the same
``**props`` (with ``artifacts``) as sugar for the model it defines, or a ``TritonModel`` as ``model=``
(aws-cdk's ``Model -> EndpointConfig -> Endpoint``: the endpoint holds a model, it does not copy its
props). Defaults are applied once, by ``TritonModel``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs

from cdk_triton.config.server_options import ServerOptions
from cdk_triton.constructs._kwargs import refuse_unknown
from cdk_triton.constructs.image import TritonImage

if TYPE_CHECKING:
    from aws_cdk import aws_ec2 as ec2

__all__ = ["MODEL_PROPS", "TritonMetrics", "TritonModelProps", "check_prop_names"]


@dataclass(frozen=True, kw_only=True, slots=True)
class TritonMetrics:
    """Publish Triton's own Prometheus metrics to CloudWatch (AWS-built images 23.07+).

    Sets SAGEMAKER_TRITON_ALLOW_METRICS, _PUBLISH_METRICS_TO_CLOUDWATCH, _CLOUDWATCH_LOG_GROUP,
    _CLOUDWATCH_METRIC_NAMESPACE and _METRICS_PORT, creates the log group and grants exactly what
    publishing needs (logs on that group, cloudwatch:PutMetricData limited to the namespace).

    Attributes:
        namespace: the CloudWatch namespace. Default: ``Triton/<endpoint name>`` for the model a
            ``TritonEndpoint`` defines from its props; ``Triton/<model unique id>`` for a
            ``TritonModel`` defined on its own (its environment is shared by every endpoint given it).
        log_retention: retention of the metrics log group. Default: one month.
        encryption_key: KMS key of the log group (its key policy must allow CloudWatch Logs).
            Default: CloudWatch Logs' own encryption.
        metrics_port: Triton's metrics port. Default: 8002.
    """

    namespace: str | None = None
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH
    encryption_key: kms.IKey | None = None
    metrics_port: int | None = None


class TritonModelProps(TypedDict, total=False):
    """The props of the Triton server a model runs, besides its ``artifacts`` (all optional).

    Attributes:
        image: the Triton image. Default: ``TritonImage.for_version`` of the manifest's Triton
            version, else ``DEFAULT_TRITON_VERSION``.
        role: the execution role; it gets the same grants. Default: a new role.
        server_options: Triton settings rendered to the container environment. Default: the
            container defaults; multi_model and the default model follow the artifacts.
        environment: extra container variables; unknown ``SAGEMAKER_TRITON_*`` names and the ones
            ServerOptions manages are rejected. Default: none.
        metrics: publish Triton's metrics to CloudWatch. Default: not published.
        vpc: run the model in this VPC. Default: no VPC.
        vpc_subnets: subnets in ``vpc``. Default: the VPC's private subnets.
        security_groups: security groups in ``vpc``. Default: a new one allowing all outbound.
        network_isolation: no outbound network from the container. Default: False.
        acknowledged_advisories: CVE id -> why the risk of that NVIDIA advisory of the image's release is
            accepted. A critical advisory (CVSS >= 9.0) not acknowledged fails synth
            (``CriticalAdvisory``); what is acknowledged is recorded in the model's template
            ``Metadata`` under ``cdk_triton``. Merged with the manifest's (``models.yaml``) and the
            ``cdk-triton:acknowledged_advisories`` context's; this prop wins. Default: none.
    """

    image: TritonImage | None
    role: iam.IRole | None
    server_options: ServerOptions | None
    environment: Mapping[str, str] | None
    metrics: TritonMetrics | None
    vpc: ec2.IVpc | None
    vpc_subnets: ec2.SubnetSelection | None
    security_groups: Sequence[ec2.ISecurityGroup] | None
    network_isolation: bool
    acknowledged_advisories: Mapping[str, str] | None


#: The names of ``TritonModelProps``.
MODEL_PROPS: frozenset[str] = frozenset(TritonModelProps.__optional_keys__)


def check_prop_names(owner: str, props: Mapping[str, object]) -> None:
    """Refuse a keyword that is no ``TritonModelProps`` name (a ``TypeError``, as Python's own)."""
    refuse_unknown(owner, props, MODEL_PROPS)
