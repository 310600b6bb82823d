"""cdk-triton: NVIDIA Triton Inference Server on Amazon SageMaker, from PyTorch model to endpoint.

Importing this package is light: it pulls neither torch, protobuf nor tritonclient.
"""

from cdk_triton.config.manifest import ArtifactLocation, Manifest, read_manifest
from cdk_triton.config.server_options import InferenceType, PingMode, ServerOptions
from cdk_triton.config.tables import DEFAULT_TRITON_VERSION
from cdk_triton.errors import BuildError, CdkTritonError, TritonValidationError

__version__ = "0.1.0"

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
