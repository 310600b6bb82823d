"""The build stage: PyTorch models to verified Triton model repositories, S3 artifacts and a manifest.

Side effects live here (export, package, upload). torch, onnx, tensorrt, numpy and protobuf are
imported inside the steps that use them only, so importing this package (or a build that has nothing
to export) stays light. Entry point: :func:`run_build` (the ``cdk-triton build`` command calls it).
The public names load on first use (PEP 562): ``cdk-triton build``'s no-op stamp check
(:mod:`cdk_triton.builder.stamp`) imports none of the build's modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdk_triton._lazy import lazy_exports

if TYPE_CHECKING:
    from cdk_triton.builder.declarations import load_declaration, load_spec
    from cdk_triton.builder.steps import BuildResult, run_build

_LAZY = {
    "load_declaration": "cdk_triton.builder.declarations",
    "load_spec": "cdk_triton.builder.declarations",  # deprecated: load_declaration
    "BuildResult": "cdk_triton.builder.steps",
    "run_build": "cdk_triton.builder.steps",
}

__all__ = ["BuildResult", "load_declaration", "load_spec", "run_build"]


__getattr__ = lazy_exports(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
