"""What every Triton endpoint offers, defined here or imported from another stack.

``ITritonEndpoint`` is the interface the dashboard, the alarms and other stacks use;
``TritonEndpointBase`` implements it (metrics, ``grant_invoke``, ``auto_scale``) from a few
attributes, so that ``TritonEndpoint`` and an endpoint imported with
``TritonEndpoint.from_endpoint_attributes`` share one implementation (aws-cdk's ``EndpointBase``).

An imported endpoint knows only the ``EndpointAttributes`` it was given (one frozen value, aws-cdk's
``EndpointAttributes``; its docstring says which feature needs which). A feature asked of an endpoint
imported without what it needs raises ``TritonValidationError`` ``MissingEndpointAttribute`` naming
the attribute. ``endpoint.attributes`` gives the value of any endpoint, to import it elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from constructs import Construct, Node

from cdk_triton._deprecation import deprecated_property
from cdk_triton.config import layout, modes, tables
from cdk_triton.constructs import metrics as m
from cdk_triton.constructs import modes as mode_constructs
from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.checks.imported import check_imported
from cdk_triton.constructs.checks.names import check_names
from cdk_triton.constructs.errors import catalogued
from cdk_triton.constructs.scaling import TritonScaling
from cdk_triton.errors import TritonValidationError, raise_all

if TYPE_CHECKING:
    from cdk_triton.constructs.async_inference import AsyncInferenceOptions

#: The endpoint modes ``EndpointAttributes.mode`` accepts: the names of ``config.modes``' rows (the
#: abbreviations SME, MME and IC still read, with a DeprecationWarning).
MODES = modes.names()


@dataclass(frozen=True, kw_only=True, slots=True)
class EndpointAttributes:
    """What an endpoint defined elsewhere is known by (``TritonEndpoint.from_endpoint_attributes``).

    Which feature needs which attribute:

    ======================  ==========================================================
    endpoint_name           always: metrics' dimension, the ARN of ``grant_invoke``
    variant_name            scaling, every ``metric_*``, the dashboard, the alarms
    gpu_count (or           ``scale_on_gpu_utilization`` (target = percent x GPUs), the
    instance_type)          dashboard's GPU graph and the alarms' GPU-memory alarm
    mode                    the mode-only ``metric_*``; the dashboard's mode graphs
    instance_type           the burstable check of ``auto_scale``
    instance_count          the dashboard's initial-count line, the capacity warning
    metrics_namespace       the dashboard's graphs of Triton's own metrics
    component_names         ``component_name`` / ``component_arn`` by logical name, the
                            alarms' per-component alarms, verification checks' names
    ======================  ==========================================================

    Attributes:
        endpoint_name: the endpoint's name (all features).
        endpoint_arn: Default: the ARN of ``endpoint_name`` in the importing stack's account and region.
        variant_name: the production variant. Default: unknown.
        instance_type: Default: unknown (no burstable check; GPU count from ``gpu_count``).
        gpu_count: GPUs per instance. Default: the instance type's, else unknown.
        mode: a hosting mode of ``config.modes``: 'SingleModel', 'MultiModel' or 'InferenceComponents'
            (no ``auto_scale`` of instances); the abbreviations 'SME', 'MME', 'IC' are deprecated. Default:
            unknown.
        instance_count: the variant's instance count. Default: unknown.
        metrics_namespace: where Triton's own metrics are published. Default: none.
        component_names: an 'InferenceComponents' endpoint's components, logical (model) name -> real
            InferenceComponentName (``TritonComponentsEndpoint.attributes`` carries them). Default: none.
    """

    endpoint_name: str
    endpoint_arn: str | None = None
    variant_name: str | None = None
    instance_type: str | None = None
    gpu_count: int | None = None
    mode: str | None = None
    instance_count: int | None = None
    metrics_namespace: str | None = None
    component_names: Mapping[str, str] | None = None


@runtime_checkable
class ITritonEndpoint(Protocol):
    """A Triton endpoint, defined in this stack or imported from another (aws-cdk's ``IEndpoint``)."""

    @property
    def node(self) -> Node: ...

    @property
    def endpoint_name(self) -> str: ...

    @property
    def endpoint_arn(self) -> str: ...

    @property
    def variant_name(self) -> str | None: ...

    @property
    def instance_type(self) -> str | None: ...

    @property
    def gpu_count(self) -> int | None: ...

    @property
    def hosting_mode(self) -> modes.HostingMode | None: ...

    @property
    def component_names(self) -> Mapping[str, str]: ...

    @property
    def components(self) -> Mapping[str, Any]: ...

    @property
    def instance_count(self) -> int | None: ...

    @property
    def metrics_namespace(self) -> str | None: ...

    @property
    def scaling(self) -> TritonScaling | None: ...

    @property
    def instance_pools(self) -> tuple[str, ...]: ...

    @property
    def async_options(self) -> AsyncInferenceOptions | None: ...

    @property
    def rollback_alarm(self) -> cloudwatch.CfnAlarm | None: ...

    @property
    def attributes(self) -> EndpointAttributes: ...

    def metric(
        self,
        metric_name: str,
        *,
        namespace: str = ...,
        statistic: str = ...,
        period: cdk.Duration | None = None,
        label: str | None = None,
    ) -> cloudwatch.Metric: ...

    def metric_invocations(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_invocations_per_instance(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_model_latency(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_overhead_latency(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_invocation4xx_errors(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_invocation5xx_errors(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_cpu_utilization(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_memory_utilization(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_gpu_utilization(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_gpu_memory_utilization(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_disk_utilization(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_loaded_model_count(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_model_cache_hit(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_model_loading_wait_time(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_model_loading_time(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_model_downloading_time(self, **kw: Any) -> cloudwatch.Metric: ...

    def metric_model_unloading_time(self, **kw: Any) -> cloudwatch.Metric: ...

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant: ...

    def auto_scale(self, *, min_capacity: int = 1, max_capacity: int) -> TritonScaling: ...


def require(endpoint: ITritonEndpoint, attribute: str, feature: str) -> Any:
    """The endpoint's ``attribute``, or a ``MissingEndpointAttribute`` error naming it."""
    value = getattr(endpoint, attribute)
    if value is None:
        raise catalogued(
            "MissingEndpointAttribute",
            prop=attribute,
            value=None,
            problem=f"is needed for {feature}, and the endpoint was imported without it",
            allowed=f"an endpoint imported with {attribute}=..., or one defined with TritonEndpoint",
            fix=f"pass EndpointAttributes({attribute}=...) to TritonEndpoint.from_endpoint_attributes",
            path=endpoint.node.path,
        )
    return value


class TritonEndpointBase(Construct):
    """The shared implementation of ``ITritonEndpoint``: metrics, grants and scaling from attributes.

    Subclasses set ``endpoint_name``, ``variant_name``, ``instance_type``, ``instance_count`` and
    ``scaling``, and define ``endpoint_arn``, ``gpu_count``, ``hosting_mode``,
    ``metrics_namespace`` and ``_scaling_endpoint_name``.
    """

    endpoint_name: str
    variant_name: str | None
    instance_type: str | None
    instance_count: int | None
    scaling: TritonScaling | None

    @property
    def endpoint_arn(self) -> str:
        raise NotImplementedError

    @property
    def gpu_count(self) -> int | None:
        raise NotImplementedError

    @property
    def hosting_mode(self) -> modes.HostingMode | None:
        """The endpoint's hosting mode (its row of ``config.modes``); None when unknown (imported without it)."""
        raise NotImplementedError

    is_multi_model = deprecated_property(
        lambda self: None if self.hosting_mode is None else self.hosting_mode.loads_on_demand,
        old="cdk_triton.constructs.TritonEndpoint.is_multi_model",
        new="hosting_mode.loads_on_demand",
        since="0.2.0",
    )

    @property
    def component_names(self) -> Mapping[str, str]:
        """Logical (model) name -> InferenceComponentName; empty for an endpoint without components."""
        return {}

    @property
    def components(self) -> Mapping[str, Any]:
        """Logical (model) name -> the inference component defined in this app; empty when none."""
        return {}

    @property
    def metrics_namespace(self) -> str | None:
        raise NotImplementedError

    @property
    def instance_pools(self) -> tuple[str, ...]:
        """The variant's ``InstancePools`` in priority order; empty: one instance type (or imported)."""
        return self._instance_pools

    @instance_pools.setter
    def instance_pools(self, pools: tuple[str, ...]) -> None:
        self._instance_pools = tuple(pools)

    _instance_pools: tuple[str, ...] = ()

    @property
    def async_options(self) -> AsyncInferenceOptions | None:
        """An asynchronous endpoint's options; None: real-time (or imported: unknown)."""
        return None

    @property
    def rollback_alarm(self) -> cloudwatch.CfnAlarm | None:
        """The deployment-rollback alarm the endpoint defined (None with your own rollback_alarms, or
        imported). ``TritonAlarms`` of this endpoint with a topic makes it notify that topic too."""
        return self._rollback_alarm

    @rollback_alarm.setter
    def rollback_alarm(self, alarm: cloudwatch.CfnAlarm | None) -> None:
        self._rollback_alarm = alarm

    _rollback_alarm: cloudwatch.CfnAlarm | None = None

    @property
    def attributes(self) -> EndpointAttributes:
        """This endpoint's attributes, to import it in another stack (the ARN is derived there)."""
        row = self.hosting_mode
        return EndpointAttributes(
            endpoint_name=self.endpoint_name,
            variant_name=self.variant_name,
            instance_type=self.instance_type,
            gpu_count=self.gpu_count,
            mode=None if row is None else row.name,
            instance_count=self.instance_count,
            metrics_namespace=self.metrics_namespace,
        )

    def _scaling_endpoint_name(self) -> str:
        """The name the scalable target refers to (a reference to the endpoint when defined here)."""
        return self.endpoint_name

    # ------------------------------------------------------------------ metrics
    def metric(
        self,
        metric_name: str,
        *,
        namespace: str = m.SAGEMAKER,
        statistic: str = "Sum",
        period: cdk.Duration | None = None,
        label: str | None = None,
    ) -> cloudwatch.Metric:
        """A metric of this endpoint's variant (dimensions EndpointName and VariantName)."""
        variant = require(self, "variant_name", "per-variant metrics")
        return m.variant_metric(
            metric_name,
            self.endpoint_name,
            variant,
            namespace=namespace,
            statistic=statistic,
            period=period,
            label=label,
        )

    def _metric(self, spec: m.MetricDef, **kw: Any) -> cloudwatch.Metric:
        variant = require(self, "variant_name", f"metric {spec.name}")
        publishers = [r for r in modes.MODES.values() if spec.name in r.metrics]
        if publishers and self.hosting_mode is None:
            raise catalogued(
                "MissingEndpointAttribute",
                prop="mode",
                value=None,
                problem=f"is needed for the {publishers[0].label} metric {spec.name} (pass "
                f"mode='{publishers[0].name}'), and the endpoint was imported without it",
                allowed="an endpoint imported with mode=..., or one defined with TritonEndpoint",
                fix="pass EndpointAttributes(mode=...) to TritonEndpoint.from_endpoint_attributes",
                path=self.node.path,
            )
        return m.metric_of(spec, self.endpoint_name, variant, **kw)

    def metric_invocations(self, **kw: Any) -> cloudwatch.Metric:
        """Invocations (Sum)."""
        return self._metric(m.INVOCATIONS, **kw)

    def metric_invocations_per_instance(self, **kw: Any) -> cloudwatch.Metric:
        """InvocationsPerInstance (Sum)."""
        return self._metric(m.INVOCATIONS_PER_INSTANCE, **kw)

    def metric_model_latency(self, **kw: Any) -> cloudwatch.Metric:
        """ModelLatency in microseconds (p99 unless told)."""
        return self._metric(m.MODEL_LATENCY, **kw)

    def metric_overhead_latency(self, **kw: Any) -> cloudwatch.Metric:
        """OverheadLatency in microseconds (p99 unless told)."""
        return self._metric(m.OVERHEAD_LATENCY, **kw)

    def metric_invocation4xx_errors(self, **kw: Any) -> cloudwatch.Metric:
        """Invocation4XXErrors (Sum)."""
        return self._metric(m.INVOCATION_4XX_ERRORS, **kw)

    def metric_invocation5xx_errors(self, **kw: Any) -> cloudwatch.Metric:
        """Invocation5XXErrors (Sum)."""
        return self._metric(m.INVOCATION_5XX_ERRORS, **kw)

    def metric_cpu_utilization(self, **kw: Any) -> cloudwatch.Metric:
        """CPUUtilization (0-100 x vCPUs, Average)."""
        return self._metric(m.CPU_UTILIZATION, **kw)

    def metric_memory_utilization(self, **kw: Any) -> cloudwatch.Metric:
        """MemoryUtilization (Average)."""
        return self._metric(m.MEMORY_UTILIZATION, **kw)

    def metric_gpu_utilization(self, **kw: Any) -> cloudwatch.Metric:
        """GPUUtilization (0-100 x GPU count, Average)."""
        return self._metric(m.GPU_UTILIZATION, **kw)

    def metric_gpu_memory_utilization(self, **kw: Any) -> cloudwatch.Metric:
        """GPUMemoryUtilization (0-100 x GPU count, Average)."""
        return self._metric(m.GPU_MEMORY_UTILIZATION, **kw)

    def metric_disk_utilization(self, **kw: Any) -> cloudwatch.Metric:
        """DiskUtilization (Average)."""
        return self._metric(m.DISK_UTILIZATION, **kw)

    def metric_loaded_model_count(self, **kw: Any) -> cloudwatch.Metric:
        """LoadedModelCount (MME, Average)."""
        return self._metric(m.LOADED_MODEL_COUNT, **kw)

    def metric_model_cache_hit(self, **kw: Any) -> cloudwatch.Metric:
        """ModelCacheHit (MME, Sum)."""
        return self._metric(m.MODEL_CACHE_HIT, **kw)

    def metric_model_loading_wait_time(self, **kw: Any) -> cloudwatch.Metric:
        """ModelLoadingWaitTime in microseconds (MME, Average)."""
        return self._metric(m.MODEL_LOADING_WAIT_TIME, **kw)

    def metric_model_loading_time(self, **kw: Any) -> cloudwatch.Metric:
        """ModelLoadingTime in microseconds (MME, Average)."""
        return self._metric(m.MODEL_LOADING_TIME, **kw)

    def metric_model_downloading_time(self, **kw: Any) -> cloudwatch.Metric:
        """ModelDownloadingTime in microseconds (MME, Average)."""
        return self._metric(m.MODEL_DOWNLOADING_TIME, **kw)

    def metric_model_unloading_time(self, **kw: Any) -> cloudwatch.Metric:
        """ModelUnloadingTime in microseconds (MME, Average)."""
        return self._metric(m.MODEL_UNLOADING_TIME, **kw)

    # ------------------------------------------------------------------ grants & scaling
    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allow ``grantee`` to call ``sagemaker:InvokeEndpoint`` on this endpoint."""
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=["sagemaker:InvokeEndpoint"], resource_arns=[self.endpoint_arn]
        )

    def _scales_to_zero(self) -> bool:
        """Whether the variant may scale to zero instances (an asynchronous endpoint)."""
        return False

    def auto_scale(self, *, min_capacity: int = 1, max_capacity: int) -> TritonScaling:
        """Define the scalable target of the variant (the mode's, ``constructs.modes``); add policies on the
        returned TritonScaling. Refused where the mode's row refuses it (inference components)."""
        mode = mode_constructs.of_endpoint(self.hosting_mode, self.component_names)
        mode.check_auto_scale(self, min_capacity=min_capacity, max_capacity=max_capacity)
        variant = require(self, "variant_name", "auto_scale")
        target = mode_constructs.ScalingTarget(
            endpoint_name=self._scaling_endpoint_name(),
            variant_name=variant,
            instance_type=self.instance_type,
            gpu_count=self.gpu_count,
            instance_count=self.instance_count,
            scale_to_zero=self._scales_to_zero(),
        )
        self.scaling = mode.auto_scale(self, target, min_capacity=min_capacity, max_capacity=max_capacity)
        return self.scaling


class ImportedTritonEndpoint(TritonEndpointBase):
    """An endpoint defined elsewhere, known by its attributes (``TritonEndpoint.from_endpoint_attributes``)."""

    def __init__(self, scope: Construct, construct_id: str, attributes: EndpointAttributes) -> None:
        super().__init__(scope, construct_id)
        a = attributes
        errs = check_names(a.endpoint_name, a.variant_name or "AllTraffic")
        errs += check_imported(a.instance_type, a.gpu_count, a.instance_count)
        row = None if a.mode is None else modes.from_abbreviation(a.mode)
        if a.mode is not None and row is None:
            errs.append(
                catalogued(
                    "InvalidEndpointMode",
                    prop="mode",
                    value=a.mode,
                    problem="is not an endpoint mode",
                    allowed=", ".join(f"'{m.name}' ({m.label})" for m in modes.MODES.values()),
                    fix=f"pass mode={' or '.join(repr(m) for m in modes.names())}, or leave it unset",
                )
            )
        errs += _check_component_names(a, row)
        if errs:
            path = self.node.path
            raise_all([e.at(path) for e in errs])
        #: logical (model) name -> InferenceComponentName (a components endpoint imported with its names)
        self._component_names: dict[str, str] = dict(a.component_names or {})
        self._hosting_mode = row
        self.endpoint_name = a.endpoint_name
        self.variant_name = a.variant_name
        self.instance_type = a.instance_type
        self.instance_count = a.instance_count
        self.scaling = None
        self._attributes = a
        it = a.instance_type
        gpu_count = a.gpu_count
        if gpu_count is None and it is not None and not is_token(it):
            info = tables.instance_type_info(it)
            gpu_count = info.gpu_count if info is not None else 0
        self._gpu_count = gpu_count
        endpoint_arn = a.endpoint_arn
        if endpoint_arn is None:
            name = a.endpoint_name
            endpoint_arn = cdk.Stack.of(self).format_arn(
                service="sagemaker",
                resource="endpoint",
                # SageMaker writes endpoint ARNs in lower case.
                resource_name=name if is_token(name) else name.lower(),
            )
        self._endpoint_arn = endpoint_arn

    @property
    def attributes(self) -> EndpointAttributes:
        """The attributes it was imported with."""
        return self._attributes

    @property
    def endpoint_arn(self) -> str:
        """The given ARN, or ``arn:<partition>:sagemaker:<region>:<account>:endpoint/<name>`` of this stack."""
        return self._endpoint_arn

    @property
    def gpu_count(self) -> int | None:
        """The given GPU count, else the instance type's, else unknown (None)."""
        return self._gpu_count

    @property
    def hosting_mode(self) -> modes.HostingMode | None:
        """The row of the given mode; None when the mode was not given."""
        return self._hosting_mode

    @property
    def component_names(self) -> dict[str, str]:
        """Logical (model) name -> InferenceComponentName, as given in the attributes."""
        return self._component_names

    @property
    def metrics_namespace(self) -> str | None:
        return self._attributes.metrics_namespace

    def component_name(self, name: str) -> str:
        """The InferenceComponentName of a component given by its logical name or its real name (what
        ``InvokeEndpoint(InferenceComponentName=...)`` takes); ``UnknownComponent`` otherwise."""
        names = self.component_names
        if name in names:
            return names[name]
        if name in names.values():
            return name
        raise catalogued(
            "UnknownComponent",
            prop="component",
            value=name,
            problem="is not a component of the imported endpoint (neither a logical nor a real name)",
            allowed=", ".join(sorted(names)) or "none: the endpoint was imported without component_names",
            fix="pass a name of EndpointAttributes.component_names (import with the components "
            "endpoint's attributes)",
            path=self.node.path,
        )

    def component_arn(self, name: str) -> str:
        """``arn:<partition>:sagemaker:<region>:<account>:inference-component/<name>`` of this stack's
        account and region (``name``: logical or real)."""
        real = self.component_name(name)
        return cdk.Stack.of(self).format_arn(
            service="sagemaker",
            resource="inference-component",
            resource_name=real if is_token(real) else real.lower(),
        )


def _check_component_names(
    a: EndpointAttributes, row: modes.HostingMode | None
) -> list[TritonValidationError]:
    """``component_names`` only on an endpoint whose mode has components (or of unknown mode), each an
    InferenceComponentName."""
    if not a.component_names:
        return []
    if a.mode is not None and row is not None and not row.components:
        with_components = " or ".join(f"'{m.name}'" for m in modes.where(components=True))
        return [
            catalogued(
                "InvalidEndpointMode",
                prop="mode",
                value=a.mode,
                problem=f"is not {with_components}, but component_names are given (only an "
                "inference-components endpoint has components)",
                allowed=f"{with_components} with component_names; the other modes without",
                fix=f"pass mode={with_components}, or leave component_names unset",
            )
        ]
    plain = {k: v for k, v in a.component_names.items() if not is_token(v)}
    return [
        catalogued(
            e.code, prop="component_names", value=e.value, problem=e.problem, allowed=e.allowed, fix=e.fix
        )
        for e in layout.component_name_problems(plain)
    ]
