"""The deploy verification's sample of a large MME, chosen at synth, and its spec kept in S3.

Which TargetModels a deploy checks (``select``):

1. every *changed* TargetModel: one whose archive sha256 differs from the one in the manifest of the
   deploy before (``VerificationSample.baseline``), or that the baseline lacks; with no baseline every
   TargetModel counts as changed (a first deploy, or a deploy whose predecessor is unknown: synth
   cannot read AWS);
2. plus ``others_percent`` of the unchanged ones, drawn by a hash of their name and the archive map
   (the same inputs draw the same models, so an unchanged deploy keeps its logical id; a new build
   draws others);
3. capped by what the instances' cache holds: the sum of the chosen models' memory (the manifest's
   ``memory_bytes``, else their size) stays within the GPU memory of all instances (GPU types; CPU
   types: no memory cap), changed models first, and at most ``max_checks`` models.

Everything else is counted and reported (the handler's coverage line: ``checked C of T; skipped: ...``).
Up to ``INLINE_CHECKS_LIMIT`` checks with nothing left out stay in the custom resource's properties as
before; a bigger spec is written to a content-addressed JSON file that CDK publishes as an asset, and
the properties carry its URI and sha256 (the handler verifies the hash before it trusts the checks).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from constructs import Construct

from cdk_triton.config import residency
from cdk_triton.config.manifest import Manifest, read_manifest
from cdk_triton.constructs.artifacts import ModelArtifacts
from cdk_triton.constructs.checks.verification import check_verification_sample
from cdk_triton.constructs.errors import located
from cdk_triton.errors import TritonValidationError, raise_at

#: The context key naming the baseline manifest when ``VerificationSample.baseline`` is unset.
BASELINE_CONTEXT = "cdk-triton:verification-baseline"
#: More checks than this, or a sample that leaves some out, and the spec goes to S3.
INLINE_CHECKS_LIMIT = 20
DEFAULT_OTHERS_PERCENT = 10.0
DEFAULT_MAX_CHECKS = 500
DEFAULT_PARALLELISM = 8
GIB = 1024**3


@dataclass(frozen=True, kw_only=True, slots=True)
class VerificationSample:
    """Which TargetModels the deploy verification of a multi-model endpoint invokes.

    Attributes:
        baseline: the build manifest of the deploy before (path or ``Manifest``): TargetModels whose
            archive sha256 is unchanged from it are "others". Default: the path in the context key
            ``cdk-triton:verification-baseline`` if set, else none: every TargetModel counts as changed
            (then the caps below bound the sample).
        others_percent: the share of the unchanged TargetModels also checked (0..100). Default: 10.
        max_checks: the most TargetModels checked in one deploy (1..5000). Default: 500.
        parallelism: checks the function runs at once (1..64). Default: 8.
    """

    baseline: Manifest | str | os.PathLike[str] | None = None
    others_percent: float = DEFAULT_OTHERS_PERCENT
    max_checks: int = DEFAULT_MAX_CHECKS
    parallelism: int = DEFAULT_PARALLELISM


@dataclass(frozen=True, kw_only=True, slots=True)
class Selection:
    """The sample: the logical names checked, which of them changed, the total and what was left out."""

    sampled: tuple[str, ...]
    changed: tuple[str, ...]
    total: int
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return len(self.sampled) == self.total


def target_model_facts(manifest: Manifest, endpoint: str) -> dict[str, tuple[str, int]]:
    """logical name -> (archive sha256, memory bytes: the manifest's memory, else size, of its models)."""
    entry = manifest.endpoint(endpoint)
    if not entry.hosting_mode.loads_on_demand:
        return {}
    facts: dict[str, tuple[str, int]] = {}
    for name, tm in entry.target_models.items():
        memory = 0
        for m in tm.models:
            model = manifest.models.get(m)
            memory += residency.model_bytes(model)[0] or 0
        facts[name] = (tm.sha256, memory or tm.size_bytes)
    return facts


def baseline_archives(baseline: Manifest | str | os.PathLike[str], endpoint: str) -> dict[str, str]:
    """logical name -> archive sha256 of ``endpoint`` in the baseline manifest (empty if it lacks it)."""
    manifest = baseline if isinstance(baseline, Manifest) else read_manifest(Path(baseline))
    entry = manifest.endpoints.get(endpoint)
    return {n: tm.sha256 for n, tm in entry.target_models.items()} if entry else {}


def _rank(seed: str, name: str) -> str:
    return hashlib.sha256(f"{seed}\0{name}".encode()).hexdigest()


def select(
    names: Sequence[str],
    *,
    facts: Mapping[str, tuple[str, int]],
    baseline: Mapping[str, str] | None,
    capacity_bytes: int | None,
    sample: VerificationSample,
) -> Selection:
    """The sample of ``names`` (the TargetModels with a recorded check): see the module docstring."""
    seed = hashlib.sha256(
        json.dumps(sorted((n, facts.get(n, ("", 0))[0]) for n in names)).encode()
    ).hexdigest()
    ranked = sorted(names, key=lambda n: _rank(seed, n))
    changed = [n for n in ranked if baseline is None or baseline.get(n) != facts.get(n, ("", 0))[0]]
    changed_set = set(changed)
    unchanged = [n for n in ranked if n not in changed_set]
    drawn = unchanged[: int(len(unchanged) * sample.others_percent / 100 + 0.999999)]
    skipped = {"unchanged, not drawn": len(unchanged) - len(drawn)}
    chosen: list[str] = []
    used = 0
    over_cache = over_max = 0
    for n in changed + drawn:
        need = facts.get(n, ("", 0))[1]
        if len(chosen) >= sample.max_checks:
            over_max += 1
        elif capacity_bytes is not None and used + need > capacity_bytes:
            over_cache += 1
        else:
            chosen.append(n)
            used += need
    skipped["over the instances' cache"] = over_cache
    skipped["over max_checks"] = over_max
    order = {n: i for i, n in enumerate(names)}
    chosen_set = set(chosen)
    return Selection(
        sampled=tuple(sorted(chosen, key=order.__getitem__)),
        changed=tuple(sorted((n for n in changed if n in chosen_set), key=order.__getitem__)),
        total=len(names),
        skipped={k: v for k, v in skipped.items() if v},
    )


def endpoint_selection(
    artifacts: ModelArtifacts, names: Sequence[str], *, sample: VerificationSample, capacity_bytes: int | None
) -> Selection:
    """The sample of an MME read from a manifest (``recorded_checks`` refuses other artifacts).

    Raises the manifest readers' TritonValidationError (unlocated) for a baseline that cannot be read.
    """
    recorded = artifacts.recorded_manifest()
    if recorded is None:  # pragma: no cover - recorded_checks raised first
        raise TypeError("a verification sample needs ModelArtifacts.from_manifest(...)")
    manifest, key = recorded
    baseline = baseline_archives(sample.baseline, key) if sample.baseline is not None else None
    return select(
        names,
        facts=target_model_facts(manifest, key),
        baseline=baseline,
        capacity_bytes=capacity_bytes,
        sample=sample,
    )


def selection_at(
    scope: Construct,
    artifacts: ModelArtifacts,
    names: Sequence[str],
    *,
    sample: VerificationSample,
    gpu_memory_gib: int | None,
    instances: Any,
) -> Selection:
    """The MME's deploy sample of an endpoint at ``scope`` (changed + a share of the others, capped by the
    instances' cache): ``sample`` checked, its baseline the prop, else the context key
    :data:`BASELINE_CONTEXT`; the errors located at ``scope``."""
    raise_at(scope, check_verification_sample(sample))
    if sample.baseline is None:  # `cdk deploy -c cdk-triton:verification-baseline=<previous manifest>`
        context = scope.node.try_get_context(BASELINE_CONTEXT)
        sample = dataclasses.replace(sample, baseline=context) if context else sample
    try:
        return endpoint_selection(
            artifacts, names, sample=sample, capacity_bytes=cache_capacity(gpu_memory_gib, instances)
        )
    except TritonValidationError as err:
        raise located(scope, err) from None


def cache_capacity(gpu_memory_gib: int | None, instances: Any) -> int | None:
    """Bytes the MME's instances hold on GPU (None: unknown, no memory cap)."""
    if not gpu_memory_gib or not isinstance(instances, int) or instances < 1:
        return None
    return gpu_memory_gib * GIB * instances


def spec_document(checks: Sequence[dict[str, Any]], selection: Selection) -> bytes:
    """The S3 spec: every check with ``Sampled`` / ``Changed``, the total and what was left out."""
    sampled, changed = set(selection.sampled), set(selection.changed)
    doc = {
        "Version": 1,
        "Total": selection.total,
        "Skipped": selection.skipped,
        "Checks": [{**c, "Sampled": c["Model"] in sampled, "Changed": c["Model"] in changed} for c in checks],
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def write_spec(body: bytes) -> Path:
    """The spec as a content-addressed file (written to a temp name, then renamed into place)."""
    digest = hashlib.sha256(body).hexdigest()
    folder = Path(tempfile.gettempdir()) / "cdk-triton-verification"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"checks-{digest[:16]}.json"
    if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        os.replace(tmp, path)
    return path
