"""Model repositories: SME directories and the model sets of MME archives (CONTRACT.md section 5).

Layout: ``<repo>/<model>/config.pbtxt`` + ``<repo>/<model>/1/<file>``; an ensemble directory has
an empty ``1/``. No ``__pycache__`` ever lands in a repository.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

from cdk_triton.builder.package import iter_tree, tree_digest


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


def assemble(models: dict[str, Path], dest: Path, *, key: str) -> tuple[str, dict[str, str], int, bool]:
    """Make ``dest`` a repository holding ``models`` (name -> cached dir) unless it already does.

    Returns (tree sha256, files, size, rebuilt). Built in a temp directory and swapped in; the key
    file is written last, so a repository without a matching key file is always rebuilt.
    """
    key_file = dest.parent / f".{dest.name}.key.json"
    if dest.is_dir() and key_file.is_file():
        try:
            rec = json.loads(key_file.read_text("utf-8"))
            if rec.get("key") == key:
                return rec["sha256"], rec["files"], int(rec["size"]), False
        except (OSError, json.JSONDecodeError, KeyError):
            pass
    key_file.unlink(missing_ok=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.{uuid.uuid4().hex}.tmp"
    tmp.mkdir()
    try:
        for name, src in sorted(models.items()):
            copy_model_dir(src, tmp / name)
        digest, files, size = tree_digest(tmp)
        if dest.exists():
            old = dest.parent / f".{dest.name}.{uuid.uuid4().hex}.old"
            os.replace(dest, old)
            shutil.rmtree(old, ignore_errors=True)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    kt = key_file.with_name(key_file.name + ".tmp")
    kt.write_text(json.dumps({"key": key, "sha256": digest, "files": files, "size": size}, sort_keys=True))
    os.replace(kt, key_file)
    return digest, files, size, True
