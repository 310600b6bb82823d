"""The fleet benchmark's parts stay runnable: its ONNX fleet declaration builds, and the bare floor script
reads what the build wrote with the build's YAML loader (``make bench`` runs the whole benchmark)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from bench.build_fleet import FLOOR, digests, onnx_fleet
from cdk_triton.builder import run_build
from cdk_triton.builder.declarations import SAFE_LOADER


def test_the_onnx_fleet_builds_and_the_floor_script_reads_it(tmp_path: Path) -> None:
    decl = onnx_fleet(tmp_path / "decl", 3)
    result = run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert result.exported == 3 and len(result.manifest.endpoints["fleet"].target_models) == 3
    proc = subprocess.run([sys.executable, str(FLOOR), str(decl), str(tmp_path / "out")], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert len(digests(tmp_path / "out")) > 10


def test_the_build_parses_yaml_with_libyaml_where_pyyaml_has_it() -> None:
    expected = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
    assert SAFE_LOADER is expected
