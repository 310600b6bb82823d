"""Autoscaling of a Triton endpoint variant: GPUUtilization or InvocationsPerInstance target tracking."""

from __future__ import annotations

from typing import Any, TypedDict, Unpack

import aws_cdk as cdk
from aws_cdk import aws_applicationautoscaling as appscaling
from constructs import Construct

from cdk_triton.config import tables
from cdk_triton.constructs._kwargs import refuse_unknown
from cdk_triton.constructs._tokens import is_token, known_duration, props, seconds
from cdk_triton.constructs.errors import validation_error
from cdk_triton.constructs.metrics import GPU_UTILIZATION, dimension_list
from cdk_triton.errors import TritonValidationError, raise_all

#: Seed example of the service docs: scale in slowly, scale out fast.
DEFAULT_SCALE_IN_COOLDOWN = known_duration(cdk.Duration.seconds(600), 600)
DEFAULT_SCALE_OUT_COOLDOWN = known_duration(cdk.Duration.seconds(200), 200)


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


def _tracking(owner: str, options: TargetTrackingOptions) -> dict[str, Any]:
    """The options' part of a TargetTrackingScalingPolicyConfiguration, defaults applied."""
    refuse_unknown(owner, options, TARGET_TRACKING_OPTIONS)
    return {
        "scale_in_cooldown": seconds(options.get("scale_in_cooldown", DEFAULT_SCALE_IN_COOLDOWN)),
        "scale_out_cooldown": seconds(options.get("scale_out_cooldown", DEFAULT_SCALE_OUT_COOLDOWN)),
        "disable_scale_in": options.get("disable_scale_in", False) or None,
    }


class TritonScaling(Construct):
    """Defines the scalable target (``sagemaker:variant:DesiredInstanceCount``) of an endpoint variant.

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
        if not 1 <= min_capacity <= max_capacity:
            errs.append(
                validation_error(
                    self,
                    "InvalidCapacity",
                    prop="min_capacity/max_capacity",
                    value=(min_capacity, max_capacity),
                    problem="is not a capacity range",
                    allowed="1 <= min_capacity <= max_capacity",
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
            scalable_dimension="sagemaker:variant:DesiredInstanceCount",
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

    def _policy(
        self,
        name: str,
        config: dict[str, Any],
    ) -> appscaling.CfnScalingPolicy:
        policy = appscaling.CfnScalingPolicy(
            self,
            name,
            policy_name=f"{self.endpoint_name}-{name}",
            policy_type="TargetTrackingScaling",
            scaling_target_id=self.target.ref,
            target_tracking_scaling_policy_configuration=config,
        )
        self.policies.append(policy)
        return policy
