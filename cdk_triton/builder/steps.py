"""The build: declarations -> exported, verified models -> repositories/archives -> S3 -> manifest.

A pipeline of steps sharing one :class:`~cdk_triton.builder.context.BuildContext`; each returns a
:class:`~cdk_triton.builder.context.StepOutput`. (1) preflight: validate, resolve sources, check target
compatibility, compute cache keys (nothing written yet); (2) export every model whose key is not
cached (temp dir + rename); (3) package each endpoint (SME repository directory or tar.gz, MME one
archive per target model); (4) optionally upload; (5) write the manifest and prune.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from cdk_triton.builder import (
    components,
    merge,
    outputs,
    parallel,
    portability,
    preflight,
    repository,
    shards,
    space,
)
from cdk_triton.builder.context import ENSEMBLE_PLACEHOLDER, BuildContext, BuildResult, StepOutput
from cdk_triton.builder.declarations import load_declaration
from cdk_triton.builder.export import step as export_step
from cdk_triton.builder.report import Reporter
from cdk_triton.builder.target_runtime import check_target_runtimes, start_probe, stop_probe
from cdk_triton.config import target_runtime as config_target_runtime
from cdk_triton.config.declaration import BuildSpec
from cdk_triton.config.manifest import Manifest, ShardInfo
from cdk_triton.errors import TritonValidationError

__all__ = ["ENSEMBLE_PLACEHOLDER", "STEPS", "BuildResult", "Reporter", "run_build"]

Step = Callable[[BuildContext], StepOutput]

#: the steps after planning, in order (planning raises before anything is written)
STEPS: tuple[Step, ...] = (
    outputs.prepare,
    start_probe,
    export_step.export_models,
    portability.check_devices,
    outputs.write_samples,
    check_target_runtimes,
    repository.package_endpoints,
    components.record_components,
    outputs.upload_artifacts,
    outputs.write_build_manifest,
    outputs.prune,
)


#: the steps that run with the cyclic garbage collector on (they import and run exporters)
UNPAUSED: tuple[Step, ...] = (export_step.export_models,)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a bookkeeping phase (reference counting still frees
    everything): a fleet's declaration, keys and manifest are ~10^5 objects and none in cycles, and
    the collector's passes over them were ~15% of a no-op build of 1,000 models."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def run_build(
    config_path: str | os.PathLike[str],
    *,
    out_dir: str | os.PathLike[str] | None = None,
    upload: bool = False,
    only: str | None = None,
    force: bool = False,
    progress: bool = True,
    artifact_location: str | None = None,
    s3_client: Any | None = None,
    formats: str | Iterable[str] | None = None,
    merge_manifest: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    verify: bool = False,
    jobs: int | str | None = 1,
    shard: str | shards.Shard | None = None,
    build_missing: bool = False,
    on_success: Callable[[BuildContext], None] | None = None,
    verbose: bool = False,
    shown_warnings: set[str] | None = None,
    target_runtime: bool | None = None,
) -> BuildResult:
    """Build every declared model and endpoint and write ``<out_dir>/manifest.json``.

    Args:
        config_path: the declaration (``build/models.yaml``).
        out_dir: where outputs go. Default: ``<yaml dir>/out``.
        upload: upload to the declared artifact location (S3). Default: compute S3 URIs only.
        only: build just this model (with its steps) or endpoint; the manifest keeps the other
            entries of the previous build.
        force: rebuild everything, ignoring the cache.
        progress: show rich progress bars and warnings on stderr.
        artifact_location: override the declared ``s3://bucket/prefix``.
        s3_client: a boto3 S3 client to upload with. Default: ``boto3.client("s3")``.
        formats: build only models of these formats (``"onnx,python"`` or a list); an endpoint is
            built only when all its models are built here or come from ``merge_manifest``.
        merge_manifest: the manifest(s) of other builds (the TensorRT build on a GPU, the shards of a
            fleet): a model one of them holds under the same cache key is taken from its build's cache
            instead of exported; entries for what this build does not build are merged in (README:
            the merge rule).
        verify: hash every cached model file and output in full instead of trusting size and mtime.
        jobs: worker processes exporting models in parallel; ``"auto"`` (the CLI's default): the cores,
            bounded by the available memory over a worker's peak RSS (``parallel.auto_jobs``). The
            outputs are the same bytes whatever it is (TensorRT plans aside). Default: 1 (this process).
        shard: ``"I/N"``: build only the models of shard I of N (``shards.assign``) and no endpoint;
            the manifest holds those models and records ``shard``, to be joined by a build with
            ``merge_manifest``.
        build_missing: when ``merge_manifest`` holds shard manifests, export here the models no shard
            holds (a missing shard, a model in no shard), each with a warning, counted apart
            (``BuildResult.built_missing``). Default: such a set is ``IncompleteShardSet``.
        target_runtime: load every TorchScript / ONNX artifact and run its sample in the declared release's
            own libtorch / ONNX Runtime (an environment per release from the package index, in the user's
            cache: :mod:`cdk_triton.builder.target_runtime`) before packaging; False records the models
            ``skipped``. Default: on, unless ``CDK_TRITON_TARGET_RUNTIME=off``.
        on_success: called with the finished build's context while it still holds the output
            directory's lock (the CLI writes the no-op stamp, :mod:`cdk_triton.builder.stamp`).
        verbose: with ``progress``, print each warning's full detail (a CVE list) under its one line.
            Default: the one line, which names the command or flag that shows the detail.
        shown_warnings: the warnings an earlier build of the same run printed (``cdk-triton demo`` builds two
            declarations of one release): recorded in the result, not printed again; updated in place.

    Raises:
        TritonValidationError: bad declarations (nothing written).
        BuildError: a failed build step (the code says which).
    """
    with gc_paused():
        spec = load_declaration(config_path, artifact_location=artifact_location)
    out = Path(out_dir) if out_dir is not None else Path(config_path).resolve().parent / "out"
    out = out.resolve()
    sel = _selection(spec, only, formats, merge_manifest, shard, build_missing)  # nothing written yet
    with Reporter(progress, verbose=verbose, shown=shown_warnings) as reporter:
        ctx = _context(
            spec,
            out,
            reporter,
            sel,
            only=only,
            force=force,
            upload=upload,
            s3_client=s3_client,
            verify=verify,
            config_path=config_path,
            jobs=jobs,
            target_runtime=target_runtime,
        )
        for n in sel.missing:
            ctx.warn(f"model '{n}' is in no merged shard manifest: exported by this merge (--build-missing)")
        with gc_paused():
            done = {"preflight": preflight.run(ctx)}  # raises before anything is written
        try:
            done |= _run_steps(ctx)
            _fill_result(ctx, done)
            if on_success is not None:
                on_success(ctx)
        finally:
            stop_probe(ctx)
            if ctx.lock is not None:
                ctx.lock.close()
    return ctx.result


class _Selection(NamedTuple):
    formats: frozenset[str] | None
    merged: Manifest | None
    merged_dirs: dict[str, Path]
    endpoints: list[Any]
    names: list[str]
    shard: shards.Shard | None
    missing: list[str]


def _selection(
    spec: BuildSpec,
    only: str | None,
    formats: str | Iterable[str] | None,
    merge_manifest: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None,
    shard: str | shards.Shard | None,
    build_missing: bool,
) -> _Selection:
    """What this build builds: the formats, the merged builds, the endpoints and models (a shard's own), and
    the models no merged shard holds. Reads the merged manifests; writes nothing."""
    fmts = merge.parse_formats(formats)
    each = merge.read_each(merge_manifest, spec) if merge_manifest else []
    merged, merged_dirs = merge.join(each) if each else (None, {})
    endpoints, names = preflight.select(spec, only)
    which = None
    if shard is not None:
        which = shards.parse_shard(shard)
        endpoints, names = [], _shard_models(spec, which, only=only, merging=merged is not None)
    names = merge.filter_formats(spec, preflight.order(spec, names), fmts)
    missing = merge.check_shard_set(each, spec, names, build_missing=build_missing)
    return _Selection(fmts, merged, merged_dirs, endpoints, names, which, missing)


def _context(
    spec: BuildSpec,
    out: Path,
    reporter: Reporter,
    sel: _Selection,
    *,
    only: str | None,
    force: bool,
    upload: bool,
    s3_client: Any | None,
    verify: bool,
    config_path: str | os.PathLike[str],
    jobs: int | str | None,
    target_runtime: bool | None,
) -> BuildContext:
    """The one context every step of :func:`run_build` shares."""
    which = sel.shard
    return BuildContext(
        spec=spec,
        out=out,
        reporter=reporter,
        only=only,
        force=force,
        upload=upload,
        s3_client=s3_client,
        endpoints=sel.endpoints,
        names=sel.names,
        formats=sel.formats,
        merged=sel.merged,
        merged_dirs=sel.merged_dirs,
        verify=verify,
        config_path=Path(config_path).resolve(),
        jobs=parallel.parse_jobs(jobs),
        shard=None if which is None else ShardInfo(index=which.index, count=which.count),
        missing=sel.missing,
        target_runtime=not config_target_runtime.switched_off() if target_runtime is None else target_runtime,
    )


def _fill_result(ctx: BuildContext, done: dict[str, StepOutput]) -> None:
    result = ctx.result
    result.exported = len(ctx.fresh)  # corrupt cache entries found while packaging included
    result.packaged = done["package"].done
    result.uploaded, result.copied = done["upload"].done, done["upload"].copied
    result.skipped = sum(done[s].up_to_date for s in ("preflight", "package", "upload"))
    result.built_missing = [n for n in ctx.missing if n in ctx.fresh or n in ctx.reconfigured]
    result.warnings = list(ctx.warnings)
    result.rows = summary_rows(ctx)


def _shard_models(
    spec: BuildSpec, shard: str | shards.Shard, *, only: str | None, merging: bool
) -> list[str]:
    """The models of ``shard`` (with their closures, steps first); a shard builds no endpoint."""
    which = shards.parse_shard(shard)
    if only is not None or merging:
        raise TritonValidationError(
            "InvalidShard",
            prop="--shard",
            value=f"{which.index}/{which.count}",
            problem="cannot be combined with --only or --merge-manifest",
            allowed="--shard I/N alone (with --formats, --upload, --jobs, --force, --verify)",
            fix="build each shard with --shard I/N, then join them in one build with --merge-manifest",
        )
    shards.check_count(spec, which.count, value=f"{which.index}/{which.count}")
    return preflight.order(spec, shards.assign(spec, which.count)[which.index])


def _run_steps(ctx: BuildContext) -> dict[str, StepOutput]:
    """Run :data:`STEPS`; running out of disk space anywhere is one BuildError naming the path."""
    done = {}
    for step in STEPS:
        try:
            with contextlib.nullcontext() if step in UNPAUSED else gc_paused():
                output = step(ctx)
        except OSError as exc:
            if not space.is_no_space(exc):
                raise
            raise space.no_space(Path(exc.filename or ctx.out), None) from None
        done[output.step] = output
    return done


def summary_rows(ctx: BuildContext) -> list[dict[str, str]]:
    """One row per model of the build: format, exported/cached/skipped, largest parity difference."""
    rows = []
    for n in ctx.built:
        rec = ctx.resolved[n].record
        parity = rec.exported.parity_max_abs_diff if rec is not None else None
        rows.append(
            {
                "model": n,
                "format": rec.format if rec is not None else "",
                "status": "exported"
                if n in ctx.fresh
                else "reconfigured"
                if n in ctx.reconfigured
                else "cached",
                "parity": f"{parity:.2e}" if parity is not None else "-",
            }
        )
    for n in ctx.result.skipped_models:
        rows.append({"model": n, "format": ctx.resolved[n].spec.format, "status": "skipped", "parity": "-"})
    return rows
