"""Autoscaling: a variant's instances (GPUUtilization or InvocationsPerInstance target tracking) and an
inference component's copies (per-copy target tracking, scale to zero and back)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, Unpack

import aws_cdk as cdk
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from cdk_triton.config import async_inference, modes, tables
from cdk_triton.constructs._kwargs import refuse_unknown
from cdk_triton.constructs._tokens import is_token, known_duration, props, seconds
from cdk_triton.constructs.errors import validation_error
from cdk_triton.constructs.metrics import (
    APPROXIMATE_BACKLOG_SIZE_PER_INSTANCE,
    GPU_UTILIZATION,
    HAS_BACKLOG_WITHOUT_CAPACITY,
    NO_CAPACITY_INVOCATION_FAILURES,
    MetricDef,
    dimension_list,
    endpoint_dimension_list,
)
from cdk_triton.errors import TritonValidationError, raise_all


def variant_dimension() -> str:
    """The dimension a variant's instance count scales on: the ``scaling_dimension`` of the hosting modes
    whose variant auto-scales (their rows agree; a row that scales otherwise refuses ``auto_scale``)."""
    found = {m.scaling_dimension for m in modes.MODES.values() if m.auto_scale is None}
    if len(found) != 1:
        raise LookupError(
            f"the modes that auto-scale their variant scale on {sorted(found)}, not one dimension"
        )
    return found.pop()


#: Seed example of the service docs: scale in slowly, scale out fast (seconds).
DEFAULT_SCALE_IN_COOLDOWN_S = 600
DEFAULT_SCALE_OUT_COOLDOWN_S = 200
#: The public ``cdk.Duration`` forms, made on first use (PEP 562): a jsii round trip each at import otherwise.
DEFAULT_SCALE_IN_COOLDOWN: cdk.Duration  # annotation only: module ``__getattr__`` makes it
DEFAULT_SCALE_OUT_COOLDOWN: cdk.Duration
_DURATION_CONSTANTS = {
    "DEFAULT_SCALE_IN_COOLDOWN": DEFAULT_SCALE_IN_COOLDOWN_S,
    "DEFAULT_SCALE_OUT_COOLDOWN": DEFAULT_SCALE_OUT_COOLDOWN_S,
}


def __getattr__(name: str) -> cdk.Duration:
    secs = _DURATION_CONSTANTS.get(name)
    if secs is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = known_duration(cdk.Duration.seconds(secs), secs)
    globals()[name] = value
    return value


class TargetTrackingOptions(TypedDict, total=False):
    """The options every target-tracking policy shares (aws-cdk's ``BaseTargetTrackingProps``).

    Attributes:
        scale_in_cooldown: how long after a scale-in before the next one. Default: 600 s.
        scale_out_cooldown: how long after a scale-out before the next one. Default: 200 s.
        disable_scale_in: only scale out (remove instances yourself). Default: False.
    """

    scale_in_cooldown: cdk.Duration
    scale_out_cooldown: cdk.Duration
    disable_scale_in: bool


#: The names of ``TargetTrackingOptions``.
TARGET_TRACKING_OPTIONS: frozenset[str] = frozenset(TargetTrackingOptions.__optional_keys__)


def _tracking(
    owner: str,
    options: TargetTrackingOptions,
    default_in_s: int = DEFAULT_SCALE_IN_COOLDOWN_S,
    default_out_s: int = DEFAULT_SCALE_OUT_COOLDOWN_S,
) -> dict[str, Any]:
    """The options' part of a TargetTrackingScalingPolicyConfiguration, defaults (seconds) applied."""
    refuse_unknown(owner, options, TARGET_TRACKING_OPTIONS)
    scale_in = options.get("scale_in_cooldown")
    scale_out = options.get("scale_out_cooldown")
    return {
        "scale_in_cooldown": seconds(scale_in) if scale_in is not None else default_in_s,
        "scale_out_cooldown": seconds(scale_out) if scale_out is not None else default_out_s,
        "disable_scale_in": options.get("disable_scale_in", False) or None,
    }


class TritonScaling(Construct):
    """Defines the scalable target (the mode's ``scaling_dimension``, ``sagemaker:variant:DesiredInstanceCount``)
    of an endpoint variant.

    Created by ``TritonEndpoint.auto_scale(...)``; add target-tracking policies with
    ``scale_on_gpu_utilization`` and ``scale_on_invocations_per_instance``. Like aws-cdk's
    ``ScalableInstanceCount`` it receives the variant's names, never the endpoint.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        endpoint_name: str,
        variant_name: str,
        instance_type: str | None = None,
        gpu_count: int | None = None,
        instance_count: int | None = None,
        min_capacity: int = 1,
        max_capacity: int,
        scalable_dimension: str | None = None,
        scale_to_zero: bool = False,
    ) -> None:
        """Define the scalable target.

        Args:
            endpoint_name: the endpoint (a ``GetAtt EndpointName`` reference, so the target depends on it).
            variant_name: the production variant that scales.
            instance_type: checked to be autoscalable (not burstable). Default: unknown, not checked.
            gpu_count: GPUs per instance, for ``scale_on_gpu_utilization``. Default: unknown (that
                policy then refuses with ``MissingEndpointAttribute``).
            instance_count: the variant's initial count, warned about when outside the range.
                Default: unknown, not checked.
            min_capacity: Default: 1.
            max_capacity: the most instances.
            scalable_dimension: the endpoint's mode's ``scaling_dimension`` (``constructs.modes`` passes
                it). Default: :func:`variant_dimension` (an endpoint imported without its mode).
            scale_to_zero: the variant may scale to zero instances (an asynchronous endpoint), so
                ``min_capacity`` may be 0. Default: false.
        """
        super().__init__(scope, construct_id)
        self.endpoint_name = endpoint_name
        self.variant_name = variant_name
        self.instance_type = instance_type
        self.gpu_count = gpu_count
        errs: list[TritonValidationError] = []
        it = instance_type
        if it is not None and not is_token(it) and tables.is_burstable(it):
            errs.append(
                validation_error(
                    self,
                    "BurstableNotScalable",
                    prop="instance_type",
                    value=it,
                    problem="is a burstable instance type, which SageMaker cannot autoscale",
                    allowed="non-burstable types (ml.c*, ml.m*, ml.g*, ml.p* ...)",
                    fix="choose e.g. ml.m5.large, or drop auto_scale",
                )
            )
        floor = 0 if scale_to_zero else 1
        if not (floor <= min_capacity <= max_capacity and max_capacity >= 1):
            errs.append(
                validation_error(
                    self,
                    "InvalidCapacity",
                    prop="min_capacity/max_capacity",
                    value=(min_capacity, max_capacity),
                    problem="is not a capacity range",
                    allowed=f"{floor} <= min_capacity <= max_capacity, max_capacity >= 1"
                    + ("" if scale_to_zero else " (0 only on an asynchronous endpoint)"),
                    fix="pass e.g. min_capacity=1, max_capacity=4",
                )
            )
        raise_all(errs)
        if instance_count is not None and not min_capacity <= instance_count <= max_capacity:
            cdk.Annotations.of(self).add_warning_v2(
                "cdk-triton:InstanceCountOutsideCapacity",
                f"instance_count {instance_count} is outside {min_capacity}..{max_capacity}; "
                "Application Auto Scaling will move it into the range",
            )
        # A token inside a string renders as Fn::Join; no jsii call (Fn.join is one).
        self.resource_id = f"endpoint/{endpoint_name}/variant/{variant_name}"
        self.target = appscaling.CfnScalableTarget(
            self,
            "Target",
            service_namespace="sagemaker",
            scalable_dimension=scalable_dimension or variant_dimension(),
            resource_id=self.resource_id,
            min_capacity=min_capacity,
            max_capacity=max_capacity,
        )
        self.min_capacity = min_capacity
        self.max_capacity = max_capacity
        self.policies: list[appscaling.CfnScalingPolicy] = []

    def scale_on_gpu_utilization(
        self,
        target_percent: float = 60,
        **options: Unpack[TargetTrackingOptions],
    ) -> appscaling.CfnScalingPolicy:
        """Track GPUUtilization at ``target_percent`` per GPU.

        The metric (namespace ``/aws/sagemaker/Endpoints``, Average) is 0-100 x the GPU count, so the
        target value is ``target_percent * gpu_count`` of the instance type.

        Args:
            target_percent: per-GPU utilization to hold (1..100). Default: 60.
            options: ``TargetTrackingOptions`` (cooldowns, disable_scale_in).
        """
        tracking = _tracking("scale_on_gpu_utilization", options)
        gpus = self.gpu_count
        errs: list[TritonValidationError] = []
        if gpus is None:
            errs.append(
                validation_error(
                    self,
                    "MissingEndpointAttribute",
                    prop="gpu_count",
                    value=None,
                    problem="is needed for scale_on_gpu_utilization (the target is the per-GPU percentage "
                    "times the GPU count), and the endpoint was imported without it",
                    allowed="an endpoint imported with instance_type=... or gpu_count=...",
                    fix="pass EndpointAttributes(instance_type=... or gpu_count=...) to TritonEndpoint.from_endpoint_attributes",
                )
            )
        elif gpus == 0 and not (self.instance_type is not None and is_token(self.instance_type)):
            errs.append(
                validation_error(
                    self,
                    "GpuScalingOnCpuInstance",
                    prop="instance_type",
                    value=self.instance_type,
                    problem="has no GPU, so GPUUtilization is never published",
                    allowed="a GPU instance type (ml.g4dn, ml.g5, ml.g6, ml.p3 ...)",
                    fix="use scale_on_invocations_per_instance on CPU instances",
                )
            )
        if not 0 < target_percent <= 100:
            errs.append(
                validation_error(
                    self,
                    "InvalidTargetValue",
                    prop="target_percent",
                    value=target_percent,
                    problem="is not a per-GPU utilization percentage",
                    allowed="0 < target_percent <= 100",
                    fix="pass the per-GPU percentage, e.g. 60 (the construct multiplies by the GPU count)",
                )
            )
        raise_all(errs)
        return self._policy(
            "GpuUtilization",
            props(
                target_value=float(target_percent) * max(gpus or 0, 1),
                customized_metric_specification=props(
                    namespace=GPU_UTILIZATION.namespace,
                    metric_name=GPU_UTILIZATION.name,
                    statistic=GPU_UTILIZATION.statistic,
                    dimensions=[
                        props(name=d["name"], value=d["value"])
                        for d in dimension_list(self.endpoint_name, self.variant_name)
                    ],
                ),
                **tracking,
            ),
        )

    def scale_on_invocations_per_instance(
        self,
        invocations_per_minute: float,
        **options: Unpack[TargetTrackingOptions],
    ) -> appscaling.CfnScalingPolicy:
        """Track SageMakerVariantInvocationsPerInstance (invocations per instance per minute).

        Args:
            invocations_per_minute: the target per instance (> 0).
            options: ``TargetTrackingOptions`` (cooldowns, disable_scale_in).
        """
        tracking = _tracking("scale_on_invocations_per_instance", options)
        if not invocations_per_minute > 0:
            raise validation_error(
                self,
                "InvalidTargetValue",
                prop="invocations_per_minute",
                value=invocations_per_minute,
                problem="is not a positive rate",
                allowed="> 0 invocations per instance per minute",
                fix="load-test one instance and pass about half its sustainable rate",
            )
        return self._policy(
            "InvocationsPerInstance",
            props(
                target_value=float(invocations_per_minute),
                predefined_metric_specification=props(
                    predefined_metric_type="SageMakerVariantInvocationsPerInstance",
                ),
                **tracking,
            ),
        )

    def scale_on_backlog_per_instance(
        self,
        backlog_per_instance: float = async_inference.DEFAULT_BACKLOG_PER_INSTANCE,
        **options: Unpack[TargetTrackingOptions],
    ) -> appscaling.CfnScalingPolicy:
        """Track ApproximateBacklogSizePerInstance (an asynchronous endpoint's queued requests per instance,
        AWS/SageMaker, dimension EndpointName, Average); with ``min_capacity`` 0 also the step policy that
        scales out from zero on HasBacklogWithoutCapacity (``config.async_inference`` cites the guide).

        Args:
            backlog_per_instance: the target (> 0). Default: 5.
            options: ``TargetTrackingOptions``. Default: scale-in cooldown 600 s, scale-out 300 s.
        """
        tracking = _tracking(
            "scale_on_backlog_per_instance",
            options,
            async_inference.BACKLOG_SCALE_IN_COOLDOWN_S,
            async_inference.BACKLOG_SCALE_OUT_COOLDOWN_S,
        )
        if not backlog_per_instance > 0:
            raise validation_error(
                self,
                "InvalidTargetValue",
                prop="backlog_per_instance",
                value=backlog_per_instance,
                problem="is not a positive backlog target",
                allowed="> 0 queued requests per instance",
                fix="pass e.g. 5",
            )
        spec = APPROXIMATE_BACKLOG_SIZE_PER_INSTANCE
        policy = self._policy(
            "BacklogPerInstance",
            props(
                target_value=float(backlog_per_instance),
                customized_metric_specification=props(
                    namespace=spec.namespace,
                    metric_name=spec.name,
                    statistic=spec.statistic,
                    dimensions=[props(**d) for d in endpoint_dimension_list(self.endpoint_name)],
                ),
                **tracking,
            ),
        )
        if self.min_capacity == 0:
            self._scale_out_from_backlog()
        return policy

    def _scale_out_from_backlog(self) -> None:
        """The guide's scale-from-zero pair: a StepScaling policy (+1 instance) and its alarm on
        HasBacklogWithoutCapacity (values: ``config.async_inference.SCALE_FROM_ZERO``)."""
        self.scale_from_zero_policy, self.scale_from_zero_alarm = _scale_out_from_zero(
            self,
            target_ref=self.target.ref,
            policy_name=f"{self.endpoint_name}-HasBacklogWithoutCapacity",
            alarm_id="HasBacklogWithoutCapacityAlarm",
            description=f"cdk-triton: asynchronous endpoint {self.endpoint_name} has queued requests "
            "and no instance; adds one (scale out from zero)",
            metric=HAS_BACKLOG_WITHOUT_CAPACITY,
            dimensions=[props(**d) for d in endpoint_dimension_list(self.endpoint_name)],
            values=async_inference.SCALE_FROM_ZERO,
        )
        self.policies.append(self.scale_from_zero_policy)

    def _policy(
        self,
        name: str,
        config: dict[str, Any],
    ) -> appscaling.CfnScalingPolicy:
        policy = _tracking_policy(
            self, name, policy_name=f"{self.endpoint_name}-{name}", target_ref=self.target.ref, config=config
        )
        self.policies.append(policy)
        return policy


# ---------------------------------------------------------------------------- inference components

#: The copy-count dimension of an inference component (Application Auto Scaling, botocore's enum): the
#: ``scaling_dimension`` of the mode whose endpoints hold components.
COPY_COUNT_DIMENSION = modes.only(components=True).scaling_dimension
#: The target a copy-scaled component tracks unless told: concurrent requests per copy (an assumption:
#: a Triton copy with dynamic batching keeps a few requests in flight; load-test and pass your own).
DEFAULT_CONCURRENT_REQUESTS_PER_COPY = 5.0
#: The scale-out-from-zero step policy's cooldown (the guide "Scale an endpoint to zero instances").
SCALE_FROM_ZERO_COOLDOWN_S = 60
#: A component's scale-from-zero pair (the guide "Scale an endpoint to zero instances"; the alarm fires on
#: the first request that finds no copy), keyed as ``config.async_inference.SCALE_FROM_ZERO``.
COMPONENT_SCALE_FROM_ZERO: dict[str, Any] = {
    "alarm_statistic": "Sum",
    "alarm_period_s": 60,
    "alarm_evaluation_periods": 1,
    "alarm_datapoints": 1,
    "alarm_threshold": 1,
    "alarm_comparison": "GreaterThanOrEqualToThreshold",
    "alarm_missing_data": "notBreaching",
    "policy_aggregation": "Maximum",
    "policy_cooldown_s": SCALE_FROM_ZERO_COOLDOWN_S,
}


class ComponentScaling(Construct):
    """Defines the copy-count scalable target of one inference component and its policies.

    ``inference-component/<name>``, dimension ``sagemaker:inference-component:DesiredCopyCount``, min 0
    allowed. With ``min_copies=0`` it also defines what brings the component back from zero copies, as
    the SageMaker guide "Scale an endpoint to zero instances" does: a StepScaling policy (ChangeInCapacity
    +1, MetricAggregationType Maximum, cooldown 60 s) and a CloudWatch alarm on ``NoCapacityInvocationFailures``
    (namespace AWS/SageMaker, dimension InferenceComponentName, Sum over 60 s, one datapoint) whose action is
    that policy. The guide's alarm compares ``GreaterThanThreshold 1`` (two failed requests in a minute);
    this one uses ``GreaterThanOrEqualToThreshold 1``: the first request that finds no copy wakes it.
    Like ``TritonScaling`` it receives the component's name, never the component.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        component_name: str,
        min_copies: int = 0,
        max_copies: int,
        component: cdk.CfnResource | None = None,
    ) -> None:
        """Define the scalable target (and the scale-out-from-zero policy and alarm when min_copies is 0).

        Args:
            component_name: the inference component's name.
            min_copies: Default: 0 (scale in to zero copies).
            max_copies: the most copies (>= 1).
            component: the ``AWS::SageMaker::InferenceComponent`` the target depends on. Default: none.
        """
        super().__init__(scope, construct_id)
        if not (0 <= min_copies <= max_copies and max_copies >= 1):
            raise validation_error(
                self,
                "InvalidCopyCount",
                prop="min_copies/max_copies",
                value=(min_copies, max_copies),
                problem="is not a copy range",
                allowed="0 <= min_copies <= max_copies, max_copies >= 1",
                fix="pass e.g. min_copies=0, max_copies=4",
            )
        self.component_name = component_name
        self.min_copies = min_copies
        self.max_copies = max_copies
        self.resource_id = f"inference-component/{component_name}"
        self.target = appscaling.CfnScalableTarget(
            self,
            "Target",
            service_namespace="sagemaker",
            scalable_dimension=COPY_COUNT_DIMENSION,
            resource_id=self.resource_id,
            min_capacity=min_copies,
            max_capacity=max_copies,
        )
        if component is not None:
            self.target.add_resource_dependency(component)
        self.policies: list[appscaling.CfnScalingPolicy] = []
        self.scale_from_zero_alarm: cloudwatch.CfnAlarm | None = None
        if min_copies == 0:
            self._scale_out_from_zero()

    def scale_on_invocations_per_copy(
        self, invocations_per_minute: float, **options: Unpack[TargetTrackingOptions]
    ) -> appscaling.CfnScalingPolicy:
        """Track SageMakerInferenceComponentInvocationsPerCopy (invocations per copy per minute, > 0)."""
        return self._tracking(
            "InvocationsPerCopy",
            "SageMakerInferenceComponentInvocationsPerCopy",
            invocations_per_minute,
            "invocations_per_minute",
            "scale_on_invocations_per_copy",
            options,
        )

    def scale_on_concurrent_requests_per_copy(
        self,
        concurrent_requests: float = DEFAULT_CONCURRENT_REQUESTS_PER_COPY,
        **options: Unpack[TargetTrackingOptions],
    ) -> appscaling.CfnScalingPolicy:
        """Track SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution (in flight per copy, > 0)."""
        return self._tracking(
            "ConcurrentRequestsPerCopy",
            "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
            concurrent_requests,
            "concurrent_requests",
            "scale_on_concurrent_requests_per_copy",
            options,
        )

    def _tracking(
        self,
        name: str,
        metric_type: str,
        target: float,
        prop: str,
        owner: str,
        options: TargetTrackingOptions,
    ) -> appscaling.CfnScalingPolicy:
        tracking = _tracking(owner, options)
        errs: list[TritonValidationError] = []
        if not target > 0:
            errs.append(
                validation_error(
                    self,
                    "InvalidTargetValue",
                    prop=prop,
                    value=target,
                    problem="is not a positive target",
                    allowed="> 0",
                    fix="load-test one copy and pass about half of what it sustains",
                )
            )
        raise_all(errs)
        policy = _tracking_policy(
            self,
            name,
            policy_name=f"{self.component_name}-{name}",
            target_ref=self.target.ref,
            config=props(
                target_value=float(target),
                predefined_metric_specification=props(predefined_metric_type=metric_type),
                **tracking,
            ),
        )
        self.policies.append(policy)
        return policy

    def _scale_out_from_zero(self) -> None:
        self.scale_from_zero_policy, self.scale_from_zero_alarm = _scale_out_from_zero(
            self,
            target_ref=self.target.ref,
            policy_name=f"{self.component_name}-ScaleOutFromZero",
            alarm_id="NoCapacityAlarm",
            description=f"cdk-triton: inference component {self.component_name} was invoked with no "
            "copy; adds one (scale out from zero)",
            metric=NO_CAPACITY_INVOCATION_FAILURES,
            dimensions=[props(name="InferenceComponentName", value=self.component_name)],
            values=COMPONENT_SCALE_FROM_ZERO,
        )


# ---------------------------------------------------------------------------- policies of both


def _tracking_policy(
    scope: Construct, name: str, *, policy_name: str, target_ref: str, config: dict[str, Any]
) -> appscaling.CfnScalingPolicy:
    """A TargetTrackingScaling policy (child ``name``) of the scalable target ``target_ref``."""
    return appscaling.CfnScalingPolicy(
        scope,
        name,
        policy_name=policy_name,
        policy_type="TargetTrackingScaling",
        scaling_target_id=target_ref,
        target_tracking_scaling_policy_configuration=config,
    )


def _scale_out_from_zero(
    scope: Construct,
    *,
    target_ref: str,
    policy_name: str,
    alarm_id: str,
    description: str,
    metric: MetricDef,
    dimensions: list[dict[str, Any]],
    values: Mapping[str, Any],
) -> tuple[appscaling.CfnScalingPolicy, cloudwatch.CfnAlarm]:
    """The guide's scale-from-zero pair under ``scope``: a StepScaling policy ``ScaleOutFromZero`` (+1
    instance or copy, ChangeInCapacity) and the alarm ``alarm_id`` on ``metric`` whose action it is;
    ``values``: the pair's settings, keyed as ``config.async_inference.SCALE_FROM_ZERO``."""
    policy = appscaling.CfnScalingPolicy(
        scope,
        "ScaleOutFromZero",
        policy_name=policy_name,
        policy_type="StepScaling",
        scaling_target_id=target_ref,
        step_scaling_policy_configuration=props(
            adjustment_type="ChangeInCapacity",
            metric_aggregation_type=values["policy_aggregation"],
            cooldown=values["policy_cooldown_s"],
            step_adjustments=[props(metric_interval_lower_bound=0, scaling_adjustment=1)],
        ),
    )
    alarm = cloudwatch.CfnAlarm(
        scope,
        alarm_id,
        alarm_description=description,
        namespace=metric.namespace,
        metric_name=metric.name,
        dimensions=dimensions,
        statistic=values["alarm_statistic"],
        period=values["alarm_period_s"],
        evaluation_periods=values["alarm_evaluation_periods"],
        datapoints_to_alarm=values["alarm_datapoints"],
        threshold=values["alarm_threshold"],
        comparison_operator=values["alarm_comparison"],
        treat_missing_data=values["alarm_missing_data"],
        alarm_actions=[policy.ref],
    )
    return policy, alarm
