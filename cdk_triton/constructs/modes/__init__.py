"""The construct side of the hosting modes: one module per mode (its dashboard graphs, alarms, scaling,
variant checks and deploy verification), registered by the name of its ``config.modes`` row.

``from cdk_triton.constructs import modes``; ``modes.behaviour(row)``. Adding a mode is its row
(``cdk_triton/config/modes/<mode>.py`` and its import line there), its module here (a subclass of
:class:`Common` passed to ``register``) and its import line below.
"""

from __future__ import annotations

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
    behaviour,
    of_endpoint,
    rate_metrics,
    register,
    unregister,
)

# one line per mode, in the order config.modes lists them
from cdk_triton.constructs.modes.single_model import SINGLE_MODEL  # isort: skip
from cdk_triton.constructs.modes.multi_model import MULTI_MODEL  # isort: skip
from cdk_triton.constructs.modes.inference_components import INFERENCE_COMPONENTS  # isort: skip

__all__ = [
    "BEHAVIOURS",
    "INFERENCE_COMPONENTS",
    "MULTI_MODEL",
    "SINGLE_MODEL",
    "UNKNOWN",
    "AlarmOptions",
    "Alarms",
    "Common",
    "Dashboard",
    "Endpoint",
    "ModeConstructs",
    "ScalingTarget",
    "behaviour",
    "of_endpoint",
    "rate_metrics",
    "register",
    "unregister",
]
