"""``cdk-triton capacity``: how many instances keep which models of a multi-model endpoint warm, at what cost.

From the manifest's per-model memory, the instance type's GPU and host memory and optional traffic per
model: models resident per instance, instances to keep every model warm or to reach a cache-hit ratio,
the cost of a miss (a local cold load, a CPU proxy), the cost per hour, and per model a recommendation:
an inference component (hot) or the MME (the long tail). See README.md in this folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdk_triton._lazy import lazy_exports

if TYPE_CHECKING:
    from cdk_triton.capacity.estimate import CapacityReport, Options, build_report
    from cdk_triton.capacity.recommend import Advice

#: public name -> the module defining it (imported on first use: the package stays light)
_LAZY = {
    "CapacityReport": "cdk_triton.capacity.estimate",
    "Options": "cdk_triton.capacity.estimate",
    "build_report": "cdk_triton.capacity.estimate",
    "Advice": "cdk_triton.capacity.recommend",
}

__all__ = ["Advice", "CapacityReport", "Options", "build_report"]


__getattr__ = lazy_exports(__name__, _LAZY)
