"""Helpers of the pipeline tests: a manifest with samples for every endpoint, the pipeline app's synth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk

from tests.acknowledgments import CONTEXT

ROOT = Path(__file__).resolve().parents[3]
ARTIFACT_BUCKET = "cdk-triton-example-artifacts-123456789012"
EXAMPLE = ROOT / "tests" / "fixtures" / "manifests" / "example.json"


def manifest_with_samples(tmp: Path, mutate: Any = None) -> Path:
    """The example fixture manifest whose MME target models have recorded samples too."""
    data = json.loads(EXAMPLE.read_text())
    for name, target in data["endpoints"]["multi"]["target_models"].items():
        target["sample"] = {
            "request": f"samples/{name}.request.json",
            "response": f"samples/{name}.response.json",
        }
    data["artifact_location"] = {"bucket": ARTIFACT_BUCKET, "prefix": "cdk-triton/"}
    if mutate:
        mutate(data)
    path = tmp / "manifest.json"
    path.write_text(json.dumps(data))
    # the recorded sample files beside the manifest, as a build writes them (the endpoint stack's
    # verification resource derives their S3 URIs from their content)
    samples = tmp / "samples"
    samples.mkdir(exist_ok=True)
    fixture = EXAMPLE.parent / "samples" / "classifier"
    for name in ["classifier", *data["endpoints"]["multi"]["target_models"]]:
        for kind in ("request", "response"):
            (samples / f"{name}.{kind}.json").write_text(Path(f"{fixture}.{kind}.json").read_text())
    return path


def pipeline_app_context(manifest: Path, **extra: Any) -> dict[str, Any]:
    return {"manifest": str(manifest), "account": "123456789012", "region": "us-east-1", **extra}


def synth_pipeline_app(outdir: Path, context: dict[str, Any]) -> cdk.App:
    import pipeline_app

    flags = json.loads((ROOT / "cdk.json").read_text())["context"]  # the CLI's feature flags
    app = cdk.App(
        outdir=str(outdir), context={**CONTEXT, **flags, **context}, builtin_cloud_formation_validation=False
    )
    pipeline_app.build_pipeline_app(app=app)
    app.synth()
    return app
