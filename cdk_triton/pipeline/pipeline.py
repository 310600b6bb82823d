"""TritonPipeline: a self-mutating CDK pipeline that builds the models, synthesizes and deploys stages.

Order of the pipeline (FileSets make it explicit)::

    Source ─┬─> GpuBuild (TensorRT plans on the endpoint's GPU model, cdk-triton gpu-check) ──> build/out-gpu/
            └─> Synth: cdk-triton build (CPU formats, --merge-manifest gpu/manifest.json) + cdk synth
                 └─> UpdatePipeline (self-mutation) ─> Assets ─> stage 1 ─> verify ─> [approval] ─> stage 2 ...

Merge rule (the builder's ``--merge-manifest``): the GPU build's manifest entries win for every
``format: tensorrt`` model, the CPU build's for every other format; both must name the same
``triton_version`` and artifact location. The CPU build then packages the endpoints from both.

The GpuBuild step exists whenever the fleet has a TensorRT model or a GPU-placed model (the GPU check,
``GpuBuildOptions.gpu_check``, default on); a check-only step gives the synth step no manifest to merge,
only its ordering: a failed check fails the step and nothing deploys.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import aws_cdk as cdk
import jsii
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import pipelines
from constructs import Construct, IValidation

from cdk_triton.config import formats, layout, tables, target_runtime
from cdk_triton.config.manifest import read_manifest
from cdk_triton.errors import TritonValidationError, raise_all
from cdk_triton.pipeline import gpu_targets
from cdk_triton.pipeline._nag import acknowledge_pipeline
from cdk_triton.pipeline.fanout import BuildFanOut, FanOutCommands, FanOutOptions
from cdk_triton.pipeline.fanout_sagemaker import gpu_job_role
from cdk_triton.pipeline.gpu_job import DRIVER_QUERY, NGC_ENTRYPOINT, gpu_check_command
from cdk_triton.pipeline.registration import RegistryOptions
from cdk_triton.pipeline.verify_checks import target_model_parameter_path, verify_checks

#: the formats the CPU build stage builds (the GPU-only ones are built by the GPU job)
CPU_FORMATS = ",".join(formats.where(gpu_only=False))
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
GPU_OUT = "build/out-gpu"
GPU_INPUT_DIR = "gpu"
#: what the Synth step's log says before it merges the GPU build's manifest
GPU_MERGE_NOTE = (
    "cdk-triton build: merging the GPU build's manifest (TensorRT plans, a whole build, not a shard set); "
    f"the CPU formats ({CPU_FORMATS}) are built here by design"
)
DOCKERFILE = "cdk_triton/pipeline/docker/Dockerfile"
#: The source tree of the cdk_triton that synthesizes the pipeline (pyproject.toml + cdk_triton/): the image
#: installs the same code.
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = "cdk_triton/pipeline/gpu_job.py"
VERIFY_HANDLER = "lambda/verify/index.py"
# The image asset's build context: the repository root less everything but what the Dockerfile copies.
_COMPUTE_TYPES = {
    "BUILD_GENERAL1_SMALL": codebuild.ComputeType.SMALL,
    "BUILD_GENERAL1_LARGE": codebuild.ComputeType.LARGE,
}
IMAGE_CONTEXT_EXCLUDE = ["*", "!pyproject.toml", "!cdk_triton", "!cdk_triton/**", "**/__pycache__"]


def verify_invoke_statements(
    partition: str, region: str, account: str, names: Sequence[str]
) -> list[iam.PolicyStatement]:
    """What deploy verification needs of the named endpoints: invoke them, read their TargetModel maps."""
    return [
        iam.PolicyStatement(
            actions=["sagemaker:InvokeEndpoint"],
            resources=[f"arn:{partition}:sagemaker:{region}:{account}:endpoint/{n.lower()}" for n in names],
        ),
        iam.PolicyStatement(
            actions=["ssm:GetParametersByPath"],
            resources=[
                f"arn:{partition}:ssm:{region}:{account}:parameter{target_model_parameter_path(n)}"
                for n in names
            ],
        ),
    ]


@dataclass(frozen=True, kw_only=True, slots=True)
class EndpointVerification:
    """Verify one deployed endpoint after its stage deploys, with the samples the build recorded.

    Attributes:
        endpoint: the endpoint's name in models.yaml / the manifest.
        endpoint_name: the deployed SageMaker endpoint's name. Default: ``endpoint``.
    """

    endpoint: str
    endpoint_name: str | None = None

    @property
    def deployed_name(self) -> str:
        return self.endpoint_name or self.endpoint


def _s3_statements(
    bucket: s3.IBucket, prefix: str, key: kms.IKey | None, *, write: bool
) -> list[iam.PolicyStatement]:
    actions = ["s3:GetObject", "s3:PutObject"] if write else ["s3:GetObject"]
    out = [
        iam.PolicyStatement(actions=actions, resources=[bucket.arn_for_objects(f"{prefix}*")]),
        iam.PolicyStatement(
            actions=["s3:ListBucket"],
            resources=[bucket.bucket_arn],
            conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}},
        ),
    ]
    if key is not None:
        kms_actions = ["kms:Decrypt", "kms:GenerateDataKey", "kms:Encrypt"] if write else ["kms:Decrypt"]
        out.append(iam.PolicyStatement(actions=kms_actions, resources=[key.key_arn]))
    return out


class TritonPipeline(Construct):
    """Defines a self-mutating CDK pipeline that builds Triton models (TensorRT on the target GPU) and deploys stages.

    Args:
        source: where the repository comes from (``pipelines.CodePipelineSource``: connection, CodeCommit, S3).
        declaration: models.yaml, relative to ``root`` (read at synth with ``yaml.safe_load``).
        artifact_bucket: the bucket the build uploads to (yours; never owned by the pipeline).
        artifact_prefix: the prefix in it. Default: ``cdk-triton/``. Every role is scoped to it.
        artifact_key: the bucket's KMS key. Default: none (SSE-S3).
        manifest: the manifest the synth step's build writes, relative to ``root``. Default:
            ``<declaration dir>/out/manifest.json``.
        root: the repository root at synth. Default: the current directory.
        cdk_app: the ``--app`` of ``cdk synth``. Default: cdk.json's ``app``.
        gpu_build: how TensorRT plans are built and whether the GPU job runs ``cdk-triton gpu-check`` on
            every GPU-placed model (``GpuBuildOptions.gpu_check``, default on: a fleet with GPU-placed
            models and no TensorRT model gets a GPU job too). Default: on the endpoint's own GPU model.
        approvals: stage name -> ``True`` or a reason, for stages added later; checked by ``build()``.
        pipeline_name: Default: generated.
        fan_out: when the build fans out in shards on Step Functions' Distributed Map (a ``FanOut`` stage
            before the synth step, which then reads the merged build from S3). Default:
            ``FanOutOptions()``: from 100 declared models on; below that the build runs in the synth step.
        registry: register every build in the SageMaker Model Registry: the synth step runs
            ``cdk-triton register`` for each endpoint of ``registry.groups`` after the build uploaded (with
            fan-out: after it fetched the merged build) and ``cdk synth`` succeeded. Default: none.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        source: pipelines.IFileSetProducer,
        declaration: str,
        artifact_bucket: s3.IBucket,
        artifact_prefix: str = "cdk-triton/",
        artifact_key: kms.IKey | None = None,
        manifest: str | None = None,
        root: str | Path | None = None,
        cdk_app: str | None = None,
        gpu_build: gpu_targets.GpuBuildOptions | None = None,
        approvals: Mapping[str, bool | str] | None = None,
        pipeline_name: str | None = None,
        fan_out: FanOutOptions | None = None,
        registry: RegistryOptions | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.root = Path(root or Path.cwd()).resolve()
        self.declaration = declaration
        prefix = artifact_prefix.strip("/")
        self.artifact_prefix = f"{prefix}/" if prefix else ""
        self.artifact_bucket = artifact_bucket
        self.artifact_key = artifact_key
        self.manifest_path = manifest or str(PurePosixPath(declaration).parent / "out" / "manifest.json")
        self._approvals = dict(approvals or {})
        self._stages: list[str] = []
        self._source = source
        decl = gpu_targets.read_declaration(self.root / declaration)
        self.triton_version = decl.triton_version or tables.DEFAULT_TRITON_VERSION
        self.gpu_target = gpu_targets.gpu_build_targets(decl, options=gpu_build, source=f"{declaration}")
        if self.gpu_target is not None and (note := gpu_targets.job_host_warning(self.gpu_target)):
            cdk.Annotations.of(self).add_warning_v2("cdk-triton:GpuJobHostDriverUnknown", note)
        if self.gpu_target is not None and self.gpu_target.note:
            cdk.Annotations.of(self).add_warning_v2("cdk-triton:GpuCheckOnOtherGpu", self.gpu_target.note)
        self.registry = registry
        if registry is not None:
            endpoints = [str(ep.get("name")) for ep in decl.endpoints]
            raise_all(registry.errors(endpoints, self.node.path))
        self.fan_out_options = fan_out or FanOutOptions()
        raise_all(self.fan_out_options.errors(self.node.path))
        #: the shard count of the fan-out build, or None when the build runs in the synth step
        self.shards = self.fan_out_options.shards(len(decl.models))
        if self.shards is not None:
            raise_all(self.fan_out_options.prefix_errors(self.artifact_prefix, self.node.path))
        self.fan_out: BuildFanOut | None = None
        if self.shards is None:
            self.gpu_build_step = self._gpu_step() if self.gpu_target else None
        else:
            self.gpu_build_step = None
            self.gpu_build_image = self._image() if self.gpu_target else None
            self.fan_out_commands = self._fan_out_commands()
        self.synth_step = self._synth_step(cdk_app)
        self.pipeline = pipelines.CodePipeline(
            self,
            "Pipeline",
            synth=self.synth_step,
            pipeline_name=pipeline_name,
            cross_account_keys=True,
            enable_key_rotation=True,
            docker_enabled_for_self_mutation=self.gpu_target is not None,
            self_mutation=True,
        )
        self.node.add_validation(_ApprovalCheck(self))

    # ------------------------------------------------------------------------------------- steps

    @property
    def build_manifest(self) -> str:
        """Where the synth step finds the build's manifest at run time (``<declaration dir>/out/manifest.json``:
        the build's default output, and where the fan-out's fetch writes the merged build)."""
        return str(PurePosixPath(self.declaration).parent / "out" / "manifest.json")

    @property
    def artifact_location(self) -> str:
        return f"s3://{self.artifact_bucket.bucket_name}/{self.artifact_prefix}"

    def _fan_out_commands(self) -> FanOutCommands:
        from cdk_triton.pipeline.fanout import gpu_job_kind

        assert self.shards is not None
        target = self.gpu_target
        return FanOutCommands(
            declaration=self.declaration,
            prefix=self.artifact_prefix,
            shards=self.shards,
            kms=self.artifact_key is not None,
            gpu_kind=gpu_job_kind(target) if target and target.builds_models else None,
            gpu_instance_type=target.job.instance_type if target and target.builds_models else None,
            sagemaker_concurrency=self.fan_out_options.sagemaker_concurrency,
        )

    def _synth_step(self, cdk_app: str | None) -> pipelines.CodeBuildStep:
        build = f".venv/bin/cdk-triton build --config {self.declaration} --formats {CPU_FORMATS} --upload --no-progress"
        inputs: dict[str, pipelines.IFileSetProducer] = {}
        notes: list[str] = []  # what the log says before the build (the GPU merge)
        if self.gpu_build_step is not None:  # a check-only step: its ordering (a failed check stops here)
            if self.gpu_target is not None and self.gpu_target.builds_models:
                build += f" --merge-manifest {GPU_INPUT_DIR}/manifest.json"
                # the GPU manifest is a whole build of the TensorRT formats, not a shard: no set check, and
                # the CPU formats are built here by design; the log says so (issue 30)
                notes.append(f"echo {GPU_MERGE_NOTE!r}")
            inputs[GPU_INPUT_DIR] = self.gpu_build_step
        app = f' --app "{cdk_app}"' if cdk_app else ""
        env = {
            "CDK_TRITON_ARTIFACT_LOCATION": self.artifact_location,
            "PYTHONDONTWRITEBYTECODE": "1",
            "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
            # the release-runtime check (every TorchScript / ONNX artifact run in the release's own libtorch /
            # ONNX Runtime) is on: a model the endpoint could not load fails this step, so nothing deploys
            target_runtime.SWITCH_VARIABLE: "on",
        }
        if self.shards is not None:  # the FanOut stage built the models: read its merged output
            build = self.fan_out_commands.synth_fetch()
            env["ARTIFACT_BUCKET"] = self.artifact_bucket.bucket_name
            if self.artifact_key is not None:
                env["ARTIFACT_KEY_ARN"] = self.artifact_key.key_arn
        statements = _s3_statements(self.artifact_bucket, self.artifact_prefix, self.artifact_key, write=True)
        register: list[str] = []
        if self.registry is not None:  # the manifest the build wrote, or the merged one the fetch wrote
            register = self.registry.commands(self.build_manifest)
            statements += self.registry.statements(
                cdk.Stack.of(self),
                bucket=self.artifact_bucket,
                prefix=self.artifact_prefix,
                key=self.artifact_key,
            )
        return pipelines.CodeBuildStep(
            "Synth",
            input=self._source,
            additional_inputs=inputs or None,
            install_commands=[
                "python3 -m venv .venv",
                # torch's CPU wheels: a plain `pip install torch==...` pulls the multi-GB CUDA build.
                f".venv/bin/pip install --extra-index-url {TORCH_CPU_INDEX} -r requirements.txt",
                ".venv/bin/pip install --no-deps -e .",
                "npm ci --no-audit --no-fund",
            ],
            commands=[*notes, build, f'PATH="$PWD/.venv/bin:$PATH" npx cdk synth{app}', *register],
            env=env,
            primary_output_directory="cdk.out",
            role_policy_statements=statements,
        )

    def _image(self) -> ecr_assets.DockerImageAsset:
        assert self.gpu_target is not None
        return ecr_assets.DockerImageAsset(
            self,
            "GpuBuildImage",
            directory=str(PACKAGE_ROOT),
            file=DOCKERFILE,
            exclude=IMAGE_CONTEXT_EXCLUDE,
            ignore_mode=cdk.IgnoreMode.DOCKER,
            build_args={
                "TRITON_VERSION": self.gpu_target.triton_version,
                "TENSORRT_VERSION": self.gpu_target.tensorrt_version,
            },
            platform=ecr_assets.Platform.LINUX_AMD64,
        )

    def _gpu_step(self) -> pipelines.CodeBuildStep:
        target = self.gpu_target
        assert target is not None
        image = self._image()
        self.gpu_build_image = image
        s3_rw = _s3_statements(self.artifact_bucket, self.artifact_prefix, self.artifact_key, write=True)
        env = {"CDK_TRITON_ARTIFACT_LOCATION": self.artifact_location, "PYTHONDONTWRITEBYTECODE": "1"}
        if target.job.kind == gpu_targets.CODEBUILD:
            return pipelines.CodeBuildStep(
                "GpuBuild",
                input=self._source,
                build_environment=codebuild.BuildEnvironment(
                    build_image=codebuild.LinuxGpuBuildImage.from_ecr_repository(
                        image.repository, image.image_tag
                    ),
                    compute_type=_COMPUTE_TYPES[str(target.job.codebuild_compute_type)],
                ),
                # CodeBuild runs the commands in its own shell, not through the image's entrypoint:
                # the build goes through the NGC entrypoint (CUDA compat libraries) explicitly.
                commands=self._codebuild_gpu_commands(target),
                env=env,
                primary_output_directory=GPU_OUT,
                role_policy_statements=s3_rw,
                timeout=cdk.Duration.hours(3),
            )
        return self._sagemaker_job_step(image, s3_rw, env)

    def _codebuild_gpu_commands(self, target: gpu_targets.GpuBuildTarget) -> list[str]:
        """The CodeBuild GPU step's lines: the driver, the TensorRT build, the GPU check (each where asked)."""
        commands = [DRIVER_QUERY]  # gpu-check makes the report's folder, the step's output
        if target.builds_models:
            commands.append(
                f"{NGC_ENTRYPOINT} cdk-triton build --config {self.declaration} --formats tensorrt "
                f"--upload --out {GPU_OUT} --no-progress"
            )
        if target.gpu_check:
            commands.append(f"{NGC_ENTRYPOINT} {gpu_check_command(self.declaration, GPU_OUT)}")
        return commands

    def _sagemaker_job_step(
        self, image: ecr_assets.DockerImageAsset, s3_rw: list[iam.PolicyStatement], env: dict[str, str]
    ) -> pipelines.CodeBuildStep:
        target = self.gpu_target
        assert target is not None
        kind = target.job.kind
        stack = cdk.Stack.of(self)
        job_role = gpu_job_role(
            self,
            kind,
            f"cdk-triton: the {kind} job that "
            f"{'builds TensorRT plans' if target.builds_models else 'runs the GPU check'} on {target.job.instance_type}",
            s3_rw,
            image,
        )
        self.gpu_job_role = job_role
        job_arn = stack.format_arn(
            service="sagemaker", resource=f"{kind}-job", resource_name="cdk-triton-trt-*"
        )
        verb = "Processing" if kind == gpu_targets.PROCESSING else "Training"
        launcher = [
            f"python3 {LAUNCHER} --kind {kind} --instance-type {target.job.instance_type}",
            '--image-uri "$IMAGE_URI" --role-arn "$JOB_ROLE_ARN"',
            f'--bucket "$ARTIFACT_BUCKET" --prefix "{self.artifact_prefix}" --declaration {self.declaration}',
            f"--source . --out {GPU_OUT}",
        ]
        if not target.builds_models:
            launcher.append("--no-tensorrt")
        if not target.gpu_check:
            launcher.append("--no-gpu-check")
        if self.artifact_key is not None:
            launcher.append('--kms-key-arn "$ARTIFACT_KEY_ARN"')
        env = {
            **env,
            "IMAGE_URI": image.image_uri,
            "JOB_ROLE_ARN": job_role.role_arn,
            "ARTIFACT_BUCKET": self.artifact_bucket.bucket_name,
        }
        if self.artifact_key is not None:
            env["ARTIFACT_KEY_ARN"] = self.artifact_key.key_arn
        return pipelines.CodeBuildStep(
            "GpuBuild",
            input=self._source,
            install_commands=["python3 -m pip install --quiet boto3"],
            commands=[" ".join(launcher)],
            env=env,
            primary_output_directory=GPU_OUT,
            timeout=cdk.Duration.hours(4),
            role_policy_statements=[
                *s3_rw,
                iam.PolicyStatement(
                    actions=[f"sagemaker:Create{verb}Job", f"sagemaker:Describe{verb}Job"],
                    resources=[job_arn],
                ),
                iam.PolicyStatement(
                    actions=["iam:PassRole"],
                    resources=[job_role.role_arn],
                    conditions={"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}},
                ),
                # Service Quotas has no resource-level permissions for listing quotas.
                iam.PolicyStatement(actions=["servicequotas:ListServiceQuotas"], resources=["*"]),
            ],
        )

    # ------------------------------------------------------------------------------------ stages

    def add_triton_stage(
        self,
        stage: cdk.Stage,
        *,
        approval: bool | str = False,
        verify: Sequence[EndpointVerification] = (),
    ) -> pipelines.StageDeployment:
        """Deploy ``stage``; verify its endpoints after the deploy; optionally wait for a manual approval first.

        Args:
            stage: a ``cdk.Stage`` holding the endpoint stacks (any account/region with the Triton image).
            approval: ``True`` or a reason: a manual approval before the stage deploys. Default: none.
            verify: endpoints to invoke with the build's recorded samples after the deploy; a failure
                stops the promotion. Default: none.
        """
        errors: list[TritonValidationError] = []
        path = stage.node.path
        region = stage.region
        if region and not cdk.Token.is_unresolved(region):
            try:
                tables.image_account(self.triton_version, region)
            except TritonValidationError as exc:
                errors.append(exc.at(path))
        specs: list[dict[str, object]] = []
        if verify:
            try:
                manifest = read_manifest(self.root / self.manifest_path)
            except TritonValidationError as exc:
                errors.append(exc.at(path))
            else:
                errors += self._location_errors(manifest.artifact_location.uri, path)
                for v in verify:
                    try:
                        specs.append(verify_checks(manifest, v.endpoint, endpoint_name=v.deployed_name))
                    except TritonValidationError as exc:
                        errors.append(exc.at(path))
        raise_all(errors)
        pre: list[pipelines.Step] = []
        reason = approval if isinstance(approval, str) else self._approvals.get(stage.stage_name, False)
        if approval or reason:
            comment = reason if isinstance(reason, str) else f"promote to {stage.stage_name}"
            pre.append(pipelines.ManualApprovalStep("Approve", comment=comment))
        post = [self._verify_step(stage, verify, specs)] if verify else []
        self._stages.append(stage.stage_name)
        return self.pipeline.add_stage(stage, pre=pre or None, post=post or None)

    def _location_errors(self, manifest_uri: str, path: str) -> list[TritonValidationError]:
        mine = self.artifact_location
        if cdk.Token.is_unresolved(mine) or manifest_uri == mine:
            return []
        return [
            TritonValidationError(
                "ManifestLocationMismatch",
                prop="manifest.artifact_location",
                value=manifest_uri,
                problem=f"differs from the pipeline's artifact location {mine}, where the build uploads samples",
                allowed=mine,
                fix="build with CDK_TRITON_ARTIFACT_LOCATION set to the pipeline's location (the synth step does)",
                path=path,
            )
        ]

    def _verify_step(
        self, stage: cdk.Stage, verify: Sequence[EndpointVerification], specs: list[dict[str, object]]
    ) -> pipelines.CodeBuildStep:
        stack = cdk.Stack.of(self)
        account = stage.account or stack.account
        region = stage.region or stack.region
        env: dict[str, str] = {}
        commands: list[str] = []
        names = [v.deployed_name for v in verify]
        for i, spec in enumerate(specs):
            env[f"VERIFY_SPEC_{i}"] = json.dumps(spec, sort_keys=True, separators=(",", ":"))
            commands.append(
                f"printenv VERIFY_SPEC_{i} > verify-{i}.json && python3 {VERIFY_HANDLER} --spec verify-{i}.json"
            )
        partition = stack.partition
        statements = [
            *verify_invoke_statements(partition, region, account, names),
            iam.PolicyStatement(
                actions=["s3:GetObject"],
                resources=[
                    self.artifact_bucket.arn_for_objects(layout.samples_key_pattern(self.artifact_prefix))
                ],
            ),
        ]
        if self.artifact_key is not None:
            statements.append(
                iam.PolicyStatement(actions=["kms:Decrypt"], resources=[self.artifact_key.key_arn])
            )
        components = sorted(
            {str(c) for spec in specs if isinstance(m := spec.get("Components"), dict) for c in m.values()}
        )
        if components:  # the handler skips a component scaled in to zero copies: it reads its copy count
            statements.append(
                iam.PolicyStatement(
                    actions=["sagemaker:DescribeInferenceComponent"],
                    resources=[
                        f"arn:{partition}:sagemaker:{region}:{account}:inference-component/{c.lower()}"
                        for c in components
                    ],
                )
            )
        return pipelines.CodeBuildStep(
            "Verify",
            input=self._source,
            install_commands=["python3 -m pip install --quiet boto3"],
            commands=commands,
            env={**env, "AWS_REGION": region},
            role_policy_statements=statements,
        )

    def build(self) -> pipelines.CodePipeline:
        """Check the approvals against the stages added, then build the pipeline (call after the last stage)."""
        raise_all(self.approval_errors())
        self.pipeline.build_pipeline()
        self._depend_on_groups()
        if self.shards is not None:
            key = self.pipeline.pipeline.artifact_bucket.encryption_key
            assert key is not None  # cross_account_keys=True
            self.fan_out = BuildFanOut(
                self,
                "FanOut",
                options=self.fan_out_options,
                commands=self.fan_out_commands,
                bucket=self.artifact_bucket,
                artifact_location=self.artifact_location,
                artifact_key=self.artifact_key,
                encryption_key=key,
                gpu_target=self.gpu_target,
                gpu_image=self.gpu_build_image,
            )
            self.fan_out.add_to(self.pipeline.pipeline)
        acknowledge_pipeline(self, artifact_bucket=self.artifact_bucket, artifact_prefix=self.artifact_prefix)
        return self.pipeline

    def _depend_on_groups(self) -> None:
        """The CodePipeline resource (it starts a run once created) waits for the groups this stack defines."""
        if self.registry is None:
            return
        cfn = self.pipeline.pipeline.node.default_child
        assert cfn is not None
        for group in self.registry.groups.values():
            if isinstance(group, Construct) and cdk.Stack.of(group) is cdk.Stack.of(self):
                cfn.node.add_dependency(group)

    def approval_errors(self) -> list[TritonValidationError]:
        return [
            TritonValidationError(
                "ApprovalForUnknownStage",
                prop="approvals",
                value=name,
                problem="names no stage of this pipeline",
                allowed=", ".join(self._stages) or "(no stage added yet)",
                fix="add the stage with add_triton_stage, or correct the stage name",
                path=self.node.path,
            )
            for name in self._approvals
            if name not in self._stages
        ]


@jsii.implements(IValidation)
class _ApprovalCheck:
    """Fails synth (before anything is written) when ``build()`` was never called and an approval is dangling."""

    def __init__(self, owner: TritonPipeline) -> None:
        self._owner = owner

    def validate(self) -> list[str]:
        return [str(e) for e in self._owner.approval_errors()]
