"""bench/goldens.py: recordings compared file by file, asset hashes and temporary paths masked."""

from __future__ import annotations

from pathlib import Path

from bench.goldens import canonical, compare, expected_differences, mask

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


def test_a_difference_stated_as_expected_is_counted_apart_and_nothing_else_is(tmp_path: Path) -> None:
    before = {"Resources": {"VerifyAaaa": {"V": {"InstanceType": "ml.g5.xlarge"}}}}
    after = {"Resources": {"VerifyBbbb": {"V": {"InstanceType": "ml.g5.xlarge", "InferenceAmiVersion": "x"}}}}
    a = _write(tmp_path / "a", {"t/1.json": canonical(before)})
    b = _write(tmp_path / "b", {"t/1.json": canonical(after)})
    assert compare(a, b) == ["differs: t/1.json"]
    assert compare(a, b, expect_keys=("InferenceAmiVersion",)) == ["differs: t/1.json"]  # the id too
    stated = {"expect_keys": ("InferenceAmiVersion",), "expect_masks": (r"Verify[A-Za-z]{4}",)}
    assert compare(a, b, **stated) == []
    assert expected_differences(a, b, **stated) == ["t/1.json"]
    b2 = _write(tmp_path / "b2", {"t/1.json": canonical({**after, "Outputs": {}})})
    assert compare(a, b2, **stated) == ["differs: t/1.json"]  # anything else still counts
