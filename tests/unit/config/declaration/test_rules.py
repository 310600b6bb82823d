"""The cross-reference rules: each rule alone, then the order RULES report problems in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cdk_triton.config.declaration import BuildSpec, EndpointSpec, ModelSpec, graph_rules, rules
from cdk_triton.config.manifest import ArtifactLocation
from cdk_triton.config.parse import Errors
from tests.unit.config.declaration.decl import document, endpoint, ensemble, model, problems


def _spec(models: list[Any], endpoints: list[Any] | None = None, base_dir: Path | str = ".") -> BuildSpec:
    """A BuildSpec built without running the rules (they are what is tested)."""
    errs = Errors(None)
    ms = [ModelSpec.from_dict(m, f"models[{i}]", errs) for i, m in enumerate(models)]
    eps = [EndpointSpec.from_dict(e, f"endpoints[{i}]", errs) for i, e in enumerate(endpoints or [])]
    assert errs.items == []
    return BuildSpec(
        artifact_location=ArtifactLocation(bucket="b"),
        models=tuple(m for m in ms if m),
        endpoints=tuple(e for e in eps if e),
        base_dir=str(base_dir),
    )


def _found(rule: Any, spec: BuildSpec, *args: Any) -> list[tuple[str, str]]:
    return [(e.code, str(e.path)) for e in rule(spec, *args)]


def test_model_names_unique() -> None:
    assert _found(rules.check_model_names_unique, _spec([model("a"), model("b"), model("a")])) == [
        ("DuplicateModelName", "models[2].name")
    ]


def test_source_state_dict_and_plans_exist(tmp_path: Path) -> None:
    (tmp_path / "m.onnx").write_bytes(b"")
    m = model(source={"onnx": "m.onnx"}, format="onnx")
    spec = _spec([m, model("b", source={"onnx": "no.onnx"})], base_dir=tmp_path)
    assert _found(rules.check_source_exists, spec, 0, spec.models[0]) == []
    assert _found(rules.check_source_exists, spec, 1, spec.models[1]) == [
        ("SourceNotFound", "models[1].source")
    ]
    sd = _spec([model(source={"factory": "a:b", "seed": 0, "state_dict": "w.pt"})], base_dir=tmp_path)
    assert _found(rules.check_state_dict_exists, sd, 0, sd.models[0]) == [
        ("SourceNotFound", "models[0].source.state_dict")
    ]
    trt = _spec([model(format="tensorrt", tensorrt={"plans": ["p"], "opt_batch_size": 8})], base_dir=tmp_path)
    assert _found(rules.check_tensorrt_plans_exist, trt, 0, trt.models[0]) == [
        ("SourceNotFound", "models[0].tensorrt.plans[0]")
    ]
    assert _found(rules.check_opt_batch_size_fits, trt, 0, trt.models[0]) == [
        ("PreferredBatchTooLarge", "models[0].tensorrt.opt_batch_size")
    ]
    onnx = _spec([model(tensorrt={"plans": ["p"]})])
    assert _found(rules.check_tensorrt_plans_only_for_tensorrt, onnx, 0, onnx.models[0]) == [
        ("InvalidOption", "models[0].tensorrt.plans")
    ]


def test_ensemble_steps() -> None:
    steps = [
        {"model": "nope", "input_map": {"x": "x"}, "output_map": {"y": "y"}},
        {"model": "ens", "input_map": {"x": "x"}, "output_map": {"y": "y"}},
        {"model": "tiny", "input_map": {"z": "x"}, "output_map": {"w": "y"}},
    ]
    spec = _spec([model(max_batch_size=2), ensemble(steps=steps, max_batch_size=4)])
    assert _found(graph_rules.check_ensemble_steps, spec, 1, spec.models[1]) == [
        ("UnknownModelReference", "models[1].steps[0].model"),
        ("EnsembleCycle", "models[1].steps[1].model"),
        ("InvalidMaxBatchSize", "models[1].max_batch_size"),
        ("InvalidEnsembleMap", "models[1].steps[2].input_map.z"),
        ("InvalidEnsembleMap", "models[1].steps[2].input_map"),
        ("InvalidEnsembleMap", "models[1].steps[2].output_map.w"),
    ]
    assert _found(graph_rules.check_ensemble_steps, spec, 0, spec.models[0]) == []


def test_ensemble_map_dtypes_and_outputs() -> None:
    steps = [{"model": "tiny", "input_map": {"x": "x"}, "output_map": {"y": "y"}}]
    ens = ensemble(
        steps=steps,
        inputs=[{"name": "x", "dtype": "FP16", "shape": [4]}],
        outputs=[{"name": "y", "dtype": "INT64", "shape": [3]}, {"name": "q", "dtype": "FP32", "shape": [1]}],
    )
    spec = _spec([model(), ens])
    found = graph_rules.check_ensemble_steps(spec, 1, spec.models[1])
    assert [e.problem for e in found] == [
        "is FP16 but 'tiny' input 'x' is FP32",
        "is declared INT64 but its step produces FP32",
        "is produced by no step",
    ]


def test_ensemble_cycles() -> None:
    a = ensemble("a", steps=[{"model": "b", "input_map": {"x": "x"}, "output_map": {"y": "y"}}])
    b = ensemble("b", steps=[{"model": "a", "input_map": {"x": "x"}, "output_map": {"y": "y"}}])
    found = graph_rules.check_ensemble_cycles(_spec([a, b]))
    assert [(e.code, e.path, e.problem) for e in found] == [
        ("EnsembleCycle", "models[0].steps", "is part of a cycle: a -> b -> a")
    ]


def test_endpoint_rules() -> None:
    spec = _spec(
        [model("a"), model("b"), model("tiny"), ensemble("e1"), ensemble("e2")],
        [
            endpoint("s", models=["a", "b"]),
            endpoint("s2", models=["a"], default_model="b", instance_types=["g5"]),
            endpoint("m", mode="MultiModel", models=["e1", "e2", "e1"]),
            endpoint("x", models=["zz"]),
        ],
    )
    s, s2, m, x = spec.endpoints
    assert _found(rules.check_sme_default_model, spec, 0, s) == [
        ("MissingDefaultModel", "endpoints[0].default_model")
    ]
    assert _found(rules.check_sme_default_model, spec, 1, s2) == [
        ("UnknownModelReference", "endpoints[1].default_model")
    ]
    assert _found(rules.check_instance_types, spec, 1, s2) == [
        ("InvalidInstanceType", "endpoints[1].instance_types[0]")
    ]
    assert [e.value for e in rules.check_mme_archives_disjoint(spec, 2, m)] == ["tiny"]
    assert _found(rules.check_mme_targets_unique, spec, 2, m) == [
        ("DuplicateModelInEndpoint", "endpoints[2].models")
    ]
    assert _found(rules.check_endpoint_models_declared, spec, 3, x) == [
        ("UnknownModelReference", "endpoints[3].models[0]")
    ]
    assert _found(rules.check_endpoint_lists_not_empty, spec, 3, x) == []


def test_endpoint_names_unique() -> None:
    spec = _spec([model()], [endpoint(), endpoint()])
    assert _found(rules.check_endpoint_names_unique, spec) == [("DuplicateEndpointName", "endpoints[1].name")]


def test_rules_run_in_order_model_by_model() -> None:
    """Problems come grouped by model, then cycles (of steps, then of calls), then endpoint by endpoint, then endpoint names:
    the order users have always seen. An endpoint naming an undeclared model skips its other rules."""
    assert (
        rules.check_model_names_unique,
        rules.check_models,
        graph_rules.check_ensemble_cycles,
        graph_rules.check_call_cycles,
        rules.check_endpoints,
        rules.check_endpoint_names_unique,
    ) == rules.RULES
    doc = document(
        [
            model("a", tensorrt={"plans": ["p"]}, source={"onnx": "no.onnx"}),
            model("a", source={"onnx": "gone.onnx"}),
        ],
        [
            endpoint("ep", models=["zz"], instance_types=["g5"]),
            endpoint("ep", models=["a"], instance_types=[]),
        ],
    )
    assert [str(e) for e in problems(doc, base_dir="/nonexistent", source="m.yaml")] == [
        "model name 'a' is already used by models[0]; allowed: unique model names; fix: rename one of them"
        " [DuplicateModelName] at m.yaml: models[1].name",
        "source path 'no.onnx' does not exist (resolved against /nonexistent); allowed: an existing file or"
        " directory; fix: fix the path (relative to the YAML file) [SourceNotFound] at m.yaml: models[0].source",
        "plan directory 'p' has no model.plan (resolved against /nonexistent); allowed: a directory with"
        " model.plan and plan.json; fix: copy the plan and plan.json a GPU build wrote"
        " (cache/models/<model>-*/1/) [SourceNotFound] at m.yaml: models[0].tensorrt.plans[0]",
        "tensorrt.plans ['p'] only apply to tensorrt models, not onnx; allowed: format: tensorrt; fix: remove"
        " them [InvalidOption] at m.yaml: models[0].tensorrt.plans",
        "source path 'gone.onnx' does not exist (resolved against /nonexistent); allowed: an existing file or"
        " directory; fix: fix the path (relative to the YAML file) [SourceNotFound] at m.yaml: models[1].source",
        "model 'zz' is not a declared model; allowed: a; fix: declare the model [UnknownModelReference]"
        " at m.yaml: endpoints[0].models[0]",
        "instance_types [] is empty; allowed: e.g. ml.g5.xlarge; fix: list the instance types [MissingField]"
        " at m.yaml: endpoints[1].instance_types",
        "endpoint name 'ep' is already used; allowed: unique endpoint names; fix: rename one of them"
        " [DuplicateEndpointName] at m.yaml: endpoints[1].name",
    ]
