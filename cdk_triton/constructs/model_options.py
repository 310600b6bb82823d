"""The model's props against one another before anything is defined: the server options the artifacts
imply, metrics publishing against the image and the network, raw container variables.

Pure functions (no construct is defined); ``TritonModel`` calls them and raises what they return.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdk_triton.config import advisories, default_release, tables
from cdk_triton.config.server_options import (
    ENV_FIELDS,
    ServerOptions,
    check_raw_environment,
    hosting_options,
)
from cdk_triton.config.tables import DEFAULT_TRITON_VERSION
from cdk_triton.constructs.artifacts import ArtifactsConfig
from cdk_triton.constructs.errors import catalogued
from cdk_triton.constructs.model_props import TritonMetrics
from cdk_triton.errors import TritonValidationError


def resolve_server_options(
    art: ArtifactsConfig, server_options: ServerOptions | None
) -> tuple[ServerOptions, list[TritonValidationError]]:
    """The server options the artifacts imply (mode, default model), and what contradicts them."""
    errs: list[TritonValidationError] = []
    opts = server_options or ServerOptions()
    if server_options is not None and server_options.multi_model and not art.hosting_mode.loads_on_demand:
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
    # multi_model, the default model and the python models' callees: one author with the local container
    opts = hosting_options(
        opts,
        multi_model=art.hosting_mode.loads_on_demand,
        default_model=art.default_model,
        models=art.models,
        load_models=art.load_models or (),
    )
    if not opts.multi_model and opts.default_model_name is None:
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


def check_model_props(
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
    if metrics is not None and not publishes_metrics(triton_version):
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


def check_raw_container_environment(raw_env: dict[str, str]) -> list[TritonValidationError]:
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


def merge_acknowledgments(
    *, context: Any, manifest: Mapping[str, str], prop: Mapping[str, str] | None
) -> tuple[dict[str, str], list[TritonValidationError]]:
    """The acknowledged advisories of a model: the ``cdk-triton:acknowledged_advisories`` context's, then
    the manifest's (``models.yaml``), then the prop's (each later one wins); and what is malformed."""
    errs = advisories.check_acknowledgments(context, prop=advisories.CONTEXT_KEY)
    errs += advisories.check_acknowledgments(prop, prop=advisories.ACKNOWLEDGMENT_KEY)
    merged: dict[str, str] = {}
    for source in (context, manifest, prop):
        if isinstance(source, Mapping):
            merged.update({str(k): v for k, v in source.items() if isinstance(v, str) and v.strip()})
    return merged, errs


def check_advisories(
    triton_version: str | None, acknowledged: Mapping[str, str], *, region: str | None, library: bool = True
) -> advisories.Findings:
    """The image's release against NVIDIA's advisories (``config.advisories``: the build's rule too);
    ``library``: whether the library's acknowledgment of the default release applies
    (``config.default_release``)."""
    return advisories.check_release(
        triton_version,
        acknowledged=acknowledged,
        region=region,
        prop="image (Triton release)",
        library=default_release.library_acknowledgments(triton_version) if library else None,
        library_by=default_release.BY,
    )


def library_acknowledgments_allowed(
    *, context: Any, manifest: bool
) -> tuple[bool, list[TritonValidationError]]:
    """Whether the library's acknowledgment applies: not when the manifest (models.yaml's
    ``library_acknowledgments: false``) or the ``cdk-triton:library_acknowledgments`` context refuses it."""
    errs = default_release.check_context(context)
    return manifest and context is not False, errs


def publishes_metrics(version: str | None) -> bool:
    """Whether the SageMaker Triton image publishes metrics to CloudWatch (23.07+; unknown = yes)."""
    if version is None or not tables.is_valid_version_string(version):
        return True
    major, minor = (int(part) for part in version.split("."))
    return (major, minor) >= (23, 7)
