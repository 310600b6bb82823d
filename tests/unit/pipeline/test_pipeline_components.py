"""The pipeline app with a components endpoint: each stage deploys it and its Verify step invokes every
component with a recorded sample by the component's name on that stage."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.constructs.support import with_components
from tests.unit.pipeline.support import manifest_with_samples, pipeline_app_context, synth_pipeline_app


def test_each_stage_verifies_its_components(tmp_path: Path) -> None:
    manifest = manifest_with_samples(tmp_path, with_components)
    out = tmp_path / "cdk.out"
    synth_pipeline_app(out, pipeline_app_context(manifest))  # cdk-nag on: a finding fails here
    tpl = json.loads((out / "CdkTritonPipeline.template.json").read_text())
    for stage in ("Staging", "Prod"):
        (project,) = [
            r["Properties"]
            for k, r in tpl["Resources"].items()
            if r["Type"] == "AWS::CodeBuild::Project" and f"{stage}Verify" in k
        ]
        env = {v["Name"]: v["Value"] for v in project["Environment"]["EnvironmentVariables"]}
        specs = {
            s["EndpointName"]: s for s in (json.loads(env[k]) for k in env if k.startswith("VERIFY_SPEC_"))
        }
        prefix = stage.lower()
        components = specs[f"{prefix}-components"]
        assert components["Mode"] == "InferenceComponents"
        assert components["Components"] == {
            "classifier": f"{prefix}-components-classifier",
            "resnet_ts": f"{prefix}-components-resnet-ts",
        }
        assert {c["Model"] for c in components["Checks"]} == {"classifier", "resnet_ts"}
    describe = [
        s
        for k, r in tpl["Resources"].items()
        if r["Type"] == "AWS::IAM::Policy" and "StagingVerify" in k
        for s in r["Properties"]["PolicyDocument"]["Statement"]
        if s["Action"] == "sagemaker:DescribeInferenceComponent"
    ]
    assert len(describe) == 1 and len(describe[0]["Resource"]) == 2
    stage_templates = sorted(out.rglob("*Endpoints*.template.json"))
    assert stage_templates
    for path in stage_templates:
        names = {
            r["Properties"]["InferenceComponentName"]
            for r in json.loads(path.read_text())["Resources"].values()
            if r["Type"] == "AWS::SageMaker::InferenceComponent"
        }
        stage = "staging" if "Staging" in str(path) else "prod"
        assert names == {f"{stage}-components-classifier", f"{stage}-components-resnet-ts"}
