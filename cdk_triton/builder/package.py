"""Deterministic, streaming tar.gz archives of model repositories (compressed with isal).

Entries are sorted, with mtime 0, uid/gid 0, empty owner names and fixed modes (0755 dirs, 0644
files), and the gzip header carries no name and mtime 0: the same inputs give byte-identical files.
Files stream through in 1 MiB blocks, so memory stays flat however large the model.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from cdk_triton.builder import space
from cdk_triton.config import digest, layout

BLOCK = 1 << 20
COMPRESS_LEVEL = 1  # isal levels 0-3; 1 is ~300 MB/s per core with ratios close to gzip -6


class _HashingWriter:
    """A write-only file object that hashes and counts what passes through to ``raw``."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.sha = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes | memoryview) -> int:
        self.sha.update(data)
        self.size += len(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()

    def writable(self) -> bool:
        return True


class _ProgressReader:
    def __init__(self, fh: IO[bytes], progress: Callable[[int], None] | None) -> None:
        self.fh = fh
        self.progress = progress

    def read(self, n: int = -1) -> bytes:
        data = self.fh.read(n)
        if self.progress and data:
            self.progress(len(data))
        return data


def iter_tree(root: Path) -> list[Path]:
    """Every file and directory under ``root``, sorted, without __pycache__ or *.pyc."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        base = Path(dirpath)
        out += [base / d for d in dirnames]
        out += [base / f for f in filenames if not f.endswith(".pyc")]
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def tree_size(dirs: list[tuple[str, Path]]) -> int:
    return sum(p.stat().st_size for _, d in dirs for p in iter_tree(d) if p.is_file())


def _info(name: str, *, is_dir: bool, size: int = 0) -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.mtime = 0
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    if is_dir:
        ti.type = tarfile.DIRTYPE
        ti.mode = 0o755
    else:
        ti.type = tarfile.REGTYPE
        ti.mode = 0o644
        ti.size = size
    return ti


def write_tar(
    fileobj: Any, dirs: list[tuple[str, Path]], *, progress: Callable[[int], None] | None = None
) -> None:
    """Stream a tar of ``dirs`` (arcname, directory) into ``fileobj``: sorted, fixed metadata."""
    with tarfile.open(fileobj=fileobj, mode="w|", format=tarfile.PAX_FORMAT, bufsize=BLOCK) as tar:
        for arc, root in sorted(dirs):
            tar.addfile(_info(arc, is_dir=True))
            for p in iter_tree(root):
                name = f"{arc}/{p.relative_to(root).as_posix()}"
                if p.is_dir():
                    tar.addfile(_info(name, is_dir=True))
                else:
                    with p.open("rb") as fh:
                        tar.addfile(
                            _info(name, is_dir=False, size=p.stat().st_size), _ProgressReader(fh, progress)
                        )  # type: ignore[arg-type]


def pack(
    dirs: list[tuple[str, Path]],
    dest_dir: Path,
    stem: str,
    *,
    threads: int = 1,
    progress: Callable[[int], None] | None = None,
) -> tuple[Path, str, int]:
    """Pack ``dirs`` into ``<dest_dir>/<stem>-<sha12>.tar.gz``; returns (path, sha256, size).

    Written to a temp file and renamed into place (the name carries the content hash), so a killed
    build never leaves a half archive under a trusted name.
    """
    dest_dir.mkdir(parents=True, exist_ok=True)
    tmp = dest_dir / f".{stem}.{os.urandom(16).hex()}.tmp"
    try:
        with (
            space.guard(dest_dir / f"{stem}{layout.ARCHIVE_SUFFIX}", lambda: tree_size(dirs)),
            tmp.open("wb") as raw,
        ):
            hw = _HashingWriter(raw)
            from isal import igzip_threaded

            gz = igzip_threaded.open(
                hw, "wb", compresslevel=COMPRESS_LEVEL, threads=threads, block_size=BLOCK
            )
            try:
                write_tar(gz, dirs, progress=progress)
            finally:
                gz.close()
            raw.flush()
            os.fsync(raw.fileno())
        digest = hw.sha.hexdigest()
        final = dest_dir / layout.archive_name(stem, digest)
        os.replace(tmp, final)
        return final, digest, hw.size
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


sha256_file = digest.file_sha256


def tree_digest(root: Path) -> tuple[str, dict[str, str], int]:
    """(tree hash, {path: sha256}, total bytes) of a directory: ``config.digest``, the one definition."""
    files, size = digest.tree_files(root)
    return digest.combine(files), files, size


def file_sizes(root: Path, files: Any) -> dict[str, int]:
    """The size of each file (relative to ``root``): with the record's own mtime, the stat shortcut."""
    return {rel: (root / rel).stat().st_size for rel in files}


def check_tree(
    root: Path, files: dict[str, str], sizes: dict[str, int] | None, stamp: Path | None, *, full: bool
) -> str | None:
    """Why the files under ``root`` differ from ``files`` (path -> sha256), or None when they match.

    Unless ``full``, a file of the size recorded in ``sizes`` and not modified after the record
    ``stamp`` was written is trusted (the stat shortcut; records hold no mtimes, so the same build gives
    the same bytes); any other is hashed. A missing or an extra file is a difference too."""
    if not root.is_dir():
        return "it is missing"
    present = _files_under(root)
    for rel in sorted(set(files) - present):
        return f"{rel} is missing"
    for rel in sorted(present - set(files)):
        return f"{rel} is not in its record"
    try:
        written = stamp.stat().st_mtime_ns if stamp is not None and sizes is not None else None
    except OSError:
        written = None
    for rel, sha in sorted(files.items()):
        st = os.stat(os.path.join(root, rel))
        if not full and written is not None and sizes.get(rel) == st.st_size and st.st_mtime_ns <= written:  # type: ignore[union-attr]
            continue
        if sha256_file(root / rel) != sha:
            return f"{rel} does not match its sha256"
    return None


def _files_under(root: Path) -> set[str]:
    """The files under ``root`` as ``/``-separated relative paths, as :func:`iter_tree` finds them
    (no __pycache__, no *.pyc), with plain strings: a fleet's no-op build checks thousands."""
    out: set[str] = set()
    todo = [(str(root), "")]
    while todo:  # os.scandir: the entry's type comes with the listing (no stat per file)
        path, prefix = todo.pop()
        with os.scandir(path) as it:
            for e in it:
                if e.is_dir():  # as os.walk: a link to a directory is neither a file nor entered
                    if e.name != "__pycache__" and not e.is_symlink():
                        todo.append((e.path, prefix + e.name + "/"))
                elif e.is_file() and not e.name.endswith(".pyc"):
                    out.add(prefix + e.name)
    return out


def copy_model_dir(src: Path, dest: Path) -> None:
    """Copy one cached model directory (hard links where possible: cache entries are immutable)."""
    dest.mkdir(parents=True)
    for p in iter_tree(src):
        target = dest / p.relative_to(src)
        if p.is_dir():
            target.mkdir(exist_ok=True)
        else:
            try:
                os.link(p, target)
            except OSError:
                shutil.copyfile(p, target)
