"""Deprecated module path: ``cdk_triton.constructs.modes.registry`` is now ``cdk_triton.constructs.modes.table`` (the mode table: 'registry' names the SageMaker Model Registry only).

Importing it warns (``DeprecationWarning``) and gives the same objects; it goes away in 0.4.0.
"""

from __future__ import annotations

import warnings

from cdk_triton._deprecation import message
from cdk_triton.constructs.modes.table import (
    BEHAVIOURS,
    UNKNOWN,
    AlarmOptions,
    Alarms,
    Common,
    Dashboard,
    Endpoint,
    ModeConstructs,
    ScalingTarget,
    Widget,
    async_graphs,
    behaviour,
    define_async_alarms,
    of_endpoint,
    rate_metrics,
    register,
    unregister,
)

__all__ = [
    "BEHAVIOURS",
    "UNKNOWN",
    "AlarmOptions",
    "Alarms",
    "Common",
    "Dashboard",
    "Endpoint",
    "ModeConstructs",
    "ScalingTarget",
    "Widget",
    "async_graphs",
    "behaviour",
    "define_async_alarms",
    "of_endpoint",
    "rate_metrics",
    "register",
    "unregister",
]

warnings.warn(
    message("cdk_triton.constructs.modes.registry", "cdk_triton.constructs.modes.table", "0.3.0"),
    DeprecationWarning,
    stacklevel=2,
)
