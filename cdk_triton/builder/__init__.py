"""The build stage: PyTorch models to verified Triton model repositories, S3 artifacts and a manifest.

Side effects live here (export, package, upload). torch, onnx and tensorrt are imported inside the
steps only. Entry point: :func:`run_build` (the ``cdk-triton build`` command calls it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cdk_triton.builder.pipeline import BuildResult

__all__ = ["BuildResult", "load_spec", "run_build"]


def run_build(config_path: Any, **kwargs: Any) -> BuildResult:
    """Build the declared models and endpoints; see :func:`cdk_triton.builder.pipeline.run_build`."""
    from cdk_triton.builder.pipeline import run_build as _run

    return _run(config_path, **kwargs)


def load_spec(config_path: Any, **kwargs: Any) -> Any:
    """Parse and validate a models.yaml; see :func:`cdk_triton.builder.declarations.load_spec`."""
    from cdk_triton.builder.declarations import load_spec as _load

    return _load(config_path, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "BuildResult":
        from cdk_triton.builder.pipeline import BuildResult

        return BuildResult
    raise AttributeError(name)
