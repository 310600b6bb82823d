"""Deployment guardrails and data capture of an endpoint: the value objects and their CloudFormation.

``DeploymentGuardrails`` renders the endpoint's ``DeploymentConfig`` (blue/green or rolling, with
auto-rollback alarms); ``DataCapture`` renders the EndpointConfig's ``DataCaptureConfig``. Their
checks are in ``checks/deployment.py`` and ``checks/data_capture.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from cdk_triton.constructs._tokens import known_duration, props, seconds
from cdk_triton.constructs.metrics import INVOCATION_5XX_ERRORS, dimension_list

if TYPE_CHECKING:
    from aws_cdk import aws_s3 as s3

#: Bake time between deployment steps unless told.
DEFAULT_WAIT_INTERVAL = known_duration(cdk.Duration.minutes(5), 300)


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


# ---------------------------------------------------------------------------- CloudFormation


def data_capture_prefix(dc: DataCapture) -> str:
    """The key prefix without a leading '/' and with a trailing one (empty stays empty)."""
    prefix = dc.prefix.lstrip("/")
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    return prefix


def render_data_capture(
    dc: DataCapture, prefix: str
) -> sagemaker.CfnEndpointConfig.DataCaptureConfigProperty:
    """The EndpointConfig's ``DataCaptureConfig`` (the model's role gets the grant separately)."""
    modes = [m for m, on in (("Input", dc.capture_input), ("Output", dc.capture_output)) if on]
    return sagemaker.CfnEndpointConfig.DataCaptureConfigProperty(
        enable_capture=True,
        initial_sampling_percentage=dc.sampling_percentage,
        destination_s3_uri=f"s3://{dc.bucket.bucket_name}/{prefix}",
        capture_options=[sagemaker.CfnEndpointConfig.CaptureOptionProperty(capture_mode=m) for m in modes],
        kms_key_id=dc.encryption_key.key_arn if dc.encryption_key else None,
    )


def rollback_alarm(scope: Construct, *, endpoint_name: str, variant_name: str) -> cloudwatch.CfnAlarm:
    """The default auto-rollback alarm: any 5XX error of the variant within a minute."""
    return cloudwatch.CfnAlarm(
        scope,
        "RollbackAlarm",
        alarm_description=f"cdk-triton: 5XX errors on {endpoint_name} roll a deployment back",
        namespace=INVOCATION_5XX_ERRORS.namespace,
        metric_name=INVOCATION_5XX_ERRORS.name,
        dimensions=[
            cloudwatch.CfnAlarm.DimensionProperty(name=d["name"], value=d["value"])
            for d in dimension_list(endpoint_name, variant_name)
        ],
        statistic=INVOCATION_5XX_ERRORS.statistic,
        period=60,
        threshold=1,
        evaluation_periods=1,
        comparison_operator="GreaterThanOrEqualToThreshold",
        treat_missing_data="notBreaching",
    )


def rollback_alarm_names(
    scope: Construct, deployment: DeploymentGuardrails | None, *, endpoint_name: str, variant_name: str
) -> tuple[list[str], cloudwatch.CfnAlarm | None]:
    """The alarms that roll ``deployment`` back: its ``rollback_alarms``' names, else the one default
    alarm defined here (:func:`rollback_alarm`), and that alarm (None when none was defined)."""
    if deployment is None:
        return [], None
    if deployment.rollback_alarms is not None:
        return [a.alarm_name for a in deployment.rollback_alarms], None
    alarm = rollback_alarm(scope, endpoint_name=endpoint_name, variant_name=variant_name)
    return [alarm.ref], alarm


def render_deployment_config(
    d: DeploymentGuardrails, alarm_names: Sequence[str]
) -> sagemaker.CfnEndpoint.DeploymentConfigProperty:
    """The endpoint's ``DeploymentConfig``: a rolling or blue/green policy rolled back by ``alarm_names``."""
    rollback = sagemaker.CfnEndpoint.AutoRollbackConfigProperty(
        alarms=[sagemaker.CfnEndpoint.AlarmProperty(alarm_name=n) for n in alarm_names]
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
            termination_wait_in_seconds=int(d.termination_wait.to_seconds()) if d.termination_wait else None,
            maximum_execution_timeout_in_seconds=max_exec,
        ),
    )


def render_component_deployment(d: DeploymentGuardrails, alarm_names: Sequence[str]) -> dict[str, Any]:
    """An inference component's ``DeploymentConfig``: the rolling policy of ``d`` in copies (a batch given
    as an instance count is a ``COPY_COUNT``, a percent a ``CAPACITY_PERCENT``), rolled back by ``alarm_names``
    (the endpoint guardrails' alarms)."""
    batch = d.rolling_batch or TrafficStep(percent=25)
    size = (
        props(type="COPY_COUNT", value=batch.instance_count)
        if batch.instance_count
        else props(type="CAPACITY_PERCENT", value=batch.percent)
    )
    max_exec = int(d.maximum_execution_timeout.to_seconds()) if d.maximum_execution_timeout else None
    return props(
        rolling_update_policy=props(
            maximum_batch_size=size,
            wait_interval_in_seconds=seconds(d.wait_interval),
            maximum_execution_timeout_in_seconds=max_exec,
        ),
        auto_rollback_configuration=props(alarms=[props(alarm_name=n) for n in alarm_names]),
    )
