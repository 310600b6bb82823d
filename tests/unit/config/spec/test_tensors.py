"""Tensors: dtype, shape, sample_shape and range."""

from __future__ import annotations

from cdk_triton.config.spec import TensorSpec
from cdk_triton.config.spec.tensors import tensors_from_list
from tests.unit.config.spec.decl import parsed


def test_reads_a_tensor_and_normalizes_the_dtype() -> None:
    t, errs = parsed(
        TensorSpec.from_dict, {"name": "x", "dtype": "type_fp16", "shape": [-1, 4], "range": [0, 2]}
    )
    assert errs == []
    assert t == TensorSpec(name="x", dtype="FP16", shape=(-1, 4), range=(0.0, 2.0))
    assert t.concrete_shape() == (1, 4) and t.numpy_dtype == "float16"


def test_fails_dtype_shape_sample_shape_and_range_in_order() -> None:
    d = {"name": "x", "dtype": "fp33", "shape": [-1, 4], "sample_shape": [2, 5], "range": [2, 1]}
    t, errs = parsed(TensorSpec.from_dict, d, "models[0].inputs[0]")
    assert t is not None  # the dtype is kept upper-cased; the problems are recorded
    assert [(e.code, e.path) for e in errs] == [
        ("UnknownDtype", "models[0].inputs[0].dtype"),
        ("InvalidShape", "models[0].inputs[0].sample_shape"),
        ("InvalidType", "models[0].inputs[0].range"),
    ]
    assert errs[0].fix == "use FP32"


def test_fails_missing_and_bad_shapes() -> None:
    t, errs = parsed(TensorSpec.from_dict, {"name": "x", "dtype": "FP32"}, "i")
    assert t is None and [(e.code, e.path) for e in errs] == [("MissingField", "i.shape")]
    _, errs = parsed(TensorSpec.from_dict, {"name": "x", "dtype": "FP32", "shape": [0, True]}, "i")
    assert [e.code for e in errs] == ["InvalidShape"]
    _, errs = parsed(
        TensorSpec.from_dict, {"name": "x", "dtype": "FP32", "shape": [4], "sample_shape": [-1]}, "i"
    )
    assert [e.allowed for e in errs] == ["positive integers"]


def test_tensor_list_must_be_a_list() -> None:
    out, errs = parsed(tensors_from_list, {"name": "x"}, "models[0].inputs")
    assert out == [] and [(e.code, e.prop) for e in errs] == [("InvalidType", "inputs")]
