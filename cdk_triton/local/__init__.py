"""The local endpoint: built repositories served by the real Triton server on CPU.

``LocalEndpoint`` runs ``tritonserver`` (from nvidia-pytriton) the way the SageMaker container's
``serve`` script does, in a private network namespace, behind a SageMaker Runtime front on
127.0.0.1 that boto3 can call. ``invoke_sample`` sends a manifest's sample and checks the answer.
Each name below is imported on first use (PEP 562): importing the package (or ``local.commands``,
to register ``serve`` / ``invoke`` / ``stop`` / ``bench``) pulls neither numpy nor aiohttp, and using
it pulls neither torch nor tritonclient; the backends and payload helpers import them when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdk_triton._lazy import lazy_exports

if TYPE_CHECKING:
    from cdk_triton.local.client import (
        InvokeResult,
        build_request,
        invoke_sample,
        invoke_tensors,
        parse_response,
    )
    from cdk_triton.local.components import ComponentsEndpoint
    from cdk_triton.local.endpoint import LocalEndpoint
    from cdk_triton.local.errors import LocalServerError
    from cdk_triton.local.front import RuntimeFront
    from cdk_triton.local.overlay import CpuOverlay, OverlayChange

#: public name -> the module that defines it
_WHERE = {
    "ComponentsEndpoint": "components",
    "CpuOverlay": "overlay",
    "InvokeResult": "client",
    "LocalEndpoint": "endpoint",
    "LocalServerError": "errors",
    "OverlayChange": "overlay",
    "RuntimeFront": "front",
    "build_request": "client",
    "invoke_sample": "client",
    "invoke_tensors": "client",
    "parse_response": "client",
}

__all__ = [
    "ComponentsEndpoint",
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


__getattr__ = lazy_exports(__name__, _WHERE)
