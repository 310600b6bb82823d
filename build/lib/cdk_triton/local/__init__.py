"""The local endpoint: built repositories served by the real Triton server on CPU.

``LocalEndpoint`` runs ``tritonserver`` (from nvidia-pytriton) the way the SageMaker container's
``serve`` script does, in a private network namespace, behind a SageMaker Runtime front on
127.0.0.1 that boto3 can call. ``invoke_sample`` sends a manifest's sample and checks the answer.
Importing this package pulls neither torch nor tritonclient; the backends and payload helpers
import them when used.
"""

from cdk_triton.local.client import InvokeResult, build_request, invoke_sample, invoke_tensors, parse_response
from cdk_triton.local.endpoint import LocalEndpoint
from cdk_triton.local.errors import LocalServerError
from cdk_triton.local.front import RuntimeFront
from cdk_triton.local.overlay import CpuOverlay, OverlayChange

__all__ = [
    "CpuOverlay",
    "InvokeResult",
    "LocalEndpoint",
    "LocalServerError",
    "OverlayChange",
    "RuntimeFront",
    "build_request",
    "invoke_sample",
    "invoke_tensors",
    "parse_response",
]
