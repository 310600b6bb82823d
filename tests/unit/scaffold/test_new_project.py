"""A new project's first build and synth, run as its Makefile runs them (issue 42: a secure start, output a
person reads): ``cdk-triton init`` into a temp dir, then ``cdk-triton build`` and ``cdk synth --quiet`` in it.

Marker ``slow`` (about a minute: one tiny ONNX export and one synth with cdk-nag). The package is the one
this interpreter imports (this checkout first on the path); tests/release/test_consumer_smoke.py runs the
whole ``make demo`` from the wheel alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdk_triton.config import default_release
from tests.output_budget import build_warnings, synth_warnings

ROOT = Path(__file__).resolve().parents[3]
CDK = ROOT / "node_modules" / ".bin" / "cdk"
#: issue 42: a new project's build plus synth prints at most this many characters of warnings
BUDGET_CHARS = 1500


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=480)
    assert proc.returncode == 0, f"{cmd} -> {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["single", "multi"])
def test_a_new_project_builds_and_synthesizes_securely_within_the_warnings_budget(
    tmp_path: Path, mode: str
) -> None:
    if not CDK.exists():
        pytest.skip("the CDK CLI is not installed: run `npm ci` (make install does)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env |= {
        "PYTHONPATH": str(ROOT),
        "AWS_EC2_METADATA_DISABLED": "true",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",  # the Makefile exports it
        "COLUMNS": "80",
    }
    env.pop("FORCE_COLOR", None)
    cli = [sys.executable, "-m", "cdk_triton.cli"]
    project = tmp_path / "my-triton-app"
    _run([*cli, "init", str(project), "--mode", mode], tmp_path, env)
    built = _run([*cli, "build"], project, env)  # `make build`
    synthesized = _run([str(CDK), "synth", "--quiet", "--app", f"{sys.executable} app.py"], project, env)

    init = default_release.init_release()
    manifest = json.loads((project / "build" / "out" / "manifest.json").read_text())
    assert manifest["triton_version"] == init.release and not manifest.get("acknowledged_advisories")
    (template,) = (project / "cdk.out").glob("*.template.json")
    resources = json.loads(template.read_text())["Resources"]
    (config,) = [r for r in resources.values() if r["Type"] == "AWS::SageMaker::EndpointConfig"]
    (variant,) = config["Properties"]["ProductionVariants"]
    assert variant["InferenceAmiVersion"] == init.inference_ami_version
    assert variant["InstanceType"] == default_release.init_instance_type(multi_model=mode == "multi")
    (model,) = [r for r in resources.values() if r["Type"] == "AWS::SageMaker::Model"]
    assert "cdk_triton" not in model.get("Metadata", {})  # nothing acknowledged, by the user or the library
    for text in (built, synthesized):
        assert "CriticalAdvisory" not in text and "LibraryAcknowledgedAdvisories" not in text
        assert "CVE-" not in text  # the lists sit behind `cdk-triton advisories` and --verbose
    measured = build_warnings(built) + synth_warnings(synthesized)
    assert measured.warnings >= 1  # the measure sees the warnings (26.05's one high advisory at least)
    assert measured.chars <= BUDGET_CHARS, (measured, built, synthesized)
