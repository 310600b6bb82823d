"""Deprecated module path: ``cdk_triton.constructs.components`` is now ``cdk_triton.constructs.components_endpoint`` (the components endpoint's module says what it holds).

Importing it warns (``DeprecationWarning``) and gives the same objects; it goes away in 0.4.0.
"""

from __future__ import annotations

import warnings

from cdk_triton._deprecation import message
from cdk_triton.constructs.components_endpoint import (
    ROUTING_STRATEGIES,
    ComponentOptions,
    TritonComponentsEndpoint,
    TritonInferenceComponent,
)

__all__ = [
    "ROUTING_STRATEGIES",
    "ComponentOptions",
    "TritonComponentsEndpoint",
    "TritonInferenceComponent",
]

warnings.warn(
    message("cdk_triton.constructs.components", "cdk_triton.constructs.components_endpoint", "0.3.0"),
    DeprecationWarning,
    stacklevel=2,
)
