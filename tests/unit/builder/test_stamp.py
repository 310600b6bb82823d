"""The no-op stamp: a plain `cdk-triton build` answers from ``<out>/.noop-stamp`` when no input, output,
option or tool moved since a no-op build wrote it, and runs the full build on any difference."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cdk_triton import cli
from cdk_triton.builder import stamp, steps
from tests.unit.builder.helpers import python_model, write_decl

PAST = time.time_ns() - 3600 * 10**9


def _settle(root: Path, ns: int = PAST) -> None:
    """Date every input under ``root`` (not the outputs) an hour back: older than the settle window."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "out"]
        for p in (dirpath, *(os.path.join(dirpath, f) for f in filenames)):
            os.utime(p, ns=(ns, ns))


def _tree(out: Path) -> dict[str, str]:
    """sha256 of every file under ``out`` but the stamp and the lock."""
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != ".lock" and not p.name.startswith(stamp.STAMP_NAME)
    }


class Runs:
    """`cdk-triton build` in this process, counting the full builds it ran."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        self.full = 0
        self.capsys = capsys
        real = steps.run_build

        def counted(*a: Any, **kw: Any) -> Any:
            self.full += 1
            return real(*a, **kw)

        monkeypatch.setattr(steps, "run_build", counted)

    def __call__(self, decl: Path, *extra: str) -> tuple[int, str]:
        self.capsys.readouterr()
        rc = cli.main(
            ["build", "--config", str(decl), "--out", str(decl.parent / "out"), "--no-progress", *extra]
        )
        return rc, self.capsys.readouterr().out


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """A python model built, then a full no-op build that wrote the stamp; (decl, runs, its lines)."""
    decl = write_decl(tmp_path, python_model())
    runs = Runs(monkeypatch, capsys)
    # inputs are dated an hour back; the package and sys.path folders may move while the suite runs
    # (test_a_recently_modified_input_is_not_stamped keeps the settle window)
    monkeypatch.setattr(stamp, "SETTLE_NS", 0)
    assert runs(decl)[0] == 0
    assert not (tmp_path / "out" / stamp.STAMP_NAME).exists()  # a build that did work stamps nothing
    _settle(tmp_path)
    rc, lines = runs(decl)
    assert rc == 0 and "1 models up to date" in lines and runs.full == 2
    assert (tmp_path / "out" / stamp.STAMP_NAME).is_file()
    return decl, runs, lines


def test_the_stamp_answers_with_the_full_builds_lines_and_same_bytes(built) -> None:  # type: ignore[no-untyped-def]
    decl, runs, lines = built
    before = _tree(decl.parent / "out")
    assert runs(decl) == (0, lines)
    assert runs.full == 2  # answered from the stamp
    assert _tree(decl.parent / "out") == before


def _edit_source(decl: Path) -> None:
    model = decl.parent / "preprocess" / "model.py"
    model.write_text(model.read_text() + "\n# edited\n")
    _settle(decl.parent, PAST + 10**9)


def _touch_yaml(decl: Path) -> None:
    os.utime(decl, ns=(PAST + 10**9, PAST + 10**9))


def _new_file_in_tree(decl: Path) -> None:
    (decl.parent / "preprocess" / "helper.py").write_text("X = 1\n")
    _settle(decl.parent, PAST + 10**9)


def _delete_output(decl: Path) -> None:
    next((decl.parent / "out" / "samples").glob("*.json")).unlink()


def _alter_output(decl: Path) -> None:
    with (decl.parent / "out" / "manifest.json").open("a") as fh:
        fh.write(" ")


def _extra_output(decl: Path) -> None:
    (decl.parent / "out" / "cache" / "models" / "stray.json").write_text("{}")


def _extra_folder(decl: Path) -> None:
    (decl.parent / "out" / "mme" / "stray").mkdir(parents=True)


def _corrupt_stamp(decl: Path) -> None:
    p = decl.parent / "out" / stamp.STAMP_NAME
    data = bytearray(p.read_bytes())
    data[-2] ^= 1
    p.write_bytes(bytes(data))


def _truncate_stamp(decl: Path) -> None:
    p = decl.parent / "out" / stamp.STAMP_NAME
    p.write_bytes(p.read_bytes()[:100])


CHANGES = {
    "models.yaml touched": (_touch_yaml, 0),
    "source edited": (_edit_source, 1),
    "file added to a source tree": (_new_file_in_tree, 1),
    "output deleted": (_delete_output, 0),
    "output altered": (_alter_output, 0),
    "file added under out": (_extra_output, 0),
    "empty folder added under out": (_extra_folder, 0),
    "stamp corrupt": (_corrupt_stamp, 0),
    "stamp truncated": (_truncate_stamp, 0),
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_any_change_runs_the_full_build(built, change: str, capsys) -> None:  # type: ignore[no-untyped-def]
    decl, runs, lines = built
    mutate, exported = CHANGES[change]
    mutate(decl)
    rc, _ = runs(decl)
    assert rc == 0 and runs.full == 3, change
    out = decl.parent / "out"
    assert (out / "manifest.json").read_text().endswith("}\n")  # the full build rewrote what differed
    assert len(list((out / "samples").glob("*.json"))) == 2
    assert not (out / "cache" / "models" / "stray.json").exists()
    assert not (out / "mme" / "stray").exists()
    if exported:  # the full build exported again (no stamp: it did work), then a no-op stamps
        assert not (out / stamp.STAMP_NAME).exists()
        _settle(decl.parent)
        runs(decl)
    assert runs(decl) == (0, lines) and runs.full == 3 + exported


def test_options_environment_and_flags_run_the_full_build(built, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    decl, runs, _ = built
    runs(decl, "--artifact-location", "s3://other-bucket/p/")
    assert runs.full == 3
    runs(decl)  # the stamp went with the other location's build: full again, then stamped
    assert runs.full == 4
    monkeypatch.setenv("CDK_TRITON_ARTIFACT_LOCATION", "s3://env-bucket/p/")
    runs(decl)
    assert runs.full == 5
    monkeypatch.delenv("CDK_TRITON_ARTIFACT_LOCATION")
    for flag in (["--force"], ["--verify"], ["--only", "pre"], ["--formats", "python"], ["--jobs", "1"]):
        before = runs.full
        runs(decl, *flag)
        assert runs.full == before + 1, flag


def test_a_tool_version_change_runs_the_full_build(built, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    decl, runs, _ = built
    site = tmp_path / "site"
    (site / "numpy-1.0.dist-info").mkdir(parents=True)
    _settle(site)
    monkeypatch.syspath_prepend(str(site))
    runs(decl)  # sys.path changed: full, then stamped with this site folder
    _settle(decl.parent)
    runs(decl)
    assert runs.full == 4
    runs(decl)
    assert runs.full == 4
    (site / "numpy-1.0.dist-info").rename(site / "numpy-2.0.dist-info")  # as pip upgrading it
    runs(decl)
    assert runs.full == 5


def test_a_killed_build_leaves_no_stamp(built, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    decl, runs, _ = built
    _touch_yaml(decl)  # the full build runs

    def killed(ctx: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(steps, "STEPS", (steps.outputs.prepare, killed))
    assert runs(decl)[0] == 130
    assert runs.full == 3 and not (decl.parent / "out" / stamp.STAMP_NAME).exists()


def test_a_recently_modified_input_is_not_stamped(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    decl = write_decl(tmp_path, python_model())
    runs = Runs(monkeypatch, capsys)
    runs(decl)
    _settle(tmp_path)
    os.utime(decl)  # now: inside the settle window of the next build
    runs(decl)
    assert not (tmp_path / "out" / stamp.STAMP_NAME).exists()


def test_the_stamp_check_imports_only_the_standard_library(built) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    decl, _, lines = built
    code = (
        "import sys\nfrom cdk_triton import cli\n"
        f"rc = cli.main(['build', '--config', {str(decl)!r}, '--out', {str(decl.parent / 'out')!r}, '--no-progress'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('cdk_triton') or m in ('yaml', 'rich', 'dataclasses')))"
    )
    for _ in range(3):  # another sys.path than pytest's: a first run stamps, the last answers
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parents[3],
        )
    assert proc.stdout.startswith(lines), proc.stdout
    loaded = eval(proc.stdout.splitlines()[-1])  # noqa: S307 (our own list literal)
    assert loaded == [
        "cdk_triton",
        "cdk_triton._lazy",  # the packages' first-use imports (standard library only)
        "cdk_triton.builder",
        "cdk_triton.builder.commands",
        "cdk_triton.builder.stamp",
        "cdk_triton.cli",
        "cdk_triton.errors",
    ]


def test_the_no_op_lines_are_todays(built) -> None:  # type: ignore[no-untyped-def]
    _, _, lines = built
    first, second = lines.splitlines()
    assert first == "cdk-triton build: 1 models up to date"
    assert second.startswith("exported 0, reconfigured 0, packaged 0, uploaded 0, copied 0, up to date ")


def test_a_factorys_sources_and_their_folders_are_inputs(tmp_path: Path) -> None:
    from cdk_triton.builder.reference import factory_sources, source_inputs
    from tests.unit.builder.helpers import spec_of, tiny

    spec = spec_of(tmp_path, tiny("t"))
    m = spec.model("t")
    found = set(source_inputs(spec, m))
    files = set(factory_sources(spec, m).values())
    assert files and files <= found
    assert {f.parent for f in files} | {tmp_path.resolve()} <= found  # a new sibling module moves these


def test_the_folders_an_import_was_looked_for_in_are_inputs(tmp_path: Path) -> None:
    """``from ns.deep import helper`` with no helper yet: creating ns/deep/helper.py moves ns/deep."""
    from cdk_triton.builder.reference import source_inputs
    from tests.unit.builder.helpers import spec_of, tiny

    (tmp_path / "ns" / "deep").mkdir(parents=True)
    (tmp_path / "fac.py").write_text("from ns.deep import helper\nfrom tiny_models import tiny\n")
    spec = spec_of(tmp_path, tiny("t", factory="tiny").replace("tiny_models:", "fac:"))
    found = set(source_inputs(spec, spec.model("t")))
    assert {
        tmp_path.resolve() / "ns",
        tmp_path.resolve() / "ns" / "deep",
        tmp_path.resolve() / "fac.py",
    } <= found


def test_a_tool_version_from_egg_info_metadata_is_not_stamped(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from cdk_triton.builder import cache

    monkeypatch.setattr(stamp, "SETTLE_NS", 0)
    real = cache.tool_versions
    monkeypatch.setattr(cache, "tool_versions", lambda: {**real(), "isal": "0.0.1"})  # not a dist-info name
    monkeypatch.setattr("cdk_triton.builder.preflight.tool_versions", cache.tool_versions)
    decl = write_decl(tmp_path, python_model())
    runs = Runs(monkeypatch, capsys)
    runs(decl)
    _settle(tmp_path)
    runs(decl)
    assert runs.full == 2 and not (tmp_path / "out" / stamp.STAMP_NAME).exists()
