"""A complete Triton endpoint: Model, EndpointConfig and Endpoint, checked against the instance type."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk import aws_ssm as ssm
from constructs import Construct, Node

from cdk_triton.config import tables
from cdk_triton.config.server_options import ServerOptions
from cdk_triton.config.tables import InstanceTypeInfo
from cdk_triton.constructs import _nag
from cdk_triton.constructs._tokens import is_token, known_duration, pseudo, remember_stack_info, seconds
from cdk_triton.constructs.artifacts import ModelArtifacts
from cdk_triton.constructs.errors import validation_error
from cdk_triton.constructs.image import TritonImage
from cdk_triton.constructs.model import TritonMetrics, TritonModel, _DefersAcknowledgments
from cdk_triton.errors import TritonValidationError, TritonValidationErrors, raise_all

if TYPE_CHECKING:
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_s3 as s3

    from cdk_triton.constructs.scaling import TritonScaling

_INSTANCE_TYPE = re.compile(r"^ml\.[a-z0-9-]+\.[a-z0-9]+$")
_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
#: CloudFormation's resource limit per stack.
CFN_RESOURCE_LIMIT = 500
#: SSM standard-tier parameter value limit (characters).
SSM_STANDARD_LIMIT = 4096
#: Bake time between deployment steps unless told.
DEFAULT_WAIT_INTERVAL = known_duration(cdk.Duration.minutes(5), 300)
#: The largest CfnOutput value the construct publishes the target-model map in directly.
OUTPUT_MAP_LIMIT = 1024


def _is_token(value: Any) -> bool:
    return is_token(value)


# ---------------------------------------------------------------------------- value objects


@dataclass(frozen=True, kw_only=True, slots=True)
class DataCapture:
    """Capture requests and responses of the endpoint to S3.

    Attributes:
        bucket: the destination bucket.
        prefix: key prefix. Default: ``data-capture/``.
        sampling_percentage: 0-100. Default: 100.
        capture_input / capture_output: what to capture. Default: both.
        encryption_key: KMS key for the captured objects. Default: the bucket's encryption.
    """

    bucket: s3.IBucket
    prefix: str = "data-capture/"
    sampling_percentage: int = 100
    capture_input: bool = True
    capture_output: bool = True
    encryption_key: kms.IKey | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TrafficStep:
    """A canary or linear step: a share of the fleet (percent) or a number of instances."""

    percent: int | None = None
    instance_count: int | None = None

    def render(self) -> sagemaker.CfnEndpoint.CapacitySizeProperty:
        if self.percent is not None:
            return sagemaker.CfnEndpoint.CapacitySizeProperty(type="CAPACITY_PERCENT", value=self.percent)
        return sagemaker.CfnEndpoint.CapacitySizeProperty(
            type="INSTANCE_COUNT", value=self.instance_count or 1
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class DeploymentGuardrails:
    """How endpoint updates roll out (``DeploymentConfig``), with auto-rollback alarms.

    Build one with ``all_at_once``, ``canary``, ``linear`` (blue/green) or ``rolling``. Rollback
    alarms default to the endpoint's 5XX-error alarm the construct creates.

    Attributes:
        traffic_routing: ``ALL_AT_ONCE``, ``CANARY``, ``LINEAR`` (blue/green) or None.
        step: canary size or linear step size.
        rolling_batch: rolling update batch size (rolling updates only).
        wait_interval: bake time between steps.
        termination_wait: blue/green: wait before terminating the old fleet.
        maximum_execution_timeout: the whole update's limit.
        rollback_alarms: CloudWatch alarms that roll the update back. Default: a 5XX-error alarm.
    """

    traffic_routing: str | None = None
    step: TrafficStep | None = None
    rolling_batch: TrafficStep | None = None
    wait_interval: cdk.Duration = DEFAULT_WAIT_INTERVAL
    termination_wait: cdk.Duration | None = None
    maximum_execution_timeout: cdk.Duration | None = None
    rollback_alarms: tuple[cloudwatch.IAlarm, ...] | None = None

    @staticmethod
    def all_at_once(
        *,
        wait_interval: cdk.Duration = DEFAULT_WAIT_INTERVAL,
        rollback_alarms: Sequence[cloudwatch.IAlarm] | None = None,
    ) -> DeploymentGuardrails:
        """Blue/green: shift all traffic at once, bake, roll back on alarm."""
        return DeploymentGuardrails(
            traffic_routing="ALL_AT_ONCE",
            wait_interval=wait_interval,
            rollback_alarms=_tuple(rollback_alarms),
        )

    @staticmethod
    def canary(
        *,
        percent: int | None = 10,
        instance_count: int | None = None,
        wait_interval: cdk.Duration = DEFAULT_WAIT_INTERVAL,
        rollback_alarms: Sequence[cloudwatch.IAlarm] | None = None,
    ) -> DeploymentGuardrails:
        """Blue/green canary: a share (<= 50 %) first, then the rest."""
        return DeploymentGuardrails(
            traffic_routing="CANARY",
            step=_step(percent, instance_count),
            wait_interval=wait_interval,
            rollback_alarms=_tuple(rollback_alarms),
        )

    @staticmethod
    def linear(
        *,
        percent: int | None = 20,
        instance_count: int | None = None,
        wait_interval: cdk.Duration = DEFAULT_WAIT_INTERVAL,
        rollback_alarms: Sequence[cloudwatch.IAlarm] | None = None,
    ) -> DeploymentGuardrails:
        """Blue/green linear: equal steps with a bake time between them."""
        return DeploymentGuardrails(
            traffic_routing="LINEAR",
            step=_step(percent, instance_count),
            wait_interval=wait_interval,
            rollback_alarms=_tuple(rollback_alarms),
        )

    @staticmethod
    def rolling(
        *,
        percent: int | None = 25,
        instance_count: int | None = None,
        wait_interval: cdk.Duration = DEFAULT_WAIT_INTERVAL,
        rollback_alarms: Sequence[cloudwatch.IAlarm] | None = None,
    ) -> DeploymentGuardrails:
        """Rolling update in batches of the fleet."""
        return DeploymentGuardrails(
            rolling_batch=_step(percent, instance_count),
            wait_interval=wait_interval,
            rollback_alarms=_tuple(rollback_alarms),
        )


def _step(percent: int | None, instance_count: int | None) -> TrafficStep:
    """A traffic step or rolling batch: an instance count when given, else a share of the fleet."""
    return TrafficStep(percent=None if instance_count else percent, instance_count=instance_count)


def _tuple(alarms: Sequence[cloudwatch.IAlarm] | None) -> tuple[cloudwatch.IAlarm, ...] | None:
    return None if alarms is None else tuple(alarms)


@dataclass(frozen=True, kw_only=True, slots=True)
class ResourceHeadroom:
    """How many CloudFormation resources a stack holds against the limit."""

    stack: str
    resources: int
    limit: int = CFN_RESOURCE_LIMIT

    @property
    def remaining(self) -> int:
        return self.limit - self.resources

    @property
    def used_fraction(self) -> float:
        return self.resources / self.limit


def _count_resources(stack: cdk.Stack, node: Node | None = None) -> int:
    return sum(1 for c in (node or stack.node).find_all() if isinstance(c, cdk.CfnResource))


def resource_headroom(stack: cdk.Stack, *, annotate: bool = False) -> ResourceHeadroom:
    """Count the CloudFormation resources of ``stack`` (optionally as an info annotation).

    Resources of nested stacks below ``stack`` are counted too (a conservative estimate).
    """
    count = _count_resources(stack)
    head = ResourceHeadroom(stack=stack.node.path, resources=count)
    if annotate:
        cdk.Annotations.of(stack).add_info(
            f"cdk-triton: {count} of {head.limit} CloudFormation resources used ({head.remaining} left)"
        )
    return head


# ---------------------------------------------------------------------------- the endpoint


class TritonEndpoint(Construct, _DefersAcknowledgments):
    """Defines a SageMaker real-time endpoint serving NVIDIA Triton: Model, EndpointConfig, Endpoint.

    Checks the instance type against the artifacts (GPU architecture of TensorRT plans, single-GPU
    MME, the release's minimum compute capability), encrypts the volume with a KMS key on EBS-only
    instance types, and publishes the MME TargetModel map (CfnOutput + SSM parameters).

    Example::

        endpoint = TritonEndpoint(self, "Classifier",
            artifacts=ModelArtifacts.from_manifest("build/out/manifest.json", "classifier"),
            instance_type="ml.g5.xlarge")
        endpoint.auto_scale(max_capacity=4).scale_on_gpu_utilization(target_percent=60)
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        artifacts: ModelArtifacts,
        instance_type: str,
        image: TritonImage | None = None,
        role: iam.IRole | None = None,
        server_options: ServerOptions | None = None,
        environment: Mapping[str, str] | None = None,
        metrics: TritonMetrics | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        network_isolation: bool = False,
        endpoint_name: str | None = None,
        variant_name: str = "AllTraffic",
        instance_count: int = 1,
        volume_encryption_key: kms.IKey | None = None,
        volume_size: cdk.Size | None = None,
        container_startup_health_check_timeout: cdk.Duration | None = None,
        model_data_download_timeout: cdk.Duration | None = None,
        data_capture: DataCapture | None = None,
        deployment: DeploymentGuardrails | None = None,
    ) -> None:
        """Define the endpoint.

        Args:
            artifacts: the model repository (``ModelArtifacts.from_manifest(path, "classifier")``).
            instance_type: ``ml.<family>.<size>``, e.g. ``ml.g5.xlarge``.
            image: Default: the SageMaker Triton image of the manifest's (or the default) release.
            role: execution role. Default: a new least-privilege role.
            server_options: Triton settings. Default: container defaults.
            environment: extra container variables. Default: none.
            metrics: publish Triton's metrics to CloudWatch. Default: off.
            vpc / vpc_subnets / security_groups / network_isolation: see ``TritonModel``.
            endpoint_name: Default: a deterministic name derived from the construct path (a
                physical name, so the role's log grant can name the endpoint's log group).
            variant_name: production variant name; keep it stable across updates. Default: AllTraffic.
            instance_count: initial instances. Default: 1.
            volume_encryption_key: KMS key of the ML storage volume, only for EBS-only instance
                types. Default: a new key with rotation on EBS-only types, none on local-NVMe types.
            volume_size: ML storage volume (EBS-only types). Default: SageMaker's default.
            container_startup_health_check_timeout: 60 s..1 h. Default: SageMaker's default.
            model_data_download_timeout: 60 s..1 h. Default: SageMaker's default.
            data_capture: capture requests/responses to S3. Default: off.
            deployment: blue/green or rolling update guardrails. Default: SageMaker's default update.
        """
        super().__init__(scope, construct_id)
        self._stack = remember_stack_info(self, scope)
        self.instance_type = instance_type
        self.variant_name = variant_name
        self.instance_count = instance_count
        self.instance_info: InstanceTypeInfo | None = (
            None if _is_token(instance_type) else tables.instance_type_info(instance_type)
        )
        if endpoint_name is None:
            endpoint_name = _default_name(self)
        self.endpoint_name: str = endpoint_name

        errs: list[TritonValidationError] = []
        errs += self._check_names(endpoint_name, variant_name)
        errs += self._check_variant(
            instance_count,
            volume_encryption_key,
            volume_size,
            container_startup_health_check_timeout,
            model_data_download_timeout,
            data_capture,
        )
        if deployment is not None:
            errs += self._check_deployment(deployment)
        if metrics is not None and metrics.namespace is None and not _is_token(endpoint_name):
            metrics = TritonMetrics(
                namespace=f"Triton/{endpoint_name}",
                log_retention=metrics.log_retention,
                encryption_key=metrics.encryption_key,
                metrics_port=metrics.metrics_port,
            )
        try:
            self.model = TritonModel(
                self,
                "Model",
                artifacts=artifacts,
                image=image,
                role=role,
                server_options=server_options,
                environment=environment,
                metrics=metrics,
                vpc=vpc,
                vpc_subnets=vpc_subnets,
                security_groups=security_groups,
                network_isolation=network_isolation,
                endpoint_name=endpoint_name,
            )
        except TritonValidationError as err:
            errs += err.errors if isinstance(err, TritonValidationErrors) else [err]
            raise_all(errs)
            raise
        art = self.model.artifacts
        errs += self._check_instance(art.gpu_architectures, art.packaged_instance_types, art.is_multi_model)
        raise_all(errs)

        # Volume encryption follows the AWS rule: a key only for EBS-only instance types.
        self.volume_encryption_key: kms.IKey | kms.CfnKey | None = None
        volume_key_arn: str | None = None
        if not self.has_local_storage and volume_encryption_key is not None:
            self.volume_encryption_key = volume_encryption_key
            volume_key_arn = volume_encryption_key.key_arn
        elif not self.has_local_storage:
            account = self._stack.account
            key = kms.CfnKey(
                self,
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
            self.volume_encryption_key = key
            volume_key_arn = key.attr_arn

        variant: dict[str, Any] = {
            "variant_name": variant_name,
            "model_name": self.model.model_name,
            "initial_instance_count": instance_count,
            "initial_variant_weight": 1,
            "instance_type": instance_type,
        }
        if container_startup_health_check_timeout is not None:
            variant["container_startup_health_check_timeout_in_seconds"] = int(
                container_startup_health_check_timeout.to_seconds()
            )
        if model_data_download_timeout is not None:
            variant["model_data_download_timeout_in_seconds"] = int(model_data_download_timeout.to_seconds())
        if volume_size is not None:
            variant["volume_size_in_gb"] = int(volume_size.to_gibibytes())
        capture = None
        if data_capture is not None:
            capture = self._data_capture(data_capture)
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            production_variants=[sagemaker.CfnEndpointConfig.ProductionVariantProperty(**variant)],
            kms_key_id=volume_key_arn,
            data_capture_config=capture,
        )
        kms_acks: list[cdk.Acknowledgment] = []
        if self.has_local_storage:
            reason = (
                f"{instance_type} has local NVMe storage, which is hardware-encrypted; "
                "CreateEndpointConfig rejects a KmsKeyId for it"
            )
            kms_acks = [cdk.Acknowledgment(id=rule, reason=reason) for rule in _nag.ENDPOINT_CONFIG_KMS_RULES]
        # One call for the model's IAM5 findings and the EndpointConfig's KMS rule (each exact id).
        self.model._flush_acks(scope=self, extra=kms_acks)

        self._rollback_alarm: cloudwatch.CfnAlarm | None = None
        deployment_config = None
        if deployment is not None:
            deployment_config = self._deployment_config(deployment)
        self.resource = sagemaker.CfnEndpoint(
            self,
            "Resource",
            endpoint_config_name=self.endpoint_config.attr_endpoint_config_name,
            endpoint_name=endpoint_name,
            deployment_config=deployment_config,
        )
        # node.default_child is self.resource: CDK finds the child with id "Resource" by itself.
        self._endpoint_arn: str | None = None
        self._attr_endpoint_name: str | None = None

        self.target_model_map: dict[str, str] = dict(art.target_models)
        self.target_model_parameters: list[ssm.CfnParameter] = []
        if art.is_multi_model and self.target_model_map:
            self._publish_target_models()

        self.scaling: TritonScaling | None = None  # set by auto_scale()
        self._check_headroom()

    # ------------------------------------------------------------------ facts
    @property
    def endpoint_arn(self) -> str:
        """The endpoint ARN (``Ref`` of the endpoint)."""
        if self._endpoint_arn is None:
            self._endpoint_arn = self.resource.ref
        return self._endpoint_arn

    @property
    def attr_endpoint_name(self) -> str:
        """``GetAtt EndpointName``: the name as a reference, so users of it depend on the endpoint."""
        if self._attr_endpoint_name is None:
            self._attr_endpoint_name = self.resource.attr_endpoint_name
        return self._attr_endpoint_name

    @property
    def is_multi_model(self) -> bool:
        return self.model.is_multi_model

    @property
    def gpu_count(self) -> int:
        """GPUs per instance (0 for CPU instance types)."""
        return self.instance_info.gpu_count if self.instance_info else 0

    @property
    def has_local_storage(self) -> bool:
        """Whether the instance type has local NVMe storage (no volume KMS key allowed)."""
        return _has_local_storage(self.instance_type, self.instance_info)

    @property
    def metrics_namespace(self) -> str | None:
        """The CloudWatch namespace of Triton's own metrics (None when not published)."""
        return self.model.metrics_namespace

    # ------------------------------------------------------------------ checks
    def _err(self, code: str, **kw: Any) -> TritonValidationError:
        return validation_error(self, code, **kw)

    def _check_names(self, endpoint_name: str, variant_name: str) -> list[TritonValidationError]:
        errs = []
        if not _is_token(endpoint_name) and not _NAME.fullmatch(endpoint_name):
            errs.append(
                self._err(
                    "InvalidEndpointName",
                    prop="endpoint_name",
                    value=endpoint_name,
                    problem="is not a SageMaker endpoint name",
                    allowed="1-63 letters, digits and '-', starting and ending with a letter or digit",
                    fix="drop the other characters, or leave endpoint_name unset for a generated name",
                )
            )
        if not _is_token(variant_name) and not _NAME.fullmatch(variant_name):
            errs.append(
                self._err(
                    "InvalidVariantName",
                    prop="variant_name",
                    value=variant_name,
                    problem="is not a SageMaker production variant name",
                    allowed="1-63 letters, digits and '-', starting and ending with a letter or digit",
                    fix="use e.g. 'AllTraffic' and keep it stable across updates",
                )
            )
        return errs

    def _check_instance(
        self, archs: list[str], packaged: list[str], multi_model: bool
    ) -> list[TritonValidationError]:
        it = self.instance_type
        if _is_token(it):
            return []
        if not _INSTANCE_TYPE.fullmatch(it):
            return [
                self._err(
                    "InvalidInstanceType",
                    prop="instance_type",
                    value=it,
                    problem="is not a SageMaker hosting instance type",
                    allowed="'ml.<family>.<size>' such as ml.g5.xlarge, ml.g4dn.xlarge, ml.c6i.xlarge",
                    fix="add the 'ml.' prefix and check the family and size",
                )
            ]
        errs: list[TritonValidationError] = []
        info = self.instance_info
        version = self.model.triton_version
        if info is not None and version is not None:
            try:
                min_cc = tables.release(version).min_compute_capability.value
            except TritonValidationError:
                min_cc = None
            if min_cc and float(info.compute_capability) < float(min_cc):
                errs.append(
                    self._err(
                        "ComputeCapabilityTooLow",
                        prop="instance_type",
                        value=it,
                        problem=f"has {info.gpu} GPUs (compute capability {info.compute_capability}), below the "
                        f"{min_cc} Triton {version} requires",
                        allowed=f"GPU instance types with compute capability >= {min_cc} (g4dn, g5, g6, p3, p4d, p5)",
                        fix="choose e.g. ml.g4dn.xlarge or ml.g5.xlarge",
                    )
                )
        family = it.split(".")[1]
        if info is None and family[:1] in ("g", "p") and not family.startswith("perf"):
            cdk.Annotations.of(self).add_warning_v2(
                "cdk-triton:UnknownGpuInstanceType",
                f"{it} looks like a GPU instance type but is not in the vendored instance table; "
                "GPU checks (architecture, GPU count, GPUUtilization scaling) treat it as a CPU type",
            )
        if archs:
            if info is None:
                kind = (
                    "has no GPU" if not family.startswith(("g", "p")) else "is not a known GPU instance type"
                )
                errs.append(
                    self._err(
                        "GpuArtifactsOnCpuInstance",
                        prop="instance_type",
                        value=it,
                        problem=f"{kind}, and the artifacts hold TensorRT plans built for {', '.join(archs)}",
                        allowed=", ".join(_types_for_archs(archs)) or "a GPU instance type",
                        fix="deploy on a GPU instance of that architecture, or rebuild portable (ONNX) artifacts",
                    )
                )
            elif info.sm not in archs:
                errs.append(
                    self._err(
                        "GpuArchitectureMismatch",
                        prop="instance_type",
                        value=it,
                        problem=f"has {info.gpu} ({info.sm}), and the TensorRT plans were built for {', '.join(archs)}",
                        allowed=", ".join(_types_for_archs(archs)) or ", ".join(archs),
                        fix="deploy on an instance with that GPU, or rebuild the plans for "
                        f"{info.sm} (instance_types: [{it}] in build/models.yaml)",
                    )
                )
        if multi_model and info is not None and info.gpu_count > 1:
            errs.append(
                self._err(
                    "MmeNeedsSingleGpu",
                    prop="instance_type",
                    value=it,
                    problem=f"has {info.gpu_count} GPUs; GPU multi-model endpoints need a single-GPU instance",
                    allowed=", ".join(tables.confirmed_mme_gpu_types()),
                    fix=f"use e.g. ml.{info.family}.xlarge, or a single-model endpoint",
                )
            )
        elif multi_model and info is not None and it not in tables.confirmed_mme_gpu_types():
            cdk.Annotations.of(self).add_warning_v2(
                "cdk-triton:MmeGpuUnconfirmed",
                f"{it} is not among the GPU instance types documented for multi-model endpoints "
                f"({', '.join(tables.confirmed_mme_gpu_types())}); check that SageMaker accepts it",
            )
        if packaged and it not in packaged and not errs:
            cdk.Annotations.of(self).add_warning_v2(
                "cdk-triton:InstanceTypeNotPackaged",
                f"the artifacts were packaged for {', '.join(packaged)}, not {it}",
            )
        return errs

    def _check_variant(
        self,
        instance_count: int,
        key: kms.IKey | None,
        volume_size: cdk.Size | None,
        startup: cdk.Duration | None,
        download: cdk.Duration | None,
        capture: DataCapture | None,
    ) -> list[TritonValidationError]:
        errs = []
        if instance_count < 1:
            errs.append(
                self._err(
                    "InvalidInstanceCount",
                    prop="instance_count",
                    value=instance_count,
                    problem="is below 1",
                    allowed="an integer >= 1",
                    fix="pass instance_count=1 or more",
                )
            )
        if key is not None and self.has_local_storage:
            errs.append(
                self._err(
                    "KmsKeyOnLocalStorage",
                    prop="volume_encryption_key",
                    value=key.node.path,
                    problem=f"is set, and {self.instance_type} has local NVMe storage (hardware-encrypted); "
                    "CreateEndpointConfig rejects a KmsKeyId for it",
                    allowed="no key on local-NVMe types (g4dn, g5, g6, g6e, p3dn, p4d, p5, *d CPU types)",
                    fix="drop volume_encryption_key, or choose an EBS-only instance type such as ml.p3.2xlarge",
                )
            )
        if volume_size is not None:
            gib = volume_size.to_gibibytes()
            if self.has_local_storage or not 1 <= gib <= 512:
                errs.append(
                    self._err(
                        "InvalidVolumeSize",
                        prop="volume_size",
                        value=f"{gib} GiB",
                        problem="is not a valid ML storage volume size for this instance type"
                        + (" (it has local NVMe storage)" if self.has_local_storage else ""),
                        allowed="1..512 GiB, on EBS-only instance types",
                        fix="drop volume_size on local-NVMe types, or pass cdk.Size.gibibytes(1..512)",
                    )
                )
        for prop, dur in (
            ("container_startup_health_check_timeout", startup),
            ("model_data_download_timeout", download),
        ):
            if dur is not None and not 60 <= dur.to_seconds() <= 3600:
                errs.append(
                    self._err(
                        "InvalidTimeout",
                        prop=prop,
                        value=f"{dur.to_seconds()} s",
                        problem="is outside SageMaker's range",
                        allowed="60..3600 seconds",
                        fix="pass cdk.Duration.minutes(1..60)",
                    )
                )
        if capture is not None and not 0 <= capture.sampling_percentage <= 100:
            errs.append(
                self._err(
                    "InvalidSamplingPercentage",
                    prop="data_capture.sampling_percentage",
                    value=capture.sampling_percentage,
                    problem="is not a percentage",
                    allowed="0..100",
                    fix="pass e.g. 20 to capture one request in five",
                )
            )
        return errs

    def _check_deployment(self, d: DeploymentGuardrails) -> list[TritonValidationError]:
        errs = []
        policies = int(d.traffic_routing is not None) + int(d.rolling_batch is not None)
        if policies != 1:
            errs.append(
                self._err(
                    "InvalidDeploymentPolicy",
                    prop="deployment",
                    value=policies and "blue/green and rolling",
                    problem="must set exactly one update policy",
                    allowed="DeploymentGuardrails.all_at_once / canary / linear / rolling",
                    fix="build the guardrails with one of the DeploymentGuardrails factories",
                )
            )
        if d.traffic_routing is not None and d.traffic_routing not in ("ALL_AT_ONCE", "CANARY", "LINEAR"):
            errs.append(
                self._err(
                    "InvalidDeploymentPolicy",
                    prop="deployment.traffic_routing",
                    value=d.traffic_routing,
                    problem="is not a blue/green traffic routing",
                    allowed="ALL_AT_ONCE, CANARY, LINEAR",
                    fix="use DeploymentGuardrails.all_at_once / canary / linear",
                )
            )
        for prop, step in (("deployment.step", d.step), ("deployment.rolling_batch", d.rolling_batch)):
            if step is None:
                if prop == "deployment.step" and d.traffic_routing in ("CANARY", "LINEAR"):
                    errs.append(
                        self._err(
                            "InvalidTrafficStep",
                            prop=prop,
                            value=None,
                            problem="is missing",
                            allowed="a percent (1..100) or an instance count >= 1",
                            fix="pass percent=... or instance_count=...",
                        )
                    )
                continue
            if (
                (step.percent is None) == (step.instance_count is None)
                or (step.percent is not None and not 1 <= step.percent <= 100)
                or (step.instance_count is not None and step.instance_count < 1)
            ):
                errs.append(
                    self._err(
                        "InvalidTrafficStep",
                        prop=prop,
                        value=step.percent if step.percent is not None else step.instance_count,
                        problem="is not a valid step",
                        allowed="exactly one of a percent (1..100) or an instance count >= 1",
                        fix="pass percent=... or instance_count=...",
                    )
                )
            elif (
                d.traffic_routing == "CANARY"
                and prop == "deployment.step"
                and (
                    (step.percent is not None and step.percent > 50)
                    or (step.instance_count is not None and step.instance_count * 2 > self.instance_count)
                )
            ):
                errs.append(
                    self._err(
                        "CanaryTooLarge",
                        prop="deployment.step",
                        value=f"{step.percent} %"
                        if step.percent is not None
                        else f"{step.instance_count} instances",
                        problem=f"is more than half of the fleet ({self.instance_count} instances)",
                        allowed="a canary of at most 50 % of the instances",
                        fix="pass a smaller canary, e.g. percent=10, or use linear()",
                    )
                )
        errs += self._check_step_shares(d)
        limit = 28800 if d.rolling_batch is not None else 14400
        for prop, dur, lo, hi in (
            ("deployment.wait_interval", d.wait_interval, 0, 3600),
            ("deployment.termination_wait", d.termination_wait, 0, 3600),
            ("deployment.maximum_execution_timeout", d.maximum_execution_timeout, 600, limit),
        ):
            if dur is not None and not lo <= seconds(dur) <= hi:
                errs.append(
                    self._err(
                        "InvalidTimeout",
                        prop=prop,
                        value=f"{seconds(dur)} s",
                        problem="is outside SageMaker's range",
                        allowed=f"{lo}..{hi} seconds",
                        fix=f"pass a cdk.Duration between {lo} and {hi} seconds",
                    )
                )
        if d.rollback_alarms is not None and len(d.rollback_alarms) > 10:
            errs.append(
                self._err(
                    "TooManyRollbackAlarms",
                    prop="deployment.rollback_alarms",
                    value=len(d.rollback_alarms),
                    problem="exceeds SageMaker's limit",
                    allowed="at most 10 alarms",
                    fix="combine alarms in a CompositeAlarm",
                )
            )
        return errs

    def _check_step_shares(self, d: DeploymentGuardrails) -> list[TritonValidationError]:
        """SageMaker's share of the fleet per step: linear 10-50 %, rolling 5-50 % (canary: CanaryTooLarge)."""
        if d.traffic_routing == "LINEAR":
            prop, step, lo, name = "deployment.step", d.step, 10, "a linear step"
        elif d.rolling_batch is not None and d.traffic_routing is None:
            prop, step, lo, name = "deployment.rolling_batch", d.rolling_batch, 5, "a rolling batch"
        else:
            return []
        if (
            step is None
            or (step.percent is None) == (step.instance_count is None)
            or (step.percent is not None and not 1 <= step.percent <= 100)
            or (step.instance_count is not None and step.instance_count < 1)
        ):
            return []  # reported as InvalidTrafficStep above
        if step.percent is not None:
            share, value = float(step.percent), f"{step.percent} %"
        else:
            share, value = (
                100.0 * (step.instance_count or 0) / self.instance_count,
                f"{step.instance_count} instances",
            )
        if lo <= share <= 50:
            return []
        return [
            self._err(
                "InvalidTrafficStep",
                prop=prop,
                value=value,
                problem=f"is {share:.0f} % of the fleet ({self.instance_count} instances)",
                allowed=f"{name} of {lo}..50 % of the instances",
                fix=f"pass percent={lo}..50, or an instance_count within that share of instance_count",
            )
        ]

    # ------------------------------------------------------------------ pieces
    def _data_capture(self, dc: DataCapture) -> sagemaker.CfnEndpointConfig.DataCaptureConfigProperty:
        prefix = dc.prefix.lstrip("/")
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        self.model.grant_data_capture(
            dc.bucket.bucket_arn, prefix, dc.encryption_key.key_arn if dc.encryption_key else None
        )
        modes = [m for m, on in (("Input", dc.capture_input), ("Output", dc.capture_output)) if on]
        return sagemaker.CfnEndpointConfig.DataCaptureConfigProperty(
            enable_capture=True,
            initial_sampling_percentage=dc.sampling_percentage,
            destination_s3_uri=f"s3://{dc.bucket.bucket_name}/{prefix}",
            capture_options=[
                sagemaker.CfnEndpointConfig.CaptureOptionProperty(capture_mode=m) for m in modes
            ],
            kms_key_id=dc.encryption_key.key_arn if dc.encryption_key else None,
        )

    def _deployment_config(self, d: DeploymentGuardrails) -> sagemaker.CfnEndpoint.DeploymentConfigProperty:
        alarms = d.rollback_alarms
        if alarms is None:
            self._rollback_alarm = cloudwatch.CfnAlarm(
                self,
                "RollbackAlarm",
                alarm_description=f"cdk-triton: 5XX errors on {self.endpoint_name} roll a deployment back",
                namespace="AWS/SageMaker",
                metric_name="Invocation5XXErrors",
                dimensions=self._cfn_dimensions(),
                statistic="Sum",
                period=60,
                threshold=1,
                evaluation_periods=1,
                comparison_operator="GreaterThanOrEqualToThreshold",
                treat_missing_data="notBreaching",
            )
            names = [self._rollback_alarm.ref]
        else:
            names = [a.alarm_name for a in alarms]
        rollback = sagemaker.CfnEndpoint.AutoRollbackConfigProperty(
            alarms=[sagemaker.CfnEndpoint.AlarmProperty(alarm_name=n) for n in names]
        )
        wait = seconds(d.wait_interval)
        max_exec = int(d.maximum_execution_timeout.to_seconds()) if d.maximum_execution_timeout else None
        if d.rolling_batch is not None:
            return sagemaker.CfnEndpoint.DeploymentConfigProperty(
                auto_rollback_configuration=rollback,
                rolling_update_policy=sagemaker.CfnEndpoint.RollingUpdatePolicyProperty(
                    maximum_batch_size=d.rolling_batch.render(),
                    wait_interval_in_seconds=wait,
                    maximum_execution_timeout_in_seconds=max_exec,
                ),
            )
        routing: dict[str, Any] = {"type": d.traffic_routing, "wait_interval_in_seconds": wait}
        if d.traffic_routing == "CANARY" and d.step is not None:
            routing["canary_size"] = d.step.render()
        if d.traffic_routing == "LINEAR" and d.step is not None:
            routing["linear_step_size"] = d.step.render()
        return sagemaker.CfnEndpoint.DeploymentConfigProperty(
            auto_rollback_configuration=rollback,
            blue_green_update_policy=sagemaker.CfnEndpoint.BlueGreenUpdatePolicyProperty(
                traffic_routing_configuration=sagemaker.CfnEndpoint.TrafficRoutingConfigProperty(**routing),
                termination_wait_in_seconds=int(d.termination_wait.to_seconds())
                if d.termination_wait
                else None,
                maximum_execution_timeout_in_seconds=max_exec,
            ),
        )

    def _publish_target_models(self) -> None:
        """logical name -> TargetModel, as SSM parameters under one path (and a CfnOutput).

        Each parameter holds a JSON object of at most 4 KB (standard tier); a big map is split into
        several parameters ``<path>/000``, ``<path>/001``...; clients read them all with
        ``GetParametersByPath(Path=<path>)`` and merge the objects.
        """
        base = f"/cdk-triton/{self.endpoint_name}/target-models"
        self.target_model_parameter_path = base
        chunks = _chunk_map(self.target_model_map, SSM_STANDARD_LIMIT)
        scope = Construct(self, "TargetModels")
        for i, chunk in enumerate(chunks):
            self.target_model_parameters.append(
                ssm.CfnParameter(
                    scope,
                    f"Part{i:03d}",
                    type="String",
                    name=f"{base}/{i:03d}",
                    value=json.dumps(chunk, separators=(",", ":"), sort_keys=True),
                    tier="Standard",
                    description=f"cdk-triton: TargetModel map of endpoint {self.endpoint_name} (part {i + 1}/{len(chunks)})",
                )
            )
        cdk.CfnOutput(
            scope,
            "ParameterPath",
            value=base,
            description="SSM path of the logical model name -> TargetModel map (GetParametersByPath)",
        )
        text = json.dumps(self.target_model_map, separators=(",", ":"), sort_keys=True)
        if len(text) <= OUTPUT_MAP_LIMIT:
            cdk.CfnOutput(scope, "Map", value=text, description="logical model name -> TargetModel")

    def _check_headroom(self) -> None:
        stack = self._stack.stack
        head = ResourceHeadroom(stack="", resources=_count_resources(stack, self._stack.node))
        if head.resources > head.limit:
            mine = sum(1 for c in self.node.find_all() if isinstance(c, cdk.CfnResource))
            raise self._err(
                "StackResourceLimit",
                prop="stack",
                value=f"{head.resources} resources",
                problem=f"exceeds CloudFormation's limit of {head.limit} resources per stack",
                allowed=f"at most {head.limit} resources; this endpoint defines {mine}, so one stack holds "
                f"about {max(1, head.limit // max(mine, 1))} such endpoints",
                fix=f"split the endpoints into stacks of at most {max(1, (head.limit * 4 // 5) // max(mine, 1))} "
                f"endpoints each (e.g. one Stack per group of endpoints) and create {self.node.id} in a new stack",
            )
        if head.used_fraction >= 0.8:
            cdk.Annotations.of(stack).add_warning_v2(
                "cdk-triton:ResourceHeadroom",
                f"{head.resources} of {head.limit} CloudFormation resources used after {self.node.path}; "
                "put further endpoints in another stack",
            )

    # ------------------------------------------------------------------ metrics
    def _cfn_dimensions(self) -> list[cloudwatch.CfnAlarm.DimensionProperty]:
        return [
            cloudwatch.CfnAlarm.DimensionProperty(name="EndpointName", value=self.endpoint_name),
            cloudwatch.CfnAlarm.DimensionProperty(name="VariantName", value=self.variant_name),
        ]

    def metric(
        self,
        metric_name: str,
        *,
        namespace: str = "AWS/SageMaker",
        statistic: str = "Sum",
        period: cdk.Duration | None = None,
        label: str | None = None,
    ) -> cloudwatch.Metric:
        """A metric of this endpoint's variant (dimensions EndpointName and VariantName)."""
        return cloudwatch.Metric(
            namespace=namespace,
            metric_name=metric_name,
            statistic=statistic,
            period=period or cdk.Duration.minutes(1),
            label=label,
            dimensions_map={"EndpointName": self.endpoint_name, "VariantName": self.variant_name},
        )

    def _host(self, name: str, **kw: Any) -> cloudwatch.Metric:
        kw.setdefault("statistic", "Average")
        return self.metric(name, namespace="/aws/sagemaker/Endpoints", **kw)

    def metric_invocations(self, **kw: Any) -> cloudwatch.Metric:
        """Invocations (Sum)."""
        return self.metric("Invocations", **kw)

    def metric_invocations_per_instance(self, **kw: Any) -> cloudwatch.Metric:
        """InvocationsPerInstance (Sum)."""
        return self.metric("InvocationsPerInstance", **kw)

    def metric_model_latency(self, *, statistic: str = "p99", **kw: Any) -> cloudwatch.Metric:
        """ModelLatency in microseconds (p99 unless told)."""
        return self.metric("ModelLatency", statistic=statistic, **kw)

    def metric_overhead_latency(self, *, statistic: str = "p99", **kw: Any) -> cloudwatch.Metric:
        """OverheadLatency in microseconds (p99 unless told)."""
        return self.metric("OverheadLatency", statistic=statistic, **kw)

    def metric_invocation4xx_errors(self, **kw: Any) -> cloudwatch.Metric:
        """Invocation4XXErrors (Sum)."""
        return self.metric("Invocation4XXErrors", **kw)

    def metric_invocation5xx_errors(self, **kw: Any) -> cloudwatch.Metric:
        """Invocation5XXErrors (Sum)."""
        return self.metric("Invocation5XXErrors", **kw)

    def metric_cpu_utilization(self, **kw: Any) -> cloudwatch.Metric:
        """CPUUtilization (0-100 x vCPUs, Average)."""
        return self._host("CPUUtilization", **kw)

    def metric_memory_utilization(self, **kw: Any) -> cloudwatch.Metric:
        """MemoryUtilization (Average)."""
        return self._host("MemoryUtilization", **kw)

    def metric_gpu_utilization(self, **kw: Any) -> cloudwatch.Metric:
        """GPUUtilization (0-100 x GPU count, Average)."""
        return self._host("GPUUtilization", **kw)

    def metric_gpu_memory_utilization(self, **kw: Any) -> cloudwatch.Metric:
        """GPUMemoryUtilization (0-100 x GPU count, Average)."""
        return self._host("GPUMemoryUtilization", **kw)

    def metric_disk_utilization(self, **kw: Any) -> cloudwatch.Metric:
        """DiskUtilization (Average)."""
        return self._host("DiskUtilization", **kw)

    def metric_loaded_model_count(self, **kw: Any) -> cloudwatch.Metric:
        """LoadedModelCount (MME, Average)."""
        return self._host("LoadedModelCount", **kw)

    def metric_model_cache_hit(self, **kw: Any) -> cloudwatch.Metric:
        """ModelCacheHit (MME, Sum)."""
        return self.metric("ModelCacheHit", **kw)

    def metric_model_loading_wait_time(self, **kw: Any) -> cloudwatch.Metric:
        """ModelLoadingWaitTime in microseconds (MME, Average)."""
        kw.setdefault("statistic", "Average")
        return self.metric("ModelLoadingWaitTime", **kw)

    def metric_model_loading_time(self, **kw: Any) -> cloudwatch.Metric:
        """ModelLoadingTime in microseconds (MME, Average)."""
        kw.setdefault("statistic", "Average")
        return self.metric("ModelLoadingTime", **kw)

    def metric_model_downloading_time(self, **kw: Any) -> cloudwatch.Metric:
        """ModelDownloadingTime in microseconds (MME, Average)."""
        kw.setdefault("statistic", "Average")
        return self.metric("ModelDownloadingTime", **kw)

    def metric_model_unloading_time(self, **kw: Any) -> cloudwatch.Metric:
        """ModelUnloadingTime in microseconds (MME, Average)."""
        kw.setdefault("statistic", "Average")
        return self.metric("ModelUnloadingTime", **kw)

    # ------------------------------------------------------------------ grants & scaling
    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allow ``grantee`` to call ``sagemaker:InvokeEndpoint`` on this endpoint."""
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=["sagemaker:InvokeEndpoint"], resource_arns=[self.endpoint_arn]
        )

    def auto_scale(self, *, min_capacity: int = 1, max_capacity: int) -> TritonScaling:
        """Define the scalable target of the variant; add policies on the returned TritonScaling."""
        from cdk_triton.constructs.scaling import TritonScaling  # scaling imports this module

        self.scaling = TritonScaling(
            self, "Scaling", endpoint=self, min_capacity=min_capacity, max_capacity=max_capacity
        )
        return self.scaling


# ---------------------------------------------------------------------------- helpers


def _default_name(scope: Construct) -> str:
    raw = cdk.Names.unique_resource_name(scope, max_length=63, separator="-")
    name = re.sub(r"[^A-Za-z0-9-]", "", raw).strip("-")
    name = re.sub(r"-{2,}", "-", name)
    return name[:63].rstrip("-") or "triton"


_LOCAL_NVME_CPU = re.compile(r"^[a-z]+\d+[a-z]*d[a-z]*$")


def _has_local_storage(instance_type: str, info: InstanceTypeInfo | None) -> bool:
    if info is not None:
        return info.local_nvme_storage
    if _is_token(instance_type) or instance_type.count(".") != 2:
        return False
    family = instance_type.split(".")[1]
    # CPU types with a 'd' in the suffix (c5d, m5d, r5d, m6id, c6id ...) carry instance-store NVMe.
    return bool(_LOCAL_NVME_CPU.fullmatch(family)) and not family.startswith(("inf", "trn"))


def _types_for_archs(archs: list[str]) -> list[str]:
    return sorted(name for name, info in tables.instance_types().items() if info.sm in archs)


def _chunk_map(mapping: dict[str, str], limit: int) -> list[dict[str, str]]:
    chunks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for key, value in sorted(mapping.items()):
        trial = {**current, key: value}
        if current and len(json.dumps(trial, separators=(",", ":"))) > limit:
            chunks.append(current)
            current = {key: value}
        else:
            current = trial
    if current:
        chunks.append(current)
    return chunks
