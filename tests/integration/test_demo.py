"""The demo's entry point end to end: a broken demo turns CI red.

Runs exactly what `make demo` runs after installing (`python -m cdk_triton.cli demo`): build the
example models, synthesize the app with cdk-nag, cfn-lint every template, serve both endpoints on a
real Triton server and invoke every model, comparing with the eager outputs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.triton]


def test_demo_runs_every_stage_ok() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "cdk_triton.cli", "demo", "--root", str(ROOT)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = proc.stdout + proc.stderr
    # the stage report is on stdout, the build's warnings on stderr: show the end of both
    assert proc.returncode == 0, proc.stdout[-6000:] + "\n--- stderr ---\n" + proc.stderr[-3000:]
    summary = json.loads((ROOT / "build" / "out" / "demo-summary.json").read_text())
    assert summary == {
        "build": "ok",
        "synth + cdk-nag": "ok",
        "pipeline synth + cdk-nag": "ok",
        "promotion synth + cdk-nag": "ok",
        "cfn-lint": "ok",
        "serve + invoke": "ok",
    }, out[-8000:]
    # every model of both endpoints was invoked over JSON and binary payloads and matched
    manifest = json.loads((ROOT / "build" / "out" / "manifest.json").read_text())
    for target in manifest["endpoints"]["multi"]["target_models"]:
        assert f"  {target} [json]" in out and f"  {target} [binary+json]" in out
    for component in manifest["endpoints"]["components"]["components"].values():  # each inference component
        name = component["component_name"]
        assert f"  {name} [json]" in out and f"  {name} [binary+json]" in out
    # the text example (build/examples/text): the ensemble and the BLS model answer text
    for model in ("text_encoder", "text_bls"):
        assert f"  {model} [json]" in out and f"  {model} [binary+json]" in out
    assert (ROOT / "cdk.out").is_dir() and list((ROOT / "cdk.out").glob("*.template.json"))
    # the pipeline stack and one assembly per stage (staging, prod)
    pipeline = sorted(
        p.relative_to(ROOT / "cdk.out.pipeline").parts[0]
        for p in (ROOT / "cdk.out.pipeline").rglob("*.template.json")
    )
    assert pipeline == [
        "CdkTritonPipeline.template.json",
        "assembly-CdkTritonPipeline-Prod",
        "assembly-CdkTritonPipeline-Staging",
    ]
    # the promotion pipeline and its three stages (staging, the prod shadow, prod) in two accounts
    promotion = sorted(
        {
            p.relative_to(ROOT / "cdk.out.promotion").parts[0]
            for p in (ROOT / "cdk.out.promotion").rglob("*.template.json")
        }
    )
    assert promotion == [
        "CdkTritonPromotion.template.json",
        "assembly-CdkTritonPromotion-Prod",
        "assembly-CdkTritonPromotion-ProdShadow",
        "assembly-CdkTritonPromotion-Staging",
    ]
