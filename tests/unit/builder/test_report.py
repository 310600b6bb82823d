"""Progress reporting: silent when disabled; the summary rows of a build."""

from __future__ import annotations

from typing import Any

import pytest

from cdk_triton.builder.report import Reporter


def test_disabled_reporter_is_silent(capsys: pytest.CaptureFixture[str]) -> None:
    with Reporter(False) as r:
        r.start("export", 2, "models")
        r.advance("export", 1, what="m")
        r.finish("export")
        r.warn("nothing to see")
    assert capsys.readouterr() == ("", "")


def test_summary_rows_name_every_model(tiny_build) -> None:  # type: ignore[no-untyped-def]
    result, _ = tiny_build
    assert [(r["model"], r["status"]) for r in result.rows] == [
        ("t_onnx", "exported"),
        ("t_ts", "exported"),
        ("t_script", "exported"),
    ]


def _printed(**kwargs: Any) -> str:
    import io

    from rich.console import Console

    buf = io.StringIO()
    shown: set[str] = kwargs.pop("shown", set())
    for _ in range(2):  # two builds of one run (the demo's) sharing what was shown
        with Reporter(True, console=Console(file=buf, width=200), shown=shown, **kwargs) as r:
            r.warn("Triton 24.09 has 21 high advisories [cdk-triton:HighAdvisory]", detail="CVE-1, CVE-2")
    return buf.getvalue()


def test_a_warning_is_one_line_said_once_per_run_and_its_code_is_text() -> None:
    out = _printed()
    assert out.count("warning: Triton 24.09 has 21 high advisories [cdk-triton:HighAdvisory]\n") == 1
    assert "CVE-1" not in out


def test_verbose_prints_the_detail_under_the_line() -> None:
    assert "  detail: CVE-1, CVE-2" in _printed(verbose=True)
