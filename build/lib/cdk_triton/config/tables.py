"""The vendored data tables: Triton image accounts, GPU instance types and Triton releases.

The JSON files live in ``cdk_triton/config/data`` (package data, copied from the project's shared
data). Nothing here reads anything outside the package. Standard library only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from cdk_triton.errors import TritonValidationError

#: The Triton release every construct, build and Dockerfile uses unless told otherwise.
#: 24.09 is the newest release whose ONNX Runtime (1.19.2) and TensorRT (10.4.0) versions are both
#: confirmed in the release table, so the opset check and the TensorRT pin rest on facts, not guesses.
#: It is also the release closest to the local server (nvidia-pytriton 0.7.0 ships Triton 2.51 = 24.10).
DEFAULT_TRITON_VERSION = "24.09"

#: The last image version published from the legacy (pre-23.07) accounts.
LEGACY_MAX_VERSION = "23.05"

IMAGE_REPOSITORY = "sagemaker-tritonserver"


@cache
def _load(name: str) -> dict[str, Any]:
    text = resources.files("cdk_triton.config").joinpath("data", name).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _version_key(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


def is_valid_version_string(version: str) -> bool:
    parts = version.split(".")
    return len(parts) == 2 and all(p.isdigit() and len(p) == 2 for p in parts)


def image_versions() -> list[str]:
    """Image versions of the current (763104351884-era) table, oldest first."""
    return sorted(_load("sagemaker-tritonserver.json")["versions"], key=_version_key)


def image_regions(version: str) -> dict[str, str]:
    """Region -> ECR account for ``version`` (legacy table for versions up to 23.05).

    Raises TritonValidationError(UnknownTritonVersion) for a version in neither table.
    """
    if not is_valid_version_string(version):
        raise TritonValidationError(
            "UnknownTritonVersion",
            prop="version",
            value=version,
            problem="is not a Triton release version",
            allowed="a version 'YY.MM' such as " + ", ".join(image_versions()),
            fix="pass a release version without the '-py3' suffix",
        )
    current = _load("sagemaker-tritonserver.json")["versions"]
    if version in current:
        return dict(current[version]["registries"])
    if _version_key(version) <= _version_key(LEGACY_MAX_VERSION):
        return dict(_load("sagemaker-tritonserver-legacy.json")["registries"])
    raise TritonValidationError(
        "UnknownTritonVersion",
        prop="version",
        value=version,
        problem="has no SageMaker Triton image",
        allowed=f"versions up to {LEGACY_MAX_VERSION} or one of " + ", ".join(image_versions()),
        fix="choose a published version, or use TritonImage.from_ecr_repository for your own image",
    )


def image_account(version: str, region: str) -> str:
    """The ECR account hosting ``sagemaker-tritonserver:<version>-py3`` in ``region``."""
    regions = image_regions(version)
    if region not in regions:
        raise TritonValidationError(
            "ImageNotInRegion",
            prop="region",
            value=region,
            problem=f"has no sagemaker-tritonserver:{version}-py3 image",
            allowed=", ".join(sorted(regions)),
            fix="deploy to one of those regions or choose another Triton version",
        )
    return regions[region]


def image_uri(version: str, region: str) -> str:
    """The full image URI for a concrete region."""
    account = image_account(version, region)
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"{account}.dkr.ecr.{region}.{suffix}/{IMAGE_REPOSITORY}:{version}-py3"


@dataclass(frozen=True, kw_only=True, slots=True)
class InstanceTypeInfo:
    """Facts of one SageMaker GPU hosting instance type."""

    name: str
    gpu: str
    gpu_count: int
    compute_capability: str
    gpu_memory_gib: int
    local_nvme_storage: bool

    @property
    def sm(self) -> str:
        """The compute capability as TensorRT and CUDA name it, e.g. ``sm86``."""
        return "sm" + self.compute_capability.replace(".", "")

    @property
    def family(self) -> str:
        return self.name.split(".")[1]


def instance_types() -> dict[str, InstanceTypeInfo]:
    raw = _load("instance-types.json")["instance_types"]
    return {name: InstanceTypeInfo(name=name, **facts) for name, facts in raw.items()}


def instance_type_info(name: str) -> InstanceTypeInfo | None:
    """Facts for a GPU instance type, or None for a type not in the table (CPU types among them)."""
    return instance_types().get(name)


def confirmed_mme_gpu_types() -> list[str]:
    return list(_load("instance-types.json")["confirmed_mme_gpu_types"])


def is_burstable(name: str) -> bool:
    return name.startswith("ml.t")


@dataclass(frozen=True, kw_only=True, slots=True)
class Fact:
    """One fact of the release table, with where it comes from and whether it was confirmed."""

    value: str | None
    source: str
    confirmed: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class TritonRelease:
    """What one Triton release ships: the versions that decide whether an artifact loads there."""

    version: str
    triton_server: Fact
    libtorch: Fact
    onnxruntime: Fact
    tensorrt: Fact
    cuda: Fact
    python: Fact
    min_compute_capability: Fact

    @property
    def onnx_max_opset(self) -> int | None:
        limits = self._ort_limits()
        return None if limits is None else int(limits["max_opset"])

    @property
    def onnx_max_ir_version(self) -> int | None:
        limits = self._ort_limits()
        return None if limits is None else int(limits["max_ir_version"])

    def _ort_limits(self) -> dict[str, Any] | None:
        if not self.onnxruntime.value:
            return None
        minor = ".".join(self.onnxruntime.value.split(".")[:2])
        table = _load("triton-releases.json")["onnxruntime"]
        return table.get(minor)


def releases() -> dict[str, TritonRelease]:
    raw = _load("triton-releases.json")["releases"]
    out: dict[str, TritonRelease] = {}
    for version, facts in raw.items():
        out[version] = TritonRelease(version=version, **{k: Fact(**v) for k, v in facts.items()})
    return out


def release(version: str) -> TritonRelease:
    """The release facts for ``version``; TritonValidationError(UnknownTritonRelease) if absent."""
    table = releases()
    if version not in table:
        raise TritonValidationError(
            "UnknownTritonRelease",
            prop="triton_version",
            value=version,
            problem="is not in the release table",
            allowed=", ".join(sorted(table, key=_version_key)),
            fix="choose a release from the table, or add its facts to triton-releases.json",
        )
    return table[version]
