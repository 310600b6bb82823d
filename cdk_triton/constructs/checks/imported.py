"""The attributes of an imported endpoint that have a shape: instance type, GPU and instance counts."""

from __future__ import annotations

from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.checks.instance import INSTANCE_TYPE, instance_count_below_1, not_an_instance_type
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError


def check_imported(
    instance_type: str | None, gpu_count: int | None, instance_count: int | None
) -> list[TritonValidationError]:
    """The attributes of an imported endpoint that have a shape: instance type, GPU and instance counts."""
    errs = []
    if (
        instance_type is not None
        and not is_token(instance_type)
        and not INSTANCE_TYPE.fullmatch(instance_type)
    ):
        errs.append(not_an_instance_type(instance_type))
    if gpu_count is not None and gpu_count < 0:
        errs.append(
            catalogued(
                "InvalidGpuCount",
                prop="gpu_count",
                value=gpu_count,
                problem="is negative",
                allowed="0 (CPU) or the GPUs per instance",
                fix="pass the instance type instead, or the GPUs per instance",
            )
        )
    if instance_count is not None and instance_count < 1:
        errs.append(
            instance_count_below_1(instance_count, "pass the variant's instance count, or leave it unset")
        )
    return errs
