"""TritonPromotionPipeline: approval in the SageMaker Model Registry deploys exactly the approved build.

Separate from the build pipeline (``TritonPipeline``), which builds and registers versions::

    Model Registry: version -> Approved
      └─ EventBridge rule (aws.sagemaker, "SageMaker Model Package State Change", Approved, your groups)
          └─ Trigger (lambda/promotion): only if the version's manifest hash is not the one at the source key
              ├─ writes approved.zip (manifest.json as registered + approval.json) to the source bucket
              └─ StartPipelineExecution
    Pipeline: Source (approved.zip, S3, no own trigger) + repository (the app, trigger off)
      └─ Synth: gate (still Approved? same bytes?) -> cdk synth -c manifest=approved/manifest.json -> specs
          └─ per stage: TrustCheck (assume the target's bootstrap deploy role) -> deploy (CDK Pipelines, the
             bootstrap roles) -> Verify (assume the stage's verify role) -> write-back to the version
             [-> Bake: the shadow's comparison alarms over the bake time] [-> record the live manifest]

Built on ``aws_cdk.pipelines`` (not plain ``aws_codepipeline``): its deploy actions assume the CDK bootstrap
roles of each target account and region (what ``cdk bootstrap --trust`` sets up), publish assets across
accounts and regions, and ``cross_account_keys`` encrypts the artifacts for them; the steps before and
after a stage are ``pre``/``post`` CodeBuild steps. Self-mutation is off: the pipeline runs only on an
approval; deploy changes of the pipeline itself with ``cdk deploy``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_codepipeline_actions as cp_actions
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import pipelines
from constructs import Construct

from cdk_triton.config.arns import account_id_problems
from cdk_triton.config.manifest import ArtifactLocation
from cdk_triton.config.registry import check_model_package_group_name
from cdk_triton.errors import TritonValidationError, raise_all
from cdk_triton.pipeline import promotion_access as access
from cdk_triton.pipeline._nag import acknowledge_pipeline
from cdk_triton.pipeline.pipeline import TORCH_CPU_INDEX, EndpointVerification
from cdk_triton.pipeline.promotion_access import ShadowBake
from cdk_triton.pipeline.promotion_tools import check_file, regional_file

#: lambda/promotion: in a checkout through the symlink handlers/promotion, in a wheel the copy setuptools made
HANDLER_DIR = (Path(__file__).parent / "handlers" / "promotion").resolve()
#: The least-privilege ``--cloudformation-execution-policies`` of a stage account (``cdk bootstrap``):
#: exact actions of what the library's stacks create; see the README's GitOps section.
DEPLOY_POLICY = Path(__file__).resolve().parent / "data" / "cdk-triton-deploy-policy.json"
SOURCE_KEY = "approved/approved.zip"
LIVE_KEY = "live/manifest.json"
APPROVED_DIR = "approved"
TOOLS_DIR = "promotion"
DEFAULT_QUALIFIER = "hnb659fds"
EVENT_DETAIL_TYPE = "SageMaker Model Package State Change"


@dataclass(frozen=True, kw_only=True, slots=True)
class RegionalArtifacts:
    """Where a stage in another region reads the build: YOUR bucket in the stage's region.

    The stage's Replicate step copies the approved build there before the deploy, and the stage is
    synthesized from a region-specific manifest (the approved one, every location moved here). Add the
    statements of ``TritonPromotionPipeline.regional_bucket_policy(stage)`` to the bucket's policy.

    Attributes:
        location: ``s3://<bucket in the stage's region>/<prefix>``.
        kms_key_arn: the bucket's KMS key. Default: none (SSE-S3).
    """

    location: str
    kms_key_arn: str | None = None

    @property
    def uri(self) -> str:
        return ArtifactLocation.from_uri(self.location).uri


def bootstrap_role_arn(kind: str, *, account: str, region: str, qualifier: str = DEFAULT_QUALIFIER) -> str:
    """The ARN of a CDK bootstrap role (``deploy``, ``cfn-exec``, ``lookup``, ...) in a target account."""
    return f"arn:{cdk.Aws.PARTITION}:iam::{account}:role/cdk-{qualifier}-{kind}-role-{account}-{region}"


class TritonPromotionPipeline(Construct):
    """Defines a promotion pipeline that an approval in the SageMaker Model Registry starts.

    Args:
        source: the repository holding the app (``pipelines.CodePipelineSource`` with its own trigger
            off: ``connection(..., trigger_on_push=False)`` or ``s3(..., trigger=S3Trigger.NONE)``).
        model_package_groups: the model package groups whose approvals promote (one per endpoint).
        artifact_bucket: the bucket the build uploaded to (yours): the trigger reads the registered manifest
            and the stages' verification reads the samples there.
        artifact_prefix: Default: ``cdk-triton/``.
        artifact_key: the bucket's KMS key. Default: none (SSE-S3).
        cdk_app: the ``--app`` of ``cdk synth``. Default: cdk.json's.
        bootstrap_qualifier: the CDK bootstrap qualifier of the target accounts. Default: ``hnb659fds``.
        pipeline_name: Default: ``cdk-triton-promotion`` (a physical name: the trigger starts it by name).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        source: pipelines.IFileSetProducer,
        model_package_groups: Sequence[str],
        artifact_bucket: s3.IBucket,
        artifact_prefix: str = "cdk-triton/",
        artifact_key: kms.IKey | None = None,
        cdk_app: str | None = None,
        bootstrap_qualifier: str = DEFAULT_QUALIFIER,
        pipeline_name: str = "cdk-triton-promotion",
    ) -> None:
        super().__init__(scope, construct_id)
        _check_groups(model_package_groups, self.node.path)
        self.stack = cdk.Stack.of(self)
        self._source = source
        self.model_package_groups = list(model_package_groups)
        self.artifact_bucket, self.artifact_key = artifact_bucket, artifact_key
        prefix = artifact_prefix.strip("/")
        self.artifact_prefix = f"{prefix}/" if prefix else ""
        self.cdk_app, self.qualifier, self.pipeline_name = cdk_app, bootstrap_qualifier, pipeline_name
        self._stages: list[tuple[cdk.Stage, list[EndpointVerification], ShadowBake | None, bool]] = []
        self.regional: dict[str, RegionalArtifacts] = {}
        self.source_bucket = s3.Bucket(
            self,
            "ApprovedSource",
            versioned=True,  # CodePipeline's S3 source needs versions
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        self.approved_source = pipelines.CodePipelineSource.s3(
            self.source_bucket, SOURCE_KEY, trigger=cp_actions.S3Trigger.NONE, action_name="ApprovedManifest"
        )
        self.pipeline: pipelines.CodePipeline | None = None
        #: stage name -> the role of its Verify / Bake step (the stage account's verify role trusts it)
        self.step_roles: dict[str, iam.Role] = {}

    # --------------------------------------------------------------------------- stages

    def add_stage(
        self,
        stage: cdk.Stage,
        *,
        verify: Sequence[EndpointVerification] = (),
        bake: ShadowBake | None = None,
        record_live: bool = False,
        regional_artifacts: RegionalArtifacts | None = None,
    ) -> None:
        """Deploy ``stage`` after a trust check; verify it from its own account; write the result back.

        Args:
            stage: a ``cdk.Stage`` with an explicit account and region (the target of the bootstrap roles).
            verify: endpoints to invoke with the approved build's samples after the deploy. Default: none.
            bake: watch a shadow's comparison alarms after the deploy. Default: none.
            record_live: after this stage, record the manifest as live (the next promotion's shadow
                compares with it): set it on the stage that promotes to prod. Default: False.
            regional_artifacts: for a stage in another region than the pipeline's: your bucket there.
                Default: none (the stage must be in the pipeline's region).
        """
        raise_all(
            _stage_errors(stage, regional_artifacts, self.stack.region)
            + _order_errors(stage, bake, [(s, b, live) for s, _v, b, live in self._stages])
        )
        self._stages.append((stage, list(verify), bake, record_live))
        if regional_artifacts is not None:
            self.regional[stage.stage_name] = regional_artifacts
        if verify or bake:
            access.StageAccess(self, stage, verify=list(verify), bake=bake)

    def stage_manifest(self, stage_name: str, manifest: str, *, live: bool = False) -> str:
        """The manifest a stage synthesizes from: its region-specific one in the pipeline's synth step
        (context ``regional_manifests``, a folder the synth step writes), else ``manifest``. ``live``:
        the same for the manifest live in prod (the shadow deploy's production variant)."""
        folder = self.node.try_get_context("regional_manifests")
        own = Path(str(folder)) / regional_file(stage_name, live=live) if folder else None
        return str(own) if own is not None and own.is_file() else manifest

    def replicate_role_name(self, stage: cdk.Stage) -> str:
        """The pipeline account's role of a regional stage's Replicate step (the regional bucket grants it)."""
        return _role_name(f"{self.pipeline_name}-{stage.stage_name}-replicate")

    def verify_role_name(self, stage: cdk.Stage) -> str:
        """The stage account's role the Verify step assumes (a physical name: the trust names it)."""
        return _role_name(f"{self.pipeline_name}-{stage.stage_name}-verify")

    def step_role_name(self, stage: cdk.Stage) -> str:
        """The pipeline account's role of the stage's Verify step (the stage role trusts exactly it)."""
        return _role_name(f"{self.pipeline_name}-{stage.stage_name}-step")

    # --------------------------------------------------------------------------- build

    def build(self) -> pipelines.CodePipeline:
        """Define the pipeline, its stages and the trigger (call after the last ``add_stage``)."""
        synth = self._synth_step()
        self.pipeline = pipelines.CodePipeline(
            self,
            "Pipeline",
            synth=synth,
            pipeline_name=self.pipeline_name,
            cross_account_keys=True,
            enable_key_rotation=True,
            self_mutation=False,
        )
        for stage, verify, bake, record_live in self._stages:
            pre: list[pipelines.Step] = [self._trust_step(stage, synth)]
            if stage.stage_name in self.regional:
                pre.append(self._replicate_step(stage, synth))
            post = self._post_steps(stage, synth, verify, bake, record_live)
            self.pipeline.add_stage(stage, pre=pre, post=post or None)
        self.pipeline.build_pipeline()
        self._trigger()
        acknowledge_pipeline(self, artifact_bucket=self.artifact_bucket, artifact_prefix=self.artifact_prefix)
        access.acknowledge_source_bucket(self.source_bucket)
        access.acknowledge_packages(self)
        access.acknowledge_regional(self)
        access.acknowledge_cross_region(self)
        return self.pipeline

    def _synth_step(self) -> pipelines.CodeBuildStep:
        requests = {
            stage.stage_name: [[v.endpoint, v.deployed_name] for v in verify]
            for stage, verify, _, _ in self._stages
        }
        app = f' --app "{self.cdk_app}"' if self.cdk_app else ""
        live = f"{APPROVED_DIR}/live-manifest.json"
        regional = {
            name: {"location": r.uri, **({"kms_key_arn": r.kms_key_arn} if r.kms_key_arn else {})}
            for name, r in self.regional.items()
        }
        folder = f"{APPROVED_DIR}/regional"
        tools = ".venv/bin/python -m cdk_triton.pipeline.promotion_tools"
        return pipelines.CodeBuildStep(
            "Synth",
            input=self._source,
            additional_inputs={APPROVED_DIR: self.approved_source},
            install_commands=[
                "python3 -m venv .venv",
                f".venv/bin/pip install --extra-index-url {TORCH_CPU_INDEX} -r requirements.txt",
                ".venv/bin/pip install --no-deps -e .",
                "npm ci --no-audit --no-fund",
            ],
            commands=[
                f".venv/bin/python lambda/promotion/index.py gate --approved {APPROVED_DIR}",
                f'LIVE=""; if [ -f {live} ]; then LIVE="-c live_manifest=$PWD/{live}"; fi',
                f'{tools} regional --manifest {APPROVED_DIR}/manifest.json --out {folder} --regional "$PROMOTION_REGIONAL"',
                f'PATH="$PWD/.venv/bin:$PATH" npx cdk synth{app} -c manifest=$PWD/{APPROVED_DIR}/manifest.json $LIVE '
                f"-c regional_manifests=$PWD/{folder}",
                f"{tools} checks --manifest {APPROVED_DIR}/manifest.json --regional-dir {folder} "
                f'--approved {APPROVED_DIR} --out cdk.out/{TOOLS_DIR} --requests "$PROMOTION_VERIFY"',
            ],
            env={
                "PROMOTION_VERIFY": json.dumps(requests, sort_keys=True, separators=(",", ":")),
                "PROMOTION_REGIONAL": json.dumps(regional, sort_keys=True, separators=(",", ":")),
                "PYTHONDONTWRITEBYTECODE": "1",
                "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
            },
            primary_output_directory="cdk.out",
            role_policy_statements=[
                iam.PolicyStatement(
                    actions=["sagemaker:DescribeModelPackage"],
                    resources=access.package_arns(self.stack, self.model_package_groups),
                )
            ],
        )

    def _tool_step(
        self,
        name: str,
        synth: pipelines.CodeBuildStep,
        commands: list[str],
        *,
        role: iam.IRole | None = None,
        statements: list[iam.PolicyStatement] | None = None,
        env: dict[str, str] | None = None,
        timeout: cdk.Duration | None = None,
    ) -> pipelines.CodeBuildStep:
        """A step running the tools the synth step left in ``cdk.out/promotion`` (boto3 only)."""
        return pipelines.CodeBuildStep(
            name,
            input=synth,
            install_commands=["python3 -m pip install --quiet boto3"],
            commands=[f"cd {TOOLS_DIR}", *commands],
            role=role,
            role_policy_statements=statements,
            env=env,
            timeout=timeout,
        )

    def _trust_step(self, stage: cdk.Stage, synth: pipelines.CodeBuildStep) -> pipelines.CodeBuildStep:
        deploy_role = bootstrap_role_arn(
            "deploy", account=str(stage.account), region=str(stage.region), qualifier=self.qualifier
        )
        return self._tool_step(
            "TrustCheck",
            synth,
            [f"python3 promotion.py assume --role-arn {deploy_role} > /dev/null"],
            statements=[iam.PolicyStatement(actions=["sts:AssumeRole"], resources=[deploy_role])],
        )

    def _replicate_step(self, stage: cdk.Stage, synth: pipelines.CodeBuildStep) -> pipelines.CodeBuildStep:
        """Copy the build to the stage's bucket in its region (the pipeline account's role, granted by it)."""
        target = self.regional[stage.stage_name]
        loc = ArtifactLocation.from_uri(target.uri)
        part = cdk.Aws.PARTITION
        kms = f" --kms-key-arn {target.kms_key_arn}" if target.kms_key_arn else ""
        statements = access.s3_read(
            self.artifact_bucket.bucket_arn,
            self.artifact_bucket.arn_for_objects(f"{self.artifact_prefix}*"),
            self.artifact_prefix,
        )
        statements += access.s3_read(
            f"arn:{part}:s3:::{loc.bucket}", f"arn:{part}:s3:::{loc.bucket}/{loc.prefix}*", loc.prefix
        )
        statements.append(
            iam.PolicyStatement(
                actions=["s3:PutObject"], resources=[f"arn:{part}:s3:::{loc.bucket}/{loc.prefix}*"]
            )
        )
        if self.artifact_key is not None:
            statements.append(
                iam.PolicyStatement(actions=["kms:Decrypt"], resources=[self.artifact_key.key_arn])
            )
        if target.kms_key_arn:
            statements.append(
                iam.PolicyStatement(
                    actions=["kms:GenerateDataKey", "kms:Decrypt"], resources=[target.kms_key_arn]
                )
            )
        role = iam.Role(
            self,
            f"{stage.stage_name}ReplicateRole",
            role_name=self.replicate_role_name(stage),
            assumed_by=iam.ServicePrincipal("codebuild.amazonaws.com"),
            description=f"cdk-triton: copy the approved build to {stage.stage_name}'s bucket in {stage.region}",
        )
        return self._tool_step(
            "Replicate",
            synth,
            [
                f"python3 promotion.py replicate --plan replicate-{stage.stage_name}.json "
                f"--target-region {stage.region}{kms}"
            ],
            role=role,
            statements=statements,
            timeout=cdk.Duration.hours(2),
        )

    def regional_bucket_policy(self, stage: cdk.Stage) -> dict[str, object]:
        """The statements to add to YOUR regional bucket's policy: the Replicate step writes, the stage reads."""
        target = ArtifactLocation.from_uri(self.regional[stage.stage_name].uri)
        replicate = f"arn:aws:iam::{self.stack.account}:role/{self.replicate_role_name(stage)}"
        return access.regional_bucket_policy(target, replicate, f"arn:aws:iam::{stage.account}:root")

    def _post_steps(
        self,
        stage: cdk.Stage,
        synth: pipelines.CodeBuildStep,
        verify: list[EndpointVerification],
        bake: ShadowBake | None,
        record_live: bool,
    ) -> list[pipelines.Step]:
        name = stage.stage_name
        verify_role = f"arn:{cdk.Aws.PARTITION}:iam::{stage.account}:role/{self.verify_role_name(stage)}"
        assume = f'CREDS="$(python3 promotion.py assume --role-arn {verify_role})" && eval "$CREDS"'
        checks = _check_commands(name, verify, bake)
        if not checks and not record_live:
            return []
        write = f"python3 promotion.py write-back --approved approved --stage {name}"
        passed = "shadow-passed" if bake is not None and not verify else "passed"
        failed = "shadow-failed" if bake is not None and not verify else "failed"
        commands = []
        if checks:
            commands.append(
                f"if ( {assume} && {' && '.join(checks)} ); then {write} --result {passed}; "
                f"else {write} --result {failed}; exit 1; fi"
            )
        statements = [
            iam.PolicyStatement(
                actions=["sagemaker:DescribeModelPackage", "sagemaker:UpdateModelPackage"],
                resources=access.package_arns(self.stack, self.model_package_groups),
            )
        ]
        if checks:
            statements.append(iam.PolicyStatement(actions=["sts:AssumeRole"], resources=[verify_role]))
        if record_live:
            commands.append(
                f"python3 -c \"import boto3; boto3.client('s3').upload_file('approved/manifest.json', "
                f"'{self.source_bucket.bucket_name}', '{LIVE_KEY}', ExtraArgs={{'ServerSideEncryption': 'AES256'}})\""
            )
            statements.append(
                iam.PolicyStatement(
                    actions=["s3:PutObject"], resources=[self.source_bucket.arn_for_objects(LIVE_KEY)]
                )
            )
        role = iam.Role(
            self,
            f"{name}StepRole",
            role_name=self.step_role_name(stage),
            assumed_by=iam.ServicePrincipal("codebuild.amazonaws.com"),
            description=f"cdk-triton: verify, bake and write back the promotion to {name}",
        )
        timeout = cdk.Duration.minutes(int(bake.bake_time.to_minutes()) + 60) if bake else None
        step = self._tool_step(
            "Verify" if verify else "Bake",
            synth,
            commands,
            role=role,
            statements=statements,
            env={"AWS_REGION": str(stage.region)},
            timeout=timeout,
        )
        self.step_roles[name] = role
        return [step]

    def _trigger(self) -> None:
        """The EventBridge rule on approvals and the function that starts the pipeline (exact grants)."""
        log_group = logs.LogGroup(
            self,
            "TriggerLogs",
            retention=logs.RetentionDays.ONE_YEAR,
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        role = iam.Role(
            self,
            "TriggerRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="cdk-triton: start the promotion pipeline on an approval",
        )
        statements = self._trigger_statements(log_group)
        policy = iam.ManagedPolicy(self, "TriggerPolicy", statements=statements, roles=[role])
        self.trigger_role = role
        self.trigger_function = lambda_.Function(
            self,
            "Trigger",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_asset(str(HANDLER_DIR), exclude=["__pycache__", "*.pyc"]),
            role=role,
            timeout=cdk.Duration.minutes(2),
            memory_size=256,
            log_group=log_group,
            reserved_concurrent_executions=1,  # one approval at a time: no two copies race to the source key
            environment={
                "SOURCE_BUCKET": self.source_bucket.bucket_name,
                "SOURCE_KEY": SOURCE_KEY,
                "PIPELINE_NAME": self.pipeline_name,
                "MODEL_PACKAGE_GROUPS": ",".join(self.model_package_groups),
            },
            description="cdk-triton: start the promotion pipeline on the approval of a model package version",
        )
        self.trigger_function.node.add_dependency(policy)
        self.rule = events.Rule(
            self,
            "OnApproval",
            description="cdk-triton: a model package version of the promoted groups became Approved",
            event_pattern=events.EventPattern(
                source=["aws.sagemaker"],
                detail_type=[EVENT_DETAIL_TYPE],
                detail={
                    "ModelApprovalStatus": ["Approved"],
                    "ModelPackageGroupName": self.model_package_groups,
                },
            ),
            targets=[targets.LambdaFunction(self.trigger_function, retry_attempts=2)],
        )
        access.acknowledge_trigger(self, log_group)

    def _trigger_statements(self, log_group: logs.LogGroup) -> list[iam.PolicyStatement]:
        """Exactly what the trigger calls: the registry, the registered manifest, the source keys, the start."""
        assert self.pipeline is not None
        statements = [
            iam.PolicyStatement(
                actions=["sagemaker:DescribeModelPackage"],
                resources=access.package_arns(self.stack, self.model_package_groups),
            ),
            iam.PolicyStatement(
                actions=["s3:GetObject"],
                resources=[self.artifact_bucket.arn_for_objects(f"{self.artifact_prefix}*")],
            ),
            # GetObject answers HeadObject; ListBucket makes a missing source key a 404, not a 403
            iam.PolicyStatement(
                actions=["s3:GetObject", "s3:PutObject"],
                resources=[self.source_bucket.arn_for_objects(k) for k in (SOURCE_KEY, LIVE_KEY)],
            ),
            iam.PolicyStatement(
                actions=["s3:ListBucket"],
                resources=[self.source_bucket.bucket_arn],
                conditions={"StringEquals": {"s3:prefix": [SOURCE_KEY, LIVE_KEY]}},
            ),
            iam.PolicyStatement(
                actions=["codepipeline:StartPipelineExecution"],
                resources=[self.pipeline.pipeline.pipeline_arn],
            ),
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[f"{log_group.log_group_arn}"],
            ),
        ]
        if self.artifact_key is not None:
            statements.append(
                iam.PolicyStatement(actions=["kms:Decrypt"], resources=[self.artifact_key.key_arn])
            )
        return statements

    # --------------------------------------------------------------------------- policies

    def artifact_bucket_policy(self, accounts: Sequence[str]) -> dict[str, object]:
        """The statements to add to YOUR artifact bucket's policy so the stage accounts read the build.

        The stage's SageMaker models and verification read the artifacts and samples under the prefix.
        """
        raise_all(
            account_id_problems("accounts", list(accounts), path=self.node.path, skip=cdk.Token.is_unresolved)
        )
        return access.bucket_read_policy(self.artifact_bucket.bucket_name, self.artifact_prefix, accounts)

    def artifact_key_policy(self, accounts: Sequence[str]) -> dict[str, object]:
        """The statement to add to YOUR artifact key's policy (only through S3, only to decrypt)."""
        raise_all(
            account_id_problems("accounts", list(accounts), path=self.node.path, skip=cdk.Token.is_unresolved)
        )
        return access.key_read_statement(accounts)


def _stage_errors(
    stage: cdk.Stage, regional_artifacts: RegionalArtifacts | None, here: str
) -> list[TritonValidationError]:
    """A promotion stage needs a literal account and region, and its own bucket in another region."""
    errors: list[TritonValidationError] = []
    for prop, value in (("account", stage.account), ("region", stage.region)):
        if not value or cdk.Token.is_unresolved(value):
            errors.append(
                TritonValidationError(
                    "PromotionStageEnvMissing",
                    prop=f"stage.{prop}",
                    value=value,
                    problem="is not a literal: the pipeline assumes the target's bootstrap roles by name",
                    allowed="an account id / region name (from context in the example)",
                    fix=f"cdk.Stage(..., env=cdk.Environment(account=..., region=...)) for {stage.stage_name}",
                    path=stage.node.path,
                )
            )
    if stage.account and not cdk.Token.is_unresolved(stage.account):
        errors += account_id_problems("stage.account", stage.account, path=stage.node.path)
    there = stage.region
    if regional_artifacts is not None:
        try:
            regional_artifacts.uri  # noqa: B018 - validates the URI
        except TritonValidationError as exc:
            errors.append(exc.at(stage.node.path))
    if not errors and not cdk.Token.is_unresolved(here) and there != here and regional_artifacts is None:
        errors.append(
            TritonValidationError(
                "PromotionStageInAnotherRegion",
                prop="stage.region",
                value=there,
                problem=f"differs from the pipeline's region {here}: SageMaker reads model data only from a "
                "bucket in the model's region, and the registered build lies in the pipeline's",
                allowed=here,
                fix="pass regional_artifacts=RegionalArtifacts(location='s3://<your bucket in "
                f"{there}>/<prefix>'): the pipeline copies the build there and synthesizes the stage "
                "from a region-specific manifest",
                path=stage.node.path,
            )
        )
    return errors


def _order_errors(
    stage: cdk.Stage, bake: ShadowBake | None, before: list[tuple[cdk.Stage, ShadowBake | None, bool]]
) -> list[TritonValidationError]:
    """The stage order: a shadow bake judges the build beside what prod serves, before prod is promoted;
    a stage with ``bake`` added after the stage that records the manifest live (``record_live``, the
    prod stage) would bake what prod already serves (``PromotionStageOrder``). Stages without a bake
    (staging, verify-only) may come anywhere, and none is required."""
    live = [s.stage_name for s, _b, rec in before if rec]
    if bake is None or not live:
        return []
    return [
        TritonValidationError(
            "PromotionStageOrder",
            prop="add_stage(bake=...)",
            value=stage.stage_name,
            problem=f"bakes a shadow after stage '{live[0]}', which promotes to prod (record_live=True): the "
            "bake would judge a build prod already serves",
            allowed="shadow/bake stages before the stage they shadow: add_stage(staging?) -> add_stage(shadow, "
            "bake=...) -> add_stage(prod, record_live=True)",
            fix=f"call add_stage for '{stage.stage_name}' before '{live[0]}'",
            path=stage.node.path,
        )
    ]


def _check_commands(stage: str, verify: list[EndpointVerification], bake: ShadowBake | None) -> list[str]:
    """The commands a stage's Verify / Bake step runs with the stage account's role."""
    checks = [f"python3 verify.py --spec {check_file(stage, i)}" for i in range(len(verify))]
    if bake is not None:
        alarms = " ".join(f"--alarm {a}" for a in bake.alarm_names)
        minutes = int(bake.bake_time.to_minutes())
        checks.append(
            f"python3 promotion.py bake --endpoint-name {bake.endpoint_name} "
            f"--shadow-variant {bake.shadow_variant} {alarms} --minutes {minutes}"
        )
    return checks


def _role_name(raw: str) -> str:
    name = re.sub(r"[^A-Za-z0-9+=,.@_-]", "-", raw)
    return name if len(name) <= 64 else f"{name[:55]}-{hashlib.sha256(raw.encode()).hexdigest()[:8]}"


def _check_groups(groups: Sequence[str], path: str) -> None:
    """At least one group, each a name ``cdk-triton register`` accepts (the one rule of config/registry)."""
    if not groups:
        raise TritonValidationError(
            "InvalidModelPackageGroupName",
            prop="model_package_groups",
            value=[],
            problem="names no model package group: nothing could be approved",
            allowed="the groups cdk-triton register writes to, e.g. ['classifier']",
            fix="pass the group names of your endpoints, e.g. model_package_groups=['classifier']",
            path=path,
        )
    errs = [
        err
        for i, g in enumerate(groups)
        if (err := check_model_package_group_name(g, prop=f"model_package_groups[{i}]", path=path))
    ]
    if errs:
        raise_all(errs)
