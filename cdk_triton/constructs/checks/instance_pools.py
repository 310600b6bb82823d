"""An endpoint's instance pools: ``instance_type`` xor ``instance_pools``, the pools' limits and storage
kind, and each pool after the first against the built models (as ``instance_type`` is checked)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cdk_triton.config import instance_pools, tables
from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.checks import models as model_checks
from cdk_triton.constructs.checks.instance import has_local_storage
from cdk_triton.constructs.checks.modes import refused
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError


def check_pools(
    instance_type: str | None, pools: Sequence[str] | None, timeout_s: int | None
) -> list[TritonValidationError]:
    """``instance_type`` xor ``instance_pools`` (``InstanceTypeOrPools``); the pools within SageMaker's
    limits, of one storage kind (one volume key decision for the variant). ``timeout_s``: the
    ``instance_provision_timeout`` in whole seconds (None when not given)."""
    if (instance_type is None) == (pools is None) or (pools is None and timeout_s is not None):
        both = instance_type is not None and pools is not None
        return [
            catalogued(
                "InstanceTypeOrPools",
                prop="instance_pools"
                if pools is not None or timeout_s is None
                else "instance_provision_timeout",
                value=list(pools) if pools is not None else None,
                problem="is given beside instance_type"
                if both
                else "has no instance type to apply to"
                if timeout_s is not None and pools is None
                else "and instance_type are both missing",
                allowed="instance_type (one instance type) or instance_pools (up to five, highest priority "
                "first), never both; instance_provision_timeout with instance_pools only",
                fix="drop instance_type and list it first in instance_pools"
                if both
                else "pass instance_type='ml.g5.xlarge' or instance_pools=['ml.g5.xlarge', 'ml.g6.xlarge']",
            )
        ]
    if pools is None:
        return []
    values = instance_pools.PoolValues(instance_types=tuple(pools), provision_timeout_s=timeout_s)
    errs = instance_pools.value_problems(values, timeout_prop="instance_provision_timeout")
    concrete = [p for p in pools if not is_token(p)]
    kinds = {p: has_local_storage(p, tables.instance_type_info(p)) for p in concrete}
    if len(set(kinds.values())) > 1:
        errs.append(
            catalogued(
                "InvalidInstancePools",
                prop="instance_pools",
                value=list(pools),
                problem="mixes instance types with local NVMe storage ("
                + ", ".join(p for p, local in kinds.items() if local)
                + ") and EBS-only ones; the variant's volume key is one decision (KmsKeyId refused on NVMe)",
                allowed="pools that all have local NVMe storage, or none",
                fix="keep pools of one storage kind (e.g. ml.g5 and ml.g6, both with NVMe)",
            )
        )
    return errs


def check_pools_against_models(
    pools: Sequence[str], *, triton_version: str | None, artifacts: Any
) -> tuple[list[TritonValidationError], list[tuple[str, str]]]:
    """The mode's row supports pools; every pool after the first checked as ``instance_type`` is (the
    first is ``instance_type``): release, TensorRT plans, mode, GPU memory placement. The warnings name
    their pool (``instance pool <type>: ...``)."""
    if not pools:
        return [], []
    art = artifacts
    row = art.hosting_mode
    refusal = refused(
        row,
        "instance_pools",
        prop="instance_pools",
        allowed="instance pools on a {supported} endpoint",
        fix="pass instance_type (one type), or serve the model from a {supported} endpoint",
    )
    if refusal:
        return refusal, []
    found: list[TritonValidationError] = []
    warned: list[tuple[str, str]] = []
    for it in pools[1:]:
        if is_token(it):
            continue
        fit = model_checks.check_instance_fit(
            it, tables.instance_type_info(it), triton_version=triton_version, artifacts=art
        )
        found += fit.errors
        warned += [(w, f"instance pool {it}: {m}") for w, m in fit.warnings + fit.placement_warnings]
    return found, warned
