"""Dashboards and alarms: CloudWatch periods, evaluation ranges, dashboard names."""

from __future__ import annotations

import re

from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

#: CloudWatch dashboard names.
DASHBOARD_NAME = re.compile(r"^[A-Za-z0-9_-]{1,255}$")


def check_period(prop: str, secs: int, *, high_resolution: tuple[int, ...]) -> list[TritonValidationError]:
    """A CloudWatch period: one of the high-resolution periods, or a multiple of 60 s."""
    if secs in high_resolution or (secs >= 60 and secs % 60 == 0):
        return []
    return [
        catalogued(
            "InvalidPeriod",
            prop=prop,
            value=f"{secs} s",
            problem="is not a CloudWatch period",
            allowed=f"{', '.join(map(str, high_resolution))} or a multiple of 60 seconds",
            fix="pass cdk.Duration.minutes(1) or another whole number of minutes",
        )
    ]


def check_evaluation(period_s: int, evaluation_periods: int) -> list[TritonValidationError]:
    """An alarm evaluates at least one period and at most one day (periods x period <= 86400 s)."""
    if evaluation_periods >= 1 and evaluation_periods * period_s <= 86400:
        return []
    return [
        catalogued(
            "InvalidEvaluationPeriods",
            prop="evaluation_periods",
            value=evaluation_periods,
            problem=f"x period {period_s} s is not an evaluation range CloudWatch accepts",
            allowed="1 <= evaluation_periods, and evaluation_periods x period <= 86400 s (one day)",
            fix="pass e.g. evaluation_periods=3",
        )
    ]


def check_dashboard_name(name: str | None) -> list[TritonValidationError]:
    if name is None or is_token(name) or DASHBOARD_NAME.fullmatch(name):
        return []
    return [
        catalogued(
            "InvalidDashboardName",
            prop="dashboard_name",
            value=name,
            problem="is not a CloudWatch dashboard name",
            allowed="1-255 letters, digits, '-' and '_'",
            fix="drop the other characters, or leave dashboard_name unset",
        )
    ]
