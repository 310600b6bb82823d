"""Tensors: dtype, shape, sample_shape and range."""

from __future__ import annotations

from cdk_triton.config.declaration import ShapeRange, TensorSpec
from cdk_triton.config.declaration.tensors import tensors_from_list
from tests.unit.config.declaration.decl import parsed


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


def test_reads_a_shape_range_and_uses_it_for_the_sample_sizes() -> None:
    d = {
        "name": "ids",
        "dtype": "INT64",
        "shape": [-1, 4],
        "shape_range": {"min": [1, 4], "opt": [64, 4], "max": [128, 4]},
    }
    t, errs = parsed(TensorSpec.from_dict, d)
    assert errs == [] and t.shape_range == ShapeRange(min=(1, 4), opt=(64, 4), max=(128, 4))
    assert t.dynamic_axes == (0,) and t.concrete_shape() == (64, 4) and t.other_shape() == (128, 4)
    t, _ = parsed(TensorSpec.from_dict, {**d, "sample_shape": [128, 4]})
    assert t.concrete_shape() == (128, 4) and t.other_shape() == (1, 4)
    t, _ = parsed(TensorSpec.from_dict, {"name": "ids", "dtype": "INT64", "shape": [-1]})
    assert t.concrete_shape() == (1,) and t.other_shape() == (2,)
    t, _ = parsed(TensorSpec.from_dict, {"name": "x", "dtype": "FP32", "shape": [4]})
    assert t.dynamic_axes == () and t.other_shape() is None


def test_fails_shape_ranges_that_do_not_fit() -> None:
    base = {"name": "ids", "dtype": "INT64", "shape": [-1, 4]}
    cases = {
        "does not fit shape [-1, 4]": {"min": [1, 3], "opt": [2, 4], "max": [3, 4]},
        "is not ordered": {"min": [8, 4], "opt": [2, 4], "max": [3, 4]},
    }
    for text, rng in cases.items():
        _, errs = parsed(TensorSpec.from_dict, {**base, "shape_range": rng}, "i")
        assert [(e.code, e.path) for e in errs] == [("InvalidShapeRange", "i.shape_range")]
        assert text in str(errs[0])
    _, errs = parsed(TensorSpec.from_dict, {**base, "shape_range": {"min": [1, 4], "max": [3, 4]}}, "i")
    assert [(e.code, e.path) for e in errs] == [("MissingField", "i.shape_range.opt")]
    rng = {"min": [1, 4], "opt": [2, 4], "max": [3, 4]}
    _, errs = parsed(TensorSpec.from_dict, {**base, "shape_range": rng, "sample_shape": [9, 4]}, "i")
    assert [(e.code, e.path) for e in errs] == [("InvalidShapeRange", "i.sample_shape")]
