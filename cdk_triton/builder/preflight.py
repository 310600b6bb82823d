"""Check the build before anything is written: selection, dependency order, target compatibility
(ONNX opsets and IR versions, TorchScript versions, python model imports, TensorRT plans for the
endpoints' GPUs) and the cache key of every model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cdk_triton.builder import compat
from cdk_triton.builder.cache import ModelCache, artifact_key, config_key, model_key, tool_versions
from cdk_triton.builder.context import BuildContext, ModelRecord, Resolved, StepOutput, StepStatus
from cdk_triton.builder.export import tensorrt as trt_export
from cdk_triton.builder.export.base import exporter_of
from cdk_triton.builder.reference import forget_local_modules, resolve_factory, source_fingerprint
from cdk_triton.config import advisories, default_release
from cdk_triton.config.declaration import BuildSpec, EndpointSpec, ModelSpec
from cdk_triton.errors import BuildError, TritonValidationError, raise_all


def select(spec: BuildSpec, only: str | None) -> tuple[list[EndpointSpec], list[str]]:
    """The endpoints and models ``--only`` names (everything when None), models with their steps."""
    if only is None:
        found: dict[str, None] = {}  # insertion-ordered set: a fleet has thousands of names
        for m in spec.models:
            found.update(dict.fromkeys(spec.closure(m.name)))
        return list(spec.endpoints), list(found)
    ep_names = [e.name for e in spec.endpoints]
    if only in ep_names:
        endpoints = [e for e in spec.endpoints if e.name == only]
        roots = list(endpoints[0].models)
    elif only in spec.model_names:
        endpoints = [e for e in spec.endpoints if any(only in spec.closure(r) for r in e.models)]
        roots = [only] + [r for e in endpoints for r in e.models]
    else:
        raise TritonValidationError(
            "UnknownOnlyModel",
            prop="--only",
            value=only,
            problem="is not a declared model or endpoint",
            allowed=", ".join(spec.model_names + ep_names),
            fix="name a model or endpoint from the declaration",
        )
    chosen: dict[str, None] = {}
    for r in roots:
        chosen.update(dict.fromkeys(spec.closure(r)))
    return endpoints, list(chosen)


def order(spec: BuildSpec, names: list[str]) -> list[str]:
    """Dependency order: steps before ensembles, callees before the python models calling them."""
    out: dict[str, None] = {}  # insertion-ordered set

    def visit(n: str) -> None:
        if n in out:
            return
        for d in spec.model(n).dependencies:
            visit(d)
        out[n] = None

    for n in names:
        visit(n)
    return list(out)


def run(ctx: BuildContext) -> StepOutput:
    """Check every selected model against the target and compute its cache key (raises before
    anything is written); a model whose key is cached gets its record, unless ``force``."""
    check_advisories(ctx)
    ctx.tools = tool_versions()
    forgotten: set[str] = set()
    for name in ctx.names:
        _resolve(ctx, name, forgotten)
    cached = sum(1 for p in ctx.resolved.values() if p.record is not None)
    return StepOutput(
        step="preflight",
        status=StepStatus.OK if cached < len(ctx.resolved) else StepStatus.UP_TO_DATE,
        done=len(ctx.resolved),
        up_to_date=cached,
    )


def check_advisories(ctx: BuildContext) -> None:
    """The target release against NVIDIA's advisories (``config.advisories``, the rule synth applies too):
    a critical one not acknowledged in ``acknowledged_advisories`` raises; lower ones are build warnings."""
    spec = ctx.spec
    where = f"{ctx.config_path}: triton_version" if ctx.config_path else "triton_version"
    found = advisories.check_release(
        spec.triton_version,
        acknowledged=spec.acknowledged_advisories,
        region=None,
        path=where,
        library=default_release.library_acknowledgments(spec.triton_version)
        if spec.library_acknowledgments
        else None,
        library_by=default_release.BY,
    )
    raise_all(found.errors)
    for code, message in found.warnings:
        ctx.warn(f"{message} [{code}]", detail=found.details.get(code))
    if found.by_library:
        ctx.warn(
            f"{default_release.warning(spec.triton_version, found.by_library)} [{default_release.WARNING}]",
            detail=default_release.detail(spec.triton_version, found.by_library),
        )


def _resolve(ctx: BuildContext, name: str, forgotten: set[str]) -> None:
    """Plan one model (its steps first). The key is computed without importing anything (the factory's
    sources are hashed with ``ast``); only a model that must be exported is checked against the target
    here: its factory imported, an ONNX file read, TensorRT looked for."""
    if name in ctx.resolved:
        return
    spec = ctx.spec
    m = spec.model(name)
    for d in m.dependencies:
        _resolve(ctx, d, forgotten)
    exporter = exporter_of(m)
    if m.tensorrt.plans and m.row.builds_plans:
        trt_export.check_prebuilt_plans(spec, m)
    art = artifact_key(
        m,
        fingerprint=source_fingerprint(spec, m),
        triton_version=spec.triton_version,
        tools=ctx.tools,
        step_keys={d: ctx.resolved[d].artifact_key for d in m.dependencies},
    )
    key = model_key(art, config_key(m))
    cached = None if ctx.force else _trusted(ctx, name, key, ctx.cache.get(name, key))
    reuse = None
    if not cached and not ctx.force:
        found = ctx.cache.find_artifact(name, art)
        reuse = _trusted(ctx, name, found["source_sha256"], found) if found else None
    take = _mergeable(ctx, name, key) if cached is None and reuse is None and not ctx.force else None
    skip = None
    if cached is None and reuse is None and take is None:  # to be exported: check it now
        skip = exporter.skip_reason(spec, m)
        if skip is None:
            if m.source and m.source.factory and m.source.factory not in forgotten:
                forget_local_modules(spec, m)  # import the factory's files as they are now
                forgotten.add(m.source.factory)
            _check_source(spec, m)
            exporter.check_source(spec, m)
    if any(ctx.resolved[d].skip_reason for d in m.dependencies):
        skip = f"step of '{m.name}' skipped: " + "; ".join(
            str(ctx.resolved[d].skip_reason) for d in m.dependencies if ctx.resolved[d].skip_reason
        )
        if not m.optional:
            raise BuildError(f"model '{m.name}' needs a skipped model: {skip}", code="TensorRTUnavailable")
    ctx.resolved[name] = Resolved(
        spec=m,
        key=key,
        record=ModelRecord.from_dict(cached) if cached and not skip else None,
        skip_reason=skip,
        artifact_key=art,
        reuse=ModelRecord.from_dict(reuse) if reuse and not skip else None,
        take=take if not skip else None,
    )
    if skip is None:
        for w in exporter.warnings(spec, m, ctx.tools):
            ctx.warn(w)
    for w in m.warnings():
        ctx.warn(w)


def _mergeable(ctx: BuildContext, name: str, key: str) -> Path | None:
    """The output directory of a ``--merge-manifest`` build whose cache holds this model under the same
    key (taken by the export step instead of exporting it), else None."""
    out = ctx.merged_dirs.get(name)
    entry = ctx.merged.models.get(name) if ctx.merged is not None else None
    if out is None or entry is None or entry.source_sha256 != key:
        return None
    return out if ModelCache(out).get(name, key) is not None else None


def _trusted(ctx: BuildContext, name: str, key: str, record: dict[str, Any] | None) -> dict[str, Any] | None:
    """``record`` when its entry's files match it (size and mtime as recorded, or hashed in full
    with --verify / --upload), else None with a warning naming the entry (it is rebuilt)."""
    entry = ctx.cache.entry_dir(name, key)
    if record is None:
        if entry.is_dir():
            ctx.warn(f"cache entry {entry} of model '{name}' has no valid record: rebuilding it")
        return None
    full = ctx.verify or ctx.upload
    problem = ctx.cache.check(name, key, record, full=full)
    if problem is not None:
        ctx.warn(f"cache entry {entry} of model '{name}' is corrupt ({problem}): rebuilding it")
        return None
    if full:
        ctx.verified.add(name)
    return record


def _check_source(spec: BuildSpec, m: ModelSpec) -> None:
    """Refuse sources the target cannot load, by source kind: ONNX files, factories (the format's
    exporter checks the rest: python model imports, opsets)."""
    if m.source and m.source.onnx:
        _check_onnx_file(spec, m)
    if m.source and m.source.factory:
        resolve_factory(spec, m)


def _check_onnx_file(spec: BuildSpec, m: ModelSpec) -> None:
    import onnx

    assert m.source is not None and m.source.onnx is not None
    path = spec.resolve_path(m.source.onnx)
    try:
        proto = onnx.load(str(path), load_external_data=False)
    except Exception as exc:
        raise BuildError(
            f"model '{m.name}': {path} is not an ONNX model ({exc})", code="OnnxInvalid"
        ) from exc
    compat.check_onnx_model(proto, spec.triton_version, name=m.name)
    inits = {i.name for i in proto.graph.initializer}
    for group, declared, graph in (
        ("inputs", m.inputs, [v.name for v in proto.graph.input if v.name not in inits]),
        ("outputs", m.outputs, [v.name for v in proto.graph.output]),
    ):
        if sorted(t.name for t in declared) != sorted(graph):
            raise BuildError(
                f"model '{m.name}': the ONNX graph's {group} are {graph}, the declaration says "
                f"{[t.name for t in declared]}; declare the graph's names",
                code="TensorNameMismatch",
            )
