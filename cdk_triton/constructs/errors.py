"""The catalogue of validation error codes the constructs raise (and surface from config).

Every ``TritonValidationError`` a construct raises carries one of these codes, the prop, the value
received, what is allowed, how to fix it, and the construct path (``node.path``). The codes are a
public contract: tests assert each one, and the README lists them.
"""

from __future__ import annotations

from typing import Any

from constructs import IConstruct

from cdk_triton.config.errors import BUILD_AND_SYNTH_RULE_ERRORS, pick
from cdk_triton.errors import TritonValidationError, TritonValidationErrors

#: The codes the constructs own: code -> what it means.
CONSTRUCT_ERRORS: dict[str, str] = {
    # image
    # artifacts
    "InvalidArtifactKey": "from_bucket key is neither a prefix ending '/' nor a .tar.gz object",
    "InvalidAssetPath": "from_asset path is not an existing .tar.gz file",
    "DefaultModelNotInArtifacts": "the default model is not one of the models in the artifacts",
    "DefaultModelRequired": "a single-model endpoint whose artifacts do not name the model behind /invocations",
    "ServerOptionsModeConflict": "server_options.multi_model contradicts the artifacts' endpoint mode",
    "MmeWithoutModels": "a multi-model endpoint whose TargetModel map is empty (nothing to serve)",
    "InvalidTargetModel": "a TargetModel that is not a .tar.gz key of 1..1024 printable characters under the prefix",
    "TargetModelCaseCollision": "two logical names or two TargetModels that differ only in case",
    "InvalidGpuArchitecture": "a TensorRT plan architecture that is not 'sm' + compute capability (sm86)",
    "ManifestUriNotS3": "a manifest S3 location that is not s3://<bucket>/<key> (edited by hand or a broken tool)",
    "ManifestHashMismatch": "a manifest hash that is not a sha256, or an MME archive name '<model>-<sha12>.tar.gz' that disagrees with it",
    "ManifestBrokenReference": "a manifest entry naming a model, step or URI the manifest does not hold (or a name unlike its key)",
    # server options / environment
    "ReservedEnvironmentVariable": "a raw environment variable that ServerOptions manages",
    "UseTritonMetrics": "server_options.publish_metrics_to_cloudwatch set directly instead of metrics=TritonMetrics()",
    "MetricsNeedNewerImage": "Triton metrics publishing with a SageMaker Triton image older than 23.07 (no CloudWatch agent)",
    "MetricsNeedNetwork": "Triton metrics publishing on a network-isolated model (the agent cannot reach CloudWatch)",
    "TensorRTVersionMismatch": "a TensorRT plan deployed on an image whose TensorRT is another version than the one that built it",
    "TorchScriptTooNew": "TorchScript saved by a newer torch than the image's (confirmed) libtorch",
    "OnnxTooNewForImage": "an ONNX model whose recorded opset or IR version is above what the image's ONNX Runtime reads",
    "SecurityGroupsWithoutVpc": "security groups or subnets given without a VPC",
    # instance type
    "GpuArtifactsOnCpuInstance": "the artifacts need a GPU (TensorRT plans) and the instance type has none",
    "GpuArchitectureMismatch": "the TensorRT plans were built for another GPU architecture than the instance's",
    "KmsKeyOnLocalStorage": "a volume KMS key on an instance type with local NVMe storage (CreateEndpointConfig fails)",
    "InvalidInstanceCount": "instance_count below 1",
    "InstanceTypeOrPools": "a TritonEndpoint with both instance_type and instance_pools, or neither "
    "(InstancePools replaces InstanceType on the production variant)",
    "InvalidVariantName": "variant_name does not match SageMaker's name pattern",
    "InvalidEndpointName": "endpoint_name does not match SageMaker's name pattern (1-63 of [a-zA-Z0-9-])",
    "InvalidTimeout": "a container startup or model download timeout outside 60..3600 s, or a deployment wait/timeout outside SageMaker's range",
    "InvalidVolumeSize": "volume_size outside 1..512 GiB, or set on an instance type with local NVMe storage",
    "VolumeTooSmall": "the ML storage volume (volume_size, or the type's default or fixed NVMe volume) cannot hold the model data and its unpacked copy",
    "InvalidSamplingPercentage": "data capture sampling outside 0..100 %",
    "InvalidDataCapture": "data capture that captures neither input nor output, or a destination SageMaker refuses",
    "InvalidEnvironmentVariable": "a container variable name, value length or count SageMaker's Environment map refuses",
    "InvalidSageMakerModelName": "TritonModel model_name does not match SageMaker's name pattern",
    "InvalidImageTag": "from_ecr_repository tag is neither an ECR tag nor a sha256 digest",
    "InvalidGpuCount": "an imported endpoint's gpu_count below 0",
    # deployment guardrails
    "CanaryTooLarge": "a blue/green canary above 50 % of the fleet",
    "InvalidTrafficStep": "a step that is not a positive count or 1..100 %, a linear step outside 10..50 % or a rolling batch outside 5..50 % of the fleet",
    "InvalidDeploymentPolicy": "deployment guardrails with none or more than one update policy",
    "TooManyRollbackAlarms": "more than 10 auto-rollback alarms",
    # scaling
    "BurstableNotScalable": "autoscaling on a burstable (ml.t*) instance type",
    "GpuScalingOnCpuInstance": "GPUUtilization scaling on an instance type without a GPU",
    "InvalidCapacity": "min/max capacity not 1 <= min <= max",
    "InvalidTargetValue": "a target-tracking target outside its range",
    # monitoring
    "InvalidAlarmThreshold": "an alarm threshold outside its range",
    "InvalidPeriod": "an alarm or dashboard period CloudWatch does not offer (10/30 s, or whole minutes)",
    "InvalidEvaluationPeriods": "alarm evaluation_periods below 1, or over one day of periods",
    "InvalidDashboardName": "dashboard_name does not match CloudWatch's name pattern",
    "DashboardTooLarge": "more widgets than CloudWatch allows on one dashboard",
    # scale
    "StackResourceLimit": "the stack would exceed CloudFormation's resource limit; split endpoints into more stacks",
    "TemplateTooLarge": "the synthesized template would exceed CloudFormation's 1 MB template size (S3 template URL); split the MME's TargetModels or the endpoints into more stacks",
    "TooManyOutputs": "the stack would declare more outputs than CloudFormation's 200 per template",
    "TooManyParameters": "the stack would declare more parameters than CloudFormation's 200 per template",
    "TooManyMappings": "the stack would declare more mappings than CloudFormation's 200 per template",
    "TargetModelMapEntryTooLong": "one logical name -> TargetModel entry of the MME name map does not fit a standard SSM parameter (4,096 characters)",
    # composition (TritonEndpoint holds a TritonModel)
    "ModelGivenTwice": "TritonEndpoint given model= together with props of the model (artifacts, image, ...)",
    "ModelRequired": "TritonEndpoint given neither model= nor artifacts=",
    "ModelInOtherEnvironment": "a TritonModel given to an endpoint in another account or region",
    # imported endpoints
    "MissingEndpointAttribute": "a feature asked of an imported endpoint that was imported without the attribute it needs",
    "InvalidEndpointMode": "from_endpoint_attributes mode is none of 'SingleModel', 'MultiModel', "
    "'InferenceComponents' (or the deprecated 'SME', 'MME', 'IC')",
    # deploy verification
    "SampleFileMissing": "a recorded sample with no S3 URIs whose file is not next to the manifest",
    "InvalidVerificationCheck": "a VerificationCheck without a model, with a sample URI that is not s3://<bucket>/<key>, "
    "a tolerance that is negative or not finite, or an empty warm_up name",
    "InvalidVerificationSample": "a VerificationSample whose others_percent is outside 0..100, max_checks outside 1..5000 or parallelism outside 1..64",
    # shadow variants
    "InvalidShadowSampling": "a shadow sampling percentage outside 1..100",
    "ShadowVariantNameClash": "a shadow variant named like the production variant",
    "ShadowWithRollingUpdate": "rolling deployment guardrails beside a shadow (rolling updates exclude multi-variant "
    "endpoints)",
    "InvalidVerificationDeadline": "a verification deadline outside 30..840 s (the Lambda needs 60 s more, 900 s at most)",
    # inference components (the value limits, names and the fit of one copy are config's: surfaced below)
    "UnknownComponent": "component options for a model the components endpoint's artifacts do not hold",
    "ComponentGpuPlacement": "a model's instance_group gpus: index at or beyond its component's accelerator count",
    "ComponentModeNotSupported": "artifacts a components endpoint cannot serve (a single-model repository: components need one archive per model)",
}

#: Codes of the config layer (and of rules shared with it) that the constructs raise or re-raise
#: with the construct path: their meanings live in ``cdk_triton.config.errors``.
SURFACED: dict[str, str] = pick(
    (
        "UnknownTritonVersion",
        "ImageNotInRegion",
        "UnknownManifestEndpoint",
        "ManifestNotFound",
        "UnknownTritonEnvironmentVariable",
        "InvalidPort",
        "InvalidMetricNamespace",
        "MetricsPublishingNeedsMetrics",
        "InvalidPortRange",
        "PortConflict",
        "InvalidThreadCount",
        "InvalidLogLevel",
        "InvalidByteSize",
        "InvalidGpuLimit",
        "DefaultModelInMme",
        "CloudWatchSettingsWithoutPublishing",
        "InvalidAdditionalArg",
        "ManagedFlagInAdditionalArgs",
        "InvalidManifest",
        "UnsupportedManifestVersion",
        "ResponseCacheNotConfigured",
        "RestrictedApiUnreachable",
        "NoRecordedSamples",
        "UnknownInferenceAmiVersion",
        "InferenceAmiNotForInstance",
        "InferenceAmiCannotRunRelease",
        "NoHostForRelease",
        "InvalidModelPackageGroupName",
        # the refusals of the hosting modes' rows (config.modes)
        "ShadowOnMultiModel",
        "AutoScaleOnComponentsEndpoint",
        "InvalidAccountId",
        "AsyncNeedsSingleModel",
        "InvalidAsyncInference",
        "InvalidInstancePools",
        "InstancePoolsHostMismatch",
        "InstancePoolsOnMultiModel",
        # the build-and-synth rules, but for an unknown type, which synth warns about (UnknownGpuInstanceType);
        # InvalidComponentName: the names an imported endpoint's EndpointAttributes.component_names give
        *(c for c in BUILD_AND_SYNTH_RULE_ERRORS if c != "UnknownInstanceType"),
    )
)

#: Every code a construct raises: its own, then the surfaced ones.
ERROR_CODES: dict[str, str] = {**CONSTRUCT_ERRORS, **SURFACED}


def validation_error(
    scope: IConstruct,
    code: str,
    *,
    prop: str,
    value: Any,
    problem: str,
    allowed: str,
    fix: str,
) -> TritonValidationError:
    """A TritonValidationError located at ``scope``'s construct path (the code must be catalogued)."""
    return catalogued(
        code, prop=prop, value=value, problem=problem, allowed=allowed, fix=fix, path=scope.node.path
    )


def catalogued(
    code: str,
    *,
    prop: str,
    value: Any,
    problem: str,
    allowed: str,
    fix: str,
    path: str | None = None,
) -> TritonValidationError:
    """A TritonValidationError with a catalogued code; the pure checks leave ``path`` to their caller."""
    if code not in ERROR_CODES:  # pragma: no cover - guards the catalogue
        raise KeyError(f"error code {code!r} is not in cdk_triton.constructs.errors.ERROR_CODES")
    return TritonValidationError(
        code, prop=prop, value=value, problem=problem, allowed=allowed, fix=fix, path=path
    )


def located(scope: IConstruct, err: TritonValidationError) -> TritonValidationError:
    """Re-locate an error from the config layer at the construct path (keeps its code)."""
    if isinstance(err, TritonValidationErrors):
        return TritonValidationErrors([located(scope, e) for e in err.errors])
    return err.at(scope.node.path)
