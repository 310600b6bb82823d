"""SingleModel's construct behaviour: every endpoint's graphs, alarms and variant scaling, nothing more
(one repository behind ``/invocations``: the verification invokes the default model)."""

from __future__ import annotations

from cdk_triton.config import modes
from cdk_triton.constructs.modes.table import Common, register


class SingleModel(Common):
    row = modes.SINGLE_MODEL


SINGLE_MODEL = register(SingleModel())
