"""The hosting modes: one row per mode (``table.HostingMode``), one module per mode.

``from cdk_triton.config import modes``; ``modes.get("MultiModel")``, ``modes.of(entry)``. Adding a mode
is its module here (a row passed to ``register``) and its import line below.
"""

from __future__ import annotations

from cdk_triton.config.modes.table import (
    FEATURES,
    FIELDS,
    MODES,
    REQUIRED,
    ROUTE_COMPONENT,
    ROUTE_DEFAULT_MODEL,
    ROUTE_TARGET_MODEL,
    ROUTES,
    HostingMode,
    Refusal,
    from_abbreviation,
    get,
    listed,
    lookup,
    names,
    only,
    readme_table,
    register,
    registered,
    resolve,
    spoken,
    unregister,
    where,
)

# one line per mode, in the order they are listed
from cdk_triton.config.modes.single_model import SINGLE_MODEL  # isort: skip
from cdk_triton.config.modes.multi_model import MULTI_MODEL  # isort: skip
from cdk_triton.config.modes.inference_components import INFERENCE_COMPONENTS  # isort: skip

__all__ = [
    "FEATURES",
    "FIELDS",
    "INFERENCE_COMPONENTS",
    "MODES",
    "MULTI_MODEL",
    "REQUIRED",
    "ROUTES",
    "ROUTE_COMPONENT",
    "ROUTE_DEFAULT_MODEL",
    "ROUTE_TARGET_MODEL",
    "SINGLE_MODEL",
    "HostingMode",
    "Refusal",
    "from_abbreviation",
    "get",
    "listed",
    "lookup",
    "names",
    "only",
    "readme_table",
    "register",
    "registered",
    "resolve",
    "spoken",
    "unregister",
    "where",
]
