"""TensorRT: profiles, flags, plan metadata, prebuilt plans (the GPU build carries the gpu marker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdk_triton.builder import run_build
from cdk_triton.builder.export import tensorrt as trt
from cdk_triton.builder.pbtxt import IoTensor
from cdk_triton.errors import BuildError
from tests.unit.builder.helpers import plans_decl, spec_of, tiny, write_decl


def test_tensorrt_profiles_flags_and_metadata(tmp_path: Path) -> None:
    spec = spec_of(
        tmp_path,
        tiny("p", "tensorrt").replace(
            "shape: [4]", "shape: [-1], sample_shape: [6], shape_range: {min: [2], opt: [6], max: [9]}"
        )
        + "    max_batch_size: 16\n".replace("16", "4")
        + "    dynamic_batching: {preferred_batch_sizes: [2]}\n",
    )
    m = spec.model("p")
    (prof,) = trt.profiles(m, [IoTensor(name="x", dtype="FP32", dims=(-1,))])
    assert (prof.min, prof.opt, prof.max) == ((1, 2), (2, 6), (4, 9))
    assert trt.builder_flags("fp16") == (["FP16"], []) and trt.builder_flags("fp32") == ([], ["TF32"])
    assert trt.builder_flags("int8")[0] == ["INT8", "FP16"]
    with pytest.raises(BuildError, match=r"unknown TensorRT precision 'fp8' \[TensorRTBuildFailed\]"):
        trt.builder_flags("fp8")
    meta = trt.plan_metadata(
        tensorrt_version="10.4.0",
        compute_capability=(8, 6),
        gpu_name="NVIDIA A10G",
        precision="fp16",
        profile_list=[prof],
    )
    assert meta["gpu_architecture"] == "sm86" and json.dumps(meta)
    trt.check_plan_architecture(meta, ["ml.g5.xlarge", "ml.g5.2xlarge"], model="p", triton_version="24.09")
    with pytest.raises(
        BuildError, match=r"built for sm86 but ml.g4dn.xlarge has .*sm75.*\[PlanArchitectureMismatch\]"
    ):
        trt.check_plan_architecture(meta, ["ml.g4dn.xlarge"], model="p")
    with pytest.raises(BuildError, match=r"TensorRT 10.9.0 .* ships 10.4.0"):
        trt.check_plan_architecture(
            {**meta, "tensorrt_version": "10.9.0"}, ["ml.g5.xlarge"], model="p", triton_version="24.09"
        )


def test_tensorrt_fails_clearly_without_gpu() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(BuildError, match=r"need a CUDA GPU.*\[TensorRTUnavailable\]"):
        trt.require_tensorrt()


@pytest.mark.gpu
@pytest.mark.tensorrt
def test_tensorrt_plan_builds_on_gpu(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, tiny("p", "tensorrt"))
    result = run_build(decl, out_dir=tmp_path / "out", progress=False)
    entry = result.manifest.models["p"]
    assert entry.platform == "tensorrt_plan" and entry.gpu_architectures and entry.tensorrt_version


def test_prebuilt_plans_ship_with_cc_model_filenames(tmp_path: Path) -> None:
    decl = plans_decl(tmp_path, "ml.g5.xlarge, ml.g4dn.xlarge")
    result = run_build(decl, out_dir=tmp_path / "out", progress=False)
    entry = result.manifest.models["multi_plan"]
    assert entry.platform == "tensorrt_plan" and entry.gpu_architectures == ["sm75", "sm86"]
    assert entry.config["cc_model_filenames"] == {"8.6": "model_sm86.plan", "7.5": "model_sm75.plan"}
    assert {"1/model_sm86.plan", "1/model_sm75.plan", "1/plan_sm86.json"} <= set(entry.files)
    assert result.manifest.endpoint("ep").gpu_architectures == ["sm75", "sm86"]
    assert entry.config["input"][0]["dims"] == ["4"]  # read from the ONNX export the plans were built from
