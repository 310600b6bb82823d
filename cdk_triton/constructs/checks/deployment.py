"""Deployment guardrails: one update policy, valid traffic steps within SageMaker's shares, timeouts, alarms."""

from __future__ import annotations

from cdk_triton.constructs._tokens import seconds
from cdk_triton.constructs.deployment import DeploymentGuardrails, TrafficStep
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError


def check_deployment(d: DeploymentGuardrails, *, instance_count: int) -> list[TritonValidationError]:
    """Deployment guardrails: one update policy, valid steps within SageMaker's shares, timeouts, alarms."""
    errs = []
    policies = int(d.traffic_routing is not None) + int(d.rolling_batch is not None)
    if policies != 1:
        errs.append(
            catalogued(
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
            catalogued(
                "InvalidDeploymentPolicy",
                prop="deployment.traffic_routing",
                value=d.traffic_routing,
                problem="is not a blue/green traffic routing",
                allowed="ALL_AT_ONCE, CANARY, LINEAR",
                fix="use DeploymentGuardrails.all_at_once / canary / linear",
            )
        )
    errs += _check_steps(d, instance_count)
    errs += check_step_shares(d, instance_count=instance_count)
    limit = 28800 if d.rolling_batch is not None else 14400
    for prop, dur, lo, hi in (
        ("deployment.wait_interval", d.wait_interval, 0, 3600),
        ("deployment.termination_wait", d.termination_wait, 0, 3600),
        ("deployment.maximum_execution_timeout", d.maximum_execution_timeout, 600, limit),
    ):
        if dur is not None and not lo <= seconds(dur) <= hi:
            errs.append(
                catalogued(
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
            catalogued(
                "TooManyRollbackAlarms",
                prop="deployment.rollback_alarms",
                value=len(d.rollback_alarms),
                problem="exceeds SageMaker's limit",
                allowed="at most 10 alarms",
                fix="combine alarms in a CompositeAlarm",
            )
        )
    return errs


def _step_is_invalid(step: TrafficStep) -> bool:
    return (
        (step.percent is None) == (step.instance_count is None)
        or (step.percent is not None and not 1 <= step.percent <= 100)
        or (step.instance_count is not None and step.instance_count < 1)
    )


def _check_steps(d: DeploymentGuardrails, instance_count: int) -> list[TritonValidationError]:
    errs = []
    for prop, step in (("deployment.step", d.step), ("deployment.rolling_batch", d.rolling_batch)):
        if step is None:
            if prop == "deployment.step" and d.traffic_routing in ("CANARY", "LINEAR"):
                errs.append(
                    catalogued(
                        "InvalidTrafficStep",
                        prop=prop,
                        value=None,
                        problem="is missing",
                        allowed="a percent (1..100) or an instance count >= 1",
                        fix="pass percent=... or instance_count=...",
                    )
                )
            continue
        if _step_is_invalid(step):
            errs.append(
                catalogued(
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
                or (step.instance_count is not None and step.instance_count * 2 > instance_count)
            )
        ):
            errs.append(
                catalogued(
                    "CanaryTooLarge",
                    prop="deployment.step",
                    value=f"{step.percent} %"
                    if step.percent is not None
                    else f"{step.instance_count} instances",
                    problem=f"is more than half of the fleet ({instance_count} instances)",
                    allowed="a canary of at most 50 % of the instances",
                    fix="pass a smaller canary, e.g. percent=10, or use linear()",
                )
            )
    return errs


def check_step_shares(d: DeploymentGuardrails, *, instance_count: int) -> list[TritonValidationError]:
    """SageMaker's share of the fleet per step: linear 10-50 %, rolling 5-50 % (canary: CanaryTooLarge)."""
    if d.traffic_routing == "LINEAR":
        prop, step, lo, name = "deployment.step", d.step, 10, "a linear step"
    elif d.rolling_batch is not None and d.traffic_routing is None:
        prop, step, lo, name = "deployment.rolling_batch", d.rolling_batch, 5, "a rolling batch"
    else:
        return []
    if step is None or _step_is_invalid(step):
        return []  # reported as InvalidTrafficStep by check_deployment
    if step.percent is not None:
        share, value = float(step.percent), f"{step.percent} %"
    else:
        share, value = (
            100.0 * (step.instance_count or 0) / instance_count,
            f"{step.instance_count} instances",
        )
    if lo <= share <= 50:
        return []
    return [
        catalogued(
            "InvalidTrafficStep",
            prop=prop,
            value=value,
            problem=f"is {share:.0f} % of the fleet ({instance_count} instances)",
            allowed=f"{name} of {lo}..50 % of the instances",
            fix=f"pass percent={lo}..50, or an instance_count within that share of instance_count",
        )
    ]
