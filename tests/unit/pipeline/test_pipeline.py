"""TritonPipeline: the example's pipeline app (synthesized once, cdk-nag on), a Processing-job pipeline, errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
import yaml
from aws_cdk import aws_s3 as s3
from aws_cdk import pipelines
from aws_cdk.assertions import Annotations, Match, Template

from cdk_triton.errors import TritonValidationError
from cdk_triton.pipeline import EndpointVerification, TritonPipeline
from tests.unit.pipeline.support import (
    ARTIFACT_BUCKET,
    EXAMPLE,
    ROOT,
    manifest_with_samples,
    pipeline_app_context,
    synth_pipeline_app,
)

PREFIX_OBJECTS = {
    "Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":s3:::{ARTIFACT_BUCKET}/cdk-triton/*"]]
}


@pytest.fixture(scope="module")
def synthed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("pipeline_app")
    manifest = manifest_with_samples(tmp)
    out = tmp / "cdk.out"
    synth_pipeline_app(out, pipeline_app_context(manifest))  # nag on: unacknowledged findings fail here
    return out, json.loads((out / "CdkTritonPipeline.template.json").read_text())


def _of(tpl: dict[str, Any], rtype: str) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in tpl["Resources"].items() if r["Type"] == rtype}


def _project(tpl: dict[str, Any], fragment: str) -> dict[str, Any]:
    (props,) = [r["Properties"] for k, r in _of(tpl, "AWS::CodeBuild::Project").items() if fragment in k]
    return props


def _buildspec(project: dict[str, Any]) -> str:
    spec = project["Source"]["BuildSpec"]
    return spec if isinstance(spec, str) else json.dumps(spec)


def _statements(tpl: dict[str, Any], fragment: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k, r in _of(tpl, "AWS::IAM::Policy").items():
        if fragment in k:
            out += r["Properties"]["PolicyDocument"]["Statement"]
    return out


def test_pipeline_stages_in_order_with_approval_before_prod(synthed: tuple[Path, dict[str, Any]]) -> None:
    (pipeline,) = _of(synthed[1], "AWS::CodePipeline::Pipeline").values()
    stages = [(s["Name"], [a["Name"] for a in s["Actions"]]) for s in pipeline["Properties"]["Stages"]]
    # Assets: CDK Pipelines publishes the file assets (the verification Lambda of each endpoint stack)
    assert [n for n, _ in stages] == ["Source", "Build", "UpdatePipeline", "Assets", "Staging", "Prod"]
    actions = dict(stages)
    assert actions["Build"] == ["GpuBuild", "Synth"]
    assert actions["UpdatePipeline"] == ["SelfMutate"]
    assert actions["Staging"][-1] == "Verify" and "Approve" not in actions["Staging"]
    assert actions["Prod"][0] == "Approve" and actions["Prod"][-1] == "Verify"
    build = {a["Name"]: a for a in pipeline["Properties"]["Stages"][1]["Actions"]}
    gpu_out = build["GpuBuild"]["OutputArtifacts"][0]["Name"]
    assert gpu_out in [i["Name"] for i in build["Synth"]["InputArtifacts"]]  # the FileSet wiring
    assert build["Synth"]["RunOrder"] > build["GpuBuild"]["RunOrder"]


def test_pipeline_artifacts_are_kms_encrypted_with_rotation(synthed: tuple[Path, dict[str, Any]]) -> None:
    template = Template.from_json(synthed[1])
    template.has_resource_properties("AWS::KMS::Key", {"EnableKeyRotation": True})
    template.has_resource_properties(
        "AWS::CodePipeline::Pipeline",
        {"ArtifactStore": Match.object_like({"EncryptionKey": Match.object_like({"Type": "KMS"})})},
    )


def test_gpu_build_runs_on_the_endpoints_gpu_with_the_release_image(
    synthed: tuple[Path, dict[str, Any]],
) -> None:
    out, tpl = synthed
    gpu = _project(tpl, "GpuBuild")
    assert gpu["Environment"]["Type"] == "LINUX_GPU_CONTAINER"
    assert gpu["Environment"]["ComputeType"] == "BUILD_GENERAL1_SMALL"  # one A10G = ml.g5.xlarge's GPU
    assert gpu["Environment"]["ImagePullCredentialsType"] == "SERVICE_ROLE"
    assert "container-assets" in json.dumps(gpu["Environment"]["Image"])
    spec = _buildspec(gpu)
    assert (
        "/opt/nvidia/nvidia_entrypoint.sh cdk-triton build --config build/models.yaml --formats tensorrt "
        "--upload --out build/out-gpu" in spec  # CodeBuild's shell would bypass the NGC entrypoint
    )
    assert "nvidia-smi --query-gpu=name,driver_version,compute_cap" in spec  # the host driver, in the log
    assert (
        "/opt/nvidia/nvidia_entrypoint.sh cdk-triton gpu-check --config build/models.yaml "
        "--out /tmp/cdk-triton-gpu-check --report build/out-gpu/gpu-readings.json" in spec
    )  # parity on CUDA for every GPU-placed model; a failure fails the step, the deploy stops
    assets = json.loads((out / "CdkTritonPipeline.assets.json").read_text())["dockerImages"]
    (image,) = assets.values()
    assert image["source"]["dockerBuildArgs"] == {"TRITON_VERSION": "24.09", "TENSORRT_VERSION": "10.4.0"}
    assert image["source"]["dockerFile"] == "cdk_triton/pipeline/docker/Dockerfile"


def test_synth_step_builds_cpu_formats_with_cpu_torch_and_merges_the_gpu_manifest(
    synthed: tuple[Path, dict[str, Any]],
) -> None:
    spec = _buildspec(_project(synthed[1], "Synth"))
    assert "--extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt" in spec
    assert "pip install --no-deps -e ." in spec and "npm ci" in spec
    assert (
        "cdk-triton build --config build/models.yaml --formats torchscript,onnx,python,ensemble --upload "
        "--no-progress --merge-manifest gpu/manifest.json" in spec
    )
    # the merge of the GPU manifest builds the CPU formats by design, and its log says so (issue 30)
    assert "echo " in spec and "merging the GPU build" in spec and "built here by design" in spec
    assert 'npx cdk synth --app \\".venv/bin/python pipeline_app.py\\"' in spec


def test_synth_step_runs_the_release_runtime_check_before_any_deploy(
    synthed: tuple[Path, dict[str, Any]],
) -> None:
    """The build of the Synth step runs the release-runtime check (on explicitly, never skipped): a model the
    release's own libtorch / ONNX Runtime cannot load fails `cdk-triton build` (exit 1), so the Synth action,
    and the stages after it, never run."""
    tpl = synthed[1]
    project = _project(tpl, "Synth")
    spec = _buildspec(project)
    assert "cdk-triton build --config build/models.yaml" in spec and "--no-target-runtime" not in spec
    env = {v["Name"]: v.get("Value") for v in project["Environment"]["EnvironmentVariables"]}
    assert env["CDK_TRITON_TARGET_RUNTIME"] == "on"
    (pipeline,) = _of(tpl, "AWS::CodePipeline::Pipeline").values()
    stages = [s["Name"] for s in pipeline["Properties"]["Stages"]]
    assert stages.index("Build") < min(i for i, n in enumerate(stages) if n not in ("Source", "Build"))
    build_actions = [
        a["Name"] for s in pipeline["Properties"]["Stages"] if s["Name"] == "Build" for a in s["Actions"]
    ]
    assert "Synth" in build_actions


def test_self_mutation_can_build_the_gpu_image(synthed: tuple[Path, dict[str, Any]]) -> None:
    mutate = _project(synthed[1], "SelfMutation")
    assert mutate["Environment"]["PrivilegedMode"] is True
    assert "cdk -a . deploy" in _buildspec(mutate)


def test_build_roles_are_scoped_to_the_artifact_prefix(synthed: tuple[Path, dict[str, Any]]) -> None:
    for fragment in ("GpuBuild", "SynthCdkBuildProject"):
        sts = _statements(synthed[1], fragment)
        mine = [s for s in sts if ARTIFACT_BUCKET in json.dumps(s)]
        writes = [s for s in mine if "s3:PutObject" in json.dumps(s["Action"])]
        # the synth step registers the build too: its evidence prefixes lie under the artifact prefix
        evidence = [
            {
                "Fn::Join": [
                    "",
                    ["arn:", {"Ref": "AWS::Partition"}, f":s3:::{ARTIFACT_BUCKET}/cdk-triton/registry/{g}/*"],
                ]
            }
            for g in ("classifier", "multi")
        ]
        expected = [PREFIX_OBJECTS, *evidence] if fragment.startswith("Synth") else PREFIX_OBJECTS
        assert [s["Resource"] for s in writes] == [expected]
        (listing,) = [s for s in mine if s["Action"] == "s3:ListBucket"]
        assert listing["Condition"] == {"StringLike": {"s3:prefix": ["cdk-triton/*"]}}
        assert [s for s in mine if s not in writes and s is not listing] == []


def test_verify_step_per_stage_invokes_only_its_endpoints(synthed: tuple[Path, dict[str, Any]]) -> None:
    tpl = synthed[1]
    env = {
        v["Name"]: v["Value"] for v in _project(tpl, "StagingVerify")["Environment"]["EnvironmentVariables"]
    }
    specs = [json.loads(env[k]) for k in sorted(env) if k.startswith("VERIFY_SPEC_")]
    assert [s["EndpointName"] for s in specs] == ["staging-classifier", "staging-multi"]
    assert specs[1]["TargetModelParameterPath"] == "/cdk-triton/staging-multi/target-models"
    # where the build uploads the pair: content-addressed under the artifact prefix
    assert re.fullmatch(
        rf"s3://{ARTIFACT_BUCKET}/cdk-triton/samples/[0-9a-f]{{12}}/classifier\.request\.json",
        specs[0]["Checks"][0]["Request"],
    )
    assert specs[0]["Checks"][0]["Response"] == specs[0]["Checks"][0]["Request"].replace(
        "request", "response"
    )
    assert "python3 lambda/verify/index.py --spec verify-1.json" in _buildspec(_project(tpl, "StagingVerify"))
    sts = {json.dumps(s["Action"]): s for s in _statements(tpl, "StagingVerify")}
    invoke = json.dumps(sts['"sagemaker:InvokeEndpoint"']["Resource"])
    assert (
        ":endpoint/staging-classifier" in invoke
        and ":endpoint/staging-multi" in invoke
        and "prod-" not in invoke
    )
    ssm = json.dumps(sts['"ssm:GetParametersByPath"']["Resource"])
    assert ":parameter/cdk-triton/staging-multi/target-models" in ssm
    samples = sts['"s3:GetObject"']["Resource"]
    assert samples["Fn::Join"][1][-1] == f":s3:::{ARTIFACT_BUCKET}/cdk-triton/samples/*"


def test_the_example_registers_each_build_in_its_endpoints_group(
    synthed: tuple[Path, dict[str, Any]],
) -> None:
    import promotion_app

    tpl = synthed[1]
    groups = [
        r["Properties"]["ModelPackageGroupName"]
        for r in _of(tpl, "AWS::SageMaker::ModelPackageGroup").values()
    ]
    assert groups == list(promotion_app.GROUPS)  # the groups whose approvals the promotion deploys
    commands = json.loads(_buildspec(_project(tpl, "Synth")))["phases"]["build"]["commands"]
    synth = next(
        i for i, c in enumerate(commands) if "npx cdk synth" in c
    )  # after the log note and the build
    assert commands[synth + 1 :] == [
        f".venv/bin/cdk-triton register --manifest build/out/manifest.json --endpoint {g} --group {g}"
        for g in groups
    ]
    # the pipeline's first run (on create) finds the groups: only the pipeline resource waits for them
    (pipeline_id,) = _of(tpl, "AWS::CodePipeline::Pipeline")
    for group_id in _of(tpl, "AWS::SageMaker::ModelPackageGroup"):
        waiting = [k for k, r in tpl["Resources"].items() if group_id in r.get("DependsOn", [])]
        assert waiting == [pipeline_id]


def test_nag_findings_of_the_pipeline_are_all_acknowledged_with_reasons(
    synthed: tuple[Path, dict[str, Any]],
) -> None:
    report = json.loads((synthed[0] / "validation-report.json").read_text())
    found: list[dict[str, Any]] = []

    def walk(o: Any) -> None:
        if isinstance(o, dict):
            if "ruleName" in o:
                found.append(o)
                return
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(report)
    mine = [f for f in found if "CdkTritonPipeline/Triton/" in json.dumps(f["violatingConstructs"])]
    assert mine, "the pipeline's findings are reported (as acknowledged)"
    assert all(f.get("acknowledgedId") and f.get("reason") for f in found), [
        f["ruleName"] for f in found if not f.get("acknowledgedId")
    ]


def test_pipeline_template_passes_cfn_lint(synthed: tuple[Path, dict[str, Any]]) -> None:
    cfn_lint = Path(sys.executable).with_name("cfn-lint")
    template = json.loads((synthed[0] / "CdkTritonPipeline.template.json").read_text())
    deploys = [
        a["Configuration"]["RoleArn"]
        for r in _of(template, "AWS::CodePipeline::Pipeline").values()
        for st in r["Properties"]["Stages"]
        for a in st["Actions"]
        if a["ActionTypeId"]["Category"] == "Deploy" and "RoleArn" in a["Configuration"]
    ]
    assert deploys and all("Fn::Join" in r for r in deploys)  # the E3703 findings, from CDK Pipelines
    result = subprocess.run(
        [
            str(cfn_lint),
            str(synthed[0] / "CdkTritonPipeline.template.json"),
            "--regions",
            "us-east-1",
            # Both are in what CDK Pipelines writes itself, not in TritonPipeline's resources: the stage
            # deploy actions' RoleArn as Fn::Join (E3703, a style rule) and the pipeline's explicit
            # DependsOn on its role (W3005).
            "--ignore-checks",
            "E3703",
            "W3005",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --------------------------------------------------------------------------- processing job + errors


def _declaration(tmp: Path, instance_type: str) -> str:
    decl = yaml.safe_load((ROOT / "build" / "models.yaml").read_text())
    for ep in decl["endpoints"]:
        ep["instance_types"] = [instance_type]
    (tmp / "models.yaml").write_text(yaml.safe_dump(decl))
    return "models.yaml"


def _pipeline(tmp: Path, instance_type: str = "ml.g5.xlarge", **kw: Any) -> tuple[cdk.Stack, TritonPipeline]:
    app = cdk.App(outdir=str(tmp / "cdk.out"), builtin_cloud_formation_validation=False)
    stack = cdk.Stack(app, "P", env=cdk.Environment(account="123456789012", region="us-east-1"))
    bucket = s3.Bucket.from_bucket_name(stack, "B", ARTIFACT_BUCKET)
    source = pipelines.CodePipelineSource.s3(s3.Bucket.from_bucket_name(stack, "S", "src"), "src.zip")
    pipe = TritonPipeline(
        stack,
        "Triton",
        source=source,
        declaration=_declaration(tmp, instance_type),
        root=tmp,
        artifact_bucket=bucket,
        **kw,
    )
    return stack, pipe


def _stage(stack: cdk.Stack, name: str, **kw: Any) -> cdk.Stage:
    stage = cdk.Stage(stack.node.root, name, **kw)
    cdk.CfnWaitConditionHandle(cdk.Stack(stage, "S"), "R")
    return stage


def test_processing_job_pipeline_on_the_endpoints_own_instance_type(tmp_path: Path) -> None:
    stack, pipe = _pipeline(tmp_path, "ml.g6.xlarge")
    assert pipe.gpu_target is not None and pipe.gpu_target.job.kind == "processing"
    pipe.build()
    tpl = Template.from_stack(stack).to_json()
    spec = _buildspec(_project(tpl, "GpuBuild"))
    assert "python3 cdk_triton/pipeline/gpu_job.py --kind processing --instance-type ml.g6.xlarge" in spec
    [warning] = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("GpuJobHostDriverUnknown")
    )
    assert "processing job host (ml.g6.xlarge)" in str(warning.entry.data) and "24.09" in str(
        warning.entry.data
    )
    assert _project(tpl, "GpuBuild")["Environment"]["Type"] == "LINUX_CONTAINER"
    Template.from_json(tpl).has_resource_properties(
        "AWS::IAM::Role",
        {
            "AssumeRolePolicyDocument": Match.object_like(
                {"Statement": [Match.object_like({"Principal": {"Service": "sagemaker.amazonaws.com"}})]}
            )
        },
    )
    actions = json.dumps(_statements(tpl, "GpuBuild"))
    assert "sagemaker:CreateProcessingJob" in actions and "processing-job/cdk-triton-trt-*" in actions
    assert "iam:PassRole" in actions and "servicequotas:ListServiceQuotas" in actions


def _fleet_pipeline(tmp: Path, instance_type: str, kind: str, **kw: Any) -> tuple[cdk.Stack, TritonPipeline]:
    """A pipeline over two TorchScript models with instance groups of ``kind`` and no TensorRT model."""
    models = [
        {"name": f"ts{i}", "format": "torchscript", "instance_groups": [{"kind": kind, "count": 1}]}
        for i in range(2)
    ]
    decl = {
        "triton_version": "24.09",
        "models": models,
        "endpoints": [{"name": "ep", "instance_types": [instance_type], "models": ["ts0", "ts1"]}],
    }
    (tmp / "fleet.yaml").write_text(yaml.safe_dump(decl))
    app = cdk.App(outdir=str(tmp / "cdk.out"), builtin_cloud_formation_validation=False)
    stack = cdk.Stack(app, "P", env=cdk.Environment(account="123456789012", region="us-east-1"))
    source = pipelines.CodePipelineSource.s3(s3.Bucket.from_bucket_name(stack, "S", "src"), "src.zip")
    pipe = TritonPipeline(
        stack,
        "Triton",
        source=source,
        declaration="fleet.yaml",
        root=tmp,
        artifact_bucket=s3.Bucket.from_bucket_name(stack, "B", ARTIFACT_BUCKET),
        **kw,
    )
    pipe.build()
    return stack, pipe


def _build_actions(tpl: dict[str, Any]) -> list[str]:
    (pipeline,) = _of(tpl, "AWS::CodePipeline::Pipeline").values()
    stages = {s["Name"]: s for s in pipeline["Properties"]["Stages"]}
    return [a["Name"] for a in stages["Build"]["Actions"]]


def test_gpu_placed_torchscript_fleet_without_tensorrt_gets_a_gpu_check_job(tmp_path: Path) -> None:
    stack, pipe = _fleet_pipeline(tmp_path, "ml.g5.xlarge", "KIND_GPU")
    assert pipe.gpu_target is not None and pipe.gpu_target.check_models == ("ts0", "ts1")
    tpl = Template.from_stack(stack).to_json()
    assert _build_actions(tpl) == ["GpuBuild", "Synth"]  # the deploy waits for the check
    gpu = _project(tpl, "GpuBuild")
    assert gpu["Environment"]["Type"] == "LINUX_GPU_CONTAINER"  # the endpoint's A10G, as for TensorRT
    assert gpu["Environment"]["ComputeType"] == "BUILD_GENERAL1_SMALL"
    spec = _buildspec(gpu)
    assert (
        "/opt/nvidia/nvidia_entrypoint.sh cdk-triton gpu-check --config fleet.yaml "
        "--out /tmp/cdk-triton-gpu-check --report build/out-gpu/gpu-readings.json" in spec
    )
    assert "--formats tensorrt" not in spec  # no TensorRT model: no plan build
    synth = _buildspec(_project(tpl, "Synth"))
    assert "--merge-manifest" not in synth  # a check-only job has no manifest to merge


def test_gpu_check_job_on_a_processing_type_launches_the_check_only(tmp_path: Path) -> None:
    stack, _ = _fleet_pipeline(tmp_path, "ml.g6.xlarge", "KIND_AUTO")
    tpl = Template.from_stack(stack).to_json()
    spec = _buildspec(_project(tpl, "GpuBuild"))
    assert "gpu_job.py --kind processing --instance-type ml.g6.xlarge" in spec and "--no-tensorrt" in spec
    assert "--no-gpu-check" not in spec
    roles = [r["Properties"].get("Description", "") for r in _of(tpl, "AWS::IAM::Role").values()]
    assert "cdk-triton: the processing job that runs the GPU check on ml.g6.xlarge" in roles


def test_cpu_only_fleet_gets_no_gpu_job(tmp_path: Path) -> None:
    stack, pipe = _fleet_pipeline(tmp_path, "ml.c5.xlarge", "KIND_CPU")
    assert pipe.gpu_target is None and pipe.gpu_build_step is None
    tpl = Template.from_stack(stack).to_json()
    assert _build_actions(tpl) == ["Synth"]
    assert not [k for k in _of(tpl, "AWS::CodeBuild::Project") if "GpuBuild" in k]


def test_gpu_check_opt_out_drops_the_check_only_job(tmp_path: Path) -> None:
    from cdk_triton.pipeline.gpu_targets import GpuBuildOptions

    stack, pipe = _fleet_pipeline(
        tmp_path, "ml.g5.xlarge", "KIND_GPU", gpu_build=GpuBuildOptions(gpu_check=False)
    )
    assert pipe.gpu_target is None and _build_actions(Template.from_stack(stack).to_json()) == ["Synth"]


def test_fails_tensorrt_model_without_gpu_build_path(tmp_path: Path) -> None:
    with pytest.raises(TritonValidationError) as exc:
        _pipeline(tmp_path, "ml.m5.xlarge")
    assert exc.value.code == "NoGpuBuildPath" and "ml.m5.xlarge" in str(exc.value)
    assert not list(tmp_path.glob("cdk.out/*.json"))


def test_fails_approval_on_a_stage_that_does_not_exist(tmp_path: Path) -> None:
    stack, pipe = _pipeline(tmp_path, approvals={"qa": "needs sign-off"})
    pipe.add_triton_stage(_stage(stack, "Staging"))
    with pytest.raises(TritonValidationError) as exc:
        pipe.build()
    assert (
        exc.value.code == "ApprovalForUnknownStage"
        and "'qa'" in str(exc.value)
        and "Staging" in str(exc.value)
    )


def test_approval_by_name_adds_a_manual_approval(tmp_path: Path) -> None:
    stack, pipe = _pipeline(tmp_path, approvals={"Prod": "needs sign-off"})
    pipe.add_triton_stage(_stage(stack, "Prod"))
    pipe.build()
    (pipeline,) = _of(Template.from_stack(stack).to_json(), "AWS::CodePipeline::Pipeline").values()
    prod = pipeline["Properties"]["Stages"][-1]
    assert prod["Actions"][0]["Name"] == "Approve"
    assert prod["Actions"][0]["Configuration"]["CustomData"] == "needs sign-off"


def test_fails_verification_of_an_endpoint_without_recorded_samples(tmp_path: Path) -> None:
    stack, pipe = _pipeline(tmp_path, manifest=str(EXAMPLE))  # the fixture's MME has no samples
    data = json.loads(EXAMPLE.read_text())
    data["artifact_location"] = {"bucket": ARTIFACT_BUCKET, "prefix": "cdk-triton/"}
    (tmp_path / "m.json").write_text(json.dumps(data))
    pipe.manifest_path = "m.json"
    with pytest.raises(TritonValidationError) as exc:
        pipe.add_triton_stage(_stage(stack, "Staging"), verify=[EndpointVerification(endpoint="multi")])
    assert exc.value.code == "NoRecordedSamples" and "'multi'" in str(exc.value)


def test_fails_manifest_built_for_another_artifact_location(tmp_path: Path) -> None:
    stack, pipe = _pipeline(tmp_path, manifest=str(EXAMPLE))
    with pytest.raises(TritonValidationError) as exc:
        pipe.add_triton_stage(_stage(stack, "Staging"), verify=[EndpointVerification(endpoint="classifier")])
    assert exc.value.code == "ManifestLocationMismatch"


def test_fails_stage_in_a_region_without_the_triton_image(tmp_path: Path) -> None:
    stack, pipe = _pipeline(tmp_path)
    stage = _stage(stack, "Far", env=cdk.Environment(account="210987654321", region="ap-southeast-5"))
    with pytest.raises(TritonValidationError) as exc:
        pipe.add_triton_stage(stage)
    assert exc.value.code == "ImageNotInRegion"
    assert "ap-southeast-5" in str(exc.value) and "Far" in str(exc.value)


def test_fails_synth_on_a_dangling_approval_when_build_was_not_called(tmp_path: Path) -> None:
    stack, pipe = _pipeline(tmp_path, approvals={"qa": True})
    pipe.add_triton_stage(_stage(stack, "Staging"))
    with pytest.raises(RuntimeError, match="ApprovalForUnknownStage"):
        stack.node.root.synth()  # type: ignore[attr-defined]
    assert not list(tmp_path.glob("cdk.out/P.template.json"))
