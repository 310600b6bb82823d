"""Every error code: a clear message, and nothing written or uploaded."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.builder import run_build
from cdk_triton.builder.errors import ALL_CODES, BUILD_ERRORS, SURFACED, VALIDATION_ERRORS
from cdk_triton.errors import BuildError, TritonValidationError
from tests.capabilities import has_cuda, has_tensorrt
from tests.unit.builder.helpers import ensemble, tiny, write_decl

SME = """
  - name: ep
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [{models}]
"""
MME = SME.replace("SingleModel", "MultiModel")
ENSEMBLE = ensemble("{model: STEP, input_map: {x: x}, output_map: {y: y}}")

# code -> (models body, endpoints body or None, expected text in the message)
DECLARATION_CASES: dict[str, tuple[str, str | None, str]] = {
    "UnknownKey": (tiny().replace("max_batch_size", "max_batch"), None, "did you mean 'max_batch_size'"),
    "InvalidType": (tiny().replace("max_batch_size: 4", "max_batch_size: four"), None, "max_batch_size"),
    "MissingField": (
        tiny().replace("    outputs: [{name: y, dtype: FP32, shape: [3]}]\n", ""),
        None,
        "outputs",
    ),
    "UnknownDtype": (
        tiny().replace("dtype: FP32, shape: [4]", "dtype: FLOAT32, shape: [4]"),
        None,
        "is not a Triton data type",
    ),
    "InvalidShape": (tiny().replace("shape: [4]", "shape: [0, 4]"), None, "-1 for a dynamic dim"),
    "UnknownFormat": (tiny(format="onnxx"), None, "use onnx"),
    "InvalidSource": (tiny().replace("seed: 0", "seed: 0, onnx: a.onnx"), None, "exactly one kind"),
    "SourceFormatMismatch": (tiny(format="python"), None, "cannot produce a python model"),
    "SourceNotFound": (
        tiny().replace("factory: tiny_models:tiny, seed: 0", "onnx: missing.onnx"),
        None,
        "does not exist",
    ),
    "InvalidFactoryReference": (
        tiny().replace("tiny_models:tiny", "tiny_models.tiny"),
        None,
        "module:callable",
    ),
    "MissingSeed": (tiny().replace(", seed: 0", ""), None, "seed: 0"),
    "InvalidMaxBatchSize": (tiny().replace("max_batch_size: 4", "max_batch_size: -1"), None, "is negative"),
    "PreferredBatchTooLarge": (
        tiny() + "    dynamic_batching: {preferred_batch_sizes: [8]}\n",
        None,
        "exceeds max_batch_size 4",
    ),
    "InvalidModelName": (tiny("my model/v1"), None, "is not a valid model directory name"),
    "DuplicateModelName": (tiny() + tiny(), None, "already used"),
    "DuplicateTensorName": (
        tiny().replace(
            "outputs: [{name: y, dtype: FP32, shape: [3]}]",
            "outputs: [{name: y, dtype: FP32, shape: [3]}, {name: y, dtype: FP32, shape: [3]}]",
        ),
        None,
        "appears twice",
    ),
    "DuplicateModelInEndpoint": (
        tiny("step") + ENSEMBLE.replace("STEP", "step"),
        MME.format(models="ens, step"),
        "appears in the archives of both",
    ),
    "DuplicateEndpointName": (tiny(), SME.format(models="tiny") + SME.format(models="tiny"), "already used"),
    "UnknownModelReference": (tiny(), SME.format(models="tinny"), "did you mean 'tiny'"),
    "EnsembleCycle": (ENSEMBLE.replace("STEP", "ens"), None, "the ensemble itself"),
    "InvalidEnsembleMap": (
        tiny("step") + ENSEMBLE.replace("STEP", "step").replace("{x: x}", "{q: x}"),
        None,
        "is not an input of 'step'",
    ),
    "UnknownEndpointMode": (
        tiny(),
        SME.format(models="tiny").replace("SingleModel", "Serverless"),
        "is not an endpoint mode",
    ),
    "MissingDefaultModel": (
        tiny("a") + tiny("b"),
        SME.format(models="a, b"),
        "name the model behind /invocations",
    ),
    "InvalidPackaging": (tiny(), SME.format(models="tiny") + "    packaging: zip\n", "is not a packaging"),
    "InvalidInstanceType": (tiny(), SME.format(models="tiny").replace("ml.g5.xlarge", "g5.xlarge"), "ml."),
    "InvalidInstanceGroup": (tiny() + "    instance_groups: [{kind: TPU}]\n", None, "KIND_GPU"),
    "InvalidShapeRange": (
        tiny().replace("shape: [4]", "shape: [-1], shape_range: {min: [8], opt: [4], max: [16]}"),
        None,
        "is not ordered min <= opt <= max",
    ),
    "MissingShapeRange": (
        tiny(format="tensorrt").replace("shape: [4]", "shape: [-1]"),
        None,
        "a TensorRT plan needs the min/opt/max size of each dynamic dim",
    ),
    "InvalidSequenceBatching": (
        tiny() + "    dynamic_batching: true\n    sequence_batching: true\n",
        None,
        "cannot be combined with dynamic_batching",
    ),
    "SequenceBatchingInstances": (
        tiny() + "    sequence_batching: {control_inputs: {start: START}}\n",
        MME.format(models="tiny"),
        "sequence-batched (stateful) but a multi-model endpoint",
    ),
    "InvalidWarmup": (tiny() + "    warmup: [{data: ones}]\n", None, "zero, random"),
    "InvalidOption": (tiny() + "    torchscript_mode: compile\n", None, "trace, script"),
    "UnknownPrecision": (tiny(format="tensorrt") + "    tensorrt: {precision: fp8}\n", None, "fp16"),
    "UnknownPyTorchParameter": (
        tiny(format="torchscript") + "    pytorch_parameters: {INFERENCE_MOD: 'true'}\n",
        None,
        "did you mean 'INFERENCE_MODE'",
    ),
    "RemovedPyTorchParameter": (
        tiny(format="torchscript") + "    pytorch_parameters: {ENABLE_NVFUSER: 'true'}\n",
        None,
        "removed after Triton 23.11",
    ),
    "GpuInstanceGroupOnCpuInstance": (
        tiny() + "    instance_groups: [{kind: KIND_GPU}]\n",
        SME.format(models="tiny").replace("ml.g5.xlarge", "ml.c5.xlarge"),
        "has no NVIDIA GPU",
    ),
    "GpuIndexOutOfRange": (
        tiny() + "    instance_groups: [{kind: KIND_GPU, gpus: [7]}]\n",
        SME.format(models="tiny"),
        "GPU indexes 0..0",
    ),
    "UnknownInstanceType": (
        tiny(),
        SME.format(models="tiny").replace("g5.xlarge", "g5.xlarg"),
        "'ml.g5.xlarge'",
    ),
    "NoTritonImageForInstance": (
        tiny(),
        SME.format(models="tiny").replace("g5.xlarge", "c7g.xlarge"),
        "arm64",
    ),
    "MmeNeedsSingleGpu": (
        tiny(),
        MME.format(models="tiny").replace("g5.xlarge", "g5.12xlarge"),
        "has 4 GPUs",
    ),
    "ComputeCapabilityTooLow": (tiny(), SME.format(models="tiny").replace("g5.xlarge", "p2.xlarge"), "3.7"),
    "InvalidKmsKeyArn": (tiny(), None, "names a KMS alias"),
}


class NoS3:
    """An S3 client that fails the test on any use: proves that nothing was uploaded."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the failed build used S3 ({name})")


def _nothing_written(out: Path) -> None:
    """No file at all under the output directory (the advisory lock file aside)."""
    left = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()] if out.exists() else []
    assert left in ([], [".lock"]), left


@pytest.mark.parametrize("code", sorted(DECLARATION_CASES))
def test_fails_declaration(code: str, tmp_path: Path) -> None:
    body, endpoints, text = DECLARATION_CASES[code]
    decl = write_decl(tmp_path, body, endpoints=endpoints)
    if code == "InvalidKmsKeyArn":
        decl.write_text("kms_key_arn: alias/artifacts\n" + decl.read_text())
    with pytest.raises(TritonValidationError) as exc:
        run_build(decl, out_dir=tmp_path / "out", upload=True, progress=False, s3_client=NoS3())
    codes = getattr(exc.value, "codes", [exc.value.code])
    assert code in codes, str(exc.value)
    assert text in str(exc.value)
    assert "fix:" in str(exc.value) and str(decl) in str(exc.value)
    _nothing_written(tmp_path / "out")


def test_fails_unknown_triton_release(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, tiny())
    decl.write_text(decl.read_text().replace("'24.09'", "'19.01'"))
    with pytest.raises(TritonValidationError, match=r"UnknownTritonRelease"):
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    _nothing_written(tmp_path / "out")


def test_fails_pytorch_parameter_newer_than_release(tmp_path: Path) -> None:
    decl = write_decl(
        tmp_path, tiny(format="torchscript") + "    pytorch_parameters: {DISABLE_CUDNN: 'true'}\n"
    )
    decl.write_text(decl.read_text().replace("'24.09'", "'24.05'"))
    with pytest.raises(
        TritonValidationError, match=r"is read from Triton 24.06 on.*\[PyTorchParameterTooNew\]"
    ):
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    _nothing_written(tmp_path / "out")


def test_fails_bad_artifact_location_and_yaml(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, tiny(), location="bucket/prefix")
    with pytest.raises(TritonValidationError, match=r"\[InvalidS3Uri\]"):
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    decl.write_text("models: [\n")
    with pytest.raises(TritonValidationError, match=r"\[InvalidYaml\]"):
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    with pytest.raises(TritonValidationError, match=r"\[DeclarationNotFound\]"):
        run_build(tmp_path / "nope.yaml", out_dir=tmp_path / "out", progress=False)
    decl = write_decl(tmp_path, tiny())
    with pytest.raises(TritonValidationError, match=r"\[UnknownOnlyModel\]"):
        run_build(decl, out_dir=tmp_path / "out", only="nothing", progress=False)
    _nothing_written(tmp_path / "out")


PYTHON_TORCH = """
  - name: pre
    format: python
    source: {python: bad_pre}
    inputs: [{name: x, dtype: FP32, shape: [4]}]
    outputs: [{name: y, dtype: FP32, shape: [4]}]
"""

# code -> (models body, expected text)
RUNTIME_CASES: dict[str, tuple[str, str]] = {
    "FactoryNotFound": (tiny().replace("tiny_models:tiny", "missing_module:tiny"), "cannot be found"),
    "FactoryRaised": (tiny(factory="raises"), "weights are missing"),
    "FactoryNotModule": (tiny(factory="not_a_module"), "not a torch.nn.Module"),
    "NonDeterministicOutput": (
        tiny(factory="noisy").replace("shape: [3]", "shape: [4]"),
        "differs between two runs",
    ),
    "NoBatchDim": (tiny(factory="unbatched").replace("shape: [3]", "shape: [4]"), "no leading batch dim"),
    "ShapeMismatch": (tiny().replace("shape: [3]", "shape: [5]"), "declare shape: [3]"),
    "DtypeMismatch": (
        tiny().replace("dtype: FP32, shape: [3]", "dtype: FP16, shape: [3]"),
        "declare dtype: FP32",
    ),
    "TensorCountMismatch": (
        tiny().replace(
            "outputs: [{name: y, dtype: FP32, shape: [3]}]",
            "outputs: [{name: y, dtype: FP32, shape: [3]}, {name: z, dtype: FP32, shape: [3]}]",
        ),
        "declaration has 2",
    ),
    "OnnxOpsetTooNew": (tiny() + "    onnx: {opset: 23}\n", "supports opsets up to 21"),
    "PythonModelImport": (PYTHON_TORCH, "imports 'torch'"),
    "PythonModelInvalid": (
        PYTHON_TORCH.replace("bad_pre", "no_class"),
        "defines no TritonPythonModel.execute",
    ),
    "EagerRunFailed": (tiny().replace("shape: [4]", "shape: [5]"), "fails on the declared sample input"),
    "ParityMismatch": (
        tiny("t", "torchscript", "trace_hazard").replace("shape: [3]", "shape: [4]"),
        "differs from the eager model: largest difference",
    ),
    "ExportFailed": (
        tiny("t", "torchscript", "unscriptable").replace("shape: [3]", "shape: [4]")
        + "    torchscript_mode: script\n",
        "TorchScript script failed",
    ),
    "OnnxInvalid": (
        tiny().replace("factory: tiny_models:tiny, seed: 0", "onnx: junk.onnx"),
        "is not an ONNX model",
    ),
    "TensorNameMismatch": (
        tiny().replace("factory: tiny_models:tiny, seed: 0", "onnx: good.onnx").replace("name: x", "name: q"),
        "declare the graph's names",
    ),
    "TensorRTUnavailable": (tiny(format="tensorrt"), "need a CUDA GPU"),
    "DevicePinnedExport": (tiny("t", "torchscript", "arange_on_input_device"), "is tied to one device"),
    "SequenceBatchingUnsupported": (tiny() + "    sequence_batching: true\n", "built for python models only"),
}


@pytest.mark.parametrize("code", sorted(RUNTIME_CASES))
def test_fails_build(code: str, tmp_path: Path) -> None:
    body, text = RUNTIME_CASES[code]
    if code == "TensorRTUnavailable" and has_cuda():  # the message says what is missing here
        if has_tensorrt():
            pytest.skip("CUDA and TensorRT are here: the plan builds (test_tensorrt_plan_builds_on_gpu)")
        text = "the tensorrt package is not installed"
    model = re.search(r"name: (\w+)", body).group(1)  # type: ignore[union-attr]
    decl = write_decl(tmp_path, body, endpoints=SME.format(models=model))  # something to upload
    (tmp_path / "no_class").mkdir()
    (tmp_path / "no_class" / "model.py").write_text("import numpy as np\n")
    (tmp_path / "junk.onnx").write_bytes(b"not a protobuf at all \xff\xfe")
    if code == "TensorNameMismatch":
        _good_onnx(tmp_path / "good.onnx")
    (tmp_path / "bad_pre").mkdir()
    (tmp_path / "bad_pre" / "model.py").write_text(
        "import numpy as np\nimport torch\n\nclass TritonPythonModel:\n"
        "    def execute(self, requests):\n        return []\n"
    )
    with pytest.raises(BuildError) as exc:
        run_build(decl, out_dir=tmp_path / "out", upload=True, progress=False, s3_client=NoS3())
    assert exc.value.code == code, str(exc.value)
    assert text in str(exc.value)
    _nothing_written(tmp_path / "out")


def _good_onnx(path: Path) -> None:
    import torch
    from tiny_models import tiny as make

    torch.onnx.export(
        make(),
        (torch.zeros(2, 4),),
        str(path),
        input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {0: "b"}, "y": {0: "b"}},
        dynamo=False,
        opset_version=18,
    )


def test_fails_upload_to_a_missing_bucket(tmp_path: Path, moto_s3: Any) -> None:
    decl = write_decl(
        tmp_path, tiny(), endpoints=SME.format(models="tiny"), location="s3://no-such-bucket/p/"
    )
    with pytest.raises(BuildError, match=r"upload to s3://no-such-bucket/ failed.*\[UploadFailed\]"):
        run_build(decl, out_dir=tmp_path / "out", upload=True, progress=False, s3_client=moto_s3)
    assert not (tmp_path / "out" / "manifest.json").exists()
    assert "no-such-bucket" not in {b["Name"] for b in moto_s3.list_buckets()["Buckets"]}


def test_fails_while_another_build_writes_to_the_same_out(tmp_path: Path) -> None:
    import fcntl

    decl = write_decl(tmp_path, tiny(), endpoints=SME.format(models="tiny"))
    out = tmp_path / "out"
    out.mkdir()
    with (out / ".lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(
            BuildError, match=r"another build is writing to .*use another --out \[BuildLocked\]"
        ):
            run_build(decl, out_dir=out, upload=True, progress=False, s3_client=NoS3())
    _nothing_written(out)


def test_every_code_raised_is_in_the_catalogue() -> None:
    """A static scan: no code in cdk_triton/builder or the declaration parser escapes the catalogues
    (the build's own and the config codes it surfaces; tests/unit/test_error_catalogues.py scans all)."""
    root = Path(__file__).resolve().parents[3] / "cdk_triton"
    raised: set[str] = set()
    files = [
        *(root / "builder").rglob("*.py"),
        *(root / "config" / "declaration").rglob("*.py"),
        root / "config" / "parse.py",
    ]
    assert len([f for f in files if "builder" in f.parts]) > 10, "the scan must see the build stage's modules"
    for f in files:
        text = f.read_text()
        raised |= set(re.findall(r'code="(\w+)"', text))
        raised |= set(re.findall(r'(?:TritonValidationError|errs\.add|problem)\(\s*"(\w+)"', text))
    catalogued = set(ALL_CODES) | set(SURFACED)
    assert raised and raised <= catalogued, sorted(raised - catalogued)


def test_catalogue_is_complete() -> None:
    assert len(ALL_CODES) >= 20
    tested = (
        set(DECLARATION_CASES)
        | set(RUNTIME_CASES)
        | {
            "UnknownTritonRelease",
            "PyTorchParameterTooNew",
            "InvalidS3Uri",
            "InvalidYaml",
            "DeclarationNotFound",
            "UnknownOnlyModel",
        }
        | {"BuildLocked"}
        | {"InvalidJobs", "InvalidShard"}  # test_parallel.py, test_shards.py
        | {"CriticalAdvisory", "UnknownAdvisory", "AdvisoryReasonMissing"}  # test_advisories.py
        | {"CopiesExceedInstances", "InvalidInstanceScaling"}  # test_build_rules_first.py
        | {"InvalidRequirement", "ContainerRequirement"}  # test_python_env.py
        | {"CallCycle", "BlsTensorMismatch", "BlsUndeclaredCall"}  # test_bls.py
        | {"InvalidAsyncInference"}  # tests/unit/config/test_async_inference.py (models.yaml async:)
        | {"InvalidInstancePools"}  # tests/unit/config/test_instance_pools.py (models.yaml instance_pools:)
    )
    # tested in test_steps.py (StateDictMismatch, OnnxIrVersionTooNew, Plan*, TensorRTBuildFailed for an
    # unknown precision; the builder returning no engine needs a GPU) or above (UploadFailed)
    others = {
        "StateDictMismatch",
        "OnnxIrVersionTooNew",
        "PlanArchitectureMismatch",
        "PlanProfileMismatch",
        "UploadFailed",
        "TensorRTBuildFailed",
        "ManifestMergeMismatch",  # test_merge.py
        "ManifestMergeConflict",
        "IncompleteShardSet",  # test_shard_set.py
        "NoSpaceLeft",  # test_hardening.py
        "ModelsFailed",  # test_parallel.py
        "WorkerDied",
        "NoCudaDevice",  # test_gpu_check.py (CUDA faked)
        "DeviceParityMismatch",
        "PythonEnvNoWheel",  # test_python_env.py
        "PythonEnvNumpy",
        "PythonEnvPythonMismatch",
        "PythonEnvTooLarge",
        "TargetRuntimeLoadFailed",  # test_target_runtime.py (the release's own runtime: marked target_runtime,
        "TargetRuntimeMismatch",  # and with a probe result faked)
    }  # tested in the unit files of their steps (or GPU only)
    # the inference-component rules of the declaration: tests/unit/config/test_components.py
    tested |= {
        code
        for code in SURFACED
        if code in (Path(__file__).parents[1] / "config" / "test_components.py").read_text()
    }
    assert set(VALIDATION_ERRORS) | set(SURFACED) <= tested
    assert set(BUILD_ERRORS) <= tested | others
