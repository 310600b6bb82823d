"""Helpers of the declaration tests: plain dicts (what YAML gives) and the problems they raise."""

from __future__ import annotations

import copy
from typing import Any

from cdk_triton.config.declaration import BuildSpec, ModelSource, ModelSpec, TensorSpec
from cdk_triton.config.parse import Errors
from cdk_triton.errors import TritonValidationError, TritonValidationErrors

TENSOR_IN = {"name": "x", "dtype": "FP32", "shape": [4]}
TENSOR_OUT = {"name": "y", "dtype": "FP32", "shape": [3]}


def model(name: str = "tiny", **overrides: Any) -> dict[str, Any]:
    """A valid ONNX model declaration, changed by ``overrides`` (a None value removes the key)."""
    d: dict[str, Any] = {
        "name": name,
        "format": "onnx",
        "source": {"factory": "tiny_models:tiny", "seed": 0},
        "inputs": [dict(TENSOR_IN)],
        "outputs": [dict(TENSOR_OUT)],
        "max_batch_size": 4,
    }
    d.update(copy.deepcopy(overrides))
    return {k: v for k, v in d.items() if v is not None}


def tiny_model_spec() -> ModelSpec:
    """The ModelSpec that ``model()`` (and the builder tests' ``tiny()`` YAML) parses into, built by hand."""
    return ModelSpec(
        name="tiny",
        format="onnx",
        source=ModelSource(factory="tiny_models:tiny", seed=0),
        inputs=(TensorSpec(name="x", dtype="FP32", shape=(4,)),),
        outputs=(TensorSpec(name="y", dtype="FP32", shape=(3,)),),
        max_batch_size=4,
    )


def ensemble(
    name: str = "ens", steps: list[dict[str, Any]] | None = None, **overrides: Any
) -> dict[str, Any]:
    """An ensemble of one step ``tiny`` mapping x -> y."""
    steps = (
        steps if steps is not None else [{"model": "tiny", "input_map": {"x": "x"}, "output_map": {"y": "y"}}]
    )
    return model(name, **{"format": "ensemble", "source": None, "steps": steps, **overrides})


def endpoint(
    name: str = "ep", mode: str = "SingleModel", models: list[str] | None = None, **kw: Any
) -> dict[str, Any]:
    d = {"name": name, "mode": mode, "instance_types": ["ml.g5.xlarge"], "models": models or ["tiny"]}
    d.update(kw)
    return d


def document(models: list[Any], endpoints: list[Any] | None = None, **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "triton_version": "24.09",
        "artifact_location": "s3://bucket/prefix/",
        "models": models,
    }
    if endpoints is not None:
        d["endpoints"] = endpoints
    d.update(kw)
    return d


def problems(data: Any, **kw: Any) -> list[TritonValidationError]:
    """Every problem ``BuildSpec.from_dict`` raises for ``data`` (empty when it parses)."""
    try:
        BuildSpec.from_dict(data, **kw)
    except TritonValidationErrors as exc:
        return exc.errors
    except TritonValidationError as exc:
        return [exc]
    return []


def codes(data: Any, **kw: Any) -> list[str]:
    return [e.code for e in problems(data, **kw)]


def parsed(parse: Any, d: Any, path: str = "x") -> tuple[Any, list[TritonValidationError]]:
    """``parse(d, path, errs)`` and the problems it recorded."""
    errs = Errors(None)
    return parse(d, path, errs), errs.items
