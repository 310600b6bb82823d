"""The declaration's vocabulary: the words a ``models.yaml`` may use for dtypes, sources and options
(formats: ``cdk_triton.config.formats``)."""

from __future__ import annotations

#: Triton data types (model_config.proto TYPE_<x>) the build accepts, with their numpy names.
DTYPES: dict[str, str] = {
    "BOOL": "bool",
    "UINT8": "uint8",
    "UINT16": "uint16",
    "UINT32": "uint32",
    "UINT64": "uint64",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "FP16": "float16",
    "FP32": "float32",
    "FP64": "float64",
    "BF16": "bfloat16",
    "STRING": "object",
}
#: The kinds of model source, in the order ``ModelSource.kind`` looks for them (the formats, and the
#: source kinds each accepts, are rows of ``cdk_triton.config.formats``).
SOURCE_KINDS = ("factory", "torchscript", "onnx", "python")
PACKAGINGS = ("directory", "tar.gz")
INSTANCE_KINDS = ("KIND_GPU", "KIND_CPU", "KIND_AUTO", "KIND_MODEL")
PRECISIONS = ("fp32", "tf32", "fp16", "int8")
#: Precisions of ONNX Runtime's TensorRT execution accelerator.
ACCELERATOR_PRECISIONS = ("fp32", "fp16")
WARMUP_DATA = ("zero", "random")
TORCHSCRIPT_MODES = ("trace", "script")
ONNX_EXPORTERS = ("dynamo", "torchscript")
#: PyTorch backend parameters of the newest releases (triton-inference-server/pytorch_backend README 'Parameters'; DISABLE_CUDNN from 24.06); values are the strings "true"/"false" or counts.
PYTORCH_PARAMETERS = (
    "DISABLE_OPTIMIZED_EXECUTION",
    "INFERENCE_MODE",
    "ENABLE_WEIGHT_SHARING",
    "ENABLE_CACHE_CLEANING",
    "ENABLE_JIT_EXECUTOR",
    "ENABLE_JIT_PROFILING",
    "ENABLE_TENSOR_FUSER",
    "INTER_OP_THREAD_COUNT",
    "INTRA_OP_THREAD_COUNT",
    "DISABLE_CUDNN",
)
#: Removed parameters -> the last release that read them (tables.pytorch_parameters() has every
#: parameter's release range; the declaration checks the target release against it).
PYTORCH_REMOVED_PARAMETERS = {"ENABLE_NVFUSER": "23.11"}
