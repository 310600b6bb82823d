"""Deterministic, clean tar.gz archives."""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np

from cdk_triton.builder.package import pack


def _tree(root: Path, big: int = 0) -> Path:
    (root / "m" / "1" / "__pycache__").mkdir(parents=True)
    (root / "m" / "1" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"junk")
    (root / "m" / "1" / "model.bin").write_bytes(np.random.default_rng(0).bytes(big or 100_000))
    (root / "m" / "config.pbtxt").write_text('name: "m"\n')
    (root / "e" / "1").mkdir(parents=True)
    (root / "e" / "config.pbtxt").write_text('name: "e"\nplatform: "ensemble"\n')
    return root


def test_archives_are_deterministic_and_clean(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    a, sha_a, _ = pack([("m", src / "m"), ("e", src / "e")], tmp_path / "a", "t")
    import os
    import time

    os.utime(src / "m" / "config.pbtxt", (time.time() + 50, time.time() + 50))
    b, sha_b, _ = pack([("e", src / "e"), ("m", src / "m")], tmp_path / "b", "t", threads=2)
    assert sha_a == sha_b and a.read_bytes() == b.read_bytes() and a.name == f"t-{sha_a[:12]}.tar.gz"
    with tarfile.open(a) as tar:
        names = tar.getnames()
        assert names == sorted(names)
        assert "e/1" in names and not any("__pycache__" in n or n.endswith(".pyc") for n in names)
        assert {(m.mode, m.uid, m.gid, m.mtime, m.uname) for m in tar.getmembers() if m.isfile()} == {
            (0o644, 0, 0, 0, "")
        }
    assert a.read_bytes()[4:8] == b"\0\0\0\0"  # gzip header mtime 0
    assert not list((tmp_path / "a").glob(".*.tmp"))
