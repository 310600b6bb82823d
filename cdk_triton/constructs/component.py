"""Deprecated module path: ``cdk_triton.constructs.component`` is now ``cdk_triton.constructs.inference_component`` (the one-component construct's module says what it holds).

Importing it warns (``DeprecationWarning``) and gives the same objects; it goes away in 0.4.0.
"""

from __future__ import annotations

import warnings

from cdk_triton._deprecation import message
from cdk_triton.constructs.inference_component import (
    ComponentOptions,
    TritonInferenceComponent,
)

__all__ = [
    "ComponentOptions",
    "TritonInferenceComponent",
]

warnings.warn(
    message("cdk_triton.constructs.component", "cdk_triton.constructs.inference_component", "0.3.0"),
    DeprecationWarning,
    stacklevel=2,
)
