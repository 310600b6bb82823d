"""The bad config/artifact corpus: every pair must fail locally with the real server's error text.

Each pair is packed as an MME archive and loaded through the real server (``POST /models``), so
the text asserted is what the server answers. Missing version folder and unknown platform are the
server's own texts (tritonserver of the nvidia-pytriton 0.7.0 wheel); the CPU backends copy the real backends' texts: onnxruntime_backend
``ValidateInputs`` / ``ValidateOutputs`` (counts, data types: ``unexpected datatype FP32 for input 'x',
expecting TYPE_INT64``), backend common ``CheckAllowedModelInput`` / ``CompareDimsSupported`` (names,
dims) and pytorch_backend (the ``<name>__<index>`` rule, ``unexpected datatype FP32 for inference
output``). Two are ours, because the real backend fails later or not at all on CPU: the TorchScript
warm-up failure (libtorch fails the first request instead) and TensorRT's GPU message.
"""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from cdk_triton.config.manifest import read_manifest
from cdk_triton.errors import TritonValidationError
from cdk_triton.local import CpuOverlay, LocalEndpoint
from cdk_triton.local.mme import ModelLoadError
from tests.local import artifacts as A
from tests.unit.local.support import mme_document, mme_target

pytestmark = pytest.mark.triton

F, C = A.FEATURES, A.CLASSES


def _onnx(tmp: Path, *, dynamic: bool = True, opset: int | None = None, ir: int | None = None) -> bytes:
    data = A.onnx_bytes(A.Net(5), tmp / "m.onnx", dynamic=dynamic)
    if opset is None and ir is None:
        return data
    proto = onnx.load_from_string(data)
    if opset is not None:
        proto.opset_import[0].version = opset
    if ir is not None:
        proto.ir_version = ir
    return proto.SerializeToString()


def _cases(tmp: Path) -> dict[str, tuple[object, dict[str, bytes], str]]:
    """name -> (config, files, text the load must fail with)."""
    ts = A.torchscript_bytes(A.Net(6))
    good_onnx = _onnx(tmp)
    t = A.tensor
    return {
        "onnx_wrong_input_name": (
            A.config(
                "m",
                platform="onnxruntime_onnx",
                inputs=[t("INPUT0", "TYPE_FP32", [F])],
                outputs=[t("y", "TYPE_FP32", [C])],
            ),
            {"1/model.onnx": good_onnx},
            "unexpected inference input 'INPUT0', allowed inputs are: x",
        ),
        "onnx_wrong_output_name": (
            A.config(
                "m",
                platform="onnxruntime_onnx",
                inputs=[t("x", "TYPE_FP32", [F])],
                outputs=[t("probs", "TYPE_FP32", [C])],
            ),
            {"1/model.onnx": good_onnx},
            "unexpected inference output 'probs', allowed outputs are: y",
        ),
        "onnx_input_count": (
            A.config(
                "m",
                platform="onnxruntime_onnx",
                inputs=[t("x", "TYPE_FP32", [F]), t("z", "TYPE_FP32", [F])],
                outputs=[t("y", "TYPE_FP32", [C])],
            ),
            {"1/model.onnx": good_onnx},
            "configuration expects 2 inputs, model provides 1",
        ),
        "onnx_wrong_dtype": (
            A.config(
                "m",
                platform="onnxruntime_onnx",
                inputs=[t("x", "TYPE_INT64", [F])],
                outputs=[t("y", "TYPE_FP32", [C])],
            ),
            {"1/model.onnx": good_onnx},
            ", unexpected datatype FP32 for input 'x', expecting TYPE_INT64",
        ),
        "onnx_wrong_output_dtype": (
            A.config(
                "m",
                platform="onnxruntime_onnx",
                inputs=[t("x", "TYPE_FP32", [F])],
                outputs=[t("y", "TYPE_FP64", [C])],
            ),
            {"1/model.onnx": good_onnx},
            ", unexpected datatype FP32 for output 'y', expecting TYPE_FP64",
        ),
        "onnx_wrong_dims": (
            A.config(
                "m",
                platform="onnxruntime_onnx",
                inputs=[t("x", "TYPE_FP32", [F, 1])],
                outputs=[t("y", "TYPE_FP32", [C])],
            ),
            {"1/model.onnx": good_onnx},
            f"tensor 'x': the model expects 2 dimensions (shape [-1,{F}]) but the model configuration "
            "specifies 3 dimensions",
        ),
        "onnx_static_batch_with_batching": (
            A.config(
                "m",
                platform="onnxruntime_onnx",
                inputs=[t("x", "TYPE_FP32", [F])],
                outputs=[t("y", "TYPE_FP32", [C])],
            ),
            {"1/model.onnx": _onnx(tmp, dynamic=False)},
            "for the model to support batching the shape should have at least 1 dimension and the first "
            "dimension must be -1",
        ),
        "onnx_opset_too_new_for_24_09": (
            A.config(
                "m",
                platform="onnxruntime_onnx",
                inputs=[t("x", "TYPE_FP32", [F])],
                outputs=[t("y", "TYPE_FP32", [C])],
            ),
            {"1/model.onnx": _onnx(tmp, opset=22)},
            "Opset 22 is under development",
        ),
        "onnx_ir_too_new_for_24_09": (
            A.config(
                "m",
                platform="onnxruntime_onnx",
                inputs=[t("x", "TYPE_FP32", [F])],
                outputs=[t("y", "TYPE_FP32", [C])],
            ),
            {"1/model.onnx": _onnx(tmp, ir=11)},
            "Unsupported model IR version: 11, max supported IR version: 10",
        ),
        "missing_version_folder": (
            A.config(
                "m",
                platform="onnxruntime_onnx",
                inputs=[t("x", "TYPE_FP32", [F])],
                outputs=[t("y", "TYPE_FP32", [C])],
            ),
            {"model.onnx": good_onnx},
            "at least one version must be available under the version policy of model",
        ),
        "unknown_platform": (
            A.config(
                "m",
                platform="tensorflow_savedmodel",
                inputs=[t("x", "TYPE_FP32", [F])],
                outputs=[t("y", "TYPE_FP32", [C])],
            ),
            {"1/model.savedmodel/saved_model.pb": b"x"},
            "unable to find backend library for backend",
        ),
        "torchscript_bad_input_name": (
            A.config(
                "m",
                platform="pytorch_libtorch",
                inputs=[t("features", "TYPE_FP32", [F])],
                outputs=[t("OUTPUT__0", "TYPE_FP32", [C])],
            ),
            {"1/model.pt": ts},
            "input 'features' is neither an input argument to the model nor does it follow the <name>__<index> "
            "naming convention",
        ),
        "torchscript_wrong_dtype": (
            A.config(
                "m",
                platform="pytorch_libtorch",
                inputs=[t("INPUT__0", "TYPE_INT64", [F])],
                outputs=[t("OUTPUT__0", "TYPE_FP32", [C])],
            ),
            {"1/model.pt": ts},
            "a warm-up inference with the configured input shapes and data types failed",
        ),
        "torchscript_wrong_output_dtype": (
            A.config(
                "m",
                platform="pytorch_libtorch",
                inputs=[t("INPUT__0", "TYPE_FP32", [F])],
                outputs=[t("OUTPUT__0", "TYPE_FP64", [C])],
            ),
            {"1/model.pt": ts},
            "unexpected datatype FP32 for inference output 'OUTPUT__0', expecting FP64",
        ),
        "torchscript_wrong_output_dims": (
            A.config(
                "m",
                platform="pytorch_libtorch",
                inputs=[t("INPUT__0", "TYPE_FP32", [F])],
                outputs=[t("OUTPUT__0", "TYPE_FP32", [C, 2])],
            ),
            {"1/model.pt": ts},
            "tensor 'OUTPUT__0': the model expects 2 dimensions",
        ),
        "tensorrt_plan_needs_gpu": (
            A.config(
                "m",
                platform="tensorrt_plan",
                inputs=[t("x", "TYPE_FP32", [F])],
                outputs=[t("y", "TYPE_FP32", [C])],
            ),
            {"1/model.plan": b"\0plan"},
            "TensorRT plans need an NVIDIA GPU",
        ),
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("corpus")
    out = root / "out"
    (out / "mme").mkdir(parents=True)
    cases = _cases(root)
    targets = {}
    for name, (cfg, files, _) in cases.items():
        A.write_model(root / "src" / name, cfg, files)
        tar = out / "mme" / f"{name}.tar.gz"
        digest, size = A.pack(root / "src" / name, ["m"], tar)
        targets[name] = mme_target(name, model="m", sha256=digest, size_bytes=size)
    # a config that does not parse: the server would only say "failed to poll from model repository"
    (root / "src" / "broken" / "m" / "1").mkdir(parents=True)
    (root / "src" / "broken" / "m" / "config.pbtxt").write_text(
        'name: "m"\nplatform: "onnxruntime_onnx"\ninput [ {\n'
    )
    digest, size = A.pack(root / "src" / "broken", ["m"], out / "mme" / "broken.tar.gz")
    targets["broken"] = mme_target("broken", model="m", sha256=digest, size_bytes=size)
    (out / "manifest.json").write_text(json.dumps(mme_document("corpus", targets)))
    with LocalEndpoint(
        read_manifest(out / "manifest.json"), "corpus", overlay=CpuOverlay(instance_count=1)
    ) as ep:
        yield ep, {k: v[2] for k, v in cases.items()}


CASE_NAMES = [
    "onnx_wrong_input_name",
    "onnx_wrong_output_name",
    "onnx_input_count",
    "onnx_wrong_dtype",
    "onnx_wrong_output_dtype",
    "onnx_wrong_dims",
    "onnx_static_batch_with_batching",
    "onnx_opset_too_new_for_24_09",
    "onnx_ir_too_new_for_24_09",
    "missing_version_folder",
    "unknown_platform",
    "torchscript_bad_input_name",
    "torchscript_wrong_dtype",
    "torchscript_wrong_output_dtype",
    "torchscript_wrong_output_dims",
    "tensorrt_plan_needs_gpu",
]


@pytest.mark.parametrize("case", CASE_NAMES)
def test_bad_pair_fails_with_the_real_text(corpus, case: str) -> None:
    ep, texts = corpus
    with pytest.raises(ModelLoadError) as info:
        ep.models.load(case)
    assert info.value.status == 400
    assert texts[case] in info.value.server_message


def test_a_broken_config_is_reported_before_the_server_sees_it(corpus) -> None:
    ep, _ = corpus
    with pytest.raises(TritonValidationError) as info:
        ep.models.load("broken")
    assert info.value.code == "InvalidModelConfig"
    assert "does not parse as a Triton ModelConfig" in str(info.value)
    status, _, data = ep.container("GET", "/models")
    assert b"broken" not in data
