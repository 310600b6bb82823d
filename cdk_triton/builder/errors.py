"""The catalogue of build-stage error codes.

Declaration problems raise :class:`~cdk_triton.errors.TritonValidationError` (exit code 2) before
anything is written; failures while building raise :class:`~cdk_triton.errors.BuildError` (exit
code 1) with one of the runtime codes below. Every code is tested in
``tests/unit/builder/test_errors_catalogue.py``.
"""

from __future__ import annotations

#: Declaration errors (TritonValidationError): code -> what it means.
DECLARATION_ERRORS: dict[str, str] = {
    "InvalidYaml": "the declaration file is not valid YAML",
    "DeclarationNotFound": "the declaration file does not exist",
    "UnknownKey": "a key the declaration does not know (the message names the closest valid key)",
    "InvalidType": "a value of the wrong type",
    "MissingField": "a required field is missing",
    "UnknownDtype": "a data type Triton does not have",
    "InvalidShape": "a shape that is not a list of positive dims (-1 = dynamic)",
    "UnknownFormat": "a model format the registry (config/formats.py) does not list",
    "InvalidSource": "a source naming zero or several kinds",
    "SourceFormatMismatch": "a source that cannot produce the declared format",
    "SourceNotFound": "a source or state_dict path that does not exist",
    "InvalidFactoryReference": "a factory that is not 'module:callable'",
    "MissingSeed": "a factory without a seed",
    "InvalidMaxBatchSize": "a negative max_batch_size, batching options without batching, or an ensemble "
    "batching more than a step",
    "PreferredBatchTooLarge": "a preferred/opt batch size above max_batch_size",
    "InvalidModelName": "a model name that is not a valid directory name",
    "DuplicateModelName": "two models with the same name",
    "DuplicateTensorName": "two inputs or outputs with the same name",
    "DuplicateModelInEndpoint": "a model name in two archives of one multi-model endpoint",
    "DuplicateEndpointName": "two endpoints with the same name",
    "UnknownModelReference": "an ensemble step or endpoint naming an undeclared model",
    "EnsembleCycle": "an ensemble that contains itself",
    "InvalidEnsembleMap": "an ensemble input/output map naming unknown tensors",
    "UnknownEndpointMode": "a mode other than SingleModel or MultiModel",
    "MissingDefaultModel": "a single-model endpoint with several models and no default_model",
    "InvalidPackaging": "a packaging other than directory or tar.gz",
    "InvalidInstanceType": "an instance type without the ml. prefix",
    "InvalidInstanceGroup": "an instance group kind or count Triton does not accept",
    "InvalidWarmup": "a warmup data kind other than zero or random",
    "InvalidOption": "an option that does not apply to the model's format",
    "UnknownPrecision": "a TensorRT precision other than fp32, tf32, fp16, int8",
    "UnknownPyTorchParameter": "a PyTorch backend parameter that does not exist",
    "RemovedPyTorchParameter": "a PyTorch parameter the target release no longer reads (ENABLE_NVFUSER after 23.11)",
    "PyTorchParameterTooNew": "a PyTorch parameter first read by a newer release than the target (DISABLE_CUDNN before 24.06)",
    "GpuInstanceGroupOnCpuInstance": "a KIND_GPU instance group on an endpoint whose instance type has no NVIDIA GPU",
    "GpuIndexOutOfRange": "an instance group GPU index the endpoint's instance type does not have",
    "UnknownTritonRelease": "a triton_version not in the release table",
    "InvalidS3Uri": "an artifact location that is not s3://bucket/prefix",
    "UnknownOnlyModel": "--only naming a model or endpoint that is not declared",
    "InvalidShapeRange": "a shape_range whose min/opt/max lists do not fit the shape or are not ordered",
    "MissingShapeRange": "a TensorRT model input with a dynamic dim and no shape_range",
    "InvalidSequenceBatching": "sequence_batching with dynamic_batching, on an ensemble, implicit state on a "
    "python model, a control tensor that is a declared input, an unknown strategy or correlation id type",
    "SequenceBatchingInstances": "a sequence-batched model on an endpoint whose requests may reach several "
    "instances (multi-model endpoints)",
}

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
    "TensorRTUnavailable": "a TensorRT plan was requested without a CUDA GPU or the tensorrt package",
    "TensorRTBuildFailed": "the TensorRT builder returned no engine",
    "PlanArchitectureMismatch": "a TensorRT plan built for another GPU architecture than the instance type's",
    "PlanProfileMismatch": "a prebuilt TensorRT plan whose profile does not reach max_batch_size",
    "ParityMismatch": "the exported artifact's outputs differ from the eager model beyond the tolerance",
    "SequenceBatchingUnsupported": "a sequence-batched model of another format than python (not built yet)",
    "UploadFailed": "an S3 upload or copy failed",
    "BuildLocked": "another build is writing to the same output directory",
    "ManifestMergeMismatch": "--merge-manifest names a manifest of another triton_version or artifact_location",
    "NoSpaceLeft": "the disk filled up while writing (the message names the path, the size and the space left)",
    "ManifestMergeConflict": "an entry both this build and --merge-manifest have, with different contents",
}

ALL_CODES: dict[str, str] = {**DECLARATION_ERRORS, **BUILD_ERRORS}
