"""The pure checks of an endpoint: names, instance type, production variant, deployment, headroom.

Functions of plain values (and the ``DeploymentGuardrails`` value object): no Stack, no construct.
Each returns the ``TritonValidationError`` list it found, without a construct path; the construct
that calls it locates them (``err.at(node.path)``) and raises them all at once. Findings that
should not fail synth come back as ``(warning id, message)`` pairs for ``Annotations``.
"""

from __future__ import annotations

import re

from cdk_triton.config import tables
from cdk_triton.config.tables import InstanceTypeInfo
from cdk_triton.constructs._tokens import is_token, seconds
from cdk_triton.constructs.deployment import DataCapture, DeploymentGuardrails, TrafficStep
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

#: A finding for ``Annotations.add_warning_v2``: (warning id, message).
Warning = tuple[str, str]

INSTANCE_TYPE = re.compile(r"^ml\.[a-z0-9-]+\.[a-z0-9]+$")
NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
#: CloudFormation's resource limit per stack.
CFN_RESOURCE_LIMIT = 500
_LOCAL_NVME_CPU = re.compile(r"^[a-z]+\d+[a-z]*d[a-z]*$")
_NAME_ALLOWED = "1-63 letters, digits and '-', starting and ending with a letter or digit"


def has_local_storage(instance_type: str, info: InstanceTypeInfo | None) -> bool:
    """Whether the instance type has local NVMe storage (hardware-encrypted: no volume KMS key)."""
    if info is not None:
        return info.local_nvme_storage
    if is_token(instance_type) or instance_type.count(".") != 2:
        return False
    family = instance_type.split(".")[1]
    # CPU types with a 'd' in the suffix (c5d, m5d, r5d, m6id, c6id ...) carry instance-store NVMe.
    return bool(_LOCAL_NVME_CPU.fullmatch(family)) and not family.startswith(("inf", "trn"))


def types_for_archs(archs: list[str]) -> list[str]:
    """The vendored instance types whose GPU has one of the architectures ``archs``."""
    return sorted(name for name, info in tables.instance_types().items() if info.sm in archs)


def check_names(endpoint_name: str, variant_name: str) -> list[TritonValidationError]:
    """SageMaker's name pattern for the endpoint and the production variant (tokens skipped)."""
    errs = []
    if not is_token(endpoint_name) and not NAME.fullmatch(endpoint_name):
        errs.append(
            catalogued(
                "InvalidEndpointName",
                prop="endpoint_name",
                value=endpoint_name,
                problem="is not a SageMaker endpoint name",
                allowed=_NAME_ALLOWED,
                fix="drop the other characters, or leave endpoint_name unset for a generated name",
            )
        )
    if not is_token(variant_name) and not NAME.fullmatch(variant_name):
        errs.append(
            catalogued(
                "InvalidVariantName",
                prop="variant_name",
                value=variant_name,
                problem="is not a SageMaker production variant name",
                allowed=_NAME_ALLOWED,
                fix="use e.g. 'AllTraffic' and keep it stable across updates",
            )
        )
    return errs


def check_instance(
    instance_type: str,
    info: InstanceTypeInfo | None,
    *,
    triton_version: str | None,
    gpu_architectures: list[str],
    packaged_instance_types: list[str],
    multi_model: bool,
) -> tuple[list[TritonValidationError], list[Warning]]:
    """The instance type against the release, the TensorRT plans and the endpoint mode."""
    it = instance_type
    if is_token(it):
        return [], []
    if not INSTANCE_TYPE.fullmatch(it):
        return [_not_an_instance_type(it)], []
    errs = _check_compute_capability(it, info, triton_version)
    warnings: list[Warning] = []
    family = it.split(".")[1]
    if info is None and family[:1] in ("g", "p") and not family.startswith("perf"):
        warnings.append(
            (
                "cdk-triton:UnknownGpuInstanceType",
                f"{it} looks like a GPU instance type but is not in the vendored instance table; "
                "GPU checks (architecture, GPU count, GPUUtilization scaling) treat it as a CPU type",
            )
        )
    errs += _check_architecture(it, info, gpu_architectures)
    mme_types = tables.confirmed_mme_gpu_types()
    if multi_model and info is not None and info.gpu_count > 1:
        errs.append(
            catalogued(
                "MmeNeedsSingleGpu",
                prop="instance_type",
                value=it,
                problem=f"has {info.gpu_count} GPUs; GPU multi-model endpoints need a single-GPU instance",
                allowed=", ".join(mme_types),
                fix=f"use e.g. ml.{info.family}.xlarge, or a single-model endpoint",
            )
        )
    elif multi_model and info is not None and it not in mme_types:
        warnings.append(
            (
                "cdk-triton:MmeGpuUnconfirmed",
                f"{it} is not among the GPU instance types documented for multi-model endpoints "
                f"({', '.join(mme_types)}); check that SageMaker accepts it",
            )
        )
    if packaged_instance_types and it not in packaged_instance_types and not errs:
        warnings.append(
            (
                "cdk-triton:InstanceTypeNotPackaged",
                f"the artifacts were packaged for {', '.join(packaged_instance_types)}, not {it}",
            )
        )
    return errs, warnings


def _check_compute_capability(
    it: str, info: InstanceTypeInfo | None, version: str | None
) -> list[TritonValidationError]:
    if info is None or version is None:
        return []
    try:
        min_cc = tables.release(version).min_compute_capability.value
    except TritonValidationError:
        min_cc = None
    if not min_cc or float(info.compute_capability) >= float(min_cc):
        return []
    return [
        catalogued(
            "ComputeCapabilityTooLow",
            prop="instance_type",
            value=it,
            problem=f"has {info.gpu} GPUs (compute capability {info.compute_capability}), below the "
            f"{min_cc} Triton {version} requires",
            allowed=f"GPU instance types with compute capability >= {min_cc} (g4dn, g5, g6, p3, p4d, p5)",
            fix="choose e.g. ml.g4dn.xlarge or ml.g5.xlarge",
        )
    ]


def _check_architecture(
    it: str, info: InstanceTypeInfo | None, archs: list[str]
) -> list[TritonValidationError]:
    if not archs:
        return []
    family = it.split(".")[1]
    if info is None:
        kind = "has no GPU" if not family.startswith(("g", "p")) else "is not a known GPU instance type"
        return [
            catalogued(
                "GpuArtifactsOnCpuInstance",
                prop="instance_type",
                value=it,
                problem=f"{kind}, and the artifacts hold TensorRT plans built for {', '.join(archs)}",
                allowed=", ".join(types_for_archs(archs)) or "a GPU instance type",
                fix="deploy on a GPU instance of that architecture, or rebuild portable (ONNX) artifacts",
            )
        ]
    if info.sm in archs:
        return []
    return [
        catalogued(
            "GpuArchitectureMismatch",
            prop="instance_type",
            value=it,
            problem=f"has {info.gpu} ({info.sm}), and the TensorRT plans were built for {', '.join(archs)}",
            allowed=", ".join(types_for_archs(archs)) or ", ".join(archs),
            fix="deploy on an instance with that GPU, or rebuild the plans for "
            f"{info.sm} (instance_types: [{it}] in build/models.yaml)",
        )
    ]


def _not_an_instance_type(instance_type: str) -> TritonValidationError:
    return catalogued(
        "InvalidInstanceType",
        prop="instance_type",
        value=instance_type,
        problem="is not a SageMaker hosting instance type",
        allowed="'ml.<family>.<size>' such as ml.g5.xlarge, ml.g4dn.xlarge, ml.c6i.xlarge",
        fix="add the 'ml.' prefix and check the family and size",
    )


def _instance_count_below_1(instance_count: int, fix: str) -> TritonValidationError:
    return catalogued(
        "InvalidInstanceCount",
        prop="instance_count",
        value=instance_count,
        problem="is below 1",
        allowed="an integer >= 1",
        fix=fix,
    )


def check_variant(
    *,
    instance_type: str,
    local_storage: bool,
    instance_count: int,
    volume_encryption_key_path: str | None = None,
    volume_size_gib: float | None = None,
    container_startup_health_check_timeout_seconds: float | None = None,
    model_data_download_timeout_seconds: float | None = None,
    sampling_percentage: int | None = None,
) -> list[TritonValidationError]:
    """The production variant: instance count, volume key and size, timeouts, data capture sampling.

    ``volume_encryption_key_path`` is the supplied key's construct path (None when none is supplied).
    """
    errs = []
    if instance_count < 1:
        errs.append(_instance_count_below_1(instance_count, "pass instance_count=1 or more"))
    if volume_encryption_key_path is not None and local_storage:
        errs.append(
            catalogued(
                "KmsKeyOnLocalStorage",
                prop="volume_encryption_key",
                value=volume_encryption_key_path,
                problem=f"is set, and {instance_type} has local NVMe storage (hardware-encrypted); "
                "CreateEndpointConfig rejects a KmsKeyId for it",
                allowed="no key on local-NVMe types (g4dn, g5, g6, g6e, p3dn, p4d, p5, *d CPU types)",
                fix="drop volume_encryption_key, or choose an EBS-only instance type such as ml.p3.2xlarge",
            )
        )
    if volume_size_gib is not None and (local_storage or not 1 <= volume_size_gib <= 512):
        errs.append(
            catalogued(
                "InvalidVolumeSize",
                prop="volume_size",
                value=f"{volume_size_gib} GiB",
                problem="is not a valid ML storage volume size for this instance type"
                + (" (it has local NVMe storage)" if local_storage else ""),
                allowed="1..512 GiB, on EBS-only instance types",
                fix="drop volume_size on local-NVMe types, or pass cdk.Size.gibibytes(1..512)",
            )
        )
    for prop, secs in (
        ("container_startup_health_check_timeout", container_startup_health_check_timeout_seconds),
        ("model_data_download_timeout", model_data_download_timeout_seconds),
    ):
        if secs is not None and not 60 <= secs <= 3600:
            errs.append(
                catalogued(
                    "InvalidTimeout",
                    prop=prop,
                    value=f"{secs} s",
                    problem="is outside SageMaker's range",
                    allowed="60..3600 seconds",
                    fix="pass cdk.Duration.minutes(1..60)",
                )
            )
    if sampling_percentage is not None and not 0 <= sampling_percentage <= 100:
        errs.append(
            catalogued(
                "InvalidSamplingPercentage",
                prop="data_capture.sampling_percentage",
                value=sampling_percentage,
                problem="is not a percentage",
                allowed="0..100",
                fix="pass e.g. 20 to capture one request in five",
            )
        )
    return errs


def check_deployment(d: DeploymentGuardrails, *, instance_count: int) -> list[TritonValidationError]:
    """Deployment guardrails: one update policy, valid steps within SageMaker's shares, timeouts, alarms."""
    errs = []
    policies = int(d.traffic_routing is not None) + int(d.rolling_batch is not None)
    if policies != 1:
        errs.append(
            catalogued(
                "InvalidDeploymentPolicy",
                prop="deployment",
                value=policies and "blue/green and rolling",
                problem="must set exactly one update policy",
                allowed="DeploymentGuardrails.all_at_once / canary / linear / rolling",
                fix="build the guardrails with one of the DeploymentGuardrails factories",
            )
        )
    if d.traffic_routing is not None and d.traffic_routing not in ("ALL_AT_ONCE", "CANARY", "LINEAR"):
        errs.append(
            catalogued(
                "InvalidDeploymentPolicy",
                prop="deployment.traffic_routing",
                value=d.traffic_routing,
                problem="is not a blue/green traffic routing",
                allowed="ALL_AT_ONCE, CANARY, LINEAR",
                fix="use DeploymentGuardrails.all_at_once / canary / linear",
            )
        )
    errs += _check_steps(d, instance_count)
    errs += check_step_shares(d, instance_count=instance_count)
    limit = 28800 if d.rolling_batch is not None else 14400
    for prop, dur, lo, hi in (
        ("deployment.wait_interval", d.wait_interval, 0, 3600),
        ("deployment.termination_wait", d.termination_wait, 0, 3600),
        ("deployment.maximum_execution_timeout", d.maximum_execution_timeout, 600, limit),
    ):
        if dur is not None and not lo <= seconds(dur) <= hi:
            errs.append(
                catalogued(
                    "InvalidTimeout",
                    prop=prop,
                    value=f"{seconds(dur)} s",
                    problem="is outside SageMaker's range",
                    allowed=f"{lo}..{hi} seconds",
                    fix=f"pass a cdk.Duration between {lo} and {hi} seconds",
                )
            )
    if d.rollback_alarms is not None and len(d.rollback_alarms) > 10:
        errs.append(
            catalogued(
                "TooManyRollbackAlarms",
                prop="deployment.rollback_alarms",
                value=len(d.rollback_alarms),
                problem="exceeds SageMaker's limit",
                allowed="at most 10 alarms",
                fix="combine alarms in a CompositeAlarm",
            )
        )
    return errs


def _step_is_invalid(step: TrafficStep) -> bool:
    return (
        (step.percent is None) == (step.instance_count is None)
        or (step.percent is not None and not 1 <= step.percent <= 100)
        or (step.instance_count is not None and step.instance_count < 1)
    )


def _check_steps(d: DeploymentGuardrails, instance_count: int) -> list[TritonValidationError]:
    errs = []
    for prop, step in (("deployment.step", d.step), ("deployment.rolling_batch", d.rolling_batch)):
        if step is None:
            if prop == "deployment.step" and d.traffic_routing in ("CANARY", "LINEAR"):
                errs.append(
                    catalogued(
                        "InvalidTrafficStep",
                        prop=prop,
                        value=None,
                        problem="is missing",
                        allowed="a percent (1..100) or an instance count >= 1",
                        fix="pass percent=... or instance_count=...",
                    )
                )
            continue
        if _step_is_invalid(step):
            errs.append(
                catalogued(
                    "InvalidTrafficStep",
                    prop=prop,
                    value=step.percent if step.percent is not None else step.instance_count,
                    problem="is not a valid step",
                    allowed="exactly one of a percent (1..100) or an instance count >= 1",
                    fix="pass percent=... or instance_count=...",
                )
            )
        elif (
            d.traffic_routing == "CANARY"
            and prop == "deployment.step"
            and (
                (step.percent is not None and step.percent > 50)
                or (step.instance_count is not None and step.instance_count * 2 > instance_count)
            )
        ):
            errs.append(
                catalogued(
                    "CanaryTooLarge",
                    prop="deployment.step",
                    value=f"{step.percent} %"
                    if step.percent is not None
                    else f"{step.instance_count} instances",
                    problem=f"is more than half of the fleet ({instance_count} instances)",
                    allowed="a canary of at most 50 % of the instances",
                    fix="pass a smaller canary, e.g. percent=10, or use linear()",
                )
            )
    return errs


def check_step_shares(d: DeploymentGuardrails, *, instance_count: int) -> list[TritonValidationError]:
    """SageMaker's share of the fleet per step: linear 10-50 %, rolling 5-50 % (canary: CanaryTooLarge)."""
    if d.traffic_routing == "LINEAR":
        prop, step, lo, name = "deployment.step", d.step, 10, "a linear step"
    elif d.rolling_batch is not None and d.traffic_routing is None:
        prop, step, lo, name = "deployment.rolling_batch", d.rolling_batch, 5, "a rolling batch"
    else:
        return []
    if step is None or _step_is_invalid(step):
        return []  # reported as InvalidTrafficStep by check_deployment
    if step.percent is not None:
        share, value = float(step.percent), f"{step.percent} %"
    else:
        share, value = (
            100.0 * (step.instance_count or 0) / instance_count,
            f"{step.instance_count} instances",
        )
    if lo <= share <= 50:
        return []
    return [
        catalogued(
            "InvalidTrafficStep",
            prop=prop,
            value=value,
            problem=f"is {share:.0f} % of the fleet ({instance_count} instances)",
            allowed=f"{name} of {lo}..50 % of the instances",
            fix=f"pass percent={lo}..50, or an instance_count within that share of instance_count",
        )
    ]


def check_headroom(
    resources: int, *, endpoint_resources: int, endpoint_id: str, limit: int = CFN_RESOURCE_LIMIT
) -> tuple[list[TritonValidationError], bool]:
    """A stack's CloudFormation resources after an endpoint: (errors over the limit, warn at >= 80 %)."""
    errs = []
    if resources > limit:
        mine = max(endpoint_resources, 1)
        errs.append(
            catalogued(
                "StackResourceLimit",
                prop="stack",
                value=f"{resources} resources",
                problem=f"exceeds CloudFormation's limit of {limit} resources per stack",
                allowed=f"at most {limit} resources; this endpoint defines {endpoint_resources}, so one stack "
                f"holds about {max(1, limit // mine)} such endpoints",
                fix=f"split the endpoints into stacks of at most {max(1, (limit * 4 // 5) // mine)} "
                f"endpoints each (e.g. one Stack per group of endpoints) and create {endpoint_id} in a new stack",
            )
        )
    return errs, resources / limit >= 0.8


# ---------------------------------------------------------------------------- other props

#: SageMaker's container Environment: at most 100 entries, keys [a-zA-Z_][a-zA-Z0-9_]*, 1024 characters each.
ENV_KEY = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]{0,1023}$")
ENV_MAX_ENTRIES = 100
ENV_VALUE_MAX = 1024
#: CloudWatch dashboard names.
DASHBOARD_NAME = re.compile(r"^[A-Za-z0-9_-]{1,255}$")
#: DataCaptureConfig.DestinationS3Uri is at most 512 characters.
CAPTURE_URI_MAX = 512


def check_environment_values(env: dict[str, str]) -> list[TritonValidationError]:
    """Raw container variables against SageMaker's Environment map: names, value lengths, count."""
    errs = []
    for key, value in sorted(env.items()):
        bad_key = not is_token(key) and not ENV_KEY.fullmatch(key)
        bad_value = not isinstance(value, str) or (not is_token(value) and len(value) > ENV_VALUE_MAX)
        if bad_key or bad_value:
            errs.append(
                catalogued(
                    "InvalidEnvironmentVariable",
                    prop=f"environment[{key!r}]",
                    value=key if bad_key else f"{str(value)[:40]}... ({len(str(value))} characters)",
                    problem="is not a container variable name SageMaker accepts"
                    if bad_key
                    else f"is not a string of at most {ENV_VALUE_MAX} characters",
                    allowed=f"names of [a-zA-Z_][a-zA-Z0-9_]* and string values of at most {ENV_VALUE_MAX} "
                    "characters",
                    fix="rename the variable, or pass long values through a file in the model repository",
                )
            )
    if len(env) > ENV_MAX_ENTRIES:
        errs.append(
            catalogued(
                "InvalidEnvironmentVariable",
                prop="environment",
                value=f"{len(env)} variables",
                problem="exceeds SageMaker's limit of container variables",
                allowed=f"at most {ENV_MAX_ENTRIES} variables (ServerOptions adds its own)",
                fix="drop variables, or move settings into ServerOptions / config.pbtxt",
            )
        )
    return errs


def check_data_capture(dc: DataCapture | None, bucket_name: str | None = None) -> list[TritonValidationError]:
    """Data capture: something to capture, and a destination URI SageMaker accepts."""
    if dc is None:
        return []
    errs = []
    if not dc.capture_input and not dc.capture_output:
        errs.append(
            catalogued(
                "InvalidDataCapture",
                prop="data_capture.capture_input/capture_output",
                value=(False, False),
                problem="capture nothing: CaptureOptions needs at least one mode",
                allowed="capture_input and/or capture_output True",
                fix="leave one of them True, or drop data_capture",
            )
        )
    uri_len = len(f"s3://{bucket_name or ''}/{dc.prefix}")
    if not is_token(dc.prefix) and (uri_len > CAPTURE_URI_MAX or "//" in dc.prefix.strip("/")):
        errs.append(
            catalogued(
                "InvalidDataCapture",
                prop="data_capture.prefix",
                value=dc.prefix
                if len(dc.prefix) <= 80
                else f"{dc.prefix[:60]}... ({len(dc.prefix)} characters)",
                problem="does not make a DestinationS3Uri SageMaker accepts",
                allowed=f"s3://<bucket>/<prefix> of at most {CAPTURE_URI_MAX} characters, no empty path segment",
                fix="shorten the prefix, e.g. 'data-capture/<endpoint>/'",
            )
        )
    return errs


def check_sagemaker_model_name(model_name: str | None) -> list[TritonValidationError]:
    """TritonModel's physical model_name: SageMaker's name pattern (as endpoint names)."""
    if model_name is None or is_token(model_name) or NAME.fullmatch(model_name):
        return []
    return [
        catalogued(
            "InvalidSageMakerModelName",
            prop="model_name",
            value=model_name,
            problem="is not a SageMaker model name",
            allowed=_NAME_ALLOWED,
            fix="drop the other characters, or leave model_name unset for a generated name",
        )
    ]


def check_imported(
    instance_type: str | None, gpu_count: int | None, instance_count: int | None
) -> list[TritonValidationError]:
    """The attributes of an imported endpoint that have a shape: instance type, GPU and instance counts."""
    errs = []
    if (
        instance_type is not None
        and not is_token(instance_type)
        and not INSTANCE_TYPE.fullmatch(instance_type)
    ):
        errs.append(_not_an_instance_type(instance_type))
    if gpu_count is not None and gpu_count < 0:
        errs.append(
            catalogued(
                "InvalidGpuCount",
                prop="gpu_count",
                value=gpu_count,
                problem="is negative",
                allowed="0 (CPU) or the GPUs per instance",
                fix="pass the instance type instead, or the GPUs per instance",
            )
        )
    if instance_count is not None and instance_count < 1:
        errs.append(
            _instance_count_below_1(instance_count, "pass the variant's instance count, or leave it unset")
        )
    return errs


def check_period(prop: str, secs: int, *, high_resolution: tuple[int, ...]) -> list[TritonValidationError]:
    """A CloudWatch period: one of the high-resolution periods, or a multiple of 60 s."""
    if secs in high_resolution or (secs >= 60 and secs % 60 == 0):
        return []
    return [
        catalogued(
            "InvalidPeriod",
            prop=prop,
            value=f"{secs} s",
            problem="is not a CloudWatch period",
            allowed=f"{', '.join(map(str, high_resolution))} or a multiple of 60 seconds",
            fix="pass cdk.Duration.minutes(1) or another whole number of minutes",
        )
    ]


def check_evaluation(period_s: int, evaluation_periods: int) -> list[TritonValidationError]:
    """An alarm evaluates at least one period and at most one day (periods x period <= 86400 s)."""
    if evaluation_periods >= 1 and evaluation_periods * period_s <= 86400:
        return []
    return [
        catalogued(
            "InvalidEvaluationPeriods",
            prop="evaluation_periods",
            value=evaluation_periods,
            problem=f"x period {period_s} s is not an evaluation range CloudWatch accepts",
            allowed="1 <= evaluation_periods, and evaluation_periods x period <= 86400 s (one day)",
            fix="pass e.g. evaluation_periods=3",
        )
    ]


def check_dashboard_name(name: str | None) -> list[TritonValidationError]:
    if name is None or is_token(name) or DASHBOARD_NAME.fullmatch(name):
        return []
    return [
        catalogued(
            "InvalidDashboardName",
            prop="dashboard_name",
            value=name,
            problem="is not a CloudWatch dashboard name",
            allowed="1-255 letters, digits, '-' and '_'",
            fix="drop the other characters, or leave dashboard_name unset",
        )
    ]
