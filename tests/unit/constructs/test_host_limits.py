"""The production variant's host limits: startup timeouts and the ML storage volume sized from the
artifacts (constructs/checks/host.py), and one app that shows them in the template."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import assertions

from cdk_triton.config import sizing
from cdk_triton.config.sizing import GB, GiB
from cdk_triton.constructs import ModelArtifacts, TritonEndpoint
from cdk_triton.constructs.checks.host import check_host_limits, volume_limits
from tests.unit.constructs.support import manifest_with, new_stack


def _limits(**kw: Any) -> Any:
    base: dict[str, Any] = dict(
        instance_type="ml.p3.2xlarge",
        local_storage=False,
        multi_model=False,
        data_bytes=1000,
        unpacked_bytes=1000,
        packaging="directory",
        model_bytes=1000,
        volume_size_gib=None,
        download_timeout_given=False,
        health_check_timeout_given=False,
    )
    return check_host_limits(**{**base, **kw})


def test_small_artifacts_keep_sagemaker_defaults() -> None:
    limits = _limits()
    assert limits.variant_defaults({}) == {} and not limits.errors and not limits.warnings


def test_timeouts_grow_with_the_artifact_and_explicit_props_win() -> None:
    big = 100 * GB  # 60 + 2000 s download, 60 + 1000 s load
    limits = _limits(
        data_bytes=big,
        unpacked_bytes=big,
        model_bytes=big,
        local_storage=True,
        instance_type="ml.g5.48xlarge",
    )
    assert limits.model_data_download_timeout_in_seconds == 2060
    assert limits.container_startup_health_check_timeout_in_seconds == 1060
    given = {"model_data_download_timeout_in_seconds": 900}
    assert limits.variant_defaults(given) == {"container_startup_health_check_timeout_in_seconds": 1060}
    explicit = _limits(
        data_bytes=big,
        model_bytes=big,
        local_storage=True,
        instance_type="ml.g5.48xlarge",
        download_timeout_given=True,
        health_check_timeout_given=True,
    )
    assert explicit.variant_defaults({}) == {}
    mme = _limits(
        data_bytes=big, model_bytes=big, multi_model=True, local_storage=True, instance_type="ml.g5.48xlarge"
    )
    assert mme.model_data_download_timeout_in_seconds is None  # MME loads at invocation


def test_an_artifact_beyond_one_hour_is_clamped_and_warned() -> None:
    huge = 200 * GB  # 60 + 4000 s at 50 MB/s
    limits = _limits(
        data_bytes=huge,
        unpacked_bytes=huge,
        model_bytes=1,
        local_storage=True,
        instance_type="ml.p4d.24xlarge",
    )
    assert limits.model_data_download_timeout_in_seconds == sizing.TIMEOUT_MAX_S
    assert [w for w, _ in limits.warnings] == ["cdk-triton:StartupTimeoutAtMaximum"]


def test_ebs_volume_sized_by_default_and_refused_when_too_small() -> None:
    assert volume_limits("ml.p3.2xlarge", local_storage=False) == (30, 512, GiB)
    assert volume_limits("ml.c5.xlarge", local_storage=False) == (30, 512, GiB)  # any EBS-only type
    assert volume_limits("ml.g5.xlarge", local_storage=True) == (250, 250, GB)
    assert volume_limits("ml.m5d.xlarge", local_storage=True) is None  # NVMe size unknown
    fits = _limits(data_bytes=20 * GiB, unpacked_bytes=20 * GiB)  # directory: 20 GiB on 30
    assert fits.volume_size_in_gb is None
    tar = _limits(data_bytes=20 * GiB, unpacked_bytes=20 * GiB, packaging="tar.gz")  # 40 GiB on 30
    assert tar.volume_size_in_gb == 48 and not tar.errors  # sized default, 20 % headroom
    exact = _limits(data_bytes=20 * GiB, unpacked_bytes=20 * GiB, packaging="tar.gz", volume_size_gib=40)
    assert not exact.errors and exact.volume_size_in_gb is None  # an explicit size needs no headroom
    small = _limits(data_bytes=20 * GiB, unpacked_bytes=20 * GiB, packaging="tar.gz", volume_size_gib=39)
    [err] = small.errors
    assert (err.code, err.prop, err.value) == ("VolumeTooSmall", "volume_size", "39 GB")
    assert "cdk.Size.gibibytes(48)" in (err.fix or "")
    over = _limits(data_bytes=300 * GiB, unpacked_bytes=300 * GiB, packaging="tar.gz")
    assert [e.code for e in over.errors] == ["VolumeTooSmall"] and over.volume_size_in_gb is None


def test_nvme_volume_is_fixed_and_refused_when_too_small() -> None:
    # ml.g5.xlarge: 250 GB instance store; 150 + 150 GB for a tar.gz and its copy
    nvme = _limits(
        instance_type="ml.g5.xlarge",
        local_storage=True,
        data_bytes=150 * GB,
        unpacked_bytes=150 * GB,
        packaging="tar.gz",
        model_bytes=1,
    )
    assert [e.code for e in nvme.errors] == ["VolumeTooSmall"] and nvme.volume_size_in_gb is None
    assert "NVMe" in nvme.errors[0].problem and "larger NVMe" in (nvme.errors[0].fix or "")
    fits = _limits(
        instance_type="ml.g5.xlarge",
        local_storage=True,
        data_bytes=150 * GB,
        unpacked_bytes=150 * GB,
        packaging="directory",
        model_bytes=1,
    )
    assert not fits.errors


def _big_sme(data: dict[str, Any]) -> None:
    """The classifier endpoint as a 60 GB repository (directory) whose models' files make 40 GB."""
    data["endpoints"]["classifier"]["size_bytes"] = 60 * GB
    for name, size in (("classifier", 1000), ("preprocess", 1000), ("resnet", 60 * GB - 2000)):
        data["models"][name]["size_bytes"] = size


def test_the_variant_carries_the_sized_values_and_explicit_props_override() -> None:
    """One app: the sized defaults on an EBS-only type, explicit props winning, the example untouched."""
    stack = new_stack()
    big = ModelArtifacts.from_manifest(manifest_with(_big_sme), "classifier")
    TritonEndpoint(stack, "Sized", artifacts=big, instance_type="ml.p3.2xlarge", endpoint_name="sized")
    TritonEndpoint(
        stack,
        "Given",
        artifacts=big,
        instance_type="ml.p3.2xlarge",
        endpoint_name="given",
        model_data_download_timeout=cdk.Duration.minutes(20),
        container_startup_health_check_timeout=cdk.Duration.minutes(30),
        volume_size=cdk.Size.gibibytes(100),
    )
    TritonEndpoint(
        stack,
        "Plain",
        artifacts=ModelArtifacts.from_manifest(manifest_with(), "classifier"),
        instance_type="ml.g5.xlarge",
        endpoint_name="plain",
    )
    configs = {
        v["Properties"]["ProductionVariants"][0]["ModelName"]["Fn::GetAtt"][0][:5]: v["Properties"][
            "ProductionVariants"
        ][0]
        for v in assertions.Template.from_stack(stack)
        .find_resources("AWS::SageMaker::EndpointConfig")
        .values()
    }
    sized, given, plain = configs["Sized"], configs["Given"], configs["Plain"]
    assert sized["ModelDataDownloadTimeoutInSeconds"] == 60 + 1200  # 60 GB at 50 MB/s
    assert sized["ContainerStartupHealthCheckTimeoutInSeconds"] == 60 + 600  # 60 GB at 100 MB/s
    assert sized["VolumeSizeInGB"] == 68  # 60 GB (55.9 GiB) + 20 %
    assert (
        given["ModelDataDownloadTimeoutInSeconds"],
        given["ContainerStartupHealthCheckTimeoutInSeconds"],
        given["VolumeSizeInGB"],
    ) == (1200, 1800, 100)
    for key in (
        "ModelDataDownloadTimeoutInSeconds",
        "ContainerStartupHealthCheckTimeoutInSeconds",
        "VolumeSizeInGB",
    ):
        assert key not in plain
