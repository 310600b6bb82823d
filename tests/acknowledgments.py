"""The test suite's one acknowledgment of NVIDIA's critical Triton advisories (``config.advisories``).

The default release (24.09) and the releases the fixtures pin carry critical advisories; the check is on
for every user, so the tests acknowledge them here, once, with the reason, instead of switching it off.
``tests/unit/constructs/support.new_stack`` puts them in the App's ``cdk-triton:acknowledged_advisories``
context; the declarations the build tests write carry them under ``acknowledged_advisories``.
"""

from __future__ import annotations

from cdk_triton.config import advisories

#: Why the suite accepts the risk.
REASON = (
    "test suite: nothing it synthesizes or builds is deployed; the templates and artifacts exist to test "
    "cdk-triton itself (the default release moves to a fixed one in a later change)"
)

#: Every critical (CVSS >= 9.0) advisory of the releases the suite targets, acknowledged with REASON.
CRITICAL: dict[str, str] = {a.cve: REASON for a in advisories.advisories().values() if a.band == "critical"}

#: The App context that carries CRITICAL to every model of an App (``cdk.App(context={**CONTEXT, ...})``).
CONTEXT: dict[str, dict[str, str]] = {advisories.CONTEXT_KEY: CRITICAL}
