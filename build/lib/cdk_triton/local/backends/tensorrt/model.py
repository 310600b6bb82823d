"""Stand-in for Triton's TensorRT backend on a CPU-only machine: it refuses every plan, clearly.

A TensorRT plan only runs on an NVIDIA GPU of the architecture it was built for, with the TensorRT
version it was built with; nothing on a CPU can execute it.
"""

from __future__ import annotations

import json
from typing import Any


class TritonPythonModel:
    """Fails the load of every ``platform: "tensorrt_plan"`` model with a message naming the GPU need."""

    def initialize(self, args: dict[str, Any]) -> None:
        config = json.loads(args["model_config"])
        raise RuntimeError(
            f"model '{config.get('name')}' is a TensorRT plan (platform tensorrt_plan): TensorRT plans need an "
            "NVIDIA GPU of the architecture they were built for and cannot run on this CPU-only local endpoint. "
            "Test the ONNX or TorchScript export of the same model locally, and the plan on a GPU instance "
            "[TensorRtNeedsGpu]"
        )

    def execute(self, requests: list[Any]) -> list[Any]:  # pragma: no cover - never loaded
        raise RuntimeError("TensorRT plans need a GPU")
