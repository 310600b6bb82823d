"""Progress reporting: silent when disabled; the summary rows of a build."""

from __future__ import annotations

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
