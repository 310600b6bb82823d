"""Content-addressed build cache: a key hashes every input that affects an output.

Layout under ``<out>/cache/models``: ``<name>-<key16>/`` (the finished model directory, renamed
into place) and ``<name>-<key16>.json`` (its record, written last). An entry is trusted only when
both exist, so a killed build never leaves a half artifact that a later build trusts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from cdk_triton.builder import space
from cdk_triton.builder.package import check_tree, copy_model_dir, file_sizes
from cdk_triton.config import formats
from cdk_triton.config.declaration import ModelSpec
from cdk_triton.config.serialize import plain  # asdict without deep copies: the same canonical JSON

#: bump when the build's output for the same inputs changes
BUILD_FORMAT = "4"  # 4: records carry the activation peak (manifest memory_bytes, schema 4)

#: the tools of every format's cache key; each format's row adds its own (``Format.cache_tools``)
_COMMON_TOOLS = ("cdk-triton", "numpy", "transformers", "tritonclient", "protobuf", "isal")


def _tools() -> tuple[str, ...]:
    rows = formats.FORMATS.values()
    return tuple(dict.fromkeys((*_COMMON_TOOLS, *(t for f in rows for t in f.cache_tools))))


def tool_versions() -> dict[str, str]:
    """Versions of every tool that can change an output (absent tools omitted).

    Read from the ``<name>-<version>.dist-info`` folder names on ``sys.path`` (the first wins, as
    for an import), without importing :mod:`importlib.metadata` (tens of milliseconds on a no-op
    build); a tool found only another way (an egg, a .egg-info) falls back to it."""
    wanted = {_normalize(n): n for n in _tools()}
    found = _dist_info_versions(wanted)
    out = {}
    for key, name in wanted.items():
        v = found.get(key) or _metadata_version(name)
        if v:
            out[name.replace("-", "_")] = v
    return out


def _dist_info_versions(wanted: dict[str, str]) -> dict[str, str]:
    """normalized name -> version of each ``wanted`` tool with a ``*.dist-info`` folder on ``sys.path``."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for d in names:
            if not d.endswith(".dist-info"):
                continue
            name, _, version = d[: -len(".dist-info")].partition("-")
            key = _normalize(name)
            if key in wanted and key not in found and version:
                found[key] = version
    return found


def from_dist_info(tools: dict[str, str]) -> bool:
    """Whether every version of ``tools`` (:func:`tool_versions`) is a ``*.dist-info`` folder's name on
    ``sys.path`` (the no-op stamp trusts a stat of those folders, not of an .egg-info's contents)."""
    found = _dist_info_versions({_normalize(n): n for n in _tools()})
    return all(found.get(_normalize(name)) == v for name, v in tools.items())


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _metadata_version(name: str) -> str | None:
    if not _metadata_has(name):
        return None
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _metadata_has(name: str) -> bool:
    """Whether an .egg-info of ``name`` is importable (dist-info folders were scanned already)."""
    key = _normalize(name).replace("-", "_")
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        if any(
            d.endswith(".egg-info") and _normalize(d.split("-")[0]).replace("-", "_") == key for d in names
        ):
            return True
    return False


#: the last model's plain declaration: preflight asks for the artifact key, then the configuration key
_LAST: list[Any] = [None, None]


def _declared(spec: ModelSpec) -> dict[str, Any]:
    if _LAST[0] is not spec:
        _LAST[:] = [spec, plain(spec)]
    return dict(_LAST[1])


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


#: declaration fields that only shape config.pbtxt (how Triton serves the model), never the exported
#: bytes: they are in the configuration key, every other field is in the artifact key
CONFIG_FIELDS = (
    "dynamic_batching",
    "instance_groups",
    "warmup",
    "pytorch_parameters",
    "response_cache",
    "optional",
)


def artifact_key(
    spec: ModelSpec,
    *,
    fingerprint: dict[str, Any],
    triton_version: str,
    tools: dict[str, str],
    step_keys: dict[str, str] | None = None,
) -> str:
    """sha256 of what affects the exported bytes: the declaration without :data:`CONFIG_FIELDS`
    (format, I/O, max_batch_size, export options, sample), the source fingerprint, the target
    release, tool versions and (ensembles) the steps' artifact keys."""
    decl = {k: v for k, v in _declared(spec).items() if k not in CONFIG_FIELDS}
    payload = {
        "build_format": BUILD_FORMAT,
        "spec": decl,
        "source": fingerprint,
        "triton_version": triton_version,
        "tools": tools,
        "steps": step_keys or {},
    }
    return hashlib.sha256(canonical(payload).encode()).hexdigest()


def config_key(spec: ModelSpec) -> str:
    """sha256 of the serving options (:data:`CONFIG_FIELDS`): a change regenerates config.pbtxt only."""
    decl = {k: v for k, v in _declared(spec).items() if k in CONFIG_FIELDS}
    return hashlib.sha256(canonical(decl).encode()).hexdigest()


def model_key(artifact: str, config: str) -> str:
    """The cache entry's key (``source_sha256``): the artifact key and the configuration key."""
    return hashlib.sha256(f"{artifact}:{config}".encode()).hexdigest()


class ModelCache:
    """The finished model directories of one output directory."""

    def __init__(self, out_dir: Path) -> None:
        self.root = out_dir / "cache" / "models"
        self.tmp_root = out_dir / ".tmp"

    def entry_dir(self, name: str, key: str) -> Path:
        return self.root / f"{name}-{key[:16]}"

    def record_path(self, name: str, key: str) -> Path:
        return self.root / f"{name}-{key[:16]}.json"

    def get(self, name: str, key: str) -> dict[str, Any] | None:
        base = os.path.join(self.root, f"{name}-{key[:16]}")  # entry_dir, as a plain string
        if not (os.path.isfile(base + ".json") and os.path.isdir(base)):
            return None
        try:
            with open(base + ".json", encoding="utf-8") as fh:
                data: dict[str, Any] = json.loads(fh.read())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None
        return data if data.get("source_sha256") == key else None

    def find_artifact(self, name: str, artifact: str) -> dict[str, Any] | None:
        """A cached record of ``name`` with the artifact key ``artifact`` (another configuration)."""
        if not self.root.is_dir():
            return None
        for rec in sorted(self.root.glob(f"{name}-*.json")):
            try:
                data: dict[str, Any] = json.loads(rec.read_text("utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
            key = data.get("source_sha256", "")
            if (
                data.get("name") == name
                and data.get("artifact_key") == artifact
                and rec.name == f"{name}-{key[:16]}.json"
                and self.entry_dir(name, key).is_dir()
            ):
                return data
        return None

    def new_temp_dir(self, name: str) -> Path:
        self.tmp_root.mkdir(parents=True, exist_ok=True)
        d = self.tmp_root / f"{name}.{os.urandom(16).hex()}"
        d.mkdir()
        return d

    def commit(self, name: str, key: str, tmp_dir: Path, record: dict[str, Any]) -> Path:
        """Rename ``tmp_dir`` into place, then write the record (atomically, last)."""
        self.root.mkdir(parents=True, exist_ok=True)
        final = self.entry_dir(name, key)
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp_dir, final)
        record = {**record, "sizes": file_sizes(final, record["files"])}
        rec = self.record_path(name, key)
        tmp = rec.with_name(f".{rec.name}.{os.urandom(16).hex()}.tmp")
        text = json.dumps(record, indent=1, sort_keys=True) + "\n"
        try:
            with space.guard(rec, len(text)):
                tmp.write_text(text, "utf-8")
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        os.replace(tmp, rec)
        return final

    def take(self, source: ModelCache, name: str, key: str) -> dict[str, Any] | None:
        """Copy the entry ``name``/``key`` of another build's cache into this one (hard links where
        possible; temp dir + rename, record last) when its files hash as its record says; returns
        the record, or None when the other cache lacks the entry or it is corrupt."""
        record = source.get(name, key)
        if record is None or source.check(name, key, record, full=True) is not None:
            return None
        tmp = self.new_temp_dir(name)
        try:
            shutil.rmtree(tmp)
            copy_model_dir(source.entry_dir(name, key), tmp)
            self.commit(name, key, tmp, {k: v for k, v in record.items() if k != "sizes"})
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return self.get(name, key)

    def check(self, name: str, key: str, record: dict[str, Any], *, full: bool) -> str | None:
        """Why the entry's files differ from its record (None when they match); a file of the recorded
        size not modified after the record is trusted unless ``full``."""
        return check_tree(
            self.entry_dir(name, key),
            record["files"],
            record.get("sizes"),
            self.record_path(name, key),
            full=full,
        )

    def prune(self, keep: set[tuple[str, str]]) -> list[str]:
        """Remove every entry but ``keep`` ((name, key) pairs); returns the names removed.

        Call it only after a successful build, with every entry the new manifest references. The
        record goes first (an entry without one is never trusted), then the directory is renamed
        to a ``.*.old`` name (removed again by the next build if this one is killed) and deleted.
        """
        if not self.root.is_dir():
            return []
        wanted = {f"{n}-{k[:16]}" for n, k in keep}  # entry_dir(n, k).name
        with os.scandir(self.root) as it:  # plain names: a fleet's cache holds thousands of entries
            names = sorted(e.name for e in it)
        removed = []
        for name in names:
            if name.startswith(".") or name.removesuffix(".json") in wanted:
                continue
            p = self.root / name
            if p.is_dir():
                old = p.with_name(f".{p.name}.{os.urandom(16).hex()}.old")
                (self.root / f"{p.name}.json").unlink(missing_ok=True)
                os.replace(p, old)
                shutil.rmtree(old, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
            removed.append(p.name)
        return removed

    def clean_temp(self) -> None:
        """Remove leftovers of killed builds (never trusted, only space)."""
        if self.tmp_root.is_dir():
            shutil.rmtree(self.tmp_root, ignore_errors=True)
