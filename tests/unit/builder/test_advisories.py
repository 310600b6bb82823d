"""``cdk-triton build`` against NVIDIA's advisories of its ``triton_version`` (``config.advisories``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk_triton.builder import run_build
from cdk_triton.builder.declarations import load_declaration
from cdk_triton.config import default_release
from cdk_triton.config.manifest import read_manifest
from cdk_triton.errors import TritonValidationError
from tests.acknowledgments import CRITICAL
from tests.unit.builder.helpers import tiny, write_decl


def _without_acknowledgments(decl: Path, version: str = "24.09") -> Path:
    """The declaration ``write_decl`` wrote, without the suite's acknowledgment and pinned to ``version``."""
    lines = decl.read_text().splitlines(keepends=True)
    kept = [ln for ln in lines if not ln.startswith(("acknowledged_advisories:", "  CVE-"))]
    decl.write_text("".join(kept).replace("triton_version: '24.09'", f"triton_version: '{version}'"))
    return decl


def test_fails_build_of_release_with_critical_advisory_when_the_library_acknowledgment_is_refused(
    tmp_path: Path,
) -> None:
    decl = _without_acknowledgments(write_decl(tmp_path, tiny()))
    decl.write_text(decl.read_text() + f"{default_release.KEY}: false\n")
    with pytest.raises(TritonValidationError, match=r"\[CriticalAdvisory\]") as info:
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    text = str(info.value)
    assert "CVE-2025-23310" in text and "fixed in 25.07" in text
    assert "Triton 26.05" in text  # the first SageMaker release with every fix
    assert "acknowledged_advisories=" in text and f"{decl}: triton_version" in text
    left = (
        [f.name for f in (tmp_path / "out").rglob("*") if f.is_file()] if (tmp_path / "out").exists() else []
    )
    assert left in ([], [".lock"]), left  # raised before anything is written


def test_default_release_builds_on_the_library_acknowledgment_and_says_so(tmp_path: Path) -> None:
    result = run_build(
        _without_acknowledgments(write_decl(tmp_path, tiny())), out_dir=tmp_path / "out", progress=False
    )
    said = [w for w in result.warnings if f"[{default_release.WARNING}]" in w]
    assert len(said) == 1 and "acknowledged by the library, not by you" in said[0]
    manifest = read_manifest(tmp_path / "out" / "manifest.json")
    assert manifest.acknowledged_advisories == {} and manifest.library_acknowledgments is True
    assert "library_acknowledgments" not in (tmp_path / "out" / "manifest.json").read_text()


def test_a_refusal_of_the_library_acknowledgment_reaches_the_manifest(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, tiny())
    decl.write_text(decl.read_text() + f"{default_release.KEY}: false\n")
    run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert read_manifest(tmp_path / "out" / "manifest.json").library_acknowledgments is False


def test_acknowledged_build_warns_of_the_rest_and_records_the_acknowledgment(tmp_path: Path) -> None:
    result = run_build(write_decl(tmp_path, tiny()), out_dir=tmp_path / "out", progress=False)
    assert any(
        "[cdk-triton:HighAdvisory]" in w and "cdk-triton advisories --release 24.09" in w and "CVE-" not in w
        for w in result.warnings
    )
    assert any("[cdk-triton:MediumAdvisory]" in w for w in result.warnings)
    manifest = read_manifest(tmp_path / "out" / "manifest.json")
    assert manifest.acknowledged_advisories == CRITICAL


def test_release_without_critical_advisory_builds_without_acknowledgment(tmp_path: Path) -> None:
    spec = load_declaration(_without_acknowledgments(write_decl(tmp_path, tiny()), "26.05"))
    assert spec.acknowledged_advisories == {}


@pytest.mark.parametrize(
    ("entry", "code"),
    [("CVE-2025-2331: typo", "UnknownAdvisory"), ("CVE-2025-23319: ''", "AdvisoryReasonMissing")],
)
def test_fails_malformed_acknowledgment(tmp_path: Path, entry: str, code: str) -> None:
    decl = write_decl(tmp_path, tiny())
    decl.write_text(
        decl.read_text().replace("acknowledged_advisories:\n", f"acknowledged_advisories:\n  {entry}\n")
    )
    with pytest.raises(TritonValidationError, match=rf"\[{code}\]"):
        load_declaration(decl)


@pytest.mark.parametrize("verbose", [False, True])
def test_an_advisory_warning_is_one_line_and_verbose_adds_its_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], verbose: bool
) -> None:
    run_build(write_decl(tmp_path, tiny()), out_dir=tmp_path / "out", progress=True, verbose=verbose)
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(said) == 2 and "[cdk-triton:HighAdvisory]" in " ".join(err.split())  # the code is text
    assert ("CVE-2025-23319 (CVSS 8.1, python-backend" in " ".join(err.split())) is verbose
