"""The package step: model repositories and archives of every endpoint (Triton model repository layout:
server docs/user_guide/model_repository.md).

SME: ``out/sme/<endpoint>/repository/`` (uncompressed S3 prefix) or one ``.tar.gz`` of it; MME:
``out/mme/<endpoint>/<model>-<sha12>.tar.gz``, one target model (with its steps) per archive;
inference components: the same archives under ``out/ic/<endpoint>/`` (``builder.components`` adds the
components to the entry). Every mode archives through one path (:func:`_archive`), each folder with an
index of what it holds.

Layout: ``<repo>/<model>/config.pbtxt`` + ``<repo>/<model>/1/<file>``; an ensemble's ``1/`` holds
only a placeholder. No ``__pycache__`` ever lands in a repository.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from cdk_triton.builder import merge, space
from cdk_triton.builder.context import Artifact, BuildContext, StepOutput, StepStatus
from cdk_triton.builder.export import step as export_step
from cdk_triton.builder.export import tensorrt as trt_export
from cdk_triton.builder.package import check_tree, copy_model_dir, file_sizes, pack, sha256_file, tree_digest
from cdk_triton.config import layout
from cdk_triton.config.declaration import EndpointSpec
from cdk_triton.config.manifest import EndpointEntry, TargetModel
from cdk_triton.errors import BuildError


def assemble(
    models: dict[str, Path],
    dest: Path,
    *,
    key: str,
    full: bool = False,
    warn: Callable[[str], None] | None = None,
    before: Callable[[], None] | None = None,
) -> tuple[str, dict[str, str], int, bool]:
    """Make ``dest`` a repository holding ``models`` (name -> cached dir) unless it already does.

    Returns (tree sha256, files, size, rebuilt). Built in a temp directory and swapped in; the key
    file is written last, so a repository without a matching key file is always rebuilt. A repository
    whose files differ from the key file's record (size and mtime, or every hash when ``full``) is
    rebuilt with a warning; ``before`` runs before a rebuild (it hashes the cached models in full).
    """
    key_file = dest.parent / f".{dest.name}.key.json"
    if dest.is_dir() and key_file.is_file():
        try:
            rec = json.loads(key_file.read_text("utf-8"))
            if rec.get("key") == key:
                problem = check_tree(dest, rec["files"], rec.get("sizes"), key_file, full=full)
                if problem is None:
                    return rec["sha256"], rec["files"], int(rec["size"]), False
                if warn:
                    warn(f"repository {dest} is corrupt ({problem}): rebuilding it")
        except (OSError, json.JSONDecodeError, KeyError):
            pass
    if before:
        before()
    key_file.unlink(missing_ok=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.{os.urandom(16).hex()}.tmp"
    tmp.mkdir()
    try:
        with space.guard(dest, lambda: sum(space.tree_bytes(d) for d in models.values())):
            for name, src in sorted(models.items()):
                copy_model_dir(src, tmp / name)
        digest, files, size = tree_digest(tmp)
        if dest.exists():
            old = dest.parent / f".{dest.name}.{os.urandom(16).hex()}.old"
            os.replace(dest, old)
            shutil.rmtree(old, ignore_errors=True)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    data = {"key": key, "sha256": digest, "files": files, "size": size, "sizes": file_sizes(dest, files)}
    _write_json(key_file, data)
    return digest, files, size, True


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` atomically (a temp file renamed into place; removed when the disk is full)."""
    text = json.dumps(data, indent=1, sort_keys=True)
    tmp = path.with_name(f".{path.name}.{os.urandom(8).hex()}.tmp")
    try:
        with space.guard(path, len(text)):
            tmp.write_text(text)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def package_endpoints(ctx: BuildContext) -> StepOutput:
    """Package every selected endpoint: SME repository directory or archive, MME one archive per
    target model. An unchanged endpoint is found up to date and nothing is rewritten. What this
    build does not build (``--formats``, optional models skipped) comes from ``--merge-manifest``."""
    packed = up_to_date = 0
    ctx.reporter.start("package", len(ctx.endpoints), "endpoints")
    for ep in ctx.endpoints:
        roots = _roots(ctx, ep)
        if roots is None:
            ctx.reporter.advance("package", 1, what=ep.name)
            continue
        archs = _check_tensorrt_plans(ctx, ep, [n for r in roots for n in ctx.spec.closure(r)])
        package = _package_mme if ep.per_model_archives else _package_sme
        entry, artifacts, n_packed = package(ctx, ep, roots)
        for t in entry.target_models.values():
            if t.logical_name not in roots:  # merged: its models' plans
                for n in t.models:
                    m = ctx.merged.models.get(n) if ctx.merged else None
                    archs.update(m.gpu_architectures if m else ())
        ctx.endpoint_entries[ep.name] = replace(entry, gpu_architectures=sorted(archs))
        ctx.artifacts += artifacts
        packed += n_packed
        up_to_date += (len(roots) if ep.per_model_archives else 1) - n_packed
        ctx.reporter.advance("package", 1, what=ep.name)
    ctx.reporter.finish("package")
    return StepOutput(
        step="package",
        status=StepStatus.OK if packed else StepStatus.UP_TO_DATE,
        done=packed,
        up_to_date=up_to_date,
    )


def _built(ctx: BuildContext, root: str) -> bool:
    return all(n in ctx.resolved and ctx.resolved[n].skip_reason is None for n in ctx.spec.closure(root))


def _missing_why(ctx: BuildContext, root: str) -> str:
    for n in ctx.spec.closure(root):
        if n in ctx.resolved and ctx.resolved[n].skip_reason is not None:
            return f"optional model skipped: {ctx.resolved[n].skip_reason}"
    return "not built by this build (--formats) nor in --merge-manifest"


def _roots(ctx: BuildContext, ep: EndpointSpec) -> list[str] | None:
    """The target models of ``ep`` this build packages; None when the endpoint is not packaged here
    (its entry then comes from --merge-manifest, or it is left out with a warning)."""
    roots = [r for r in ep.models if _built(ctx, r)]
    missing = [r for r in ep.models if r not in roots]
    if not ep.per_model_archives:
        if not missing:
            return roots
        theirs = merge.merged_endpoint(ctx.merged, ep.name, ctx.out) if ctx.merged else None
        if theirs is not None:
            ctx.endpoint_entries[ep.name] = theirs
            return None
        r = missing[0]
        if r in ctx.resolved and ctx.resolved[r].skip_reason is not None:
            raise BuildError(
                f"endpoint '{ep.name}' needs model '{r}', which was skipped: {ctx.resolved[r].skip_reason}",
                code="TensorRTUnavailable",
            )
        ctx.warn(f"endpoint '{ep.name}' not built: model '{r}' is {_missing_why(ctx, r)}")
        return None
    merged = [r for r in missing if ctx.merged and merge.merged_target(ctx.merged, ep.name, r, ctx.out)]
    for r in missing:
        if r in merged:
            continue
        if r in ctx.resolved and ctx.resolved[r].skip_reason is not None:
            ctx.warn(f"endpoint '{ep.name}': target model '{r}' left out (optional model skipped)")
        else:
            ctx.warn(f"endpoint '{ep.name}': target model '{r}' left out ({_missing_why(ctx, r)})")
    if not roots and not merged:
        ctx.warn(f"endpoint '{ep.name}' not built: none of its models is built")
        return None
    return roots


def _check_tensorrt_plans(ctx: BuildContext, ep: EndpointSpec, members: list[str]) -> set[str]:
    """Refuse TensorRT plans the endpoint's GPUs cannot run; returns their GPU architectures."""
    archs: set[str] = set()
    for n in members:
        plans = ctx.record(n).exported.plans
        if plans:
            trt_export.check_plans(
                plans,
                ep.instance_types,
                model=n,
                triton_version=ctx.spec.triton_version,
                max_batch_size=ctx.resolved[n].spec.max_batch_size,
            )
            archs.update(p["gpu_architecture"] for p in plans)
    return archs


def _unit_key(ctx: BuildContext, members: list[str]) -> str:
    """What a repository or archive of ``members`` depends on: their cache keys."""
    return json.dumps({n: ctx.resolved[n].key for n in members}, sort_keys=True)


def _archive(
    ctx: BuildContext,
    folder: Path,
    stem: str,
    dirs: list[tuple[str, Path]],
    *,
    fingerprint: tuple[str, str],
    previous: dict[str, Any],
    stale: bool = False,
    members: list[str] | None = None,
    index_mtime: int | None = None,
) -> tuple[dict[str, Any], Path, bool]:
    """The one archive path of SME and MME: reuse the archive ``previous`` (an index entry) names when
    its ``fingerprint`` (field, value) still matches and the file is intact (size and mtime as recorded,
    or its sha256 with --verify / --upload), else pack ``dirs`` into ``<folder>/<stem>-<sha12>.tar.gz``
    after hashing the cached ``members`` in full. Returns (the new index entry, the archive, packed now)."""
    field, value = fingerprint
    archive = folder / previous.get("file", "-")
    if not stale and previous.get(field) == value:
        problem = _archive_problem(ctx, archive, previous, folder, index_mtime)
        if problem is None:
            return previous, archive, False
        ctx.warn(f"archive {archive} {problem}: packing it again")
    if members:
        export_step.verify_members(ctx, members)
    archive, sha, size = pack(dirs, folder, stem, progress=lambda n: ctx.reporter.advance("package", 0))
    return {field: value, "file": archive.name, "sha256": sha, "size": size}, archive, True


def _archive_problem(
    ctx: BuildContext, archive: Path, previous: dict[str, Any], folder: Path, index_mtime: int | None = None
) -> str | None:
    """Why the archive an index entry names cannot be reused (None when it can): hashed unless its size
    is as recorded and it was not modified after the folder's index was written (``index_mtime``:
    that index's mtime_ns, read once per folder by the caller; None: read here)."""
    try:
        st = os.stat(archive)
    except OSError:
        return "is missing"
    if not stat.S_ISREG(st.st_mode):
        return "is missing"
    if st.st_size != previous.get("size"):
        return "has another size than recorded (truncated?)"
    written = index_mtime if index_mtime is not None else _index_mtime(folder)
    hash_it = ctx.full_check or written is None or st.st_mtime_ns > written
    if hash_it and sha256_file(archive) != previous.get("sha256"):
        return "does not match its sha256"
    return None


def _index_mtime(folder: Path) -> int | None:
    """The mtime_ns of the folder's index (``index.json``, else ``.archive.json``), None without one."""
    for p in (folder / "index.json", folder / ".archive.json"):
        try:
            st = os.stat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            return st.st_mtime_ns
    return None


def _package_sme(
    ctx: BuildContext, ep: EndpointSpec, roots: list[str]
) -> tuple[EndpointEntry, list[Artifact], int]:
    base_uri = ctx.spec.artifact_location.uri
    members = sorted({n for r in roots for n in ctx.spec.closure(r)})
    folder = ctx.out / layout.sme_folder(ep.name)
    repo = folder / "repository"
    digest, files, size, rebuilt = assemble(
        ctx.model_dirs(members),
        repo,
        key=_unit_key(ctx, members),
        full=ctx.full_check,
        warn=ctx.warn,
        before=lambda: export_step.verify_members(ctx, members),
    )
    default = ep.default_model or roots[0]
    if ep.packaging == "directory":
        s3_uri = base_uri + layout.sme_directory_key(ep.name, digest)
        local = repo
        artifacts = [
            Artifact(
                local_path=repo / rel, s3_uri=f"{s3_uri}{rel}", sha256=sha, size=(repo / rel).stat().st_size
            )
            for rel, sha in sorted(files.items())
        ]
        sha, nbytes, packed = digest, size, int(rebuilt)
    else:
        index_path = folder / ".archive.json"
        index = _read_json(index_path)
        new_index, local, now = _archive(
            ctx,
            folder,
            ep.name,
            [(n, repo / n) for n in members],
            fingerprint=("tree", digest),
            previous=index,
            stale=rebuilt,
        )
        _write_index(index_path, folder, index, new_index, keep={new_index["file"]}, packed=now)
        sha, nbytes, packed = new_index["sha256"], new_index["size"], int(now)
        s3_uri = base_uri + layout.sme_archive_key(ep.name, local.name)
        artifacts = [Artifact(local_path=local, s3_uri=s3_uri, sha256=sha, size=nbytes)]
    entry = EndpointEntry(
        name=ep.name,
        mode=ep.mode,
        instance_types=list(ep.instance_types),
        default_model=default,
        load_models=ctx.spec.loaded_at_start(default) or None,
        models=members,
        packaging=ep.packaging,
        local_path=os.path.relpath(local, ctx.out),
        s3_uri=s3_uri,
        sha256=sha,
        size_bytes=nbytes,
        sample=ctx.samples.get(default),
        inference_ami_version=ep.inference_ami_version,
        async_inference=ep.async_inference,
        instance_pools=ep.instance_pools,
    )
    return entry, artifacts, packed


def _package_mme(
    ctx: BuildContext, ep: EndpointSpec, roots: list[str]
) -> tuple[EndpointEntry, list[Artifact], int]:
    """MME target models, and inference components packaged the same way (under ``ic/<endpoint>/``)."""
    ic = ep.hosting_mode.components
    folder = ctx.out / (layout.ic_folder(ep.name) if ic else layout.mme_folder(ep.name))
    index_path = folder / "index.json"
    index = _read_json(index_path)
    prefix = ctx.spec.artifact_location.uri + (
        layout.ic_prefix_key(ep.name) if ic else layout.mme_prefix_key(ep.name)
    )
    targets: dict[str, TargetModel] = {}
    artifacts: list[Artifact] = []
    packed = 0
    new_index: dict[str, Any] = {}
    index_mtime = _index_mtime(folder)  # the index is rewritten after the loop, never in it
    for r in roots:
        members = ctx.spec.closure(r)
        dirs = ctx.model_dirs(members)
        new_index[r], archive, now = _archive(
            ctx,
            folder,
            r,
            [(n, dirs[n]) for n in members],
            fingerprint=("key", _unit_key(ctx, members)),
            previous=index.get(r, {}),
            members=members,
            index_mtime=index_mtime,
        )
        packed += int(now)
        sha, size, uri = (
            new_index[r]["sha256"],
            new_index[r]["size"],
            layout.target_model_uri(prefix, archive.name),
        )
        targets[r] = TargetModel(
            logical_name=r,
            target_model=archive.name,
            model=r,
            models=sorted(members),
            local_path=os.path.relpath(archive, ctx.out),
            sha256=sha,
            size_bytes=size,
            s3_uri=uri,
            sample=ctx.samples.get(r),
        )
        artifacts.append(Artifact(local_path=archive, s3_uri=uri, sha256=sha, size=size))
    _write_index(
        index_path, folder, index, new_index, keep={v["file"] for v in new_index.values()}, packed=packed > 0
    )
    for r in ep.models:
        theirs = merge.merged_target(ctx.merged, ep.name, r, ctx.out) if ctx.merged else None
        if r not in targets and theirs is not None:
            targets[r] = theirs
    entry = EndpointEntry(
        name=ep.name,
        mode=ep.mode,
        instance_types=list(ep.instance_types),
        s3_prefix=prefix,
        target_models=targets,
        models=sorted({n for t in targets.values() for n in t.models}),
        inference_ami_version=ep.inference_ami_version,
    )
    return entry, artifacts, packed


def _read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    return data


def _write_index(
    path: Path, folder: Path, old: dict[str, Any], new: dict[str, Any], *, keep: set[str], packed: bool
) -> None:
    """Record what the folder's archives hold (when it changed, or an archive was packed again: the
    index must be newer than its archives) and remove the archives of earlier builds that no
    declaration references any more (local files only)."""
    if new == old and not packed:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_json(path, new)
    for p in folder.glob(f"*{layout.ARCHIVE_SUFFIX}"):
        if p.name not in keep:
            p.unlink(missing_ok=True)
