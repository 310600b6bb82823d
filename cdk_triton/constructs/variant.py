"""The one builder of production variants: every ``ProductionVariant`` the library defines comes from here.

:func:`build_variant` is pure: it takes the facts of one variant (:class:`VariantFacts`) and returns
the ``CfnEndpointConfig.ProductionVariantProperty`` (as the plain mapping jsii passes) with what to
say about it (:class:`BuiltVariant`: infos, warnings, errors). :func:`apply_variant` locates the
errors at a construct and raises them, and writes the annotations. The host decision (release x
instance family x ``InferenceAmiVersion``) is ``cdk_triton.config.gpu_hosts.decide_host``; later hosting
modes and shadow variants call this builder too, so they get the same decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import aws_cdk as cdk
from constructs import IConstruct

from cdk_triton.config import gpu_hosts, instance_pools
from cdk_triton.constructs._tokens import is_token, props
from cdk_triton.errors import TritonValidationError, raise_at

__all__ = ["BuiltVariant", "VariantFacts", "apply_variant", "build_variant"]


@dataclass(frozen=True, kw_only=True, slots=True)
class VariantFacts:
    """What decides one production variant (every field as the construct received it)."""

    variant_name: str
    #: The Model behind the variant (None: an inference-components variant, whose components name theirs).
    model_name: str | None
    instance_type: str
    instance_count: int
    initial_variant_weight: float = 1
    #: The Triton release of the image (None: a custom image whose release is unknown).
    triton_version: str | None = None
    #: The ``InferenceAmiVersion`` the user pinned (None: let the host decision choose).
    inference_ami_version: str | None = None
    volume_size_gib: int | None = None
    container_startup_health_check_timeout_seconds: int | None = None
    model_data_download_timeout_seconds: int | None = None
    #: Managed instance scaling (min, max): an inference-components variant (min may be 0). None: off.
    managed_instance_scaling: tuple[int, int] | None = None
    #: RoutingConfig.RoutingStrategy (an inference-components variant). None: SageMaker's default.
    routing_strategy: str | None = None
    #: ``InstancePools`` in priority order: (instance type, ``ModelNameOverride`` or None). Non-empty:
    #: the variant carries them instead of ``InstanceType`` (``instance_type`` is then the first pool's).
    instance_pools: tuple[tuple[str, str | None], ...] = ()
    #: ``VariantInstanceProvisionTimeoutInSeconds`` (pools only). None: SageMaker's default.
    provision_timeout_seconds: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class BuiltVariant:
    """The variant's L1 property and what to say about it (errors not yet located)."""

    production_variant: dict[str, Any]
    host: gpu_hosts.HostDecision
    infos: tuple[str, ...] = ()
    warnings: tuple[tuple[str, str], ...] = ()
    errors: tuple[TritonValidationError, ...] = field(default=())

    @property
    def inference_ami_version(self) -> str | None:
        """The ``InferenceAmiVersion`` the template carries (None: left out)."""
        value = self.production_variant.get("inferenceAmiVersion")
        return value if isinstance(value, str) else None


def _host(facts: VariantFacts, instance_type: str | None = None) -> gpu_hosts.HostDecision:
    pinned = facts.inference_ami_version
    it = instance_type if instance_type is not None else facts.instance_type
    if is_token(it) or is_token(pinned) or is_token(facts.triton_version):
        return gpu_hosts.HostDecision(outcome="unchanged", inference_ami_version=pinned)
    return gpu_hosts.decide_host(release=facts.triton_version, instance_type=it, inference_ami_version=pinned)


def _shared_ami(
    facts: VariantFacts, decisions: dict[str, gpu_hosts.HostDecision]
) -> gpu_hosts.HostDecision | None:
    """Where the pools' decisions differ only because some pools had an AMI chosen: the first chosen AMI
    that every pool's family accepts and that runs the release there (each pool decided as pinned to it),
    so one ``InferenceAmiVersion`` serves every pool; None when there is no such AMI."""
    chosen = [d for d in decisions.values() if d.outcome == "choose"]
    if (
        facts.inference_ami_version is not None
        or len({d.inference_ami_version for d in decisions.values()}) < 2
    ):
        return None
    for decision in chosen:
        pinned = [
            gpu_hosts.decide_host(
                release=facts.triton_version,
                instance_type=it,
                inference_ami_version=decision.inference_ami_version,
            )
            for it in decisions
            if not is_token(it)
        ]
        if all(p.outcome == "unchanged" for p in pinned):
            return decision
    return None


PoolNotes = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]


def _pool_hosts(
    facts: VariantFacts,
) -> tuple[gpu_hosts.HostDecision, list[TritonValidationError], PoolNotes]:
    """The host decision of every pool: the variant's (the shared chosen AMI, else the first pool's),
    ``InstancePoolsHostMismatch`` when the pools need different ``InferenceAmiVersion`` values (one
    variant carries one), and the other pools' infos and warnings, each naming its pool."""
    decisions = {it: _host(facts, it) for it, _ in facts.instance_pools}
    errors = [d.error for d in decisions.values() if d.error is not None]
    shared = None if errors else _shared_ami(facts, decisions)
    host = shared if shared is not None else next(iter(decisions.values()))
    if shared is None:
        mismatch = instance_pools.ami_mismatch({it: d.inference_ami_version for it, d in decisions.items()})
        if mismatch is not None and not errors:
            errors.append(mismatch)
    others = [(it, d) for it, d in decisions.items() if d is not host]
    infos = tuple(
        f"instance pool {it}: {d.message}" for it, d in others if d.outcome == "choose" and d.message
    )
    warnings = tuple(
        (d.warning_id, f"instance pool {it}: {d.message}")
        for it, d in others
        if d.outcome == "warn" and d.message and d.warning_id
    )
    return host, errors, (infos, warnings)


def build_variant(facts: VariantFacts) -> BuiltVariant:
    """The production variant of ``facts``: the host decision applied, the template's key order kept."""
    pooled = bool(facts.instance_pools)
    host, pool_errors, (pool_infos, pool_warnings) = (
        _pool_hosts(facts) if pooled else (_host(facts), [], ((), ()))
    )
    prop = props(
        variant_name=facts.variant_name,
        model_name=facts.model_name,
        initial_instance_count=facts.instance_count,
        initial_variant_weight=facts.initial_variant_weight,
        instance_type=None if pooled else facts.instance_type,
        instance_pools=[
            props(instance_type=it, priority=i, model_name_override=override)
            for i, (it, override) in enumerate(facts.instance_pools, start=1)
        ]
        or None,
        variant_instance_provision_timeout_in_seconds=facts.provision_timeout_seconds if pooled else None,
        container_startup_health_check_timeout_in_seconds=facts.container_startup_health_check_timeout_seconds,
        model_data_download_timeout_in_seconds=facts.model_data_download_timeout_seconds,
        volume_size_in_gb=facts.volume_size_gib,
        inference_ami_version=host.inference_ami_version,
        managed_instance_scaling=_managed(facts.managed_instance_scaling),
        routing_config=props(routing_strategy=facts.routing_strategy) if facts.routing_strategy else None,
    )
    infos: tuple[str, ...] = ()
    warnings: tuple[tuple[str, str], ...] = ()
    if host.outcome == "choose" and host.message:
        infos = (host.message,)
    elif host.outcome == "warn" and host.message and host.warning_id:
        warnings = ((host.warning_id, host.message),)
    errors = tuple(pool_errors) if pooled else (host.error,) if host.error is not None else ()
    return BuiltVariant(
        production_variant=prop,
        host=host,
        infos=infos + pool_infos,
        warnings=warnings + pool_warnings,
        errors=errors,
    )


def _managed(bounds: tuple[int, int] | None) -> dict[str, Any] | None:
    """ManagedInstanceScaling of (min, max) instances, enabled (None: not managed)."""
    if bounds is None:
        return None
    return props(status="ENABLED", min_instance_count=bounds[0], max_instance_count=bounds[1])


def apply_variant(scope: IConstruct, built: BuiltVariant) -> dict[str, Any]:
    """Raise ``built``'s errors at ``scope`` (nothing is defined then), write its annotations, return the property."""
    raise_at(scope, built.errors)
    annotate(scope, built)
    return built.production_variant


def annotate(scope: IConstruct, built: BuiltVariant) -> None:
    """The variant's infos and warnings, as annotations of ``scope``."""
    for message in built.infos:
        cdk.Annotations.of(scope).add_info(message)
    for warning_id, message in built.warnings:
        cdk.Annotations.of(scope).add_warning_v2(warning_id, message)
