"""The rules of an ``InferenceComponents`` endpoint of ``models.yaml`` (one function each).

The value limits of each ``components.<model>`` entry are checked while it is read
(``endpoint._components`` with ``config.components``); these rules need the endpoint's other fields:
its mode, its models and its instance types. ``rules`` runs them with the other endpoint rules.
"""

from __future__ import annotations

from typing import Any

from cdk_triton.config import components, layout, tables
from cdk_triton.config.declaration.endpoint import EndpointSpec
from cdk_triton.config.parse import closest, problem
from cdk_triton.errors import TritonValidationError

Problems = list[TritonValidationError]
# Each rule has the signature of ``rules.EndpointRule``; these read only the endpoint, so ``spec`` (the
# ``rules.DeclarationView``) is typed ``object`` and ``rules`` is not imported back (no import circle).


def check_components_only_in_mode(spec: object, i: int, e: EndpointSpec) -> Problems:
    """``components``, ``min_instances`` and ``max_instances`` only on an InferenceComponents endpoint."""
    if e.hosting_mode.components:
        return []
    set_keys = [
        k
        for k, v in (
            ("components", e.components),
            ("min_instances", e.min_instances),
            ("max_instances", e.max_instances),
        )
        if v or (v is not None and k != "components")
    ]
    return [
        problem(
            "NotAComponentsEndpoint",
            f"endpoints[{i}].{k}",
            k,
            e.mode,
            f"applies to InferenceComponents endpoints only, not {e.mode}",
            "mode: InferenceComponents",
            f"remove {k}, or set mode: InferenceComponents",
        )
        for k in set_keys
    ]


def check_component_models(spec: object, i: int, e: EndpointSpec) -> Problems:
    """Each ``components`` key is a model of the endpoint's ``models``."""
    out: Problems = []
    for name in e.components:
        if name in e.models:
            continue
        close = closest(name, e.models)
        out.append(
            problem(
                "UnknownComponentModel",
                f"endpoints[{i}].components.{name}",
                "component",
                name,
                "is not a model of this endpoint",
                ", ".join(e.models),
                f"did you mean '{close}'?" if close else "list the model in the endpoint's models",
            )
        )
    return out


def check_component_names(spec: object, i: int, e: EndpointSpec) -> Problems:
    """The component names (``layout.component_name(<endpoint>, <model>)``) are distinct: ``a_b`` and
    ``a.b`` collide (``ComponentNameCollision``)."""
    if not e.hosting_mode.components:
        return []
    names = {m: layout.component_name(e.name, m) for m in dict.fromkeys(e.models)}
    return layout.component_name_problems(names, path=f"endpoints[{i}].models")


def check_components_fit(spec: object, i: int, e: EndpointSpec) -> Problems:
    """Each component's declared accelerators, CPU cores and memory fit one instance of every instance type
    (``ComponentDoesNotFit``: the deployment could never place a copy)."""
    if not e.hosting_mode.components:
        return []
    out: Problems = []
    for name, v in e.components.items():
        for it in e.instance_types:
            out += components.fit_problems(
                it,
                component=name,
                accelerators=v.accelerators,
                cpu_cores=v.cpu_cores,
                memory_mb=v.memory_mb,
                path=f"endpoints[{i}].components.{name}",
            )
    return out


def check_component_sequence_batching(spec: Any, i: int, e: EndpointSpec) -> Problems:
    """A sequence-batched (stateful) model keeps each sequence in one server: its component may run one
    copy on one instance only (``max_copies: 1``, ``copies`` at most 1, ``max_instances: 1``); every
    copy is a container of its own, and SageMaker routes each request to any copy."""
    if not e.hosting_mode.components:
        return []
    stateful = {m.name for m in spec.models if m.sequence_batching is not None}
    out: Problems = []
    for name in dict.fromkeys(e.models):
        v = e.components.get(name, components.ComponentValues())
        if not stateful.intersection(spec.closure(name)):
            continue
        if v.max_copies == 1 and (v.copies or 1) <= 1 and e.max_instances == 1:
            continue
        out.append(
            problem(
                "SequenceBatchingInstances",
                f"endpoints[{i}].components.{name}",
                "component",
                name,
                "is sequence-batched (stateful) but its requests may reach several copies or instances: each "
                "copy is a container of its own, and SageMaker routes each request to any copy",
                "max_copies: 1 (copies at most 1) and the endpoint's max_instances: 1",
                "set max_copies: 1 and max_instances: 1, or serve it from a SingleModel endpoint with one instance",
            )
        )
    return out


def check_component_instances(spec: object, i: int, e: EndpointSpec) -> Problems:
    """The endpoint's instances against its components' copies, as synth checks them
    (``components.instance_problems``, one author): ``InvalidInstanceScaling`` for min_instances 0 while
    a component keeps a copy, ``CopiesExceedInstances`` for max_instances below what the copies need.
    The requirements are the declared ones (accelerators 1 on a GPU type and CPU cores 1 on a CPU type
    when unset, as synth derives them); an unset memory counts at its floor (128 MB), since the build
    cannot know it before export and synth's derived memory is never smaller."""
    if not e.hosting_mode.components or components.scaling_problems(e.min_instances, e.max_instances):
        return []  # the bounds themselves are reported while the endpoint is read
    out: Problems = []
    models = list(dict.fromkeys(e.models))
    values = {m: e.components.get(m, components.ComponentValues()) for m in models}
    if any(components.value_problems(v) for v in values.values()):
        return []  # reported while the component is read
    counts = {m: components.copy_counts(v) for m, v in values.items()}
    to_zero = all(lo == 0 for _c, lo, _h in counts.values())
    for it in e.instance_types:
        info = tables.instance_type_info(it)
        gpu = info is not None and info.gpu_count > 0
        cpu_type = tables.instance_kind(it) == "cpu"
        needs = [
            components.CopyNeed(
                name=layout.component_name(e.name, m),
                accelerators=float(
                    v.accelerators
                    if v.accelerators is not None
                    else (components.DEFAULT_ACCELERATORS if gpu else 0)
                ),
                cpu_cores=float(
                    v.cpu_cores
                    if v.cpu_cores is not None
                    else (components.DEFAULT_CPU_CORES_ON_CPU if cpu_type else 0)
                ),
                memory_mb=float(v.memory_mb if v.memory_mb is not None else components.MIN_MEMORY_MB),
                copies=counts[m][0],
                max_copies=counts[m][2],
            )
            for m, v in values.items()
        ]
        _lo, _hi, errs = components.instance_problems(
            it,
            needs,
            min_instances=e.min_instances,
            max_instances=e.max_instances,
            every_component_to_zero=to_zero,
            path=f"endpoints[{i}]",
        )
        out += errs
        if errs:
            break  # one report per endpoint (every instance type would repeat it)
    return out


#: The declaration-level rules synth applies to an InferenceComponents endpoint, by the code each raises:
#: each is one function of ``config`` that the build runs while it reads ``models.yaml`` (before anything
#: is written) and synth runs again on the same values (``constructs/components.py``). The value limits of
#: one component (``InvalidCopyCount``, ``InvalidComputeRequirement``, ``InvalidStartupTimeout``) are
#: checked while ``components.<model>`` is read (``components.value_problems``). Props that exist only in
#: the app (``ComponentOptions`` given in code, deployment guardrails, an imported endpoint's component
#: names: ``InvalidComponentName``, which a declared name never breaks) keep their synth-time checks.
SYNTH_RULES: dict[str, str] = {
    "InvalidCopyCount": "components.value_problems",
    "InvalidComputeRequirement": "components.value_problems",
    "InvalidStartupTimeout": "components.value_problems",
    "InvalidInstanceScaling": "components.instance_problems (scaling_problems, instance_floor_problems)",
    "CopiesExceedInstances": "components.instance_problems (copies_fit_problems)",
    "ComponentDoesNotFit": "components.fit_problems",
    "ComponentNameCollision": "layout.component_name_problems",
    "SequenceBatchingInstances": "check_component_sequence_batching",
    "NotAComponentsEndpoint": "check_components_only_in_mode",
    "UnknownComponentModel": "check_component_models",
}
