"""NVIDIA's security advisories per Triton release, and the one rule build and synth apply to them.

``data/triton-advisories.json`` holds, per CVE, what NVIDIA's bulletin says (CVSS v3.1 base score,
component, first fixed release) and whether a SageMaker deployment reaches it (``sagemaker-front``,
``server-ports-only`` or ``unknown``, each with its source; ``unknown`` counts as reachable). Every row
has its source and the date it was read.

:func:`check_release` is the rule: an advisory affecting the release with CVSS >= 9.0 that the
deployment reaches is an error (``CriticalAdvisory``) unless acknowledged with a reason; 7.0-8.9 and
4.0-6.9 are warnings (``cdk-triton:HighAdvisory`` / ``cdk-triton:MediumAdvisory``). ``cdk-triton build``
applies it to ``models.yaml``'s ``triton_version`` (acknowledgments: its ``acknowledged_advisories``
key), ``TritonModel`` to the release of its image (the ``acknowledged_advisories`` prop, the
manifest's acknowledgments and the ``cdk-triton:acknowledged_advisories`` context) and records what was
acknowledged in the template's ``Metadata`` under :data:`METADATA_KEY`. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from cdk_triton.config import tables
from cdk_triton.config.parse import closest
from cdk_triton.errors import TritonValidationError

#: The construct prop and the ``models.yaml`` key (the same name in both).
ACKNOWLEDGMENT_KEY = "acknowledged_advisories"
#: The CDK context key of acknowledgments for every model under a scope (a test-wide or app-wide one).
CONTEXT_KEY = "cdk-triton:acknowledged_advisories"
#: The template ``Metadata`` key of the model resource (as cdk-nag writes ``cdk_nag``):
#: ``{"cdk_triton": {"acknowledged_advisories": [{"id", "reason", "cvss", "triton_version", "fixed_in"}]}}``.
METADATA_KEY = "cdk_triton"

CRITICAL = 9.0
HIGH = 7.0
MEDIUM = 4.0
#: The warning codes of the two lower bands.
HIGH_WARNING = "cdk-triton:HighAdvisory"
MEDIUM_WARNING = "cdk-triton:MediumAdvisory"
#: The reachability values; ``unknown`` counts as reachable.
REACHABILITY = ("sagemaker-front", "server-ports-only", "unknown")


@dataclass(frozen=True, kw_only=True, slots=True)
class Advisory:
    """One CVE of an NVIDIA Triton bulletin, as the vendored table records it."""

    cve: str
    bulletin: str
    cvss: float
    vector: str
    component: str
    summary: str
    fixed_in: str
    reachability: str
    reachability_source: str
    source: str
    date_read: str
    confirmed: bool
    note: str | None = None

    def affects(self, version: str) -> bool:
        """Whether release ``version`` predates the fix."""
        return _key(version) < _key(self.fixed_in)

    @property
    def reachable_on_sagemaker(self) -> bool:
        """Reached through the SageMaker front, or not known not to be (``unknown`` counts)."""
        return self.reachability != "server-ports-only"

    @property
    def band(self) -> str:
        """``critical`` (>= 9.0), ``high`` (7.0-8.9), ``medium`` (4.0-6.9) or ``low``."""
        if self.cvss >= CRITICAL:
            return "critical"
        if self.cvss >= HIGH:
            return "high"
        return "medium" if self.cvss >= MEDIUM else "low"


def _key(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


@cache
def _table() -> dict[str, Advisory]:
    raw = tables.advisory_table()["advisories"]
    return {
        cve: Advisory(
            cve=cve,
            bulletin=row["bulletin"],
            cvss=float(row["cvss"]),
            vector=row["vector"],
            component=row["component"],
            summary=row["summary"],
            fixed_in=row["fixed_in"],
            reachability=row["reachability"]["value"],
            reachability_source=row["reachability"]["source"],
            source=row["source"],
            date_read=row["date_read"],
            confirmed=bool(row["confirmed"]),
            note=row.get("note"),
        )
        for cve, row in raw.items()
    }


def advisories() -> dict[str, Advisory]:
    """Every advisory of the table, by CVE id."""
    return dict(_table())


def affecting(version: str) -> list[Advisory]:
    """The advisories affecting release ``version``, highest score first (none for an unknown one)."""
    return list(_affecting(version))


@cache
def _affecting(version: str) -> tuple[Advisory, ...]:
    if not tables.is_valid_version_string(version):
        return ()
    found = [a for a in _table().values() if a.affects(version)]
    return tuple(sorted(found, key=lambda a: (-a.cvss, a.cve)))


@cache
def first_sagemaker_release(fixed_in: str, region: str | None = None) -> str | None:
    """The oldest SageMaker Triton image at or after ``fixed_in`` published in ``region`` (any region
    when None or unresolved); None when the image table has none yet."""
    for version in tables.image_versions():
        if _key(version) < _key(fixed_in):
            continue
        if region is None or region in tables.image_regions(version):
            return version
    return None


@dataclass(frozen=True, kw_only=True, slots=True)
class Findings:
    """What :func:`check_release` found: errors to raise, warnings (code, message), acknowledged rows."""

    errors: list[TritonValidationError] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    acknowledged: list[dict[str, Any]] = field(default_factory=list)
    #: the CVEs of ``acknowledged`` the library acknowledged (``library=``), not the user
    by_library: list[str] = field(default_factory=list)
    #: warning code -> the full list behind its one-line message (``--verbose`` prints it)
    details: dict[str, str] = field(default_factory=dict)


def check_acknowledgments(
    acknowledged: Mapping[str, Any] | None, *, prop: str = ACKNOWLEDGMENT_KEY, path: str | None = None
) -> list[TritonValidationError]:
    """Each acknowledgment names a CVE of the table and gives a reason (a non-empty string)."""
    errs: list[TritonValidationError] = []
    if acknowledged is None:
        return errs
    if not isinstance(acknowledged, Mapping):
        return [
            TritonValidationError(
                "InvalidType",
                prop=prop,
                value=acknowledged,
                problem="is not a mapping of CVE id to reason",
                allowed="{'CVE-2025-23310': '<why the risk is accepted>', ...}",
                fix="write each acknowledged CVE with its reason",
                path=path,
            )
        ]
    known = _table()
    for cve, reason in acknowledged.items():
        if cve not in known:
            near = closest(str(cve), list(known), cutoff=0.6)
            errs.append(
                TritonValidationError(
                    "UnknownAdvisory",
                    prop=f"{prop}.{cve}",
                    value=cve,
                    problem="is not an advisory of the vendored table (data/triton-advisories.json)",
                    allowed=(f"'{near}' or " if near else "")
                    + "a CVE id of an NVIDIA Triton bulletin in the table",
                    fix="correct the CVE id" + (f" (did you mean {near}?)" if near else ""),
                    path=path,
                )
            )
        elif not isinstance(reason, str) or not reason.strip():
            errs.append(
                TritonValidationError(
                    "AdvisoryReasonMissing",
                    prop=f"{prop}.{cve}",
                    value=reason,
                    problem="acknowledges an advisory without a reason",
                    allowed="a non-empty text saying why the risk is accepted (it is recorded in the template)",
                    fix=f"write {prop}: {{{cve}: '<why the risk is accepted>'}}",
                    path=path,
                )
            )
    return errs


def check_release(
    version: str | None,
    *,
    acknowledged: Mapping[str, str] | None = None,
    region: str | None = None,
    prop: str = "triton_version",
    path: str | None = None,
    library: Mapping[str, str] | None = None,
    library_by: str = "cdk-triton",
) -> Findings:
    """The advisories of ``version`` for a SageMaker deployment in ``region`` (None: unresolved).

    Nothing for an unknown release (a custom image without one). Acknowledgments of CVEs that do not
    affect the release are ignored; their format is :func:`check_acknowledgments`' (not repeated here).
    ``library``: the library's own acknowledgments (``config.default_release``: the default release's),
    applied to what the user did not acknowledge; their rows carry ``by=library_by``.
    """
    acks = {k: v for k, v in (acknowledged or {}).items() if isinstance(v, str) and v.strip()}
    if version is None:
        return Findings()
    found = [a for a in affecting(version) if a.reachable_on_sagemaker]
    done = [_acknowledged_row(a, acks[a.cve], version) for a in found if a.cve in acks]
    lib = {k: v for k, v in (library or {}).items() if k not in acks}
    by_library = [a.cve for a in found if a.cve in lib]
    done += [{**_acknowledged_row(a, lib[a.cve], version), "by": library_by} for a in found if a.cve in lib]
    acks = {**lib, **acks}
    open_ = [a for a in found if a.cve not in acks]
    critical = [a for a in open_ if a.band == "critical"]
    errors = [_critical_error(version, critical, region, prop=prop, path=path)] if critical else []
    banded = [
        (code, label, tuple(a.cve for a in rows))
        for code, label, band in (
            (HIGH_WARNING, "high-severity (CVSS 7.0-8.9)", "high"),
            (MEDIUM_WARNING, "medium-severity (CVSS 4.0-6.9)", "medium"),
        )
        if (rows := [a for a in open_ if a.band == band])
    ]
    return Findings(
        errors=errors,
        warnings=[(code, _band_warning(version, cves, label, region)) for code, label, cves in banded],
        acknowledged=done,
        by_library=by_library,
        details={code: band_detail(cves, region) for code, _, cves in banded},
    )


def metadata(acknowledged: list[dict[str, Any]]) -> dict[str, Any]:
    """The value of :data:`METADATA_KEY` in a model resource's template ``Metadata``."""
    return {ACKNOWLEDGMENT_KEY: acknowledged}


def _acknowledged_row(a: Advisory, reason: str, version: str) -> dict[str, Any]:
    return {"id": a.cve, "reason": reason, "cvss": a.cvss, "triton_version": version, "fixed_in": a.fixed_in}


def _where(region: str | None) -> str:
    return f"in {region}" if region else "(region not resolved: in some region)"


def _fix_release(rows: list[Advisory], region: str | None) -> str | None:
    """The first SageMaker release in ``region`` that has every fix of ``rows`` (None: not yet)."""
    newest = max((a.fixed_in for a in rows), key=_key)
    return first_sagemaker_release(newest, region)


def _cve_list(rows: list[Advisory], region: str | None) -> str:
    parts = []
    for a in rows:
        on_sm = first_sagemaker_release(a.fixed_in, region)
        parts.append(
            f"{a.cve} (CVSS {a.cvss:g}, {a.component}, bulletin {a.bulletin}, fixed in {a.fixed_in}; "
            + (f"on SageMaker from {on_sm})" if on_sm else "no SageMaker image has the fix yet)")
        )
    return ", ".join(parts)


def _critical_error(
    version: str, rows: list[Advisory], region: str | None, *, prop: str, path: str | None
) -> TritonValidationError:
    fix_release = _fix_release(rows, region)
    example = ", ".join(f"'{a.cve}': '<why the risk is accepted>'" for a in rows)
    return TritonValidationError(
        "CriticalAdvisory",
        prop=prop,
        value=version,
        problem=f"has {len(rows)} critical NVIDIA advisor{'y' if len(rows) == 1 else 'ies'} (CVSS >= 9.0) "
        f"a SageMaker deployment reaches: {_cve_list(rows, region)}",
        allowed=(
            f"Triton {fix_release}, the first SageMaker Triton image {_where(region)} with every fix"
            if fix_release
            else "no SageMaker Triton image has every fix yet"
        )
        + ", or the advisories acknowledged in writing",
        fix=(
            f"target Triton {fix_release} (models.yaml triton_version / TritonImage.for_version), or "
            if fix_release
            else ""
        )
        + f"accept the risk with a reason: {ACKNOWLEDGMENT_KEY}={{{example}}} (a construct prop or a "
        f"models.yaml key; recorded in the template's Metadata '{METADATA_KEY}')",
        path=path,
    )


def listing_command(version: str) -> str:
    """The command that lists a release's advisories with their sources (what every short warning names)."""
    return f"cdk-triton advisories --release {version}"


@cache
def _band_warning(version: str, cves: tuple[str, ...], label: str, region: str | None) -> str:
    """One band's warning, one line: what, how many, what to do, and the command with the list (cached: a
    fleet's models share their release and region)."""
    rows = [_table()[c] for c in cves]
    fix_release = _fix_release(rows, region)
    return (
        f"Triton {version} has {len(rows)} {label} NVIDIA advisor{'y' if len(rows) == 1 else 'ies'}; "
        + (f"Triton {fix_release} fixes all" if fix_release else "no SageMaker image fixes all yet")
        + f"; list: `{listing_command(version)}`; accept: {ACKNOWLEDGMENT_KEY}"
    )


def band_detail(cves: tuple[str, ...] | list[str], region: str | None = None) -> str:
    """The full list behind a band's warning: each CVE with its score, component, bulletin and fix."""
    return _cve_list([_table()[c] for c in cves], region)


def local_server_notice(version: str = tables.LOCAL_SERVER_RELEASE) -> str | None:
    """What the local endpoint says of its bundled server's own advisories (None when it has none)."""
    rows = affecting(version)
    if not rows:
        return None
    critical = [a.cve for a in rows if a.band == "critical"]
    return (
        f"the bundled tritonserver (Triton {version}) has {len(rows)} NVIDIA advisories"
        + (f", {len(critical)} critical" if critical else "")
        + ": local testing only (its ports: 127.0.0.1 and a private network namespace); serve only models "
        f"you trust; list: `{listing_command(version)}`"
    )


def local_server_detail(version: str = tables.LOCAL_SERVER_RELEASE) -> str:
    """The bundled server's setup and advisories in full (``--verbose``; the docs' security page)."""
    rows = affecting(version)
    critical = [a.cve for a in rows if a.band == "critical"]
    last = max((a.fixed_in for a in rows), key=_key) if rows else version
    return (
        f"the bundled tritonserver (nvidia-pytriton 0.7.0, Triton {version}) has {len(rows)} NVIDIA advisories"
        + (f", {len(critical)} critical ({', '.join(critical)})" if critical else "")
        + f" (the last fixed only in Triton {last}). It is for local testing only: its "
        "SageMaker port is reachable only inside a private network namespace (the host reaches it through a "
        "Unix socket, the front listens on 127.0.0.1), its HTTP and metrics addresses are 127.0.0.1 and gRPC "
        "is off; where no namespace can be made its SageMaker port listens on 0.0.0.0 of this host (the server then "
        "warns NO PRIVATE NETWORK NAMESPACE). "
        "Serve only models you trust and do not expose the port"
    )
