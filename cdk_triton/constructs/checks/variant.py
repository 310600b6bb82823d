"""The production variant: instance count, volume key and size, timeouts, data capture sampling."""

from __future__ import annotations

from cdk_triton.constructs.checks.instance import instance_count_below_1
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError


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
        errs.append(instance_count_below_1(instance_count, "pass instance_count=1 or more"))
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
