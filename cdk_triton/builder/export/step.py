"""The export step: every resolved model that is not cached is exported, read back, checked against
its eager reference on the declared sample (parity) and committed to the cache (temp dir + rename).

A dispatcher: the format's registry row names its exporter module (``Exporter`` in ``base.py``),
which makes the model directory; this step owns the cache (temp dir, commit, space guard), the
reconfiguration of a cached artifact and the record."""

from __future__ import annotations

import shutil
from dataclasses import replace

from cdk_triton.builder import space
from cdk_triton.builder.context import BuildContext, ModelRecord, Resolved, StepOutput, StepStatus
from cdk_triton.builder.export.base import exporter_of
from cdk_triton.builder.package import check_tree, copy_model_dir, tree_digest
from cdk_triton.builder.pbtxt import reconfigure, sha256_text, to_dict, to_pbtxt


def export_models(ctx: BuildContext) -> StepOutput:
    """Export every planned model without a cached record, in dependency order."""
    todo = [p for p in ctx.resolved.values() if p.record is None and p.skip_reason is None]
    ctx.reporter.start("export", len(todo), "models")
    for p in ctx.resolved.values():  # planned in dependency order
        if p.record is not None or p.skip_reason is not None:
            continue
        ctx.reporter.advance("export", 0, what=p.spec.name)
        if p.reuse is not None:
            p.record = _reconfigure(ctx, p, p.reuse)
            ctx.reconfigured.add(p.spec.name)
        else:
            p.record = _export(ctx, p)
            ctx.fresh.add(p.spec.name)
        ctx.reporter.advance("export", 1, what=p.spec.name)
    ctx.reporter.finish("export")
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
            p.record = _export(ctx, p)
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


def _export(ctx: BuildContext, p: Resolved) -> ModelRecord:
    """Make the model directory with the format's exporter and commit it to the cache."""
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
