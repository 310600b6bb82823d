"""The cross-reference rules of a declaration: what one model or endpoint must agree with elsewhere.

Each rule is one named function returning the problems it finds (located by document path; the
caller prefixes the file). :data:`RULES` runs them in order. Rules about one model
(:data:`MODEL_RULES`) or one endpoint (:data:`ENDPOINT_RULES`) run model by model / endpoint by
endpoint, so the problems of ``models[0]`` come before those of ``models[1]``, as they always have.
The rules of the model graph (ensemble steps, business-logic calls) are ``graph_rules``' functions; the
types a rule reads and returns are ``rule_kit``'s.
"""

from __future__ import annotations

import os

from cdk_triton.config import gpu_hosts, instance_rules, tables
from cdk_triton.config.declaration import component_rules, graph_rules
from cdk_triton.config.declaration.endpoint import EndpointSpec
from cdk_triton.config.declaration.model import ModelSpec
from cdk_triton.config.declaration.rule_kit import (
    DeclarationView,
    EndpointRule,
    ModelRule,
    Problems,
    Rule,
    models_by_name,
    unknown_model,
)
from cdk_triton.config.parse import problem
from cdk_triton.config.placement import check_gpu_placement

# ---------------------------------------------------------------------------- the declaration's models


def check_model_names_unique(spec: DeclarationView) -> Problems:
    out: Problems = []
    index: dict[str, int] = {}
    for i, m in enumerate(spec.models):
        if m.name in index:
            out.append(
                problem(
                    "DuplicateModelName",
                    f"models[{i}].name",
                    "model name",
                    m.name,
                    f"is already used by models[{index[m.name]}]",
                    "unique model names",
                    "rename one of them",
                )
            )
        index.setdefault(m.name, i)
    return out


def _exists(spec: DeclarationView, relative: str) -> bool:
    """``spec.resolve_path(relative).exists()``; the plain path is tried first (no resolve per model)."""
    return os.path.exists(os.path.join(spec.base_dir, relative)) or spec.resolve_path(relative).exists()


def check_source_exists(spec: DeclarationView, i: int, m: ModelSpec) -> Problems:
    if m.source is None or not m.source.path or _exists(spec, m.source.path):
        return []
    return [
        problem(
            "SourceNotFound",
            f"models[{i}].source",
            "source path",
            m.source.path,
            f"does not exist (resolved against {spec.base_dir})",
            "an existing file or directory",
            "fix the path (relative to the YAML file)",
        )
    ]


def check_state_dict_exists(spec: DeclarationView, i: int, m: ModelSpec) -> Problems:
    if m.source is None or not m.source.state_dict or spec.resolve_path(m.source.state_dict).is_file():
        return []
    return [
        problem(
            "SourceNotFound",
            f"models[{i}].source.state_dict",
            "state_dict",
            m.source.state_dict,
            f"does not exist (resolved against {spec.base_dir})",
            "an existing file",
            "fix the path (relative to the YAML file)",
        )
    ]


def check_opt_batch_size_fits(spec: DeclarationView, i: int, m: ModelSpec) -> Problems:
    opt = m.tensorrt.opt_batch_size
    if not (m.max_batch_size > 0 and m.row.builds_plans and opt and opt > m.max_batch_size):
        return []
    return [
        problem(
            "PreferredBatchTooLarge",
            f"models[{i}].tensorrt.opt_batch_size",
            "opt_batch_size",
            opt,
            f"exceeds max_batch_size {m.max_batch_size}",
            f"1..{m.max_batch_size}",
            "lower it",
        )
    ]


def check_tensorrt_plans_exist(spec: DeclarationView, i: int, m: ModelSpec) -> Problems:
    return [
        problem(
            "SourceNotFound",
            f"models[{i}].tensorrt.plans[{j}]",
            "plan directory",
            plan_dir,
            f"has no model.plan (resolved against {spec.base_dir})",
            "a directory with model.plan and plan.json",
            "copy the plan and plan.json a GPU build wrote (cache/models/<model>-*/1/)",
        )
        for j, plan_dir in enumerate(m.tensorrt.plans)
        if not (spec.resolve_path(plan_dir) / "model.plan").is_file()
    ]


def check_tensorrt_plans_only_for_tensorrt(spec: DeclarationView, i: int, m: ModelSpec) -> Problems:
    if not m.tensorrt.plans or m.row.builds_plans:
        return []
    return [
        problem(
            "InvalidOption",
            f"models[{i}].tensorrt.plans",
            "tensorrt.plans",
            list(m.tensorrt.plans),
            f"only apply to tensorrt models, not {m.format}",
            "format: tensorrt",
            "remove them",
        )
    ]


# ---------------------------------------------------------------------------- endpoints


def check_endpoint_lists_not_empty(spec: DeclarationView, i: int, e: EndpointSpec) -> Problems:
    out: Problems = []
    for prop, allowed, fix in (
        ("models", "model names", "list the models"),
        ("instance_types", "e.g. ml.g5.xlarge", "list the instance types"),
    ):
        if not getattr(e, prop):
            out.append(problem("MissingField", f"endpoints[{i}].{prop}", prop, [], "is empty", allowed, fix))
    return out


def check_endpoint_models_declared(spec: DeclarationView, i: int, e: EndpointSpec) -> Problems:
    by_name = models_by_name(spec)
    return [
        unknown_model(f"endpoints[{i}].models[{j}]", "model", name, by_name)
        for j, name in enumerate(e.models)
        if name not in by_name
    ]


def check_mme_archives_disjoint(spec: DeclarationView, i: int, e: EndpointSpec) -> Problems:
    """MME: no model is in two target models' archives (their metrics would merge)."""
    if not e.hosting_mode.loads_on_demand:
        return []
    out: Problems = []
    owner: dict[str, str] = {}
    for name in e.models:
        try:
            members = spec.closure(name)
        except KeyError:
            continue
        for member in members:
            if member in owner and owner[member] != name:
                out.append(
                    problem(
                        "DuplicateModelInEndpoint",
                        f"endpoints[{i}].models",
                        "model name",
                        member,
                        f"appears in the archives of both '{owner[member]}' and '{name}'",
                        "model names unique across the endpoint",
                        "give each archive's models their own names (metrics of equal names merge)",
                    )
                )
            owner.setdefault(member, name)
    return out


def check_mme_targets_unique(spec: DeclarationView, i: int, e: EndpointSpec) -> Problems:
    """MME and inference components: each model once (one archive, one component each)."""
    if not e.per_model_archives or len(set(e.models)) == len(e.models):
        return []
    return [
        problem(
            "DuplicateModelInEndpoint",
            f"endpoints[{i}].models",
            "models",
            list(e.models),
            "lists a component model twice" if e.hosting_mode.components else "lists a target model twice",
            "unique entries",
            "remove the duplicate",
        )
    ]


def check_sme_default_model(spec: DeclarationView, i: int, e: EndpointSpec) -> Problems:
    """SME: a default model is named when there are several, and it is in the repository."""
    if e.per_model_archives:
        return []
    here = f"endpoints[{i}]"
    tops = list(e.models)
    if e.default_model is None:
        if len(tops) == 1:
            return []
        return [
            problem(
                "MissingDefaultModel",
                f"{here}.default_model",
                "default_model",
                None,
                f"is required with {len(tops)} models",
                ", ".join(tops),
                "name the model behind /invocations (for an ensemble, the ensemble)",
            )
        ]
    repo = {x for n in tops for x in spec.closure(n)}
    if e.default_model in repo:
        return []
    return [
        problem(
            "UnknownModelReference",
            f"{here}.default_model",
            "default_model",
            e.default_model,
            "is not in the endpoint's repository",
            ", ".join(sorted(repo)),
            "list it in models",
        )
    ]


def check_sequence_batching_endpoint(spec: DeclarationView, i: int, e: EndpointSpec) -> Problems:
    """A sequence-batched (stateful) model keeps its state in one Triton server: every request of a
    sequence must reach the same instance. A multi-model endpoint routes a target model to any
    instance that loaded it and unloads idle models, so it cannot serve one. (A single-model
    endpoint must run one instance: the constructs check the instance count and autoscaling.)"""
    if not e.hosting_mode.loads_on_demand:
        return []
    by_name = models_by_name(spec)
    stateful = []
    for target in e.models:
        try:
            members = spec.closure(target)
        except KeyError:  # an undeclared step: check_ensemble_steps reports it
            continue
        stateful += [n for n in members if n in by_name and by_name[n].sequence_batching is not None]
    return [
        problem(
            "SequenceBatchingInstances",
            f"endpoints[{i}].models",
            "model",
            name,
            "is sequence-batched (stateful) but a multi-model endpoint may send the requests of one sequence to "
            "several instances or to a reloaded copy; SageMaker's stateful sessions need session ids that "
            "Triton's SageMaker server does not create",
            "a SingleModel endpoint with one instance",
            "serve it from a SingleModel endpoint with instance_count 1 and no autoscaling above 1",
        )
        for name in dict.fromkeys(stateful)
    ]


def check_instance_types(spec: DeclarationView, i: int, e: EndpointSpec) -> Problems:
    """Each instance type passes the hosting rules the constructs enforce at synth (``config.instance_rules``):
    its shape, the instance table (a typo names the closest type), a Triton image for it, a single GPU
    for a multi-model endpoint, the release's minimum compute capability."""
    return [
        err.at(f"endpoints[{i}].instance_types[{j}]")
        for j, it in enumerate(e.instance_types)
        for err in instance_rules.check_declared_instance_type(
            it, multi_model=e.hosting_mode.loads_on_demand, triton_version=spec.triton_version
        )
    ]


def check_inference_ami_version(spec: DeclarationView, i: int, e: EndpointSpec) -> Problems:
    """A pinned ``inference_ami_version``: known, accepted for every instance type, able to run the release."""
    if e.inference_ami_version is None:
        return []
    path = f"endpoints[{i}].inference_ami_version"
    found = (
        gpu_hosts.decide_host(
            release=spec.triton_version,
            instance_type=it,
            inference_ami_version=e.inference_ami_version,
            path=path,
        ).error
        for it in e.instance_types
    )
    return list({err.code: err for err in found if err is not None}.values())


def check_endpoint_names_unique(spec: DeclarationView) -> Problems:
    names = [e.name for e in spec.endpoints]
    return [
        problem(
            "DuplicateEndpointName",
            f"endpoints[{i}].name",
            "endpoint name",
            n,
            "is already used",
            "unique endpoint names",
            "rename one of them",
        )
        for i, n in enumerate(names)
        if names.index(n) != i
    ]


def check_pytorch_parameters_in_release(spec: DeclarationView, i: int, m: ModelSpec) -> Problems:
    """Each PyTorch parameter is read by the target release (tables' ``pytorch_parameters``)."""
    out: Problems = []
    for k in m.pytorch_parameters:
        err = tables.pytorch_parameter_error(
            k, spec.triton_version, path=f"models[{i}].pytorch_parameters.{k}"
        )
        if err is not None:
            out.append(err)
    return out


def check_gpu_placement_fits(spec: DeclarationView, i: int, e: EndpointSpec) -> Problems:
    """Each model's instance groups fit each instance type of the endpoint: no KIND_GPU on a CPU
    type, no GPU index beyond the type's GPUs (``placement.check_gpu_placement``)."""
    by_name = models_by_name(spec)
    out: Problems = []
    for name in dict.fromkeys(n for top in e.models for n in spec.closure(top)):
        m = by_name.get(name)
        if m is None or not m.instance_groups:
            continue
        groups = [(g.kind, g.count, g.gpus) for g in m.instance_groups]
        for it in e.instance_types:
            out += check_gpu_placement(it, groups, model=name, path=f"endpoints[{i}].instance_types")
    return out


# ---------------------------------------------------------------------------- the order they run in

#: Run for each model, in this order.
MODEL_RULES: tuple[ModelRule, ...] = (
    check_source_exists,
    check_state_dict_exists,
    check_opt_batch_size_fits,
    check_tensorrt_plans_exist,
    check_tensorrt_plans_only_for_tensorrt,
    graph_rules.check_ensemble_steps,
    graph_rules.check_calls,
    check_pytorch_parameters_in_release,
)
#: Run for each endpoint, in this order.
ENDPOINT_RULES: tuple[EndpointRule, ...] = (
    check_endpoint_lists_not_empty,
    component_rules.check_components_only_in_mode,
    component_rules.check_component_models,
)
#: Run for each endpoint whose models are all declared (see ``check_endpoint_models_declared``)
#: (and whose ensembles' steps are all declared: ``_steps_declared``).
ENDPOINT_MODEL_RULES: tuple[EndpointRule, ...] = (
    check_mme_archives_disjoint,
    check_mme_targets_unique,
    check_sme_default_model,
    check_instance_types,
    check_inference_ami_version,
    check_sequence_batching_endpoint,
    graph_rules.check_business_logic_in_mode,
    check_gpu_placement_fits,
    component_rules.check_component_names,
    component_rules.check_components_fit,
    component_rules.check_component_sequence_batching,
    component_rules.check_component_instances,
)


def _steps_declared(spec: DeclarationView, e: EndpointSpec) -> bool:
    """Whether every ensemble step the endpoint's models reach is declared (an undeclared step is
    reported by ``check_ensemble_steps``, naming the closest declared model)."""
    try:
        for name in e.models:
            spec.closure(name)
    except KeyError:
        return False
    return True


def check_models(spec: DeclarationView) -> Problems:
    """:data:`MODEL_RULES`, model by model."""
    return [p for i, m in enumerate(spec.models) for rule in MODEL_RULES for p in rule(spec, i, m)]


def check_endpoints(spec: DeclarationView) -> Problems:
    """:data:`ENDPOINT_RULES` then ``check_endpoint_models_declared``, endpoint by endpoint; only an
    endpoint whose models are all declared goes on to :data:`ENDPOINT_MODEL_RULES`."""
    out: Problems = []
    for i, e in enumerate(spec.endpoints):
        out += [p for rule in ENDPOINT_RULES for p in rule(spec, i, e)]
        undeclared = check_endpoint_models_declared(spec, i, e)
        out += undeclared
        if not undeclared and _steps_declared(spec, e):
            out += [p for rule in ENDPOINT_MODEL_RULES for p in rule(spec, i, e)]
    return out


#: Every cross-reference rule of a declaration, in the order its problems are reported.
RULES: tuple[Rule, ...] = (
    check_model_names_unique,
    check_models,
    graph_rules.check_ensemble_cycles,
    graph_rules.check_call_cycles,
    check_endpoints,
    check_endpoint_names_unique,
)


def run_rules(spec: DeclarationView) -> Problems:
    """Every problem :data:`RULES` find, in order."""
    return [p for rule in RULES for p in rule(spec)]
