"""The rules that check a declaration against its target release and instance types."""

from __future__ import annotations

import dataclasses

import pytest

from cdk_triton.config.declaration import rules
from tests.unit.config.declaration.decl import document, endpoint, model, problems
from tests.unit.config.declaration.test_rules import _found, _spec


@pytest.mark.parametrize(
    ("version", "param", "code"),
    [
        ("24.09", "ENABLE_NVFUSER", "RemovedPyTorchParameter"),
        ("23.05", "ENABLE_NVFUSER", None),
        ("23.02", "INTER_OP_THREAD_COUNT", "PyTorchParameterTooNew"),
        ("24.05", "DISABLE_CUDNN", "PyTorchParameterTooNew"),
        ("24.09", "DISABLE_CUDNN", None),
        ("24.09", "INFERENCE_MODE", None),
        ("26.05", "INFERENCE_MODE", None),
    ],
)
def test_pytorch_parameters_are_gated_by_release(version: str, param: str, code: str | None) -> None:
    spec = dataclasses.replace(
        _spec([model(format="torchscript", pytorch_parameters={param: "true"})]), triton_version=version
    )
    found = rules.check_pytorch_parameters_in_release(spec, 0, spec.models[0])
    assert [e.code for e in found] == ([code] if code else [])
    if code == "RemovedPyTorchParameter":
        assert "23.11 (the last release that had it)" in str(found[0])
        assert found[0].path == f"models[0].pytorch_parameters.{param}"


def test_example_inference_mode_is_valid_on_the_default_release() -> None:
    params = {"INFERENCE_MODE": "true", "DISABLE_OPTIMIZED_EXECUTION": "true"}
    doc_problems = problems(document([model(format="torchscript", pytorch_parameters=params)]))
    assert doc_problems == []


def test_gpu_placement_against_the_instance_type() -> None:
    groups = {"instance_groups": [{"kind": "KIND_GPU", "gpus": [7]}]}
    spec = _spec(
        [model("a", **groups), model("b", instance_groups=[{"kind": "KIND_GPU", "count": 2}])],
        [
            endpoint("g5", models=["a"], instance_types=["ml.g5.xlarge"]),
            endpoint("g5_12", models=["a"], instance_types=["ml.g5.48xlarge"]),
            endpoint("cpu", models=["b"], instance_types=["ml.c5.xlarge"]),
            endpoint("unknown", models=["b"], instance_types=["ml.zz9.xlarge"]),
        ],
    )
    g5, g5_48, cpu, unknown = spec.endpoints
    assert _found(rules.check_gpu_placement_fits, spec, 0, g5) == [
        ("GpuIndexOutOfRange", "endpoints[0].instance_types")
    ]
    assert "GPU indexes 0..0" in str(rules.check_gpu_placement_fits(spec, 0, g5)[0])
    assert _found(rules.check_gpu_placement_fits, spec, 1, g5_48) == []  # 8 GPUs: index 7 exists
    assert _found(rules.check_gpu_placement_fits, spec, 2, cpu) == [
        ("GpuInstanceGroupOnCpuInstance", "endpoints[2].instance_types")
    ]
    assert _found(rules.check_gpu_placement_fits, spec, 3, unknown) == []  # unknown type: not judged
    assert rules.check_gpu_placement_fits in rules.ENDPOINT_MODEL_RULES
    assert rules.check_pytorch_parameters_in_release in rules.MODEL_RULES
