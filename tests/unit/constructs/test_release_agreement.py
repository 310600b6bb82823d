"""GPU placement and release agreement at synth (the built models against the instance and the image)."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import assertions

from cdk_triton.config import tables
from cdk_triton.config.server_options import ServerOptions
from cdk_triton.constructs import ModelArtifacts, TritonEndpoint, TritonImage
from cdk_triton.constructs.checks import models as model_checks
from cdk_triton.errors import TritonValidationErrors
from tests.unit.constructs.support import TENSORRT, manifest_with, new_stack


def _model(data: dict[str, Any], name: str, **config: Any) -> None:
    data["models"][name]["config"].update(config)


def _codes(**kw: Any) -> list[str]:
    stack = new_stack()
    kw.setdefault("instance_type", "ml.g5.xlarge")
    try:
        TritonEndpoint(stack, "Ep", **kw)
    except TritonValidationErrors as exc:
        return sorted(exc.codes)
    except Exception as exc:  # one error
        return [getattr(exc, "code", type(exc).__name__)]
    return []


def test_gpu_index_beyond_the_instance_is_an_error() -> None:
    m = manifest_with(
        lambda d: _model(d, "resnet", instance_group=[{"kind": "KIND_GPU", "count": 1, "gpus": [7]}])
    )
    art = ModelArtifacts.from_manifest(m, "classifier")
    assert _codes(artifacts=art, instance_type="ml.g5.xlarge") == ["GpuIndexOutOfRange"]
    assert _codes(artifacts=art, instance_type="ml.g5.48xlarge") == []


def test_kind_gpu_on_a_cpu_instance_is_an_error() -> None:
    m = manifest_with(lambda d: _model(d, "resnet", instance_group=[{"kind": "KIND_GPU", "count": 1}]))
    assert _codes(artifacts=ModelArtifacts.from_manifest(m, "classifier"), instance_type="ml.c6i.xlarge") == [
        "GpuInstanceGroupOnCpuInstance"
    ]


def test_instances_over_gpu_memory_warn() -> None:
    entry = manifest_with(
        lambda d: _model(d, "resnet", instance_group=[{"kind": "KIND_GPU", "count": 4}])
    ).models
    errs, warnings = model_checks.check_gpu_placement_of_models(
        "ml.g5.xlarge", {"resnet": entry["resnet"]}, sizes={"resnet": 8 * 1024**3}
    )
    assert errs == [] and [w[0] for w in warnings] == ["cdk-triton:GpuMemoryOversubscribed"]
    assert "24 GiB" in warnings[0][1]


def test_response_cache_without_server_cache_is_an_error() -> None:
    m = manifest_with(lambda d: _model(d, "resnet", response_cache={"enable": True}))
    art = ModelArtifacts.from_manifest(m, "classifier")
    assert _codes(artifacts=art) == ["ResponseCacheNotConfigured"]
    assert _codes(artifacts=art, server_options=ServerOptions(response_cache_byte_size=1 << 20)) == []


def test_tensorrt_plan_on_another_tensorrt_is_an_error() -> None:
    art = ModelArtifacts.from_manifest(TENSORRT, "trt")
    assert _codes(artifacts=art, image=TritonImage.for_version("25.04")) == ["TensorRTVersionMismatch"]
    assert _codes(artifacts=art, image=TritonImage.for_version("24.09")) == []


def test_portable_onnx_on_an_older_release_warns_only() -> None:
    stack = new_stack()
    ep = TritonEndpoint(
        stack,
        "Ep",
        instance_type="ml.g5.xlarge",
        artifacts=ModelArtifacts.from_manifest(manifest_with(), "classifier"),
        image=TritonImage.for_version("23.02"),
    )
    assert ep.model.triton_version == "23.02"
    found = assertions.Annotations.from_stack(stack).find_warning(
        "*", assertions.Match.string_like_regexp("OnnxMayNotLoad")
    )
    assert found


@pytest.mark.parametrize("version", ["23.02", "23.05"])
def test_legacy_image_resolves(version: str) -> None:
    stack = new_stack(env=cdk.Environment(account="111111111111", region="cn-north-1"))
    ep = TritonEndpoint(
        stack,
        "Ep",
        instance_type="ml.g5.xlarge",
        artifacts=ModelArtifacts.from_manifest(manifest_with(), "classifier"),
        image=TritonImage.for_version(version),
    )
    assert ep.model.triton_version == version


def _onnx_on(version: str, **record: Any) -> tuple[list[str], list[str]]:
    """Codes and OnnxMayNotLoad warnings of the example (built for 24.09) with resnet's ONNX record."""
    stack = new_stack()
    m = manifest_with(lambda d: d["models"]["resnet"].update(record))
    try:
        TritonEndpoint(
            stack,
            "Ep",
            instance_type="ml.g5.xlarge",
            artifacts=ModelArtifacts.from_manifest(m, "classifier"),
            image=TritonImage.for_version(version),
        )
    except TritonValidationErrors as exc:
        return sorted(exc.codes), []
    except Exception as exc:  # one error
        return [getattr(exc, "code", type(exc).__name__)], []
    found = assertions.Annotations.from_stack(stack).find_warning(
        "*", assertions.Match.string_like_regexp("OnnxMayNotLoad")
    )
    return [], [str(w.entry.data) for w in found]


def test_recorded_onnx_opset_above_the_image_is_an_error() -> None:
    rel = tables.release("23.02")
    assert rel.onnx_max_opset is not None and rel.onnx_max_ir_version is not None
    codes, _ = _onnx_on("23.02", onnx_opset=rel.onnx_max_opset + 1, onnx_ir_version=rel.onnx_max_ir_version)
    assert codes == ["OnnxTooNewForImage"]
    codes, _ = _onnx_on("23.02", onnx_opset=rel.onnx_max_opset, onnx_ir_version=rel.onnx_max_ir_version + 1)
    assert codes == ["OnnxTooNewForImage"]


def test_recorded_portable_onnx_on_an_older_release_passes_without_warning() -> None:
    rel = tables.release("23.02")
    assert _onnx_on("23.02", onnx_opset=rel.onnx_max_opset, onnx_ir_version=rel.onnx_max_ir_version) == (
        [],
        [],
    )
    assert _onnx_on("23.02", onnx_opset=13) == ([], [])  # IR not recorded: only the opset is judged


def test_onnx_without_the_record_keeps_the_warning() -> None:
    codes, warnings = _onnx_on("23.02")
    assert codes == [] and len(warnings) == 1 and "OnnxMayNotLoad" in warnings[0]


def test_instances_that_outgrow_the_gpu_memory_warn_at_synth() -> None:
    """resnet recorded at 14 GiB, two instances per GPU on ml.g5.xlarge (24 GiB A10G): a warning."""

    def big(data: dict[str, Any]) -> None:
        data["models"]["resnet"]["size_bytes"] = 14 * 1024**3
        data["models"]["resnet"]["config"]["instance_group"] = [{"kind": "KIND_GPU", "count": 2}]

    stack = new_stack()
    TritonEndpoint(
        stack,
        "Ep",
        artifacts=ModelArtifacts.from_manifest(manifest_with(big), "classifier"),
        instance_type="ml.g5.xlarge",
    )
    warnings = assertions.Annotations.from_stack(stack).find_warning(
        "*", assertions.Match.string_like_regexp("GpuMemoryOversubscribed")
    )
    assert len(warnings) == 1
    text = str(warnings[0].entry.data)
    assert (
        "the models on GPU 0 of ml.g5.xlarge ('resnet' 14.0 GiB x 2) need about 28.0 GiB" in text
        and "24 GiB of one NVIDIA A10G" in text
    )

    quiet = new_stack()
    TritonEndpoint(
        quiet,
        "Ep",
        artifacts=ModelArtifacts.from_manifest(manifest_with(), "classifier"),
        instance_type="ml.g5.xlarge",
    )
    assert not assertions.Annotations.from_stack(quiet).find_warning(
        "*", assertions.Match.string_like_regexp("GpuMemoryOversubscribed")
    )
