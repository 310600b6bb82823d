"""The catalogue of build-stage error codes.

Declaration problems raise :class:`~cdk_triton.errors.TritonValidationError` (exit code 2) before
anything is written, with a code of ``cdk_triton.config.errors`` (:data:`SURFACED`) or one of
:data:`VALIDATION_ERRORS`; failures while building raise :class:`~cdk_triton.errors.BuildError` (exit
code 1) with one of the runtime codes below. Every code is tested in
``tests/unit/builder/test_errors_catalogue.py``.
"""

from __future__ import annotations

from cdk_triton.config.errors import (
    BUILD_AND_SYNTH_RULE_ERRORS,
    DECLARATION_ERRORS,
    DECLARATION_FILE_ERRORS,
    pick,
)

#: Validation errors the build stage raises itself (TritonValidationError): code -> what it means.
VALIDATION_ERRORS: dict[str, str] = {
    "UnknownOnlyModel": "--only naming a model or endpoint that is not declared",
    "InvalidJobs": "--jobs that is neither auto nor a positive integer",
    "InvalidShard": "--shard that is not I/N with 0 <= I < N, an N above the declaration's shard groups, or --shard/--list-shards with --only or --merge-manifest",
}

#: The declaration's codes (``cdk_triton.config.errors``) a build reports: reading models.yaml and
#: running its rules happens before anything is written.
SURFACED: dict[str, str] = pick(
    [
        *DECLARATION_FILE_ERRORS,
        *DECLARATION_ERRORS,
        *BUILD_AND_SYNTH_RULE_ERRORS,
        "InvalidAsyncInference",  # an endpoint's async: block (config.async_inference), also at synth
        "InvalidInstancePools",  # an endpoint's instance_pools: (config.instance_pools), also at synth
    ]
)

#: Runtime errors (BuildError): code -> what it means.
BUILD_ERRORS: dict[str, str] = {
    "FactoryNotFound": "the factory's module or callable cannot be imported",
    "FactoryRaised": "the factory raised an exception",
    "FactoryNotModule": "the factory returned something other than a torch.nn.Module",
    "StateDictMismatch": "the state_dict file does not fit the factory's module",
    "NonDeterministicOutput": "the eager model gives different outputs for the same input",
    "NoBatchDim": "max_batch_size > 0 but the model's outputs have no batch dim",
    "EagerRunFailed": "the eager model fails on the declared sample input",
    "ShapeMismatch": "the exported artifact's dims disagree with the declaration",
    "DtypeMismatch": "the exported artifact's data types disagree with the declaration",
    "TensorCountMismatch": "the artifact has a different number of inputs or outputs than declared",
    "TensorNameMismatch": "the artifact's tensor names differ from the declaration",
    "ExportFailed": "torch.jit / torch.onnx export raised",
    "OnnxOpsetTooNew": "the ONNX opset is newer than the target's ONNX Runtime supports",
    "OnnxIrVersionTooNew": "the ONNX IR version is newer than the target's ONNX Runtime loads",
    "OnnxInvalid": "the ONNX file fails onnx.checker",
    "PythonModelImport": "a python model imports a module the Triton image does not have (torch, PIL, ...)",
    "PythonModelInvalid": "a python model has no TritonPythonModel.execute or fails on the sample",
    "PythonEnvNoWheel": "a python model's requirement (or a dependency) has no wheel for the target container "
    "(wheels only: sdists are never built)",
    "PythonEnvPythonMismatch": "a python model's requirement does not support the target container's Python, or "
    "the release table has no Python for the target",
    "PythonEnvNumpy": "a python model's requirements need a numpy other than the container's (numpy<2)",
    "PythonEnvTooLarge": "a python model's packed environment is larger than the endpoint's volume can hold",
    "BlsUndeclaredCall": "a python model's code calls a model (InferenceRequest(model_name=...)) not in its calls",
    "BlsTensorMismatch": "a python model's call names an input or requested output its callee does not have",
    "TensorRTUnavailable": "a TensorRT plan was requested without a CUDA GPU or the tensorrt package",
    "TensorRTBuildFailed": "the TensorRT builder returned no engine",
    "PlanArchitectureMismatch": "a TensorRT plan built for another GPU architecture than the instance type's",
    "PlanProfileMismatch": "a prebuilt TensorRT plan whose profile does not reach max_batch_size",
    "TargetRuntimeLoadFailed": "a TorchScript / ONNX artifact fails to load or run in the declared release's own "
    "libtorch / ONNX Runtime (the release-runtime check; the message names the operator, e.g. aten::hash_tensor)",
    "TargetRuntimeMismatch": "an artifact's outputs in the release's own runtime differ from the expected sample "
    "response beyond parity's tolerance",
    "ParityMismatch": "the exported artifact's outputs differ from the eager model beyond the tolerance",
    "NoCudaDevice": "cdk-triton gpu-check on a machine where torch sees no CUDA device (or a CPU build of torch)",
    "DeviceParityMismatch": "a GPU-placed model's artifact on CUDA differs from eager beyond the precision's tolerance",
    "DevicePinnedExport": "a GPU-placed model's TorchScript graph names a concrete device (cpu, cuda:N) a trace baked in",
    "SequenceBatchingUnsupported": "a sequence-batched model of another format than python (not built yet)",
    "UploadFailed": "an S3 upload or copy failed",
    "BuildLocked": "another build is writing to the same output directory",
    "ManifestMergeMismatch": "--merge-manifest names a manifest of another triton_version or artifact_location",
    "NoSpaceLeft": "the disk filled up while writing (the message names the path, the size and the space left)",
    "IncompleteShardSet": "--merge-manifest of shard manifests that miss a shard of the plan (or hold plans of different N), or a declared model in no merged manifest (without --build-missing)",
    "ManifestMergeConflict": "an entry both this build and --merge-manifest have, with different contents",
    "ModelsFailed": "several models failed (each is listed with its own error), or a model whose step failed",
    "WorkerDied": "a --jobs worker process died while exporting a model (killed for memory?)",
}

#: Warning codes (the build goes on; the code ends the warning's text): code -> what it means.
WARNING_CODES: dict[str, str] = {
    "PythonDevicePinned": "a GPU-placed python model's code names a device (torch.device('cuda'), .to('cpu'), .cuda())",
}

#: The codes the build stage owns.
ALL_CODES: dict[str, str] = {**VALIDATION_ERRORS, **BUILD_ERRORS}
