"""Corrupt cache entries and outputs are rebuilt with a warning, never uploaded; a full disk is one
clear error (exit code 1, no traceback) with nothing half-written."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.builder import run_build
from cdk_triton.builder.package import tree_digest
from cdk_triton.cli import main
from cdk_triton.config.manifest import Manifest
from cdk_triton.errors import BuildError
from tests.unit.builder.helpers import python_model, write_decl

ENDPOINTS = """
  - name: s
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [pre]
    packaging: directory
  - name: m
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [pre]
"""


def _entry(out: Path) -> Path:
    (d,) = [p for p in (out / "cache" / "models").iterdir() if p.is_dir() and not p.name.startswith(".")]
    return d


def _archive(out: Path) -> Path:
    (a,) = (out / "mme" / "m").glob("*.tar.gz")
    return a


def _flip(path: Path) -> None:
    """Flip one bit in the middle, keeping the size and the mtime (only a hash can tell)."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _append(path: Path, text: str) -> None:
    """Edit in place (the file's inode, as an editor writing through would), keeping the mtime."""
    st = path.stat()
    with path.open("a") as fh:
        fh.write(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _bad_record_sha(out: Path) -> None:
    rec = _entry(out).with_suffix(".json")
    data = json.loads(rec.read_text())
    data["files"]["1/model.py"] = "0" * 64
    rec.write_text(json.dumps(data))


CORRUPTIONS: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated_archive": (lambda out: _truncate(_archive(out)), "archive"),
    "bit_flipped_archive": (lambda out: _flip(_archive(out)), "archive"),
    "edited_config": (lambda out: _append(_entry(out) / "config.pbtxt", "\nmax_batch_size: 99\n"), "pre-"),
    "missing_file": (lambda out: _archive(out).unlink(), "is missing"),
    "edited_model_file": (lambda out: _append(_entry(out) / "1" / "model.py", "\nBROKEN = 1\n"), "pre-"),
    "deleted_record": (lambda out: _entry(out).with_suffix(".json").unlink(), "no valid record"),
    "record_sha_disagrees": (_bad_record_sha, "pre-"),
    "truncated_repository_file": (
        lambda out: _truncate(out / "sme" / "s" / "repository" / "pre" / "1" / "model.py"),
        "corrupt",
    ),
}


def _intact(m: Manifest) -> None:
    """Every output matches the manifest: cache entries, the repository, the archive."""
    out = Path(m.path or "").parent
    entry = m.models["pre"]
    assert tree_digest(_entry(out))[1] == entry.files
    s = m.endpoints["s"]
    assert tree_digest(m.resolve(s.local_path or ""))[0] == s.sha256
    t = m.endpoints["m"].target_models["pre"]
    assert hashlib.sha256(m.resolve(t.local_path).read_bytes()).hexdigest() == t.sha256


@pytest.fixture(scope="module")
def s3(moto_s3: Any) -> Any:
    moto_s3.create_bucket(Bucket="hard-bucket")
    return moto_s3


@pytest.mark.parametrize("how", ["verify", "upload"])
@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
def test_corruption_is_rebuilt_with_a_warning(case: str, how: str, tmp_path: Path, s3: Any) -> None:
    corrupt, named = CORRUPTIONS[case]
    location = f"s3://hard-bucket/{case}-{how}/"
    decl = write_decl(tmp_path, python_model(), endpoints=ENDPOINTS, location=location)
    out = tmp_path / "out"
    good = run_build(decl, out_dir=out, progress=False)
    corrupt(out)
    kw: dict[str, Any] = {"verify": True} if how == "verify" else {"upload": True, "s3_client": s3}
    again = run_build(decl, out_dir=out, progress=False, **kw)
    assert [w for w in again.warnings if named in w and "rebuilding" in w or "packing it again" in w], (
        again.warnings
    )
    _intact(again.manifest)
    for name, entry in good.manifest.models.items():  # the same bytes as before the corruption
        assert (again.manifest.models[name].files, again.manifest.models[name].config_sha256) == (
            entry.files,
            entry.config_sha256,
        )
    assert again.manifest.endpoints["s"].sha256 == good.manifest.endpoints["s"].sha256
    assert (
        again.manifest.endpoints["m"].target_models["pre"].sha256
        == good.manifest.endpoints["m"].target_models["pre"].sha256
    )
    if how == "upload":  # every object uploaded holds the bytes the manifest describes
        t = again.manifest.endpoints["m"].target_models["pre"]
        key = t.s3_uri.removeprefix("s3://hard-bucket/")
        assert (
            hashlib.sha256(s3.get_object(Bucket="hard-bucket", Key=key)["Body"].read()).hexdigest()
            == t.sha256
        )
        s = again.manifest.endpoints["s"]
        files = tree_digest(again.manifest.resolve(s.local_path or ""))[1]
        prefix = (s.s3_uri or "").removeprefix("s3://hard-bucket/")
        for rel, sha in files.items():
            body = s3.get_object(Bucket="hard-bucket", Key=prefix + rel)["Body"].read()
            assert hashlib.sha256(body).hexdigest() == sha, rel
    # and the next no-op build trusts the rebuilt outputs
    warnings = run_build(decl, out_dir=out, progress=False, verify=True).warnings
    assert [w for w in warnings if "Advisory]" not in w] == []  # the release's advisories: test_advisories.py


def test_a_plain_noop_build_trusts_the_stat_shortcut_but_catches_changed_sizes(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, python_model(), endpoints=ENDPOINTS)
    out = tmp_path / "out"
    run_build(decl, out_dir=out, progress=False)
    _truncate(out / "sme" / "s" / "repository" / "pre" / "1" / "model.py")
    again = run_build(decl, out_dir=out, progress=False)
    assert any("corrupt" in w for w in again.warnings)
    _intact(again.manifest)


def _no_space(*args: Any, **kwargs: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def _leftovers(out: Path) -> list[str]:
    """Temp files and directories (the cache's empty temp root aside)."""
    found = [p for p in out.rglob("*") if p.name.endswith((".tmp", ".old")) and p != out / ".tmp"]
    found += list((out / ".tmp").iterdir()) if (out / ".tmp").is_dir() else []
    return sorted(str(p) for p in found)


@pytest.mark.parametrize(
    ("target", "where"),
    [
        ("cdk_triton.builder.export.python.export_model", "cache/models/pre-"),
        ("cdk_triton.builder.package.write_tar", "mme/m/pre.tar.gz"),
        ("cdk_triton.builder.package.copy_model_dir", "sme/s/repository"),
        ("cdk_triton.builder.samples.json_text", None),
        ("cdk_triton.config.manifest.json.dump", "manifest.json"),
    ],
    ids=["export", "package", "repository", "samples", "manifest"],
)
def test_out_of_space_is_one_clear_error(
    target: str, where: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decl = write_decl(tmp_path, python_model(), endpoints=ENDPOINTS)
    out = tmp_path / "out"
    before = None
    if target.endswith("json_text"):  # built once; the samples are written again into a full disk
        where = "samples/pre.request.json"
        before = run_build(decl, out_dir=out, progress=False).manifest_path.read_text()
        for f in (out / "samples").iterdir():
            f.unlink()
        monkeypatch.setattr(Path, "write_text", lambda *a, **k: _no_space())
    elif target.startswith("cdk_triton.builder.package.copy_model_dir"):
        monkeypatch.setattr("cdk_triton.builder.repository.copy_model_dir", _no_space)
    else:
        monkeypatch.setattr(target, _no_space)
    with pytest.raises(BuildError) as e:
        run_build(decl, out_dir=out, progress=False)
    msg = str(e.value)
    assert e.value.code == "NoSpaceLeft", msg
    assert where in msg and "bytes" in msg and "left" in msg, msg
    assert _leftovers(out) == []
    if before is None:
        assert not (out / "manifest.json").exists()
    else:
        assert (out / "manifest.json").read_text() == before
    monkeypatch.undo()
    ok = run_build(decl, out_dir=out, progress=False)  # the lock was released; nothing half-written trusted
    _intact(ok.manifest)


def test_out_of_space_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    decl = write_decl(tmp_path, python_model(), endpoints=ENDPOINTS)
    monkeypatch.setattr("cdk_triton.builder.package.write_tar", _no_space)
    rc = main(["build", "--config", str(decl), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 1 and "no space left on the device writing" in err and "Traceback" not in err
    assert "[NoSpaceLeft]" in err
