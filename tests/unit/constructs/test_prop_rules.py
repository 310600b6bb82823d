"""Every prop of every construct, the rule that checks it and its error code: the README's "Prop rules".

``RULES`` is that table; each row has a bad value that AWS or Triton would refuse at deploy, and the
test asserts the construct refuses it at synth with that code and prop, before any resource is
written. The README table must equal ``RULES`` row for row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_s3 as s3

from cdk_triton.config.manifest import Manifest
from cdk_triton.config.server_options import ServerOptions
from cdk_triton.constructs import (
    EndpointAttributes,
    ModelArtifacts,
    TritonAlarms,
    TritonDashboard,
    TritonMetrics,
    TritonModel,
    TritonModelPackageGroup,
)
from cdk_triton.errors import TritonValidationError, TritonValidationErrors
from tests.unit.constructs.support import EXAMPLE, manifest_with, new_stack
from tests.unit.constructs.test_errors import CASES, EXPECTED, STACK_ENV, _edited, _mme_bucket, _target, sme

Case = Callable[[cdk.Stack], Any]


def _bucket(s: cdk.Stack) -> s3.IBucket:
    return s3.Bucket.from_bucket_name(s, "B2", "models-123456789012")


def _without_targets() -> Manifest:
    """A Manifest built in code (no file, so no reader check) whose MME entry lists no archive."""
    m = manifest_with()
    entry = dataclasses.replace(m.endpoints["multi"], target_models={})
    return dataclasses.replace(m, endpoints={**m.endpoints, "multi": entry})


def _long_target_model(data: dict[str, Any]) -> None:
    """A consistent archive entry (hash in the name, URI = prefix + name) whose name is over 1024."""
    name = "r" * 1010 + "-ca978112ca1b.tar.gz"
    _target(data, target_model=name, s3_uri=data["endpoints"]["multi"]["s3_prefix"] + name)


def _scaled(s: cdk.Stack) -> Any:
    return sme(s).auto_scale(max_capacity=2)


#: (construct, prop, rule, code, bad input or None for the catalogue's case of ``code``, the prop the
#: error names or None for the catalogue's).
RULES: list[tuple[str, str, str, str, Case | None, str | None]] = [
    # ---- ModelArtifacts
    ("ModelArtifacts.from_manifest", "manifest", "the file exists", "ManifestNotFound", None, None),
    ("ModelArtifacts.from_manifest", "manifest", "valid JSON of the manifest schema", "InvalidManifest", None, None),
    ("ModelArtifacts.from_manifest", "manifest", "schema_version supported", "UnsupportedManifestVersion", None, None),
    ("ModelArtifacts.from_manifest", "endpoint", "a key of the manifest's endpoints", "UnknownManifestEndpoint", None, None),
    ("ModelArtifacts.from_manifest", "manifest entry", "every S3 location is s3://<bucket>/<key>", "ManifestUriNotS3", None, None),
    ("ModelArtifacts.from_manifest", "manifest entry", "hashes are sha256; MME archive names carry theirs (<model>-<sha12>.tar.gz)", "ManifestHashMismatch", None, None),
    ("ModelArtifacts.from_manifest", "manifest entry", "models, steps and default model exist; archive URI = prefix + name; names match keys", "ManifestBrokenReference", None, None),
    ("ModelArtifacts.from_manifest", "manifest entry", "an MME entry holds at least one target model", "MmeWithoutModels",
     lambda s: sme(s, artifacts=ModelArtifacts.from_manifest(_without_targets(), "multi")),
     "manifest endpoints.multi.target_models"),
    ("ModelArtifacts.from_manifest", "manifest entry", "TargetModels SageMaker accepts", "InvalidTargetModel",
     lambda s: sme(s, artifacts=_edited(_long_target_model)),
     "manifest endpoints.multi.target_models['resnet_ts']"),
    ("ModelArtifacts.from_bucket", "key", "a prefix ending '/' or a .tar.gz key (MME: a prefix)", "InvalidArtifactKey", None, None),
    ("ModelArtifacts.from_bucket", "default_model", "a Triton model directory name", "InvalidModelName",
     lambda s: TritonModel(s, "M", artifacts=ModelArtifacts.from_bucket(_bucket(s), "repo/", default_model="my model")),
     "default_model"),
    ("ModelArtifacts.from_bucket", "default_model", "one of models (when given)", "DefaultModelNotInArtifacts",
     lambda s: TritonModel(
         s, "M", artifacts=ModelArtifacts.from_bucket(_bucket(s), "repo/", default_model="a", models=["b"])
     ),
     "server_options.default_model_name"),
    ("ModelArtifacts.from_bucket", "default_model", "set for an SME (or models of one entry)", "DefaultModelRequired", None, None),
    ("ModelArtifacts.from_bucket", "models", "Triton model directory names", "InvalidModelName",
     lambda s: TritonModel(
         s, "M", artifacts=ModelArtifacts.from_bucket(_bucket(s), "repo/", default_model="a", models=["a", "../b"])
     ),
     "models"),
    ("ModelArtifacts.from_bucket", "target_models", "not empty for an MME", "MmeWithoutModels", None, None),
    ("ModelArtifacts.from_bucket", "target_models", "TargetModels of 1..1024 printable characters ending .tar.gz", "InvalidTargetModel", None, None),
    ("ModelArtifacts.from_bucket", "target_models", "TargetModels unique ignoring case", "TargetModelCaseCollision", None, None),
    ("ModelArtifacts.from_bucket", "target_models", "logical names unique ignoring case", "TargetModelCaseCollision",
     lambda s: _mme_bucket(s, {"resnet": "resnet-0a1b2c3d4e5f.tar.gz", "ResNet": "resnet_v2-0a1b2c3d4e5f.tar.gz"}),
     "target_models"),
    ("ModelArtifacts.from_bucket", "gpu_architectures", "sm + compute capability", "InvalidGpuArchitecture", None, None),
    ("ModelArtifacts.from_asset", "path", "an existing .tar.gz file", "InvalidAssetPath", None, None),
    ("ModelArtifacts.from_asset", "default_model", "a Triton model directory name", "InvalidModelName",
     lambda s: TritonModel(s, "M", artifacts=ModelArtifacts.from_asset(EXAMPLE, default_model="a b")),
     "default_model"),
    # ---- TritonImage
    ("TritonImage.for_version", "version", "a release in the vendored tables", "UnknownTritonVersion", None, None),
    ("TritonImage.for_version", "version", "an image in the stack's region", "ImageNotInRegion", None, None),
    ("TritonImage.from_ecr_repository", "tag", "an ECR tag or sha256 digest", "InvalidImageTag", None, None),
    # ---- TritonModel (and TritonEndpoint, which passes these on)
    ("TritonModel", "model_name", "SageMaker's name pattern", "InvalidSageMakerModelName", None, None),
    ("TritonModel", "environment", "known SAGEMAKER_TRITON_* names", "UnknownTritonEnvironmentVariable", None, None),
    ("TritonModel", "environment", "no variable ServerOptions manages", "ReservedEnvironmentVariable", None, None),
    ("TritonModel", "environment", "names [a-zA-Z_][a-zA-Z0-9_]*, values <= 1024 characters", "InvalidEnvironmentVariable", None, None),
    ("TritonModel", "environment", "at most 100 variables", "InvalidEnvironmentVariable",
     lambda s: sme(s, environment={f"V{i}": "1" for i in range(101)}),
     "environment"),
    ("TritonModel", "metrics", "an image that publishes metrics (23.07+)", "MetricsNeedNewerImage", None, None),
    ("TritonModel", "metrics.namespace", "a custom CloudWatch namespace", "InvalidMetricNamespace", None, None),
    ("TritonModel", "metrics.metrics_port", "1..65535", "InvalidPort",
     lambda s: sme(s, metrics=TritonMetrics(metrics_port=0)),
     "metrics_port"),
    ("TritonModel", "network_isolation", "off when metrics are published", "MetricsNeedNetwork", None, None),
    ("TritonModel", "security_groups / vpc_subnets", "only with vpc", "SecurityGroupsWithoutVpc", None, None),
    ("TritonModel", "server_options", "publish_metrics_to_cloudwatch only through metrics=", "UseTritonMetrics", None, None),
    ("TritonModel", "server_options", "multi_model agrees with the artifacts", "ServerOptionsModeConflict", None, None),
    ("TritonModel", "server_options", "default_model_name one of the artifacts' models", "DefaultModelNotInArtifacts", None, None),
    ("TritonModel", "server_options", "no default_model_name on an MME", "DefaultModelInMme", None, None),
    ("TritonModel", "server_options", "default_model_name a model directory name", "InvalidModelName", None, None),
    ("TritonModel", "server_options", "ports 1..65535", "InvalidPort", None, None),
    ("TritonModel", "server_options", "safe_port_range lo <= hi", "InvalidPortRange", None, None),
    ("TritonModel", "server_options", "distinct ports", "PortConflict", None, None),
    ("TritonModel", "server_options", "thread counts", "InvalidThreadCount", None, None),
    ("TritonModel", "server_options", "log_verbose >= 0", "InvalidLogLevel", None, None),
    ("TritonModel", "server_options", "byte sizes > 0", "InvalidByteSize", None, None),
    ("TritonModel", "server_options", "model_load_gpu_limit in (0, 1]", "InvalidGpuLimit", None, None),
    ("TritonModel", "server_options", "allow_metrics when publishing", "MetricsPublishingNeedsMetrics", None, None),
    ("TritonModel", "server_options", "CloudWatch settings only when publishing", "CloudWatchSettingsWithoutPublishing", None, None),
    ("TritonModel", "server_options", "additional_args are --flags", "InvalidAdditionalArg", None, None),
    ("TritonModel", "server_options.additional_args", "26.03+: --http-restricted-api a SageMaker caller can satisfy", "RestrictedApiUnreachable", None, None),
    ("TritonModel", "server_options", "additional_args set no managed flag", "ManagedFlagInAdditionalArgs", None, None),
    ("TritonModel", "artifacts (encryption key)", "a KMS key ARN, not an alias", "InvalidKmsKeyArn", None, None),
    # ---- TritonEndpoint
    ("TritonEndpoint", "instance_type", "ml.<family>.<size>", "InvalidInstanceType", None, None),
    ("TritonEndpoint", "instance_type", "compute capability the release supports", "ComputeCapabilityTooLow", None, None),
    ("TritonEndpoint", "instance_type", "a GPU for TensorRT plans", "GpuArtifactsOnCpuInstance", None, None),
    ("TritonEndpoint", "instance_type", "the plans' GPU architecture", "GpuArchitectureMismatch", None, None),
    ("TritonEndpoint", "instance_type", "one GPU for a GPU MME", "MmeNeedsSingleGpu", None, None),
    ("TritonEndpoint", "inference_ami_version", "one of botocore's InferenceAmiVersion values", "UnknownInferenceAmiVersion", None, None),
    ("TritonEndpoint", "inference_ami_version", "accepted for the instance family", "InferenceAmiNotForInstance", None, None),
    ("TritonEndpoint", "inference_ami_version", "a driver that runs the release's CUDA", "InferenceAmiCannotRunRelease", None, None),
    ("TritonEndpoint", "inference_ami_version", "unset only where a host runs the release", "NoHostForRelease", None, None),
    ("TritonEndpoint", "instance_type", "x86_64 or NVIDIA GPU (no Graviton, Inferentia)", "NoTritonImageForInstance", None, None),
    ("TritonEndpoint", "endpoint_name", "SageMaker's name pattern", "InvalidEndpointName", None, None),
    ("TritonEndpoint", "variant_name", "SageMaker's name pattern", "InvalidVariantName", None, None),
    ("TritonEndpoint", "instance_count", ">= 1", "InvalidInstanceCount", None, None),
    ("TritonEndpoint", "volume_encryption_key", "none on local-NVMe types", "KmsKeyOnLocalStorage", None, None),
    ("TritonEndpoint", "volume_size", "1..512 GiB on EBS-only types", "InvalidVolumeSize", None, None),
    ("TritonEndpoint", "volume_size", "holds the model data and a tar.gz's unpacked copy (unset on EBS-only types: sized from 30 up to 512 GB)", "VolumeTooSmall", None, None),
    ("TritonEndpoint", "container_startup_health_check_timeout", "60..3600 s", "InvalidTimeout",
     lambda s: sme(s, container_startup_health_check_timeout=cdk.Duration.hours(2)),
     "container_startup_health_check_timeout"),
    ("TritonEndpoint", "model_data_download_timeout", "60..3600 s", "InvalidTimeout", None, None),
    ("TritonEndpoint", "data_capture.sampling_percentage", "0..100", "InvalidSamplingPercentage", None, None),
    ("TritonEndpoint", "data_capture.capture_input / capture_output", "at least one", "InvalidDataCapture", None, None),
    ("TritonEndpoint", "data_capture.prefix", "s3://<bucket>/<prefix> <= 512 characters", "InvalidDataCapture",
     lambda s: sme(s, data_capture=_capture(s, prefix="p/" * 300)),
     "data_capture.prefix"),
    ("TritonEndpoint", "deployment", "exactly one update policy", "InvalidDeploymentPolicy", None, None),
    ("TritonEndpoint", "deployment.step", "canary <= 50 % of the fleet", "CanaryTooLarge", None, None),
    ("TritonEndpoint", "deployment.step / rolling_batch", "valid shares of the fleet", "InvalidTrafficStep", None, None),
    ("TritonEndpoint", "deployment.wait_interval / termination_wait / maximum_execution_timeout", "SageMaker's ranges", "InvalidTimeout",
     lambda s: sme(s, deployment=_guardrails(wait=cdk.Duration.hours(2))),
     "deployment.wait_interval"),
    ("TritonEndpoint", "deployment.rollback_alarms", "at most 10", "TooManyRollbackAlarms", None, None),
    ("TritonEndpoint", "shadow", "a single-model endpoint and candidate", "ShadowOnMultiModel", None, None),
    ("TritonEndpoint", "shadow.sampling_percentage", "1..100", "InvalidShadowSampling", None, None),
    ("TritonEndpoint", "shadow.variant_name", "not the production variant's name", "ShadowVariantNameClash", None, None),
    (
        "TritonEndpoint",
        "deployment",
        "no rolling update beside a shadow (blue/green or none)",
        "ShadowWithRollingUpdate",
        None,
        None,
    ),
    ("TritonEndpoint", "(the stack)", "<= 500 CloudFormation resources", "StackResourceLimit", None, None),
    ("TritonEndpoint", "(the stack)", "<= 200 outputs", "TooManyOutputs", None, None),
    ("TritonEndpoint", "(the stack)", "<= 200 parameters", "TooManyParameters", None, None),
    ("TritonEndpoint", "(the stack)", "<= 200 mappings", "TooManyMappings", None, None),
    ("TritonEndpoint", "(the stack)", "template <= 1,000,000 bytes (S3 template URL)", "TemplateTooLarge", None, None),
    ("TritonEndpoint", "artifacts", "each TargetModel map entry <= 4,096 characters (one standard SSM parameter)", "TargetModelMapEntryTooLong", None, None),
    ("TritonEndpoint", "model", "either model= or the model's props (artifacts, image, ...), not both", "ModelGivenTwice", None, None),
    ("TritonEndpoint", "model / artifacts", "one of them", "ModelRequired", None, None),
    ("TritonEndpoint", "model", "a model of the endpoint's account and region", "ModelInOtherEnvironment", None, None),
    # ---- scaling
    ("auto_scale", "min_capacity / max_capacity", "1 <= min <= max", "InvalidCapacity", None, None),
    ("auto_scale", "(instance_type)", "not burstable", "BurstableNotScalable", None, None),
    ("scale_on_gpu_utilization", "target_percent", "0 < percent <= 100", "InvalidTargetValue", None, None),
    ("scale_on_gpu_utilization", "(instance_type)", "a GPU type", "GpuScalingOnCpuInstance", None, None),
    ("scale_on_invocations_per_instance", "invocations_per_minute", "> 0", "InvalidTargetValue",
     lambda s: _scaled(s).scale_on_invocations_per_instance(invocations_per_minute=0),
     "invocations_per_minute"),
    # ---- monitoring
    ("TritonDashboard", "endpoints", "<= 500 widgets", "DashboardTooLarge", None, None),
    ("TritonDashboard", "dashboard_name", "CloudWatch's name pattern", "InvalidDashboardName", None, None),
    ("TritonDashboard", "period", "1, 5, 10, 30 s or whole minutes", "InvalidPeriod",
     lambda s: TritonDashboard(s, "Dash", endpoints=[sme(s)], period=cdk.Duration.seconds(90)),
     "period"),
    ("TritonAlarms", "error_rate_percent / gpu_memory_percent", "0 < percent <= 100", "InvalidAlarmThreshold", None, None),
    ("TritonAlarms", "p99_latency", "> 0", "InvalidAlarmThreshold",
     lambda s: TritonAlarms(s, "Alarms", endpoint=sme(s), p99_latency=cdk.Duration.millis(0)),
     "p99_latency"),
    ("TritonAlarms", "cache_hit_ratio", "0 < ratio <= 1", "InvalidAlarmThreshold",
     lambda s: TritonAlarms(s, "Alarms", endpoint=sme(s), cache_hit_ratio=0),
     "cache_hit_ratio"),
    ("TritonAlarms", "model_loading_wait", "> 0", "InvalidAlarmThreshold",
     lambda s: TritonAlarms(s, "Alarms", endpoint=sme(s), model_loading_wait=cdk.Duration.millis(0)),
     "model_loading_wait"),
    ("TritonAlarms", "period", "10, 30 s or whole minutes", "InvalidPeriod", None, None),
    ("TritonAlarms", "evaluation_periods", ">= 1 and x period <= one day", "InvalidEvaluationPeriods", None, None),
    ("TritonAlarms", "endpoint", "an imported endpoint has variant_name", "MissingEndpointAttribute",
     lambda s: TritonAlarms(s, "Alarms", endpoint=_imported(s)),
     "variant_name"),
    # ---- imported endpoints
    ("from_endpoint_attributes", "endpoint_name", "SageMaker's name pattern", "InvalidEndpointName",
     lambda s: _imported(s, endpoint_name="a_b"), "endpoint_name"),
    ("from_endpoint_attributes", "variant_name", "SageMaker's name pattern", "InvalidVariantName",
     lambda s: _imported(s, variant_name="All Traffic"), "variant_name"),
    ("from_endpoint_attributes", "mode", "'SingleModel', 'MultiModel' or 'InferenceComponents' ('SME', 'MME', 'IC' deprecated)", "InvalidEndpointMode", None, None),
    ("from_endpoint_attributes", "component_names", "InferenceComponentNames (mode 'InferenceComponents')", "InvalidComponentName", None, None),
    ("from_endpoint_attributes", "instance_type", "ml.<family>.<size>", "InvalidInstanceType",
     lambda s: _imported(s, instance_type="g5.xlarge"), "instance_type"),
    ("from_endpoint_attributes", "gpu_count", ">= 0", "InvalidGpuCount", None, None),
    ("from_endpoint_attributes", "instance_count", ">= 1", "InvalidInstanceCount",
     lambda s: _imported(s, instance_count=0), "instance_count"),
    ("from_endpoint_attributes", "(variant_name for scaling)", "given when auto_scale is asked", "MissingEndpointAttribute", None, None),
    ("add_verification", "checks", "at least one model with a recorded sample (response included)", "NoRecordedSamples", None, None),
    ("add_verification", "sample.request", "recorded S3 URIs, or the sample files beside the manifest", "SampleFileMissing", None, None),
    ("add_verification", "deadline", "30 s to 14 min (the Lambda's 15 min less the margin)", "InvalidVerificationDeadline", None, None),
    ("add_verification", "sample", "others_percent 0..100, max_checks 1..5000, parallelism 1..64", "InvalidVerificationSample", None, None),
    ("add_verification", "checks", "s3:// sample objects, tolerances >= 0, a model", "InvalidVerificationCheck", None, None),
    ("TritonEndpoint", "(instance_groups of the built models)", "KIND_GPU only on a GPU instance type", "GpuInstanceGroupOnCpuInstance", None, None),
    ("TritonEndpoint", "(instance_groups of the built models)", "GPU indexes below the instance type's GPU count", "GpuIndexOutOfRange", None, None),
    ("TritonModel", "(TensorRT plans of the manifest)", "built by the image's TensorRT version", "TensorRTVersionMismatch", None, None),
    ("TritonModel", "(TorchScript of the manifest)", "saved by a torch no newer than the image's confirmed libtorch", "TorchScriptTooNew", None, None),
    ("TritonModel", "(ONNX models of the manifest)", "recorded opset and IR version within the image's ONNX Runtime", "OnnxTooNewForImage", None, None),
    ("TritonModel", "server_options.response_cache_byte_size", "set when a model enables response_cache", "ResponseCacheNotConfigured", None, None),
    ("TritonEndpoint", "instance_count", "1 when a built model is sequence-batched", "SequenceBatchingInstances", None, None),
    ("TritonModel", "image (Triton release)", "no NVIDIA advisory of CVSS >= 9.0 reachable on SageMaker, or each acknowledged with a reason", "CriticalAdvisory", None, None),
    ("TritonModel", "acknowledged_advisories", "CVE ids of the vendored advisory table", "UnknownAdvisory", None, None),
    ("TritonModel", "acknowledged_advisories.<CVE>", "a non-empty reason", "AdvisoryReasonMissing", None, None),
    ("TritonModelPackageGroup", "model_package_group_name", "1-63 of [a-zA-Z0-9-], no leading or trailing '-'", "InvalidModelPackageGroupName", None, None),
    ("TritonModelPackageGroup", "read_accounts", "12-digit account ids", "InvalidAccountId",
     lambda s: TritonModelPackageGroup(s, "Group", read_accounts=["1234567890123"]), "read_accounts"),
    ("TritonModelPackageGroup", "write_accounts", "12-digit account ids", "InvalidAccountId", None, None),
    # ---- inference components
    ("TritonComponentsEndpoint", "artifacts", "an InferenceComponents (or MultiModel) entry: one archive per model", "ComponentModeNotSupported", None, None),
    ("TritonComponentsEndpoint", "components", "logical names of the artifacts' models", "UnknownComponent", None, None),
    ("TritonComponentsEndpoint", "components.<model>.copies / min_copies / max_copies", "0 <= min <= copies <= max, max >= 1", "InvalidCopyCount", None, None),
    ("TritonComponentsEndpoint", "components.<model>.min_memory_mb / max_memory_mb / accelerators / cpu_cores", ">= 128 MB (max >= min), >= 1, >= 0.25; memory known or given", "InvalidComputeRequirement", None, None),
    ("TritonComponentsEndpoint", "components.<model>.startup_timeout", "60 s..1 h", "InvalidStartupTimeout", None, None),
    ("TritonComponentsEndpoint", "components.<model> (requirements)", "one copy fits one instance of the type", "ComponentDoesNotFit", None, None),
    ("TritonComponentsEndpoint", "components.<model>.accelerators", "above every instance_group gpus: index of its models", "ComponentGpuPlacement", None, None),
    ("TritonComponentsEndpoint", "min_instances / max_instances", "0 <= min <= max, max >= 1; 0 only when every component may reach 0 copies", "InvalidInstanceScaling", None, None),
    ("TritonComponentsEndpoint", "max_instances", "holds the initial copies and the copies at their maxima", "CopiesExceedInstances", None, None),
    ("TritonComponentsEndpoint", "components.<model>.min_memory_mb", "at least the weights (size_bytes) of the component's models (below their memory_bytes: a warning)", "ComponentMemoryTooSmall", None, None),
    ("TritonEndpoint", "async_inference", "a SingleModel endpoint (InvokeEndpointAsync has no TargetModel and no InferenceComponentName)", "AsyncNeedsSingleModel", None, None),
    ("TritonEndpoint", "async_inference.<key>", "within SageMaker's limits (concurrency 1..1000, timeout 1 s..1 h, 0 <= min_capacity <= max_capacity, max_capacity >= 1)", "InvalidAsyncInference", None, None),
    ("TritonEndpoint", "instance_type / instance_pools / instance_provision_timeout", "instance_type or instance_pools, never both; the timeout with pools only", "InstanceTypeOrPools", None, None),
    ("TritonEndpoint", "instance_pools / instance_provision_timeout", "1..5 distinct instance types of one storage kind; timeout 5 min..1 h", "InvalidInstancePools", None, None),
    ("TritonEndpoint", "instance_pools", "a SingleModel endpoint (SageMaker documents pools for single-model endpoints and inference components)", "InstancePoolsOnMultiModel", None, None),
    ("TritonEndpoint", "instance_pools", "pools whose host decisions need one InferenceAmiVersion", "InstancePoolsHostMismatch", None, None),
    ("TritonComponentsEndpoint", "(component names)", "distinct after prefixing ('_' and '.' become '-')", "ComponentNameCollision", None, None),
    ("TritonComponentsEndpoint", "auto_scale", "refused: managed instance scaling owns the instances", "AutoScaleOnComponentsEndpoint", None, None),
]  # fmt: skip


def _capture(s: cdk.Stack, **kw: Any) -> Any:
    from cdk_triton.constructs import DataCapture

    return DataCapture(bucket=_bucket(s), **kw)


def _guardrails(*, wait: cdk.Duration) -> Any:
    from cdk_triton.constructs import DeploymentGuardrails

    return DeploymentGuardrails.all_at_once(wait_interval=wait)


def _imported(s: cdk.Stack, **kw: Any) -> Any:
    from cdk_triton.constructs import TritonEndpoint

    return TritonEndpoint.from_endpoint_attributes(
        s, "Imported", EndpointAttributes(**{"endpoint_name": "other", **kw})
    )


def _ids() -> list[str]:
    return [f"{i:02d}-{row[3]}-{row[1]}" for i, row in enumerate(RULES)]


@pytest.mark.parametrize("row", RULES, ids=_ids())
def test_each_prop_rule_refuses_its_bad_value_at_synth(
    row: tuple[str, str, str, str, Case | None, str | None],
) -> None:
    _, _, _, code, case, prop = row
    stack = new_stack(env=STACK_ENV.get(code, cdk.Environment(account="123456789012", region="us-east-1")))
    with pytest.raises(TritonValidationError) as info:
        (case or CASES[code])(stack)
    err = info.value
    errors = err.errors if isinstance(err, TritonValidationErrors) else [err]
    assert [e.code for e in errors] == [code], [str(e) for e in errors]
    expected_prop = prop if prop is not None else EXPECTED[code][0]
    assert errors[0].prop.endswith(expected_prop) or errors[0].prop == expected_prop, errors[0].prop
    assert errors[0].path and errors[0].path.startswith(stack.node.path + "/")
    assert errors[0].allowed and errors[0].fix


def _readme_rows() -> list[tuple[str, str, str, str]]:
    readme = (Path(__file__).resolve().parents[3] / "cdk_triton" / "constructs" / "README.md").read_text()
    table = readme.split("## Prop rules", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[3].startswith("`"):
            rows.append((cells[0].strip("`"), cells[1].strip("`"), cells[2], cells[3].strip("`")))
    return rows


def test_readme_table_is_the_rule_table() -> None:
    assert _readme_rows() == [(c, p, r, code) for c, p, r, code, _, _ in RULES]


def test_every_catalogued_code_has_a_prop_row() -> None:
    from cdk_triton.constructs import ERROR_CODES

    assert {row[3] for row in RULES} == set(ERROR_CODES)


def test_server_options_direct_construction_is_still_checked() -> None:
    """ServerOptions is validated by the config layer; the construct re-raises at its path."""
    stack = new_stack()
    with pytest.raises(TritonValidationError) as info:
        sme(stack, server_options=ServerOptions(thread_count=0))
    assert info.value.code == "InvalidThreadCount" and info.value.path == "TestStack/Ep/Model"
