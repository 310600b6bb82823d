"""A complete Triton endpoint: Model, EndpointConfig and Endpoint, checked against the instance type.

The checks are functions in the ``checks`` package, the deployment guardrails and data capture in
``deployment.py``, the metrics in ``metrics.py``; the scalable target (``scaling.py``) receives the
endpoint's names, never the endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Unpack, cast

import aws_cdk as cdk
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from cdk_triton._lazy import lazy_exports
from cdk_triton.config import modes
from cdk_triton.config.tables import InstanceTypeInfo
from cdk_triton.constructs import _nag
from cdk_triton.constructs import modes as mode_constructs
from cdk_triton.constructs._tokens import remember_stack_info
from cdk_triton.constructs.artifacts import ModelArtifacts
from cdk_triton.constructs.checks import models as model_checks
from cdk_triton.constructs.checks.headroom import CFN_RESOURCE_LIMIT
from cdk_triton.constructs.checks.names import check_names
from cdk_triton.constructs.checks.variant import check_variant
from cdk_triton.constructs.endpoint_base import (
    EndpointAttributes,
    ImportedTritonEndpoint,
    ITritonEndpoint,
    TritonEndpointBase,
)
from cdk_triton.constructs.endpoint_defaults import (
    default_endpoint_name,
    default_namespace,
    define_volume_key,
)
from cdk_triton.constructs.model import DefersAcknowledgments, TritonModel
from cdk_triton.constructs.model_props import TritonModelProps, check_prop_names
from cdk_triton.constructs.name_maps import (
    OUTPUT_MAP_LIMIT,
    SSM_STANDARD_LIMIT,
    publish_target_models,
    target_model_parameter_path,
)
from cdk_triton.constructs.scaling import TritonScaling
from cdk_triton.constructs.template_limits import (
    ResourceHeadroom,
    check_endpoint_headroom,
    resource_headroom,
)
from cdk_triton.constructs.variant import annotate as annotate_variant
from cdk_triton.constructs.variant_hosting import (
    InstanceChoice,
    VariantHosting,
    choose_instances,
    decide_hosting,
)
from cdk_triton.errors import TritonValidationError, TritonValidationErrors, raise_at

# What a feature alone needs (asynchronous inference, guardrails and data capture, a shadow, the deploy
# verification) is imported where the feature is defined: an endpoint without it pays nothing for it.
if TYPE_CHECKING:
    from cdk_triton.constructs.async_inference import AsyncInferenceOptions, AsyncResources
    from cdk_triton.constructs.deployment import (
        DEFAULT_WAIT_INTERVAL,
        DataCapture,
        DeploymentGuardrails,
        TrafficStep,
    )
    from cdk_triton.constructs.shadow import ShadowVariant
    from cdk_triton.constructs.verification import TritonVerification, VerificationCheck
    from cdk_triton.constructs.verification_sample import VerificationSample

#: The names this module re-exports from the feature modules, loaded on first use (PEP 562).
__getattr__ = lazy_exports(
    __name__,
    {
        "AsyncInferenceOptions": "cdk_triton.constructs.async_inference",
        "DEFAULT_WAIT_INTERVAL": "cdk_triton.constructs.deployment",
        "DataCapture": "cdk_triton.constructs.deployment",
        "DeploymentGuardrails": "cdk_triton.constructs.deployment",
        "TrafficStep": "cdk_triton.constructs.deployment",
    },
)

__all__ = [
    "AsyncInferenceOptions",
    "CFN_RESOURCE_LIMIT",
    "DEFAULT_WAIT_INTERVAL",
    "OUTPUT_MAP_LIMIT",
    "SSM_STANDARD_LIMIT",
    "DataCapture",
    "DeploymentGuardrails",
    "EndpointAttributes",
    "ResourceHeadroom",
    "TrafficStep",
    "ITritonEndpoint",
    "TritonEndpoint",
    "resource_headroom",
]

# ---------------------------------------------------------------------------- the endpoint


class TritonEndpoint(TritonEndpointBase, DefersAcknowledgments):
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

    variant_name: str
    instance_type: str
    instance_count: int

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        instance_type: str | None = None,
        model: TritonModel | None = None,
        artifacts: ModelArtifacts | None = None,
        endpoint_name: str | None = None,
        variant_name: str = "AllTraffic",
        instance_count: int = 1,
        volume_encryption_key: kms.IKey | None = None,
        volume_size: cdk.Size | None = None,
        container_startup_health_check_timeout: cdk.Duration | None = None,
        model_data_download_timeout: cdk.Duration | None = None,
        inference_ami_version: str | None = None,
        data_capture: DataCapture | None = None,
        deployment: DeploymentGuardrails | None = None,
        shadow: ShadowVariant | None = None,
        async_inference: AsyncInferenceOptions | None = None,
        instance_pools: Sequence[str] | None = None,
        instance_provision_timeout: cdk.Duration | None = None,
        **model_props: Unpack[TritonModelProps],
    ) -> None:
        """Define the endpoint.

        Args:
            instance_type: ``ml.<family>.<size>``; exclusive with ``instance_pools`` (``InstanceTypeOrPools``).
                Default: with neither given, the manifest's (models.yaml's ``instance_pools:``, else its
                one ``instance_types`` entry: ``variant_hosting.choose_instances``); else required.
            model: the ``TritonModel`` to serve (it may serve other endpoints too). Default: a
                model this endpoint defines (child "Model") from ``artifacts`` and ``model_props``.
            artifacts: the model repository of the model this endpoint defines
                (``ModelArtifacts.from_manifest(path, "classifier")``). Required unless ``model``.
            endpoint_name: Default: a deterministic name derived from the construct path (a
                physical name, so the role's log grant can name the endpoint's log group).
            variant_name: production variant name; keep it stable across updates. Default: AllTraffic.
            instance_count: initial instances. Default: 1.
            volume_encryption_key: KMS key of the ML storage volume, only for EBS-only instance
                types. Default: a new key with rotation on EBS-only types, none on local-NVMe types.
            volume_size: ML storage volume (EBS-only types). Default: SageMaker's default.
            container_startup_health_check_timeout: 60 s..1 h. Default: SageMaker's default.
            model_data_download_timeout: 60 s..1 h. Default: SageMaker's default.
            inference_ami_version: the host image (``InferenceAmiVersion``); pin one for production.
                Default: the models.yaml key, else the host decision (``config.gpu_hosts``).
            data_capture: capture requests/responses to S3. Default: off.
            deployment: blue/green or rolling update guardrails. Default: SageMaker's default update.
            shadow: a candidate model that takes a copy of the traffic (``ShadowProductionVariants``);
                single-model endpoints only, no rolling update beside it. Default: none.
            async_inference: an asynchronous endpoint (``AsyncInferenceConfig``: S3 results, KMS, SNS
                topics, backlog scaling down to zero; ``async_inference.py``), where the mode's row
                supports it (SingleModel). Default: the manifest's ``async:`` block, else real-time.
            instance_pools: up to five instance types, highest priority first (default: the manifest's
                ``instance_pools:`` when neither this nor ``instance_type`` is given): the variant carries
                ``InstancePools`` instead of ``InstanceType`` and SageMaker falls back to the next pool when
                one has no capacity (``config.instance_pools``). Each pool is checked as ``instance_type``
                is (release, TensorRT plans, GPU memory, host decision: one ``InferenceAmiVersion`` for
                all). SingleModel only. Default: none (``instance_type``).
            instance_provision_timeout: ``VariantInstanceProvisionTimeoutInSeconds`` (5 min..1 h), with
                ``instance_pools`` only. Default: SageMaker's.
            model_props: ``TritonModelProps`` of the model this endpoint defines (image, role,
                server_options, environment, metrics, vpc, ...); not with ``model``. The metrics
                namespace defaults to ``Triton/<endpoint name>``.
        """
        check_prop_names("TritonEndpoint", model_props)
        super().__init__(scope, construct_id)
        self._stack = remember_stack_info(self, scope)
        choice = self._set_instances(
            artifacts, instance_type, instance_pools, instance_provision_timeout, instance_count
        )
        self.variant_name = variant_name
        self.endpoint_name: str = endpoint_name if endpoint_name is not None else default_endpoint_name(self)
        variant_props: dict[str, Any] = {  # the production variant's settings: checked, then defined
            "volume_encryption_key": volume_encryption_key,
            "volume_size": volume_size,
            "container_startup_health_check_timeout": container_startup_health_check_timeout,
            "model_data_download_timeout": model_data_download_timeout,
            "data_capture": data_capture,
        }
        errs = list(choice.errors) + self._check_own_props(
            endpoint_name=self.endpoint_name, deployment=deployment, **variant_props
        )
        self.model: TritonModel = self._model_of(model, artifacts, model_props, errs)
        self.variant_hosting: VariantHosting = decide_hosting(
            choice,
            self.model,
            variant_name=variant_name,
            variant_props=variant_props,
            inference_ami_version=inference_ami_version,
            deployment=deployment,
            async_inference=async_inference,
            shadow=shadow,
        )
        self._settle(self.variant_hosting, errs)
        self._bind_models(model is not None, shadow, self.endpoint_name)
        self.async_resources: AsyncResources | None = None
        self._define_resources(volume_encryption_key, data_capture, deployment)
        self.scaling: TritonScaling | None = None  # set by auto_scale()
        self._scale_on_backlog()
        check_endpoint_headroom(self, self._stack.stack)

    # ------------------------------------------------------------------ steps
    def _scale_on_backlog(self) -> None:
        """An asynchronous endpoint scales on its backlog (``async_inference.scale_on_backlog``)."""
        if self.async_options is not None:
            from cdk_triton.constructs.async_inference import scale_on_backlog

            scale_on_backlog(self, self.async_options)

    def _set_instances(
        self,
        artifacts: ModelArtifacts | None,
        instance_type: str | None,
        instance_pools: Sequence[str] | None,
        provision_timeout: cdk.Duration | None,
        instance_count: int,
    ) -> InstanceChoice:
        """The variant's hosting's instance choice (``variant_hosting.choose_instances``) as the endpoint's attributes
        (``instance_type``, ``instance_pools`` ...); its errors raised at once when there is no instance
        type to check the rest against, else returned in the choice for the endpoint to raise."""
        choice = choose_instances(
            artifacts,
            instance_type=instance_type,
            instance_pools=instance_pools,
            provision_timeout=provision_timeout,
            instance_count=instance_count,
        )
        if not choice.instance_type_given:
            self._raise(list(choice.errors))
        self.instance_type = choice.instance_type
        self.instance_pools: tuple[str, ...] = choice.instance_pools
        self.instance_provision_timeout = choice.provision_timeout
        self.instance_count = choice.instance_count
        self.instance_info: InstanceTypeInfo | None = choice.instance_info
        self._instances = choice
        return choice

    def _settle(self, hosting: VariantHosting, errs: list[TritonValidationError]) -> None:
        """The hosting's warnings annotated, every error of the endpoint and its hosting raised at once, the
        variants' infos and warnings annotated (``variant.annotate``)."""
        self._annotate(hosting.warnings)
        self._variant, self._shadow = hosting.variant, hosting.shadow
        if self._shadow is not None:
            annotate_variant(self, self._shadow)
        self._raise(errs + hosting.all_errors)
        annotate_variant(self, self._variant)

    def _annotate(self, warnings: Sequence[tuple[str, str]]) -> None:
        for warning_id, message in warnings:
            cdk.Annotations.of(self).add_warning_v2(warning_id, message)

    @property
    def async_options(self) -> AsyncInferenceOptions | None:
        """The asynchronous endpoint's options (the prop, else the manifest's ``async:``); None: real-time."""
        return self.variant_hosting.async_options

    def _model_of(
        self,
        model: TritonModel | None,
        artifacts: ModelArtifacts | None,
        model_props: TritonModelProps,
        errs: list[TritonValidationError],
    ) -> TritonModel:
        """The given model, else the one defined from the props (``ModelGivenTwice`` / ``ModelRequired``
        raised with ``errs`` when the source is wrong)."""
        wrong_source = model_checks.check_model_source(
            model.node.path if model is not None else None, artifacts=artifacts is not None, props=model_props
        )
        if wrong_source:
            self._raise(errs + wrong_source)
        if model is not None:
            return model
        return self._define_model(errs, cast(ModelArtifacts, artifacts), model_props)

    def _bind_models(self, given: bool, shadow: ShadowVariant | None, endpoint_name: str) -> None:
        """A model defined elsewhere (and the shadow's) learns of this endpoint: its log group, in the
        model's own policy (a model this endpoint defined knows it already)."""
        if given:
            self.model.bind_endpoint(self, endpoint_name)
        if shadow is not None:
            shadow.model.bind_endpoint(self, endpoint_name)

    def _define_resources(
        self,
        volume_encryption_key: kms.IKey | None,
        data_capture: DataCapture | None,
        deployment: DeploymentGuardrails | None,
    ) -> None:
        """The EndpointConfig, its acknowledgments, the Endpoint and an MME's TargetModel map, in order."""
        self._define_endpoint_config(volume_encryption_key, data_capture)
        self._acknowledge_nag_findings()
        self._define_endpoint(deployment)
        self._define_target_models(self.model.artifacts)

    def _check_own_props(
        self,
        *,
        endpoint_name: str,
        volume_encryption_key: kms.IKey | None,
        volume_size: cdk.Size | None,
        container_startup_health_check_timeout: cdk.Duration | None,
        model_data_download_timeout: cdk.Duration | None,
        data_capture: DataCapture | None,
        deployment: DeploymentGuardrails | None,
    ) -> list[TritonValidationError]:
        """The endpoint's own props: names, production variant, data capture, deployment guardrails."""
        variant_name, instance_type, instance_count = (
            self.variant_name,
            self.instance_type,
            self.instance_count,
        )
        errs = check_names(endpoint_name, variant_name)
        errs += check_variant(
            instance_type=instance_type,
            local_storage=self.has_local_storage,
            instance_count=instance_count,
            volume_encryption_key_path=volume_encryption_key.node.path
            if volume_encryption_key is not None and self.has_local_storage
            else None,
            volume_size_gib=volume_size.to_gibibytes() if volume_size is not None else None,
            container_startup_health_check_timeout_seconds=_seconds_or_none(
                container_startup_health_check_timeout
            ),
            model_data_download_timeout_seconds=_seconds_or_none(model_data_download_timeout),
            sampling_percentage=data_capture.sampling_percentage if data_capture is not None else None,
        )
        if data_capture is not None:
            from cdk_triton.constructs.checks.data_capture import check_data_capture

            errs += check_data_capture(data_capture, data_capture.bucket.bucket_name)
        if deployment is not None:
            from cdk_triton.constructs.checks.deployment import check_deployment

            errs += check_deployment(deployment, instance_count=instance_count)
        return errs

    def _raise(self, errs: list[TritonValidationError]) -> None:
        """Locate the pure checks' errors at this construct and raise them all (nothing when none)."""
        raise_at(self, errs)

    def _define_model(
        self, errs: list[TritonValidationError], artifacts: ModelArtifacts, model_props: TritonModelProps
    ) -> TritonModel:
        """The Model from the props; its errors join the endpoint's own so that one synth reports them all."""
        props = model_props.copy()
        props["metrics"] = default_namespace(model_props.get("metrics"), self.endpoint_name)
        try:
            return TritonModel(self, "Model", artifacts=artifacts, endpoint_name=self.endpoint_name, **props)
        except TritonValidationError as err:
            self._raise(errs + (err.errors if isinstance(err, TritonValidationErrors) else [err]))
            raise

    def _volume_key(self, supplied: kms.IKey | None) -> str | None:
        """Volume encryption follows the AWS rule: a key only for EBS-only instance types (ARN or None)."""
        self.volume_encryption_key, arn = define_volume_key(
            self,
            supplied,
            local_storage=self.has_local_storage,
            endpoint_name=self.endpoint_name,
            account=self._stack.account,
        )
        return arn

    def _define_endpoint_config(
        self, volume_encryption_key: kms.IKey | None, data_capture: DataCapture | None
    ) -> None:
        """The EndpointConfig: the production variant (``variant.py`` built it), the volume key, data capture."""
        volume_key_arn = self._volume_key(volume_encryption_key)
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            production_variants=[self._variant.production_variant],
            shadow_production_variants=[self._shadow.production_variant] if self._shadow else None,
            kms_key_id=volume_key_arn,
            data_capture_config=self._data_capture(data_capture) if data_capture is not None else None,
            async_inference_config=self._async_config(),
        )

    def _async_config(self) -> sagemaker.CfnEndpointConfig.AsyncInferenceConfigProperty | None:
        if self.async_options is None:
            return None
        from cdk_triton.constructs.async_inference import define_async

        self.async_resources = define_async(
            self,
            self.async_options,
            endpoint_name=self.endpoint_name,
            artifacts=self.model.artifacts,
            model=self.model,
            gpu_count=self.gpu_count,
        )
        return self.async_resources.config

    def _data_capture(self, dc: DataCapture) -> sagemaker.CfnEndpointConfig.DataCaptureConfigProperty:
        from cdk_triton.constructs.deployment import data_capture_prefix, render_data_capture

        prefix = data_capture_prefix(dc)
        self.model.grant_data_capture(
            dc.bucket.bucket_arn, prefix, dc.encryption_key.key_arn if dc.encryption_key else None
        )
        return render_data_capture(dc, prefix)

    def _acknowledge_nag_findings(self) -> None:
        """One call for the model's IAM5 findings and the EndpointConfig's KMS rule (each exact id)."""
        self.model.flush_acknowledgments(
            scope=self, extra=_nag.local_storage_kms_acks(self.instance_type, self.has_local_storage)
        )

    def _define_endpoint(self, deployment: DeploymentGuardrails | None) -> None:
        deployment_config = None
        if deployment is not None:
            from cdk_triton.constructs.deployment import render_deployment_config, rollback_alarm_names

            names, self._rollback_alarm = rollback_alarm_names(
                self, deployment, endpoint_name=self.endpoint_name, variant_name=self.variant_name
            )
            deployment_config = render_deployment_config(deployment, names)
        self.resource = sagemaker.CfnEndpoint(
            self,
            "Resource",
            endpoint_config_name=self.endpoint_config.attr_endpoint_config_name,
            endpoint_name=self.endpoint_name,
            deployment_config=deployment_config,
        )
        # node.default_child is self.resource: CDK finds the child with id "Resource" by itself.
        self._endpoint_arn: str | None = None
        self._attr_endpoint_name: str | None = None

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
    def hosting_mode(self) -> modes.HostingMode:
        """The model's hosting mode (its row of ``config.modes``)."""
        return self.model.hosting_mode

    @property
    def gpu_count(self) -> int:
        """GPUs per instance (0 for CPU instance types); with instance pools, the fewest of any pool
        (``config.instance_pools.fewest_gpus``: GPU scaling targets and alarm thresholds reachable on each)."""
        return self._instances.gpu_count

    @property
    def has_local_storage(self) -> bool:
        """Whether the instance type has local NVMe storage (no volume KMS key allowed)."""
        return self._instances.local_storage

    @property
    def metrics_namespace(self) -> str | None:
        """The CloudWatch namespace of Triton's own metrics (None when not published)."""
        return self.model.metrics_namespace

    # ------------------------------------------------------------------ pieces
    def _define_target_models(self, art: Any) -> None:
        """The MME's logical name -> TargetModel map, published when the endpoint is multi-model
        (``name_maps``: SSM parameters under one path and outputs)."""
        self.target_model_map: dict[str, str] = dict(art.target_models)
        self.target_model_parameters: list[ssm.CfnParameter] = []
        #: The SSM path of the published map (None: not multi-model, or no TargetModels).
        self.target_model_parameter_path: str | None = None
        if art.hosting_mode.routing == modes.ROUTE_TARGET_MODEL and self.target_model_map:
            self.target_model_parameter_path = target_model_parameter_path(self.endpoint_name)
            self.target_model_parameters += publish_target_models(
                self, stack=self._stack.stack, endpoint_name=self.endpoint_name, mapping=self.target_model_map
            )

    def add_verification(
        self,
        *,
        checks: Sequence[VerificationCheck] | None = None,
        deadline: cdk.Duration | None = None,
        warm_up: Sequence[str] = (),
        log_encryption_key: kms.IKey | None = None,
        sample: VerificationSample | None = None,
    ) -> TritonVerification:
        """Verify every deploy: invoke the endpoint with the recorded samples (a custom resource).

        A wrong answer fails the stack update, which rolls back to the previous endpoint config.
        See ``verification.py`` for the lifecycle and the function's exact grants.

        Args:
            checks: Default: the samples the build manifest records (SME: the default model; MME:
                every TargetModel with one); none raises NoRecordedSamples.
            deadline: how long to retry while instances start and models load. Default: 10 minutes.
            warm_up: MME logical names invoked once before the checks. Default: none.
            log_encryption_key: a customer KMS key for the verification's log group. Default: none.
            sample: MME with recorded checks: which TargetModels a deploy checks (every changed one,
                a share of the others, capped by the instances' cache; see ``verification_sample``).
                Default: ``VerificationSample()`` (baseline: the manifest path in the context key
                ``cdk-triton:verification-baseline`` if set, else none: every TargetModel counts as
                changed; at most 500 and what the instances' GPU memory holds).
        """
        from cdk_triton.constructs.async_inference import async_verification
        from cdk_triton.constructs.verification import define_verification, recorded_checks
        from cdk_triton.constructs.verification_sample import VerificationSample, selection_at

        art = self.model.artifacts
        selection = None
        if checks is None and mode_constructs.behaviour(art.hosting_mode).samples_verification():
            checks = recorded_checks(self, self.model.artifacts_source)
            selection = selection_at(
                self,
                self.model.artifacts_source,
                [c.model for c in checks],
                sample=sample or VerificationSample(),
                gpu_memory_gib=self.variant_hosting.gpu_memory_gib,
                instances=self.instance_count,
            )
        return define_verification(
            self,
            mode=art.mode,
            checks=checks if checks is not None else recorded_checks(self, self.model.artifacts_source),
            verified=[self.model.resource, self.endpoint_config, *self.target_model_parameters],
            target_model_parameter_path=self.target_model_parameter_path,
            artifacts_key_arn=art.kms_key_arn,
            deadline=deadline,
            warm_up=warm_up,
            log_encryption_key=log_encryption_key,
            selection=selection,
            parallelism=sample.parallelism if sample is not None else None,
            async_verification=async_verification(self.async_resources),
        )

    def auto_scale(self, *, min_capacity: int = 1, max_capacity: int) -> TritonScaling:
        """Define the scalable target of the variant (a stateful model allows no maximum above 1). An
        asynchronous endpoint defines its own (on its backlog, ``async_inference``): read ``scaling``."""
        if self.async_options is not None and self.scaling is not None:
            return self.scaling
        self._raise(
            model_checks.check_sequence_batching_instances(
                self.model.artifacts.built_models, max_capacity, prop="max_capacity"
            )
        )
        return super().auto_scale(min_capacity=min_capacity, max_capacity=max_capacity)

    def _scaling_endpoint_name(self) -> str:
        return self.attr_endpoint_name

    def _scales_to_zero(self) -> bool:
        return self.async_options is not None

    # ------------------------------------------------------------------ import
    @staticmethod
    def from_endpoint_attributes(
        scope: Construct, construct_id: str, attributes: EndpointAttributes
    ) -> ITritonEndpoint:
        """An endpoint defined in another stack (or outside CDK), for metrics, scaling, alarms and grants.

        ``attributes``: ``EndpointAttributes(endpoint_name=..., variant_name=..., ...)``, or the
        ``attributes`` of an endpoint defined elsewhere in the app.
        """
        return ImportedTritonEndpoint(scope, construct_id, attributes)

    @staticmethod
    def from_endpoint_name(scope: Construct, construct_id: str, endpoint_name: str) -> ITritonEndpoint:
        """An endpoint known by name only: ``grant_invoke`` (other features need more attributes)."""
        return ImportedTritonEndpoint(scope, construct_id, EndpointAttributes(endpoint_name=endpoint_name))


# ---------------------------------------------------------------------------- helpers


def _seconds_or_none(duration: cdk.Duration | None) -> float | None:
    return duration.to_seconds() if duration is not None else None
