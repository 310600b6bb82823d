"""The rules of an ``InferenceComponents`` endpoint of ``models.yaml`` (one function each).

The value limits of each ``components.<model>`` entry are checked while it is read
(``endpoint._components`` with ``config.components``); these rules need the endpoint's other fields:
its mode, its models and its instance types. ``rules`` runs them with the other endpoint rules.
"""

from __future__ import annotations

from typing import Any

from cdk_triton.config import components, layout
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
