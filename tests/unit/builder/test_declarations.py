"""Declarations: the YAML file maps one to one onto the frozen dataclasses."""

from __future__ import annotations

import dataclasses

import pytest

from cdk_triton.builder.declarations import load_declaration
from cdk_triton.config.declaration import BuildSpec, ModelSpec
from cdk_triton.config.manifest import MULTI_MODEL, SINGLE_MODEL
from cdk_triton.errors import TritonValidationError, TritonValidationErrors
from tests.unit.builder.helpers import EXAMPLE, tiny, write_decl
from tests.unit.config.declaration.decl import tiny_model_spec


def test_example_declaration_loads() -> None:
    spec = load_declaration(EXAMPLE)
    assert spec.triton_version == "24.09"
    eps = {e.name: e for e in spec.endpoints}
    assert eps["classifier"].mode == SINGLE_MODEL and eps["multi"].mode == MULTI_MODEL
    assert eps["classifier"].instance_types == ("ml.g5.xlarge",) == eps["multi"].instance_types
    assert spec.closure("classifier") == ["classifier", "preprocess", "resnet"]
    bert = spec.model("bert")
    assert [t.dtype for t in bert.inputs] == ["INT64", "INT64"]
    assert spec.model("classifier_trt").optional


def test_dataclasses_are_frozen() -> None:
    spec = load_declaration(EXAMPLE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.models[0].name = "x"  # type: ignore[misc]
    assert isinstance(spec.models[0], ModelSpec)


def test_every_yaml_key_is_a_field() -> None:
    """One to one: the keys the loader accepts are exactly the dataclass field names."""
    fields = {f.name for f in dataclasses.fields(ModelSpec)}
    assert {
        "name",
        "format",
        "source",
        "inputs",
        "outputs",
        "max_batch_size",
        "dynamic_batching",
        "instance_groups",
        "warmup",
        "pytorch_parameters",
        "tensorrt",
        "onnx",
        "steps",
    } <= fields


def test_fails_unknown_key_with_path_and_closest(tmp_path) -> None:  # type: ignore[no-untyped-def]
    body = tiny("a") + tiny("b") + tiny("c").replace("dtype: FP32, shape: [4]", "dtyp: FP32, shape: [4]")
    with pytest.raises(TritonValidationError) as exc:
        load_declaration(write_decl(tmp_path, body))
    msg = str(exc.value)
    assert "models[2].inputs[0].dtyp" in msg and "did you mean 'dtype'" in msg
    assert exc.value.code in ("UnknownKey", "MissingField")


def test_collects_every_problem_at_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    body = tiny("a").replace("FP32, shape: [4]", "FP33, shape: [4]") + tiny("a").replace("seed: 0", "")
    with pytest.raises(TritonValidationErrors) as exc:
        load_declaration(write_decl(tmp_path, body))
    assert {"UnknownDtype", "MissingSeed", "DuplicateModelName"} <= set(exc.value.codes)


def test_artifact_location_override(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = write_decl(tmp_path, tiny())
    assert load_declaration(path).artifact_location.bucket == "test-bucket"
    monkeypatch.setenv("CDK_TRITON_ARTIFACT_LOCATION", "s3://env-bucket/x")
    assert load_declaration(path).artifact_location.bucket == "env-bucket"
    assert (
        load_declaration(path, artifact_location="s3://cli-bucket/y/").artifact_location.uri
        == "s3://cli-bucket/y/"
    )


def test_python_api_equals_yaml(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The dataclasses built by hand equal what the YAML loader makes (one to one)."""
    from cdk_triton.config.manifest import ArtifactLocation

    loaded = load_declaration(write_decl(tmp_path, tiny()))
    by_hand = tiny_model_spec()
    assert loaded.models == (by_hand,)
    spec = BuildSpec(
        artifact_location=ArtifactLocation.from_uri("s3://test-bucket/prefix/"),
        models=(by_hand,),
        base_dir=str(tmp_path),
    )
    assert spec.artifact_location == loaded.artifact_location and spec.models == loaded.models


def test_fails_ensemble_dtype_disagreement(tmp_path) -> None:  # type: ignore[no-untyped-def]
    body = (
        tiny("step")
        + """
  - name: ens
    format: ensemble
    inputs: [{name: x, dtype: FP16, shape: [4]}]
    outputs: [{name: y, dtype: INT64, shape: [3]}]
    max_batch_size: 4
    steps:
      - {model: step, input_map: {x: x}, output_map: {y: y}}
"""
    )
    with pytest.raises(TritonValidationErrors) as exc:
        load_declaration(write_decl(tmp_path, body))
    text = str(exc.value)
    assert "is FP16 but 'step' input 'x' is FP32" in text
    assert "is declared INT64 but its step produces FP32" in text
