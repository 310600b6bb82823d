"""The host limits of a production variant, sized from the instance and model facts.

What fails at endpoint start without a word at synth: the model data download and the container's
startup health check outlasting SageMaker's timeouts, and an ML storage volume too small for the model
data. The arithmetic is ``config/sizing.py``; this module turns it into the variant's default values,
errors and warnings. Plain values in, no construct: the variant builder applies the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from cdk_triton.config import modes, sizing, tables
from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError


class BoundData(Protocol):
    """What the check reads of bound artifacts (``ArtifactsConfig`` has it; no import of the module)."""

    @property
    def hosting_mode(self) -> modes.HostingMode: ...

    @property
    def data_bytes(self) -> int | None: ...

    @property
    def unpacked_bytes(self) -> int | None: ...

    @property
    def packaging(self) -> str | None: ...


#: A finding for ``Annotations.add_warning_v2``: (warning id, message).
Warning = tuple[str, str]


@dataclass(frozen=True, kw_only=True, slots=True)
class HostLimits:
    """The production variant's sized values (None: not emitted, SageMaker's default) and findings."""

    model_data_download_timeout_in_seconds: int | None = None
    container_startup_health_check_timeout_in_seconds: int | None = None
    volume_size_in_gb: int | None = None
    errors: list[TritonValidationError] = field(default_factory=list)
    warnings: list[Warning] = field(default_factory=list)

    def variant_defaults(self, given: Mapping[str, Any]) -> dict[str, int]:
        """The sized values for the production variant's keys ``given`` lacks (explicit props win)."""
        sized = {
            "model_data_download_timeout_in_seconds": self.model_data_download_timeout_in_seconds,
            "container_startup_health_check_timeout_in_seconds": self.container_startup_health_check_timeout_in_seconds,
            "volume_size_in_gb": self.volume_size_in_gb,
        }
        return {k: v for k, v in sized.items() if v is not None and given.get(k) is None}


def host_limits_of(
    instance_type: str,
    local_storage: bool,
    art: BoundData,
    sizes: Mapping[str, int],
    variant_props: Mapping[str, Any],
) -> HostLimits:
    """:func:`check_host_limits` for bound artifacts and a variant's props (``volume_size``,
    ``model_data_download_timeout``, ``container_startup_health_check_timeout``: cdk values or None)."""
    volume = variant_props.get("volume_size")
    return check_host_limits(
        instance_type=instance_type,
        local_storage=local_storage,
        multi_model=art.hosting_mode.loads_on_demand,
        data_bytes=art.data_bytes,
        unpacked_bytes=art.unpacked_bytes,
        packaging=art.packaging,
        model_bytes=sum(sizes.values()) or None,
        volume_size_gib=None if volume is None or is_token(volume) else volume.to_gibibytes(),
        download_timeout_given=variant_props.get("model_data_download_timeout") is not None,
        health_check_timeout_given=variant_props.get("container_startup_health_check_timeout") is not None,
    )


def volume_limits(instance_type: str, *, local_storage: bool) -> tuple[int, int, int] | None:
    """(default GB, maximum GB, bytes per GB) of the type's ML storage volume; None when unknown.

    EBS-only types: 30 GB by default, up to 512 (a "GB" of EBS is a GiB); NVMe types: the instance store,
    fixed (GB of 10^9 bytes, as EC2 lists them)."""
    info = tables.instance_type_info(instance_type)
    if info is not None:
        unit = sizing.GB if info.local_nvme_storage else sizing.GiB
        return info.default_volume_gb, info.max_volume_gb, unit
    if local_storage:
        return None  # an NVMe CPU type the table lacks: its instance store size is unknown
    return sizing.EBS_DEFAULT_VOLUME_GB, sizing.EBS_MAX_VOLUME_GB, sizing.GiB


def check_host_limits(
    *,
    instance_type: str,
    local_storage: bool,
    multi_model: bool,
    data_bytes: int | None,
    unpacked_bytes: int | None,
    packaging: str | None,
    model_bytes: int | None,
    volume_size_gib: float | None,
    download_timeout_given: bool,
    health_check_timeout_given: bool,
) -> HostLimits:
    """The variant's sized defaults for what the caller did not give, the volume error, the warnings.

    Timeouts (single-model only: an MME loads its models at invocation, not at start): ``60 s +
    bytes / throughput`` (download: the model data at 50 MB/s; health check: the models' memory at
    100 MB/s), clamped to 60..3600 s and emitted only above 600 s. Volume: the model data plus, for a
    tar.gz, its unpacked copy (an MME: its largest archive), against ``volume_size`` or the type's volume.
    """
    warnings: list[Warning] = []
    download = health = None
    if not multi_model:
        if not download_timeout_given:
            download = sizing.model_data_download_timeout(data_bytes)
            warnings += _over_maximum("model_data_download_timeout", data_bytes, sizing.DOWNLOAD_BYTES_PER_S)
        if not health_check_timeout_given:
            health = sizing.container_startup_health_check_timeout(model_bytes)
            warnings += _over_maximum(
                "container_startup_health_check_timeout", model_bytes, sizing.LOAD_BYTES_PER_S
            )
    volume, errs = _volume(
        instance_type, local_storage, data_bytes, unpacked_bytes, packaging, volume_size_gib
    )
    return HostLimits(
        model_data_download_timeout_in_seconds=download,
        container_startup_health_check_timeout_in_seconds=health,
        volume_size_in_gb=volume,
        errors=errs,
        warnings=warnings,
    )


def _over_maximum(prop: str, nbytes: int | None, rate: int) -> list[Warning]:
    if not nbytes or not sizing.over_maximum(nbytes, rate):
        return []
    return [
        (
            "cdk-triton:StartupTimeoutAtMaximum",
            f"{prop}: {nbytes / sizing.GB:.1f} GB at the assumed {rate // sizing.MB} MB/s needs more than "
            f"SageMaker's maximum of {sizing.TIMEOUT_MAX_S} s; the endpoint may fail to start. Pass "
            f"{prop}=cdk.Duration.hours(1) if you measured faster, or split the repository over endpoints",
        )
    ]


def _volume(
    instance_type: str,
    local_storage: bool,
    data_bytes: int | None,
    unpacked_bytes: int | None,
    packaging: str | None,
    volume_size_gib: float | None,
) -> tuple[int | None, list[TritonValidationError]]:
    """(VolumeSizeInGB to emit or None, errors) for the model data on the type's ML storage volume."""
    limits = volume_limits(instance_type, local_storage=local_storage)
    if limits is None or not data_bytes:
        return None, []
    default_gb, max_gb, unit = limits
    need = sizing.volume_need_bytes(
        artifact_bytes=data_bytes, unpacked_bytes=unpacked_bytes or 0, packaging=packaging
    )
    if volume_size_gib is not None:
        have_gb, prop_given = volume_size_gib, True
    else:
        have_gb, prop_given = default_gb, False
    if need <= have_gb * unit:
        return None, []
    sized = sizing.sized_volume_gb(need, unit)
    if not prop_given and not local_storage and sized <= max_gb:
        return sized, []  # the sized default: EBS-only types only (NVMe volumes are fixed)
    where = "the fixed NVMe instance store" if local_storage else f"a {have_gb:g} GB EBS volume"
    return None, [
        catalogued(
            "VolumeTooSmall",
            prop="volume_size",
            value=f"{have_gb:g} GB" + ("" if prop_given else " (the default)"),
            problem=f"is {where} on {instance_type}, and the model data needs about {need / unit:.1f} GB at start "
            "(the download" + (" and its unpacked copy" if packaging == "tar.gz" else "") + ")",
            allowed=f"at least {sized} GB"
            + (f", at most {max_gb} GB on {instance_type}" if sized <= max_gb or not local_storage else ""),
            fix=f"pass volume_size=cdk.Size.gibibytes({sized})"
            if sized <= max_gb and not local_storage
            else "choose an instance type with a larger NVMe instance store (g5.12xlarge and up, p4d, p5), or "
            "package the repository as a directory (no tar.gz copy) or split it over endpoints",
        )
    ]
