"""Every error code of the catalogue: raised with prop, value, what is allowed, the fix and the path."""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import aws_cdk as cdk
import pytest
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from cdk_triton.config import advisories, default_release, gpu_hosts, tables
from cdk_triton.config.server_options import ServerOptions
from cdk_triton.constructs import (
    ERROR_CODES,
    AsyncInferenceOptions,
    ComponentOptions,
    DataCapture,
    DeploymentGuardrails,
    EndpointAttributes,
    ModelArtifacts,
    TrafficStep,
    TritonAlarms,
    TritonComponentsEndpoint,
    TritonDashboard,
    TritonEndpoint,
    TritonImage,
    TritonMetrics,
    TritonModel,
    TritonModelPackageGroup,
    VerificationCheck,
    VerificationSample,
)
from cdk_triton.constructs import endpoint as endpoint_module
from cdk_triton.errors import TritonValidationError, TritonValidationErrors
from tests.unit.constructs.support import EXAMPLE, TENSORRT, manifest_with, new_stack, with_components


def _with_failing_fact(define: Callable[[], Any]) -> Any:
    """``define()`` with one more forward-compatibility fact: CUDA 13 on driver 550 confirmed-fails (no
    such observation exists yet; the rule must hold when one is recorded)."""
    fact = gpu_hosts.ForwardCompatibility(
        cuda_major="13", driver=550, releases=None, status="confirmed-fails", evidence="a test"
    )
    with mock.patch.object(
        gpu_hosts, "forward_compatibility", return_value=[*gpu_hosts.forward_compatibility(), fact]
    ):
        return define()


POOLS = ["ml.g5.xlarge", "ml.g6.xlarge"]


def _pools_needing_two_hosts(stack: cdk.Stack) -> TritonEndpoint:
    """Pools whose host decisions differ (the g6 pool would get an InferenceAmiVersion, the g5 none)."""
    real = gpu_hosts.decide_host

    def decide(**kw: Any) -> gpu_hosts.HostDecision:
        if kw["instance_type"] == "ml.g6.xlarge":
            return gpu_hosts.HostDecision(
                outcome="choose", inference_ami_version="al2-ami-sagemaker-inference-gpu-3-1"
            )
        return real(**kw)

    with mock.patch.object(gpu_hosts, "decide_host", decide):
        return sme(stack, instance_type=None, instance_pools=POOLS)


def sme(stack: cdk.Stack, **kw: Any) -> TritonEndpoint:
    kw.setdefault("instance_type", "ml.g5.xlarge")
    return TritonEndpoint(
        stack,
        kw.pop("cid", "Ep"),
        artifacts=kw.pop("artifacts", ModelArtifacts.from_manifest(EXAMPLE, "classifier")),
        **kw,
    )


def mme(stack: cdk.Stack, **kw: Any) -> TritonEndpoint:
    return sme(stack, artifacts=ModelArtifacts.from_manifest(EXAMPLE, "multi"), **kw)


def shadowed(stack: cdk.Stack, key: str = "classifier", **kw: Any) -> TritonEndpoint:
    """An endpoint with a shadow: ``shadow_*`` keywords go to the ShadowVariant, the rest to the endpoint."""
    from cdk_triton.constructs import ShadowVariant, TritonModel

    candidate = TritonModel(stack, "Candidate", artifacts=ModelArtifacts.from_manifest(EXAMPLE, key))
    shadow = {k[7:]: kw.pop(k) for k in list(kw) if k.startswith("shadow_")}
    return sme(
        stack,
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, key),
        shadow=ShadowVariant(model=candidate, **shadow),
        **kw,
    )


def trt(stack: cdk.Stack, **kw: Any) -> TritonEndpoint:
    return sme(stack, artifacts=ModelArtifacts.from_manifest(TENSORRT, "trt"), **kw)


def _grouped(stack: cdk.Stack, group: dict[str, Any], **kw: Any) -> TritonEndpoint:
    m = manifest_with(lambda d: d["models"]["resnet"]["config"].update(instance_group=[group]))
    return sme(stack, artifacts=ModelArtifacts.from_manifest(m, "classifier"), **kw)


def _with_libtorch(stack: cdk.Stack) -> TritonEndpoint:
    """A confirmed libtorch older than the torch that saved the example's TorchScript."""
    real = tables.release("24.09")
    fake = dataclasses.replace(real, libtorch=tables.Fact(value="2.5.0", source="test", confirmed=True))
    with mock.patch.object(tables, "release", lambda v: fake if v == "24.09" else real):
        return mme(stack)


def _bucket(stack: cdk.Stack) -> s3.IBucket:
    return s3.Bucket.from_bucket_name(stack, "B", "models-123456789012")


def _model_in_other_region(stack: cdk.Stack) -> None:
    far = cdk.Stack(stack.node.root, "Far", env=cdk.Environment(account="123456789012", region="eu-west-1"))
    model = TritonModel(far, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    TritonEndpoint(stack, "Ep", model=model, instance_type="ml.g5.xlarge")


def _too_many_resources(stack: cdk.Stack) -> None:
    for i in range(498):
        cdk.CfnWaitConditionHandle(stack, f"Filler{i}")
    sme(stack)


def _over_template_limit(kind: str) -> Callable[[cdk.Stack], None]:
    def case(stack: cdk.Stack) -> None:
        for i in range(201):
            if kind == "outputs":
                cdk.CfnOutput(stack, f"O{i}", value="x")
            elif kind == "parameters":
                cdk.CfnParameter(stack, f"P{i}")
            else:
                cdk.CfnMapping(stack, f"M{i}", mapping={"k": {"v": "x"}})
        sme(stack)

    return case


def _mme_of(tms_of: Callable[[dict[str, Any]], dict[str, Any]], n: int = 3) -> Any:
    from tests.unit.constructs.support import big_mme_manifest

    m = big_mme_manifest(n)
    entry = m.endpoints["multi"]
    tms = tms_of(dict(entry.target_models))
    return dataclasses.replace(
        m, endpoints={**m.endpoints, "multi": dataclasses.replace(entry, target_models=tms)}
    )


def _mme(stack: cdk.Stack, manifest: Any) -> TritonEndpoint:
    return TritonEndpoint(
        stack, "Mme", artifacts=ModelArtifacts.from_manifest(manifest, "multi"), instance_type="ml.g5.xlarge"
    )


def _long_names(n: int, length: int) -> Any:
    return _mme_of(
        lambda tms: {
            "n" * length + k: dataclasses.replace(t, logical_name="n" * length + k) for k, t in tms.items()
        },
        n,
    )


def _sampled_mme() -> Any:
    from cdk_triton.config.manifest import Sample

    sample = Sample(request="samples/classifier.request.json", response="samples/classifier.response.json")
    return _mme_of(lambda tms: {k: dataclasses.replace(t, sample=sample) for k, t in tms.items()})


def _dashboard_too_large(stack: cdk.Stack) -> None:
    ep = sme(stack)
    TritonDashboard(stack, "Dash", endpoints=[ep] * 80)


_BAD = Path(tempfile.mkdtemp(prefix="cdk-triton-bad-manifests-"))
atexit.register(shutil.rmtree, _BAD, ignore_errors=True)  # module-level cases: removed when the session ends
(_BAD / "broken.json").write_text("{ not json")
(_BAD / "no-samples.json").write_text(EXAMPLE.read_text())  # its samples/ folder is not next to it
(_BAD / "v99.json").write_text(json.dumps({**json.loads(EXAMPLE.read_text()), "schema_version": 99}))


def _opts(stack: cdk.Stack, **kw: Any) -> TritonEndpoint:
    return sme(stack, server_options=ServerOptions(**kw))


def _alarms(stack: cdk.Stack) -> None:
    cloudwatch.Alarm.from_alarm_name(stack, "A", "x")
    alarms = [cloudwatch.Alarm.from_alarm_name(stack, f"A{i}", f"alarm-{i}") for i in range(11)]
    sme(stack, deployment=DeploymentGuardrails.all_at_once(rollback_alarms=alarms))


def _mme_bucket(s: cdk.Stack, targets: dict[str, str] | None) -> TritonModel:
    return TritonModel(
        s,
        "M",
        artifacts=ModelArtifacts.from_bucket(_bucket(s), "mme/", multi_model=True, target_models=targets),
    )


def _edited(mutate: Callable[[dict[str, Any]], Any], endpoint: str = "multi") -> ModelArtifacts:
    """The example manifest edited by hand (written to a file, read back by from_manifest)."""
    data = json.loads(EXAMPLE.read_text())
    mutate(data)
    path = _BAD / f"edited-{len(list(_BAD.iterdir()))}.json"
    path.write_text(json.dumps(data))
    return ModelArtifacts.from_manifest(path, endpoint)


def _unacknowledged(stack: cdk.Stack) -> Construct:
    """A scope whose models see no acknowledgment of the suite (``cdk-triton:acknowledged_advisories``) and
    refuse the library's acknowledgment of the default release (``config.default_release``)."""
    scope = Construct(stack, "Unacknowledged")
    scope.node.set_context(advisories.CONTEXT_KEY, {})
    scope.node.set_context(default_release.CONTEXT_KEY, False)
    return scope


def _target(data: dict[str, Any], **changes: Any) -> None:
    data["endpoints"]["multi"]["target_models"]["resnet_ts"].update(changes)


#: code -> what triggers it (the construct path must start with the stack's).
def _stateful(data: dict[str, Any]) -> None:
    """The classifier recorded as sequence-batched (a stateful model)."""
    data["models"]["classifier"]["config"]["sequence_batching"] = {"direct": {}}


def _components(stack: cdk.Stack, mutate: Any = None, **kw: Any) -> TritonComponentsEndpoint:
    """A components endpoint named ``ep`` on the example's components entry (``support.with_components``)."""

    def edit(data: dict[str, Any]) -> None:
        with_components(data)
        if mutate is not None:
            mutate(data)

    kw.setdefault("instance_type", "ml.g5.xlarge")
    return TritonComponentsEndpoint(
        stack, "Components", artifacts=ModelArtifacts.from_manifest(manifest_with(edit), "components"),
        endpoint_name="ep", **kw,
    )  # fmt: skip


def _heavy(data: dict[str, Any]) -> None:
    for m in data["models"].values():
        m.update(memory_bytes=2048 * 1024**2, size_bytes=150 * 1024**2)


def _resnet_on_gpu_1(data: dict[str, Any]) -> None:
    data["models"]["resnet"]["config"]["instance_group"] = [{"kind": "KIND_GPU", "count": 1, "gpus": [1]}]


def _twin_archive(data: dict[str, Any]) -> None:
    """A second archive whose logical name differs from resnet_ts only by '-' for '_'."""
    ic = data["endpoints"]["components"]
    twin = dict(ic["target_models"]["resnet_ts"])
    digest = hashlib.sha256(b"resnet-ts").hexdigest()
    archive = f"resnet-ts-{digest[:12]}.tar.gz"
    twin.update(
        logical_name="resnet-ts", sha256=digest, target_model=archive, s3_uri=ic["s3_prefix"] + archive
    )
    ic["target_models"]["resnet-ts"] = twin
    ic["components"]["resnet-ts"] = {
        "logical_name": "resnet-ts", "component_name": "components-resnet-ts-2", "target_model": "resnet-ts"
    }  # fmt: skip


def _one(name: str, **options: Any) -> dict[str, ComponentOptions]:
    return {name: ComponentOptions(**options)}


CASES: dict[str, Callable[[cdk.Stack], Any]] = {
    # inference components
    "UnknownComponent": lambda s: _components(s, components=_one("bert")),
    "CopiesExceedInstances": lambda s: _components(s, max_instances=1),
    "ComponentGpuPlacement": lambda s: _components(s, _resnet_on_gpu_1, instance_type="ml.g5.12xlarge"),
    "ComponentModeNotSupported": lambda s: TritonComponentsEndpoint(
        s, "Sme", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"), instance_type="ml.g5.xlarge"
    ),
    "AutoScaleOnComponentsEndpoint": lambda s: _components(s).auto_scale(max_capacity=2),
    "InvalidCopyCount": lambda s: _components(s, components=_one("resnet_ts", copies=4)),
    "InvalidComputeRequirement": lambda s: _components(s, components=_one("resnet_ts", min_memory_mb=64)),
    "InvalidStartupTimeout": lambda s: _components(
        s, components=_one("resnet_ts", startup_timeout=cdk.Duration.seconds(30))
    ),
    "InvalidInstanceScaling": lambda s: _components(s, min_instances=3, max_instances=2),
    "ComponentNameCollision": lambda s: _components(s, _twin_archive),
    "ComponentDoesNotFit": lambda s: _components(s, components=_one("resnet_ts", min_memory_mb=65536)),
    "AsyncNeedsSingleModel": lambda s: mme(s, async_inference=AsyncInferenceOptions()),
    "InvalidAsyncInference": lambda s: sme(s, async_inference=AsyncInferenceOptions(max_capacity=0)),
    "InstanceTypeOrPools": lambda s: sme(s, instance_pools=["ml.g6.xlarge"]),
    "InvalidInstancePools": lambda s: sme(s, instance_type=None, instance_pools=["ml.g5.xlarge"] * 2),
    "InstancePoolsOnMultiModel": lambda s: mme(s, instance_type=None, instance_pools=POOLS),
    "InstancePoolsHostMismatch": lambda s: _pools_needing_two_hosts(s),
    "ComponentMemoryTooSmall": lambda s: _components(
        s, _heavy, components=_one("resnet_ts", min_memory_mb=128)
    ),  # below the weights of the component's models (150 MiB each)
    "SequenceBatchingInstances": lambda s: sme(
        s, artifacts=_edited(_stateful, "classifier"), instance_count=2
    ),
    "UnknownTritonVersion": lambda s: sme(s, image=TritonImage.for_version("99.01")),
    "CriticalAdvisory": lambda s: sme(
        _unacknowledged(s), artifacts=_edited(lambda d: d.pop("acknowledged_advisories"), "classifier")
    ),
    "UnknownAdvisory": lambda s: sme(s, acknowledged_advisories={"CVE-2025-2331": "typo"}),
    "AdvisoryReasonMissing": lambda s: sme(s, acknowledged_advisories={"CVE-2025-23319": " "}),
    "ImageNotInRegion": lambda s: sme(s),  # stack in eu-south-2 (see STACK_ENV)
    "UnknownManifestEndpoint": lambda s: sme(s, artifacts=ModelArtifacts.from_manifest(EXAMPLE, "nope")),
    "ManifestNotFound": lambda s: sme(
        s, artifacts=ModelArtifacts.from_manifest(Path("/nonexistent/m.json"), "x")
    ),
    "InvalidArtifactKey": lambda s: TritonModel(
        s, "M", artifacts=ModelArtifacts.from_bucket(_bucket(s), "repo/model.zip")
    ),
    "InvalidAssetPath": lambda s: TritonModel(
        s, "M", artifacts=ModelArtifacts.from_asset("/nonexistent/model.tar.gz")
    ),
    "DefaultModelNotInArtifacts": lambda s: sme(s, server_options=ServerOptions(default_model_name="nope")),
    "DefaultModelRequired": lambda s: sme(s, artifacts=ModelArtifacts.from_bucket(_bucket(s), "repo/v1/")),
    "ServerOptionsModeConflict": lambda s: sme(s, server_options=ServerOptions(multi_model=True)),
    "UnknownTritonEnvironmentVariable": lambda s: sme(s, environment={"SAGEMAKER_TRITON_THREADCOUNT": "4"}),
    "ReservedEnvironmentVariable": lambda s: sme(s, environment={"SAGEMAKER_TRITON_THREAD_COUNT": "4"}),
    "InvalidPort": lambda s: sme(s, server_options=ServerOptions(port=70000)),
    "InvalidMetricNamespace": lambda s: sme(s, metrics=TritonMetrics(namespace="AWS/Triton")),
    "MetricsPublishingNeedsMetrics": lambda s: sme(
        s, metrics=TritonMetrics(), server_options=ServerOptions(allow_metrics=False)
    ),
    "UseTritonMetrics": lambda s: _opts(s, publish_metrics_to_cloudwatch=True),
    "InvalidPortRange": lambda s: _opts(s, safe_port_range=(9000, 8000)),
    "PortConflict": lambda s: _opts(s, allow_grpc=True, grpc_port=8080, port=8080),
    "InvalidThreadCount": lambda s: _opts(s, thread_count=0),
    "InvalidLogLevel": lambda s: _opts(s, log_verbose=-1),
    "InvalidByteSize": lambda s: _opts(s, response_cache_byte_size=0),
    "InvalidGpuLimit": lambda s: _opts(s, model_load_gpu_limit=1.5),
    "DefaultModelInMme": lambda s: mme(s, server_options=ServerOptions(default_model_name="classifier")),
    "InvalidModelName": lambda s: TritonModel(
        s,
        "M",
        artifacts=ModelArtifacts.from_bucket(_bucket(s), "repo/"),
        server_options=ServerOptions(default_model_name="bad name"),
    ),
    "CloudWatchSettingsWithoutPublishing": lambda s: _opts(s, cloudwatch_metric_namespace="Team/Triton"),
    "InvalidAdditionalArg": lambda s: _opts(s, additional_args=("cache-config=local",)),
    "ManagedFlagInAdditionalArgs": lambda s: _opts(s, additional_args=("--model-repository=/tmp",)),
    "RestrictedApiUnreachable": lambda s: sme(
        s,
        image=TritonImage.for_version("26.05"),
        server_options=ServerOptions(additional_args=("--http-restricted-api=health:k=v",)),
    ),
    "InvalidManifest": lambda s: sme(
        s, artifacts=ModelArtifacts.from_manifest(_BAD / "broken.json", "classifier")
    ),
    "UnsupportedManifestVersion": lambda s: sme(
        s, artifacts=ModelArtifacts.from_manifest(_BAD / "v99.json", "classifier")
    ),
    "MetricsNeedNewerImage": lambda s: sme(
        s, image=TritonImage.for_version("23.02"), metrics=TritonMetrics()
    ),
    "MetricsNeedNetwork": lambda s: sme(s, metrics=TritonMetrics(), network_isolation=True),
    "SecurityGroupsWithoutVpc": lambda s: sme(
        s, vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
    ),
    "InvalidInstanceType": lambda s: sme(s, instance_type="g5.xlarge"),
    "ComputeCapabilityTooLow": lambda s: sme(s, instance_type="ml.p2.xlarge"),
    "UnknownInferenceAmiVersion": lambda s: sme(s, inference_ami_version="al2-ami-sagemaker-inference-gpu-9"),
    "InferenceAmiNotForInstance": lambda s: sme(
        s, instance_type="ml.g6e.xlarge", inference_ami_version="al2-ami-sagemaker-inference-gpu-2"
    ),
    "InferenceAmiCannotRunRelease": lambda s: _with_failing_fact(
        lambda: sme(
            s,
            image=TritonImage.for_version("25.09"),
            inference_ami_version="al2-ami-sagemaker-inference-gpu-3-1",
        )
    ),
    "NoHostForRelease": lambda s: sme(s, image=TritonImage.for_version("25.09")),
    "GpuArtifactsOnCpuInstance": lambda s: trt(s, instance_type="ml.c6i.xlarge"),
    "GpuArchitectureMismatch": lambda s: trt(s, instance_type="ml.g4dn.xlarge"),
    "MmeNeedsSingleGpu": lambda s: mme(s, instance_type="ml.g5.12xlarge"),
    "NoTritonImageForInstance": lambda s: sme(s, instance_type="ml.c7g.xlarge"),
    "InvalidKmsKeyArn": lambda s: TritonModel(
        s,
        "M",
        artifacts=ModelArtifacts.from_bucket(
            _bucket(s),
            "repo/",
            default_model="m",
            encryption_key=kms.Key.from_key_arn(s, "K", "arn:aws:kms:us-east-1:123456789012:alias/artifacts"),
        ),
    ),
    "GpuIndexOutOfRange": lambda s: _grouped(s, {"kind": "KIND_GPU", "count": 1, "gpus": [7]}),
    "GpuInstanceGroupOnCpuInstance": lambda s: _grouped(
        s, {"kind": "KIND_GPU", "count": 1}, instance_type="ml.c6i.xlarge"
    ),
    "TensorRTVersionMismatch": lambda s: trt(s, image=TritonImage.for_version("25.04")),
    "TorchScriptTooNew": lambda s: _with_libtorch(s),
    "OnnxTooNewForImage": lambda s: sme(
        s,
        artifacts=ModelArtifacts.from_manifest(
            manifest_with(lambda d: d["models"]["resnet"].update(onnx_opset=99, onnx_ir_version=7)),
            "classifier",
        ),
    ),
    "ResponseCacheNotConfigured": lambda s: sme(
        s,
        artifacts=ModelArtifacts.from_manifest(
            manifest_with(lambda d: d["models"]["resnet"]["config"].update(response_cache={"enable": True})),
            "classifier",
        ),
    ),
    "KmsKeyOnLocalStorage": lambda s: sme(s, volume_encryption_key=kms.Key(s, "K", enable_key_rotation=True)),
    "InvalidInstanceCount": lambda s: sme(s, instance_count=0),
    "InvalidVariantName": lambda s: sme(s, variant_name="all_traffic"),
    "InvalidEndpointName": lambda s: sme(s, endpoint_name="my_endpoint"),
    "InvalidTimeout": lambda s: sme(s, model_data_download_timeout=cdk.Duration.seconds(10)),
    "InvalidVolumeSize": lambda s: sme(s, volume_size=cdk.Size.gibibytes(100)),  # g5 has local NVMe
    "VolumeTooSmall": lambda s: sme(  # a 20 GB repository on a 10 GB EBS volume
        s,
        instance_type="ml.p3.2xlarge",
        volume_size=cdk.Size.gibibytes(10),
        artifacts=ModelArtifacts.from_manifest(
            manifest_with(lambda d: d["endpoints"]["classifier"].update(size_bytes=20 * 1000**3)),
            "classifier",
        ),
    ),
    "InvalidSamplingPercentage": lambda s: sme(
        s, data_capture=DataCapture(bucket=_bucket(s), sampling_percentage=120)
    ),
    "CanaryTooLarge": lambda s: sme(s, instance_count=4, deployment=DeploymentGuardrails.canary(percent=60)),
    "InvalidTrafficStep": lambda s: sme(s, deployment=DeploymentGuardrails.linear(percent=0)),
    "InvalidDeploymentPolicy": lambda s: sme(
        s,
        deployment=DeploymentGuardrails(
            traffic_routing="CANARY", step=TrafficStep(percent=10), rolling_batch=TrafficStep(percent=10)
        ),
    ),
    "TooManyRollbackAlarms": _alarms,
    "BurstableNotScalable": lambda s: sme(s, instance_type="ml.t2.medium").auto_scale(max_capacity=2),
    "GpuScalingOnCpuInstance": lambda s: (
        sme(s, instance_type="ml.c6i.xlarge").auto_scale(max_capacity=2).scale_on_gpu_utilization(60)
    ),
    "InvalidCapacity": lambda s: sme(s).auto_scale(min_capacity=3, max_capacity=2),
    "InvalidTargetValue": lambda s: sme(s).auto_scale(max_capacity=2).scale_on_gpu_utilization(150),
    "InvalidAlarmThreshold": lambda s: TritonAlarms(s, "Alarms", endpoint=sme(s), error_rate_percent=0),
    "DashboardTooLarge": _dashboard_too_large,
    "StackResourceLimit": _too_many_resources,
    "TooManyOutputs": _over_template_limit("outputs"),
    "TooManyParameters": _over_template_limit("parameters"),
    "TooManyMappings": _over_template_limit("mappings"),
    "TemplateTooLarge": lambda s: _mme(s, _long_names(400, 3000)),
    "TargetModelMapEntryTooLong": lambda s: _mme(s, _long_names(1, 5000)),
    "InvalidVerificationSample": lambda s: _mme(s, _sampled_mme()).add_verification(
        sample=VerificationSample(parallelism=0)
    ),
    "MissingEndpointAttribute": lambda s: TritonEndpoint.from_endpoint_name(
        s, "Imported", "other"
    ).auto_scale(max_capacity=2),
    "ModelGivenTwice": lambda s: sme(
        s, model=TritonModel(s, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    ),
    "ModelRequired": lambda s: TritonEndpoint(s, "Ep", instance_type="ml.g5.xlarge"),
    "ModelInOtherEnvironment": _model_in_other_region,
    "InvalidEndpointMode": lambda s: TritonEndpoint.from_endpoint_attributes(
        s, "Imported", EndpointAttributes(endpoint_name="other", mode="multi")
    ),
    "InvalidComponentName": lambda s: TritonEndpoint.from_endpoint_attributes(
        s, "Imported", EndpointAttributes(endpoint_name="other", component_names={"a_b": "other_a_b"})
    ),
    "NoRecordedSamples": lambda s: mme(s).add_verification(),
    "SampleFileMissing": lambda s: sme(
        s, artifacts=ModelArtifacts.from_manifest(_BAD / "no-samples.json", "classifier")
    ).add_verification(),
    "InvalidVerificationDeadline": lambda s: sme(s).add_verification(deadline=cdk.Duration.minutes(15)),
    "InvalidModelPackageGroupName": lambda s: TritonModelPackageGroup(
        s, "Group", model_package_group_name="my_group"
    ),
    "InvalidAccountId": lambda s: TritonModelPackageGroup(s, "Group", write_accounts=["12345"]),
    "ShadowOnMultiModel": lambda s: shadowed(s, "multi"),
    "InvalidShadowSampling": lambda s: shadowed(s, shadow_sampling_percentage=101),
    "ShadowVariantNameClash": lambda s: shadowed(s, shadow_variant_name="AllTraffic"),
    "ShadowWithRollingUpdate": lambda s: shadowed(
        s, instance_count=2, deployment=DeploymentGuardrails.rolling(percent=50)
    ),
    "InvalidVerificationCheck": lambda s: sme(s).add_verification(
        checks=[
            VerificationCheck(
                model="classifier", request_s3_uri="samples/req.json", response_s3_uri="s3://b-1/r.json"
            )
        ]
    ),
    "MmeWithoutModels": lambda s: _mme_bucket(s, {}),
    "InvalidTargetModel": lambda s: _mme_bucket(s, {"resnet": "r" * 1018 + ".tar.gz"}),
    "TargetModelCaseCollision": lambda s: _mme_bucket(
        s, {"resnet": "resnet-0a1b2c3d4e5f.tar.gz", "resnet_v2": "ResNet-0a1b2c3d4e5f.tar.gz"}
    ),
    "InvalidGpuArchitecture": lambda s: TritonModel(
        s,
        "M",
        artifacts=ModelArtifacts.from_bucket(
            _bucket(s), "repo/", default_model="r", gpu_architectures=["8.6"]
        ),
    ),
    "ManifestUriNotS3": lambda s: sme(
        s, artifacts=_edited(lambda d: d["endpoints"]["multi"].update(s3_prefix="https://example.com/mme/"))
    ),
    "ManifestHashMismatch": lambda s: sme(s, artifacts=_edited(lambda d: _target(d, sha256="0" * 64))),
    "ManifestBrokenReference": lambda s: sme(
        s, artifacts=_edited(lambda d: d["endpoints"]["classifier"]["models"].append("ghost"), "classifier")
    ),
    "InvalidDataCapture": lambda s: sme(
        s, data_capture=DataCapture(bucket=_bucket(s), capture_input=False, capture_output=False)
    ),
    "InvalidEnvironmentVariable": lambda s: sme(s, environment={"OMP-THREADS": "4"}),
    "InvalidSageMakerModelName": lambda s: TritonModel(
        s, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"), model_name="my_model"
    ),
    "InvalidImageTag": lambda s: sme(
        s,
        image=TritonImage.from_ecr_repository(ecr.Repository.from_repository_name(s, "R", "r"), "v1:latest"),
    ),
    "InvalidGpuCount": lambda s: TritonEndpoint.from_endpoint_attributes(
        s, "Imported", EndpointAttributes(endpoint_name="other", gpu_count=-1)
    ),
    "InvalidPeriod": lambda s: TritonAlarms(s, "Alarms", endpoint=sme(s), period=cdk.Duration.seconds(45)),
    "InvalidEvaluationPeriods": lambda s: TritonAlarms(s, "Alarms", endpoint=sme(s), evaluation_periods=0),
    "InvalidDashboardName": lambda s: TritonDashboard(
        s, "Dash", endpoints=[sme(s)], dashboard_name="my dash"
    ),
}

#: code -> (prop, value) the error must name for the case above: the prop the user set, the value received.
EXPECTED: dict[str, tuple[str, Any]] = {
    "UnknownComponent": ("components.bert", "bert"),
    "CopiesExceedInstances": ("max_instances", 1),
    "ComponentGpuPlacement": ("components.classifier.accelerators", 1),
    "ComponentModeNotSupported": ("artifacts", "SingleModel"),
    "AutoScaleOnComponentsEndpoint": ("auto_scale", (1, 2)),
    "InvalidCopyCount": ("components.resnet_ts.copies", 4),
    "InvalidComputeRequirement": ("components.resnet_ts.min_memory_mb", 64),
    "InvalidStartupTimeout": ("components.resnet_ts.startup_timeout", 30),
    "InvalidInstanceScaling": ("min_instances", 3),
    "ComponentNameCollision": ("component name", "ep-resnet-ts"),
    "ComponentDoesNotFit": ("components.resnet_ts.min_memory_mb", 65536),
    "ComponentMemoryTooSmall": ("components.resnet_ts.min_memory_mb", 128),
    "AsyncNeedsSingleModel": ("async_inference", "MultiModel"),
    "InvalidAsyncInference": ("async_inference.max_capacity", 0),
    "InstanceTypeOrPools": ("instance_pools", ["ml.g6.xlarge"]),
    "InvalidInstancePools": ("instance_pools", ["ml.g5.xlarge", "ml.g5.xlarge"]),
    "InstancePoolsOnMultiModel": ("instance_pools", "MultiModel"),
    "InstancePoolsHostMismatch": ("instance_pools", ["ml.g5.xlarge", "ml.g6.xlarge"]),
    "CriticalAdvisory": ("image (Triton release)", "24.09"),
    "UnknownAdvisory": ("acknowledged_advisories.CVE-2025-2331", "CVE-2025-2331"),
    "AdvisoryReasonMissing": ("acknowledged_advisories.CVE-2025-23319", " "),
    "SequenceBatchingInstances": ("instance_count", 2),
    "BurstableNotScalable": ("instance_type", "ml.t2.medium"),
    "CanaryTooLarge": ("deployment.step", "60 %"),
    "CloudWatchSettingsWithoutPublishing": ("cloudwatch_metric_namespace", "Team/Triton"),
    "ComputeCapabilityTooLow": ("instance_type", "ml.p2.xlarge"),
    "UnknownInferenceAmiVersion": ("inference_ami_version", "al2-ami-sagemaker-inference-gpu-9"),
    "InferenceAmiNotForInstance": ("inference_ami_version", "al2-ami-sagemaker-inference-gpu-2"),
    "InferenceAmiCannotRunRelease": ("inference_ami_version", "al2-ami-sagemaker-inference-gpu-3-1"),
    "NoHostForRelease": ("inference_ami_version", None),
    "DashboardTooLarge": ("endpoints", 80),
    "DefaultModelInMme": ("default_model_name", "classifier"),
    "DefaultModelNotInArtifacts": ("server_options.default_model_name", "nope"),
    "DefaultModelRequired": ("server_options.default_model_name", None),
    "GpuArchitectureMismatch": ("instance_type", "ml.g4dn.xlarge"),
    "GpuArtifactsOnCpuInstance": ("instance_type", "ml.c6i.xlarge"),
    "GpuScalingOnCpuInstance": ("instance_type", "ml.c6i.xlarge"),
    "ImageNotInRegion": ("region", "eu-south-2"),
    "InvalidAdditionalArg": ("additional_args", "cache-config=local"),
    "RestrictedApiUnreachable": ("server_options.additional_args", "--http-restricted-api=health:k=v"),
    "InvalidAlarmThreshold": ("error_rate_percent", 0),
    "InvalidArtifactKey": ("key", "repo/model.zip"),
    "InvalidAssetPath": ("path", "/nonexistent/model.tar.gz"),
    "InvalidByteSize": ("response_cache_byte_size", 0),
    "InvalidCapacity": ("min_capacity/max_capacity", (3, 2)),
    "InvalidEndpointMode": ("mode", "multi"),
    "InvalidComponentName": ("component_names", "other_a_b"),
    "ModelGivenTwice": ("artifacts", "TestStack/M"),
    "ModelRequired": ("model/artifacts", None),
    "ModelInOtherEnvironment": ("model", "Far/M"),
    "InvalidDeploymentPolicy": ("deployment", "blue/green and rolling"),
    "InvalidEndpointName": ("endpoint_name", "my_endpoint"),
    "InvalidGpuLimit": ("model_load_gpu_limit", 1.5),
    "InvalidInstanceCount": ("instance_count", 0),
    "InvalidInstanceType": ("instance_type", "g5.xlarge"),
    "InvalidLogLevel": ("log_verbose", -1),
    "InvalidManifest": ("manifest", str(_BAD / "broken.json")),
    "InvalidMetricNamespace": ("cloudwatch_metric_namespace", "AWS/Triton"),
    "InvalidModelName": ("default_model_name", "bad name"),
    "InvalidPort": ("port", 70000),
    "InvalidPortRange": ("safe_port_range", (9000, 8000)),
    "InvalidSamplingPercentage": ("data_capture.sampling_percentage", 120),
    "InvalidTargetValue": ("target_percent", 150),
    "InvalidThreadCount": ("thread_count", 0),
    "InvalidTimeout": ("model_data_download_timeout", "10 s"),
    "InvalidTrafficStep": ("deployment.step", 0),
    "InvalidVariantName": ("variant_name", "all_traffic"),
    "InvalidVolumeSize": ("volume_size", "100 GiB"),
    "VolumeTooSmall": ("volume_size", "10 GB"),
    "KmsKeyOnLocalStorage": ("volume_encryption_key", "TestStack/K"),
    "ManagedFlagInAdditionalArgs": ("additional_args", "--model-repository=/tmp"),
    "ManifestNotFound": ("manifest", "/nonexistent/m.json"),
    "MetricsNeedNetwork": ("network_isolation", True),
    "MissingEndpointAttribute": ("variant_name", None),
    "MetricsNeedNewerImage": ("metrics", "sagemaker-tritonserver:23.02-py3"),
    "MetricsPublishingNeedsMetrics": ("allow_metrics", False),
    "GpuIndexOutOfRange": ("instance_groups", "model 'resnet' instance_groups[0]: gpus [7]"),
    "GpuInstanceGroupOnCpuInstance": ("instance_groups", "model 'resnet' instance_groups[0]: KIND_GPU"),
    "TensorRTVersionMismatch": ("image", "sagemaker-tritonserver:25.04-py3"),
    "TorchScriptTooNew": ("image", "sagemaker-tritonserver:24.09-py3"),
    "OnnxTooNewForImage": ("image", "sagemaker-tritonserver:24.09-py3"),
    "ResponseCacheNotConfigured": ("server_options.response_cache_byte_size", None),
    "MmeNeedsSingleGpu": ("instance_type", "ml.g5.12xlarge"),
    "NoTritonImageForInstance": ("instance_type", "ml.c7g.xlarge"),
    "InvalidKmsKeyArn": ("artifacts kms_key_arn", "arn:aws:kms:us-east-1:123456789012:alias/artifacts"),
    "PortConflict": ("ports", (8080, 8080)),
    "ReservedEnvironmentVariable": ("environment", "SAGEMAKER_TRITON_THREAD_COUNT"),
    "SecurityGroupsWithoutVpc": ("security_groups/vpc_subnets", "vpc_subnets"),
    "ServerOptionsModeConflict": ("server_options.multi_model", True),
    "StackResourceLimit": ("stack", "503 resources"),
    "TooManyOutputs": ("stack", "TestStack: 201 outputs"),
    "TooManyParameters": ("stack", "TestStack: 201 parameters"),
    "TooManyMappings": ("stack", "TestStack: 201 mappings"),
    "TemplateTooLarge": ("stack", "TestStack: 1,381,200 bytes"),
    "TargetModelMapEntryTooLong": ("artifacts", "part 000: " + "n" * 80 + "... (5,047 characters)"),
    "InvalidVerificationSample": ("sample.parallelism", 0),
    "TooManyRollbackAlarms": ("deployment.rollback_alarms", 11),
    "UnknownManifestEndpoint": ("endpoint", "nope"),
    "UnknownTritonEnvironmentVariable": ("environment", "SAGEMAKER_TRITON_THREADCOUNT"),
    "UnknownTritonVersion": ("version", "99.01"),
    "UnsupportedManifestVersion": ("manifest schema_version", 99),
    "UseTritonMetrics": ("server_options.publish_metrics_to_cloudwatch", True),
    "NoRecordedSamples": ("artifacts", "multi"),
    "SampleFileMissing": ("sample.request", str(_BAD / "samples" / "classifier.request.json")),
    "InvalidVerificationDeadline": ("deadline", "900 s"),
    "InvalidModelPackageGroupName": ("model_package_group_name", "my_group"),
    "InvalidAccountId": ("write_accounts", ["12345"]),
    "ShadowOnMultiModel": ("shadow", "TestStack/Candidate"),
    "InvalidShadowSampling": ("shadow.sampling_percentage", 101),
    "ShadowVariantNameClash": ("shadow.variant_name", "AllTraffic"),
    "ShadowWithRollingUpdate": ("deployment", "rolling"),
    "InvalidVerificationCheck": ("checks[0].request_s3_uri", "samples/req.json"),
    "MmeWithoutModels": ("target_models", {}),
    "InvalidTargetModel": ("target_models['resnet']", "r" * 60 + "... (1025 characters)"),
    "TargetModelCaseCollision": (
        "target_models",
        ("ResNet-0a1b2c3d4e5f.tar.gz", "resnet-0a1b2c3d4e5f.tar.gz"),
    ),
    "InvalidGpuArchitecture": ("gpu_architectures", "8.6"),
    "ManifestUriNotS3": ("manifest endpoints.multi.s3_prefix", "https://example.com/mme/"),
    "ManifestHashMismatch": (
        "manifest endpoints.multi.target_models.resnet_ts.target_model",
        "resnet_ts-ca978112ca1b.tar.gz",
    ),
    "ManifestBrokenReference": ("manifest endpoints.classifier.models", "ghost"),
    "InvalidDataCapture": ("data_capture.capture_input/capture_output", (False, False)),
    "InvalidEnvironmentVariable": ("environment['OMP-THREADS']", "OMP-THREADS"),
    "InvalidSageMakerModelName": ("model_name", "my_model"),
    "InvalidImageTag": ("tag", "v1:latest"),
    "InvalidGpuCount": ("gpu_count", -1),
    "InvalidPeriod": ("period", "45 s"),
    "InvalidEvaluationPeriods": ("evaluation_periods", 0),
    "InvalidDashboardName": ("dashboard_name", "my dash"),
}

STACK_ENV = {"ImageNotInRegion": cdk.Environment(account="123456789012", region="eu-south-2")}


def _raise(code: str) -> tuple[TritonValidationError, cdk.Stack]:
    stack = new_stack(env=STACK_ENV.get(code, cdk.Environment(account="123456789012", region="us-east-1")))
    with pytest.raises(TritonValidationError) as info:
        CASES[code](stack)
    return info.value, stack


@pytest.mark.parametrize("code", sorted(CASES))
def test_fails_with_code_prop_value_allowed_fix_and_path(code: str) -> None:
    err, stack = _raise(code)
    if isinstance(err, TritonValidationErrors):
        assert err.codes == [code], err.codes  # exactly one problem: this one
        err = err.errors[0]
    assert err.code == code
    assert (err.prop, err.value) == EXPECTED[code]
    assert err.problem and err.allowed and err.fix
    assert err.path is not None and err.path.startswith(stack.node.path + "/"), err.path
    text = str(err)
    assert f"[{code}]" in text and text.endswith(f" at {err.path}")
    assert err.prop in text and err.allowed in text and err.fix in text
    assert repr(err.value)[:60] in text


def test_unknown_environment_variable_suggests_the_closest_name() -> None:
    err, _ = _raise("UnknownTritonEnvironmentVariable")
    assert "SAGEMAKER_TRITON_THREAD_COUNT" in err.fix


def test_catalogue_equals_the_codes_raised_in_tests() -> None:
    assert set(CASES) == set(ERROR_CODES) == set(EXPECTED)
    assert len(ERROR_CODES) >= 25


def test_all_problems_are_reported_at_once() -> None:
    stack = new_stack()
    with pytest.raises(TritonValidationErrors) as info:
        sme(
            stack,
            instance_count=0,
            variant_name="bad_name",
            endpoint_name="bad_name",
            server_options=ServerOptions(port=0),
        )
    assert sorted(info.value.codes) == [
        "InvalidEndpointName",
        "InvalidInstanceCount",
        "InvalidPort",
        "InvalidVariantName",
    ]
    assert str(info.value).startswith("4 problems:")
    stack = new_stack("Other")
    with pytest.raises(TritonValidationErrors) as info:
        sme(stack, instance_count=0, instance_type="ml.p2.xlarge")
    assert sorted(info.value.codes) == ["ComputeCapabilityTooLow", "InvalidInstanceCount"]


def test_errors_are_raised_before_the_endpoint_resources_exist() -> None:
    stack = new_stack()
    with pytest.raises(TritonValidationError):
        sme(stack, instance_type="ml.g5.12xlarge", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "multi"))
    ep = stack.node.try_find_child("Ep")
    assert ep is not None and ep.node.try_find_child("Resource") is None
    assert ep.node.try_find_child("EndpointConfig") is None


def test_headroom_limit_is_the_cloudformation_limit() -> None:
    assert endpoint_module.CFN_RESOURCE_LIMIT == 500


def test_a_stateful_model_allows_no_autoscaling_above_one_instance() -> None:
    stack = cdk.Stack(cdk.App(), "Stateful")
    ep = sme(stack, artifacts=_edited(_stateful, "classifier"))  # one instance: fine
    ep.auto_scale(min_capacity=1, max_capacity=1)
    other = sme(stack, cid="Other", artifacts=_edited(_stateful, "classifier"))
    with pytest.raises(TritonValidationError) as err:
        other.auto_scale(max_capacity=4)
    assert err.value.code == "SequenceBatchingInstances" and err.value.prop == "max_capacity"
    assert "classifier" in str(err.value) and err.value.path == "Stateful/Other"
