"""The endpoint declaration: which models one endpoint packages, for which instance types, how."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cdk_triton.config import async_inference, components, instance_pools, modes
from cdk_triton.config.async_inference import AsyncValues
from cdk_triton.config.components import ComponentValues
from cdk_triton.config.declaration.vocabulary import PACKAGINGS
from cdk_triton.config.instance_pools import PoolValues
from cdk_triton.config.manifest import EndpointMode
from cdk_triton.config.parse import Errors, check_keys, is_mapping, one_of, typed

#: The words ``mode`` accepts besides the modes themselves (compared in lower case): the rows' aliases.
MODE_ALIASES = {alias: m.name for m in modes.MODES.values() for alias in m.aliases}
#: The type of each key of a ``components.<model>`` entry.
_COMPONENT_TYPES: dict[str, type | tuple[type, ...]] = {
    "copies": int,
    "min_copies": int,
    "max_copies": int,
    "accelerators": int,
    "cpu_cores": float,
    "memory_mb": int,
    "max_memory_mb": int,
    "data_cache": bool,
    "startup_timeout_s": int,
}


@dataclass(frozen=True, kw_only=True, slots=True)
class EndpointSpec(EndpointMode):
    """One endpoint's packaging.

    Attributes:
        name: the endpoint key (the constructs look it up in the manifest).
        mode: SingleModel, MultiModel or InferenceComponents (aliases: sme, mme, components,
            inference_components).
        instance_types: the instance types it is packaged for (TensorRT plans must match their GPU).
        models: SME: the repository's models (ensembles bring their steps); MME: one TargetModel
            archive per entry (an ensemble with its steps in one archive); InferenceComponents: one
            component per entry, each with the same archive as an MME target model.
        default_model: SME: the model behind ``/invocations``. Default: the only top-level model.
        packaging: SME: directory (uncompressed S3 prefix) or tar.gz. Default: directory.
        inference_ami_version: the host image (``InferenceAmiVersion``) the endpoint's production
            variant pins, carried through the manifest; a ``TritonEndpoint(inference_ami_version=...)``
            prop wins over it. Default: the host decision of ``config.gpu_hosts``.
        components: InferenceComponents: per-model settings (copies, min_copies, max_copies,
            accelerators, cpu_cores, memory_mb, max_memory_mb, data_cache, startup_timeout_s), keyed by a
            model of ``models``. Default: every setting derived at synth.
        min_instances: InferenceComponents: ManagedInstanceScaling MinInstanceCount (0 allowed).
            Default: derived at synth.
        max_instances: InferenceComponents: ManagedInstanceScaling MaxInstanceCount. Default: derived
            at synth.
        async_inference: the ``async:`` block (``config.async_inference.AsyncValues``): an asynchronous
            endpoint (``AsyncInferenceConfig``), on a mode whose row supports it (SingleModel).
            Default: none (a real-time endpoint).
        instance_pools: ``instance_pools:`` (``config.instance_pools.PoolValues``): up to five of
            ``instance_types`` in priority order, as a list or as ``{instance_types: [...],
            provision_timeout_s: 300..3600}``; the production variant carries ``InstancePools`` instead of
            ``InstanceType``, on a mode whose row supports it (SingleModel). Default: none.
    """

    name: str
    mode: str
    instance_types: tuple[str, ...]
    models: tuple[str, ...]
    default_model: str | None = None
    packaging: str = "directory"
    inference_ami_version: str | None = None
    components: dict[str, ComponentValues] = field(default_factory=dict)
    min_instances: int | None = None
    max_instances: int | None = None
    async_inference: AsyncValues | None = None
    instance_pools: PoolValues | None = None

    @property
    def hosting_mode(self) -> modes.HostingMode:
        """The mode's row; an unknown mode (already reported as ``UnknownEndpointMode``) is checked by
        the other rules as the first row (one repository, nothing mode-specific), so they still run."""
        return modes.lookup(self.mode) or next(iter(modes.MODES.values()))

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> EndpointSpec | None:
        if not is_mapping(d, path, "endpoint", "name, mode, instance_types, models", errs):
            return None
        check_keys(d, cls, path, errs, extra=("async",))
        name = typed(d, "name", str, path, errs, required=True)
        mode = typed(d, "mode", str, path, errs, required=True)
        row = modes.resolve(mode) if mode else None
        if row is not None and (row.name == mode or str(mode).lower() in row.aliases):
            mode = row.name
        else:
            row = None
        if mode is not None:
            one_of(
                errs,
                path,
                "mode",
                mode,
                modes.names(),
                "UnknownEndpointMode",
                "an endpoint mode",
                f"use {modes.spoken()}",
            )
        its = typed(d, "instance_types", list, path, errs, required=True) or []
        models = typed(d, "models", list, path, errs, required=True) or []
        packaging = typed(d, "packaging", str, path, errs, default="directory")
        one_of(
            errs, path, "packaging", packaging, PACKAGINGS, "InvalidPackaging", "a packaging", "use directory"
        )
        if row is not None and row.per_model_archives and "packaging" in d and packaging != "tar.gz":
            errs.add(
                "InvalidPackaging",
                f"{path}.packaging",
                "packaging",
                packaging,
                f"is not possible for a{'n' if row.label[0] in 'aeiou' else ''} {row.label} endpoint",
                "tar.gz (one archive per target model)",
                "remove packaging",
            )
        comps = _components(d, path, errs)
        min_i = typed(d, "min_instances", int, path, errs)
        max_i = typed(d, "max_instances", int, path, errs)
        errs.extend(components.scaling_problems(min_i, max_i, path))
        async_values = _async(d, path, row, errs)
        pools = _pools(d, path, row, [str(x) for x in its], errs)
        if name is None or mode is None:
            return None
        return cls(
            name=name,
            mode=mode,
            instance_types=tuple(str(x) for x in its),
            models=tuple(str(m) for m in models),
            default_model=typed(d, "default_model", str, path, errs),
            packaging="tar.gz" if row is not None and row.per_model_archives else packaging,
            inference_ami_version=typed(d, "inference_ami_version", str, path, errs),
            components=comps,
            min_instances=min_i,
            max_instances=max_i,
            async_inference=async_values,
            instance_pools=pools,
        )


def _async(d: dict[str, Any], path: str, row: modes.HostingMode | None, errs: Errors) -> AsyncValues | None:
    """``async:`` (or ``async_inference:``): typed, within SageMaker's limits, on a mode that supports it
    (the row's ``async_inference`` refusal, naming the mode that does)."""
    key = "async" if "async" in d else "async_inference"
    if key not in d:
        return None
    raw = d[key] if d[key] is not None else {}
    here = f"{path}.{key}"
    if not is_mapping(raw, here, "async block", ", ".join(async_inference.KEY_TYPES), errs):
        return None
    check_keys(raw, AsyncValues, here, errs)
    before = len(errs.items)
    kw = {k: typed(raw, k, t, here, errs) for k, t in async_inference.KEY_TYPES.items()}
    if len(errs.items) != before:
        return None
    values = async_inference.from_dict(kw)
    errs.extend(async_inference.value_problems(values, here))
    _refuse_in_mode(
        row,
        "async_inference",
        here,
        "async",
        "declare a separate endpoint with mode: {supported} serving the model, and put async: there",
        errs,
    )
    return values


def _pools(
    d: dict[str, Any], path: str, row: modes.HostingMode | None, its: list[str], errs: Errors
) -> PoolValues | None:
    """``instance_pools:``: a list of instance types (priority order) or ``{instance_types,
    provision_timeout_s}``; within SageMaker's limits, each one of the endpoint's ``instance_types`` (the
    build packages and checks the plans for those), on a mode whose row supports pools."""
    if "instance_pools" not in d:
        return None
    here = f"{path}.instance_pools"
    raw = d["instance_pools"]
    if isinstance(raw, list):
        raw = {"instance_types": raw}
    if not is_mapping(
        raw, here, "instance pools", "a list of instance types, or instance_types, provision_timeout_s", errs
    ):
        return None
    check_keys(raw, PoolValues, here, errs)
    before = len(errs.items)
    types = typed(raw, "instance_types", list, here, errs, required=True) or []
    timeout = typed(raw, "provision_timeout_s", int, here, errs)
    if len(errs.items) != before:
        return None
    values = PoolValues(instance_types=tuple(str(t) for t in types), provision_timeout_s=timeout)
    errs.extend(instance_pools.value_problems(values, here))
    for j, t in enumerate(values.instance_types):
        if t not in its:
            errs.add(
                "InvalidInstancePools",
                f"{here}.instance_types[{j}]",
                "instance_pools",
                t,
                "is not one of the endpoint's instance_types (the build packages and checks the artifacts for those)",
                ", ".join(its) or "an instance type of instance_types",
                f"add {t} to instance_types",
            )
    _refuse_in_mode(
        row,
        "instance_pools",
        here,
        "instance_pools",
        "remove instance_pools, or declare a {supported} endpoint serving the model",
        errs,
    )
    return values


def _refuse_in_mode(
    row: modes.HostingMode | None, refusal_field: str, here: str, prop: str, fix: str, errs: Errors
) -> None:
    """The mode row's ``refusal_field`` refusal (``async_inference``, ``instance_pools``) of ``prop`` at
    ``here``, naming the modes without that refusal; ``fix`` names them where it says ``{supported}``."""
    refusal = getattr(row, refusal_field) if row is not None else None
    if refusal is None or row is None:
        return
    supported = " or ".join(m.name for m in modes.MODES.values() if getattr(m, refusal_field) is None)
    errs.add(
        refusal.code,
        here,
        prop,
        row.name,
        f"is not possible on a {row.label} endpoint: {refusal.reason}",
        f"{prop} on a {supported} endpoint",
        fix.format(supported=supported),
    )


def _components(d: dict[str, Any], path: str, errs: Errors) -> dict[str, ComponentValues]:
    """``components``: model -> its settings, each typed and within SageMaker's limits
    (``config.components.value_problems``); whether each key is a model of the endpoint is a rule."""
    raw = typed(d, "components", dict, path, errs, default={})
    out: dict[str, ComponentValues] = {}
    for model, c in raw.items():
        here = f"{path}.components.{model}"
        if c is None:
            c = {}
        if not is_mapping(c, here, "component", ", ".join(_COMPONENT_TYPES), errs):
            continue
        check_keys(c, ComponentValues, here, errs)
        before = len(errs.items)
        values = ComponentValues(**{k: typed(c, k, t, here, errs) for k, t in _COMPONENT_TYPES.items()})
        if len(errs.items) == before:
            errs.extend(components.value_problems(values, here))
        out[str(model)] = values
    return out
