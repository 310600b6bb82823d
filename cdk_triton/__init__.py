"""cdk-triton: NVIDIA Triton Inference Server on Amazon SageMaker, from PyTorch model to endpoint.

Importing this package is light: it pulls neither torch, protobuf nor tritonclient, and its public
names load on first use (PEP 562), so ``cdk-triton build``'s no-op stamp check starts no dataclass
modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdk_triton._lazy import lazy_exports

if TYPE_CHECKING:
    from cdk_triton.config.manifest import ArtifactLocation, Manifest, read_manifest
    from cdk_triton.config.server_options import InferenceType, PingMode, ServerOptions
    from cdk_triton.config.tables import DEFAULT_TRITON_VERSION
    from cdk_triton.errors import BuildError, CdkTritonError, TritonValidationError

__version__ = "0.2.0"

#: public name -> the module defining it (imported on first access)
_LAZY = {
    "ArtifactLocation": "cdk_triton.config.manifest",
    "Manifest": "cdk_triton.config.manifest",
    "read_manifest": "cdk_triton.config.manifest",
    "InferenceType": "cdk_triton.config.server_options",
    "PingMode": "cdk_triton.config.server_options",
    "ServerOptions": "cdk_triton.config.server_options",
    "DEFAULT_TRITON_VERSION": "cdk_triton.config.tables",
    "BuildError": "cdk_triton.errors",
    "CdkTritonError": "cdk_triton.errors",
    "TritonValidationError": "cdk_triton.errors",
}

__all__ = [
    "DEFAULT_TRITON_VERSION",
    "ArtifactLocation",
    "BuildError",
    "CdkTritonError",
    "InferenceType",
    "Manifest",
    "PingMode",
    "ServerOptions",
    "TritonValidationError",
    "read_manifest",
]


__getattr__ = lazy_exports(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
