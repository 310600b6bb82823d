"""The lenient view of a raw models.yaml: what tune and the pipeline read, without the rules."""

from __future__ import annotations

from pathlib import Path

import yaml

from cdk_triton.builder.declarations import load_declaration
from cdk_triton.config.declaration import RawDeclaration

EXAMPLE = Path(__file__).resolve().parents[4] / "build" / "models.yaml"

PARTIAL = {
    "triton_version": 24.09,
    "models": [
        {"name": "ens", "format": "ensemble", "steps": [{"model": "pre"}, {"model": "inner"}, "junk"]},
        {"name": "inner", "format": "ensemble", "steps": [{"model": "trt"}, {"model": "ens"}]},
        {"name": "pre", "format": "python"},
        {"name": "trt", "format": "tensorrt"},
        {"name": "nothing"},
        "not a mapping",
    ],
    "endpoints": [
        {"name": "a", "instance_types": ["ml.g5.xlarge"], "models": ["ens"]},
        {"name": "b", "models": ["trt"]},
        {"name": "c", "instance_types": ["ml.c5.xlarge"], "models": ["pre"]},
        7,
    ],
}


def test_a_partial_declaration_reads_without_the_rules() -> None:
    view = RawDeclaration(PARTIAL)
    assert view.triton_version == "24.09"
    assert view.model_names == ["ens", "inner", "pre", "trt", "nothing"]
    assert (view.format_of("trt"), view.format_of("nothing"), view.format_of("missing")) == (
        "tensorrt",
        None,
        None,
    )
    assert view.steps("ens") == ["pre", "inner"] and view.steps("pre") == [] and view.steps("missing") == []
    assert view.closure("ens") == ["ens", "pre", "inner", "trt"]  # a cycle is walked once
    assert view.closure("missing") == ["missing"]
    assert [e.get("name") for e in view.endpoints] == ["a", "b", "c"]
    assert view.serving("trt") == {"a": ["ml.g5.xlarge"], "b": []}
    assert view.serving("nothing") == {}


def test_an_empty_document_has_nothing() -> None:
    view = RawDeclaration({})
    assert (view.triton_version, view.models, view.endpoints, view.model_names) == (None, (), (), [])


def test_the_view_holds_the_documents_own_entries() -> None:
    doc = {"models": [{"name": "m", "format": "onnx"}]}
    entry = RawDeclaration(doc).model("m")
    assert entry is doc["models"][0]


def test_closure_is_the_declarations_own_on_the_example() -> None:
    view = RawDeclaration(yaml.safe_load(EXAMPLE.read_text()))
    spec = load_declaration(EXAMPLE, artifact_location="s3://bucket/prefix/")
    assert view.model_names == [m.name for m in spec.models]
    for name in view.model_names:
        assert view.closure(name) == spec.closure(name)
        assert view.format_of(name) == spec.model(name).format
    assert [e["name"] for e in view.endpoints] == [e.name for e in spec.endpoints]
    for ep, spec_ep in zip(view.endpoints, spec.endpoints, strict=True):
        assert view.instance_types(ep) == list(spec_ep.instance_types)


def test_loaded_at_start_names_the_callees_an_ensembles_load_does_not_reach() -> None:
    """``--load-model=<default>`` loads an ensemble's steps, not a python model's callees: the callees of
    every python model the default reaches (through steps and calls), each once, in closure order."""
    from cdk_triton.config.declaration.view import loaded_at_start

    steps = {"ens": ["pre", "bls"], "callee_ens": ["leaf"]}
    calls = {"bls": ["bert", "callee_ens"], "pre": ["bert"], "leaf": ["deep"]}
    got = loaded_at_start("ens", lambda n: steps.get(n, []), lambda n: calls.get(n, []))
    assert got == ["bert", "callee_ens", "deep"]
    assert loaded_at_start("bert", lambda n: [], lambda n: []) == []
