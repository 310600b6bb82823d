"""bench/goldens.py: recordings compared file by file, asset hashes and temporary paths masked."""

from __future__ import annotations

from pathlib import Path

from bench.goldens import canonical, compare, mask

HASH = "a" * 64


def test_asset_hashes_and_given_paths_are_masked() -> None:
    text = f'{{"S3Key": "{HASH}.zip", "Path": "/tmp/x1/out/manifest.json"}}'
    assert mask(text, "/tmp/x1") == '{"S3Key": "<HASH>.zip", "Path": "<TMP>/out/manifest.json"}'
    assert canonical({"b": 1, "a": HASH}) == canonical({"a": "b" * 64, "b": 1})


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_identical_recordings_have_no_difference(tmp_path: Path) -> None:
    files = {"apps/app/S.json": canonical({"Resources": {}}), "build.json": "{}\n"}
    assert compare(_write(tmp_path / "a", files), _write(tmp_path / "b", files)) == []


def test_a_changed_missing_or_extra_file_is_reported(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", {"t/1.json": "x", "t/2.json": "y"})
    b = _write(tmp_path / "b", {"t/1.json": "z", "t/3.json": "y"})
    assert compare(a, b) == [f"only in {a}: t/2.json", f"only in {b}: t/3.json", "differs: t/1.json"]
