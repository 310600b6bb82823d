"""cdk-triton tune's arguments: every bad one exits 2 with the prop named, before anything is built or written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from cdk_triton.cli import main
from tests.unit.tune.support import tune_argv

BUILD = Path(__file__).resolve().parents[3] / "build"


@pytest.fixture()
def decl(tmp_path: Path) -> Path:
    shutil.copy(BUILD / "models.yaml", tmp_path / "models.yaml")
    return tmp_path / "models.yaml"


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--repeats", "0"], "--repeats 0 must be at least 1"),
        (["--budget", "0"], "--budget 0.0 must be positive"),
        (["--margin", "-1"], "--margin -1.0 must be a fraction"),
        (["--endpoint-name", "tuning"], "--tuning-manifest None is required with --endpoint-name"),
        (["--instances", "0"], "--instances [0] must be positive integers"),
        (["--model", "nope"], "--model 'nope' is not declared in models.yaml"),
    ],
)
def test_fails_on_bad_arguments(
    decl: Path, extra: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = tune_argv(decl, *extra)
    before = decl.read_bytes()
    assert main(argv) == 2
    assert needle in capsys.readouterr().err
    assert decl.read_bytes() == before and sorted(p.name for p in decl.parent.iterdir()) == ["models.yaml"]


def test_fails_on_a_missing_declaration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "--config", str(tmp_path / "none.yaml"), "--model", "x"]) == 2
    assert "[DeclarationNotFound]" in capsys.readouterr().err


def test_prepare_endpoint_writes_a_tuning_declaration(decl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = tune_argv(
        decl, "--formats", "onnx,tensorrt", "--prepare-endpoint", "tuning", "--instance-type", "ml.g5.xlarge"
    )
    assert main(argv) == 0
    doc = yaml.safe_load((decl.parent / "models.tune-classifier_onnx.yaml").read_text())
    (ep,) = doc["endpoints"]
    assert ep == {
        "name": "tuning",
        "mode": "MultiModel",
        "instance_types": ["ml.g5.xlarge"],
        "models": ep["models"],
    }
    assert ep["models"] == [m["name"] for m in doc["models"]] and "classifier_onnx__current" in ep["models"]
    assert {m["format"] for m in doc["models"]} == {"onnx", "tensorrt"}
    assert "TargetModels of multi-model endpoint tuning" in capsys.readouterr().out
