"""The export step: every resolved model that is not cached is exported, read back, checked against
its eager reference on the declared sample (parity) and committed to the cache (temp dir + rename).

A dispatcher: the format's registry row names its exporter module (``Exporter`` in ``base.py``),
which makes the model directory; this step owns the cache (temp dir, commit, space guard), the
reconfiguration of a cached artifact and the record."""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from cdk_triton.builder import parallel, space
from cdk_triton.builder.cache import ModelCache
from cdk_triton.builder.context import BuildContext, ModelRecord, Resolved, StepOutput, StepStatus
from cdk_triton.builder.declarations import load_declaration
from cdk_triton.builder.export.base import exporter_of
from cdk_triton.builder.package import check_tree, copy_model_dir, tree_digest
from cdk_triton.builder.pbtxt import reconfigure, sha256_text, to_dict, to_pbtxt
from cdk_triton.builder.report import Reporter
from cdk_triton.config.declaration import BuildSpec
from cdk_triton.errors import BuildError


def export_models(ctx: BuildContext) -> StepOutput:
    """Export every planned model without a cached record, steps before their ensembles, in
    ``ctx.jobs`` worker processes (``parallel``); a failing model stops no other model, and the step
    then fails naming every failure."""
    todo = [p for p in ctx.resolved.values() if p.record is None and p.skip_reason is None]
    ctx.reporter.start("export", len(todo), "models")
    for p in todo:  # planned in dependency order; a new config.pbtxt only, no export
        if p.reuse is not None:
            p.record = _reconfigure(ctx, p, p.reuse)
            ctx.reconfigured.add(p.spec.name)
            ctx.reporter.advance("export", 1, what=p.spec.name)
            _exported(ctx, p.spec.name)
        elif p.take is not None:  # --merge-manifest: another build's cache entry, copied
            _take(ctx, p, p.take)
    names = [p.spec.name for p in todo if p.record is None]
    failures: list[parallel.Failure] = []
    # GPU formats (TensorRT: one GPU, engines not bit-reproducible) and what needs them stay here, after
    gpu = {n for n in names if any(ctx.resolved[c].spec.row.gpu_only for c in ctx.spec.closure(n))}
    here, away = [n for n in names if n in gpu], [n for n in names if n not in gpu]
    # auto: workers only when the queue repays their start (the formats' measured export seconds)
    jobs = ctx.jobs if ctx.jobs is not None else parallel.choose_jobs([_format(ctx, n) for n in away])
    timed: dict[str, list[float]] = {}
    starts: list[float] = []
    if jobs > 1 and len(away) > 1:
        _export_in_workers(ctx, away, min(jobs, len(away)), failures, timed, starts)
    else:
        here = names
    first = _export_here(ctx, here, failures, timed)
    parallel.record_timings(timed, starts, first)
    ctx.reporter.finish("export")
    if failures:
        raise parallel.failures_error(failures)
    ctx.result.reconfigured = len(ctx.reconfigured)
    ctx.result.skipped_models = {n: p.skip_reason for n, p in ctx.resolved.items() if p.skip_reason}
    for n, why in ctx.result.skipped_models.items():
        ctx.warn(f"model '{n}' skipped (optional): {why}")
    return StepOutput(
        step="export",
        status=StepStatus.OK if todo else StepStatus.UP_TO_DATE,
        done=len(ctx.fresh),
        up_to_date=sum(1 for p in ctx.resolved.values() if p.record is not None) - len(todo),
    )


def _take(ctx: BuildContext, p: Resolved, out: Path) -> None:
    """Copy a merged build's cache entry of ``p`` (hashed in full first); a corrupt one is exported
    here instead, with a warning."""
    record = ctx.cache.take(ModelCache(out), p.spec.name, p.key)
    if record is None:
        ctx.warn(
            f"model '{p.spec.name}': the cache entry of --merge-manifest {out} is missing or corrupt: exporting it"
        )
        return
    p.record = ModelRecord.from_dict(record)
    ctx.verified.add(p.spec.name)
    ctx.reporter.advance("export", 1, what=p.spec.name)
    _exported(ctx, p.spec.name)


def _exported(ctx: BuildContext, name: str) -> None:
    """Model ``name`` has its record: tell whoever asked (the release-runtime probe takes it now)."""
    if ctx.after_export is not None:
        ctx.after_export(name)


def _deps(ctx: BuildContext, name: str) -> list[str]:
    return [s.model for s in ctx.resolved[name].spec.steps]


def _format(ctx: BuildContext, name: str) -> str:
    return ctx.resolved[name].spec.format


def _export_here(
    ctx: BuildContext,
    names: list[str],
    failures: list[parallel.Failure],
    timed: dict[str, list[float]] | None = None,
) -> float | None:
    """Export in this process, in dependency order (``--jobs 1``, or one model to export); each
    model's seconds go to ``timed`` by format (what ``--jobs auto`` weighs next time). Returns what the
    first export cost beyond the median of its format (torch imported, the exporter's first run), when
    at least 3 models of that format were exported here (else None)."""
    failed = {f.model for f in failures}
    mine: list[tuple[str, float]] = []
    for n in names:
        p = ctx.resolved[n]
        bad = [d for d in _deps(ctx, n) if d in failed]
        ctx.reporter.model(n, "exporting")
        t0 = time.perf_counter()
        try:
            if bad:
                raise BuildError(f"model '{n}' was not built: {', '.join(bad)} failed", code="ModelsFailed")
            p.record = export_one(ctx, p)
        except BuildError as exc:
            failed.add(n)
            failures.append(parallel.Failure(model=n, error=exc))
            ctx.reporter.model(n, "failed", detail=str(exc))
            continue
        ctx.fresh.add(n)
        seconds = time.perf_counter() - t0
        mine.append((_format(ctx, n), seconds))
        if timed is not None:
            timed.setdefault(_format(ctx, n), []).append(seconds)
        ctx.reporter.model(n, "exported", seconds=seconds)
        _exported(ctx, n)
    if not mine:
        return None
    same = sorted(sec for f, sec in mine if f == mine[0][0])
    return max(0.0, mine[0][1] - same[len(same) // 2]) if len(same) >= 3 else None


def _export_in_workers(
    ctx: BuildContext,
    names: list[str],
    jobs: int,
    failures: list[parallel.Failure],
    timed: dict[str, list[float]] | None = None,
    starts: list[float] | None = None,
) -> None:
    """Export ``names`` on ``jobs`` worker processes; records come back in completion order and are
    kept by name (the outputs do not depend on the order). Each model's seconds go to ``timed`` by
    format, and each worker's start (its first model's finish, less a model's median export) to
    ``starts``."""
    assert ctx.config_path is not None, "a parallel export needs the declaration file"
    warnings: dict[str, list[str]] = {}

    def task(n: str) -> dict[str, Any]:
        return {
            "name": n,
            "config": str(ctx.config_path),
            "artifact_location": ctx.spec.artifact_location.uri,
            "out": str(ctx.out),
            "force": ctx.force,
            "tools": ctx.tools,
            "closure": {
                c: {
                    "key": ctx.resolved[c].key,
                    "artifact_key": ctx.resolved[c].artifact_key,
                    "record": r.to_dict() if (r := ctx.resolved[c].record) is not None else None,
                }
                for c in ctx.spec.closure(n)
            },
        }

    def done(d: parallel.Done) -> None:
        if d.error is not None:
            failures.append(parallel.Failure(model=d.name, error=d.error))
            ctx.reporter.model(d.name, "failed", detail=str(d.error))
            return
        assert d.record is not None
        ctx.resolved[d.name].record = ModelRecord.from_dict(d.record)
        ctx.fresh.add(d.name)
        warnings[d.name] = d.warnings
        ctx.reporter.model(d.name, "exported", seconds=d.seconds)
        if timed is not None:
            timed.setdefault(_format(ctx, d.name), []).append(d.seconds)
        if d.first_of_worker is not None:
            firsts.append((d.name, d.first_of_worker))
        _exported(ctx, d.name)

    firsts: list[tuple[str, float]] = []
    parallel.run_workers(
        export_in_worker,
        task,
        names,
        {n: _deps(ctx, n) for n in names},
        jobs=jobs,
        on_start=lambda n: ctx.reporter.model(n, "exporting"),
        on_done=done,
    )
    if starts is not None and timed:
        for n, wall in firsts:
            typical = sorted(timed.get(_format(ctx, n), [0.0]))
            starts.append(max(0.0, wall - typical[len(typical) // 2]))
    failures.sort(key=lambda f: names.index(f.model))
    for n in names:  # in build order, whatever order the workers finished in
        for w in warnings.get(n, []):
            ctx.warn(w)


def verify_members(ctx: BuildContext, names: list[str]) -> None:
    """Hash the cache entries of ``names`` in full before they are packaged (once per build); a corrupt
    entry is exported again, with a warning naming it."""
    for n in names:
        p = ctx.resolved[n]
        if n in ctx.verified or n in ctx.fresh or n in ctx.reconfigured or p.record is None:
            continue
        problem = check_tree(ctx.cache.entry_dir(n, p.key), p.record.files, None, None, full=True)
        if problem is not None:
            ctx.warn(
                f"cache entry {ctx.cache.entry_dir(n, p.key)} of model '{n}' is corrupt ({problem}): rebuilding it"
            )
            p.record = export_one(ctx, p)
            ctx.fresh.add(n)
        ctx.verified.add(n)


def _reconfigure(ctx: BuildContext, p: Resolved, cached: ModelRecord) -> ModelRecord:
    """A cached artifact with another configuration: copy it, regenerate config.pbtxt (no export)."""
    m = p.spec
    tmp = ctx.cache.new_temp_dir(m.name)
    try:
        shutil.rmtree(tmp)
        cfg = reconfigure(cached.exported.config, m)
        text = to_pbtxt(cfg)
        with space.guard(ctx.cache.entry_dir(m.name, p.key), lambda: space.tree_bytes(tmp)):
            copy_model_dir(ctx.cache.entry_dir(m.name, cached.source_sha256), tmp)
            (tmp / "config.pbtxt").unlink(missing_ok=True)  # a hard link to the cached file: replace it
            (tmp / "config.pbtxt").write_text(text, "utf-8")
        made = replace(cached.exported, config=to_dict(cfg), config_sha256=sha256_text(text))
        record = replace(cached, source_sha256=p.key, files=tree_digest(tmp)[1], exported=made)
        ctx.cache.commit(m.name, p.key, tmp, record.to_dict())
        return record
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def export_one(ctx: BuildContext, p: Resolved) -> ModelRecord:
    """Make the model directory with the format's exporter and commit it to the cache (in the build's
    process or in a worker: ``parallel.export_in_worker``)."""
    m = p.spec
    tmp = ctx.cache.new_temp_dir(m.name)
    try:
        with space.guard(ctx.cache.entry_dir(m.name, p.key), lambda: space.tree_bytes(tmp)):
            made = exporter_of(m).export_model(ctx, m, tmp)
        record = ModelRecord(
            name=m.name,
            format=m.format,
            source_sha256=p.key,
            tool_versions=ctx.tools,
            platform=m.row.platform,
            backend=m.row.backend,
            files=tree_digest(tmp)[1],
            exported=made,
            artifact_key=p.artifact_key,
        )
        ctx.cache.commit(m.name, p.key, tmp, record.to_dict())
        return record
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


#: what a worker keeps between its models: the declaration, loaded once per (file, location)
_WORKER_SPECS: dict[tuple[str, str], BuildSpec] = {}


def export_in_worker(task: dict[str, Any]) -> dict[str, Any]:
    """In a ``--jobs`` worker: rebuild the context from ``task``, export the model, commit it to the cache."""
    name = task["name"]

    def run() -> dict[str, Any]:
        ctx = _worker_context(task)
        record = export_one(ctx, ctx.resolved[name])
        return {"record": record.to_dict(), "warnings": ctx.warnings}

    return parallel.worker_result(name, run)


def _worker_context(task: dict[str, Any]) -> BuildContext:
    key = (task["config"], task["artifact_location"])
    spec = _WORKER_SPECS.get(key)
    if spec is None:
        spec = _WORKER_SPECS[key] = load_declaration(
            task["config"], artifact_location=task["artifact_location"]
        )
    ctx = BuildContext(spec=spec, out=Path(task["out"]), reporter=Reporter(False), force=task["force"])
    ctx.tools = task["tools"]
    for n, r in task["closure"].items():
        ctx.resolved[n] = Resolved(
            spec=spec.model(n),
            key=r["key"],
            record=ModelRecord.from_dict(r["record"]) if r["record"] is not None else None,
            artifact_key=r["artifact_key"],
        )
    return ctx
