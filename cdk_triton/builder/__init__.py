"""The build stage: PyTorch models to verified Triton model repositories, S3 artifacts and a manifest.

Side effects live here (export, package, upload). torch, onnx, tensorrt, numpy and protobuf are
imported inside the steps that use them only, so importing this package (or a build that has nothing
to export) stays light. Entry point: :func:`run_build` (the ``cdk-triton build`` command calls it).
"""

from __future__ import annotations

from cdk_triton.builder.declarations import load_spec
from cdk_triton.builder.steps import BuildResult, run_build

__all__ = ["BuildResult", "load_spec", "run_build"]
