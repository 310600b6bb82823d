"""Copies of the built artifacts for the local server: hashes checked, configs parsed, overlay applied.

The server never reads the build output itself: it serves a copy made here after every file (SME
directory) or archive (SME tar.gz, MME TargetModel) was checked against the manifest's sha256, and
every ``config.pbtxt`` was parsed with the real ModelConfig schema (a config that does not parse
only yields "failed to poll from model repository" from the server).
"""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

from cdk_triton.config.digest import file_sha256 as sha256_file
from cdk_triton.config.digest import tree_sha256
from cdk_triton.config.manifest import EndpointEntry, Manifest, TargetModel
from cdk_triton.errors import TritonValidationError
from cdk_triton.local.overlay import CpuOverlay, OverlayChange, apply_overlay


def _mismatch(what: str, path: Path, expected: str, got: str) -> TritonValidationError:
    return TritonValidationError(
        "ArtifactHashMismatch",
        prop=what,
        value=str(path),
        problem=f"has sha256 {got[:16]}..., the manifest says {expected[:16]}...",
        allowed="the bytes the build wrote",
        fix="rebuild with `cdk-triton build` (the artifact changed after the build)",
        path=str(path),
    )


def check_archive(path: Path, expected: str, what: str) -> None:
    """The archive exists and its sha256 equals the manifest's."""
    if not path.is_file():
        raise TritonValidationError(
            "ArtifactMissing",
            prop=what,
            value=str(path),
            problem="does not exist",
            allowed="a file the build wrote",
            fix="run `cdk-triton build` first",
        )
    got = sha256_file(path)
    if got != expected:
        raise _mismatch(what, path, expected, got)


def extract_archive(path: Path, dest: Path) -> None:
    """Extract a model archive with tarfile's ``data`` filter (no absolute paths, no escapes, no devices).

    Python 3.11.0-3.11.3 have no extraction filters: there every member is checked the same way first.
    """
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "r:*") as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
            return
        root = dest.resolve()
        for member in tar.getmembers():
            target = (root / member.name).resolve()
            link_ok = not member.issym() or (target.parent / member.linkname).resolve().is_relative_to(root)
            if not (member.isfile() or member.isdir() or member.issym()) or not (
                target.is_relative_to(root) and link_ok
            ):
                raise TritonValidationError(
                    "UnsafeArchiveMember",
                    prop="archive member",
                    value=f"{path}:{member.name}",
                    problem="is not a file or directory inside the archive root",
                    allowed="regular files, directories and links that stay inside the archive",
                    fix="rebuild the archive with `cdk-triton build`",
                    path=str(path),
                )
        tar.extractall(dest)  # noqa: S202 - every member checked above


def parse_configs(repository: Path) -> dict[str, object]:
    """Parse every ``<model>/config.pbtxt``; raise TritonValidationError(InvalidModelConfig) naming the file."""
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2 as mc

    configs: dict[str, object] = {}
    for cfg_path in sorted(Path(repository).glob("*/config.pbtxt")):
        config = mc.ModelConfig()
        try:
            text_format.Parse(cfg_path.read_text(), config)
        except text_format.ParseError as exc:
            raise TritonValidationError(
                "InvalidModelConfig",
                prop=f"config.pbtxt of model '{cfg_path.parent.name}'",
                value=str(cfg_path),
                problem=f"does not parse as a Triton ModelConfig: {exc}",
                allowed="text-format ModelConfig (tritonclient.grpc.model_config_pb2)",
                fix="fix the config (the server itself would only say 'failed to poll from model repository')",
                path=str(cfg_path),
            ) from exc
        configs[cfg_path.parent.name] = config
    return configs


def prepare_sme_repository(
    manifest: Manifest, entry: EndpointEntry, dest: Path, overlay: CpuOverlay | None
) -> list[OverlayChange]:
    """Copy an SME repository to ``dest`` (checked, parsed, overlaid; ``overlay`` None: as built)."""
    source = manifest.resolve(entry.local_path or "")
    if dest.exists():
        shutil.rmtree(dest)
    if entry.packaging == "tar.gz":
        check_archive(source, entry.sha256 or "", f"endpoint '{entry.name}' archive")
        extract_archive(source, dest)
    else:
        if not source.is_dir():
            raise TritonValidationError(
                "ArtifactMissing",
                prop=f"endpoint '{entry.name}' repository",
                value=str(source),
                problem="does not exist",
                allowed="the directory the build wrote",
                fix="run `cdk-triton build` first",
            )
        for model in entry.models or sorted(p.name for p in source.iterdir() if p.is_dir()):
            model_entry = manifest.models.get(model)
            for rel, expected in (model_entry.files if model_entry else {}).items():
                path = source / model / rel
                if not path.is_file():
                    raise TritonValidationError(
                        "ArtifactMissing",
                        prop=f"model '{model}' file",
                        value=str(path),
                        problem="does not exist",
                        allowed="every file the manifest lists",
                        fix="rebuild with `cdk-triton build`",
                    )
                got = sha256_file(path)
                if got != expected:
                    raise _mismatch(f"model '{model}' file {rel}", path, expected, got)
        got = tree_sha256(source)
        if got != entry.sha256:
            raise _mismatch(f"endpoint '{entry.name}' repository tree", source, entry.sha256 or "", got)
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    parse_configs(dest)
    if overlay is None:
        return []
    return apply_overlay(dest, overlay, record=dest.parent / "overlay.json", build_out=manifest.resolve("."))


def prepare_target_model(
    manifest: Manifest, target: TargetModel, dest: Path, overlay: CpuOverlay | None
) -> list[OverlayChange]:
    """Extract one MME archive into ``dest`` (a repository root) after checking its sha256 (``overlay``
    None: as built)."""
    source = manifest.resolve(target.local_path)
    check_archive(source, target.sha256, f"target model '{target.logical_name}' archive")
    if dest.exists():
        shutil.rmtree(dest)
    extract_archive(source, dest)
    parse_configs(dest)
    if overlay is None:
        return []
    return apply_overlay(dest, overlay, record=dest.parent / "overlay.json", build_out=manifest.resolve("."))


AUTO_COMPLETE_HOOK = b"auto_complete_config"


def uses_auto_complete(repository: Path | None = None, archives: tuple[Path, ...] = ()) -> bool:
    """Whether a python model of a served repository or MME archive defines ``auto_complete_config``.

    Only such a model needs the server's config auto-complete: for every other python-based model it
    costs a throw-away stub process per load and the python backend's 1 s ``sleep`` before ending it.
    """
    if repository is not None:
        for path in Path(repository).rglob("*.py"):
            if AUTO_COMPLETE_HOOK in path.read_bytes():
                return True
    for archive in archives:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                if member.isfile() and member.name.endswith(".py"):
                    handle = tar.extractfile(member)
                    if handle is not None and AUTO_COMPLETE_HOOK in handle.read():
                        return True
    return False


def auto_complete_archives(manifest: Manifest, entry: EndpointEntry) -> tuple[Path, ...]:
    """The MME archives :func:`uses_auto_complete` must read: one per distinct python file.

    A fleet's TargetModels usually share their code: the manifest records each model file's sha256,
    so the archives holding a ``.py`` file not seen in an archive already picked are read, and no
    other (5,000 TargetModels of one model.py: one archive, not 5,000). A TargetModel whose models
    record no files is read whole (a hand-made manifest); a missing archive fails at its load.
    """
    seen: set[str] = set()
    picked: list[Path] = []
    for target in entry.target_models.values():
        digests: set[str] = set()
        unknown = False
        for name in target.models:
            model = manifest.models.get(name)
            if model is None or not model.files:
                unknown = True
                continue
            digests.update(d for rel, d in model.files.items() if rel.endswith(".py"))
        if unknown or not digests <= seen:
            path = manifest.resolve(target.local_path)
            if path.is_file():
                picked.append(path)
                seen |= digests
    return tuple(picked)
