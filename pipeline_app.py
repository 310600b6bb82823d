#!/usr/bin/env python3
"""The example's GitOps pipeline: build the models, deploy staging, verify, approve, deploy prod, verify.

    npx cdk synth --app ".venv/bin/python pipeline_app.py"          # offline
    npx cdk deploy --app ".venv/bin/python pipeline_app.py" CdkTritonPipeline   # once; it then updates itself

The pipeline (cdk_triton.pipeline.TritonPipeline) builds TensorRT plans on the endpoints' GPU model,
the CPU formats in its synth step, and deploys the example stack (app.TritonExampleStack) to a
``staging`` stage and, behind a manual approval, a ``prod`` stage; each stage's endpoints are
invoked with the build's recorded samples before the pipeline promotes further. After the build uploaded
and the app synthesized, the synth step registers the build in the SageMaker Model Registry
(``cdk-triton register``): a version in the model package groups ``classifier`` and ``multi``, which
this stack defines (named after the endpoints: promotion_app.py's TritonPromotionPipeline promotes
the versions a reviewer approves there).

Context: ``source`` (default ``s3://cdk-triton-example-source-<account>/cdk-triton/source.zip``; an S3
source keeps the synth offline), ``codecommit_repository`` (use a CodeCommit repository instead),
``artifact_location`` (default: models.yaml's), ``artifact_key_arn`` (default none), ``manifest``
(default build/out/manifest.json, what the synth step's build writes), ``region`` / ``account``
(default env-agnostic), ``nag`` (default true), ``fan_out_min_models`` (default 100: from that many
declared models the build fans out on Step Functions; ``-c fan_out_min_models=2`` shows the fan-out with
the example's models).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aws_cdk as cdk
import yaml
from aws_cdk import aws_codecommit as codecommit
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import pipelines
from constructs import Construct

from app import DEFAULT_MANIFEST, TritonExampleStack, _flag
from cdk_triton.config.manifest import ArtifactLocation, read_manifest
from cdk_triton.constructs import TritonModelPackageGroup
from cdk_triton.constructs.verification import recorded_samples
from cdk_triton.pipeline import EndpointVerification, FanOutOptions, RegistryOptions, TritonPipeline

ROOT = Path(__file__).resolve().parent
DECLARATION = "build/models.yaml"
APP = ".venv/bin/python pipeline_app.py"
#: the endpoints registered per build, each in a group of its own name (promotion_app.GROUPS promotes them)
REGISTERED = ("classifier", "multi")


class ExampleStage(cdk.Stage):
    """One deployment of the example's endpoints (names prefixed by the stage name)."""

    def __init__(self, scope: Construct, construct_id: str, *, manifest: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.prefix = f"{construct_id.lower()}-"
        self.endpoints = TritonExampleStack(self, "Endpoints", manifest=manifest, endpoint_prefix=self.prefix)
        self.manifest = manifest

    def verifications(self) -> list[EndpointVerification]:
        """classifier and multi; the components endpoint too when the build defined it with samples (each
        check then names its component: ``<stage>-components-<model>``)."""
        keys = ["classifier", "multi"]
        if self.endpoints.components is not None and recorded_samples(
            read_manifest(self.manifest), "components"
        ):
            keys.append("components")
        return [EndpointVerification(endpoint=e, endpoint_name=f"{self.prefix}{e}") for e in keys]


class TritonPipelineStack(cdk.Stack):
    """The pipeline stack: the TritonPipeline with a staging and a prod stage."""

    def __init__(self, scope: Construct, construct_id: str, *, manifest: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        ctx = self.node.try_get_context
        declared = yaml.safe_load((ROOT / DECLARATION).read_text("utf-8"))
        loc = ArtifactLocation.from_uri(str(ctx("artifact_location") or declared["artifact_location"]))
        bucket = s3.Bucket.from_bucket_name(self, "Artifacts", loc.bucket.replace("ACCOUNT", self.account))
        key = (
            kms.Key.from_key_arn(self, "ArtifactKey", ctx("artifact_key_arn"))
            if ctx("artifact_key_arn")
            else None
        )
        groups = {
            ep: TritonModelPackageGroup(
                self,
                f"{ep.capitalize()}Registry",
                model_package_group_name=ep,
                description=f"cdk-triton example: the builds of the {ep} endpoint",
            )
            for ep in REGISTERED
        }
        pipeline = TritonPipeline(
            self,
            "Triton",
            source=self._source(),
            declaration=DECLARATION,
            manifest=manifest,
            root=ROOT,
            artifact_bucket=bucket,
            artifact_prefix=loc.prefix,
            artifact_key=key,
            cdk_app=APP,
            fan_out=FanOutOptions(min_models=int(ctx("fan_out_min_models")), models_per_shard=3)
            if ctx("fan_out_min_models")
            else None,
            registry=RegistryOptions(groups=groups),
        )
        env = (
            cdk.Environment(account=kwargs["env"].account, region=kwargs["env"].region)
            if kwargs.get("env")
            else None
        )
        staging = ExampleStage(self, "Staging", manifest=manifest, env=env)
        prod = ExampleStage(self, "Prod", manifest=manifest, env=env)
        pipeline.add_triton_stage(staging, verify=staging.verifications())
        pipeline.add_triton_stage(
            prod, approval="promote the verified staging build to prod", verify=prod.verifications()
        )
        pipeline.build()
        self.triton = pipeline
        self.stages = (staging, prod)

    def _source(self) -> pipelines.CodePipelineSource:
        ctx = self.node.try_get_context
        repo_name = ctx("codecommit_repository")
        if repo_name:
            repo = codecommit.Repository.from_repository_name(self, "Repository", str(repo_name))
            return pipelines.CodePipelineSource.code_commit(repo, "main")
        uri = str(ctx("source") or f"s3://cdk-triton-example-source-{self.account}/cdk-triton/source.zip")
        bucket_name, _, key = uri[5:].partition("/")
        bucket = s3.Bucket.from_bucket_name(self, "SourceBucket", bucket_name)
        return pipelines.CodePipelineSource.s3(bucket, key)


def build_pipeline_app(*, app: cdk.App | None = None, context: dict[str, Any] | None = None) -> cdk.App:
    """Define the pipeline app (``app.synth()`` writes the cloud assembly)."""
    app = app or cdk.App(context=context or {})
    ctx = app.node.try_get_context
    manifest = str(ctx("manifest") or DEFAULT_MANIFEST)
    if not Path(manifest).is_absolute():
        manifest = str(ROOT / manifest)
    region, account = ctx("region"), ctx("account")
    env = cdk.Environment(account=account, region=region) if region or account else None
    TritonPipelineStack(
        app,
        "CdkTritonPipeline",
        manifest=manifest,
        env=env,
        description="cdk-triton example: GitOps pipeline (build, staging, verify, approval, prod)",
    )
    if _flag(ctx("nag"), True):
        from cdk_nag import AwsSolutionsChecks

        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


if __name__ == "__main__":
    build_pipeline_app().synth()
