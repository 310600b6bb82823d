"""The pipeline's fan-out build: above a size, the models build in shards on Step Functions' Distributed Map.

CDK Pipelines starts with its synth step, so the fan-out runs in a stage inserted before it
(``FanOut``, added on the underlying ``codepipeline.Pipeline`` after ``build_pipeline()``)::

    Source ─> FanOut: Prepare (CodeBuild: pack the source to S3, write the run's input)
                      Build   (Step Functions invoke action, STANDARD state machine):
                        Plan  (CodeBuild .sync: cdk-triton build --list-shards N, item lists, quota preflight)
                        Keys  (Pass: the run's S3 keys)
                        Shards (Parallel) ┬ CpuShards: Distributed Map (STANDARD children) over items-cpu.json
                                          │    CodeBuild .sync: cdk-triton build --shard I/N --formats <cpu> --upload
                                          └ TensorRtShards: Distributed Map over items-tensorrt.json
                                               SageMaker createProcessingJob.sync / createTrainingJob.sync
                                               on the endpoint's own instance type: --shard I/N --formats tensorrt
                          (retries with backoff, a tolerated failure percentage; a failure ─> Summary ─> Fail)
                        GpuCheck (SageMaker job on the same type: cdk-triton gpu-check, every GPU-placed
                          model; a failure fails the run, so the deploy; GpuBuildOptions.gpu_check)
                        Merge (CodeBuild .sync: cdk-triton build --merge-manifest ... (one per shard) --upload)
           ─> Build: Synth (reads the merged build output from S3, then cdk synth) ─> ...

Every S3 key is a function of ``cdk_triton.config.layout`` (``<prefix>pipeline/fanout/<run>/...``); the
run id is the sha256 of the source revision (``CODEBUILD_RESOLVED_SOURCE_VERSION``), which the Prepare
and Synth actions both see. The S3 side of each step is ``cdk_triton.pipeline.fanout_job``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_codepipeline as codepipeline
from aws_cdk import aws_codepipeline_actions as cp_actions
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from cdk_triton.config import layout
from cdk_triton.errors import TritonValidationError
from cdk_triton.pipeline import fanout_sagemaker, gpu_job, gpu_targets
from cdk_triton.pipeline.fanout_commands import CPU_FORMATS, INPUT_FILE, VENV_INSTALL, FanOutCommands

__all__ = ["CPU_FORMATS", "BuildFanOut", "FanOutCommands", "FanOutOptions", "gpu_job_kind"]


@dataclass(frozen=True, kw_only=True, slots=True)
class FanOutOptions:
    """When and how the pipeline's build fans out on Step Functions' Distributed Map.

    Attributes:
        min_models: fan out when models.yaml declares at least this many models. Below it the pipeline
            builds in its synth step as before. Default: 100 (about 30-50 minutes of real models on one
            CodeBuild machine; each shard costs a few minutes of setup).
        models_per_shard: the shard count is ceil(models / models_per_shard), fixed at synth. Default: 25.
        max_shards: the most shards. Default: 200.
        codebuild_concurrency: the CPU shards' MaxConcurrency: at most your account's CodeBuild quota of
            concurrently running builds for the compute type (builds above it queue). Default: 10.
        sagemaker_concurrency: the TensorRT shards' MaxConcurrency: at most your
            ``<instance type> for processing job usage`` (or training) quota, which the plan step reads.
            Default: 2.
        tolerated_failure_percentage: the share of shards (per kind) that may still fail after their
            retries without failing the run; the merge step builds a failed CPU shard's models itself, a
            failed TensorRT shard fails the merge. Default: 0.
        retries: attempts after the first for every shard step (exponential backoff, 60 s doubling,
            full jitter). Default: 2.
        shard_timeout: the limit of one shard's build. Default: 3 hours.
    """

    min_models: int = 100
    models_per_shard: int = 25
    max_shards: int = 200
    codebuild_concurrency: int = 10
    sagemaker_concurrency: int = 2
    tolerated_failure_percentage: int = 0
    retries: int = 2
    shard_timeout: cdk.Duration | None = None

    def errors(self, path: str) -> list[TritonValidationError]:
        """Every out-of-range option (collected, not raised)."""
        out: list[TritonValidationError] = []
        for name in (
            "min_models",
            "models_per_shard",
            "max_shards",
            "codebuild_concurrency",
            "sagemaker_concurrency",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                out.append(_invalid(f"fan_out.{name}", value, "an integer >= 1", path))
        if not 0 <= self.tolerated_failure_percentage <= 100:
            out.append(
                _invalid(
                    "fan_out.tolerated_failure_percentage",
                    self.tolerated_failure_percentage,
                    "0 to 100",
                    path,
                )
            )
        if not 0 <= self.retries <= 10:
            out.append(_invalid("fan_out.retries", self.retries, "0 to 10", path))
        return out

    def prefix_errors(self, prefix: str, path: str) -> list[TritonValidationError]:
        """The artifact prefix is quoted into the state machine's ``States.Format`` strings: no ``{ } ' \\``."""
        bad = sorted({c for c in prefix if c in "{}'\\"})
        if not bad:
            return []
        return [
            TritonValidationError(
                "InvalidFanOutOption",
                prop="artifact_prefix",
                value=prefix,
                problem=f"holds {' '.join(bad)}, which the fan-out's States.Format strings cannot quote",
                allowed="an S3 key prefix without { } ' \\",
                fix="choose another artifact prefix, or raise fan_out.min_models above the declaration's size",
                path=path,
            )
        ]

    def shards(self, models: int) -> int | None:
        """The shard count for ``models`` models, or None below :attr:`min_models` (no fan-out)."""
        if models < self.min_models:
            return None
        return max(2, min(self.max_shards, math.ceil(models / self.models_per_shard)))

    @property
    def timeout(self) -> cdk.Duration:
        return self.shard_timeout or cdk.Duration.hours(3)


def _invalid(prop: str, value: object, allowed: str, path: str) -> TritonValidationError:
    return TritonValidationError(
        "InvalidFanOutOption",
        prop=prop,
        value=value,
        problem="is out of range",
        allowed=allowed,
        fix="pass FanOutOptions with values in range, or leave the option at its default",
        path=path,
    )


def gpu_job_kind(target: gpu_targets.GpuBuildTarget) -> str:
    """The SageMaker job of the TensorRT shards: Processing where it offers the endpoint's instance type,
    else Training (``gpu-build.json``, from botocore's ProcessingInstanceType / TrainingInstanceType)."""
    kinds = [j.kind for j in gpu_targets.job_kinds(target.job.instance_type)]
    return gpu_targets.PROCESSING if gpu_targets.PROCESSING in kinds else gpu_targets.TRAINING


# ---------------------------------------------------------------------------------- item reader


@jsii.implements(sfn.IItemReader)
class _PrefixItemReader:
    """``S3JsonItemReader`` whose key comes from the state (``Key.$``) and whose policy is scoped to the
    run's item lists (aws-cdk-lib's readers grant ``s3:GetObject`` on the whole bucket)."""

    def __init__(self, bucket: s3.IBucket, key_path: str, objects: str) -> None:
        self._bucket = bucket
        self._key_path = key_path
        self._objects = objects

    @property
    def bucket(self) -> s3.IBucket:
        return self._bucket

    @property
    def bucket_name_path(self) -> str | None:
        return None

    @property
    def max_items(self) -> float | None:
        return None

    @property
    def resource(self) -> str:
        return f"arn:{cdk.Aws.PARTITION}:states:::s3:getObject"

    def render(self, query_language: sfn.QueryLanguage | None = None) -> Any:
        return {
            "Resource": self.resource,
            "ReaderConfig": {"InputType": "JSON"},
            "Parameters": {"Bucket": self._bucket.bucket_name, "Key.$": self._key_path},
        }

    def provide_policy_statements(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(
                actions=["s3:GetObject"], resources=[self._bucket.arn_for_objects(self._objects)]
            )
        ]

    def validate_item_reader(self) -> list[str]:
        return []


# -------------------------------------------------------------------------------------- construct


class BuildFanOut(Construct):
    """Defines the fan-out's CodeBuild projects, SageMaker job role and STANDARD state machine.

    Created by ``TritonPipeline.build()`` above ``FanOutOptions.min_models``; :meth:`add_to` inserts the
    ``FanOut`` stage (Prepare, then the Step Functions invoke action) after the pipeline's Source stage.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        options: FanOutOptions,
        commands: FanOutCommands,
        bucket: s3.IBucket,
        artifact_location: str,
        artifact_key: kms.IKey | None,
        encryption_key: kms.IKey,
        gpu_target: gpu_targets.GpuBuildTarget | None = None,
        gpu_image: ecr_assets.DockerImageAsset | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.options = options
        self.commands = commands
        self._bucket = bucket
        self._key = artifact_key
        self._encryption_key = encryption_key
        self._managed_key = kms.Alias.from_alias_name(self, "ManagedS3Key", "alias/aws/s3")
        self._env = {"ARTIFACT_BUCKET": bucket.bucket_name, "CDK_TRITON_ARTIFACT_LOCATION": artifact_location}
        if artifact_key is not None:
            self._env["ARTIFACT_KEY_ARN"] = artifact_key.key_arn
        prefix = commands.prefix
        self._fanout_objects = layout.fanout_key_pattern(prefix)
        venv = [commands.fetch_source(), *VENV_INSTALL]
        self.plan_project = self._project(
            "Plan",
            venv,
            commands.assign_shards(),
            self._fanout_objects,
            quotas=gpu_target is not None and gpu_target.builds_models,
        )
        self.cpu_project = self._project(
            "CpuShard", venv, commands.cpu_shard(), f"{prefix}*", timeout=options.timeout
        )
        self.merge_project = self._project(
            "Merge", venv, commands.merge(), f"{prefix}*", timeout=options.timeout
        )
        self.summary_project = self._project(
            "Summary",
            [commands.fetch_source(), "python3 -m pip install --quiet boto3"],
            commands.summary(),
            self._fanout_objects,
        )
        self.job_role: iam.Role | None = None
        self.gpu_kind: str | None = None
        if gpu_target is not None and gpu_image is not None:
            kind = self.gpu_kind = gpu_job_kind(gpu_target)
            what = "build the TensorRT shards" if gpu_target.builds_models else "run the GPU check"
            self.job_role = fanout_sagemaker.gpu_job_role(
                self,
                kind,
                f"cdk-triton: the {kind} jobs that {what} on {gpu_target.job.instance_type}",
                self._s3(f"{self.commands.prefix}*"),
                gpu_image,
            )
        self.state_machine = self._state_machine(gpu_target, gpu_image)

    # ------------------------------------------------------------------------------------ projects

    def _s3(self, objects: str, *, write: bool = True) -> list[iam.PolicyStatement]:
        actions = ["s3:GetObject", "s3:PutObject"] if write else ["s3:GetObject"]
        out = [
            iam.PolicyStatement(actions=actions, resources=[self._bucket.arn_for_objects(objects)]),
            iam.PolicyStatement(
                actions=["s3:ListBucket"],
                resources=[self._bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [objects]}},
            ),
        ]
        if self._key is not None:
            out.append(
                iam.PolicyStatement(
                    actions=["kms:Decrypt", "kms:GenerateDataKey", "kms:Encrypt"],
                    resources=[self._key.key_arn],
                )
            )
        return out

    def _project(
        self,
        construct_id: str,
        install: list[str],
        build: list[str],
        objects: str,
        *,
        timeout: cdk.Duration | None = None,
        quotas: bool = False,
    ) -> codebuild.Project:
        project = codebuild.Project(
            self,
            f"{construct_id}Project",
            description=f"cdk-triton fan-out build: {construct_id}",
            build_spec=codebuild.BuildSpec.from_object(
                {
                    "version": "0.2",
                    "env": {"shell": "bash"},
                    "phases": {"install": {"commands": install}, "build": {"commands": build}},
                }
            ),
            environment=codebuild.BuildEnvironment(build_image=codebuild.LinuxBuildImage.STANDARD_7_0),
            environment_variables={
                k: codebuild.BuildEnvironmentVariable(value=v)
                for k, v in {**self._env, "PYTHONDONTWRITEBYTECODE": "1"}.items()
            },
            # no build artifacts: the AWS managed S3 key satisfies CB4 without a grant of wildcard KMS actions
            encryption_key=self._managed_key,
            timeout=timeout or cdk.Duration.hours(1),
        )
        for st in self._s3(objects):
            project.add_to_role_policy(st)
        if quotas:
            # Service Quotas has no resource-level permissions for listing quotas.
            project.add_to_role_policy(
                iam.PolicyStatement(actions=["servicequotas:ListServiceQuotas"], resources=["*"])
            )
        return project

    # ------------------------------------------------------------------------------- state machine

    def _retry(self, state: Any) -> None:
        if self.options.retries:
            state.add_retry(
                errors=["States.ALL"],
                interval=cdk.Duration.seconds(60),
                backoff_rate=2.0,
                max_attempts=self.options.retries,
                max_delay=cdk.Duration.minutes(15),
                jitter_strategy=sfn.JitterType.FULL,
            )

    def _failed(self, construct_id: str) -> sfn.Fail:
        """A child's end when its shard failed after its retries: the cause names the shard and its models."""
        return sfn.Fail(
            self,
            construct_id,
            error="ShardFailed",
            cause_path=sfn.JsonPath.format(
                "shard {} ({}) failed; models: {}; error: {}",
                sfn.JsonPath.string_at("$.item.shard_arg"),
                sfn.JsonPath.string_at("$.item.kind"),
                sfn.JsonPath.json_to_string(sfn.JsonPath.object_at("$.item.models")),
                sfn.JsonPath.json_to_string(sfn.JsonPath.object_at("$.error")),
            ),
        )

    def _codebuild(
        self, construct_id: str, project: codebuild.Project, env: dict[str, str]
    ) -> tasks.CodeBuildStartBuild:
        return tasks.CodeBuildStartBuild(
            self,
            construct_id,
            project=project,
            integration_pattern=sfn.IntegrationPattern.RUN_JOB,
            environment_variables_override={
                k: codebuild.BuildEnvironmentVariable(value=sfn.JsonPath.string_at(v)) for k, v in env.items()
            },
            result_path=sfn.JsonPath.DISCARD,
        )

    def _map(self, construct_id: str, kind: str, concurrency: int, body: Any) -> sfn.DistributedMap:
        selector = {
            "item": sfn.JsonPath.object_at("$$.Map.Item.Value"),
            "run": sfn.JsonPath.string_at("$.run"),
        }
        if kind == layout.FANOUT_GPU:
            selector["source_uri"] = sfn.JsonPath.string_at("$.source_uri")
        done = sfn.Pass(
            self,
            f"{construct_id}Done",
            parameters={"shard": sfn.JsonPath.string_at("$.item.shard_arg"), "kind": kind},
        )
        body.add_catch(self._failed(f"{construct_id}Failed"), errors=["States.ALL"], result_path="$.error")
        shard_map = sfn.DistributedMap(
            self,
            construct_id,
            map_execution_type=sfn.StateMachineType.STANDARD,
            item_reader=_PrefixItemReader(self._bucket, f"$.keys.items_{kind}", self._fanout_objects),
            item_selector=selector,
            max_concurrency=concurrency,
            tolerated_failure_percentage=self.options.tolerated_failure_percentage,
            label=construct_id,
            result_path=sfn.JsonPath.DISCARD,
        )
        shard_map.item_processor(body.next(done))
        return shard_map

    def _gpu_state(
        self, target: gpu_targets.GpuBuildTarget, image: ecr_assets.DockerImageAsset
    ) -> sfn.CustomState:
        """The TensorRT shard: a SageMaker job with the request shape of ``gpu_job.py`` (ContainerArguments
        only: the image's own NGC entrypoint runs them) and a new name per attempt (a retry needs one)."""
        source = self._job_source()
        return self._job_state(
            "TensorRtShard",
            target,
            image,
            name="States.Format('cdk-triton-trt-{}-{}', $.item.shard, States.UUID())",
            env={"SHARD.$": "$.item.shard_arg", "OUTPUT_KEY.$": "$.item.output_key"},
            args=["/bin/bash", "-c", self.commands.gpu_shard_script(source)],
        )

    def _gpu_check_state(
        self, target: gpu_targets.GpuBuildTarget, image: ecr_assets.DockerImageAsset
    ) -> sfn.CustomState:
        """The GPU check: one SageMaker job of the same kind, type and image as the TensorRT shards that
        runs ``cdk-triton gpu-check`` on the whole declaration; its readings go to the run's
        ``gpu-readings.tar.gz``. No catch: a failure (after the retries) fails the run, so the deploy."""
        key = sfn.JsonPath.format(
            self.commands.prefix + layout.fanout_gpu_readings_key("{}"), sfn.JsonPath.string_at("$.run")
        )
        return self._job_state(
            "GpuCheck",
            target,
            image,
            name="States.Format('cdk-triton-trt-check-{}', States.UUID())",
            env={"OUTPUT_KEY.$": key},
            args=["/bin/bash", "-c", self.commands.gpu_check_script(self._job_source())],
        )

    def _job_source(self) -> str:
        """Where the job's container finds the source: the Processing or the Training input path."""
        processing = self.gpu_kind == gpu_targets.PROCESSING
        return gpu_job.PROCESSING_SOURCE if processing else gpu_job.TRAINING_SOURCE

    def _job_state(
        self,
        construct_id: str,
        target: gpu_targets.GpuBuildTarget,
        image: ecr_assets.DockerImageAsset,
        *,
        name: str,
        env: dict[str, Any],
        args: list[str],
    ) -> sfn.CustomState:
        """A SageMaker Processing or Training job state (``.sync``, retried) of the GPU kind."""
        assert self.job_role is not None
        processing = self.gpu_kind == gpu_targets.PROCESSING
        common: dict[str, Any] = {
            "StoppingCondition": {"MaxRuntimeInSeconds": int(self.options.timeout.to_seconds())},
            "Environment": {**self._env, **env},
            "RoleArn": self.job_role.role_arn,
        }
        if processing:
            resource, params = "createProcessingJob", {"ProcessingJobName.$": name, **common}
            params.update(fanout_sagemaker.processing_request(target, image, args, self._job_source()))
        else:
            resource, params = "createTrainingJob", {"TrainingJobName.$": name, **common}
            params.update(
                fanout_sagemaker.training_request(
                    target,
                    image,
                    args,
                    output_path=f"s3://{self._bucket.bucket_name}/{self.commands.prefix}{layout.FANOUT_FOLDER}/sagemaker-output/",
                    kms_key_arn=self._key.key_arn if self._key is not None else None,
                )
            )
        state = sfn.CustomState(
            self,
            construct_id,
            state_json={
                "Type": "Task",
                "Resource": f"arn:{cdk.Aws.PARTITION}:states:::sagemaker:{resource}.sync",
                "Parameters": params,
                "ResultPath": None,
            },
        )
        self._retry(state)
        return state

    def _keys(self) -> dict[str, Any]:
        """The Keys state's parameters: the run's item list keys and source URI (from layout, by run)."""
        prefix = self.commands.prefix
        keys: dict[str, Any] = {"run": sfn.JsonPath.string_at("$.run")}
        keys["keys"] = {
            f"items_{k}": sfn.JsonPath.format(
                prefix + layout.fanout_items_key("{}", k), sfn.JsonPath.string_at("$.run")
            )
            for k in layout.FANOUT_KINDS
        }
        keys["source_uri"] = sfn.JsonPath.format(
            f"s3://{self._bucket.bucket_name}/{prefix}{layout.fanout_source_key('{}')}",
            sfn.JsonPath.string_at("$.run"),
        )
        return keys

    def _state_machine(
        self, target: gpu_targets.GpuBuildTarget | None, image: ecr_assets.DockerImageAsset | None
    ) -> sfn.StateMachine:
        run = {"FANOUT_RUN": "$.run"}
        plan = self._codebuild("Plan", self.plan_project, run)
        self._retry(plan)
        keys = self._keys()
        cpu = self._codebuild(
            "CpuShard",
            self.cpu_project,
            {**run, "SHARD": "$.item.shard_arg", "OUTPUT_KEY": "$.item.output_key"},
        )
        self._retry(cpu)
        shards = sfn.Parallel(self, "Shards", result_path=sfn.JsonPath.DISCARD)
        shards.branch(self._map("CpuShards", "cpu", self.options.codebuild_concurrency, cpu))
        if target is not None and target.builds_models and image is not None:
            shards.branch(
                self._map(
                    "TensorRtShards",
                    layout.FANOUT_GPU,
                    self.options.sagemaker_concurrency,
                    self._gpu_state(target, image),
                )
            )
        merge = self._codebuild("Merge", self.merge_project, run)
        self._retry(merge)
        summary = self._codebuild("Summary", self.summary_project, run)
        failed = sfn.Fail(
            self,
            "ShardsFailed",
            error="ShardsFailed",
            cause="shards failed beyond the tolerated percentage: the Summary build's log and "
            f"<artifact location>{layout.FANOUT_FOLDER}/<run>/failed-models.json list their models",
        )
        shards.add_catch(summary.next(failed), errors=["States.ALL"], result_path="$.error")
        chain = plan.next(sfn.Pass(self, "Keys", parameters=keys)).next(shards)
        if target is not None and target.gpu_check and image is not None:
            chain = chain.next(self._gpu_check_state(target, image))
        chain = chain.next(merge)
        log_group = logs.LogGroup(self, "Logs", retention=logs.RetentionDays.ONE_YEAR)
        machine = sfn.StateMachine(
            self,
            "StateMachine",
            definition_body=sfn.DefinitionBody.from_chainable(chain),
            state_machine_type=sfn.StateMachineType.STANDARD,
            timeout=cdk.Duration.hours(24),
            tracing_enabled=True,
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False),
            comment="cdk-triton: the pipeline's sharded model build (plan, shards, merge)",
        )
        if self.job_role is not None:
            assert self.gpu_kind is not None
            for st in fanout_sagemaker.sagemaker_statements(self, self.gpu_kind, self.job_role):
                machine.add_to_role_policy(st)
        if self._key is not None:  # the Distributed Maps read the item lists the plan wrote with the key
            machine.add_to_role_policy(
                iam.PolicyStatement(actions=["kms:Decrypt"], resources=[self._key.key_arn])
            )
        return machine

    # ------------------------------------------------------------------------------------- pipeline

    def add_to(self, pipeline: codepipeline.Pipeline) -> codepipeline.IStage:
        """Insert the ``FanOut`` stage after the Source stage (CDK Pipelines' escape hatch)."""
        source_stage = pipeline.stages[0]
        source = source_stage.actions[0].action_properties.outputs[0]  # type: ignore[index]
        prepared = codepipeline.Artifact("FanOutInput")
        prepare = codebuild.PipelineProject(
            self,
            "Prepare",
            description="cdk-triton fan-out build: pack the source for the state machine",
            build_spec=codebuild.BuildSpec.from_object(
                {
                    "version": "0.2",
                    "env": {"shell": "bash"},
                    "phases": {"build": {"commands": self.commands.prepare()}},
                    "artifacts": {"files": [INPUT_FILE]},
                }
            ),
            environment=codebuild.BuildEnvironment(build_image=codebuild.LinuxBuildImage.STANDARD_7_0),
            environment_variables={
                k: codebuild.BuildEnvironmentVariable(value=v) for k, v in self._env.items()
            },
            encryption_key=self._encryption_key,
        )
        for st in self._s3(self._fanout_objects):
            prepare.add_to_role_policy(st)
        stage = pipeline.add_stage(
            stage_name="FanOut",
            placement=codepipeline.StagePlacement(just_after=source_stage),
            actions=[
                cp_actions.CodeBuildAction(
                    action_name="Prepare", project=prepare, input=source, outputs=[prepared], run_order=1
                ),
                cp_actions.StepFunctionInvokeAction(
                    action_name="Build",
                    state_machine=self.state_machine,
                    state_machine_input=cp_actions.StateMachineInput.file_path(prepared.at_path(INPUT_FILE)),
                    run_order=2,
                ),
            ],
        )
        # StateMachineInput.file_path renders the input as '<artifact>::<file>'; CodePipeline reads the
        # Input of InputType FilePath as a path inside the input artifact.
        cfn = pipeline.node.default_child
        assert isinstance(cfn, codepipeline.CfnPipeline)
        index = [s.stage_name for s in pipeline.stages].index("FanOut")
        cfn.add_property_override(f"Stages.{index}.Actions.1.Configuration.Input", INPUT_FILE)
        return stage
