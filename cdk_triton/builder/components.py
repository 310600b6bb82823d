"""The components step: an InferenceComponents endpoint's entry gains its components.

The archives are packaged by ``repository.package_endpoints`` exactly as MME target models (one model
with its ensemble steps per archive, under ``ic/<endpoint>/``): no third packaging. This step adds,
per archive, the :class:`~cdk_triton.config.manifest.ComponentEntry` (the component name of
``config.layout``, the copies and compute settings of ``models.yaml``) and the instance scaling bounds,
then refuses (``ComponentDoesNotFit``, before anything is uploaded or the manifest written) a component
one instance cannot hold, with the memory derived from the built models by the rule synth and serve
apply (``config.sizing.component_fit_problems``), and a declared ``memory_mb`` below the built models'
weights (``ComponentMemoryTooSmall``; below their memory_bytes a warning, ``ComponentMemoryBelowModel``:
``config.components.memory_floor_findings``, which synth runs again).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from cdk_triton.builder import outputs
from cdk_triton.builder.context import BuildContext, StepOutput, StepStatus
from cdk_triton.config import component_memory, layout, sizing
from cdk_triton.config.components import ComponentValues
from cdk_triton.config.declaration import EndpointSpec
from cdk_triton.config.manifest import ComponentEntry, EndpointEntry, ModelEntry
from cdk_triton.errors import TritonValidationError, raise_all


def component_entry(endpoint: str, model: str, v: ComponentValues) -> ComponentEntry:
    """The manifest's record of ``model``'s component. Copies: as declared, else 1 (at least
    ``min_copies``: a templated CopyCount is never below the scaling minimum)."""
    copies = v.copies if v.copies is not None else max(1, v.min_copies or 0)
    return ComponentEntry(
        logical_name=model,
        component_name=layout.component_name(endpoint, model),
        target_model=model,
        copies=copies,
        min_copies=v.min_copies,
        max_copies=v.max_copies,
        accelerators=v.accelerators,
        cpu_cores=v.cpu_cores,
        min_memory_mb=v.memory_mb,
        max_memory_mb=v.max_memory_mb,
        data_cache=v.data_cache,
        startup_timeout_s=v.startup_timeout_s,
    )


def with_components(ep: EndpointSpec, entry: EndpointEntry) -> EndpointEntry:
    """``entry`` (packaged as an MME) with one component per target model, in declaration order."""
    comps = {
        m: component_entry(ep.name, m, ep.components.get(m, ComponentValues()))
        for m in ep.models
        if m in entry.target_models
    }
    layout.check_component_names({m: c.component_name for m, c in comps.items()}, path=f"endpoint {ep.name}")
    return replace(
        entry,
        components=comps,
        min_instances=ep.min_instances,
        max_instances=ep.max_instances,
        instance_pools=ep.instance_pools,
    )


def record_components(ctx: BuildContext) -> StepOutput:
    """Add the components to every packaged InferenceComponents endpoint of this build."""
    done = 0
    for ep in ctx.endpoints:
        entry = ctx.endpoint_entries.get(ep.name)
        if ep.hosting_mode.components and entry is not None:
            ctx.endpoint_entries[ep.name] = with_components(ep, entry)
            done += 1
    _check_fit(ctx)
    return StepOutput(step="components", status=StepStatus.OK if done else StepStatus.SKIPPED, done=done)


def fit_problems(
    entries: Iterable[EndpointEntry], built: Mapping[str, ModelEntry]
) -> list[TritonValidationError]:
    """``ComponentDoesNotFit`` of each InferenceComponents entry's components on one instance of its first
    type, the memory derived from the ``built`` models as synth and serve derive it."""
    return [
        p
        for e in entries
        if e.hosting_mode.components
        for p in sizing.component_fit_problems(built, e, path=f"endpoint {e.name}")
    ]


def _check_fit(ctx: BuildContext) -> None:
    """Raise :func:`fit_problems` of this build's components endpoints (before upload and manifest)."""
    if not any(e.hosting_mode.components for e in ctx.endpoint_entries.values()):
        return
    built = {
        n: outputs.model_entry(ctx.record(n), None, d) for n, d in ctx.model_dirs(list(ctx.built)).items()
    }
    errs = fit_problems(ctx.endpoint_entries.values(), built)
    for e in ctx.endpoint_entries.values():
        for c in e.components.values() if e.hosting_mode.components else ():
            target = e.target_models.get(c.target_model)
            members = {n: built[n] for n in (target.models if target else []) if n in built}
            warnings, found = component_memory.memory_floor_findings(
                c.logical_name,
                c.min_memory_mb,
                members,
                path=f"endpoint {e.name}.components.{c.logical_name}",
            )
            errs += found
            for w in warnings:
                ctx.warn(f"endpoint '{e.name}': {w}")
    raise_all(errs)
