"""An asynchronous endpoint's ``AsyncInferenceConfig``: S3 output and failure locations, KMS, SNS topics.

``TritonEndpoint(async_inference=AsyncInferenceOptions(...))`` (or the ``async:`` block of the endpoint in
``models.yaml``, which the manifest carries) defines, under the endpoint's child ``Async``:

* ``Key``: a KMS key (rotation on, retained) encrypting the results (``KmsKeyId``) and both topics;
* ``SuccessTopic`` / ``ErrorTopic``: SNS topics encrypted with that key, whose policy refuses publishing
  without TLS; the model's execution role may ``sns:Publish`` to these two topics only;
* the output and failure locations ``s3://<bucket>/<prefix>async/<endpoint>/{output,failure}/`` (the
  layout's keys, ``config.layout.async_*_key``); the role may ``s3:PutObject`` there and
  ``s3:GetObject`` the payloads under ``async/<endpoint>/input/``.

The limits and the defaults are ``config.async_inference``'s (sources and dates there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from cdk_triton.config import async_inference, layout
from cdk_triton.config.async_inference import AsyncValues
from cdk_triton.config.modes import HostingMode
from cdk_triton.constructs._tokens import pseudo
from cdk_triton.constructs.checks.modes import refused
from cdk_triton.errors import TritonValidationError

if TYPE_CHECKING:
    from aws_cdk import aws_s3 as s3
    from aws_cdk import aws_sns as sns

    from cdk_triton.constructs.artifacts import ArtifactsConfig
    from cdk_triton.constructs.model import TritonModel
    from cdk_triton.constructs.scaling import TritonScaling
    from cdk_triton.constructs.shadow import ShadowVariant

__all__ = ["AsyncInferenceOptions", "AsyncResources", "AsyncVerification"]


@dataclass(frozen=True, kw_only=True, slots=True)
class AsyncInferenceOptions:
    """An asynchronous endpoint (``AsyncInferenceConfig``): the keys of the ``async:`` block, and where.

    Attributes:
        bucket: where the results, failures and (for cdk-triton's clients) payloads go. Default: the
            artifacts' bucket, under the artifact location's prefix.
        encryption_key: the key of the results and of both topics. Default: a new key (rotation on).
        max_concurrent_invocations_per_instance: 1..1000. Default: derived from the default model's
            instance groups and batching (``config.async_inference.derived_max_concurrency``).
        invocation_timeout: how long one request may run (1 s..1 h), sent by the deploy verification.
            Default: SageMaker's (15 minutes).
        min_capacity: the fewest instances; 0 scales to zero and adds the scale-from-zero step policy.
            Default: 0.
        max_capacity: the most instances. Default: 1.
        backlog_per_instance: the ``ApproximateBacklogSizePerInstance`` target. Default: 5.
        notifications: SNS success and error topics. Default: true.
    """

    bucket: s3.IBucket | None = None
    encryption_key: kms.IKey | None = None
    max_concurrent_invocations_per_instance: int | None = None
    invocation_timeout: cdk.Duration | None = None
    min_capacity: int = 0
    max_capacity: int = 1
    backlog_per_instance: float = async_inference.DEFAULT_BACKLOG_PER_INSTANCE
    notifications: bool = True

    @staticmethod
    def from_values(values: AsyncValues) -> AsyncInferenceOptions:
        """The options of a manifest's (models.yaml's) ``async:`` block."""
        return AsyncInferenceOptions(
            max_concurrent_invocations_per_instance=values.max_concurrent_invocations_per_instance,
            invocation_timeout=cdk.Duration.seconds(values.invocation_timeout_s)
            if values.invocation_timeout_s is not None
            else None,
            min_capacity=values.min_instances,
            max_capacity=values.max_instances,
            backlog_per_instance=values.backlog_per_instance,
            notifications=values.notifications,
        )

    @staticmethod
    def resolve(
        given: AsyncInferenceOptions | None, declared: AsyncValues | None
    ) -> AsyncInferenceOptions | None:
        """The endpoint's options: the prop, else the manifest's ``async:`` block, else None (real-time)."""
        if given is not None:
            return given
        return AsyncInferenceOptions.from_values(declared) if declared is not None else None

    def values(self) -> AsyncValues:
        """The same keys as ``config.async_inference.AsyncValues`` (checked by its rules)."""
        timeout = self.invocation_timeout
        return AsyncValues(
            max_concurrent_invocations_per_instance=self.max_concurrent_invocations_per_instance,
            invocation_timeout_s=int(timeout.to_seconds()) if timeout is not None else None,
            min_instances=self.min_capacity,
            max_instances=self.max_capacity,
            backlog_per_instance=float(self.backlog_per_instance),
            notifications=self.notifications,
        )


def check_async_inference(options: AsyncInferenceOptions) -> list[TritonValidationError]:
    """``InvalidAsyncInference`` for every value outside its limit (the props' names)."""
    names = {
        "min_instances": "async_inference.min_capacity",
        "max_instances": "async_inference.max_capacity",
        "invocation_timeout_s": "async_inference.invocation_timeout",
    }
    out = []
    for p in async_inference.value_problems(options.values()):
        prop = names.get(p.prop, f"async_inference.{p.prop}")
        out.append(
            TritonValidationError(
                p.code, prop=prop, value=p.value, problem=p.problem, allowed=p.allowed, fix=p.fix
            )
        )
    return out


def check_async_endpoint(
    options: AsyncInferenceOptions | None, row: HostingMode, shadow: ShadowVariant | None
) -> list[TritonValidationError]:
    """The async options within their limits, on a mode whose row supports them, without a shadow."""
    if options is None:
        return []
    refusal = refused(
        row,
        "async_inference",
        prop="async_inference",
        allowed="asynchronous inference on a {supported} endpoint",
        fix="build a {supported} endpoint of the model (models.yaml mode: {supported}) and "
        "pass async_inference there",
    )
    if refusal:
        return refusal
    errs = check_async_inference(options)
    if shadow is not None:
        errs.append(
            TritonValidationError(
                "InvalidAsyncInference",
                prop="shadow",
                value=shadow.model.node.path,
                problem="is a shadow variant on an asynchronous endpoint, which SageMaker refuses",
                allowed="a shadow on a real-time endpoint",
                fix="drop shadow, or async_inference",
            )
        )
    return errs


class Scalable(Protocol):
    """An endpoint whose variant scales (``TritonEndpoint.auto_scale``)."""

    def auto_scale(self, *, min_capacity: int = 1, max_capacity: int) -> TritonScaling: ...


def scale_on_backlog(endpoint: Scalable, options: AsyncInferenceOptions | None) -> None:
    """An asynchronous endpoint scales on its backlog, down to ``min_capacity`` (0: scale to zero)."""
    if options is None:
        return
    scaling = endpoint.auto_scale(min_capacity=options.min_capacity, max_capacity=options.max_capacity)
    scaling.scale_on_backlog_per_instance(options.backlog_per_instance)


@dataclass(frozen=True, kw_only=True, slots=True)
class AsyncResources:
    """What :func:`define_async` defined: the EndpointConfig property and the resources behind it."""

    config: sagemaker.CfnEndpointConfig.AsyncInferenceConfigProperty
    key: kms.IKey
    success_topic: sns.Topic | None
    error_topic: sns.Topic | None
    bucket_name: str
    output_uri: str
    failure_uri: str
    input_uri: str
    input_key: str
    output_key: str
    failure_key: str
    max_concurrency: int
    invocation_timeout_s: int | None


def define_async(
    scope: Construct,
    options: AsyncInferenceOptions,
    *,
    endpoint_name: str,
    artifacts: ArtifactsConfig,
    model: TritonModel,
    gpu_count: int,
) -> AsyncResources:
    """Define the key, the topics and the grants under ``scope`` (child ``Async``); return the config."""
    art = artifacts
    here = Construct(scope, "Async")
    key: kms.IKey = options.encryption_key or kms.Key(
        here,
        "Key",
        enable_key_rotation=True,
        description=f"cdk-triton: asynchronous results and notifications of endpoint {endpoint_name}",
        removal_policy=cdk.RemovalPolicy.RETAIN,
    )
    bucket_name = options.bucket.bucket_name if options.bucket is not None else art.bucket_name
    bucket_arn = options.bucket.bucket_arn if options.bucket is not None else art.bucket_arn
    prefix = art.location_prefix
    input_key = prefix + layout.async_input_key(endpoint_name)
    output_key = prefix + layout.async_output_key(endpoint_name)
    failure_key = prefix + layout.async_failure_key(endpoint_name)
    success = error = None
    if options.notifications:
        success = _topic(here, "SuccessTopic", key, f"{endpoint_name}: asynchronous results")
        error = _topic(here, "ErrorTopic", key, f"{endpoint_name}: asynchronous failures")
    model.grant_async_inference(
        bucket_arn=bucket_arn,
        input_prefix=input_key,
        output_prefixes=[output_key, failure_key],
        kms_key_arn=key.key_arn,
        topic_arns=[t.topic_arn for t in (success, error) if t is not None],
    )
    concurrency = options.max_concurrent_invocations_per_instance or async_inference.derived_max_concurrency(
        {n: m.config for n, m in art.built_models.items()}, art.default_model, gpu_count
    )
    notification = (
        sagemaker.CfnEndpointConfig.AsyncInferenceNotificationConfigProperty(
            success_topic=success.topic_arn, error_topic=error.topic_arn
        )
        if success is not None and error is not None
        else None
    )
    config = sagemaker.CfnEndpointConfig.AsyncInferenceConfigProperty(
        output_config=sagemaker.CfnEndpointConfig.AsyncInferenceOutputConfigProperty(
            s3_output_path=f"s3://{bucket_name}/{output_key}",
            s3_failure_path=f"s3://{bucket_name}/{failure_key}",
            kms_key_id=key.key_arn,
            notification_config=notification,
        ),
        client_config=sagemaker.CfnEndpointConfig.AsyncInferenceClientConfigProperty(
            max_concurrent_invocations_per_instance=concurrency
        ),
    )
    timeout = options.invocation_timeout
    return AsyncResources(
        config=config,
        key=key,
        success_topic=success,
        error_topic=error,
        bucket_name=bucket_name,
        output_uri=f"s3://{bucket_name}/{output_key}",
        failure_uri=f"s3://{bucket_name}/{failure_key}",
        input_uri=f"s3://{bucket_name}/{input_key}",
        input_key=input_key,
        output_key=output_key,
        failure_key=failure_key,
        max_concurrency=concurrency,
        invocation_timeout_s=int(timeout.to_seconds()) if timeout is not None else None,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class AsyncVerification:
    """An asynchronous endpoint's verification: where the sample goes and its answer comes back.

    Attributes:
        bucket_name: the bucket of the three prefixes.
        input_key / output_key / failure_key: the prefixes (``.../async/<endpoint>/{input,output,failure}/``).
        results_key_arn: the KMS key of the results (``kms:Decrypt``).
        invocation_timeout_s: ``InvocationTimeoutSeconds`` sent with each request. Default: SageMaker's.
    """

    bucket_name: str
    input_key: str
    output_key: str
    failure_key: str
    results_key_arn: str
    invocation_timeout_s: int | None = None

    def spec(self) -> dict[str, str]:
        """The handler's ``Async`` keys."""
        out = {
            "Async": "true",
            "AsyncInputPrefix": f"s3://{self.bucket_name}/{self.input_key}",
            "AsyncOutputPrefix": f"s3://{self.bucket_name}/{self.output_key}",
            "AsyncFailurePrefix": f"s3://{self.bucket_name}/{self.failure_key}",
        }
        if self.invocation_timeout_s is not None:
            out["InvocationTimeoutSeconds"] = str(self.invocation_timeout_s)
        return out

    def statements(self, endpoint_arn: str, artifacts_key_arn: str | None) -> list[dict[str, Any]]:
        """Exactly what the asynchronous path needs: put the sample, invoke, read output and failure."""
        bucket = f"arn:{pseudo().partition}:s3:::{self.bucket_name}"
        out: list[dict[str, Any]] = [
            {
                "Sid": "InvokeEndpointAsync",
                "Effect": "Allow",
                "Action": "sagemaker:InvokeEndpointAsync",
                "Resource": endpoint_arn,
            },
            {
                "Sid": "PutAsyncInput",
                "Effect": "Allow",
                "Action": "s3:PutObject",
                "Resource": f"{bucket}/{self.input_key}*",
            },
            {
                "Sid": "ReadAsyncResults",
                "Effect": "Allow",
                "Action": "s3:GetObject",
                "Resource": [f"{bucket}/{self.output_key}*", f"{bucket}/{self.failure_key}*"],
            },
            {
                "Sid": "DecryptAsyncResults",
                "Effect": "Allow",
                "Action": "kms:Decrypt",
                "Resource": self.results_key_arn,
            },
        ]
        if artifacts_key_arn:  # the input goes to the artifacts' bucket, encrypted with its key
            out.append(
                {
                    "Sid": "EncryptAsyncInput",
                    "Effect": "Allow",
                    "Action": "kms:GenerateDataKey",
                    "Resource": artifacts_key_arn,
                }
            )
        return out

    def wildcards(self) -> list[str]:
        """The three prefix resources (each a wildcard the AwsSolutions-IAM5 acknowledgment names)."""
        bucket = f"arn:{pseudo().partition}:s3:::{self.bucket_name}"
        return [f"{bucket}/{k}*" for k in (self.input_key, self.output_key, self.failure_key)]


def async_verification(resources: AsyncResources | None) -> AsyncVerification | None:
    """An asynchronous endpoint's verification locations (``TritonVerification``), else None."""
    if resources is None:
        return None
    return AsyncVerification(
        bucket_name=resources.bucket_name,
        input_key=resources.input_key,
        output_key=resources.output_key,
        failure_key=resources.failure_key,
        results_key_arn=resources.key.key_arn,
        invocation_timeout_s=resources.invocation_timeout_s,
    )


def _topic(scope: Construct, cid: str, key: kms.IKey, display: str) -> sns.Topic:
    """An SNS topic encrypted with ``key``, refusing publishers without TLS (cdk-nag AwsSolutions-SNS3)."""
    from aws_cdk import aws_sns as sns  # only for an asynchronous endpoint's notifications

    topic = sns.Topic(scope, cid, master_key=key, enforce_ssl=True, display_name=display[:100])
    return topic


def grant_read_results(resources: AsyncResources, grantee: iam.IGrantable, bucket_arn: str) -> iam.Grant:
    """Let ``grantee`` read the results and failures (and decrypt them)."""
    grant = iam.Grant.add_to_principal(
        grantee=grantee,
        actions=["s3:GetObject"],
        resource_arns=[f"{bucket_arn}/{resources.output_key}*", f"{bucket_arn}/{resources.failure_key}*"],
    )
    resources.key.grant_decrypt(grantee)
    return grant
