"""Release x instance x host: whether a Triton release's image runs on a SageMaker GPU host.

The facts live in ``data/gpu-hosts.json`` (each with its source and the date read): the default
driver of each instance family, the ``InferenceAmiVersion`` values and what they change, the CUDA
minor-version-compatibility floor of each CUDA major, and the forward-compatibility facts that were
observed. :func:`decide_host` is the one decision; it is pure (standard library only) and returns a
:class:`HostDecision` the variant builder applies: emit an AMI or not, an info, a warning or an error.

The rule: a release runs on a host when the host's driver meets the floor of the release's CUDA
major (12.x: 525, 13.x: 580), or when forward compatibility of that CUDA major on that driver is a
``confirmed-works`` fact. A ``confirmed-fails`` fact proves it cannot; anything else is unconfirmed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from cdk_triton.config import tables
from cdk_triton.errors import TritonValidationError

#: The prop (and models.yaml key) that pins the host image.
PROP = "inference_ami_version"

Outcome = Literal["unchanged", "choose", "warn", "error"]


@dataclass(frozen=True, kw_only=True, slots=True)
class AmiVersion:
    """One ``InferenceAmiVersion`` value and the host it gives."""

    name: str
    accelerator: str
    driver: int | None
    cuda: str | None
    compat_mounting: bool | None
    #: Instance families a primary source lists for it; None when not established.
    families: tuple[str, ...] | None


@dataclass(frozen=True, kw_only=True, slots=True)
class ForwardCompatibility:
    """An observed (or documented) fact: CUDA ``cuda_major`` on driver ``driver`` through the compat package."""

    cuda_major: str
    driver: int
    releases: tuple[str, ...] | None
    status: str
    evidence: str


@dataclass(frozen=True, kw_only=True, slots=True)
class HostDecision:
    """What the variant builder does: emit ``inference_ami_version`` (None: leave it out) and say why.

    ``outcome``: ``unchanged`` (nothing to say), ``choose`` (an AMI chosen for the user: an info),
    ``warn`` (a warning, the template unchanged) or ``error`` (``error`` is set).
    """

    outcome: Outcome
    inference_ami_version: str | None = None
    warning_id: str | None = None
    message: str | None = None
    error: TritonValidationError | None = None


@cache
def _data() -> dict[str, Any]:
    return tables.load_data("gpu-hosts.json")


def facts_read() -> str:
    """The date the host facts were read (the README table says it)."""
    return str(_data()["read"])


def ami_versions() -> dict[str, AmiVersion]:
    """Every ``InferenceAmiVersion`` value of botocore's enum, by name (table order)."""
    raw = _data()["inference_ami_versions"]
    return {
        name: AmiVersion(
            name=name,
            accelerator=f["accelerator"],
            driver=f["driver"],
            cuda=f["cuda"],
            compat_mounting=f["compat_mounting"],
            families=None if f["families"] is None else tuple(f["families"]),
        )
        for name, f in raw.items()
        if name != "comment"
    }


def gpu_ami_versions() -> list[str]:
    return [n for n, a in ami_versions().items() if a.accelerator == "gpu"]


def default_driver(family: str) -> int | None:
    """The driver branch of ``family``'s default real-time host; None for a family not in the table."""
    entry = _data()["default_drivers"].get(family)
    return None if entry is None or family == "comment" else int(entry["driver"])


def default_driver_families() -> dict[str, tuple[int, str]]:
    """Family -> (driver, CUDA) of the default real-time host, for the families the source lists."""
    raw = _data()["default_drivers"]
    return {f: (int(v["driver"]), str(v["cuda"])) for f, v in raw.items() if f != "comment"}


def cuda_floor(cuda_major: str) -> int | None:
    """The lowest driver that runs every minor of ``cuda_major`` (minor-version compatibility)."""
    value = _data()["cuda_minor_version_floor"].get(cuda_major)
    return None if value is None or cuda_major == "comment" else int(value)


def forward_compatibility() -> list[ForwardCompatibility]:
    return [
        ForwardCompatibility(
            cuda_major=f["cuda_major"],
            driver=int(f["driver"]),
            releases=None if f["releases"] is None else tuple(f["releases"]),
            status=f["status"],
            evidence=f["evidence"],
        )
        for f in _data()["forward_compatibility"]["facts"]
    ]


def release_cuda(release: str) -> str | None:
    """The CUDA version of ``release`` from the release table (None when the release is not there)."""
    rel = tables.releases().get(release)
    return None if rel is None else rel.cuda.value


Verdict = Literal["runs", "fails", "unconfirmed"]


def runs_on(release: str, cuda: str, driver: int) -> tuple[Verdict, str]:
    """Whether ``release`` (CUDA ``cuda``) runs on a host with driver ``driver``, and why."""
    major = cuda.split(".")[0]
    floor = cuda_floor(major)
    if floor is not None and driver >= floor:
        return "runs", f"driver {driver} >= {floor}, the CUDA {major}.x minor-version-compatibility floor"
    for fact in forward_compatibility():
        if fact.cuda_major != major or fact.driver != driver:
            continue
        if fact.releases is not None and release not in fact.releases:
            continue
        verdict: Verdict = "runs" if fact.status == "confirmed-works" else "fails"
        return (
            verdict,
            f"forward compatibility of CUDA {cuda} on driver {driver} is {fact.status}: {fact.evidence}",
        )
    below = f"driver {driver} is below {floor}, the CUDA {major}.x minor-version-compatibility floor"
    return "unconfirmed", f"{below}, and forward compatibility on it is unconfirmed for {release}"


def _ami_runs(release: str, cuda: str, ami: AmiVersion) -> tuple[Verdict, str]:
    if ami.driver is None:
        return "fails", f"{ami.name} is not a GPU host"
    verdict, why = runs_on(release, cuda, ami.driver)
    if verdict != "runs" and ami.compat_mounting is False:
        why += f"; {ami.name} does not mount the compat libraries (only the container's entrypoint can)"
    return verdict, why


def _family(instance_type: str) -> str:
    parts = instance_type.split(".")
    return parts[1] if len(parts) == 3 else instance_type


def _refuse(err: TritonValidationError) -> HostDecision:
    return HostDecision(outcome="error", error=err)


def decide_host(
    *, release: str | None, instance_type: str, inference_ami_version: str | None, path: str | None = None
) -> HostDecision:
    """The one decision for a production variant: which host image (``InferenceAmiVersion``) it gets.

    ``release``: the Triton release of the image (None: a custom image, nothing to decide unless an
    AMI is pinned). ``inference_ami_version``: the value the user pinned (None: not pinned).
    """
    amis = ami_versions()
    if inference_ami_version is not None:
        return _decide_pinned(release, instance_type, inference_ami_version, amis, path)
    if release is None or tables.instance_kind(instance_type) != "gpu":
        return HostDecision(outcome="unchanged")
    family = _family(instance_type)
    cuda = release_cuda(release)
    driver = default_driver(family)
    if cuda is None or driver is None:
        unknown = (
            f"Triton {release} is not in the release table (its CUDA is unknown)"
            if cuda is None
            else f"{family} is not in the SageMaker GPU driver table (facts read {facts_read()})"
        )
        return HostDecision(
            outcome="warn",
            warning_id="cdk-triton:HostDriverUnknown",
            message=f"{unknown}: whether the default {instance_type} host runs the image is not established; "
            f"pin {PROP} (one of {', '.join(gpu_ami_versions())}) after checking its driver",
        )
    verdict, why = runs_on(release, cuda, driver)
    if verdict == "runs":
        return HostDecision(outcome="unchanged")
    if verdict == "unconfirmed":
        listed = _listed_runner(release, cuda, family, amis)
        if listed is not None:  # a host that provably runs it beats one that may not
            return HostDecision(
                outcome="choose",
                inference_ami_version=listed.name,
                warning_id="cdk-triton:InferenceAmiChosen",
                message=f"Triton {release} (CUDA {cuda}) on the default {family} host: {why}. Chose {PROP} "
                f"{listed.name} (driver {listed.driver}, CUDA {listed.cuda}, listed for {family}), on which "
                f"it runs ({_ami_runs(release, cuda, listed)[1]}); pin it to make this explicit. Adding it "
                "to a deployed endpoint replaces its instances.",
            )
        return HostDecision(
            outcome="warn",
            warning_id="cdk-triton:HostDriverUnconfirmed",
            message=f"Triton {release} (CUDA {cuda}) on the default {family} host: {why}; pin {PROP} "
            f"(e.g. {_suggest(release, cuda, family, amis)}) so the host's driver is known",
        )
    return _choose(release, cuda, family, driver, why, amis, path)


def _suggest(release: str, cuda: str, family: str, amis: dict[str, AmiVersion]) -> str:
    fits = [
        a.name for a in amis.values() if a.accelerator == "gpu" and _ami_runs(release, cuda, a)[0] == "runs"
    ]
    listed = [n for n in fits if amis[n].families is not None and family in (amis[n].families or ())]
    return (listed or fits or gpu_ami_versions())[0]


def _listed_runner(release: str, cuda: str, family: str, amis: dict[str, AmiVersion]) -> AmiVersion | None:
    """The first AMI a primary source lists for ``family`` that runs the release (None: none does)."""
    return next(
        (
            a
            for a in amis.values()
            if a.accelerator == "gpu"
            and a.families is not None
            and family in a.families
            and _ami_runs(release, cuda, a)[0] == "runs"
        ),
        None,
    )


def _choose(
    release: str, cuda: str, family: str, driver: int, why: str, amis: dict[str, AmiVersion], path: str | None
) -> HostDecision:
    """The default host provably cannot run the release: the first AMI listed for the family that can."""
    fits = [a for a in amis.values() if a.accelerator == "gpu" and _ami_runs(release, cuda, a)[0] == "runs"]
    ami = _listed_runner(release, cuda, family, amis)
    if ami is not None:
        return HostDecision(
            outcome="choose",
            inference_ami_version=ami.name,
            warning_id="cdk-triton:InferenceAmiChosen",
            message=f"Triton {release} (CUDA {cuda}) cannot run on the default {family} host (driver {driver}): "
            f"{why}. Chose {PROP} {ami.name} (driver {ami.driver}, CUDA {ami.cuda}); pin it to make this "
            "explicit. Adding it to a deployed endpoint replaces its instances.",
        )
    unlisted = [a.name for a in fits if a.families is None]
    fix = (
        f"pin {PROP}={unlisted[0]!r} if SageMaker accepts it for {family} (no primary source lists its "
        "families), choose an instance family whose host runs it, or target an older release"
        if unlisted
        else "choose an instance family whose host runs it, or target an older release"
    )
    return _refuse(
        TritonValidationError(
            "NoHostForRelease",
            prop=PROP,
            value=None,
            problem=f"is not set, and Triton {release} (CUDA {cuda}) cannot run on the default {family} host "
            f"(driver {driver}: {why}); no InferenceAmiVersion listed for {family} can run it",
            allowed=", ".join(a.name for a in fits) or "(no InferenceAmiVersion runs it)",
            fix=fix,
            path=path,
        )
    )


def _decide_pinned(
    release: str | None, instance_type: str, value: str, amis: dict[str, AmiVersion], path: str | None
) -> HostDecision:
    """A pinned value: known and accepted for the family, then able to run the release."""
    refused = _refuse_pinned(instance_type, value, amis, path)
    if refused is not None:
        return refused
    ami = amis[value]
    kind = tables.instance_kind(instance_type)
    family = _family(instance_type)
    cuda = None if release is None else release_cuda(release)
    if release is not None and cuda is not None and ami.accelerator == "gpu":
        decided = _pinned_against_release(release, cuda, family, ami, amis, path)
        if decided is not None:
            return decided
    if ami.families is None and kind == "gpu":
        return HostDecision(
            outcome="warn",
            inference_ami_version=value,
            warning_id="cdk-triton:InferenceAmiFamilyUnconfirmed",
            message=f"{PROP} {value}: no primary source lists the instance families it accepts "
            f"(facts read {facts_read()}); CreateEndpointConfig refuses it if {family} is not one of them",
        )
    return HostDecision(outcome="unchanged", inference_ami_version=value)


def _refuse_pinned(
    instance_type: str, value: str, amis: dict[str, AmiVersion], path: str | None
) -> HostDecision | None:
    """An unknown value, or one not accepted for the instance type (None: neither)."""
    ami = amis.get(value)
    kind = tables.instance_kind(instance_type)
    family = _family(instance_type)
    gpu = gpu_ami_versions()
    if ami is None:
        return _refuse(
            TritonValidationError(
                "UnknownInferenceAmiVersion",
                prop=PROP,
                value=value,
                problem="is not an InferenceAmiVersion SageMaker knows",
                allowed=", ".join(amis),
                fix=f"use one of the GPU values ({', '.join(gpu)}) or leave it out",
                path=path,
            )
        )
    fit = (kind == "gpu" and ami.accelerator == "gpu") or (kind == "accelerator" and ami.accelerator != "gpu")
    if (
        kind in ("cpu", "arm64")
        or (kind != "unknown" and not fit)
        or (ami.families is not None and kind == "gpu" and family not in ami.families)
    ):
        accepted = ", ".join(n for n, a in amis.items() if a.families is None or family in a.families)
        return _refuse(
            TritonValidationError(
                "InferenceAmiNotForInstance",
                prop=PROP,
                value=value,
                problem=f"is not accepted for {instance_type}"
                + (f" (it lists {', '.join(ami.families)})" if ami.families else f" ({kind} instance type)"),
                allowed=accepted if kind == "gpu" else "(none: leave it out on a CPU instance type)",
                fix="choose an InferenceAmiVersion listed for the family, or another instance type",
                path=path,
            )
        )
    return None


def _pinned_against_release(
    release: str, cuda: str, family: str, ami: AmiVersion, amis: dict[str, AmiVersion], path: str | None
) -> HostDecision | None:
    """A pinned GPU AMI against the release: refused when it provably cannot, a warning when unconfirmed."""
    value = ami.name
    verdict, why = _ami_runs(release, cuda, ami)
    if verdict == "fails":
        can = [
            a.name
            for a in amis.values()
            if a.accelerator == "gpu" and _ami_runs(release, cuda, a)[0] == "runs"
        ]
        return _refuse(
            TritonValidationError(
                "InferenceAmiCannotRunRelease",
                prop=PROP,
                value=value,
                problem=f"cannot run Triton {release} (CUDA {cuda}): {why}",
                allowed=", ".join(can) or "(no InferenceAmiVersion runs it)",
                fix="pin an InferenceAmiVersion whose driver meets the floor, or target an older release",
                path=path,
            )
        )
    if verdict == "unconfirmed":
        return HostDecision(
            outcome="warn",
            inference_ami_version=value,
            warning_id="cdk-triton:HostDriverUnconfirmed",
            message=f"Triton {release} (CUDA {cuda}) on {PROP} {value}: {why}; pin "
            f"{_suggest(release, cuda, family, amis)} instead, whose driver meets the floor",
        )
    return None


#: The README's columns: the families of one default driver (each decides alike) and what it reads.
README_COLUMNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("g4dn, g5, p3, p4d, p4de (470)", ("g5", "g4dn", "p3", "p4d", "p4de")),
    ("g6, p5 (535)", ("g6", "p5")),
    ("p5e, p5en (550)", ("p5e", "p5en")),
    ("g6e, g7e, p3dn, p6-b200, p6-b300", ("g6e", "g7e", "p3dn", "p6-b200", "p6-b300")),
)


def _cell(release: str, family: str) -> str:
    """What ``decide_host`` does for ``release`` on ``family``'s default host, in README words."""
    instance_type = next(n for n, t in tables.instance_types().items() if t.family == family)
    d = decide_host(release=release, instance_type=instance_type, inference_ami_version=None)
    if d.outcome == "unchanged":
        return "runs (default host)"
    if d.outcome == "choose":
        return f"`{d.inference_ami_version}` chosen (info)"
    if d.outcome == "warn":
        unconfirmed = d.warning_id == "cdk-triton:HostDriverUnconfirmed"
        return (
            "warning: unconfirmed, pin an AMI"
            if unconfirmed
            else "warning: driver not in the table, pin an AMI"
        )
    err = d.error
    assert err is not None
    pin = next((a for a in gpu_ami_versions() if f"{PROP}={a!r}" in err.fix), None)
    return f"error `{err.code}`" + (f": pin `{pin}`" if pin else "")


def readme_table() -> str:
    """The README's table: each release of the release table against each default host driver."""
    head = ["Triton release", "CUDA", "runs from driver", *(c for c, _ in README_COLUMNS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for release in tables.release_versions():
        cuda = release_cuda(release) or "?"
        floor = cuda_floor(cuda.split(".")[0])
        cells = [_cell(release, families[0]) for _, families in README_COLUMNS]
        lines.append("| " + " | ".join([release, cuda, str(floor), *cells]) + " |")
    return "\n".join(lines) + "\n"
