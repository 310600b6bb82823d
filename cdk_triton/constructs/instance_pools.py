"""An endpoint's instance pools (``TritonEndpoint(instance_pools=...)``, or the manifest's
``instance_pools:``): which pools, and the pools against the built models with their warnings annotated.

The rules are pure functions in ``checks/instance_pools.py``; the values' limits are
``config.instance_pools``'s; the variant's ``InstancePools`` are built by ``variant.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import aws_cdk as cdk
from constructs import Construct

from cdk_triton.constructs.checks.instance_pools import check_pools_against_models
from cdk_triton.errors import TritonValidationError

if TYPE_CHECKING:
    from cdk_triton.constructs.artifacts import ModelArtifacts
    from cdk_triton.constructs.model import TritonModel


def pools_or_declared(
    artifacts: ModelArtifacts | None,
    instance_type: str | None,
    pools: Sequence[str] | None,
    timeout: cdk.Duration | None,
) -> tuple[Sequence[str] | None, cdk.Duration | None]:
    """The pools and their provisioning timeout: the props, else (neither ``instance_type`` nor
    ``instance_pools`` given) the manifest's ``instance_pools:`` (models.yaml); the props win."""
    declared = (
        artifacts.declared_pools()
        if artifacts is not None and instance_type is None and pools is None
        else None
    )
    if declared is None:
        return pools, timeout
    if timeout is None and declared.provision_timeout_s is not None:
        timeout = cdk.Duration.seconds(declared.provision_timeout_s)
    return list(declared.instance_types), timeout


def check_pools_at(scope: Construct, pools: Sequence[str], model: TritonModel) -> list[TritonValidationError]:
    """Every pool after the first against ``model``'s built models (``checks.instance_pools``); the
    warnings annotated at ``scope`` at once, the errors returned for the endpoint to raise."""
    errs, warnings = check_pools_against_models(
        pools, triton_version=model.triton_version, artifacts=model.artifacts
    )
    for warning_id, message in warnings:
        cdk.Annotations.of(scope).add_warning_v2(warning_id, message)
    return errs
