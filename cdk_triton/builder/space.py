"""Out of disk space: every write of the build ends, on ENOSPC, in one BuildError (exit code 1) that
names the path, the size being written and the space left; the writer removes its temp file first,
so nothing half-written stays behind under a trusted name."""

from __future__ import annotations

import errno
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from cdk_triton.errors import BuildError

Size = int | Callable[[], int] | None


def free_bytes(path: Path) -> int | None:
    """The space left on the file system holding ``path`` (its nearest existing parent)."""
    for p in (path, *path.parents):
        try:
            return shutil.disk_usage(p).free
        except OSError:
            continue
    return None


def no_space(path: Path, size: Size) -> BuildError:
    """The error of a write of ``size`` bytes to ``path`` that ran out of space."""
    try:
        n = size() if callable(size) else size
    except OSError:
        n = None
    free = free_bytes(path)
    what = f"{n:,} bytes" if n is not None else "an unknown number of bytes"
    left = f"{free:,} bytes left" if free is not None else "the space left is unknown"
    return BuildError(
        f"no space left on the device writing {path} ({what}; {left}); free some space or build into "
        "another --out (nothing half-written was kept)",
        code="NoSpaceLeft",
    )


def is_no_space(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


@contextmanager
def guard(path: Path, size: Size) -> Iterator[None]:
    """Turn ENOSPC (or a full quota) while writing ``path`` into :func:`no_space`."""
    try:
        yield
    except OSError as exc:
        if not is_no_space(exc):
            raise
        raise no_space(path, size) from None


def tree_bytes(root: Path) -> int:
    """Bytes under ``root`` (what a failed write had written so far)."""
    if root.is_file():
        return root.stat().st_size
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
