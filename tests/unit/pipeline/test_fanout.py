"""The pipeline's fan-out: the FanOut stage before synth, the state machine definition, IAM, nag, cfn-lint."""

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
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import pipelines
from aws_cdk.assertions import Template

from cdk_triton.errors import TritonValidationError
from cdk_triton.pipeline import FanOutOptions, TritonPipeline
from cdk_triton.pipeline.fanout import CPU_FORMATS, FanOutCommands
from tests.unit.pipeline.support import ARTIFACT_BUCKET, ROOT

SMALL = FanOutOptions(min_models=2, models_per_shard=3)  # the example's 8 models -> 3 shards


def _pipeline(
    tmp: Path,
    instance_type: str = "ml.g5.xlarge",
    *,
    nag: bool = False,
    fan_out: FanOutOptions | None = SMALL,
    key_arn: str | None = None,
    mutate: Any = None,
) -> tuple[cdk.App, cdk.Stack, TritonPipeline]:
    decl = yaml.safe_load((ROOT / "build" / "models.yaml").read_text())
    for ep in decl["endpoints"]:
        ep["instance_types"] = [instance_type]
    if mutate is not None:
        mutate(decl)
    (tmp / "models.yaml").write_text(yaml.safe_dump(decl))
    flags = json.loads((ROOT / "cdk.json").read_text())["context"]
    app = cdk.App(outdir=str(tmp / "cdk.out"), context=flags, builtin_cloud_formation_validation=False)
    stack = cdk.Stack(app, "P", env=cdk.Environment(account="123456789012", region="us-east-1"))
    pipe = TritonPipeline(
        stack,
        "Triton",
        source=pipelines.CodePipelineSource.s3(s3.Bucket.from_bucket_name(stack, "S", "src"), "src.zip"),
        declaration="models.yaml",
        root=tmp,
        artifact_bucket=s3.Bucket.from_bucket_name(stack, "B", ARTIFACT_BUCKET),
        fan_out=fan_out,
        artifact_key=kms.Key.from_key_arn(stack, "K", key_arn) if key_arn else None,
    )
    stage = cdk.Stage(app, "Staging")
    cdk.CfnWaitConditionHandle(cdk.Stack(stage, "S"), "R")
    pipe.add_triton_stage(stage)
    pipe.build()
    if nag:
        from cdk_nag import AwsSolutionsChecks

        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app, stack, pipe


@pytest.fixture(scope="module")
def synthed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], TritonPipeline]:
    tmp = tmp_path_factory.mktemp("fanout")
    app, _, pipe = _pipeline(tmp, nag=True)
    app.synth()  # nag on: an unacknowledged finding fails here
    return tmp / "cdk.out", json.loads((tmp / "cdk.out" / "P.template.json").read_text()), pipe


def _of(tpl: dict[str, Any], rtype: str) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in tpl["Resources"].items() if r["Type"] == rtype}


def _definition(tpl: dict[str, Any]) -> dict[str, Any]:
    """The state machine's definition, tokens (Ref, GetAtt) written as <...>."""
    (machine,) = _of(tpl, "AWS::StepFunctions::StateMachine").values()
    parts = machine["Properties"]["DefinitionString"]["Fn::Join"][1]
    text = "".join(
        p if isinstance(p, str) else f"<{p.get('Ref') or '.'.join(p.get('Fn::GetAtt', ['?']))}>"
        for p in parts
    )
    return json.loads(text)


def _states(definition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every state by name, nested branches and item processors included."""
    out: dict[str, dict[str, Any]] = {}
    for name, state in definition["States"].items():
        out[name] = state
        for sub in state.get("Branches", []) + ([state["ItemProcessor"]] if "ItemProcessor" in state else []):
            out.update(_states(sub))
    return out


def _project(tpl: dict[str, Any], fragment: str) -> dict[str, Any]:
    (props,) = [r["Properties"] for k, r in _of(tpl, "AWS::CodeBuild::Project").items() if fragment in k]
    return props


def _commands(project: dict[str, Any]) -> list[str]:
    spec = json.loads(project["Source"]["BuildSpec"])
    return [c for phase in spec["phases"].values() for c in phase["commands"]]


def test_fan_out_stage_runs_the_state_machine_before_synth(synthed: tuple[Path, dict[str, Any], Any]) -> None:
    (pipeline,) = _of(synthed[1], "AWS::CodePipeline::Pipeline").values()
    stages = [(s["Name"], s["Actions"]) for s in pipeline["Properties"]["Stages"]]
    assert [n for n, _ in stages][:3] == ["Source", "FanOut", "Build"]
    prepare, invoke = stages[1][1]
    assert (prepare["ActionTypeId"]["Provider"], invoke["ActionTypeId"]["Provider"]) == (
        "CodeBuild",
        "StepFunctions",
    )
    assert invoke["RunOrder"] > prepare["RunOrder"]
    assert invoke["Configuration"]["InputType"] == "FilePath"
    assert invoke["Configuration"]["Input"] == "fanout-input.json"
    assert invoke["InputArtifacts"] == prepare["OutputArtifacts"]
    assert [a["Name"] for a in stages[2][1]] == ["Synth"]  # no GpuBuild: the TensorRT shards build the plans


def test_synth_reads_the_merged_build_from_s3_instead_of_building(
    synthed: tuple[Path, dict[str, Any], TritonPipeline],
) -> None:
    _, tpl, pipe = synthed
    commands = _commands(_project(tpl, "SynthCdkBuildProject"))
    assert not [c for c in commands if "cdk-triton build" in c]
    fetch = pipe.fan_out_commands.synth_fetch()
    assert fetch in commands and commands.index(fetch) < len(commands) - 1  # before cdk synth
    assert 'get --key "cdk-triton/pipeline/fanout/$(printf %s "$CODEBUILD_RESOLVED_SOURCE_VERSION"' in fetch
    assert fetch.endswith('/merged.tar.gz" --dir out')  # models.yaml's out/, where the manifest is read


def test_buildspecs_hold_the_fan_out_commands(synthed: tuple[Path, dict[str, Any], TritonPipeline]) -> None:
    _, tpl, pipe = synthed
    cmds = pipe.fan_out_commands
    assert cmds.shards == 3 and cmds.gpu_kind == "processing"
    assert _commands(_project(tpl, "FanOutPlanProject"))[-2:] == cmds.assign_shards()
    assert _commands(_project(tpl, "FanOutCpuShardProject"))[-2:] == cmds.cpu_shard()
    assert _commands(_project(tpl, "FanOutMergeProject"))[-3:] == cmds.merge()
    assert _commands(_project(tpl, "FanOutPrepare"))[-3:] == cmds.prepare()
    assert (
        "cdk-triton build --config models.yaml --list-shards 3 > fanout-assignment.json"
        in cmds.assign_shards()[0]
    )
    assert f'--shard "$SHARD" --formats {CPU_FORMATS} --upload' in cmds.cpu_shard()[0]
    assert "$(cat build/shards/merge-args.txt)" in cmds.merge()[1]


def test_the_merge_runs_the_release_runtime_check_once(
    synthed: tuple[Path, dict[str, Any], TritonPipeline],
) -> None:
    """The CPU shards skip the check; the Merge (check on by default) runs it over every model, and a
    refused model fails the Merge's CodeBuild build (exit 1), so the state machine, and the deploy, stop."""
    _, tpl, pipe = synthed
    cmds = pipe.fan_out_commands
    assert cmds.cpu_shard()[0].endswith("--no-target-runtime")
    merge = _commands(_project(tpl, "FanOutMergeProject"))
    assert any("cdk-triton build" in c for c in merge) and not any("--no-target-runtime" in c for c in merge)
    env = _project(tpl, "FanOutMergeProject")["Environment"].get("EnvironmentVariables", [])
    assert not any(v["Name"] == "CDK_TRITON_TARGET_RUNTIME" and v.get("Value") == "off" for v in env)


def test_distributed_maps_read_the_items_from_s3_with_bounded_concurrency(
    synthed: tuple[Path, dict[str, Any], Any],
) -> None:
    states = _states(_definition(synthed[1]))
    for name, kind, concurrency in (("CpuShards", "cpu", 10), ("TensorRtShards", "tensorrt", 2)):
        m = states[name]
        assert m["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
        assert m["ItemReader"]["Resource"].endswith(":states:::s3:getObject")
        assert m["ItemReader"]["ReaderConfig"] == {"InputType": "JSON"}
        assert m["ItemReader"]["Parameters"] == {"Bucket": ARTIFACT_BUCKET, "Key.$": f"$.keys.items_{kind}"}
        assert m["MaxConcurrency"] == concurrency
        assert m.get("ToleratedFailurePercentage", 0) == 0
        assert m["ItemSelector"]["item.$"] == "$$.Map.Item.Value"
    keys = states["Keys"]["Parameters"]["keys"]
    assert keys["items_cpu.$"] == "States.Format('cdk-triton/pipeline/fanout/{}/items-cpu.json', $.run)"


def test_shards_run_sync_with_retries_and_a_failure_naming_their_models(
    synthed: tuple[Path, dict[str, Any], Any],
) -> None:
    states = _states(_definition(synthed[1]))
    for name in ("Plan", "CpuShard", "Merge", "Summary"):
        assert states[name]["Resource"].endswith(":states:::codebuild:startBuild.sync")
    trt = states["TensorRtShard"]
    assert trt["Resource"].endswith(":states:::sagemaker:createProcessingJob.sync")
    params = trt["Parameters"]
    assert params["ProcessingResources"]["ClusterConfig"]["InstanceType"] == "ml.g5.xlarge"
    assert "ContainerEntrypoint" not in params["AppSpecification"]  # the image's NGC entrypoint runs it
    assert (
        '--shard "$SHARD" --formats tensorrt --upload' in params["AppSpecification"]["ContainerArguments"][2]
    )
    assert params["Environment"]["SHARD.$"] == "$.item.shard_arg"
    assert params["ProcessingJobName.$"].startswith(
        "States.Format('cdk-triton-trt-{}-{}', $.item.shard, States.UUID())"
    )
    for name in ("Plan", "CpuShard", "TensorRtShard", "Merge"):
        (retry,) = states[name]["Retry"]
        assert retry == {
            "ErrorEquals": ["States.ALL"],
            "IntervalSeconds": 60,
            "MaxAttempts": 2,
            "BackoffRate": 2,
            "MaxDelaySeconds": 900,
            "JitterStrategy": "FULL",
        }
    for shard in ("CpuShard", "TensorRtShard"):
        (catch,) = states[shard]["Catch"]
        failed = states[catch["Next"]]
        assert failed["Type"] == "Fail" and "$.item.models" in failed["CausePath"]
    (catch,) = states["Shards"]["Catch"]
    assert catch["Next"] == "Summary" and states["Summary"]["Next"] == "ShardsFailed"
    assert states["Shards"]["Next"] == "GpuCheck" and states["GpuCheck"]["Next"] == "Merge"


def test_fan_out_roles_are_least_privilege(synthed: tuple[Path, dict[str, Any], Any]) -> None:
    tpl = synthed[1]
    for key, policy in _of(tpl, "AWS::IAM::Policy").items():
        if "FanOut" not in key or "Prepare" in key or "CodePipelineActionRole" in key:
            continue  # Prepare's and the invoke action's artifact grants are CodePipeline's own
        for st in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            assert not [a for a in actions if "*" in a], (key, actions)
            text = json.dumps(st["Resource"])
            if "s3:::" in text:
                assert (
                    f"s3:::{ARTIFACT_BUCKET}/cdk-triton/" in text or "s3:::" + ARTIFACT_BUCKET + '"' in text
                )
    (machine,) = [p for k, p in _of(tpl, "AWS::IAM::Policy").items() if "FanOutStateMachineRole" in k]
    text = json.dumps(machine)
    assert (
        ":processing-job/cdk-triton-trt-*" in text
        and "StepFunctionsGetEventsForSageMakerProcessingJobsRule" in text
    )
    assert '"iam:PassedToService": "sagemaker.amazonaws.com"' in text


def test_fan_out_template_passes_cfn_lint(synthed: tuple[Path, dict[str, Any], Any]) -> None:
    cfn_lint = Path(sys.executable).with_name("cfn-lint")
    result = subprocess.run(
        [
            str(cfn_lint),
            str(synthed[0] / "P.template.json"),
            "--regions",
            "us-east-1",
            "--ignore-checks",
            "E3703",
            "W3005",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_tensorrt_shards_run_as_training_jobs_where_processing_lacks_the_type(tmp_path: Path) -> None:
    opts = FanOutOptions(min_models=2, models_per_shard=3, tolerated_failure_percentage=10, retries=0)
    _, stack, pipe = _pipeline(tmp_path, "ml.p4d.24xlarge", fan_out=opts)
    tpl = Template.from_stack(stack).to_json()
    states = _states(_definition(tpl))
    assert states["CpuShards"]["ToleratedFailurePercentage"] == 10
    assert states["TensorRtShards"]["ToleratedFailurePercentage"] == 10
    assert "Retry" not in states["CpuShard"] and "Retry" not in states["TensorRtShard"]  # retries=0
    trt = states["TensorRtShard"]
    assert trt["Resource"].endswith(":states:::sagemaker:createTrainingJob.sync")
    spec = trt["Parameters"]["AlgorithmSpecification"]
    assert "ContainerEntrypoint" not in spec and spec["ContainerArguments"][:2] == ["/bin/bash", "-c"]
    assert "tar -xzf /opt/ml/input/data/source/source.tar.gz" in spec["ContainerArguments"][2]
    assert trt["Parameters"]["ResourceConfig"]["InstanceType"] == "ml.p4d.24xlarge"
    assert "training-job/cdk-triton-trt-*" in json.dumps(tpl)
    assert pipe.fan_out_commands.gpu_kind == "training"


def _chain(definition: dict[str, Any]) -> list[str]:
    """The top-level states from StartAt, following Next."""
    out, name = [], definition["StartAt"]
    while name:
        out.append(name)
        name = definition["States"][name].get("Next")
    return out


def test_gpu_check_job_runs_after_the_shards_and_before_the_merge(
    synthed: tuple[Path, dict[str, Any], TritonPipeline],
) -> None:
    definition = _definition(synthed[1])
    assert _chain(definition) == ["Plan", "Keys", "Shards", "GpuCheck", "Merge"]
    check = definition["States"]["GpuCheck"]
    assert check["Resource"].endswith(
        ":states:::sagemaker:createProcessingJob.sync"
    )  # as the TensorRT shards
    assert "Catch" not in check  # a failed check fails the run: the FanOut action fails, nothing deploys
    params = check["Parameters"]
    assert params["ProcessingResources"]["ClusterConfig"]["InstanceType"] == "ml.g5.xlarge"
    assert params["ProcessingJobName.$"].startswith("States.Format('cdk-triton-trt-check-")
    script = params["AppSpecification"]["ContainerArguments"][2]
    assert script == synthed[2].fan_out_commands.gpu_check_script("/opt/ml/processing/input/source")
    assert "cdk-triton gpu-check --config models.yaml --out /tmp/cdk-triton-gpu-check" in script
    assert script.endswith('put --dir /tmp/cdk-triton-gpu-readings --key "$OUTPUT_KEY"')
    assert "pipeline/fanout/{}/gpu-readings.tar.gz" in params["Environment"]["OUTPUT_KEY.$"]


def _without_tensorrt(decl: dict[str, Any]) -> None:
    for m in decl["models"]:
        if m.get("format") == "tensorrt":
            m["format"] = "torchscript"


def test_fan_out_without_tensorrt_still_runs_the_gpu_check(tmp_path: Path) -> None:
    _, stack, pipe = _pipeline(tmp_path, "ml.g6.xlarge", mutate=_without_tensorrt)
    assert pipe.gpu_target is not None and not pipe.gpu_target.builds_models
    tpl = Template.from_stack(stack).to_json()
    definition = _definition(tpl)
    states = _states(definition)
    assert "TensorRtShards" not in states and "TensorRtShard" not in states
    assert _chain(definition) == ["Plan", "Keys", "Shards", "GpuCheck", "Merge"]
    assert states["GpuCheck"]["Parameters"]["ProcessingResources"]["ClusterConfig"]["InstanceType"] == (
        "ml.g6.xlarge"
    )
    assert pipe.fan_out_commands.gpu_kind is None  # the plan puts no model on a TensorRT shard
    assert "processing-job/cdk-triton-trt-*" in json.dumps(tpl)


def test_cpu_only_fan_out_has_no_gpu_job(tmp_path: Path) -> None:
    def cpu_only(decl: dict[str, Any]) -> None:
        _without_tensorrt(decl)
        for m in decl["models"]:
            m["instance_groups"] = [{"kind": "KIND_CPU", "count": 1}]

    _, stack, pipe = _pipeline(tmp_path, "ml.c5.xlarge", mutate=cpu_only)
    assert pipe.gpu_target is None
    tpl = Template.from_stack(stack).to_json()
    assert "GpuCheck" not in _states(_definition(tpl)) and "sagemaker:Create" not in json.dumps(tpl)


def test_below_the_threshold_the_pipeline_builds_in_its_synth_step(tmp_path: Path) -> None:
    _, stack, pipe = _pipeline(tmp_path, fan_out=None)  # the example's 8 models < 100
    tpl = Template.from_stack(stack).to_json()
    assert pipe.shards is None and pipe.fan_out is None
    assert not _of(tpl, "AWS::StepFunctions::StateMachine")
    (pipeline,) = _of(tpl, "AWS::CodePipeline::Pipeline").values()
    assert [s["Name"] for s in pipeline["Properties"]["Stages"]][:2] == ["Source", "Build"]


def test_shard_count_and_threshold() -> None:
    opts = FanOutOptions()
    assert opts.shards(99) is None and opts.shards(100) == 4 and opts.shards(1000) == 40
    assert FanOutOptions(max_shards=8).shards(5000) == 8 and FanOutOptions(min_models=1).shards(1) == 2


def test_fails_out_of_range_fan_out_options_at_once(tmp_path: Path) -> None:
    with pytest.raises(TritonValidationError) as exc:
        _pipeline(tmp_path, fan_out=FanOutOptions(codebuild_concurrency=0, tolerated_failure_percentage=120))
    text = str(exc.value)
    assert exc.value.code == "InvalidFanOutOption"
    assert "fan_out.codebuild_concurrency" in text and "fan_out.tolerated_failure_percentage" in text


def test_an_encrypted_artifact_location_reaches_every_step(tmp_path: Path) -> None:
    key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    _, stack, pipe = _pipeline(tmp_path, key_arn=key)
    tpl = Template.from_stack(stack).to_json()
    (machine,) = [p for k, p in _of(tpl, "AWS::IAM::Policy").items() if "FanOutStateMachineRole" in k]
    assert {"Action": "kms:Decrypt", "Effect": "Allow", "Resource": key} in machine["Properties"][
        "PolicyDocument"
    ]["Statement"]  # the Distributed Maps read the item lists the plan wrote with the key
    assert pipe.fan_out_commands.kms
    trt = _states(_definition(tpl))["TensorRtShard"]["Parameters"]
    assert trt["Environment"]["ARTIFACT_KEY_ARN"] == key


def test_fails_an_artifact_prefix_the_state_machine_cannot_quote() -> None:
    (err,) = SMALL.prefix_errors("it's{x}/", "P/Triton")
    assert err.code == "InvalidFanOutOption" and err.prop == "artifact_prefix" and "' { }" in str(err)
    assert SMALL.prefix_errors("cdk-triton/", "P/Triton") == []


def test_commands_use_the_kms_key_when_the_artifacts_are_encrypted() -> None:
    cmds = FanOutCommands(declaration="build/models.yaml", prefix="p/", shards=2, kms=True)
    jobs = [
        c
        for c in cmds.assign_shards() + cmds.cpu_shard() + cmds.merge() + cmds.summary()
        if "fanout_job" in c
    ]
    assert len(jobs) == 5 and all('--kms-key-arn "$ARTIFACT_KEY_ARN"' in c for c in jobs)
    assert re.search(r"--sse aws:kms --sse-kms-key-id \"\$ARTIFACT_KEY_ARN\"$", cmds.prepare()[1])


def test_the_vendored_job_types_agree_with_botocores_instance_type_enums() -> None:
    """gpu-build.json's processing/training flags (which job a TensorRT shard runs as) are botocore's
    ProcessingInstanceType / TrainingInstanceType enums of the SageMaker service model."""
    import botocore.session

    from cdk_triton.pipeline.gpu_targets import gpu_build_table

    model = botocore.session.get_session().get_service_model("sagemaker")
    processing = set(model.shape_for("ProcessingInstanceType").enum)
    training = set(model.shape_for("TrainingInstanceType").enum)
    rows = gpu_build_table()["instance_types"]
    assert {t for t, r in rows.items() if r.get("processing")} == {t for t in rows if t in processing}
    assert {t for t, r in rows.items() if r.get("training")} == {t for t in rows if t in training}
    assert "ml.p4d.24xlarge" not in processing and "ml.p4d.24xlarge" in training
