"""Deploy verification: a Lambda-backed custom resource that invokes the endpoint after every change.

The handler is ``lambda/verify/index.py`` (plain Python, boto3 only), shipped as a CDK asset on the
python3.12 runtime; the custom resource is a plain ``cdk.CustomResource`` whose service token is that
function (no Provider framework: no Node Lambdas, no AWS managed policies).

Lifecycle: the custom resource's construct id is ``Verify<hash>``, where the hash covers what is
verified (the Model's and EndpointConfig's resolved properties, so the model data URIs, image and
environment, instance type and count; the TargetModel map of an MME; the checks with their sample URIs
and tolerances; the deadline and warm-up). A change of any of them gives a new logical id, so every
verification is a Create; a wrong answer fails that Create and the rollback (like the later cleanup of
the previous resource) only sends Delete, which the handler always answers SUCCESS: the stack ends in
UPDATE_ROLLBACK_COMPLETE with the previous endpoint config serving. Nothing changed: same id, no call.

This module receives plain values and resources (like ``scaling.py``), never the endpoint.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct

from cdk_triton.config import layout, modes
from cdk_triton.config.manifest import Manifest, Sample
from cdk_triton.constructs import _nag
from cdk_triton.constructs import modes as mode_constructs
from cdk_triton.constructs._tokens import assume_role_document, is_token, pseudo, stack_info
from cdk_triton.constructs.artifacts import ModelArtifacts, split_s3_uri
from cdk_triton.constructs.async_inference import AsyncVerification
from cdk_triton.constructs.checks.verification import check_verification_spec
from cdk_triton.constructs.errors import located, validation_error
from cdk_triton.constructs.verification_sample import (
    INLINE_CHECKS_LIMIT,
    Selection,
    spec_document,
    write_spec,
)
from cdk_triton.errors import TritonValidationError, raise_all

__all__ = [
    "DEFAULT_VERIFICATION_DEADLINE",
    "HANDLER_DIR",
    "TritonVerification",
    "VerificationCheck",
    "derived_sample_uris",
    "recorded_checks",
    "recorded_samples",
    "verification_id",
]

#: The handler shipped as the function's asset.
#: lambda/verify: in a checkout through the symlink handlers/verify, in a wheel the copy setuptools made of it
HANDLER_DIR = (Path(__file__).parent / "handlers" / "verify").resolve()
DEFAULT_VERIFICATION_DEADLINE = cdk.Duration.minutes(10)
#: the packs whose rule wants a customer key on every log group
LOG_KEY_PACKS = ("HIPAA.Security", "NIST.800.53.R4", "NIST.800.53.R5", "PCI.DSS.321")
#: Lambda rules of the HIPAA / NIST / PCI packs that do not fit a custom-resource function, with why
LAMBDA_RULE_REASONS = {
    "LambdaConcurrency": "CloudFormation invokes it once per verification; reserved concurrency would take "
    "from the account's pool and can fail deploys in accounts at the minimum concurrency quota",
    "LambdaDLQ": "it answers every CloudFormation request itself (failures and timeouts included); "
    "a dead-letter queue would hold nothing to act on",
    "LambdaInsideVPC": "it calls only AWS APIs (SageMaker Runtime, S3, SSM, CloudWatch Logs) and receives "
    "no traffic; outside the VPC the stack needs no NAT gateway or interface endpoints",
}
LAMBDA_RULE_PACKS = {
    "LambdaConcurrency": ("HIPAA.Security", "NIST.800.53.R5"),
    "LambdaDLQ": ("HIPAA.Security", "NIST.800.53.R5"),
    "LambdaInsideVPC": ("HIPAA.Security", "NIST.800.53.R4", "NIST.800.53.R5", "PCI.DSS.321"),
}
LOG_KEY_REASON = (
    "the verification log holds verdicts only (model names, what differed, retries), never request or "
    "response payloads, and CloudWatch Logs encrypts it at rest; pass log_encryption_key for a customer key"
)
#: Seconds the Lambda gets beyond the deadline (the handler keeps 15 s of them to answer CloudFormation).
TIMEOUT_MARGIN_S = 60
#: Lambda's own limit.
LAMBDA_MAX_TIMEOUT_S = 900
MIN_DEADLINE_S = 30
MAX_DEADLINE_S = LAMBDA_MAX_TIMEOUT_S - TIMEOUT_MARGIN_S
#: The custom resource's type name in the template.
RESOURCE_TYPE = "Custom::TritonVerification"
_DEFAULT_ATOL, _DEFAULT_RTOL = 1e-5, 1e-4


@dataclass(frozen=True, kw_only=True, slots=True)
class VerificationCheck:
    """One model to invoke with its recorded request and to compare with its recorded response.

    Attributes:
        model: SME: the default model; MME and components: the logical name.
        request_s3_uri / response_s3_uri: ``s3://bucket/key`` of the KServe v2 request and response.
        atol / rtol: tolerance of numeric outputs (``|got - expected| <= atol + rtol * |expected|``).
            Default: 1e-5 / 1e-4.
    """

    model: str
    request_s3_uri: str
    response_s3_uri: str
    atol: float | None = None
    rtol: float | None = None

    def to_property(self) -> dict[str, Any]:
        """The ``Checks`` entry of the custom resource (the handler's spec)."""
        return {
            "Model": self.model,
            "Request": self.request_s3_uri,
            "Response": self.response_s3_uri,
            "Atol": str(self.atol if self.atol is not None else _DEFAULT_ATOL),
            "Rtol": str(self.rtol if self.rtol is not None else _DEFAULT_RTOL),
        }


# ---------------------------------------------------------------------------- samples


def derived_sample_uris(manifest: Manifest, sample: Sample) -> tuple[str, str] | None:
    """The sample's S3 URIs: recorded by ``cdk-triton build --upload``, else derived from the files
    beside the manifest (``config.layout.sample_s3_uris``, the builder's own rule)."""
    return layout.sample_s3_uris(manifest, sample)


def _check_of(scope: Construct, manifest: Manifest, model: str, sample: Sample) -> VerificationCheck:
    """The check of one recorded sample: its S3 URIs (recorded, else derived) and tolerances."""
    uris = derived_sample_uris(manifest, sample)
    if uris is None:
        manifest_dir = Path(manifest.path).parent if manifest.path else Path.cwd()
        raise validation_error(
            scope,
            "SampleFileMissing",
            prop="sample.request",
            value=str(manifest_dir / sample.request),
            problem="is recorded in the manifest without its S3 URIs and is not next to the manifest",
            allowed="a manifest whose sample files are next to it, or that records their S3 URIs",
            fix="run `cdk-triton build --upload` and synthesize with the manifest it wrote",
        )
    request_uri, response_uri = uris
    return VerificationCheck(
        model=model,
        request_s3_uri=request_uri,
        response_s3_uri=response_uri,
        atol=sample.atol,
        rtol=sample.rtol,
    )


def recorded_samples(manifest: Manifest, endpoint: str) -> dict[str, Sample]:
    """The samples with a recorded response of ``endpoint``, by the name the handler checks.

    SME: the default model's sample (the endpoint's, else the model's); MME and components: every
    archive with one (its own, else its top-level model's), by logical name. Empty when the build
    recorded none.
    """
    entry = manifest.endpoint(endpoint)
    found: dict[str, Sample | None] = {}
    if entry.per_model_archives:
        for name, tm in sorted(entry.target_models.items()):
            model = manifest.models.get(tm.model)
            found[name] = tm.sample or (model.sample if model else None)
    else:
        default = entry.default_model or entry.name
        model = manifest.models.get(default)
        found[default] = entry.sample or (model.sample if model else None)
    return {k: v for k, v in found.items() if v is not None and v.response is not None}


def recorded_checks(scope: Construct, artifacts: ModelArtifacts) -> list[VerificationCheck]:
    """The checks the build recorded for ``artifacts`` (``ModelArtifacts.from_manifest`` only).

    Raises NoRecordedSamples when there are none (other artifacts: pass ``checks=`` explicitly).
    """
    try:
        recorded = artifacts.recorded_manifest()
    except TritonValidationError as err:
        raise located(scope, err) from None
    if recorded is None:
        raise validation_error(
            scope,
            "NoRecordedSamples",
            prop="checks",
            value=None,
            problem="is needed: artifacts not read from a build manifest record no samples",
            allowed="ModelArtifacts.from_manifest(...) with samples, or checks=[VerificationCheck(...)]",
            fix="pass checks=[VerificationCheck(model=..., request_s3_uri=..., response_s3_uri=...)]",
        )
    manifest, key = recorded
    try:
        samples = recorded_samples(manifest, key)
    except TritonValidationError as err:
        raise located(scope, err) from None
    checks = [_check_of(scope, manifest, name, sample) for name, sample in samples.items()]
    if not checks:
        raise validation_error(
            scope,
            "NoRecordedSamples",
            prop="artifacts",
            value=key,
            problem="has no model with a recorded sample request and response in the manifest",
            allowed="an endpoint whose default model (SME) or TargetModels (MME) have a sample",
            fix="declare a sample input for the model and rebuild, or pass checks=[VerificationCheck(...)]",
        )
    return checks


# ---------------------------------------------------------------------------- identity


def verification_id(scope: Construct, *, verified: Sequence[cdk.CfnResource], spec: dict[str, Any]) -> str:
    """``Verify<hash>``: the hash of the verified resources' resolved properties and the spec.

    Same inputs, same id (no call on a deploy that changes nothing); any change, a new logical id.
    """
    stack = stack_info(scope).stack
    material = {
        "resources": [stack.resolve(r._cfn_properties) for r in verified],
        "spec": spec,
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    return "Verify" + hashlib.sha256(text.encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------- construct


def handler_spec(
    *,
    endpoint_name: str,
    mode: str,
    checks: Sequence[VerificationCheck],
    deadline_s: int,
    target_model_parameter_path: str | None,
    components: Mapping[str, str] | None,
    warm_up: Sequence[str],
    parallelism: int | None,
    async_verification: AsyncVerification | None = None,
) -> dict[str, Any]:
    """The custom resource's properties: the spec ``lambda/verify`` reads (every value a string or list)."""
    spec: dict[str, Any] = {
        "EndpointName": endpoint_name,
        # Not read by the handler: it routes by the keys present (TargetModelParameterPath, Components,
        # ComponentNameParameterPath; lambda/verify routing_of). Kept so deployed templates stay as they were.
        "Mode": mode,
        "Checks": [c.to_property() for c in checks],
        "DeadlineSeconds": str(deadline_s),
    }
    spec.update(mode_constructs.behaviour(modes.get(mode)).verification_spec(target_model_parameter_path))
    if components:
        spec["Components"] = dict(sorted(components.items()))
    if warm_up:
        spec["WarmUp"] = list(warm_up)
    if parallelism is not None:
        spec["Parallelism"] = str(parallelism)
    if async_verification is not None:
        spec.update(async_verification.spec())
    return spec


class VerifiedEndpoint(Protocol):
    """What the deploy verification reads of an endpoint this app defines (a ``Construct``)."""

    @property
    def resource(self) -> cdk.CfnResource: ...

    @property
    def endpoint_name(self) -> str: ...

    @property
    def endpoint_arn(self) -> str: ...


def define_verification(endpoint: VerifiedEndpoint, **options: Any) -> TritonVerification:
    """The deploy verification of ``endpoint`` (its child "Verification"), given its resource, name and
    ARN; ``options``: the other ``TritonVerification`` props (``mode`` and ``checks`` required)."""
    return TritonVerification(
        cast(Construct, endpoint),
        "Verification",
        endpoint=endpoint.resource,
        endpoint_name=endpoint.endpoint_name,
        endpoint_arn=endpoint.endpoint_arn,
        **options,
    )


class TritonVerification(Construct):
    """Defines the deploy verification of an endpoint: a Lambda function and a custom resource.

    The function (python3.12, ``lambda/verify``) gets exactly: ``sagemaker:InvokeEndpoint`` on the
    endpoint, ``s3:GetObject`` on the samples prefix (``kms:Decrypt`` on the artifact key when
    encrypted), ``ssm:GetParametersByPath`` on the TargetModel map path (MME), and
    ``logs:CreateLogStream`` / ``logs:PutLogEvents`` on its own log group; on an asynchronous endpoint
    (``async_verification``) ``sagemaker:InvokeEndpointAsync`` instead of ``InvokeEndpoint``, ``s3:PutObject``
    on its input prefix, ``s3:GetObject`` on its output and failure prefixes and ``kms:Decrypt`` on the
    results key (``kms:GenerateDataKey`` on the artifact key when encrypted). The custom resource
    (``Custom::TritonVerification``, id ``Verify<hash>``) depends on the endpoint. Usually defined by
    ``TritonEndpoint.add_verification()``.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        endpoint: cdk.CfnResource,
        endpoint_name: str,
        endpoint_arn: str,
        mode: str,
        checks: Sequence[VerificationCheck],
        verified: Sequence[cdk.CfnResource] = (),
        target_model_parameter_path: str | None = None,
        artifacts_key_arn: str | None = None,
        deadline: cdk.Duration | None = None,
        warm_up: Sequence[str] = (),
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        log_encryption_key: kms.IKey | None = None,
        selection: Selection | None = None,
        parallelism: int | None = None,
        components: Mapping[str, str] | None = None,
        component_arns: Sequence[str] = (),
        async_verification: AsyncVerification | None = None,
    ) -> None:
        """Define the verification.

        Args:
            endpoint: the ``AWS::SageMaker::Endpoint`` (the custom resource depends on it).
            endpoint_name: its name (the ``EndpointName`` the handler invokes).
            endpoint_arn: its ARN (the ``sagemaker:InvokeEndpoint`` grant).
            mode: ``SingleModel``, ``MultiModel`` or ``InferenceComponents``.
            checks: the models to invoke and compare (at least one).
            verified: resources whose properties decide when to verify again (Model, EndpointConfig,
                TargetModel map). Default: none (then only the spec does).
            target_model_parameter_path: MME: the SSM path of the TargetModel map. Required for MME.
            artifacts_key_arn: the KMS key of the artifacts (and samples). Default: not encrypted.
            deadline: how long to retry while models load. Default: 10 minutes (30 s..14 min).
            warm_up: MME logical names invoked once before the checks. Default: none.
            log_retention: retention of the function's log group. Default: one month.
            components: InferenceComponents: logical name -> InferenceComponentName (the handler's
                ``Components``; each check's model is invoked by its component). Default: none.
            component_arns: the components' ARNs (``sagemaker:DescribeInferenceComponent``: the handler
                skips and reports a component scaled in to zero copies). Default: none.
            log_encryption_key: a customer KMS key for the function's log group (its key policy must
                allow CloudWatch Logs). Default: none; the log holds the verdicts (model names, differences),
                never payloads, and the HIPAA / NIST / PCI log-group-key rule is acknowledged with that reason.
            selection: the sample of a large MME (``verification_sample.select``). Default: every check.
            parallelism: checks the function runs at once (1..64). Default: the handler's 8.
            async_verification: an asynchronous endpoint: the handler puts each sample under the
                input prefix, invokes ``InvokeEndpointAsync`` and waits for the output (or failure)
                object; the role gets exactly that instead of ``sagemaker:InvokeEndpoint``.
                Default: none (a real-time endpoint).
        """
        super().__init__(scope, construct_id)
        self.async_verification = async_verification
        deadline_s = int((deadline or DEFAULT_VERIFICATION_DEADLINE).to_seconds())
        self._check_props(checks, deadline_s, mode, target_model_parameter_path)
        spec_errs = check_verification_spec(checks, warm_up=warm_up, artifacts_key_arn=artifacts_key_arn)
        if spec_errs:
            raise_all([e.at(self.node.path) for e in spec_errs])
        self.checks = list(checks)
        spec = handler_spec(
            endpoint_name=endpoint_name,
            mode=mode,
            checks=checks,
            deadline_s=deadline_s,
            target_model_parameter_path=target_model_parameter_path,
            components=components,
            warm_up=warm_up,
            parallelism=parallelism,
            async_verification=async_verification,
        )
        self.selection = selection
        self.checks_object_arn = self._store_checks(spec, selection)
        self._define_log_group(log_retention, log_encryption_key)
        self._define_role(
            endpoint_arn=endpoint_arn,
            target_model_parameter_path=mode_constructs.behaviour(
                modes.get(mode)
            ).verification_parameter_path(target_model_parameter_path),
            artifacts_key_arn=artifacts_key_arn,
            component_arns=component_arns,
        )
        self._define_function(deadline_s, endpoint_name)
        self._define_custom_resource(verified, spec, endpoint)

    def _define_function(self, deadline_s: int, endpoint_name: str) -> None:
        """The Lambda function (``lambda/verify``), created after its policy (the first Create runs with
        the grants in place)."""
        from aws_cdk import aws_lambda as lambda_  # ~0.1 s to import (with s3, ec2...): only when used

        self.function = lambda_.Function(
            self,
            "Handler",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_asset(str(HANDLER_DIR), exclude=["__pycache__", "*.pyc"]),
            role=iam.Role.from_role_arn(self, "RoleRef", self.role.attr_arn, mutable=False),
            timeout=cdk.Duration.seconds(min(deadline_s + TIMEOUT_MARGIN_S, LAMBDA_MAX_TIMEOUT_S)),
            memory_size=256,
            log_group=self.log_group,
            description=f"cdk-triton: deploy verification of endpoint {endpoint_name}",
        )
        self.function.node.add_dependency(self.policy)  # the first Create runs with the grants in place

    def _define_custom_resource(
        self, verified: Sequence[cdk.CfnResource], spec: dict[str, Any], endpoint: cdk.CfnResource
    ) -> None:
        """The custom resource ``Verify<hash>`` (``verification_id``), depending on the endpoint, and the
        acknowledgments of the construct's findings."""
        self.verification_id = verification_id(self, verified=verified, spec=spec)
        self.resource = cdk.CustomResource(
            self,
            self.verification_id,
            service_token=self.function.function_arn,
            resource_type=RESOURCE_TYPE,
            properties=spec,
        )
        self.resource.node.add_dependency(endpoint)
        _nag.acknowledge_all(self, self._acknowledgments())

    def _define_log_group(self, retention: logs.RetentionDays, key: kms.IKey | None) -> None:
        """The function's log group, kept on delete; without a customer key the packs' rule is acknowledged."""
        self.log_group = logs.LogGroup(
            self, "LogGroup", retention=retention, removal_policy=cdk.RemovalPolicy.RETAIN, encryption_key=key
        )
        if key is None:
            for pack in LOG_KEY_PACKS:
                cdk.Validations.of(self.log_group).acknowledge(
                    cdk.Acknowledgment(
                        id=f"{pack}::{pack}-CloudWatchLogGroupEncrypted", reason=LOG_KEY_REASON
                    )
                )

    def _store_checks(self, spec: dict[str, Any], selection: Selection | None) -> str | None:
        """A large or sampled spec: its checks as an S3 asset (the properties carry URI and sha256)."""
        if selection is None or (len(self.checks) <= INLINE_CHECKS_LIMIT and selection.complete):
            return None
        from aws_cdk import aws_s3_assets as s3_assets  # only when a spec goes to S3

        body = spec_document(spec.pop("Checks"), selection)
        self.checks_asset = s3_assets.Asset(self, "Checks", path=str(write_spec(body)))
        spec["ChecksUri"] = self.checks_asset.s3_object_url
        spec["ChecksSha256"] = hashlib.sha256(body).hexdigest()
        spec["ChecksSampled"] = str(len(selection.sampled))
        spec["ChecksTotal"] = str(selection.total)
        return f"arn:{pseudo().partition}:s3:::{self.checks_asset.s3_bucket_name}/{self.checks_asset.s3_object_key}"

    def _check_props(
        self, checks: Sequence[VerificationCheck], deadline_s: int, mode: str, path: str | None
    ) -> None:
        if not checks:
            raise validation_error(
                self,
                "NoRecordedSamples",
                prop="checks",
                value=[],
                problem="is empty: there is nothing to verify",
                allowed="at least one VerificationCheck",
                fix="record samples in the build, or pass checks=[VerificationCheck(...)]",
            )
        if not MIN_DEADLINE_S <= deadline_s <= MAX_DEADLINE_S:
            raise validation_error(
                self,
                "InvalidVerificationDeadline",
                prop="deadline",
                value=f"{deadline_s} s",
                problem="does not leave the Lambda function time to answer CloudFormation",
                allowed=f"{MIN_DEADLINE_S}..{MAX_DEADLINE_S} s (Lambda's 900 s limit less a "
                f"{TIMEOUT_MARGIN_S} s margin)",
                fix="pass deadline=cdk.Duration.minutes(10) or less",
            )
        if (
            "TargetModelParameterPath" in mode_constructs.behaviour(modes.get(mode)).verification_spec(path)
            and not path
        ):  # pragma: no cover - TritonEndpoint always publishes the map
            raise ValueError("a multi-model verification needs target_model_parameter_path")

    def _define_role(
        self,
        *,
        endpoint_arn: str,
        target_model_parameter_path: str | None,
        artifacts_key_arn: str | None,
        component_arns: Sequence[str] = (),
    ) -> None:
        """The function's role and its customer managed policy: exactly the statements it needs."""
        self.role = iam.CfnRole(
            self,
            "Role",
            assume_role_policy_document=assume_role_document("lambda.amazonaws.com"),
            description="cdk-triton: deploy verification function",
        )
        self.policy_statements = policy_statements(
            self,
            endpoint_arn=endpoint_arn,
            sample_prefixes=sample_prefixes(self.checks),
            log_group_arn=self.log_group.log_group_arn,
            target_model_parameter_path=target_model_parameter_path,
            artifacts_key_arn=artifacts_key_arn,
            checks_object_arn=self.checks_object_arn,
        )
        if self.async_verification is not None:  # no InvokeEndpoint: an async endpoint refuses it
            self.policy_statements = [s for s in self.policy_statements if s["Sid"] != "InvokeEndpoint"]
            self.policy_statements[1:1] = self.async_verification.statements(endpoint_arn, artifacts_key_arn)
        if component_arns:
            self.policy_statements.append(
                {
                    "Sid": "DescribeComponents",
                    "Effect": "Allow",
                    "Action": "sagemaker:DescribeInferenceComponent",
                    "Resource": list(component_arns),
                }
            )
        self.policy = iam.CfnManagedPolicy(
            self,
            "Policy",
            roles=[self.role.ref],
            description="cdk-triton: least-privilege grants of a deploy verification function",
            policy_document={"Version": "2012-10-17", "Statement": self.policy_statements},
        )

    def _acknowledgments(self) -> list[cdk.Acknowledgment]:
        """IAM5 for each samples-prefix wildcard, L1 for the pinned runtime, the custom-resource Lambda rules."""
        acks = [
            cdk.Acknowledgment(id=f"{pack}::{pack}-{rule}", reason=LAMBDA_RULE_REASONS[rule])
            for rule, packs in LAMBDA_RULE_PACKS.items()
            for pack in packs
        ] + [
            cdk.Acknowledgment(
                id="AwsSolutions::AwsSolutions-L1",
                reason="the handler is tested on python3.12 (boto3 only); the runtime is pinned so a "
                "new Lambda runtime never changes a verification without a test",
            )
        ]
        for prefix in self.async_verification.wildcards() if self.async_verification else ():
            acks.append(
                cdk.Acknowledgment(
                    id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{_nag.flatten_string(self, prefix)}]",
                    reason="an asynchronous request's payload, result and failure are objects SageMaker and "
                    "the verification name per request under the endpoint's async input/output/failure "
                    "prefixes (the layout's keys); no other object of the bucket",
                )
            )
        for prefix in sample_prefixes(self.checks):
            if prefix.endswith("*"):
                flat = _nag.flatten_string(self, prefix)
                acks.append(
                    cdk.Acknowledgment(
                        id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{flat}]",
                        reason="the recorded samples are content-addressed objects under one samples "
                        "prefix of the build (one statement, not two objects per model)",
                    )
                )
        return acks


def sample_prefixes(checks: Sequence[VerificationCheck]) -> list[str]:
    """The S3 object ARNs the samples are read from: ``<bucket>/<...>samples/*`` per bucket and prefix.

    A sample outside a ``samples/`` folder is granted as that exact object.
    """
    arns: set[str] = set()
    for check in checks:
        for uri in (check.request_s3_uri, check.response_s3_uri):
            bucket, key = split_s3_uri(uri)
            head, sep, _ = key.rpartition(f"{layout.SAMPLES_FOLDER}/")
            resource = f"{head}{sep}*" if sep and not is_token(key) else key
            arns.add(f"arn:{pseudo().partition}:s3:::{bucket}/{resource}")
    return sorted(arns)


def policy_statements(
    scope: Construct,
    *,
    endpoint_arn: str,
    sample_prefixes: Sequence[str],
    log_group_arn: str,
    target_model_parameter_path: str | None,
    artifacts_key_arn: str | None,
    checks_object_arn: str | None = None,
) -> list[dict[str, Any]]:
    """The verification function's statements (CloudFormation JSON, tokens unresolved)."""
    statements: list[dict[str, Any]] = [
        {
            "Sid": "InvokeEndpoint",
            "Effect": "Allow",
            "Action": "sagemaker:InvokeEndpoint",
            "Resource": endpoint_arn,
        },
        {
            "Sid": "ReadSamples",
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": sample_prefixes[0] if len(sample_prefixes) == 1 else list(sample_prefixes),
        },
    ]
    if checks_object_arn:
        statements.append(
            {"Sid": "ReadChecks", "Effect": "Allow", "Action": "s3:GetObject", "Resource": checks_object_arn}
        )
    if artifacts_key_arn:
        statements.append(
            {
                "Sid": "DecryptSamples",
                "Effect": "Allow",
                "Action": "kms:Decrypt",
                "Resource": artifacts_key_arn,
            }
        )
    if target_model_parameter_path:
        info = stack_info(scope)
        statements.append(
            {
                "Sid": "ReadTargetModelMap",
                "Effect": "Allow",
                "Action": "ssm:GetParametersByPath",
                "Resource": f"arn:{pseudo().partition}:ssm:{info.region}:{info.account}:parameter"
                f"{target_model_parameter_path}",
            }
        )
    statements.append(
        {
            "Sid": "WriteOwnLogs",
            "Effect": "Allow",
            "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": log_group_arn,
        }
    )
    return statements
