"""What ``make demo`` prints for a person to read (issue 42): its warnings fit a budget of lines.

The demo's synth stages capture the CDK CLI's output (their annotations are not printed), so the demo's
warnings are its two builds' (the example and the text example, run as ``demo.stages`` runs them: rich
progress on, at the 80 columns of a log) plus the local endpoint's one notice about the bundled server.
Marker ``slow``: it exports the example's models (about a minute here). The full ``make demo`` measured
before and after is in the issue's report (docs/security.md says how to reproduce it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk_triton.builder import run_build
from cdk_triton.config import advisories
from cdk_triton.demo.stages import TEXT_DECLARATION
from tests.output_budget import build_warnings, logged_warning

ROOT = Path(__file__).resolve().parents[3]
#: issue 42: the example's `make demo` prints at most this many lines of warnings
BUDGET_LINES = 25


@pytest.mark.slow
def test_the_demos_builds_print_at_most_25_lines_of_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CDK_TRITON_WHEELHOUSE", str(ROOT / ".wheelhouse"))  # as run_demo sets it
    monkeypatch.setenv("COLUMNS", "80")
    shown: set[str] = set()  # as run_demo shares it between its two builds
    for i, declaration in enumerate((Path("build") / "models.yaml", TEXT_DECLARATION)):
        result = run_build(
            ROOT / declaration, out_dir=tmp_path / f"out{i}", progress=True, shown_warnings=shown
        )
        assert any("[cdk-triton:HighAdvisory]" in w for w in result.warnings)  # recorded in both results
    printed = capsys.readouterr()
    measured = build_warnings(printed.err + printed.out)
    notice = advisories.local_server_notice()
    assert notice is not None
    measured += logged_warning(notice)  # `serve + invoke` logs it once
    said = printed.err.count("[cdk-triton:HighAdvisory]")
    assert said == 1  # printed once though both builds found it
    assert measured.warnings >= 5  # the advisories, the TorchScript and TensorRT ones, the local server's
    assert "CVE-" not in printed.err
    assert measured.lines <= BUDGET_LINES, (measured, printed.err)
