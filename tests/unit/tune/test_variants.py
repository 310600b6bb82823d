"""Variants: the current declaration first, the axes' combinations, ensembles tuned through their steps."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cdk_triton.errors import TritonValidationError
from cdk_triton.tune.variants import Axes, batching_candidates, generate

EXAMPLE = Path(__file__).resolve().parents[3] / "build" / "models.yaml"


@pytest.fixture(scope="module")
def doc() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())


def test_current_first_then_every_other_combination(doc: dict) -> None:
    variants = generate(doc, "classifier_onnx", Axes(formats=("onnx", "torchscript")))
    assert variants[0].current and variants[0].name == "classifier_onnx__current"
    names = [v.name for v in variants[1:]]
    # 2 formats x (off, on) x (1, 2) = 8, minus the one equal to the declaration (onnx, on, 1)
    assert len(names) == 7 and len(set(names)) == 7
    assert "classifier_onnx__onnx_db100_x1" not in names
    assert {v.format for v in variants} == {"onnx", "torchscript"}


def test_batching_candidates_derive_from_max_batch_size() -> None:
    assert batching_candidates(8, [100, 500]) == [
        {"preferred_batch_sizes": [4, 8], "max_queue_delay_microseconds": 100},
        {"preferred_batch_sizes": [4, 8], "max_queue_delay_microseconds": 500},
    ]
    assert batching_candidates(6, [0])[0]["preferred_batch_sizes"] == [4, 6]
    assert batching_candidates(1, [100]) == [{"max_queue_delay_microseconds": 100}]


def test_ensemble_is_tuned_through_its_steps_keeping_their_formats(doc: dict) -> None:
    variants = generate(doc, "classifier")
    assert variants[0].changes.keys() == {"resnet", "preprocess"}
    for v in variants:
        assert v.changes["resnet"]["format"] == "onnx" and v.changes["preprocess"]["format"] == "python"
    two = next(v for v in variants if v.name == "classifier__nodb_x2")
    assert two.changes["preprocess"]["instance_groups"] == [{"kind": "KIND_CPU", "count": 2}]
    assert two.changes["resnet"]["instance_groups"] == [{"kind": "KIND_GPU", "count": 2}]


def test_a_model_without_a_factory_keeps_its_format(doc: dict) -> None:
    variants = generate(doc, "preprocess", Axes(formats=("onnx", "torchscript")))
    assert {v.format for v in variants} == {"python"}


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"name": "nope"}, "--model 'nope' is not declared in models.yaml"),
        ({"axes": Axes(instance_counts=(0,))}, "--instances [0] must be positive integers"),
        ({"axes": Axes(concurrency=())}, "--concurrency [] must be positive integers"),
        ({"axes": Axes(queue_delays_us=(-1,))}, "--queue-delays [-1] must not be negative"),
    ],
)
def test_fails_on_bad_axes(doc: dict, kwargs: dict, needle: str) -> None:
    with pytest.raises(TritonValidationError) as err:
        generate(doc, kwargs.pop("name", "classifier_onnx"), **kwargs)
    assert needle in str(err.value)
