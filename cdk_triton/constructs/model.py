"""The SageMaker Model of a Triton server: image, artifacts, server options and a least-privilege role."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from cdk_triton.config import tables
from cdk_triton.config.server_options import ENV_FIELDS, ServerOptions, check_raw_environment
from cdk_triton.config.server_options.release import PING_MODE
from cdk_triton.config.tables import DEFAULT_TRITON_VERSION
from cdk_triton.constructs import _nag
from cdk_triton.constructs._tokens import assume_role_document, props, pseudo, remember_stack_info
from cdk_triton.constructs.artifacts import ArtifactsConfig, ModelArtifacts
from cdk_triton.constructs.checks import models as model_checks
from cdk_triton.constructs.checks.environment import check_environment_values
from cdk_triton.constructs.checks.names import check_sagemaker_model_name
from cdk_triton.constructs.errors import catalogued
from cdk_triton.constructs.image import ImageConfig, TritonImage
from cdk_triton.errors import TritonValidationError, raise_all

if TYPE_CHECKING:
    from aws_cdk import aws_ec2 as ec2

#: Placeholder used to validate ServerOptions when the log group name is a token.
_LOG_GROUP_PLACEHOLDER = "/cdk-triton/placeholder"


@dataclass(frozen=True, kw_only=True, slots=True)
class TritonMetrics:
    """Publish Triton's own Prometheus metrics to CloudWatch (AWS-built images 23.07+).

    Sets SAGEMAKER_TRITON_ALLOW_METRICS, _PUBLISH_METRICS_TO_CLOUDWATCH, _CLOUDWATCH_LOG_GROUP,
    _CLOUDWATCH_METRIC_NAMESPACE and _METRICS_PORT, creates the log group and grants exactly what
    publishing needs (logs on that group, cloudwatch:PutMetricData limited to the namespace).

    Attributes:
        namespace: the CloudWatch namespace. Default: ``Triton/<endpoint name>``.
        log_retention: retention of the metrics log group. Default: one month.
        encryption_key: KMS key of the log group (its key policy must allow CloudWatch Logs).
            Default: CloudWatch Logs' own encryption.
        metrics_port: Triton's metrics port. Default: 8002.
    """

    namespace: str | None = None
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH
    encryption_key: kms.IKey | None = None
    metrics_port: int | None = None


class _DefersAcknowledgments:
    """Marks a scope (TritonEndpoint) that acknowledges its model's cdk-nag findings with its own.

    One acknowledgment entry per endpoint instead of two (see ``_nag.acknowledge_all``).
    """


class TritonModel(Construct):
    """Defines a SageMaker Model (``AWS::SageMaker::Model``) running NVIDIA Triton Inference Server.

    Also defines, unless supplied, the execution role, and always a customer managed policy holding
    exactly the grants the model needs: read on the artifact prefix (one statement), KMS decrypt
    when the artifacts are encrypted, ECR pull on the image repository, and, when Triton metrics
    are published, the metrics log group and ``cloudwatch:PutMetricData`` with a namespace condition.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        artifacts: ModelArtifacts,
        image: TritonImage | None = None,
        role: iam.IRole | None = None,
        server_options: ServerOptions | None = None,
        environment: Mapping[str, str] | None = None,
        metrics: TritonMetrics | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        network_isolation: bool = False,
        model_name: str | None = None,
        endpoint_name: str | None = None,
    ) -> None:
        """Define the model.

        Args:
            artifacts: where the model repository is (``ModelArtifacts.from_manifest(...)``).
            image: the Triton image. Default: ``TritonImage.for_version`` of the manifest's Triton
                version, else ``DEFAULT_TRITON_VERSION``.
            role: the execution role; it gets the same grants. Default: a new role.
            server_options: Triton settings rendered to the container environment. Default:
                the container defaults; multi_model and the default model follow the artifacts.
            environment: extra container variables; unknown ``SAGEMAKER_TRITON_*`` names and the
                ones ServerOptions manages are rejected. Default: none.
            metrics: publish Triton's metrics to CloudWatch. Default: not published.
            vpc: run the model in this VPC. Default: no VPC.
            vpc_subnets: subnets in ``vpc``. Default: the VPC's private subnets.
            security_groups: security groups in ``vpc``. Default: a new one allowing all outbound.
            network_isolation: no outbound network from the container. Default: False.
            model_name: the physical model name. Default: generated by CloudFormation.
            endpoint_name: grant the endpoint's log group ``/aws/sagemaker/Endpoints/<name>``
                (``TritonEndpoint`` passes its name). Default: no endpoint log grant.
        """
        super().__init__(scope, construct_id)
        self._stack = remember_stack_info(self, scope)
        self._artifacts = artifacts.bind(self)
        art = self._artifacts
        triton_version = (
            image.triton_version if image is not None else (art.triton_version or DEFAULT_TRITON_VERSION)
        )
        self._image_source = image or TritonImage.for_version(triton_version or DEFAULT_TRITON_VERSION)
        self.triton_version: str | None = self._image_source.triton_version

        opts, errs = _resolve_server_options(art, server_options)
        errs += _check_props(
            opts,
            metrics=metrics,
            triton_version=self.triton_version,
            network_isolation=network_isolation,
            network_without_vpc=(
                [sg.node.path for sg in security_groups or []] or "vpc_subnets"
                if vpc is None and (security_groups or vpc_subnets is not None)
                else None
            ),
        )
        raw_env = dict(environment or {})
        errs += _check_environment(raw_env)
        errs += check_environment_values(raw_env)
        errs += check_sagemaker_model_name(model_name)
        errs += self._image_source.validate()
        self.metrics_namespace: str | None = None
        if metrics is not None:
            self.metrics_namespace = metrics.namespace or f"Triton/{cdk.Names.unique_id(self)}"
            opts = _with_metrics(opts, metrics, self.metrics_namespace)
        errs += opts.validate()
        errs += self._check_release_agreement(art, opts, raw_env)
        if errs:  # the checks' and config-layer errors carry no path: locate them here (a jsii call)
            path = self.node.path
            raise_all([e if e.path else e.at(path) for e in errs])

        self.environment: dict[str, str] = self._define_environment(opts, metrics, raw_env)
        self._image: ImageConfig = self._image_source.bind(self)
        self._statements: list[dict[str, Any]] = []
        self._acks: list[cdk.Acknowledgment] = []
        self._grant_artifacts(art)
        self._grant_image()
        if self.metrics_log_group is not None:
            self._grant_metrics(self.metrics_log_group.attr_arn, self.metrics_namespace or "")
        if endpoint_name is not None:
            self._grant_endpoint_logs(endpoint_name)
        vpc_config = self._vpc_config(vpc, vpc_subnets, security_groups)
        self._define_role(role)
        self._define_model(art, vpc_config, network_isolation=network_isolation, model_name=model_name)
        if not isinstance(scope, _DefersAcknowledgments):
            self._flush_acks()

    # ------------------------------------------------------------------ steps
    def _check_release_agreement(
        self, art: ArtifactsConfig, opts: ServerOptions, raw_env: dict[str, str]
    ) -> list[TritonValidationError]:
        """The built models against the image's release and the server's response cache as that
        release's serve script passes it on; warnings (also each setting without effect there) annotated."""
        errs, warnings = model_checks.check_release_agreement(
            self.triton_version,
            art.built_models,
            tool_versions=art.tool_versions,
            built_for=art.triton_version,
        )
        effective, notes = opts.for_release(self.triton_version, ping_mode_inherited=PING_MODE in raw_env)
        warnings += [("cdk-triton:SettingHasNoEffect", note.message) for note in notes]
        cache = effective.response_cache_byte_size is not None or any(
            a.startswith("--cache-config") for a in effective.additional_args
        )
        errs += model_checks.check_response_cache(art.built_models, cache_configured=cache)
        for warning_id, message in warnings:
            cdk.Annotations.of(self).add_warning_v2(warning_id, message)
        return errs

    def _define_environment(
        self, opts: ServerOptions, metrics: TritonMetrics | None, raw_env: dict[str, str]
    ) -> dict[str, str]:
        """The metrics log group (when published) and the container environment."""
        self.metrics_log_group: logs.CfnLogGroup | None = None
        log_group_token: str | None = None
        if metrics is not None:
            self.metrics_log_group = logs.CfnLogGroup(
                self,
                "TritonMetricsLogGroup",
                retention_in_days=_RETENTION_DAYS.get(metrics.log_retention.name),
                kms_key_id=metrics.encryption_key.key_arn if metrics.encryption_key else None,
            )
            self.metrics_log_group.apply_removal_policy(cdk.RemovalPolicy.RETAIN)
            log_group_token = self.metrics_log_group.ref
            opts = dataclasses.replace(opts, cloudwatch_log_group=None)
        self.server_options: ServerOptions = opts
        env = opts.to_environment()
        if log_group_token is not None:
            env["SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH"] = "true"
            env["SAGEMAKER_TRITON_CLOUDWATCH_LOG_GROUP"] = log_group_token
        env.update(raw_env)
        return env

    def _vpc_config(
        self,
        vpc: ec2.IVpc | None,
        vpc_subnets: ec2.SubnetSelection | None,
        security_groups: Sequence[ec2.ISecurityGroup] | None,
    ) -> dict[str, Any] | None:
        """The model's VPC config, a security group unless supplied, and the network-interface grant."""
        vpc_config = None
        self.security_groups: list[ec2.ISecurityGroup] = []
        if vpc is not None:
            groups = list(security_groups or [])
            if not groups:
                from aws_cdk import aws_ec2 as ec2

                groups = [
                    ec2.SecurityGroup(
                        self,
                        "SecurityGroup",
                        vpc=vpc,
                        allow_all_outbound=True,
                        description="cdk-triton model: outbound to S3, ECR and CloudWatch",
                    )
                ]
            self.security_groups = groups
            subnets = _subnet_ids(vpc, vpc_subnets)
            vpc_config = props(security_group_ids=[g.security_group_id for g in groups], subnets=subnets)
            self._add(
                "VpcNetworkInterfaces",
                [
                    "ec2:CreateNetworkInterface",
                    "ec2:CreateNetworkInterfacePermission",
                    "ec2:DeleteNetworkInterface",
                    "ec2:DeleteNetworkInterfacePermission",
                    "ec2:DescribeDhcpOptions",
                    "ec2:DescribeNetworkInterfaces",
                    "ec2:DescribeSecurityGroups",
                    "ec2:DescribeSubnets",
                    "ec2:DescribeVpcs",
                ],
                ["*"],
                reason="SageMaker attaches the model to the VPC through network interfaces; "
                "ec2:Describe* and CreateNetworkInterface have no resource-level scoping here",
            )

        return vpc_config

    def _define_role(self, role: iam.IRole | None) -> None:
        # The role and its customer managed policy (L1: one jsii call each, not one per statement).
        self._role_supplied = role
        if role is None:
            self._cfn_role: iam.CfnRole | None = iam.CfnRole(
                self,
                "ExecutionRole",
                assume_role_policy_document=assume_role_document("sagemaker.amazonaws.com"),
                description="cdk-triton execution role of a Triton model",
            )
            self.role_arn: str = self._cfn_role.attr_arn
            role_name = self._cfn_role.ref
        else:
            self._cfn_role = None
            self.role_arn = role.role_arn
            role_name = role.role_name
        self.execution_policy = iam.CfnManagedPolicy(
            self,
            "ExecutionPolicy",
            roles=[role_name],
            description="cdk-triton: least-privilege grants of a Triton model",
            policy_document=self._document(),
        )
        self._role_ref: iam.IRole | None = role

    def _define_model(
        self,
        art: ArtifactsConfig,
        vpc_config: dict[str, Any] | None,
        *,
        network_isolation: bool,
        model_name: str | None,
    ) -> None:
        container: dict[str, Any] = {
            "image": self._image.image_uri,
            "environment": self.environment,
            "mode": art.mode,
        }
        if art.is_multi_model or art.compression == "Gzip":
            container["model_data_url"] = art.s3_url
        else:
            container["model_data_source"] = props(
                s3_data_source=props(s3_uri=art.s3_url, s3_data_type="S3Prefix", compression_type="None")
            )
        self.resource = sagemaker.CfnModel(
            self,
            "Resource",
            execution_role_arn=self.role_arn,
            primary_container=props(**container),
            enable_network_isolation=True if network_isolation else None,
            vpc_config=vpc_config,
            model_name=model_name,
        )
        self.resource.add_resource_dependency(self.execution_policy)  # starts only once it may pull
        self.model_name: str = self.resource.attr_model_name
        # node.default_child is self.resource: CDK finds the child with id "Resource" by itself.

    # ------------------------------------------------------------------ properties
    @property
    def artifacts(self) -> ArtifactsConfig:
        """The bound artifacts (mode, location, default model, target models, GPU architectures)."""
        return self._artifacts

    @property
    def image(self) -> ImageConfig:
        """The bound image."""
        return self._image

    @property
    def is_multi_model(self) -> bool:
        return self._artifacts.is_multi_model

    @property
    def role(self) -> iam.IRole:
        """The execution role (the supplied one, or a reference to the one this construct defines)."""
        if self._role_ref is None:
            self._role_ref = iam.Role.from_role_arn(self, "ExecutionRoleRef", self.role_arn)
        return self._role_ref

    @property
    def policy_statements(self) -> list[dict[str, Any]]:
        """The statements of the execution policy, as CloudFormation JSON (tokens unresolved)."""
        return list(self._statements)

    # ------------------------------------------------------------------ grants
    def _document(self) -> dict[str, Any]:
        return {"Version": "2012-10-17", "Statement": list(self._statements)}

    def _add(
        self,
        sid: str,
        actions: list[str],
        resources: list[str],
        *,
        reason: str | None = None,
        conditions: dict[str, Any] | None = None,
    ) -> None:
        statement: dict[str, Any] = {
            "Sid": sid,
            "Effect": "Allow",
            "Action": actions[0] if len(actions) == 1 else sorted(actions),
            "Resource": resources[0] if len(resources) == 1 else resources,
        }
        if conditions:
            statement["Condition"] = conditions
        self._statements.append(statement)
        if reason:
            for res in resources:
                flat = _nag.flatten_string(self, res)
                if "*" in flat:
                    self._acks.append(
                        cdk.Acknowledgment(
                            id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{flat}]", reason=reason
                        )
                    )
        if hasattr(self, "execution_policy"):
            self.execution_policy.policy_document = self._document()

    def _flush_acks(
        self, *, scope: Construct | None = None, extra: Sequence[cdk.Acknowledgment] = ()
    ) -> None:
        """Acknowledge the pending cdk-nag findings on ``scope`` (default: this model) in one call."""
        acks = [*self._acks, *extra]
        if acks:
            _nag.acknowledge_all(scope or self, acks)
            self._acks = []

    def _grant_artifacts(self, art: ArtifactsConfig) -> None:
        if art.is_prefix:
            self._add(
                "ReadModelArtifacts",
                ["s3:GetObject"],
                [f"{art.bucket_arn}/{art.key}*"],
                reason="the model artifacts are every object under one build prefix (one statement "
                "for the prefix, not one per model)",
            )
            self._add(
                "ListModelArtifacts",
                ["s3:ListBucket"],
                [art.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{art.key}*"]}},
            )
        else:
            self._add("ReadModelArtifacts", ["s3:GetObject"], [f"{art.bucket_arn}/{art.key}"])
        if art.kms_key_arn:
            self._add("DecryptModelArtifacts", ["kms:Decrypt"], [art.kms_key_arn])

    def _grant_image(self) -> None:
        self._add(
            "PullTritonImage",
            ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"],
            [self._image.repository_arn],
        )
        self._add(
            "EcrAuthorizationToken",
            ["ecr:GetAuthorizationToken"],
            ["*"],
            reason="ecr:GetAuthorizationToken has no resource-level permissions; it must be granted on '*'",
        )

    def _grant_metrics(self, log_group_arn: str, namespace: str) -> None:
        self._add(
            "WriteTritonMetricsLogs",
            ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"],
            [log_group_arn],
        )
        self._add(
            "PutTritonMetrics",
            ["cloudwatch:PutMetricData"],
            ["*"],
            conditions={"StringEquals": {"cloudwatch:namespace": namespace}},
            reason="cloudwatch:PutMetricData has no resource-level permissions; a cloudwatch:namespace "
            "condition limits it to the Triton metrics namespace",
        )

    def _grant_endpoint_logs(self, endpoint_name: str) -> None:
        region, account = self._stack.region, self._stack.account
        group = f"arn:{pseudo().partition}:logs:{region}:{account}:log-group:/aws/sagemaker/Endpoints/{endpoint_name}"
        self._add("EndpointLogGroup", ["logs:CreateLogGroup"], [group])
        self._add(
            "EndpointLogStreams",
            ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"],
            [f"{group}:*"],
            reason="SageMaker creates the log streams of the endpoint's own log group at run time "
            "(one per instance); the grant is limited to that one log group",
        )

    def grant_endpoint_logs(self, endpoint_name: str) -> None:
        """Let the container write its logs to ``/aws/sagemaker/Endpoints/<endpoint_name>``."""
        self._grant_endpoint_logs(endpoint_name)
        self._flush_acks()

    def grant_data_capture(self, bucket_arn: str, prefix: str, kms_key_arn: str | None = None) -> None:
        """Let the endpoint write captured requests under ``s3://<bucket>/<prefix>``."""
        self._add(
            "WriteDataCapture",
            ["s3:PutObject"],
            [f"{bucket_arn}/{prefix}*"],
            reason="data capture writes one object per captured batch under its prefix",
        )
        if kms_key_arn:
            self._add("EncryptDataCapture", ["kms:Encrypt", "kms:GenerateDataKey"], [kms_key_arn])
        self._flush_acks()


# ---------------------------------------------------------------------------- checks
def _resolve_server_options(
    art: ArtifactsConfig, server_options: ServerOptions | None
) -> tuple[ServerOptions, list[TritonValidationError]]:
    """The server options the artifacts imply (mode, default model), and what contradicts them."""
    errs: list[TritonValidationError] = []
    opts = server_options or ServerOptions()
    if server_options is not None and server_options.multi_model and not art.is_multi_model:
        errs.append(
            catalogued(
                "ServerOptionsModeConflict",
                prop="server_options.multi_model",
                value=server_options.multi_model,
                problem=f"contradicts the artifacts, which are packaged for {art.mode}",
                allowed="False (unset): the artifacts decide the endpoint mode",
                fix="drop multi_model from server_options, or package the models for a multi-model endpoint",
            )
        )
    opts = dataclasses.replace(opts, multi_model=art.is_multi_model)
    if not opts.multi_model and opts.default_model_name is None:
        # Always set for SME: the binary's /invocations reads SAGEMAKER_TRITON_DEFAULT_MODEL_NAME
        # itself, even when `serve` could pick the only model of the repository.
        default = art.default_model or (art.models[0] if len(art.models) == 1 else None)
        if default is not None:
            opts = dataclasses.replace(opts, default_model_name=default)
        else:
            errs.append(
                catalogued(
                    "DefaultModelRequired",
                    prop="server_options.default_model_name",
                    value=None,
                    problem="is unknown for a single-model endpoint: /invocations serves "
                    "SAGEMAKER_TRITON_DEFAULT_MODEL_NAME, which the artifacts do not name",
                    allowed="the model directory behind /invocations (for an ensemble: the ensemble)"
                    + (f": one of {', '.join(sorted(art.models))}" if art.models else ""),
                    fix="pass default_model=... to ModelArtifacts.from_bucket / from_asset, or "
                    "server_options=ServerOptions(default_model_name=...)",
                )
            )
    if (
        not opts.multi_model
        and opts.default_model_name is not None
        and art.models
        and opts.default_model_name not in art.models
    ):
        errs.append(
            catalogued(
                "DefaultModelNotInArtifacts",
                prop="server_options.default_model_name",
                value=opts.default_model_name,
                problem="is not a model in the artifacts",
                allowed=", ".join(sorted(art.models)),
                fix="name one of the packaged models (for an ensemble: the ensemble itself)",
            )
        )
    return opts, errs


def _check_props(
    opts: ServerOptions,
    *,
    metrics: TritonMetrics | None,
    triton_version: str | None,
    network_isolation: bool,
    network_without_vpc: list[str] | str | None,
) -> list[TritonValidationError]:
    """Metrics publishing against the options, the image and the network; subnets or groups without a VPC.

    ``network_without_vpc``: the security groups' paths (or "vpc_subnets") given without a VPC, else None.
    """
    errs: list[TritonValidationError] = []
    if metrics is None and opts.publish_metrics_to_cloudwatch:
        errs.append(
            catalogued(
                "UseTritonMetrics",
                prop="server_options.publish_metrics_to_cloudwatch",
                value=True,
                problem="is set directly, so no log group and no CloudWatch grants would be defined",
                allowed="publish_metrics_to_cloudwatch unset, with metrics=TritonMetrics(...)",
                fix="pass metrics=TritonMetrics(namespace=...) instead: it sets the variables, "
                "creates the log group and grants exactly what publishing needs",
            )
        )
    if metrics is not None and not _publishes_metrics(triton_version):
        errs.append(
            catalogued(
                "MetricsNeedNewerImage",
                prop="metrics",
                value=f"sagemaker-tritonserver:{triton_version}-py3",
                problem="has no CloudWatch agent: SageMaker's Triton images publish metrics from 23.07",
                allowed="TritonImage.for_version of 23.07 or later (e.g. "
                f"{DEFAULT_TRITON_VERSION}), or your own image",
                fix="choose a newer Triton version, or drop metrics",
            )
        )
    if metrics is not None and network_isolation:
        errs.append(
            catalogued(
                "MetricsNeedNetwork",
                prop="network_isolation",
                value=True,
                problem="blocks the CloudWatch agent that publishes Triton's metrics",
                allowed="network_isolation=False when metrics is set",
                fix="drop metrics, or turn network isolation off",
            )
        )
    if network_without_vpc is not None:
        errs.append(
            catalogued(
                "SecurityGroupsWithoutVpc",
                prop="security_groups/vpc_subnets",
                value=network_without_vpc,
                problem="are set without a vpc",
                allowed="security_groups and vpc_subnets together with vpc",
                fix="pass vpc=..., or drop security_groups and vpc_subnets",
            )
        )
    return errs


def _check_environment(raw_env: dict[str, str]) -> list[TritonValidationError]:
    """Raw container variables: known to the container, and not managed by ServerOptions."""
    errs = check_raw_environment(raw_env)
    for name in sorted(raw_env):
        if name in ENV_FIELDS:
            errs.append(
                catalogued(
                    "ReservedEnvironmentVariable",
                    prop="environment",
                    value=name,
                    problem="is managed by ServerOptions",
                    allowed="variables ServerOptions does not manage",
                    fix=f"set ServerOptions({ENV_FIELDS[name]}=...) instead",
                )
            )

    return errs


def _with_metrics(opts: ServerOptions, metrics: TritonMetrics, namespace: str) -> ServerOptions:
    """The options that publish Triton's metrics to ``namespace`` (log group: a placeholder until defined)."""
    return dataclasses.replace(
        opts,
        publish_metrics_to_cloudwatch=True,
        cloudwatch_metric_namespace=namespace,
        cloudwatch_log_group=_LOG_GROUP_PLACEHOLDER,
        metrics_port=metrics.metrics_port if metrics.metrics_port is not None else opts.metrics_port,
    )


#: logs.RetentionDays -> days (the Python enum carries only the names).
_RETENTION_DAYS: dict[str, int] = {
    "ONE_DAY": 1, "THREE_DAYS": 3, "FIVE_DAYS": 5, "ONE_WEEK": 7, "TWO_WEEKS": 14, "ONE_MONTH": 30,
    "TWO_MONTHS": 60, "THREE_MONTHS": 90, "FOUR_MONTHS": 120, "FIVE_MONTHS": 150, "SIX_MONTHS": 180,
    "ONE_YEAR": 365, "THIRTEEN_MONTHS": 400, "EIGHTEEN_MONTHS": 545, "TWO_YEARS": 731,
    "THREE_YEARS": 1096, "FIVE_YEARS": 1827, "SIX_YEARS": 2192, "SEVEN_YEARS": 2557,
    "EIGHT_YEARS": 2922, "NINE_YEARS": 3288, "TEN_YEARS": 3653,
}  # fmt: skip


def _publishes_metrics(version: str | None) -> bool:
    """Whether the SageMaker Triton image publishes metrics to CloudWatch (23.07+; unknown = yes)."""
    if version is None or not tables.is_valid_version_string(version):
        return True
    major, minor = (int(part) for part in version.split("."))
    return (major, minor) >= (23, 7)


#: Where the default selection's subnet ids are cached on a VPC object.
_DEFAULT_SUBNETS = "_cdk_triton_default_subnet_ids"


def _subnet_ids(vpc: ec2.IVpc, selection: ec2.SubnetSelection | None) -> list[str]:
    """``vpc.select_subnets(...).subnet_ids``; the default selection once per VPC object.

    The selection result comes back from jsii as a struct read one property at a time (seven round
    trips); a VPC's subnets are fixed when it is defined, so its default selection is read once.
    """
    if selection is None:
        cached: list[str] | None = getattr(vpc, _DEFAULT_SUBNETS, None)
        if cached is not None:
            return list(cached)
    ids = list(vpc.select_subnets(**_subnet_kwargs(selection)).subnet_ids)
    if selection is None:
        with contextlib.suppress(AttributeError):  # a proxy that refuses attributes: no cache
            setattr(vpc, _DEFAULT_SUBNETS, ids)
    return list(ids)


def _subnet_kwargs(selection: ec2.SubnetSelection | None) -> dict[str, Any]:
    if selection is None:
        return {}
    keys = (
        "availability_zones",
        "one_per_az",
        "subnet_filters",
        "subnet_group_name",
        "subnets",
        "subnet_type",
    )
    return {k: getattr(selection, k) for k in keys if getattr(selection, k, None) is not None}
