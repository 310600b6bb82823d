"""The catalogue of error codes the config layer raises, and of the codes sibling layers share.

A code lives in exactly one catalogue, that of the lowest layer that raises it; the layers above
import it from here (``cdk_triton.constructs.errors``, ``cdk_triton.builder.errors``,
``cdk_triton.local.errors``, ``cdk_triton.pipeline.errors``, ``cdk_triton.tune.errors``). A rule that
two sibling layers check alike (the constructs at synth and the local endpoint at serve, say) has its
code here too, since neither sibling may import the other. The README error tables are generated
from the catalogues (``tests/unit/test_error_catalogues.py``, run as a module, rewrites them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: The declaration file (models.yaml), read by the build, the pipeline and tune: code -> meaning.
DECLARATION_FILE_ERRORS: dict[str, str] = {
    "InvalidYaml": "the declaration file is not valid YAML",
    "DeclarationNotFound": "the declaration file does not exist",
}

#: The declaration's rules (``config.declaration``): code -> what it means.
DECLARATION_ERRORS: dict[str, str] = {
    "UnknownKey": "a key the declaration does not know (the message names the closest valid key)",
    "InvalidType": "a value of the wrong type",
    "MissingField": "a required field is missing",
    "UnknownDtype": "a data type Triton does not have",
    "InvalidShape": "a shape that is not a list of positive dims (-1 = dynamic)",
    "UnknownFormat": "a model format other than torchscript, onnx, tensorrt, python, ensemble",
    "InvalidSource": "a source naming zero or several kinds",
    "SourceFormatMismatch": "a source that cannot produce the declared format",
    "SourceNotFound": "a source or state_dict path that does not exist",
    "InvalidFactoryReference": "a factory that is not 'module:callable'",
    "MissingSeed": "a factory without a seed",
    "InvalidMaxBatchSize": "a negative max_batch_size, batching options without batching, or an ensemble "
    "batching more than a step",
    "PreferredBatchTooLarge": "a preferred/opt batch size above max_batch_size",
    "DuplicateModelName": "two models with the same name",
    "DuplicateTensorName": "two inputs or outputs with the same name",
    "DuplicateModelInEndpoint": "a model name in two archives of one multi-model endpoint",
    "DuplicateEndpointName": "two endpoints with the same name",
    "UnknownModelReference": "an ensemble step, a python model's call or an endpoint naming an undeclared model",
    "EnsembleCycle": "an ensemble that contains itself",
    "CallCycle": "a python model that calls itself, directly or through the models it calls (business logic "
    "scripting)",
    "InvalidEnsembleMap": "an ensemble input/output map naming unknown tensors",
    "UnknownEndpointMode": "a mode the mode table (``cdk_triton.config.modes``) does not list by name or alias "
    "(the message lists them)",
    "NotAComponentsEndpoint": "components, min_instances or max_instances on an endpoint whose mode is not "
    "InferenceComponents",
    "UnknownComponentModel": "a components key that is not a model of the endpoint's models (the message names the "
    "closest)",
    "MissingDefaultModel": "a single-model endpoint with several models and no default_model",
    "InvalidPackaging": "a packaging other than directory or tar.gz",
    "InvalidInstanceGroup": "an instance group kind or count Triton does not accept",
    "InvalidWarmup": "a warmup data kind other than zero or random",
    "InvalidRequirement": "a python model requirement that is not a PEP 508 name[extras] with versions and markers "
    "(URLs, paths and pip options are refused)",
    "ContainerRequirement": "a python model requirement naming what the Triton container provides (numpy)",
    "InvalidOption": "an option that does not apply to the model's format",
    "UnknownPrecision": "a TensorRT precision other than fp32, tf32, fp16, int8",
    "UnknownPyTorchParameter": "a PyTorch backend parameter that does not exist",
    "RemovedPyTorchParameter": "a PyTorch parameter the target release no longer reads (ENABLE_NVFUSER after 23.11)",
    "PyTorchParameterTooNew": "a PyTorch parameter first read by a newer release than the target (DISABLE_CUDNN before 24.06)",
    "UnknownTritonRelease": "a triton_version not in the release table",
    "InvalidS3Uri": "an artifact location that is not s3://bucket/prefix",
    "InvalidShapeRange": "a shape_range whose min/opt/max lists do not fit the shape or are not ordered",
    "MissingShapeRange": "a TensorRT model input with a dynamic dim and no shape_range",
    "InvalidSequenceBatching": "sequence_batching with dynamic_batching, on an ensemble, implicit state on a "
    "python model, a control tensor that is a declared input, an unknown strategy or correlation id type",
}

#: Rules the declaration (at build) and the constructs (at synth) both check: one code, one meaning for
#: both, and each layer's catalogue surfaces this group whole.
BUILD_AND_SYNTH_RULE_ERRORS: dict[str, str] = {
    "InvalidModelName": "a model name that is not a Triton model directory name (the declaration's name, "
    "default_model_name, from_bucket default_model / models)",
    "InvalidInstanceType": "an instance type that is not a SageMaker hosting instance type 'ml.<family>.<size>'",
    "UnknownInstanceType": "a well-formed instance type the instance table does not know (the message names the "
    "closest known type; the constructs warn cdk-triton:UnknownGpuInstanceType instead)",
    "NoTritonImageForInstance": "a Graviton (arm64) or Inferentia/Trainium instance type: no sagemaker-tritonserver "
    "image runs there",
    "MmeNeedsSingleGpu": "a GPU multi-model endpoint on an instance type with more than one GPU",
    "ComputeCapabilityTooLow": "the instance's GPU is older than the Triton release supports (e.g. ml.p2, K80 3.7 < 6.0)",
    "InvalidKmsKeyArn": "a KMS key reference that is not a key ARN arn:<partition>:kms:<region>:<account>:key/<id> "
    "(an alias, an alias ARN, a bare key id, a wrong partition, region or account)",
    "GpuInstanceGroupOnCpuInstance": "a KIND_GPU instance group on an instance type without an NVIDIA GPU",
    "GpuIndexOutOfRange": "an instance group GPU index beyond the instance type's GPUs",
    "SequenceBatchingInstances": "a sequence-batched (stateful) model on an endpoint whose requests may reach "
    "several instances (a multi-model endpoint, instance_count or the autoscaling maximum above 1)",
    "InvalidCopyCount": "an inference component's copies or min_copies below 0, max_copies below 1, min_copies above "
    "max_copies, or copies outside min_copies..max_copies",
    "InvalidComputeRequirement": "an inference component's memory_mb / max_memory_mb below 128, max_memory_mb below "
    "memory_mb, accelerators below 1 or cpu_cores below 0.25",
    "InvalidStartupTimeout": "an inference component's startup_timeout_s outside 60..3600 seconds",
    "InvalidInstanceScaling": "managed instance scaling with min_instances below 0, max_instances below 1, or min "
    "above max",
    "ComponentNameCollision": "two models of one components endpoint whose component names are equal ('_' and '.' "
    "become '-')",
    "InvalidComponentName": "a component name that is not an InferenceComponentName ([a-zA-Z0-9]([-a-zA-Z0-9]*"
    "[a-zA-Z0-9])?, at most 63 characters)",
    "CopiesExceedInstances": "an inference-components endpoint whose copies (initial, or at their scaling maxima) "
    "need more instances than max_instances (checked at build on the declared requirements, at synth on the "
    "derived ones)",
    "ComponentMemoryTooSmall": "an inference component whose min_memory_mb is below the weights (size_bytes) of "
    "its models (below their memory_bytes: the warning ComponentMemoryBelowModel, at build and synth)",
    "ComponentDoesNotFit": "an inference component whose accelerators, CPU cores or memory exceed one instance of the "
    "endpoint's type (checked at build, synth and serve: no copy could ever be placed)",
    "CriticalAdvisory": "a Triton release with an NVIDIA advisory of CVSS >= 9.0 that a SageMaker deployment reaches, "
    "not acknowledged (the message names the CVEs, the first SageMaker release with the fixes and the acknowledgment)",
    "UnknownAdvisory": "an acknowledged_advisories key that is not a CVE of the vendored advisory table",
    "AdvisoryReasonMissing": "an acknowledged_advisories entry without a reason",
}

#: Codes two sibling layers raise alike (the constructs and the local endpoint or the pipeline).
SHARED_RULE_ERRORS: dict[str, str] = {
    "InvalidAsyncInference": "an async: value (AsyncInferenceOptions) outside SageMaker's limits "
    "(max_concurrent_invocations_per_instance 1..1000, invocation_timeout_s 1..3600, min_instances >= 0, "
    "max_instances >= max(1, min_instances), backlog_per_instance > 0)",
    "ResponseCacheNotConfigured": "a model with response_cache enabled, and no response cache on the server "
    "(ServerOptions.response_cache_byte_size, as the release reads the settings)",
    "InvalidInstancePools": "instance_pools with no or more than five instance types, one listed twice, or a "
    "provisioning timeout outside 300..3600 s (VariantInstanceProvisionTimeoutInSeconds)",
    "NoRecordedSamples": "a deploy verification of an endpoint with no recorded sample (or an empty checks list)",
    "RestrictedApiUnreachable": "a --http-restricted-api in additional_args that a 26.03+ SageMaker port applies and "
    "no SageMaker caller can satisfy ('health': /ping; 'model-repository' on a multi-model endpoint: the loads; "
    "'inference' with a header other than X-Amzn-SageMaker-Custom-Attributes)",
}

#: The vendored tables and the manifest: code -> what it means.
TABLE_AND_MANIFEST_ERRORS: dict[str, str] = {
    "UnknownTritonVersion": "the Triton version has no SageMaker image in the vendored tables",
    "ImageNotInRegion": "the stack's concrete region has no sagemaker-tritonserver image of that version",
    "UnknownManifestEndpoint": "the endpoint key is not in the build manifest",
    "ManifestNotFound": "the manifest path does not exist",
    "InvalidManifest": "the manifest file is not a valid cdk-triton manifest",
    "UnsupportedManifestVersion": "the manifest's schema_version is not supported",
    "GpuReadingsInvalid": "the GPU readings report (gpu-readings.json) cannot be read or an entry is malformed",
}

#: The GPU host of a production variant (``config.gpu_hosts``): code -> what it means.
HOST_ERRORS: dict[str, str] = {
    "UnknownInferenceAmiVersion": "an inference_ami_version that is not one of botocore's InferenceAmiVersion values",
    "InferenceAmiNotForInstance": "an inference_ami_version not accepted for the instance family (or on a CPU type)",
    "InferenceAmiCannotRunRelease": "an inference_ami_version whose driver provably cannot run the release's CUDA",
    "InstancePoolsHostMismatch": "instance pools whose host decisions need different InferenceAmiVersion values "
    "(a production variant carries one)",
    "NoHostForRelease": "the default host provably cannot run the release and no InferenceAmiVersion listed for "
    "the family can (the fix names the one to pin, or another family or release)",
}

#: ServerOptions and the container environment: code -> what it means.
SERVER_OPTIONS_ERRORS: dict[str, str] = {
    "UnknownTritonEnvironmentVariable": "a raw SAGEMAKER_TRITON_* variable that the container does not know",
    "InvalidEnvironmentValue": "a container variable whose value cannot be parsed, or a `serve --env` item "
    "that is not NAME=VALUE",
    "InvalidPort": "a port outside 1..65535",
    "InvalidMetricNamespace": "the Triton metrics namespace is not a custom CloudWatch namespace",
    "MetricsPublishingNeedsMetrics": "publishing to CloudWatch with Triton's metrics switched off",
    "InvalidPortRange": "safe_port_range is not (lo, hi) with 1 <= lo <= hi <= 65535",
    "PortConflict": "the SageMaker, gRPC and metrics ports are not distinct",
    "InvalidThreadCount": "thread_count < 1 or buffer_manager_thread_count < 0",
    "InvalidLogLevel": "log_verbose is negative",
    "InvalidByteSize": "a shared-memory or response-cache size that is not positive",
    "InvalidGpuLimit": "model_load_gpu_limit outside (0, 1]",
    "DefaultModelInMme": "default_model_name on a multi-model endpoint",
    "AmbiguousDefaultModel": "no default_model_name, and a model repository with no or several top-level models",
    "CloudWatchSettingsWithoutPublishing": "a metrics namespace or log group without publishing",
    "InvalidLogGroupName": "a cloudwatch_log_group that is not a CloudWatch log group name",
    "InvalidAdditionalArg": "an additional tritonserver argument that is not a --flag",
    "ManagedFlagInAdditionalArgs": "additional_args sets a flag ServerOptions manages",
}

#: The model registry's shared rules (``config.registry``): the construct and the registration check them.
REGISTRY_ERRORS: dict[str, str] = {
    "InvalidAccountId": "an AWS account id that is not 12 digits (a model package group's read_accounts / "
    "write_accounts, a promotion stage's account, the accounts of the promotion's bucket and key policies)",
    "InvalidModelPackageGroupName": "a model package group name SageMaker refuses (1-63 of [a-zA-Z0-9-], "
    "no leading or trailing '-')",
}

#: The refusals of the hosting modes' rows (``config.modes``): a feature a mode does not support.
MODE_ERRORS: dict[str, str] = {
    "ModeUnsupported": "a feature the endpoint's hosting mode does not support (its row's refusal names why)",
    "ShadowOnMultiModel": "a shadow variant on a multi-model endpoint (SageMaker refuses it; deploy the candidate "
    "to a second endpoint instead)",
    "AsyncNeedsSingleModel": "asynchronous inference on a multi-model or inference-components endpoint "
    "(InvokeEndpointAsync has no TargetModel and no InferenceComponentName; declare a SingleModel endpoint)",
    "InstancePoolsOnMultiModel": "instance pools on a multi-model endpoint (SageMaker's instance pools guide "
    "documents them for single-model endpoints and inference components only)",
    "AutoScaleOnComponentsEndpoint": "auto_scale() of the variant's instances on an inference-components endpoint "
    "(managed instance scaling owns them)",
    "BusinessLogicOnPerModelArchives": "a python model that calls other models (business logic scripting) on a "
    "multi-model or inference-components endpoint, where each model is loaded on its own",
}

#: Every code of this catalogue.
ALL_CODES: dict[str, str] = {
    **DECLARATION_FILE_ERRORS,
    **DECLARATION_ERRORS,
    **BUILD_AND_SYNTH_RULE_ERRORS,
    **SHARED_RULE_ERRORS,
    **TABLE_AND_MANIFEST_ERRORS,
    **HOST_ERRORS,
    **SERVER_OPTIONS_ERRORS,
    **REGISTRY_ERRORS,
    **MODE_ERRORS,
}


def pick(codes: Iterable[str]) -> dict[str, str]:
    """The entries of ``codes`` (each must be catalogued here), for a layer that surfaces them."""
    return {code: ALL_CODES[code] for code in codes}


def markdown_table(header: tuple[str, ...], rows: Iterable[tuple[str, ...]]) -> str:
    """A README table: the first column is a code (written in backticks), the others as given."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join((f"`{row[0]}`", *row[1:])) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def code_table(catalogue: Mapping[str, str]) -> str:
    """The two-column table (code, meaning) of a catalogue."""
    return markdown_table(("code", "meaning"), catalogue.items())


def replace_generated(text: str, name: str, table: str) -> str:
    """``text`` with what lies between ``<!-- errors:<name> -->`` and ``<!-- /errors:<name> -->`` replaced."""
    start, end = f"<!-- errors:{name} -->\n", f"<!-- /errors:{name} -->"
    head, found, rest = text.partition(start)
    if not found or end not in rest:
        raise ValueError(f"no {start.strip()} ... {end} block")
    return head + start + table + end + rest.split(end, 1)[1]
