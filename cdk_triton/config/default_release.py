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

from collections.abc import Collection
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
    """The warning of a model whose release's critical advisories the library acknowledged: one line, the
    CVE list behind ``cdk-triton advisories`` (:func:`detail` is the full text)."""
    return (
        f"Triton {version}, cdk-triton's default release (held back on {decided()}): {len(cves)} critical "
        f"advisor{'y is' if len(cves) == 1 else 'ies are'} acknowledged by the library, not by you (CVE list: "
        f"`{advisories.listing_command(version)}`); target {fixed_release() or 'a fixed release'} "
        f"(`cdk-triton init` does), or refuse: {KEY}: false / context {CONTEXT_KEY}=false"
    )


def detail(version: str, cves: list[str]) -> str:
    """The full text behind :func:`warning`: the CVEs, who recorded them and what holds the move back."""
    facts = "; ".join(f"{h['release']}: {h['fact']}" for h in held_back_by())
    return (
        f"Triton {version} is cdk-triton's default release, held back on {decided()}: its critical advisories "
        f"{', '.join(cves)} are acknowledged by the library, not by you (recorded in the model's template "
        f"Metadata with by='{BY}'). What holds the move to a fixed release back: {facts}. Acknowledge them "
        f"yourself ({advisories.ACKNOWLEDGMENT_KEY}) to record your own reason, refuse the library's "
        f"acknowledgment with {KEY}: false (models.yaml) or the {CONTEXT_KEY}=false context, or target "
        f"{fixed_release() or 'a fixed release'}"
    )


def fixed_release() -> str | None:
    """The newest release of the table with no critical advisory a SageMaker deployment reaches."""
    return next((c.release for c in candidates() if not c.critical), None)


@dataclass(frozen=True, kw_only=True, slots=True)
class FamilyEvidence:
    """What is known of an InferenceAmiVersion on one instance family: ``confirmed`` (a primary source
    lists the family), ``third-party`` (only sources that are not AWS documentation) or ``unknown``."""

    family: str
    primary: bool
    third_party: tuple[str, ...]

    @property
    def level(self) -> str:
        if self.primary:
            return "confirmed"
        return "third-party" if self.third_party else "unknown"

    @property
    def strength(self) -> tuple[bool, int]:
        return self.primary, len(self.third_party)


@dataclass(frozen=True, kw_only=True, slots=True)
class InitRelease:
    """What ``cdk-triton init`` declares: the release, the host image that runs it and the evidence per family."""

    release: str
    inference_ami_version: str
    driver: int
    cuda: str
    #: every GPU family of the instance table, strongest evidence first
    evidence: tuple[FamilyEvidence, ...]
    #: the scaffold's endpoint instance type: the smallest single-GPU type of a strongest family
    instance_type: str

    @property
    def strongest(self) -> tuple[str, ...]:
        """The families with the strongest evidence that SageMaker accepts the AMI."""
        return strongest(self.evidence)


def strongest(evidence: tuple[FamilyEvidence, ...]) -> tuple[str, ...]:
    """The families of ``evidence`` (strongest first) that share the strongest evidence; none when unknown."""
    top = evidence[0].strength if evidence else (False, 0)
    return tuple(e.family for e in evidence if e.strength == top and e.level != "unknown")


def third_party_evidence(ami: str) -> list[dict[str, Any]]:
    """The third-party sources recorded for ``ami`` (source, what it shows, families, when found)."""
    return list(_data()["init_release"]["third_party_ami_evidence"].get(ami, []))


def family_evidence(ami: str) -> tuple[FamilyEvidence, ...]:
    """The evidence of ``ami`` on each GPU family of the instance table, strongest first (ties: table order)."""
    listed = gpu_hosts.ami_versions()[ami].families or ()
    sources = third_party_evidence(ami)
    families = list(dict.fromkeys(t.split(".")[1] for t in tables.instance_types()))
    rows = [
        FamilyEvidence(
            family=f,
            primary=f in listed,
            third_party=tuple(s["source"] for s in sources if f in s["families"]),
        )
        for f in families
    ]
    return tuple(sorted(rows, key=lambda e: (not e.primary, -len(e.third_party))))


def _runner(release: str) -> gpu_hosts.AmiVersion | None:
    """The GPU InferenceAmiVersion whose driver runs ``release`` with the strongest family evidence (None:
    none runs it, or its CUDA is unknown)."""
    cuda = gpu_hosts.release_cuda(release)
    if cuda is None:
        return None
    runs = [
        a
        for a in gpu_hosts.ami_versions().values()
        if a.accelerator == "gpu" and a.driver and gpu_hosts.runs_on(release, cuda, a.driver)[0] == "runs"
    ]
    return max(runs, key=lambda a: family_evidence(a.name)[0].strength, default=None)


def _smallest_type(families: tuple[str, ...], release: str, *, among: Collection[str] | None = None) -> str:
    """The smallest single-GPU instance type of ``families`` (``among`` these types when given); ties go to
    the highest compute capability (the margin over the release's minimum)."""
    rel = tables.releases().get(release)
    floor = (rel.min_compute_capability.value if rel else None) or "0"
    fits = [
        i
        for i in tables.instance_types().values()
        if i.name.split(".")[1] in families
        and i.gpu_count == 1
        and float(i.compute_capability) >= float(floor)
        and (among is None or i.name in among)
    ]
    best = min(fits, key=lambda i: (i.vcpus, -float(i.compute_capability), i.name))
    return best.name


@cache
def init_release() -> InitRelease:
    """The release ``cdk-triton init`` declares: the newest SageMaker Triton image with no critical advisory a
    SageMaker deployment reaches and an InferenceAmiVersion whose driver runs its CUDA.

    Raises:
        LookupError: no image of the table qualifies (a new advisory: record a decision).
    """
    for version in reversed(tables.image_versions()):
        if any(a.band == "critical" and a.reachable_on_sagemaker for a in advisories.affecting(version)):
            continue
        ami = _runner(version)
        if ami is None or ami.driver is None:
            continue
        evidence = family_evidence(ami.name)
        return InitRelease(
            release=version,
            inference_ami_version=ami.name,
            driver=ami.driver,
            cuda=str(gpu_hosts.release_cuda(version)),
            evidence=evidence,
            instance_type=_smallest_type(strongest(evidence), version),
        )
    raise LookupError("no SageMaker Triton image without a critical advisory has a host that runs it")


def init_instance_type(*, multi_model: bool = False) -> str:
    """The instance type ``cdk-triton init`` declares: :attr:`InitRelease.instance_type`, or for a
    multi-model endpoint the smallest type of the strongest families that SageMaker documents for GPU
    multi-model endpoints (``tables.confirmed_mme_gpu_types``)."""
    init = init_release()
    if not multi_model:
        return init.instance_type
    return _smallest_type(init.strongest, init.release, among=tables.confirmed_mme_gpu_types())


def listing(version: str, region: str | None = None) -> dict[str, Any]:
    """Every advisory affecting ``version`` with its source, and what the library decided about the release
    (``cdk-triton advisories --json``; :func:`render_listing` is the text). Nothing for an unknown one."""
    rows = advisories.affecting(version)
    bands = ("critical", "high", "medium", "low")
    newest_fix = max((a.fixed_in for a in rows), key=lambda v: tuple(map(int, v.split("."))), default=None)
    library = library_acknowledgments(version)
    return {
        "release": version,
        "table_read": str(tables.advisory_table()["date_read"]),
        "counts": {b: sum(1 for a in rows if a.band == b) for b in bands},
        "every_fix_on_sagemaker_from": newest_fix and advisories.first_sagemaker_release(newest_fix, region),
        "advisories": [
            {
                "cve": a.cve,
                "cvss": a.cvss,
                "band": a.band,
                "component": a.component,
                "summary": a.summary,
                "fixed_in": a.fixed_in,
                "on_sagemaker_from": advisories.first_sagemaker_release(a.fixed_in, region),
                "reachability": a.reachability,
                "reachability_source": a.reachability_source,
                "bulletin": a.bulletin,
                "source": a.source,
                "date_read": a.date_read,
                "confirmed": a.confirmed,
            }
            for a in rows
        ],
        "library_acknowledged": sorted(library),
        "library_decision": decided() if library else None,
        "init_release": init_release().release,
    }


def render_listing(data: dict[str, Any]) -> str:
    """The text of :func:`listing`: a head line, then per band each advisory with its fix and source."""
    version, counts = data["release"], data["counts"]
    found = ", ".join(f"{n} {band}" for band, n in counts.items() if n)
    lines = [
        f"Triton {version}: {sum(counts.values())} NVIDIA advisor{'y' if sum(counts.values()) == 1 else 'ies'}"
        + (f" ({found})" if found else "")
        + f" (table read {data['table_read']})"
    ]
    if not data["advisories"]:
        return lines[0] + "\n"
    every = data["every_fix_on_sagemaker_from"]
    lines.append(
        f"every fix: {'Triton ' + every if every else 'no SageMaker Triton image yet'}; "
        f"cdk-triton init declares Triton {data['init_release']}"
    )
    for band in ("critical", "high", "medium", "low"):
        rows = [r for r in data["advisories"] if r["band"] == band]
        if rows:
            lines.append(f"{band}:")
        for r in rows:
            where = (
                f"on SageMaker from {r['on_sagemaker_from']}"
                if r["on_sagemaker_from"]
                else "no SageMaker image yet"
            )
            lines.append(
                f"  {r['cve']}  CVSS {r['cvss']:g}  {r['component']}  fixed in {r['fixed_in']} ({where})  "
                f"reach: {r['reachability']}"
            )
            lines.append(f"      {r['summary']}")
            lines.append(f"      source: {r['source']} (read {r['date_read']})")
    if data["library_acknowledged"]:
        lines.append(
            f"acknowledged by cdk-triton for its default release (decision of {data['library_decision']}): "
            f"{', '.join(data['library_acknowledged'])}; refuse with {KEY}: false (models.yaml) or the "
            f"{CONTEXT_KEY}=false context"
        )
    if version == tables.LOCAL_SERVER_RELEASE:
        lines.append(advisories.local_server_detail(version))
    return "\n".join(lines) + "\n"


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
