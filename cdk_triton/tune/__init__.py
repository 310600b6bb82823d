"""``cdk-triton tune``: a configuration sweep measured where it will serve, ranked by one objective.

Modules: ``request`` (``TuneRequest``: what a run is asked to do, checked), ``run`` (``run_tune``:
budget, repeats, progress), ``variants`` (what is compared), ``objective`` (the ranking), ``sources``
(local endpoint or a SageMaker tuning endpoint), ``report`` (table, CSV, JSON, plots), ``apply``
(comment-preserving write-back to models.yaml), ``prices`` (vendored price table), ``commands``
(``cdk-triton tune``: parse, call, print). See README.md.
Importing this package is light; the build stage, the local endpoint, matplotlib and ruamel.yaml
load only when a tuning run needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdk_triton._lazy import lazy_exports

if TYPE_CHECKING:
    from cdk_triton.tune.request import TuneRequest
    from cdk_triton.tune.run import TuneOutcome, run_tune

#: public name -> the module defining it (imported on first use: the package stays light)
_LAZY = {
    "TuneRequest": "cdk_triton.tune.request",
    "TuneOutcome": "cdk_triton.tune.run",
    "run_tune": "cdk_triton.tune.run",
}

__all__ = ["TuneOutcome", "TuneRequest", "run_tune"]


__getattr__ = lazy_exports(__name__, _LAZY)
