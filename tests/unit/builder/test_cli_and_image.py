"""The `cdk-triton build` command, --only, and the GPU build image's pins."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from cdk_triton.cli import main
from cdk_triton.config import tables
from tests.unit.builder.helpers import ROOT, tiny, write_decl


def test_cli_exit_codes(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = write_decl(tmp_path / "bad", tiny().replace("FP32, shape: [4]", "FP3, shape: [4]"))
    assert main(["build", "--config", str(bad), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "[UnknownDtype]" in err and "models[0].inputs[0].dtype" in err
    broken = write_decl(tmp_path / "broken", tiny(factory="raises"))
    assert main(["build", "--config", str(broken), "--no-progress"]) == 1
    assert "[FactoryRaised]" in capsys.readouterr().err
    good = write_decl(
        tmp_path / "good",
        tiny("a") + tiny("b", "torchscript"),
        endpoints="""
  - name: one
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [a]
  - name: two
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [b]
""",
    )
    assert (
        main(
            [
                "build",
                "--config",
                str(good),
                "--only",
                "a",
                "--no-progress",
                "--artifact-location",
                "s3://other-bucket/x",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "exported 1" in text and "manifest:" in text
    from cdk_triton.config.manifest import read_manifest

    m = read_manifest(tmp_path / "good" / "out")
    assert set(m.endpoints) == {"one"} and m.artifact_location.bucket == "other-bucket"
    assert (
        main(["build", "--config", str(good), "--no-progress", "--artifact-location", "s3://other-bucket/x"])
        == 0
    )
    assert "exported 1" in capsys.readouterr().out  # only b is new; a comes from the cache
    assert set(read_manifest(tmp_path / "good" / "out").endpoints) == {"one", "two"}


def test_dockerfile_matches_release_table_and_pyproject() -> None:
    text = (ROOT / "build" / "Dockerfile").read_text()
    tag = re.search(r"^FROM nvcr\.io/nvidia/(?:tritonserver|pytorch):(\d\d\.\d\d)-py3", text, re.M)
    pin = re.search(r"tensorrt==([\d.]+)", text)
    assert tag and pin
    assert tag.group(1) == tables.DEFAULT_TRITON_VERSION
    assert pin.group(1) == tables.release(tag.group(1)).tensorrt.value
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"][
        "tensorrt"
    ]
    assert extra == [f"tensorrt=={pin.group(1)}"]
