"""The one table of a Triton endpoint's CloudWatch metrics, and the factory built on it.

Every official metric name is written here once. ``TritonEndpoint.metric_*``, the dashboard, the
alarms, the deployment rollback alarm and the GPU scaling policy all read this table: a metric's
name, namespace, default statistic and unit live in one row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch

#: SageMaker's invocation metrics.
SAGEMAKER = "AWS/SageMaker"
#: SageMaker's instance metrics (CPU, memory, disk, GPU; MME LoadedModelCount).
HOST = "/aws/sagemaker/Endpoints"
#: SageMaker's per-component utilization metrics (dimension InferenceComponentName).
COMPONENTS = "/aws/sagemaker/InferenceComponents"


@dataclass(frozen=True, kw_only=True, slots=True)
class MetricDef:
    """One row of the table.

    Attributes:
        name: the official metric name.
        namespace: ``AWS/SageMaker`` or ``/aws/sagemaker/Endpoints``.
        statistic: the default statistic.
        unit: what a value counts (documentation: count, microseconds, percent ...).
        multi_model: published by multi-model endpoints only.
    """

    name: str
    namespace: str
    statistic: str
    unit: str
    multi_model: bool = False


def _sm(name: str, statistic: str, unit: str, *, multi_model: bool = False) -> MetricDef:
    return MetricDef(name=name, namespace=SAGEMAKER, statistic=statistic, unit=unit, multi_model=multi_model)


def _host(name: str, unit: str, *, multi_model: bool = False) -> MetricDef:
    return MetricDef(name=name, namespace=HOST, statistic="Average", unit=unit, multi_model=multi_model)


# ---------------------------------------------------------------------------- the table
INVOCATIONS = _sm("Invocations", "Sum", "count")
INVOCATIONS_PER_INSTANCE = _sm("InvocationsPerInstance", "Sum", "count")
MODEL_LATENCY = _sm("ModelLatency", "p99", "microseconds")
OVERHEAD_LATENCY = _sm("OverheadLatency", "p99", "microseconds")
INVOCATION_4XX_ERRORS = _sm("Invocation4XXErrors", "Sum", "count")
INVOCATION_5XX_ERRORS = _sm("Invocation5XXErrors", "Sum", "count")
CPU_UTILIZATION = _host("CPUUtilization", "percent x vCPUs")
MEMORY_UTILIZATION = _host("MemoryUtilization", "percent")
GPU_UTILIZATION = _host("GPUUtilization", "percent x GPUs")
GPU_MEMORY_UTILIZATION = _host("GPUMemoryUtilization", "percent x GPUs")
DISK_UTILIZATION = _host("DiskUtilization", "percent")
LOADED_MODEL_COUNT = _host("LoadedModelCount", "count", multi_model=True)
MODEL_CACHE_HIT = _sm("ModelCacheHit", "Sum", "count", multi_model=True)
MODEL_LOADING_WAIT_TIME = _sm("ModelLoadingWaitTime", "Average", "microseconds", multi_model=True)
MODEL_LOADING_TIME = _sm("ModelLoadingTime", "Average", "microseconds", multi_model=True)
MODEL_DOWNLOADING_TIME = _sm("ModelDownloadingTime", "Average", "microseconds", multi_model=True)
MODEL_UNLOADING_TIME = _sm("ModelUnloadingTime", "Average", "microseconds", multi_model=True)

# inference components: AWS/SageMaker invocation metrics and /aws/sagemaker/InferenceComponents utilization,
# each with the dimension InferenceComponentName (the SageMaker guide "Monitor inference components"; the
# utilization metrics are normalized to what the component reserved: 0-100 %)
# (Invocations, ModelLatency and Invocation5XXErrors are the rows above, with that dimension instead)
NO_CAPACITY_INVOCATION_FAILURES = _sm("NoCapacityInvocationFailures", "Sum", "count")
COMPONENT_CPU_UTILIZATION = MetricDef(
    name="CPUUtilizationNormalized", namespace=COMPONENTS, statistic="Average", unit="percent"
)
COMPONENT_MEMORY_UTILIZATION = MetricDef(
    name="MemoryUtilizationNormalized", namespace=COMPONENTS, statistic="Average", unit="percent"
)
COMPONENT_GPU_UTILIZATION = MetricDef(
    name="GPUUtilizationNormalized", namespace=COMPONENTS, statistic="Average", unit="percent"
)
COMPONENT_GPU_MEMORY_UTILIZATION = MetricDef(
    name="GPUMemoryUtilizationNormalized", namespace=COMPONENTS, statistic="Average", unit="percent"
)

# asynchronous endpoints (AWS/SageMaker, dimension EndpointName only: the SageMaker guide "Monitor
# asynchronous endpoints", https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-monitor.html,
# read 2026-11-27 through its autoscaling page's use of ApproximateBacklogSizePerInstance and
# HasBacklogWithoutCapacity; the statistics are the guide's examples, the other two rows *unconfirmed*)
APPROXIMATE_BACKLOG_SIZE = _sm("ApproximateBacklogSize", "Average", "count")
APPROXIMATE_BACKLOG_SIZE_PER_INSTANCE = _sm("ApproximateBacklogSizePerInstance", "Average", "count")
APPROXIMATE_AGE_OF_OLDEST_REQUEST = _sm("ApproximateAgeOfOldestRequest", "Maximum", "seconds")
HAS_BACKLOG_WITHOUT_CAPACITY = _sm("HasBacklogWithoutCapacity", "Average", "0 or 1")
#: The asynchronous metrics' one dimension.
ASYNC_METRICS = (
    APPROXIMATE_BACKLOG_SIZE,
    APPROXIMATE_BACKLOG_SIZE_PER_INSTANCE,
    APPROXIMATE_AGE_OF_OLDEST_REQUEST,
    HAS_BACKLOG_WITHOUT_CAPACITY,
)

#: Every SageMaker metric of the table, by official name.
METRICS: dict[str, MetricDef] = {
    spec.name: spec
    for spec in (
        INVOCATIONS,
        INVOCATIONS_PER_INSTANCE,
        MODEL_LATENCY,
        OVERHEAD_LATENCY,
        INVOCATION_4XX_ERRORS,
        INVOCATION_5XX_ERRORS,
        CPU_UTILIZATION,
        MEMORY_UTILIZATION,
        GPU_UTILIZATION,
        GPU_MEMORY_UTILIZATION,
        DISK_UTILIZATION,
        LOADED_MODEL_COUNT,
        MODEL_CACHE_HIT,
        MODEL_LOADING_WAIT_TIME,
        MODEL_LOADING_TIME,
        MODEL_DOWNLOADING_TIME,
        MODEL_UNLOADING_TIME,
        NO_CAPACITY_INVOCATION_FAILURES,
        COMPONENT_CPU_UTILIZATION,
        COMPONENT_MEMORY_UTILIZATION,
        COMPONENT_GPU_UTILIZATION,
        COMPONENT_GPU_MEMORY_UTILIZATION,
        *ASYNC_METRICS,
    )
}

#: Triton's own Prometheus metrics, as the SageMaker image publishes them to a custom namespace.
TRITON_REQUEST_SUCCESS = "nv_inference_request_success"
TRITON_REQUEST_FAILURE = "nv_inference_request_failure"
TRITON_QUEUE_DURATION = "nv_inference_queue_duration_us"
TRITON_COMPUTE_INFER_DURATION = "nv_inference_compute_infer_duration_us"
TRITON_INFERENCE_COUNT = "nv_inference_count"
TRITON_EXEC_COUNT = "nv_inference_exec_count"


# ---------------------------------------------------------------------------- the factory
def dimensions_map(endpoint_name: str, variant_name: str) -> dict[str, str]:
    """The dimensions of a variant's metrics."""
    return {"EndpointName": endpoint_name, "VariantName": variant_name}


def dimension_list(endpoint_name: str, variant_name: str) -> list[dict[str, str]]:
    """The same dimensions as CloudFormation's ``[{name, value}]`` (alarms, scaling policies)."""
    return [{"name": k, "value": v} for k, v in dimensions_map(endpoint_name, variant_name).items()]


def variant_metric(
    metric_name: str,
    endpoint_name: str,
    variant_name: str,
    *,
    namespace: str = SAGEMAKER,
    statistic: str = "Sum",
    period: cdk.Duration | None = None,
    label: str | None = None,
) -> cloudwatch.Metric:
    """A ``cloudwatch.Metric`` of a variant (dimensions EndpointName and VariantName)."""
    return cloudwatch.Metric(
        namespace=namespace,
        metric_name=metric_name,
        statistic=statistic,
        period=period or cdk.Duration.minutes(1),
        label=label,
        dimensions_map=dimensions_map(endpoint_name, variant_name),
    )


def metric_of(spec: MetricDef, endpoint_name: str, variant_name: str, **kw: Any) -> cloudwatch.Metric:
    """The table row ``spec`` as a ``cloudwatch.Metric`` (its statistic unless ``statistic=`` is given)."""
    kw.setdefault("statistic", spec.statistic)
    return variant_metric(spec.name, endpoint_name, variant_name, namespace=spec.namespace, **kw)


def widget_metric(spec: MetricDef, dims: list[str], stat: str | None = None, **opts: Any) -> list[Any]:
    """The row as a dashboard metric array: ``[namespace, name, *dims, {stat, ...}]``."""
    return [spec.namespace, spec.name, *dims, {"stat": stat or spec.statistic, **opts}]


def alarm_metric(spec: MetricDef) -> dict[str, Any]:
    """The row's ``namespace`` and ``metric_name`` for ``AWS::CloudWatch::Alarm`` props."""
    return {"namespace": spec.namespace, "metric_name": spec.name}


def search(namespace: str, metric: str, stat: str, period: int) -> str:
    """A SEARCH expression over a custom namespace (Triton's own metrics carry their own dimensions)."""
    return f"SEARCH('Namespace=\"{namespace}\" MetricName=\"{metric}\"', '{stat}', {period})"


def endpoint_dimension_list(endpoint_name: str) -> list[dict[str, str]]:
    """The asynchronous metrics' dimension as CloudFormation's ``[{name, value}]``."""
    return [{"name": "EndpointName", "value": endpoint_name}]


def component_metric(spec: MetricDef, component_name: str, **kw: Any) -> cloudwatch.Metric:
    """The table row ``spec`` of one inference component (dimension InferenceComponentName)."""
    return cloudwatch.Metric(
        namespace=spec.namespace,
        metric_name=spec.name,
        statistic=kw.pop("statistic", spec.statistic),
        period=kw.pop("period", None) or cdk.Duration.minutes(1),
        label=kw.pop("label", None),
        dimensions_map={"InferenceComponentName": component_name},
    )
