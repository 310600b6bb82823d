"""One inference component: its options, its model's artifacts (one archive) and the component itself.

``TritonInferenceComponent`` holds a ``TritonModel`` (SingleModel, on the model's own archive: the MME
packaging, its ensemble steps inside; so its own least-privilege role reading that archive only) and the
``AWS::SageMaker::InferenceComponent`` naming it by ``ModelName``, with its copy scaling
(``scaling.ComponentScaling``). ``TritonComponentsEndpoint`` (``components_endpoint.py``) defines them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from cdk_triton.config import sizing
from cdk_triton.config.manifest import SINGLE_MODEL, ComponentEntry, TargetModel
from cdk_triton.constructs import metrics as m
from cdk_triton.constructs._tokens import props
from cdk_triton.constructs.artifacts import ArtifactsConfig, ModelArtifacts
from cdk_triton.constructs.checks import components as checks
from cdk_triton.constructs.checks import models as model_checks
from cdk_triton.constructs.model import TritonModel
from cdk_triton.constructs.scaling import (
    DEFAULT_CONCURRENT_REQUESTS_PER_COPY,
    ComponentScaling,
)

__all__ = ["ComponentOptions", "TritonInferenceComponent"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ComponentOptions:
    """One component's settings; each unset field takes the manifest's value (``models.yaml`` ``components:``),
    else the derived default.

    Attributes:
        copies: the templated ``CopyCount`` (what a deploy sets). Default: 1.
        min_copies / max_copies: copy scaling bounds; either set defines the scalable target
            ``inference-component/<name>`` with a target-tracking policy, and ``min_copies=0`` the
            scale-out-from-zero policy and alarm. Default: no copy scaling.
        accelerators: ``NumberOfAcceleratorDevicesRequired``. Default: 1 on GPU types, none on CPU types.
        cpu_cores: ``NumberOfCpuCoresRequired``. Default: 1 on CPU types, unset (SageMaker's) on GPU types.
        min_memory_mb: ``MinMemoryRequiredInMb``. Default: derived (``sizing.component_memory_mb``).
        max_memory_mb: ``MaxMemoryRequiredInMb``. Default: unset.
        data_cache: ``DataCacheConfig.EnableCaching`` (artifacts and image cached on each instance for
            faster scale-out). Default: unset (SageMaker's: off, on by itself on types with > 232 GiB NVMe).
        startup_timeout: ``StartupParameters.ContainerStartupHealthCheckTimeoutInSeconds`` (60 s..1 h).
            Default: sized from the model memory above 600 s, else SageMaker's.
        invocations_per_copy: track SageMakerInferenceComponentInvocationsPerCopy at this target
            (per copy per minute) instead of the concurrency target. Default: not used.
        concurrent_requests_per_copy: track ...ConcurrentRequestsPerCopyHighResolution at this target.
            Default: 5 when copy scaling is on and invocations_per_copy is unset.
    """

    copies: int | None = None
    min_copies: int | None = None
    max_copies: int | None = None
    accelerators: int | None = None
    cpu_cores: float | None = None
    min_memory_mb: int | None = None
    max_memory_mb: int | None = None
    data_cache: bool | None = None
    startup_timeout: cdk.Duration | None = None
    invocations_per_copy: float | None = None
    concurrent_requests_per_copy: float | None = None


def merged_options(given: ComponentOptions | None, recorded: ComponentEntry | None) -> ComponentOptions:
    """The props over the manifest's ComponentEntry, field by field (a prop that is set wins)."""
    opts = given or ComponentOptions()
    if recorded is None:
        return opts
    timeout = (
        cdk.Duration.seconds(recorded.startup_timeout_s) if recorded.startup_timeout_s is not None else None
    )
    fill: dict[str, Any] = {
        "copies": recorded.copies,
        "min_copies": recorded.min_copies,
        "max_copies": recorded.max_copies,
        "accelerators": recorded.accelerators,
        "cpu_cores": recorded.cpu_cores,
        "min_memory_mb": recorded.min_memory_mb,
        "max_memory_mb": recorded.max_memory_mb,
        "data_cache": recorded.data_cache,
        "startup_timeout": timeout,
    }
    return dataclasses.replace(opts, **{k: v for k, v in fill.items() if getattr(opts, k) is None})


#: AutoRollbackConfiguration.Alarms at most (botocore: AlarmList max 10).
MAX_ROLLBACK_ALARMS = 10


class ArchiveArtifacts(ModelArtifacts):
    """One archive of a components (or MME) entry as a single-model repository: the component's model."""

    def __init__(self, parent: ArtifactsConfig, archive: TargetModel) -> None:
        self._parent = parent
        self._archive = archive

    def bind(self, scope: Construct) -> ArtifactsConfig:
        p, a = self._parent, self._archive
        return ArtifactsConfig(
            mode=SINGLE_MODEL,
            bucket_name=p.bucket_name,
            bucket_arn=p.bucket_arn,
            key=f"{p.key}{a.target_model}",
            compression="Gzip",
            kms_key_arn=p.kms_key_arn,
            default_model=a.model,
            models=list(a.models),
            gpu_architectures=sorted(
                {
                    arch
                    for n in a.models
                    if n in p.built_models
                    for arch in p.built_models[n].gpu_architectures
                }
            ),
            packaged_instance_types=list(p.packaged_instance_types),
            uploaded=p.uploaded,
            triton_version=p.triton_version,
            built_models={n: p.built_models[n] for n in a.models if n in p.built_models},
            tool_versions=dict(p.tool_versions),
            acknowledged_advisories=dict(p.acknowledged_advisories),
            library_acknowledgments=p.library_acknowledgments,
            data_bytes=a.size_bytes,
            packaging="tar.gz",
            inference_ami_version=p.inference_ami_version,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class SettledComponent:
    """One component, settled: its options, real name, requirements and copy bounds."""

    logical: str
    name: str
    options: ComponentOptions
    requirements: checks.Requirements
    copies: int
    min_copies: int
    max_copies: int
    scaled: bool


class TritonInferenceComponent(Construct):
    """One inference component: its ``TritonModel`` (child "Model") and the component (child "Resource").

    Defined by ``TritonComponentsEndpoint``; ``component_name`` is the real name (prefixed per endpoint).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        plan: SettledComponent,
        model: TritonModel,
        endpoint: sagemaker.CfnEndpoint,
        variant_name: str,
        deployment_config: dict[str, Any] | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.logical_name = plan.logical
        self.component_name = plan.name
        self.model = model
        self.requirements = plan.requirements
        self.copies = plan.copies
        r = plan.requirements
        o = plan.options
        art = model.artifacts
        model_bytes = sum(model_checks.model_sizes(art.built_models).values()) or None
        startup = (
            int(o.startup_timeout.to_seconds())
            if o.startup_timeout is not None
            else sizing.container_startup_health_check_timeout(model_bytes)
        )
        download = sizing.model_data_download_timeout(art.data_bytes)
        self.resource = sagemaker.CfnInferenceComponent(
            self,
            "Resource",
            endpoint_name=endpoint.attr_endpoint_name,
            variant_name=variant_name,
            inference_component_name=plan.name,
            specification=props(
                model_name=model.model_name,
                compute_resource_requirements=props(
                    min_memory_required_in_mb=r.min_memory_mb,
                    max_memory_required_in_mb=r.max_memory_mb,
                    number_of_accelerator_devices_required=r.accelerators,
                    number_of_cpu_cores_required=r.cpu_cores,
                ),
                startup_parameters=props(
                    container_startup_health_check_timeout_in_seconds=startup,
                    model_data_download_timeout_in_seconds=download,
                )
                or None,
                data_cache_config=props(enable_caching=o.data_cache) if o.data_cache is not None else None,
            ),
            runtime_config=props(copy_count=plan.copies),
            deployment_config=deployment_config,
        )
        rollback = (deployment_config or {}).get("autoRollbackConfiguration") or {}
        self._rollback_alarms: list[str] | None = (
            [a["alarmName"] for a in rollback.get("alarms", [])] if deployment_config is not None else None
        )
        self.scaling: ComponentScaling | None = None
        if plan.scaled:
            self.auto_scale(min_copies=plan.min_copies, max_copies=plan.max_copies)
            assert self.scaling is not None
            if o.invocations_per_copy is not None:
                self.scaling.scale_on_invocations_per_copy(o.invocations_per_copy)
            else:
                self.scaling.scale_on_concurrent_requests_per_copy(
                    o.concurrent_requests_per_copy or DEFAULT_CONCURRENT_REQUESTS_PER_COPY
                )

    def auto_scale(self, *, min_copies: int = 0, max_copies: int) -> ComponentScaling:
        """The copy-count scalable target (min 0: with the scale-out-from-zero policy and alarm)."""
        self.scaling = ComponentScaling(
            self,
            "Scaling",
            component_name=self.component_name,
            min_copies=min_copies,
            max_copies=max_copies,
            component=self.resource,
        )
        return self.scaling

    def add_rollback_alarm(self, alarm_name: str) -> bool:
        """Roll this component's rolling updates back on ``alarm_name`` too. False (nothing added) when the
        component has no rolling deployment, or already SageMaker's 10 rollback alarms."""
        if self._rollback_alarms is None or len(self._rollback_alarms) >= MAX_ROLLBACK_ALARMS:
            return False
        self._rollback_alarms.append(alarm_name)
        self.resource.add_property_override(
            "DeploymentConfig.AutoRollbackConfiguration.Alarms",
            [{"AlarmName": n} for n in self._rollback_alarms],
        )
        return True

    @property
    def component_arn(self) -> str:
        """``Ref`` of the component: its ARN."""
        return self.resource.ref

    def metric(self, spec: m.MetricDef, **kw: Any) -> cloudwatch.Metric:
        """A metric of this component (dimension InferenceComponentName) from the metric table."""
        return m.component_metric(spec, self.component_name, **kw)

    def metric_invocations(self, **kw: Any) -> cloudwatch.Metric:
        return self.metric(m.INVOCATIONS, **kw)

    def metric_model_latency(self, **kw: Any) -> cloudwatch.Metric:
        return self.metric(m.MODEL_LATENCY, **kw)

    def metric_invocation5xx_errors(self, **kw: Any) -> cloudwatch.Metric:
        return self.metric(m.INVOCATION_5XX_ERRORS, **kw)

    def metric_no_capacity_invocation_failures(self, **kw: Any) -> cloudwatch.Metric:
        return self.metric(m.NO_CAPACITY_INVOCATION_FAILURES, **kw)

    def metric_cpu_utilization_normalized(self, **kw: Any) -> cloudwatch.Metric:
        return self.metric(m.COMPONENT_CPU_UTILIZATION, **kw)

    def metric_memory_utilization_normalized(self, **kw: Any) -> cloudwatch.Metric:
        return self.metric(m.COMPONENT_MEMORY_UTILIZATION, **kw)

    def metric_gpu_utilization_normalized(self, **kw: Any) -> cloudwatch.Metric:
        return self.metric(m.COMPONENT_GPU_UTILIZATION, **kw)

    def metric_gpu_memory_utilization_normalized(self, **kw: Any) -> cloudwatch.Metric:
        return self.metric(m.COMPONENT_GPU_MEMORY_UTILIZATION, **kw)
