"""The package step: SME and MME archives share one path; unchanged archives are reused."""

from __future__ import annotations

import json
from pathlib import Path

from cdk_triton.builder import run_build
from tests.unit.builder.helpers import python_model, write_decl

ENDPOINTS = """
  - name: single
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [pre]
    packaging: tar.gz
  - name: multi
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [pre, pre2]
"""


def test_archives_are_reused_until_they_change(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, python_model() + python_model("pre2"), endpoints=ENDPOINTS)
    first = run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert first.packaged == 3  # one SME archive, two MME target models
    sme = json.loads((tmp_path / "out" / "sme" / "single" / ".archive.json").read_text())
    mme = json.loads((tmp_path / "out" / "mme" / "multi" / "index.json").read_text())
    assert set(sme) == {"tree", "file", "sha256", "size"} and set(mme) == {"pre", "pre2"}
    assert set(mme["pre"]) == {"key", "file", "sha256", "size"}
    again = run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert again.packaged == 0 and again.manifest == first.manifest
    (tmp_path / "out" / "mme" / "multi" / mme["pre"]["file"]).write_bytes(b"truncated")
    (tmp_path / "out" / "sme" / "single" / sme["file"]).write_bytes(b"truncated")
    repaired = run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert repaired.packaged == 2 and repaired.manifest == first.manifest


def test_inference_ami_version_reaches_the_manifest(tmp_path: Path) -> None:
    pinned = ENDPOINTS.replace(
        "    packaging: tar.gz\n",
        "    packaging: tar.gz\n    inference_ami_version: al2-ami-sagemaker-inference-gpu-2\n",
    )
    decl = write_decl(tmp_path, python_model() + python_model("pre2"), endpoints=pinned)
    run_build(decl, out_dir=tmp_path / "out", progress=False)
    endpoints = json.loads((tmp_path / "out" / "manifest.json").read_text())["endpoints"]
    assert endpoints["single"]["inference_ami_version"] == "al2-ami-sagemaker-inference-gpu-2"
    assert "inference_ami_version" not in endpoints["multi"]
