"""The build's output directory: the lock, leftovers of killed builds, samples, the upload, the
manifest (merged with the previous one under ``--only``) and pruning of what nothing references."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from cdk_triton.builder import merge, space, stamp
from cdk_triton.builder import upload as upload_mod
from cdk_triton.builder.context import Artifact, BuildContext, ModelRecord, StepOutput, StepStatus
from cdk_triton.builder.samples import json_text, write_json_if_changed
from cdk_triton.config import formats, layout, sizing
from cdk_triton.config.manifest import (
    MANIFEST_FILENAME,
    SCHEMA_VERSION,
    Manifest,
    ModelEntry,
    Sample,
    manifest_from_dict,
    read_manifest,
    write_manifest,
)
from cdk_triton.errors import BuildError, TritonValidationError


def prepare(ctx: BuildContext) -> StepOutput:
    """Create the output directory, take its lock, drop the no-op stamp (only a finished no-op build
    writes one) and remove what killed builds left."""
    ctx.out.mkdir(parents=True, exist_ok=True)
    ctx.lock = lock(ctx.out)
    stamp.remove(ctx.out)
    ctx.cache.clean_temp()
    clean_leftovers(ctx.out)
    return StepOutput(step="prepare", status=StepStatus.OK)


def lock(out: Path) -> Any:
    """One build per output directory at a time (advisory lock, released when the process dies)."""
    import fcntl

    fh = (out / ".lock").open("a")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise BuildError(
            f"another build is writing to {out}; wait for it or use another --out", code="BuildLocked"
        ) from None
    return fh


def clean_leftovers(out: Path) -> None:
    """Remove temp files and directories a killed build left (never trusted; only space)."""
    for sub in (layout.SME_FOLDER, layout.MME_FOLDER, layout.SAMPLES_FOLDER, "cache"):
        root = out / sub
        if not root.is_dir():
            continue
        found = []  # os.walk over plain strings: a fleet's cache has thousands of entries
        for dirpath, dirnames, filenames in os.walk(root):
            found += [os.path.join(dirpath, n) for n in (*dirnames, *filenames) if n.startswith(".")]
        for p in sorted(map(Path, found), key=lambda x: len(x.parts), reverse=True):
            if p.name.endswith((".tmp", ".old")):
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)


def write_samples(ctx: BuildContext) -> StepOutput:
    """Write each built model's KServe v2 sample request and expected response under ``samples/``;
    with ``--upload`` they are uploaded too, to ``<prefix>samples/<sha12>/`` (content-addressed)."""
    written = 0
    loc = ctx.spec.artifact_location
    for n in ctx.built:
        s = ctx.record(n).exported.sample
        req = ctx.out / layout.sample_path(n, "request")
        resp = ctx.out / layout.sample_path(n, "response")
        written += int(write_json_if_changed(req, s.request))
        written += int(write_json_if_changed(resp, s.response))
        uris: dict[str, str] = {}
        if ctx.upload:
            texts = [json_text(s.request), json_text(s.response)]
            base = loc.uri + layout.sample_prefix_key(texts[0], texts[1])
            for kind, path, text in (("request", req, texts[0]), ("response", resp, texts[1])):
                uri = base + path.name
                data = text.encode()
                sha = hashlib.sha256(data).hexdigest()
                ctx.artifacts.append(Artifact(local_path=path, s3_uri=uri, sha256=sha, size=len(data)))
                uris[f"{kind}_s3_uri"] = uri
        ctx.samples[n] = Sample(
            request=layout.sample_path(n, "request"),
            response=layout.sample_path(n, "response"),
            atol=s.atol,
            rtol=s.rtol,
            **uris,
        )
    return StepOutput(
        step="samples", status=StepStatus.OK if written else StepStatus.UP_TO_DATE, done=written
    )


def upload_artifacts(ctx: BuildContext) -> StepOutput:
    """Upload the packaged artifacts (``--upload``), or find whether an earlier upload holds them."""
    loc = ctx.spec.artifact_location
    ledger = ctx.out / "uploads.json"
    prefix = f"s3://{loc.bucket}/"
    objects = [
        upload_mod.UploadObject(
            local_path=a.local_path, key=a.s3_uri[len(prefix) :], sha256=a.sha256, size=a.size
        )
        for a in ctx.artifacts
    ]
    if not ctx.upload:
        ctx.uploaded = bool(objects) and upload_mod.all_recorded(objects, loc, ledger)
        return StepOutput(step="upload", status=StepStatus.SKIPPED)
    ctx.reporter.start("upload", sum(o.size for o in objects), "bytes")
    stats = upload_mod.upload(
        objects,
        loc,
        client=ctx.s3_client,
        ledger_path=ledger,
        progress=lambda n: ctx.reporter.advance("upload", n),
    )
    ctx.reporter.finish("upload")
    ctx.uploaded = True
    return StepOutput(
        step="upload",
        status=StepStatus.OK if stats.uploaded or stats.copied else StepStatus.UP_TO_DATE,
        done=stats.uploaded,
        copied=stats.copied,
        up_to_date=stats.skipped,
    )


def model_entry(record: ModelRecord, sample: Sample | None, model_dir: Path | None = None) -> ModelEntry:
    """The manifest entry of a built model (``model_dir``: its cache directory, for ``size_bytes``)."""
    plans = record.exported.plans or []
    onnx = (record.exported.onnx or {}) if formats.get(record.format).runs_onnx else {}
    size = _files_size(model_dir, record.files) if model_dir is not None else None
    memory, memory_source = sizing.model_memory(
        record.format, size, record.exported.config, record.exported.activations
    )
    return ModelEntry(
        name=record.name,
        format=record.format,
        platform=record.platform,
        backend=record.backend,
        config=record.exported.config,
        config_sha256=record.exported.config_sha256,
        files=record.files,
        steps=record.exported.steps or [],
        gpu_architectures=sorted(p["gpu_architecture"] for p in plans),
        tensorrt_version=plans[0]["tensorrt_version"] if plans else None,
        onnx_opset=onnx.get("opset"),
        onnx_ir_version=onnx.get("ir_version"),
        size_bytes=size,
        memory_bytes=memory,
        memory_source=memory_source if memory is not None else None,
        source_sha256=record.source_sha256,
        sample=sample,
    )


def _files_size(model_dir: Path, files: dict[str, str]) -> int | None:
    """The bytes of the model's recorded files (its weights and code), None when one is missing."""
    try:
        return sum((model_dir / rel).stat().st_size for rel in files)
    except OSError:
        return None


def write_build_manifest(ctx: BuildContext) -> StepOutput:
    """Write ``manifest.json`` (unless it already holds these bytes) and read it back into the result."""
    path = ctx.out / MANIFEST_FILENAME
    manifest = Manifest(
        schema_version=SCHEMA_VERSION,
        triton_version=ctx.spec.triton_version,
        artifact_location=ctx.spec.artifact_location,
        uploaded=ctx.uploaded,
        models={
            n: replace(
                model_entry(ctx.record(n), ctx.samples.get(n), d),
                target_runtime=ctx.target_runtime_checks.get(n),
            )
            for n, d in ctx.model_dirs(list(ctx.built)).items()
        },
        endpoints=ctx.endpoint_entries,
        tool_versions=ctx.tools,
        acknowledged_advisories=dict(ctx.spec.acknowledged_advisories),
        library_acknowledgments=ctx.spec.library_acknowledgments,
        shard=ctx.shard,
    )
    if ctx.only is not None:
        manifest = merge_previous(manifest, path)
    if ctx.merged is not None:
        models, endpoints = merge.merge_entries(
            ctx.merged, ctx.spec, ctx.out, manifest.models, manifest.endpoints
        )
        took = bool(set(models) - set(manifest.models)) or any(n in endpoints for n in ctx.merged.endpoints)
        manifest = replace(
            manifest,
            models=models,
            endpoints=endpoints,
            uploaded=manifest.uploaded and (ctx.merged.uploaded or not took),
        )
    changed, data = _write_if_changed(manifest, path)
    # read back what is on disk now: the file just written, or the same bytes parsed once (a no-op)
    ctx.result.manifest = (
        read_manifest(path) if changed else manifest_from_dict(data, source=str(path.resolve()))
    )
    return StepOutput(step="manifest", status=StepStatus.OK if changed else StepStatus.UP_TO_DATE)


def merge_previous(manifest: Manifest, path: Path) -> Manifest:
    """``manifest`` with the other models and endpoints of the previous manifest (``--only``)."""
    if not path.is_file():
        return manifest
    try:
        prev = manifest_from_dict(json.loads(path.read_text("utf-8")), source=str(path))
    except (TritonValidationError, json.JSONDecodeError):
        return manifest
    return replace(
        manifest,
        models={**prev.models, **manifest.models},
        endpoints={**prev.endpoints, **manifest.endpoints},
        uploaded=manifest.uploaded and prev.uploaded,
    )


def _write_if_changed(manifest: Manifest, path: Path) -> tuple[bool, Any]:
    """Write ``manifest`` unless ``path`` holds its bytes already; returns (written, the file's data
    parsed when it was not written). An unchanged manifest is never rewritten (nor its mtime moved)."""
    text = json.dumps(manifest.to_dict(), indent=2, sort_keys=True) + "\n"
    try:
        same = path.read_text("utf-8") == text
    except (OSError, UnicodeDecodeError):
        same = False
    if same:
        return False, json.loads(text)
    with space.guard(path, len(text.encode())):
        write_manifest(manifest, path)  # a temp file renamed into place (removed on failure)
    return True, None


def prune(ctx: BuildContext) -> StepOutput:
    """After a successful build: drop cache entries, samples and endpoint folders that neither this
    build nor the manifest references."""
    manifest = ctx.result.manifest
    removed = ctx.cache.prune(
        {(n, e.source_sha256) for n, e in manifest.models.items() if e.source_sha256}
        | {(n, p.key) for n, p in ctx.resolved.items()}
    )
    prune_outputs(ctx.out, manifest)
    return StepOutput(
        step="prune", status=StepStatus.OK if removed else StepStatus.UP_TO_DATE, done=len(removed)
    )


def prune_outputs(out: Path, manifest: Manifest) -> None:
    """Remove sample files and endpoint folders the manifest no longer references (models or
    endpoints removed from the declaration, an endpoint that changed mode)."""
    keep = {
        Path(f).name
        for m in manifest.models.values()
        if m.sample
        for f in (m.sample.request, m.sample.response)
        if f
    }
    samples = out / layout.SAMPLES_FOLDER
    if samples.is_dir():
        with os.scandir(samples) as it:  # plain names: a fleet has thousands of sample files
            stale = [e.name for e in it if e.name.endswith(".json")]
        for name in stale:
            if name not in keep:
                (samples / name).unlink(missing_ok=True)
    for mode, multi in ((layout.SME_FOLDER, False), (layout.MME_FOLDER, True)):
        if not (out / mode).is_dir():
            continue
        for d in sorted((out / mode).iterdir()):
            ep = manifest.endpoints.get(d.name)
            if (
                d.name.startswith(".")
                or not d.is_dir()
                or (ep is not None and ep.hosting_mode.loads_on_demand == multi)
            ):
                continue
            old = d.with_name(f".{d.name}.{os.urandom(16).hex()}.old")
            os.replace(d, old)
            shutil.rmtree(old, ignore_errors=True)
