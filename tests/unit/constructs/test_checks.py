"""The pure checks, called with plain values: no App, no Stack, no construct."""

from __future__ import annotations

import aws_cdk as cdk

from cdk_triton.config import tables
from cdk_triton.constructs import DeploymentGuardrails, TrafficStep
from cdk_triton.constructs.checks import deployment, headroom, instance, names, stacks, variant


def _codes(errs: list) -> list[str]:
    return [e.code for e in errs]


def test_names() -> None:
    assert names.check_names("classifier-1", "AllTraffic") == []
    errs = names.check_names("bad_name", "-bad")
    assert _codes(errs) == ["InvalidEndpointName", "InvalidVariantName"]
    assert errs[0].prop == "endpoint_name" and errs[0].value == "bad_name" and errs[0].path is None


def test_instance_type_shape_and_gpu_rules() -> None:
    g5 = tables.instance_type_info("ml.g5.xlarge")
    ok, warnings = instance.check_instance(
        "ml.g5.xlarge",
        g5,
        triton_version=None,
        gpu_architectures=[],
        packaged_instance_types=[],
        multi_model=False,
    )
    assert ok == [] and warnings == []
    errs, _ = instance.check_instance(
        "g5.xlarge",
        None,
        triton_version=None,
        gpu_architectures=[],
        packaged_instance_types=[],
        multi_model=False,
    )
    assert _codes(errs) == ["InvalidInstanceType"]
    errs, _ = instance.check_instance(
        "ml.c6i.xlarge",
        None,
        triton_version=None,
        gpu_architectures=["sm_86"],
        packaged_instance_types=[],
        multi_model=False,
    )
    assert _codes(errs) == ["GpuArtifactsOnCpuInstance"]
    big = tables.instance_type_info("ml.g5.12xlarge")
    errs, _ = instance.check_instance(
        "ml.g5.12xlarge",
        big,
        triton_version=None,
        gpu_architectures=[],
        packaged_instance_types=[],
        multi_model=True,
    )
    assert _codes(errs) == ["MmeNeedsSingleGpu"]


def test_instance_warnings_come_back_as_pairs() -> None:
    errs, warnings = instance.check_instance(
        "ml.g99.xlarge",
        None,
        triton_version=None,
        gpu_architectures=[],
        packaged_instance_types=[],
        multi_model=False,
    )
    assert errs == [] and [w[0] for w in warnings] == ["cdk-triton:UnknownGpuInstanceType"]
    g5 = tables.instance_type_info("ml.g5.2xlarge")
    _, warnings = instance.check_instance(
        "ml.g5.2xlarge",
        g5,
        triton_version=None,
        gpu_architectures=[],
        packaged_instance_types=["ml.g5.xlarge"],
        multi_model=False,
    )
    assert [w[0] for w in warnings] == ["cdk-triton:InstanceTypeNotPackaged"]


def test_tokens_are_skipped() -> None:
    token = cdk.Token.as_string(cdk.Fn.ref("InstanceType"))
    assert instance.check_instance(
        token,
        None,
        triton_version=None,
        gpu_architectures=["sm_86"],
        packaged_instance_types=[],
        multi_model=True,
    ) == ([], [])


def test_local_storage() -> None:
    assert instance.has_local_storage("ml.c5d.xlarge", None)
    assert not instance.has_local_storage("ml.c5.xlarge", None)
    assert instance.has_local_storage("ml.g5.xlarge", tables.instance_type_info("ml.g5.xlarge"))


def test_variant() -> None:
    assert variant.check_variant(instance_type="ml.g5.xlarge", local_storage=True, instance_count=1) == []
    errs = variant.check_variant(
        instance_type="ml.g5.xlarge",
        local_storage=True,
        instance_count=0,
        volume_encryption_key_path="Stack/Key",
        volume_size_gib=100,
        container_startup_health_check_timeout_seconds=30,
        model_data_download_timeout_seconds=4000,
        sampling_percentage=101,
    )
    assert _codes(errs) == [
        "InvalidInstanceCount",
        "KmsKeyOnLocalStorage",
        "InvalidVolumeSize",
        "InvalidTimeout",
        "InvalidTimeout",
        "InvalidSamplingPercentage",
    ]
    assert errs[1].value == "Stack/Key"


def test_deployment() -> None:
    assert deployment.check_deployment(DeploymentGuardrails.canary(percent=10), instance_count=4) == []
    assert _codes(deployment.check_deployment(DeploymentGuardrails.canary(percent=60), instance_count=4)) == [
        "CanaryTooLarge"
    ]
    assert _codes(deployment.check_deployment(DeploymentGuardrails(), instance_count=1)) == [
        "InvalidDeploymentPolicy"
    ]
    bad_step = DeploymentGuardrails(traffic_routing="LINEAR", step=TrafficStep(percent=0))
    assert _codes(deployment.check_deployment(bad_step, instance_count=2)) == ["InvalidTrafficStep"]
    slow = DeploymentGuardrails.all_at_once(wait_interval=cdk.Duration.hours(2))
    assert _codes(deployment.check_deployment(slow, instance_count=1)) == ["InvalidTimeout"]


def test_step_shares() -> None:
    assert deployment.check_step_shares(DeploymentGuardrails.linear(percent=20), instance_count=5) == []
    errs = deployment.check_step_shares(DeploymentGuardrails.linear(percent=5), instance_count=5)
    assert _codes(errs) == ["InvalidTrafficStep"] and errs[0].prop == "deployment.step"
    errs = deployment.check_step_shares(DeploymentGuardrails.rolling(instance_count=3), instance_count=4)
    assert _codes(errs) == ["InvalidTrafficStep"] and "75 %" in errs[0].problem


def test_headroom() -> None:
    assert headroom.check_headroom(100, endpoint_resources=10, endpoint_id="E") == ([], False)
    assert headroom.check_headroom(400, endpoint_resources=10, endpoint_id="E") == ([], True)
    errs, warn = headroom.check_headroom(501, endpoint_resources=10, endpoint_id="E")
    assert _codes(errs) == ["StackResourceLimit"] and warn
    assert "at most 40 endpoints" in errs[0].fix and "create E in a new stack" in errs[0].fix


def test_model_environment() -> None:
    assert stacks.check_model_environment("S/M", ("1", "us-east-1"), ("1", "us-east-1")) == []
    unresolved = cdk.Aws.REGION
    assert stacks.check_model_environment("S/M", ("1", unresolved), ("1", "eu-west-1")) == []
    [err] = stacks.check_model_environment("S/M", ("1", "us-east-1"), ("2", "us-east-1"))
    assert (err.code, err.prop, err.value) == ("ModelInOtherEnvironment", "model", "S/M")
    assert err.problem.startswith("is in account 1, and the endpoint in account 2;")
