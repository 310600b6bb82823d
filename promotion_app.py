#!/usr/bin/env python3
"""The example's registry-gated promotion: an approval in the Model Registry deploys that exact build.

    npx cdk synth --app ".venv/bin/python promotion_app.py"        # offline, placeholder accounts
    npx cdk deploy --app ".venv/bin/python promotion_app.py" CdkTritonPromotion   # once, in the pipeline account

``cdk-triton register`` makes a version per build in the groups ``classifier`` and ``multi``: the build
pipeline (pipeline_app.py: ``TritonPipeline(registry=RegistryOptions(groups=...))``, which defines the two
groups) runs it in its Synth step after each build; approving a version starts this pipeline
(cdk_triton.pipeline.TritonPromotionPipeline) with that version's manifest:

1. ``Staging`` (account ``staging_account``): deploy both endpoints, verify them from the staging account
   with the build's samples, write the result back to the version.
2. ``ProdShadow`` (account ``prod_account``): the live classifier keeps serving, the approved classifier
   takes a copy of its traffic as the shadow variant; the MME stays as it is live (a shadow on an MME is
   refused). The Bake step watches the shadow-vs-production alarms over ``bake_minutes``.
3. ``Prod``: the approved build becomes the production variant of both endpoints; verified, written back
   and recorded as live (the next promotion's shadow compares with it).

The first promotion has no live manifest: ``ProdShadow`` then deploys the approved build directly and the
Bake step passes at once (no shadow to compare).

Context: ``manifest`` (the approved manifest; default build/out/manifest.json so the synth works offline),
``live_manifest`` (the manifest live in prod; default none), ``pipeline_account`` / ``staging_account`` /
``prod_account`` (default the placeholders 111111111111 / 222222222222 / 333333333333), ``region``
(default us-east-1: the pipeline, the registry, the artifact bucket and staging), ``prod_region`` (default
``region``; another region copies the build to ``prod_artifact_location``, default
``s3://cdk-triton-example-artifacts-<prod account>-<prod region>/cdk-triton/``, with
``prod_artifact_key_arn``), ``artifact_location``
(default: models.yaml's), ``artifact_key_arn`` (default none), ``source`` (the repository as an S3 zip;
default ``s3://cdk-triton-example-source-<pipeline account>/cdk-triton/source.zip``), ``bake_minutes``
(default 60), ``nag`` (default true).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import yaml
from aws_cdk import aws_codepipeline_actions as cp_actions
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import pipelines
from constructs import Construct

from app import DEFAULT_INSTANCE_TYPE, DEFAULT_MANIFEST, _flag
from cdk_triton.config.manifest import ArtifactLocation, read_manifest
from cdk_triton.constructs import (
    ModelArtifacts,
    ShadowComparison,
    ShadowVariant,
    TritonEndpoint,
    TritonModel,
)
from cdk_triton.constructs.verification import recorded_samples
from cdk_triton.pipeline import EndpointVerification, RegionalArtifacts, ShadowBake, TritonPromotionPipeline

ROOT = Path(__file__).resolve().parent
DECLARATION = "build/models.yaml"
APP = ".venv/bin/python promotion_app.py"
GROUPS = ("classifier", "multi")
PLACEHOLDERS = {
    "pipeline_account": "111111111111",
    "staging_account": "222222222222",
    "prod_account": "333333333333",
}
#: one CloudFormation stack per stage account; the shadow and the promote deploy update the same stack
ENDPOINTS_STACK = "cdk-triton-endpoints"


class PromotedEndpoints(cdk.Stack):
    """The two endpoints of a stage; with ``live`` the classifier serves it and shadows ``manifest``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        manifest: str,
        prefix: str,
        live: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        classifier_name = f"{prefix}classifier"
        if live is not None:
            serving = TritonModel(
                self, "LiveClassifier", artifacts=ModelArtifacts.from_manifest(live, "classifier")
            )
            candidate = TritonModel(
                self, "CandidateClassifier", artifacts=ModelArtifacts.from_manifest(manifest, "classifier")
            )
            self.classifier = TritonEndpoint(
                self,
                "Classifier",
                model=serving,
                instance_type=DEFAULT_INSTANCE_TYPE,
                endpoint_name=classifier_name,
                shadow=ShadowVariant(model=candidate, sampling_percentage=100),
            )
        else:
            self.classifier = TritonEndpoint(
                self,
                "Classifier",
                artifacts=ModelArtifacts.from_manifest(manifest, "classifier"),
                instance_type=DEFAULT_INSTANCE_TYPE,
                endpoint_name=classifier_name,
            )
        self.multi = TritonEndpoint(  # an MME takes no shadow: in the shadow deploy it stays as it is live
            self,
            "Multi",
            artifacts=ModelArtifacts.from_manifest(live or manifest, "multi"),
            instance_type=DEFAULT_INSTANCE_TYPE,
            endpoint_name=f"{prefix}multi",
        )
        self.comparison = ShadowComparison(
            self,
            "ShadowComparison",
            endpoint_name=classifier_name,
            production_variant=self.classifier.variant_name,
        )
        recorded = read_manifest(live or manifest)
        for key, ep in (("classifier", self.classifier), ("multi", self.multi)):
            if live is None and recorded_samples(recorded, key):
                ep.add_verification()  # the in-stack check, in the stage account, on every deploy


class PromotionStage(cdk.Stage):
    """One deployment of the endpoints in a stage account."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        manifest: str,
        prefix: str,
        live: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.prefix = prefix
        self.endpoints = PromotedEndpoints(
            self, "Endpoints", manifest=manifest, prefix=prefix, live=live, stack_name=ENDPOINTS_STACK
        )

    def verifications(self) -> list[EndpointVerification]:
        return [EndpointVerification(endpoint=e, endpoint_name=f"{self.prefix}{e}") for e in GROUPS]


class PromotionPipelineStack(cdk.Stack):
    """The promotion pipeline with Staging, ProdShadow (bake) and Prod."""

    def __init__(
        self, scope: Construct, construct_id: str, *, manifest: str, live: str | None, **kwargs: Any
    ) -> None:
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
        promotion = TritonPromotionPipeline(
            self,
            "Promotion",
            source=self._source(),
            model_package_groups=GROUPS,
            artifact_bucket=bucket,
            artifact_prefix=loc.prefix,
            artifact_key=key,
            cdk_app=APP,
        )
        region = self.region
        staging_env = cdk.Environment(account=_account(ctx, "staging_account"), region=region)
        prod_region = str(ctx("prod_region") or region)
        prod_env = cdk.Environment(account=_account(ctx, "prod_account"), region=prod_region)
        regional = None
        if prod_region != region:  # prod reads the build from its own bucket in its region
            location = ctx("prod_artifact_location") or (
                f"s3://cdk-triton-example-artifacts-{prod_env.account}-{prod_region}/cdk-triton/"
            )
            regional = RegionalArtifacts(location=str(location), kms_key_arn=ctx("prod_artifact_key_arn"))
        pick = promotion.stage_manifest
        staging = PromotionStage(self, "Staging", manifest=manifest, prefix="staging-", env=staging_env)
        shadow = PromotionStage(
            self,
            "ProdShadow",
            manifest=pick("ProdShadow", manifest),
            prefix="prod-",
            live=pick("ProdShadow", live, live=True) if live else None,
            env=prod_env,
        )
        prod = PromotionStage(self, "Prod", manifest=pick("Prod", manifest), prefix="prod-", env=prod_env)
        promotion.add_stage(staging, verify=staging.verifications())
        bake = ShadowBake(
            endpoint_name="prod-classifier",
            alarm_names=shadow.endpoints.comparison.alarm_names,
            bake_time=cdk.Duration.minutes(int(ctx("bake_minutes") or 60)),
        )
        promotion.add_stage(shadow, bake=bake, regional_artifacts=regional)
        promotion.add_stage(prod, verify=prod.verifications(), record_live=True, regional_artifacts=regional)
        promotion.build()
        accounts = sorted({staging_env.account, prod_env.account})  # type: ignore[type-var]
        cdk.CfnOutput(
            self,
            "ArtifactBucketPolicy",
            value=json.dumps(promotion.artifact_bucket_policy(accounts)),
            description="add these statements to the artifact bucket's policy (the stage accounts read the build)",
        )
        if key is not None:
            cdk.CfnOutput(
                self,
                "ArtifactKeyPolicy",
                value=json.dumps(promotion.artifact_key_policy(accounts)),
                description="add this statement to the artifact key's policy",
            )
        if regional is not None:
            cdk.CfnOutput(
                self,
                "ProdBucketPolicy",
                value=json.dumps(promotion.regional_bucket_policy(prod)),
                description="add these statements to prod's regional bucket policy (Replicate writes, prod reads)",
            )
        self.promotion = promotion
        self.stages = (staging, shadow, prod)

    def _source(self) -> pipelines.CodePipelineSource:
        uri = str(
            self.node.try_get_context("source")
            or f"s3://cdk-triton-example-source-{self.account}/cdk-triton/source.zip"
        )
        bucket_name, _, key = uri[5:].partition("/")
        bucket = s3.Bucket.from_bucket_name(self, "SourceBucket", bucket_name)
        # the repository never starts the promotion pipeline: only an approval does
        return pipelines.CodePipelineSource.s3(bucket, key, trigger=cp_actions.S3Trigger.NONE)


def _account(ctx: Any, name: str) -> str:
    return str(ctx(name) or PLACEHOLDERS[name])


def _path(value: str) -> str:
    return value if Path(value).is_absolute() else str(ROOT / value)


def build_promotion_app(*, app: cdk.App | None = None, context: dict[str, Any] | None = None) -> cdk.App:
    """Define the promotion app (``app.synth()`` writes the cloud assembly)."""
    app = app or cdk.App(context=context or {})
    ctx = app.node.try_get_context
    manifest = _path(str(ctx("manifest") or DEFAULT_MANIFEST))
    live = _path(str(ctx("live_manifest"))) if ctx("live_manifest") else None
    env = cdk.Environment(account=_account(ctx, "pipeline_account"), region=str(ctx("region") or "us-east-1"))
    PromotionPipelineStack(
        app,
        "CdkTritonPromotion",
        manifest=manifest,
        live=live,
        env=env,
        description="cdk-triton example: registry-gated promotion (staging, prod shadow, prod)",
    )
    if _flag(ctx("nag"), True):
        from cdk_nag import AwsSolutionsChecks

        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


if __name__ == "__main__":
    build_promotion_app().synth()
