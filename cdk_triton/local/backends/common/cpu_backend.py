"""Shared pieces of the CPU python-based backends (copied beside each backend's ``model.py``).

Runs inside Triton's python backend stub: it may import numpy and ``triton_python_backend_utils``
only at call time. Error texts copy the real backends' (triton-inference-server/backend
``CompareDimsSupported``, onnxruntime_backend ``ValidateInputs``) so a config that fails on
SageMaker fails here with the same words.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

# Kept here rather than imported from cdk_triton.config.declaration: this file runs inside Triton's python
# backend stub as a self-contained backend, with no dependency on the cdk_triton package.
CONFIG_TO_NUMPY: dict[str, Any] = {
    "TYPE_BOOL": np.bool_,
    "TYPE_UINT8": np.uint8,
    "TYPE_UINT16": np.uint16,
    "TYPE_UINT32": np.uint32,
    "TYPE_UINT64": np.uint64,
    "TYPE_INT8": np.int8,
    "TYPE_INT16": np.int16,
    "TYPE_INT32": np.int32,
    "TYPE_INT64": np.int64,
    "TYPE_FP16": np.float16,
    "TYPE_FP32": np.float32,
    "TYPE_FP64": np.float64,
    "TYPE_STRING": np.object_,
}
NUMPY_TO_CONFIG = {np.dtype(v).name: k for k, v in CONFIG_TO_NUMPY.items() if v is not np.object_}


def server_type(config_type: str) -> str:
    """``TRITONSERVER_DataTypeString`` of a config data type: ``TYPE_FP32`` -> ``FP32``, ``TYPE_STRING`` -> ``BYTES``."""
    return "BYTES" if config_type == "TYPE_STRING" else config_type.removeprefix("TYPE_")


def shape_str(shape: list[int] | tuple[int, ...]) -> str:
    """Triton's ``ShapeToString``: ``[-1,3,32,32]``."""
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def config_dims(io: dict[str, Any]) -> list[int]:
    return [int(d) for d in io.get("dims", [])]


def _match(model_dim: int, config_dim: int) -> bool:
    return model_dim == -1 or config_dim == -1 or model_dim == config_dim


def compare_dims(
    model_name: str, tensor: str, model_shape: list[int], dims: list[int], max_batch_size: int
) -> str | None:
    """The backend library's ``CompareDimsSupported`` (None when the config agrees with the model)."""
    if max_batch_size > 0:
        if not model_shape or model_shape[0] != -1:
            return (
                f"model '{model_name}', tensor '{tensor}': for the model to support batching the shape "
                "should have at least 1 dimension and the first dimension must be -1; but shape expected "
                f"by the model is {shape_str(model_shape)}"
            )
        full = [max_batch_size, *dims]
        ok = len(model_shape) == len(full) and all(
            _match(m, c) for i, (m, c) in enumerate(zip(model_shape, full, strict=True)) if i != 0
        )
        if not ok:
            return (
                f"model '{model_name}', tensor '{tensor}': the model expects {len(model_shape)} dimensions "
                f"(shape {shape_str(model_shape)}) but the model configuration specifies {len(full)} "
                "dimensions (an initial batch dimension because max_batch_size > 0 followed by the explicit "
                f"tensor shape, making complete shape {shape_str(full)})"
            )
        return None
    ok = len(model_shape) == len(dims) and all(_match(m, c) for m, c in zip(model_shape, dims, strict=True))
    if not ok:
        return (
            f"model '{model_name}', tensor '{tensor}': the model expects {len(model_shape)} dimensions "
            f"(shape {shape_str(model_shape)}) but the model configuration specifies {len(dims)} dimensions "
            f"(shape {shape_str(dims)})"
        )
    return None


def thread_parameter(config: dict[str, Any], *keys: str) -> int | None:
    """An integer model parameter (``parameters { key: "x" value { string_value: "1" } }``)."""
    params = config.get("parameters") or {}
    for key in keys:
        entry = params.get(key)
        if entry is not None:
            value = entry.get("string_value") if isinstance(entry, dict) else entry
            if value not in (None, ""):
                return int(value)
    return None


def model_file(args: dict[str, Any], config: dict[str, Any], default: str) -> str:
    name = config.get("default_model_filename") or default
    return os.path.join(args["model_repository"], str(args["model_version"]), name)


class BatchingModel:
    """Concatenates every request of one ``execute()`` call along the batch dimension, runs once, splits."""

    def initialize(self, args: dict[str, Any]) -> None:  # pragma: no cover - overridden
        self.config = json.loads(args["model_config"])
        self.name = self.config["name"]
        self.max_batch_size = int(self.config.get("max_batch_size", 0))
        self.inputs = [
            (io["name"], CONFIG_TO_NUMPY.get(io["data_type"])) for io in self.config.get("input", [])
        ]
        self.outputs = [
            (io["name"], CONFIG_TO_NUMPY.get(io["data_type"])) for io in self.config.get("output", [])
        ]

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:  # pragma: no cover - overridden
        raise NotImplementedError

    def execute(self, requests: list[Any]) -> list[Any]:
        import triton_python_backend_utils as pb_utils

        responses: list[Any] = [None] * len(requests)
        gathered: list[tuple[int, dict[str, np.ndarray]]] = []
        for i, request in enumerate(requests):
            feeds = {}
            for name, dtype in self.inputs:
                tensor = pb_utils.get_input_tensor_by_name(request, name)
                if tensor is None:
                    continue  # optional input
                array = tensor.as_numpy()
                if dtype is not None and dtype is not np.object_ and array.dtype != dtype:
                    array = array.astype(dtype)
                feeds[name] = array
            gathered.append((i, feeds))
        try:
            if self.max_batch_size > 0 and len(gathered) > 1 and self._same_inner_shapes(gathered):
                sizes = [next(iter(f.values())).shape[0] for _, f in gathered]
                merged = {k: np.concatenate([f[k] for _, f in gathered], axis=0) for k in gathered[0][1]}
                outs = self.run(merged)
                offsets = np.cumsum([0, *sizes])
                for j, (i, _) in enumerate(gathered):
                    part = {k: v[offsets[j] : offsets[j + 1]] for k, v in outs.items()}
                    responses[i] = self._response(pb_utils, part)
            else:
                for i, feeds in gathered:
                    responses[i] = self._response(pb_utils, self.run(feeds))
        except Exception as exc:  # every request of the batch gets the error
            for i, _ in gathered:
                if responses[i] is None:
                    responses[i] = pb_utils.InferenceResponse(
                        output_tensors=[], error=pb_utils.TritonError(f"{type(exc).__name__}: {exc}")
                    )
        return responses

    @staticmethod
    def _same_inner_shapes(gathered: list[tuple[int, dict[str, np.ndarray]]]) -> bool:
        first = gathered[0][1]
        return all(
            set(f) == set(first) and all(f[k].shape[1:] == first[k].shape[1:] for k in first)
            for _, f in gathered
        )

    def _response(self, pb_utils: Any, outs: dict[str, np.ndarray]) -> Any:
        tensors = []
        for name, dtype in self.outputs:
            array = outs[name]
            if dtype is not None and dtype is not np.object_ and array.dtype != dtype:
                array = array.astype(dtype)
            tensors.append(pb_utils.Tensor(name, np.ascontiguousarray(array)))
        return pb_utils.InferenceResponse(output_tensors=tensors)
