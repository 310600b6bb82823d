"""Split builds: ``--formats`` (build only models of some formats) and ``--merge-manifest`` (take the
entries of another build, e.g. the TensorRT build on a GPU, into this build's manifest).

The merge rule: a declared model this build does not build (its format is filtered out, or it was
skipped as optional) takes its entry from the merged manifest; so does a multi-model endpoint's
target model whose models are not all built here, and a single-model endpoint whose models are not
all built here. An entry both manifests have must agree (same sha256: the archive or repository
hash of an endpoint or target model, the config and file hashes of a model), else the build fails
naming both manifests. The merged manifest must have been built for the same ``triton_version``
and ``artifact_location``. Paths in merged entries are rewritten relative to this build's output
directory.

Shard manifests (schema 4 records ``shard: {index, count}``) are a set: when any merged manifest is one,
:func:`check_shard_set` refuses (``IncompleteShardSet``, before anything is written) a set that misses a
shard of the plan or a declared model this build would build, naming the shards and models, unless
``build_missing`` (``--build-missing``) lets this build export them itself, each with a warning.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from cdk_triton.config import formats
from cdk_triton.config.declaration import BuildSpec
from cdk_triton.config.manifest import (
    EndpointEntry,
    Manifest,
    ModelEntry,
    Sample,
    ShardInfo,
    TargetModel,
    read_manifest,
)
from cdk_triton.errors import BuildError, TritonValidationError


def parse_formats(given: str | Iterable[str] | None) -> frozenset[str] | None:
    """``"onnx,python"`` (or a list) -> a set of formats; None keeps every format."""
    if given is None:
        return None
    items = given.split(",") if isinstance(given, str) else list(given)
    out = frozenset(f.strip() for f in items if f.strip())
    unknown = sorted(out - set(formats.names()))
    if unknown or not out:
        raise TritonValidationError(
            "UnknownFormat",
            prop="--formats",
            value=",".join(unknown) if unknown else "",
            problem="is not a model format" if unknown else "names no format",
            allowed=formats.listed(),
            fix=f"list formats separated by commas, e.g. --formats {','.join(formats.where(gpu_only=False))}",
        )
    return out


def filter_formats(spec: BuildSpec, names: list[str], selected: frozenset[str] | None) -> list[str]:
    """The models of ``names`` this build builds: their format is ``selected`` and, for an ensemble,
    every step is built too (its config and parity need the steps' artifacts)."""
    if selected is None:
        return names
    kept: list[str] = []
    for n in names:  # steps before ensembles
        m = spec.model(n)
        if m.format in selected and all(s.model in kept for s in m.steps):
            kept.append(n)
    return kept


def read_merged(path: str | os.PathLike[str], spec: BuildSpec) -> Manifest:
    """Read ``--merge-manifest``; refuse one built for another release or artifact location."""
    merged = read_manifest(path)
    ours, theirs = spec.artifact_location, merged.artifact_location
    for what, a, b in (
        ("triton_version", spec.triton_version, merged.triton_version),
        ("artifact_location", ours.uri, theirs.uri),
    ):
        if a != b:
            raise BuildError(
                f"--merge-manifest {merged.path}: its {what} is {b!r} but this build's is {a!r}; merge only "
                "manifests built from the same declaration",
                code="ManifestMergeMismatch",
            )
    return merged


def read_each(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], spec: BuildSpec
) -> list[Manifest]:
    """Read every ``--merge-manifest`` (repeatable), each checked by :func:`read_merged`."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    return [read_merged(p, spec) for p in items]


def read_all(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], spec: BuildSpec
) -> tuple[Manifest, dict[str, Path]]:
    """:func:`join` of :func:`read_each`."""
    return join(read_each(paths, spec))


def join(manifests: Sequence[Manifest]) -> tuple[Manifest, dict[str, Path]]:
    """Join the manifests read by :func:`read_each` into one manifest (paths made absolute, so each still
    names its own build's files); an entry two of them hold must agree. Returns it with, per model, the
    output directory of the manifest holding it (whose cache the build takes the model from instead of
    exporting it)."""
    dirs = {n: m.base_dir for m in reversed(manifests) for n in m.models}
    if len(manifests) == 1:
        return replace(manifests[0], shard=None), dirs
    models: dict[str, ModelEntry] = {}
    endpoints: dict[str, EndpointEntry] = {}
    for m in manifests:
        for name, entry in m.models.items():
            entry = replace(entry, sample=_sample(entry.sample, m, None))
            if name in models and model_sha(models[name]) != model_sha(entry):
                raise _conflict(f"model '{name}'", model_sha(models[name]), model_sha(entry), m)
            models.setdefault(name, entry)
        for name, ep in m.endpoints.items():
            ep = _absolute_endpoint(ep, m)
            have = endpoints.get(name)
            if have is None:
                endpoints[name] = ep
            elif have.hosting_mode.loads_on_demand and ep.hosting_mode.loads_on_demand:
                for t, target in ep.target_models.items():
                    mine = have.target_models.get(t)
                    if mine is not None and mine.sha256 != target.sha256:
                        raise _conflict(
                            f"endpoint '{name}' target model '{t}'", mine.sha256, target.sha256, m
                        )
                endpoints[name] = replace(have, target_models={**ep.target_models, **have.target_models})
            elif have.sha256 != ep.sha256:
                raise _conflict(f"endpoint '{name}'", have.sha256 or "", ep.sha256 or "", m)
    joined = replace(
        manifests[0],
        models=models,
        endpoints=endpoints,
        uploaded=all(m.uploaded for m in manifests),
        shard=None,
    )
    return joined, dirs


def check_shard_set(
    manifests: Sequence[Manifest], spec: BuildSpec, names: Sequence[str], *, build_missing: bool
) -> list[str]:
    """When any of ``manifests`` is a shard manifest: the models of ``names`` (what this build builds)
    that no manifest holds, in build order, each a shard's model left out or in no shard. Without
    ``build_missing`` a missing shard of the plan or such a model is ``IncompleteShardSet`` naming them
    (raised before anything is written); with it they are returned (this build exports them). Manifests
    without a shard (a whole build, the GPU build's ``--formats tensorrt``, schema 1 to 3) are not a set:
    nothing is checked when none is a shard manifest (returns [])."""
    from cdk_triton.builder import shards

    infos: list[tuple[ShardInfo, Manifest]] = [(m.shard, m) for m in manifests if m.shard is not None]
    if not infos:
        return []
    counts = sorted({i.count for i, _ in infos})
    if len(counts) > 1:
        listing = ", ".join(f"{m.path} ({i.arg})" for i, m in infos)
        raise BuildError(
            f"--merge-manifest: the shard manifests come from plans of different N ({listing}); merge the "
            "shards of one plan (every --shard I/N of one N)",
            code="IncompleteShardSet",
        )
    count = counts[0]
    shards.check_count(spec, count, prop="--merge-manifest shard", value=f"N={count}")
    held = {n for m in manifests for n in m.models}
    plan = shards.assign(spec, count)
    where = {n: i for i, models in enumerate(plan) for n in models}
    wanted = set(names)
    present = {i.index for i, _ in infos}
    absent = [i for i in range(count) if i not in present and wanted.intersection(plan[i])]
    missing = [n for n in names if n not in held]
    if not missing and not absent:
        return []
    if build_missing:
        return missing
    shard_text = ", ".join(f"{i}/{count}" for i in absent) or "none"
    by_shard: dict[int, list[str]] = {}
    for n in missing:
        by_shard.setdefault(where[n], []).append(n)
    model_text = "; ".join(
        f"shard {i}/{count}: {', '.join(ms[:20])}{f' (+{len(ms) - 20} more)' if len(ms) > 20 else ''}"
        for i, ms in sorted(by_shard.items())
    )
    raise BuildError(
        f"--merge-manifest: the shard set of plan N={count} is incomplete: shards missing: {shard_text}; "
        f"{len(missing)} declared models in no merged manifest: {model_text or 'none'}; pass every shard's "
        "manifest (rebuild the failed shards with --shard I/N), or add --build-missing to export them in "
        "this build (each with a warning)",
        code="IncompleteShardSet",
    )


def _absolute_endpoint(ep: EndpointEntry, m: Manifest) -> EndpointEntry:
    targets = {
        t: replace(v, local_path=str(m.resolve(v.local_path)), sample=_sample(v.sample, m, None))
        for t, v in ep.target_models.items()
    }
    return replace(
        ep,
        local_path=str(m.resolve(ep.local_path)) if ep.local_path else None,
        sample=_sample(ep.sample, m, None),
        target_models=targets,
    )


def _conflict(what: str, ours: str, theirs: str, merged: Manifest) -> BuildError:
    return BuildError(
        f"{what} differs between this build ({ours[:12]}) and --merge-manifest {merged.path} ({theirs[:12]}); "
        "rebuild one of them from the same sources and tools",
        code="ManifestMergeConflict",
    )


def model_sha(entry: ModelEntry) -> str:
    """One hash of what a model entry holds: its config and files."""
    payload = json.dumps({"config": entry.config_sha256, "files": entry.files}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _rel(path: str, merged: Manifest, out: Path | None) -> str:
    """A path of ``merged`` relative to ``out`` (absolute when ``out`` is None)."""
    full = merged.resolve(path)
    return str(full) if out is None else os.path.relpath(full, out)


def _sample(s: Sample | None, merged: Manifest, out: Path | None) -> Sample | None:
    if s is None:
        return None
    return replace(
        s,
        request=_rel(s.request, merged, out),
        response=_rel(s.response, merged, out) if s.response else None,
    )


def merged_model(merged: Manifest, name: str, out: Path) -> ModelEntry | None:
    m = merged.models.get(name)
    return None if m is None else replace(m, sample=_sample(m.sample, merged, out))


def merged_target(merged: Manifest, endpoint: str, root: str, out: Path) -> TargetModel | None:
    ep = merged.endpoints.get(endpoint)
    t = ep.target_models.get(root) if ep is not None and ep.per_model_archives else None
    if t is None:
        return None
    return replace(t, local_path=_rel(t.local_path, merged, out), sample=_sample(t.sample, merged, out))


def merged_endpoint(merged: Manifest, endpoint: str, out: Path) -> EndpointEntry | None:
    ep = merged.endpoints.get(endpoint)
    if ep is None or ep.per_model_archives:
        return None
    return replace(
        ep,
        local_path=_rel(ep.local_path, merged, out) if ep.local_path else None,
        sample=_sample(ep.sample, merged, out),
    )


def merge_entries(
    merged: Manifest,
    spec: BuildSpec,
    out: Path,
    models: dict[str, ModelEntry],
    endpoints: dict[str, EndpointEntry],
) -> tuple[dict[str, ModelEntry], dict[str, EndpointEntry]]:
    """This build's entries plus the merged manifest's entries for the declared models and endpoints
    this build did not build; entries both have must agree."""
    models = dict(models)
    for name, theirs in merged.models.items():
        if name not in spec.model_names:
            continue
        if name in models:
            a, b = model_sha(models[name]), model_sha(theirs)
            if a != b:
                raise _conflict(f"model '{name}'", a, b, merged)
            continue
        models[name] = merged_model(merged, name, out)  # type: ignore[assignment]
    endpoints = dict(endpoints)
    for name, ep in merged.endpoints.items():
        mine = endpoints.get(name)
        if mine is None:
            continue
        if not ep.per_model_archives and not mine.per_model_archives and ep.sha256 != mine.sha256:
            raise _conflict(f"endpoint '{name}'", mine.sha256 or "", ep.sha256 or "", merged)
        for t, target in ep.target_models.items():
            have = mine.target_models.get(t)
            if have is not None and have.sha256 != target.sha256:
                raise _conflict(f"endpoint '{name}' target model '{t}'", have.sha256, target.sha256, merged)
    return models, endpoints
