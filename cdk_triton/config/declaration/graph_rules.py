"""The rules of a declaration's model graph: ensemble steps and business-logic calls.

An ensemble's steps and a python model's ``calls`` both make a model depend on others: each step or
callee is declared, the step maps agree with the step's tensors, no model reaches itself, and a model
that calls others is served where its callees load beside it. ``rules`` runs these functions from its
tuples (``MODEL_RULES``, ``ENDPOINT_MODEL_RULES``, ``RULES``), each at its place.
"""

from __future__ import annotations

from collections.abc import Callable

from cdk_triton.config.declaration.endpoint import EndpointSpec
from cdk_triton.config.declaration.model import EnsembleStep, ModelSpec
from cdk_triton.config.declaration.rule_kit import DeclarationView, Problems, models_by_name, unknown_model
from cdk_triton.config.parse import problem
from cdk_triton.errors import TritonValidationError

# ---------------------------------------------------------------------------- ensembles


def check_ensemble_steps(spec: DeclarationView, i: int, m: ModelSpec) -> Problems:
    """Each step names another declared model whose batch size is large enough, its maps name the
    step's tensors with agreeing dtypes, in producer order, and every ensemble output is produced."""
    if not m.is_ensemble:
        return []
    out: Problems = []
    by_name = models_by_name(spec)
    produced = {t.name: t.dtype for t in m.inputs}  # tensor -> dtype, growing step by step
    for j, s in enumerate(m.steps):
        here = f"models[{i}].steps[{j}]"
        step = by_name.get(s.model)
        if step is None:
            out.append(unknown_model(f"{here}.model", "step model", s.model, by_name))
            continue
        if step.name == m.name:
            out.append(
                problem(
                    "EnsembleCycle",
                    f"{here}.model",
                    "step model",
                    s.model,
                    "is the ensemble itself",
                    "another model",
                    "reference a step model",
                )
            )
            continue
        out += _step_batch_size(i, m, step)
        out += _step_input_map(here, s, step, produced)
        out += _step_output_map(here, s, step, produced)
    out += _ensemble_outputs_produced(i, m, produced)
    return out


def _step_batch_size(i: int, m: ModelSpec, step: ModelSpec) -> Problems:
    if step.max_batch_size >= m.max_batch_size:
        return []
    return [
        problem(
            "InvalidMaxBatchSize",
            f"models[{i}].max_batch_size",
            "max_batch_size",
            m.max_batch_size,
            f"exceeds step '{step.name}' max_batch_size {step.max_batch_size}",
            f"<= {step.max_batch_size}",
            "lower the ensemble's max_batch_size",
        )
    ]


def _step_input_map(here: str, s: EnsembleStep, step: ModelSpec, produced: dict[str, str]) -> Problems:
    """Each key is a step input, each value an ensemble tensor produced earlier with the same dtype,
    and every step input is mapped."""
    out: Problems = []
    step_in = {t.name for t in step.inputs}
    dtypes_in = {t.name: t.dtype for t in step.inputs}
    for k, v in s.input_map.items():
        if k not in step_in:
            out.append(_not_a_step_tensor(here, "input", k, step.name, step_in))
        elif v in produced and produced[v] != dtypes_in.get(k, produced[v]):
            out.append(
                problem(
                    "InvalidEnsembleMap",
                    f"{here}.input_map.{k}",
                    "input_map value",
                    v,
                    f"is {produced[v]} but '{step.name}' input '{k}' is {dtypes_in[k]}",
                    dtypes_in[k],
                    "make the dtypes agree (cast in a step)",
                )
            )
        elif v not in produced:
            out.append(
                problem(
                    "InvalidEnsembleMap",
                    f"{here}.input_map.{k}",
                    "input_map value",
                    v,
                    "is not an ensemble input nor an earlier step's output",
                    ", ".join(sorted(produced)),
                    "order the steps so producers come first",
                )
            )
    missing = step_in - set(s.input_map)
    if missing:
        out.append(
            problem(
                "InvalidEnsembleMap",
                f"{here}.input_map",
                "input_map",
                s.input_map,
                f"leaves inputs of '{step.name}' unmapped: {', '.join(sorted(missing))}",
                ", ".join(sorted(step_in)),
                "map every step input",
            )
        )
    return out


def _step_output_map(here: str, s: EnsembleStep, step: ModelSpec, produced: dict[str, str]) -> Problems:
    """Each key is a step output; its value becomes a produced ensemble tensor (``produced`` grows)."""
    out: Problems = []
    step_out = {t.name for t in step.outputs}
    dtypes_out = {t.name: t.dtype for t in step.outputs}
    for k, v in s.output_map.items():
        if k not in step_out:
            out.append(_not_a_step_tensor(here, "output", k, step.name, step_out))
        produced[v] = dtypes_out.get(k, "")
    return out


def _not_a_step_tensor(here: str, kind: str, key: str, step: str, names: set[str]) -> TritonValidationError:
    """An ``input_map`` / ``output_map`` key that names no input / output of the step."""
    return problem(
        "InvalidEnsembleMap",
        f"{here}.{kind}_map.{key}",
        f"{kind}_map key",
        key,
        f"is not an {kind} of '{step}'",
        ", ".join(sorted(names)),
        f"use the step's {kind} name",
    )


def _ensemble_outputs_produced(i: int, m: ModelSpec, produced: dict[str, str]) -> Problems:
    out: Problems = []
    for o, t in enumerate(m.outputs):
        if t.name in produced and produced[t.name] and produced[t.name] != t.dtype:
            out.append(
                problem(
                    "InvalidEnsembleMap",
                    f"models[{i}].outputs[{o}].dtype",
                    "ensemble output",
                    t.name,
                    f"is declared {t.dtype} but its step produces {produced[t.name]}",
                    produced[t.name],
                    "declare the step output's dtype",
                )
            )
        if t.name not in produced:
            out.append(
                problem(
                    "InvalidEnsembleMap",
                    f"models[{i}].outputs[{o}].name",
                    "ensemble output",
                    t.name,
                    "is produced by no step",
                    ", ".join(sorted(produced)),
                    "map a step output to it",
                )
            )
    return out


def check_ensemble_cycles(spec: DeclarationView) -> Problems:
    """No ensemble reaches itself through its steps (a step naming the ensemble is caught earlier)."""
    out: Problems = []
    for path in _cycles(models_by_name(spec), lambda m: [s.model for s in m.steps]):
        n = path[-1]
        out.append(
            problem(
                "EnsembleCycle",
                f"models[{spec.model_names.index(n)}].steps",
                "ensemble",
                n,
                f"is part of a cycle: {' -> '.join(path)}",
                "a DAG",
                "remove the cycle",
            )
        )
    return out


def _cycles(by_name: dict[str, ModelSpec], edges: Callable[[ModelSpec], list[str]]) -> list[list[str]]:
    """Each time a depth-first walk of the declared models along ``edges`` (in declaration order) meets a
    model on its current trail: the trail, ending with that model again. Undeclared names are skipped."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current trail, 2: done

    def visit(n: str, trail: list[str]) -> None:
        if state.get(n) == 2 or n not in by_name:
            return
        if state.get(n) == 1:
            found.append([*trail, n])
            return
        state[n] = 1
        for d in edges(by_name[n]):
            visit(d, [*trail, n])
        state[n] = 2

    for n in by_name:
        visit(n, [])
    return found


# ---------------------------------------------------------------------------- business logic scripting


def check_calls(spec: DeclarationView, i: int, m: ModelSpec) -> Problems:
    """Each model a python model calls is declared and is not the model itself (the build checks its code's
    calls against them: ``builder.bls``)."""
    out: Problems = []
    by_name = models_by_name(spec)
    for j, name in enumerate(m.calls):
        here = f"models[{i}].calls[{j}]"
        if name == m.name:
            out.append(
                problem(
                    "CallCycle",
                    here,
                    "called model",
                    name,
                    "is the model itself",
                    "another declared model",
                    "call another model, or compute the result in the model's own code",
                )  # fmt: skip
            )
        elif name not in by_name:
            out.append(unknown_model(here, "called model", name, by_name))
    return out


def check_call_cycles(spec: DeclarationView) -> Problems:
    """No python model reaches itself through its calls (and ensemble steps on the way); a cycle of
    steps alone is ``check_ensemble_cycles``'s, a self-call ``check_calls``'s."""
    out: Problems = []
    by_name = models_by_name(spec)
    for path in _cycles(by_name, lambda m: [d for d in m.dependencies if d != m.name]):
        n = path[-1]
        cycle = path[path.index(n) :]
        if any(b in by_name[a].calls for a, b in zip(cycle, cycle[1:], strict=False)):
            caller = next(a for a in cycle if by_name[a].calls)
            out.append(
                problem(
                    "CallCycle",
                    f"models[{spec.model_names.index(caller)}].calls",
                    "called model",
                    n,
                    f"is part of a cycle: {' -> '.join(cycle)}",
                    "a DAG of calls and steps",
                    "remove one call of the cycle",
                )  # fmt: skip
            )
    return out


def check_business_logic_in_mode(spec: DeclarationView, i: int, e: EndpointSpec) -> Problems:
    """A python model that calls other models only where its callees are loaded beside it: the mode's
    ``business_logic`` refusal (multi-model endpoints and inference components load each model on its own)."""
    refusal = e.hosting_mode.refusal("business_logic")
    if refusal is None:
        return []
    by_name = models_by_name(spec)
    out: Problems = []
    for j, target in enumerate(e.models):
        for n in spec.closure(target):
            m = by_name.get(n)
            if m is not None and m.calls:
                err = refusal.error(
                    prop="model",
                    value=n,
                    allowed="a SingleModel endpoint (one repository: the callees load beside it)",
                    fix=f"serve '{n}' from a SingleModel endpoint, or chain its models with an ensemble's steps",
                )
                out.append(err.at(f"endpoints[{i}].models[{j}]"))
    return out
