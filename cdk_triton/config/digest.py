"""The content digests of build outputs, one definition for the build's records, synth's trust check and serve.

``file_sha256``: sha256 of a file (an archive). ``tree_sha256``: the tree hash of a directory, sha256
over sorted ``<path>\\0<file sha256>\\n`` lines, ``__pycache__`` and ``*.pyc`` skipped (what
the build records as an SME repository's ``sha256``; ``cdk_triton.builder.package`` calls these). Standard
library only; reads files, writes nothing.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

BLOCK = 1 << 20


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(BLOCK), b""):
            h.update(chunk)
    return h.hexdigest()


def tree_files(root: Path) -> tuple[dict[str, str], int]:
    """({relative path: file sha256}, total bytes) of the files under ``root``, ``__pycache__`` and
    ``*.pyc`` skipped: what the build records of a repository and serve checks again."""
    files: dict[str, str] = {}
    size = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for f in filenames:
            if not f.endswith(".pyc"):
                p = Path(dirpath) / f
                files[p.relative_to(root).as_posix()] = file_sha256(p)
                size += p.stat().st_size
    return files, size


def combine(files: dict[str, str]) -> str:
    """The tree hash of ``files`` (relative path -> sha256): sha256 over the sorted ``<path>\\0<sha256>\\n`` lines."""
    h = hashlib.sha256()
    for k in sorted(files):
        h.update(f"{k}\0{files[k]}\n".encode())
    return h.hexdigest()


def tree_sha256(root: Path) -> str:
    """The build's tree hash of a directory (see the module docstring)."""
    return combine(tree_files(root)[0])


def local_digest(path: Path) -> str | None:
    """The digest the manifest records for ``path`` (a file's sha256, a directory's tree hash); None when absent."""
    if path.is_file():
        return file_sha256(path)
    if path.is_dir():
        return tree_sha256(path)
    return None
