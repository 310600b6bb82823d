"""Model options: batching, instance groups, warm-up, ONNX, TensorRT, sample."""

from __future__ import annotations

from cdk_triton.config.declaration import (
    DynamicBatching,
    InstanceGroup,
    OnnxOptions,
    SampleSpec,
    TensorRTOptions,
    Warmup,
)
from tests.unit.config.declaration.decl import parsed


def test_dynamic_batching_true_empty_or_mapping() -> None:
    assert parsed(DynamicBatching.from_dict, True) == (DynamicBatching(), [])
    assert parsed(DynamicBatching.from_dict, {}) == (DynamicBatching(), [])
    assert parsed(DynamicBatching.from_dict, False) == (None, [])
    db, errs = parsed(DynamicBatching.from_dict, {"preferred_batch_sizes": [4, 0]}, "d")
    assert db == DynamicBatching() and [(e.code, e.path) for e in errs] == [
        ("InvalidType", "d.preferred_batch_sizes")
    ]
    _, errs = parsed(DynamicBatching.from_dict, 3, "d")
    assert [e.problem for e in errs] == ["is not a mapping or true"]


def test_instance_group_kind_is_prefixed_and_checked() -> None:
    assert parsed(InstanceGroup.from_dict, {"kind": "cpu", "count": 2}) == (
        InstanceGroup(kind="KIND_CPU", count=2),
        [],
    )
    _, errs = parsed(InstanceGroup.from_dict, {"kind": "tpu", "count": 0}, "g")
    assert [(e.code, e.path, e.value) for e in errs] == [
        ("InvalidInstanceGroup", "g.kind", "tpu"),
        ("InvalidInstanceGroup", "g.count", 0),
    ]


def test_warmup_data_kind() -> None:
    _, errs = parsed(Warmup.from_dict, {"data": "ones"}, "w")
    assert [(e.code, e.allowed) for e in errs] == [("InvalidWarmup", "zero, random")]


def test_onnx_and_tensorrt_choices() -> None:
    _, errs = parsed(OnnxOptions.from_dict, {"exporter": "x", "tensorrt_precision": "int8"}, "o")
    assert [(e.code, e.path) for e in errs] == [
        ("InvalidOption", "o.exporter"),
        ("UnknownPrecision", "o.tensorrt_precision"),
    ]
    trt, errs = parsed(TensorRTOptions.from_dict, {"precision": "fp8", "plans": ["a"]}, "t")
    assert trt.plans == ("a",) and [(e.code, e.path) for e in errs] == [("UnknownPrecision", "t.precision")]
    assert parsed(OnnxOptions.from_dict, 3, "o")[0] == OnnxOptions()


def test_sample_tolerances_are_numbers() -> None:
    s, errs = parsed(SampleSpec.from_dict, {"seed": 2, "atol": 1, "rtol": True}, "s")
    assert s == SampleSpec(seed=2, atol=1) and [(e.code, e.path) for e in errs] == [("InvalidType", "s.rtol")]
