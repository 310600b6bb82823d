"""Why the default Triton release is what it is, and the acknowledgment the library records for it.

``data/default-release.json`` holds the decision (issue 37): the criteria a default must meet, the facts
that hold the newer releases back (each with what was searched and when) and the critical advisories the
library acknowledges for its default, with one reason. :func:`candidates` evaluates every release of the
table against the criteria from the vendored facts alone (advisories, host drivers, release facts), so the
README's table and the tests read the same verdicts; :func:`library_acknowledgments` is what
``config.advisories.check_release`` applies to the default release unless a user refuses it
(``library_acknowledgments: false`` in ``models.yaml``, or the ``cdk-triton:library_acknowledgments``
context). Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from cdk_triton.config import advisories, gpu_hosts, tables
from cdk_triton.errors import TritonValidationError

#: The ``models.yaml`` key (and manifest field) that refuses the library's acknowledgment when false.
KEY = "library_acknowledgments"
#: The CDK context key that refuses it for every model under a scope when false.
CONTEXT_KEY = "cdk-triton:library_acknowledgments"
#: The warning each model of the default release gets while the library acknowledges its advisories.
WARNING = "cdk-triton:LibraryAcknowledgedAdvisories"
#: Who acknowledged a row of the template's Metadata when the library did.
BY = "cdk-triton (config/data/default-release.json)"


@cache
def _data() -> dict[str, Any]:
    return tables.load_data("default-release.json")


def decided() -> str:
    """The date of the decision."""
    return str(_data()["decided"])


def reason() -> str:
    """The one reason the library records for each advisory it acknowledges."""
    return str(_data()["reason"])


def default_families() -> tuple[str, ...]:
    """The instance families a default's host decision must be confirmed on."""
    return tuple(_data()["default_instance_families"])


def held_back_by() -> list[dict[str, Any]]:
    """The unconfirmed facts that hold the newer releases back (release, fact, what was searched)."""
    return list(_data()["held_back_by"])


def acknowledged_cves() -> tuple[str, ...]:
    """The critical advisories of the default the library acknowledges (sorted)."""
    return tuple(sorted(_data()["acknowledged_advisories"]))


@dataclass(frozen=True, kw_only=True, slots=True)
class Candidate:
    """One release against the criteria; each ``*_problem`` is None when the criterion is met."""

    release: str
    critical: tuple[str, ...]
    host_problem: str | None
    toolchain_problem: str | None

    @property
    def meets_all(self) -> bool:
        return not self.critical and not (self.host_problem or self.toolchain_problem)


def _host_problem(release: str) -> str | None:
    """None when the host decision (``gpu_hosts.decide_host``) is confirmed on every default family: the
    release runs on the family's default host, or on an AMI a primary source lists for it (chosen); else
    the families where it is not."""
    missing = []
    for family in default_families():
        instance_type = next(t for t in tables.instance_types() if t.startswith(f"ml.{family}."))
        decision = gpu_hosts.decide_host(
            release=release, instance_type=instance_type, inference_ami_version=None
        )
        if decision.outcome not in ("unchanged", "choose"):
            missing.append(family)
    return f"no confirmed host on {', '.join(missing)}" if missing else None


def _toolchain_problem(release: str) -> str | None:
    trt = tables.release(release).facts().get("tensorrt")
    if trt is None or trt.value is None or not trt.confirmed:
        return "TensorRT version unconfirmed"
    return None


@cache
def candidates() -> tuple[Candidate, ...]:
    """Every release of the table from the default on, newest first, against the criteria."""
    out = []
    for version in reversed(tables.release_versions()):
        if tables.is_newer(tables.DEFAULT_TRITON_VERSION, version):
            continue
        critical = tuple(
            a.cve for a in advisories.affecting(version) if a.band == "critical" and a.reachable_on_sagemaker
        )
        out.append(
            Candidate(
                release=version,
                critical=critical,
                host_problem=_host_problem(version),
                toolchain_problem=_toolchain_problem(version),
            )
        )
    return tuple(out)


def check_context(value: Any) -> list[TritonValidationError]:
    """The ``cdk-triton:library_acknowledgments`` context is a boolean when set."""
    if value is None or isinstance(value, bool):
        return []
    return [
        TritonValidationError(
            "InvalidType",
            prop=CONTEXT_KEY,
            value=value,
            problem="is not a boolean",
            allowed="true (the default) or false (refuse the library's acknowledgment of the default release)",
            fix=f"set the context {CONTEXT_KEY} to false, or remove it",
        )
    ]


def library_acknowledgments(version: str | None) -> dict[str, str]:
    """CVE -> the library's reason, for the default release only (empty for any other)."""
    if version != tables.DEFAULT_TRITON_VERSION:
        return {}
    return {cve: reason() for cve in acknowledged_cves()}


def warning(version: str, cves: list[str]) -> str:
    """The warning of a model whose release's critical advisories the library acknowledged."""
    facts = "; ".join(f"{h['release']}: {h['fact']}" for h in held_back_by())
    return (
        f"Triton {version} is cdk-triton's default release, held back on {decided()}: its critical advisories "
        f"{', '.join(cves)} are acknowledged by the library, not by you (recorded in the model's template "
        f"Metadata with by='{BY}'). What holds the move to a fixed release back: {facts}. Acknowledge them "
        f"yourself ({advisories.ACKNOWLEDGMENT_KEY}) to record your own reason, refuse the library's "
        f"acknowledgment with {KEY}: false (models.yaml) or the {CONTEXT_KEY}=false context, or target "
        f"{' or '.join(dict.fromkeys(h['release'] for h in held_back_by()))}"
    )


def readme_table() -> str:
    """The README's table: each release from the default on against the criteria."""

    def cell(problem: str | None) -> str:
        return "yes" if problem is None else f"no: {problem}"

    rows = [
        "| release | critical advisories | host confirmed on "
        + ", ".join(default_families())
        + " | TensorRT confirmed |",
        "| --- | --- | --- | --- |",
    ]
    for c in candidates():
        name = f"**{c.release}** (default)" if c.release == tables.DEFAULT_TRITON_VERSION else c.release
        rows.append(
            f"| {name} | {', '.join(c.critical) or 'none'} | {cell(c.host_problem)} | "
            f"{cell(c.toolchain_problem)} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    print(readme_table())
