"""``cdk-triton capacity`` end to end on the example manifest, without a server (``--no-measure``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdk_triton.cli import main
from tests.unit.constructs.support import EXAMPLE


def test_table_on_the_example_manifest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capacity", "--manifest", str(EXAMPLE), "--no-measure"]) == 0
    out = capsys.readouterr().out
    assert "endpoint multi (MultiModel) on ml.g5.xlarge" in out
    assert "classifier" in out and "resnet_ts" in out and "archive" in out  # a v1 manifest: archive bytes
    assert "instances to keep all 2 models warm: 1" in out and "$1.41/h" in out
    assert "hit ratios are undefined" in out
    assert main(["capacity", "--manifest", str(EXAMPLE), "--no-measure", "--rows", "1"]) == 0
    assert "... 1 more" in capsys.readouterr().out


def test_json_and_plot_with_traffic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traffic = tmp_path / "traffic.yaml"
    traffic.write_text("rps:\n  classifier: 90\n  resnet_ts: 10\n")
    plot = tmp_path / "out" / "capacity.png"
    args = ["capacity", "--manifest", str(EXAMPLE), "--no-measure", "--traffic", str(traffic)]
    args += ["--json", "--plot", str(plot), "--price-per-hour", "2", "--target-hit-ratio", "0.9"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["instances_for_target"] == 1 and doc["cost_for_target_per_hour"] == 2.0
    assert doc["curve"][0]["hit_ratio"] == 1.0 and doc["total_rps"] == 100
    rows = {m["name"]: m for m in doc["models"]}
    assert rows["classifier"]["placement"] == rows["resnet_ts"]["placement"] == "MME"  # both fit one instance
    assert "every model fits one instance" in rows["classifier"]["why"]
    assert all(m["miss_source"].startswith("estimate") for m in doc["models"])
    assert any("usable GPU memory" in a for a in doc["assumptions"])
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in plot.parent.iterdir() if p.name.startswith(".")]  # no temp file left


def test_fails_bad_options_before_reading_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plot = tmp_path / "p.png"
    args = ["capacity", "--manifest", str(tmp_path / "missing.json"), "--no-measure", "--plot", str(plot)]
    assert main([*args, "--target-hit-ratio", "1.5", "--hot-share", "0"]) == 2
    err = capsys.readouterr().err
    assert "CapacityInvalid" in err and "--target-hit-ratio" in err and "--hot-share" in err
    assert not plot.exists()
    assert main(["capacity", "--manifest", str(EXAMPLE), "--no-measure", "--endpoint", "classifier"]) == 2
    assert "CapacityEndpoint" in capsys.readouterr().err
    traffic = tmp_path / "t.json"
    traffic.write_text('{"rps": {"nope": 1}}')
    assert main(["capacity", "--manifest", str(EXAMPLE), "--no-measure", "--traffic", str(traffic)]) == 2
    assert "UnknownTrafficModel" in capsys.readouterr().err


def test_unpriced_type_without_traffic_plots_residency_and_skips_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plot = tmp_path / "p.png"
    args = ["capacity", "--manifest", str(EXAMPLE), "--no-measure", "--instance-type", "ml.g4dn.xlarge"]
    assert main([*args, "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "not in the vendored price table" in out and "$" not in out.split("price:")[0]
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_a_manifest_whose_archives_are_elsewhere_is_estimated_with_a_note(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without --no-measure no server starts when the archives are not on this machine."""
    assert main(["capacity", "--manifest", str(EXAMPLE), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert any("cold loads not measured: archives not on this machine" in n for n in doc["notes"])
    assert all(m["miss_source"].startswith("estimate") for m in doc["models"])
