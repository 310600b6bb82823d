#!/usr/bin/env python3
"""The cdk-triton example app: two Triton endpoints built from the build stage's manifest.

* ``classifier``: a single-model endpoint serving the image-classifier ensemble on ml.g5.xlarge,
  scaled on GPUUtilization (60 % per GPU, scale-in cooldown 600 s, scale-out 200 s), with Triton's
  metrics published to CloudWatch.
* ``multi``: a GPU multi-model endpoint on ml.g5.xlarge scaled on InvocationsPerInstance.
* ``components`` (when the manifest has it): an inference-components endpoint on the same instance type,
  the classifier and BERT as two components, each with its own compute reservation and copies that scale
  in to zero (and back on the first request), and the endpoint's instances down to zero with them.
* A dashboard for both and alarms (5XX rate, p99 latency, GPU memory) notifying an encrypted SNS topic.
* A deploy verification of each endpoint whose manifest records samples: a custom resource invokes it
  with the build's sample requests after every change and fails (rolls back) the update on a wrong answer.

Passes cdk-nag AwsSolutions, HIPAA.Security, NIST.800.53.R4/R5 and PCI.DSS.321; the one finding it
acknowledges itself (with its reason) is the metrics log group's default encryption (``LOG_GROUP_ACKS``).

Synthesizes offline: ``npx cdk synth`` (env-agnostic) or ``npx cdk synth -c region=us-east-1``.
Context: ``manifest`` (default build/out/manifest.json), ``region``/``account`` (default
env-agnostic), ``instance_type`` (default: each endpoint's models.yaml ``instance_types``, which the
manifest records: ml.g5.xlarge), ``endpoint_prefix`` (default none),
``inference_ami_version`` (default none: the host decision; 24.09 on the default ml.g5 / ml.g4dn host
driver 470 is unconfirmed, so synth warns and recommends pinning, e.g.
``-c inference_ami_version=al2-ami-sagemaker-inference-gpu-2``),
``nag`` (default true: cdk-nag AwsSolutions fails the synth on unacknowledged findings),
``custom_resources`` (default true; false leaves out the deploy verification, the app's only custom
resources, for deploy targets such as moto that never run custom-resource Lambdas).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aws_cdk as cdk
from constructs import Construct

from cdk_triton.config.manifest import read_manifest
from cdk_triton.constructs import (
    ModelArtifacts,
    TritonAlarms,
    TritonDashboard,
    TritonEndpoint,
    TritonMetrics,
)

if TYPE_CHECKING:  # imported where used: an app pays only for the constructs its stacks define
    from cdk_triton.constructs import TritonComponentsEndpoint

ROOT = Path(__file__).resolve().parent
DEFAULT_MANIFEST = "build/out/manifest.json"
#: The instance type build/models.yaml declares for the example's endpoints (their default here comes from
#: the manifest, which records it; promotion_app.py names it for its stages).
DEFAULT_INSTANCE_TYPE = "ml.g5.xlarge"
#: The packs' rule for a log group without a customer KMS key, acknowledged on the metrics log group.
LOG_GROUP_ACKS = tuple(
    f"{pack}::{pack}-CloudWatchLogGroupEncrypted"
    for pack in ("HIPAA.Security", "NIST.800.53.R4", "NIST.800.53.R5", "PCI.DSS.321")
)
LOG_GROUP_REASON = (
    "the log group holds only the Triton CloudWatch agent's own logs (no request or model data) and "
    "CloudWatch Logs encrypts it at rest; pass TritonMetrics(encryption_key=...) for a customer key"
)


class TritonExampleStack(cdk.Stack):
    """The example's endpoints, scaling, dashboard and alarms."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        manifest: str,
        instance_type: str | None = None,
        endpoint_prefix: str = "",
        verify: bool = True,
        inference_ami_version: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        classifier = TritonEndpoint(
            self,
            "Classifier",
            artifacts=ModelArtifacts.from_manifest(manifest, "classifier"),
            instance_type=instance_type,
            endpoint_name=f"{endpoint_prefix}classifier",
            inference_ami_version=inference_ami_version,
            metrics=TritonMetrics(),
        )
        if classifier.model.metrics_log_group is not None:
            cdk.Validations.of(classifier.model.metrics_log_group).acknowledge(
                *(cdk.Acknowledgment(id=rule, reason=LOG_GROUP_REASON) for rule in LOG_GROUP_ACKS)
            )
        classifier.auto_scale(min_capacity=1, max_capacity=4).scale_on_gpu_utilization(
            target_percent=60,
            scale_in_cooldown=cdk.Duration.seconds(600),
            scale_out_cooldown=cdk.Duration.seconds(200),
        )
        multi = TritonEndpoint(
            self,
            "Multi",
            artifacts=ModelArtifacts.from_manifest(manifest, "multi"),
            instance_type=instance_type,
            endpoint_name=f"{endpoint_prefix}multi",
            inference_ami_version=inference_ami_version,
        )
        multi.auto_scale(min_capacity=1, max_capacity=4).scale_on_invocations_per_instance(
            invocations_per_minute=1000,
        )
        recorded = read_manifest(manifest)
        self.asynchronous = self._variant_endpoint(
            manifest, recorded, "classifier_async", "ClassifierAsync", endpoint_prefix, inference_ami_version,
            instance_type=instance_type,
        )  # fmt: skip
        self.pooled = self._variant_endpoint(  # its instance pools from the manifest (models.yaml)
            manifest, recorded, "classifier_pools", "ClassifierPools", endpoint_prefix, inference_ami_version
        )
        TritonDashboard(self, "Dashboard", endpoints=[classifier, multi])
        alarms = TritonAlarms(self, "ClassifierAlarms", endpoint=classifier, create_topic=True)
        TritonAlarms(self, "MultiAlarms", endpoint=multi, topic=alarms.topic)
        for cid, ep in (("ClassifierEndpointName", classifier), ("MultiEndpointName", multi)):
            # GetAtt, not the name we passed: stand-ins such as moto may name the endpoint themselves.
            cdk.CfnOutput(self, cid, value=ep.attr_endpoint_name)
        self.components = (
            self._components(manifest, recorded, instance_type, endpoint_prefix, inference_ami_version)
            if "components" in recorded.endpoints
            else None
        )
        if verify:  # a custom resource per endpoint whose build recorded samples
            from cdk_triton.constructs.verification import recorded_samples

            verified: list[tuple[str, TritonEndpoint | None]] = [
                ("classifier", classifier),
                ("multi", multi),
                ("classifier_async", self.asynchronous),
                ("classifier_pools", self.pooled),
            ]
            for key, endpoint in verified:
                if endpoint is not None and recorded_samples(recorded, key):
                    endpoint.add_verification()
            if self.components is not None and recorded_samples(recorded, "components"):
                self.components.add_verification()  # each component invoked by its InferenceComponentName
        self.classifier = classifier
        self.multi = multi

    def _variant_endpoint(
        self,
        manifest: str,
        recorded: Any,
        key: str,
        cid: str,
        endpoint_prefix: str,
        inference_ami_version: str | None,
        *,
        instance_type: str | None = None,
    ) -> TritonEndpoint | None:
        """A SingleModel endpoint of the classifier built as ``key`` (the async one: its ``async:`` block; the
        pooled one: its ``instance_pools:``), when the manifest has it; its name as an output."""
        if key not in recorded.endpoints:
            return None
        ep = TritonEndpoint(
            self,
            cid,
            artifacts=ModelArtifacts.from_manifest(manifest, key),
            instance_type=instance_type,
            endpoint_name=f"{endpoint_prefix}{key.replace('_', '-')}",
            inference_ami_version=inference_ami_version,
        )
        cdk.CfnOutput(self, f"{cid}EndpointName", value=ep.attr_endpoint_name)
        return ep

    def _components(
        self,
        manifest: str,
        recorded: Any,
        instance_type: str | None,
        endpoint_prefix: str,
        inference_ami_version: str | None,
    ) -> TritonComponentsEndpoint:
        """The ``components`` endpoint: every component may scale in to zero copies (models.yaml's bounds,
        else 0..2), so the endpoint's instances go down to zero with them."""
        from cdk_triton.constructs import ComponentOptions, TritonComponentsEndpoint

        entry = recorded.endpoint("components")
        to_zero = {
            name: ComponentOptions(min_copies=0, max_copies=max(c.max_copies or 2, c.copies))
            for name, c in entry.components.items()
            if c.min_copies is None
        }
        components = TritonComponentsEndpoint(
            self,
            "Components",
            artifacts=ModelArtifacts.from_manifest(manifest, "components"),
            instance_type=instance_type,
            endpoint_name=f"{endpoint_prefix}components",
            inference_ami_version=inference_ami_version,
            components=to_zero,
        )
        cdk.CfnOutput(self, "ComponentsEndpointName", value=components.attr_endpoint_name)
        return components


def _flag(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() not in ("false", "0", "no", "off")


def build_app(
    manifest_path: str | os.PathLike[str] | None = None,
    *,
    app: cdk.App | None = None,
    context: dict[str, Any] | None = None,
) -> cdk.App:
    """Define the example app (``app.synth()`` writes the cloud assembly).

    Args:
        manifest_path: the build manifest. Default: context ``manifest``, else build/out/manifest.json.
        app: an existing App. Default: a new one.
        context: context values for a new App (``region``, ``account``, ``nag``, ...).
    """
    app = app or cdk.App(context=context or {})
    ctx = app.node.try_get_context
    manifest = str(manifest_path or ctx("manifest") or DEFAULT_MANIFEST)
    if not Path(manifest).is_absolute() and not Path(manifest).exists():
        manifest = str(ROOT / manifest)
    region = ctx("region")
    account = ctx("account")
    env = cdk.Environment(account=account, region=region) if region or account else None
    TritonExampleStack(
        app,
        "CdkTritonExample",
        manifest=manifest,
        instance_type=ctx("instance_type") or None,  # default: the manifest's (models.yaml)
        endpoint_prefix=str(ctx("endpoint_prefix") or ""),
        verify=_flag(ctx("custom_resources"), True),
        inference_ami_version=ctx("inference_ami_version") or None,
        env=env,
        description="cdk-triton example: Triton endpoints on SageMaker (classifier SME, multi MME)",
    )
    if _flag(ctx("nag"), True):
        from cdk_nag import AwsSolutionsChecks

        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


if __name__ == "__main__":
    build_app().synth()
