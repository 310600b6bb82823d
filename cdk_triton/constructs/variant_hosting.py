"""What hosts an endpoint's production variant, decided once per endpoint: the variant's hosting.

Both endpoint constructs decide their hosting with the same two functions and then only assemble resources
from it:

* :func:`choose_instances` (before the endpoint defines its model): the instance type, else the first
  pool; the pools; the provisioning timeout; the count. A prop not given is the manifest's (models.yaml's
  ``instance_pools:``, else its one ``instance_types:`` entry), read from the artifacts' declaration.
* :func:`decide_hosting` (once the model is bound) walks :data:`HOSTING_STEPS` over one
  :class:`HostingInputs`, as the build walks its ``STEPS``: the fit of every pool against the built models (GPU architecture, GPU
  memory, placement, host limits), the mode's guardrails, the asynchronous options (the prop, else the
  manifest's ``async:`` block), the production variant with its host decision (image release x instance
  family x ``InferenceAmiVersion``: ``variant.py``) and the shadow variant from the same facts.

The hosting is a frozen value: checks read it instead of deriving the facts again, and its findings are
returned (errors not yet located, warnings as ``(id, message)``) for the construct to raise and annotate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aws_cdk as cdk

from cdk_triton.config import instance_pools as pool_rules
from cdk_triton.config import tables
from cdk_triton.config.server_options import async_input_size_warning
from cdk_triton.config.tables import InstanceTypeInfo
from cdk_triton.constructs import modes as mode_constructs
from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.checks import models as model_checks
from cdk_triton.constructs.checks.host import HostLimits, host_limits_of
from cdk_triton.constructs.checks.instance import has_local_storage
from cdk_triton.constructs.checks.instance_pools import check_pools, check_pools_against_models
from cdk_triton.constructs.variant import BuiltVariant, VariantFacts, build_variant
from cdk_triton.errors import TritonValidationError

if TYPE_CHECKING:  # and the features' modules (asynchronous, shadow): imported where a feature is used
    from cdk_triton.config.server_options import ServerOptions
    from cdk_triton.constructs.artifacts import ArtifactsConfig, ModelArtifacts
    from cdk_triton.constructs.async_inference import AsyncInferenceOptions
    from cdk_triton.constructs.deployment import DeploymentGuardrails
    from cdk_triton.constructs.model import TritonModel
    from cdk_triton.constructs.shadow import ShadowVariant

__all__ = [
    "HOSTING_STEPS",
    "VariantHosting",
    "InstanceChoice",
    "HostingInputs",
    "HostingPart",
    "choose_instances",
    "decide_hosting",
    "whole_seconds",
]

#: A finding for ``Annotations.add_warning_v2``: (warning id, message).
Warning = tuple[str, str]


@dataclass(frozen=True, kw_only=True, slots=True)
class InstanceChoice:
    """The instance types of one production variant, and their limits' errors (not yet located)."""

    #: The instance type (with pools: the first pool's).
    instance_type: str
    #: The ``InstancePools``, highest priority first (empty: one instance type).
    instance_pools: tuple[str, ...]
    provision_timeout: cdk.Duration | None
    instance_count: int
    #: The table's facts of ``instance_type`` (None: a token, or a type the table lacks).
    instance_info: InstanceTypeInfo | None
    errors: tuple[TritonValidationError, ...] = ()
    #: False when no instance type was given or declared (the pools' first stands in, or none): the
    #: caller raises ``errors`` at once, having no instance type to check the rest against.
    instance_type_given: bool = True

    @property
    def provision_timeout_seconds(self) -> int | None:
        """``VariantInstanceProvisionTimeoutInSeconds`` (None: not given, or a token)."""
        return whole_seconds(self.provision_timeout)

    @property
    def local_storage(self) -> bool:
        """Whether the instance type has local NVMe storage (no volume KMS key allowed)."""
        return has_local_storage(self.instance_type, self.instance_info)

    @property
    def gpu_count(self) -> int:
        """GPUs per instance (0 for CPU types); with pools, the fewest of any pool."""
        one = self.instance_info.gpu_count if self.instance_info else 0
        return pool_rules.fewest_gpus(self.instance_pools, one) if self.instance_pools else one

    @property
    def placements(self) -> tuple[str, ...]:
        """Every instance type a copy may be placed on (the pools, else the one type), tokens left out."""
        return tuple(t for t in self.instance_pools or (self.instance_type,) if not is_token(t))

    @property
    def sizing_type(self) -> str:
        """The type derived requirements are sized for: the smallest placement (else ``instance_type``)."""
        return pool_rules.smallest(list(self.placements)) if self.placements else self.instance_type


def whole_seconds(duration: cdk.Duration | None) -> int | None:
    """A duration in whole seconds (None when not given or a token)."""
    if duration is None or is_token(duration):
        return None
    return int(duration.to_seconds())


def choose_instances(
    artifacts: ModelArtifacts | None,
    *,
    instance_type: str | None,
    instance_pools: Sequence[str] | None,
    provision_timeout: cdk.Duration | None,
    instance_count: int,
) -> InstanceChoice:
    """The props, else (neither ``instance_type`` nor ``instance_pools`` given) the manifest's declaration:
    its ``instance_pools:``, else its one instance type. ``InstanceTypeOrPools`` and the pools' limits
    (``checks.instance_pools.check_pools``) come back as ``errors``; without an instance type to check the
    rest against, the caller raises them at once (``instance_type`` is then empty)."""
    if artifacts is not None and instance_type is None and instance_pools is None:
        declared = artifacts.declared_host()
        if declared.pools is not None:
            instance_pools = list(declared.pools.instance_types)
            if provision_timeout is None and declared.pools.provision_timeout_s is not None:
                provision_timeout = cdk.Duration.seconds(declared.pools.provision_timeout_s)
        else:
            instance_type = declared.instance_type
    errors = check_pools(instance_type, instance_pools, whole_seconds(provision_timeout))
    pools = tuple(instance_pools or ())
    chosen = instance_type if instance_type is not None else (pools[0] if pools else "")
    return InstanceChoice(
        instance_type=chosen,
        instance_pools=pools,
        provision_timeout=provision_timeout,
        instance_count=instance_count,
        instance_info=None if is_token(chosen) or not chosen else tables.instance_type_info(chosen),
        errors=tuple(errors),
        instance_type_given=instance_type is not None,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class VariantHosting:
    """One production variant's hosting, decided: instances, sized limits, async options, the variant."""

    instances: InstanceChoice
    #: The timeouts and volume sized from the artifacts (their errors and warnings in the hosting's).
    host_limits: HostLimits
    #: The asynchronous endpoint's options (the prop, else the manifest's ``async:``); None: real-time.
    async_options: AsyncInferenceOptions | None
    #: The production variant (``variant.py``) with its host decision, and the facts it was built from.
    variant_facts: VariantFacts
    variant: BuiltVariant
    #: The shadow variant (``ShadowProductionVariants``; None: none, or refused by ``shadow_errors``).
    shadow: BuiltVariant | None = None
    #: The shadow's errors (not yet located), raised after the production variant's.
    shadow_errors: tuple[TritonValidationError, ...] = ()
    #: The hosting's errors but the variants' (not yet located), and its warnings as ``(id, message)``.
    errors: tuple[TritonValidationError, ...] = ()
    warnings: tuple[Warning, ...] = ()

    @property
    def all_errors(self) -> list[TritonValidationError]:
        """Every error of the hosting, in the order a synth reports them: checks, variant, shadow."""
        return [*self.errors, *self.variant.errors, *self.shadow_errors]

    @property
    def gpu_memory_gib(self) -> int | None:
        """GPU memory of one instance (the verification sample's cache bound); None when unknown."""
        info = self.instances.instance_info
        return info.gpu_memory_gib if info is not None else None


@dataclass(frozen=True, kw_only=True, slots=True)
class HostingInputs:
    """What a variant hosting is decided from: the instances, the bound model's facts and the variant's props."""

    instances: InstanceChoice
    artifacts: ArtifactsConfig
    triton_version: str | None
    server_options: ServerOptions
    model_name: str
    variant_name: str
    #: ``volume_size``, ``container_startup_health_check_timeout``, ``model_data_download_timeout`` as
    #: the construct received them (cdk values or None); what is not given is sized from the artifacts.
    variant_props: Mapping[str, Any]
    #: The prop, else the manifest's (None: the host decision chooses).
    inference_ami_version: str | None
    deployment: DeploymentGuardrails | None
    async_inference: AsyncInferenceOptions | None
    shadow: ShadowVariant | None


@dataclass(frozen=True, kw_only=True, slots=True)
class HostingPart:
    """What one step of the decision decided (``values``: fields of :class:`VariantHosting`) and found."""

    values: Mapping[str, Any] = field(default_factory=dict)
    errors: tuple[TritonValidationError, ...] = ()
    warnings: tuple[Warning, ...] = ()


#: A step of the decision: the inputs and the values the steps before it decided -> its part.
HostingStep = Callable[[HostingInputs, Mapping[str, Any]], HostingPart]


def decide_hosting(
    instances: InstanceChoice,
    model: TritonModel,
    *,
    variant_name: str,
    variant_props: Mapping[str, Any],
    inference_ami_version: str | None,
    deployment: DeploymentGuardrails | None,
    async_inference: AsyncInferenceOptions | None,
    shadow: ShadowVariant | None,
) -> VariantHosting:
    """The variant's hosting of ``model``'s production variant on ``instances``: :data:`HOSTING_STEPS` in order, their
    findings joined (see the module docstring and :class:`HostingInputs` for the arguments)."""
    inputs = HostingInputs(
        instances=instances,
        artifacts=model.artifacts,
        triton_version=model.triton_version,
        server_options=model.server_options,
        model_name=model.model_name,
        variant_name=variant_name,
        variant_props=variant_props,
        inference_ami_version=(
            inference_ami_version
            if inference_ami_version is not None
            else model.artifacts.inference_ami_version
        ),
        deployment=deployment,
        async_inference=async_inference,
        shadow=shadow,
    )
    values: dict[str, Any] = {}
    errors: list[TritonValidationError] = []
    warnings: list[Warning] = []
    for step in HOSTING_STEPS:
        part = step(inputs, values)
        values.update(part.values)
        errors += part.errors
        warnings += part.warnings
    return VariantHosting(instances=instances, errors=tuple(errors), warnings=tuple(warnings), **values)


def fit_models(inputs: HostingInputs, decided: Mapping[str, Any]) -> HostingPart:
    """The instance type and count against the built models: architecture, placement, memory, state, the
    mode's instance warnings, and the host limits sized from them (``host_limits``)."""
    art, instances = inputs.artifacts, inputs.instances
    it, count = instances.instance_type, instances.instance_count
    found, warnings, placement_warnings, sizes = model_checks.check_instance_fit(
        it, instances.instance_info, triton_version=inputs.triton_version, artifacts=art
    )
    limits = HostLimits()
    if not is_token(it):
        limits = host_limits_of(it, instances.local_storage, art, sizes, inputs.variant_props)
        found += limits.errors
        placement_warnings += limits.warnings
    found += model_checks.check_sequence_batching_instances(art.built_models, count, prop="instance_count")
    warnings += mode_constructs.behaviour(art.hosting_mode).instance_warnings(it, count, art)
    return HostingPart(
        values={"host_limits": limits}, errors=tuple(found), warnings=tuple(warnings + placement_warnings)
    )


def fit_pools(inputs: HostingInputs, decided: Mapping[str, Any]) -> HostingPart:
    """Every pool after the first against the built models (``checks.instance_pools``)."""
    errors, warnings = check_pools_against_models(
        inputs.instances.instance_pools, triton_version=inputs.triton_version, artifacts=inputs.artifacts
    )
    return HostingPart(errors=tuple(errors), warnings=tuple(warnings))


def mode_guardrails(inputs: HostingInputs, decided: Mapping[str, Any]) -> HostingPart:
    """The hosting mode's refusal of the deployment guardrails, if any."""
    behaviour = mode_constructs.behaviour(inputs.artifacts.hosting_mode)
    return HostingPart(errors=tuple(behaviour.guardrails_problems(inputs.deployment)))


def asynchronous(inputs: HostingInputs, decided: Mapping[str, Any]) -> HostingPart:
    """The asynchronous options (the prop, else the manifest's ``async:``; ``async_options``), checked."""
    if inputs.async_inference is None and inputs.artifacts.async_inference is None:
        return HostingPart(values={"async_options": None})  # real-time
    from cdk_triton.constructs.async_inference import AsyncInferenceOptions, check_async_endpoint

    options = AsyncInferenceOptions.resolve(inputs.async_inference, inputs.artifacts.async_inference)
    errors = check_async_endpoint(options, inputs.artifacts.hosting_mode, inputs.shadow)
    message = (
        async_input_size_warning(inputs.server_options, inputs.triton_version)
        if options is not None
        else None
    )
    warnings = (("cdk-triton:AsyncPayloadOverMaxInputSize", message),) if message is not None else ()
    return HostingPart(values={"async_options": options}, errors=tuple(errors), warnings=warnings)


def production_variant(inputs: HostingInputs, decided: Mapping[str, Any]) -> HostingPart:
    """The production variant with its host decision (``variant_facts``, ``variant``): the props' timeouts
    and volume, else the host limits ``fit_models`` sized. Its errors stay on the variant."""
    limits: HostLimits = decided["host_limits"]
    instances, props = inputs.instances, inputs.variant_props
    volume_size: cdk.Size | None = props.get("volume_size")
    given = {
        "container_startup_health_check_timeout_in_seconds": whole_seconds(
            props.get("container_startup_health_check_timeout")
        ),
        "model_data_download_timeout_in_seconds": whole_seconds(props.get("model_data_download_timeout")),
        "volume_size_in_gb": int(volume_size.to_gibibytes()) if volume_size is not None else None,
    }
    sized = {**given, **limits.variant_defaults(given)}
    facts = VariantFacts(
        variant_name=inputs.variant_name,
        model_name=inputs.model_name,
        instance_type=instances.instance_type,
        instance_count=instances.instance_count,
        triton_version=inputs.triton_version,
        inference_ami_version=inputs.inference_ami_version,
        volume_size_gib=sized["volume_size_in_gb"],
        container_startup_health_check_timeout_seconds=sized[
            "container_startup_health_check_timeout_in_seconds"
        ],
        model_data_download_timeout_seconds=sized["model_data_download_timeout_in_seconds"],
        instance_pools=tuple((it, None) for it in instances.instance_pools),
        provision_timeout_seconds=instances.provision_timeout_seconds,
    )
    return HostingPart(values={"variant_facts": facts, "variant": build_variant(facts)})


def shadow_variant(inputs: HostingInputs, decided: Mapping[str, Any]) -> HostingPart:
    """The shadow's checks and variant (``shadow.py``; the production variant's builder and facts):
    ``shadow`` (None: none, or refused) and ``shadow_errors`` (raised after the production variant's)."""
    if inputs.shadow is None:
        return HostingPart()
    from cdk_triton.constructs.shadow import build_shadow_variant, check_shadow

    errors = check_shadow(
        inputs.shadow,
        production_variant=inputs.variant_name,
        mode=inputs.artifacts.hosting_mode,
        deployment=inputs.deployment,
    )
    if errors:
        return HostingPart(values={"shadow_errors": tuple(errors)})
    built = build_shadow_variant(
        inputs.shadow,
        instance_type=inputs.instances.instance_type,
        instance_count=inputs.instances.instance_count,
        base=decided["variant_facts"],
    )
    return HostingPart(values={"shadow": built, "shadow_errors": built.errors})


#: The decision's steps, in order (a step reads what the steps before it decided).
HOSTING_STEPS: tuple[HostingStep, ...] = (
    fit_models,
    fit_pools,
    mode_guardrails,
    asynchronous,
    production_variant,
    shadow_variant,
)
