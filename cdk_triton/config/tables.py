"""The vendored data tables: Triton image accounts, GPU instance types, Triton releases and their advisories.

The JSON files live in ``cdk_triton/config/data`` (package data, copied from the project's shared
data). Nothing here reads anything outside the package. Standard library only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from cdk_triton.errors import TritonValidationError

#: The release of the local server (nvidia-pytriton 0.7.0 ships tritonserver 2.51 = 24.10). Its ONNX and
#: PyTorch models run on CPU stand-in backends (the installed onnxruntime / torch, held to the target
#: release's limits), so it serves the exports of any release of the table, not only this one's.
LOCAL_SERVER_RELEASE = "24.10"

#: The last image version published from the legacy (pre-23.07) accounts.
LEGACY_MAX_VERSION = "23.05"

IMAGE_REPOSITORY = "sagemaker-tritonserver"


@cache
def load_data(name: str) -> dict[str, Any]:
    """The vendored data file ``cdk_triton/config/data/<name>``, parsed (the one reader of the tables)."""
    text = resources.files("cdk_triton.config").joinpath("data", name).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


#: The Triton release every construct, build and Dockerfile uses unless told otherwise: the decision's
#: ``default`` (``data/default-release.json``). Why it is this one (no release has every critical fix
#: with a confirmed host and TensorRT; it ties 25.04 and stays) and the library's acknowledgment of its
#: critical advisories: ``config.default_release`` (a test fails when a release meets every criterion).
DEFAULT_TRITON_VERSION: str = str(load_data("default-release.json")["default"])


def _version_key(version: str) -> tuple[int, int]:
    """``'24.09'`` -> ``(24, 9)``, for ordering releases."""
    major, minor = version.split(".")
    return int(major), int(minor)


def is_valid_version_string(version: str) -> bool:
    parts = version.split(".")
    return len(parts) == 2 and all(p.isdigit() and len(p) == 2 for p in parts)


def image_versions() -> list[str]:
    """Image versions of the current (763104351884-era) table, oldest first."""
    return sorted(load_data("sagemaker-tritonserver.json")["versions"], key=_version_key)


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
    current = load_data("sagemaker-tritonserver.json")["versions"]
    if version in current:
        return dict(current[version]["registries"])
    if _version_key(version) <= _version_key(LEGACY_MAX_VERSION):
        return dict(load_data("sagemaker-tritonserver-legacy.json")["registries"])
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
    vcpus: int
    host_memory_gib: int
    default_volume_gb: int  # the ML storage volume SageMaker attaches when VolumeSizeInGB is unset
    max_volume_gb: int  # the most VolumeSizeInGB accepts (NVMe types: the fixed instance store)

    @property
    def sm(self) -> str:
        """The compute capability as TensorRT and CUDA name it, e.g. ``sm86``."""
        return "sm" + self.compute_capability.replace(".", "")

    @property
    def family(self) -> str:
        return self.name.split(".")[1]


@cache
def _instance_type_table() -> dict[str, InstanceTypeInfo]:
    """Built once per process (the facts are frozen); callers get copies or single entries."""
    raw = load_data("instance-types.json")["instance_types"]
    return {name: InstanceTypeInfo(name=name, **facts) for name, facts in raw.items()}


def instance_types() -> dict[str, InstanceTypeInfo]:
    return dict(_instance_type_table())


def instance_type_info(name: str) -> InstanceTypeInfo | None:
    """Facts for a GPU instance type, or None for a type not in the table (CPU types among them)."""
    return _instance_type_table().get(name)


def _family_order(family: str) -> tuple[object, ...]:
    """``g4dn`` before ``g5`` before ``g6e``; ``p6-b200`` after ``p5en``: letters, then the numbers."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", family))


def gpu_families(*, min_compute_capability: str | None = None, multi_gpu: bool = False) -> list[str]:
    """The GPU instance families of the table, in family order (what an error text lists: a family
    added to ``instance-types.json`` appears there): those with a type whose compute capability is at
    least ``min_compute_capability``; with ``multi_gpu``, those with a type of several GPUs."""
    out = {
        t.family
        for t in _instance_type_table().values()
        if (not min_compute_capability or float(t.compute_capability) >= float(min_compute_capability))
        and (not multi_gpu or t.gpu_count > 1)
    }
    return sorted(out, key=_family_order)


def gpu_type_examples(
    *, min_compute_capability: str | None = None, multi_gpu: bool = False, count: int = 2
) -> list[str]:
    """The smallest single-GPU (``multi_gpu``: several-GPU) type of each of the first ``count``
    families of :func:`gpu_families` (an error's "choose e.g. ..."): the fewest vCPUs, then the
    least host memory."""
    out: list[str] = []
    for family in gpu_families(min_compute_capability=min_compute_capability, multi_gpu=multi_gpu)[:count]:
        types = [t for t in _instance_type_table().values() if t.family == family]
        single = [t for t in types if (t.gpu_count > 1) == multi_gpu] or types
        out.append(min(single, key=lambda t: (t.vcpus, t.host_memory_gib)).name)
    return out


def confirmed_mme_gpu_types() -> list[str]:
    return list(load_data("instance-types.json")["confirmed_mme_gpu_types"])


def is_burstable(name: str) -> bool:
    return name.startswith("ml.t")


def cpu_instance_families() -> dict[str, list[str]]:
    """CPU-only hosting families by architecture: ``x86_64``, ``arm64`` (and ``burstable``)."""
    raw = load_data("instance-types.json")["cpu_instance_families"]
    return {k: list(v) for k, v in raw.items() if isinstance(v, list)}


def excluded_gpu_instance_types() -> dict[str, str]:
    """GPU hosting types deliberately left out of the table -> why."""
    raw = load_data("instance-types.json")["excluded_gpu_instance_types"]
    return {k: v for k, v in raw.items() if k != "comment"}


def instance_kind(name: str) -> str:
    """What the table knows of an instance type: ``gpu`` (in the table, facts known), ``cpu``
    (an x86_64 CPU family), ``arm64`` (a Graviton family: no Triton image runs there),
    ``accelerator`` (Inferentia/Trainium) or ``unknown`` (neither: possibly a GPU type we lack)."""
    if name in _instance_type_table():
        return "gpu"
    parts = name.split(".")
    family = parts[1] if len(parts) == 3 else ""
    families = cpu_instance_families()
    if family in families.get("x86_64", []):
        return "cpu"
    if family in families.get("arm64", []):
        return "arm64"
    if family in load_data("instance-types.json")["other_accelerator_families"]["families"]:
        return "accelerator"
    return "unknown"


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

    @property
    def onnx_limits_confirmed(self) -> bool:
        """Whether the opset / IR limits of this release's ONNX Runtime were measured."""
        limits = self._ort_limits()
        return bool(limits and limits.get("confirmed"))

    def facts(self) -> dict[str, Fact]:
        """Every fact by name: triton_server, libtorch, onnxruntime, tensorrt, cuda, python,
        min_compute_capability (each with its source and whether it is confirmed)."""
        return {name: getattr(self, name) for name in _FACT_NAMES}

    def _ort_limits(self) -> dict[str, Any] | None:
        if not self.onnxruntime.value:
            return None
        minor = ".".join(self.onnxruntime.value.split(".")[:2])
        table = load_data("triton-releases.json")["onnxruntime"]
        return table.get(minor)


_FACT_NAMES = (
    "triton_server",
    "libtorch",
    "onnxruntime",
    "tensorrt",
    "cuda",
    "python",
    "min_compute_capability",
)


@cache
def _release_table() -> dict[str, TritonRelease]:
    """Built once per process (the facts are frozen); callers get copies or single entries."""
    raw = load_data("triton-releases.json")["releases"]
    out: dict[str, TritonRelease] = {}
    for version, facts in raw.items():
        out[version] = TritonRelease(version=version, **{k: Fact(**v) for k, v in facts.items()})
    return out


def releases() -> dict[str, TritonRelease]:
    return dict(_release_table())


def release(version: str) -> TritonRelease:
    """The release facts for ``version``; TritonValidationError(UnknownTritonRelease) if absent."""
    table = _release_table()
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


def release_versions() -> list[str]:
    """The releases of the table, oldest first."""
    return sorted(_release_table(), key=_version_key)


def minor(version: str | None) -> str | None:
    """``'2.3.1'`` -> ``'2.3'`` (None stays None)."""
    return None if not version else ".".join(version.split(".")[:2])


def is_newer(a: str, b: str) -> bool:
    """Whether dotted version ``a`` is newer than ``b`` (numeric parts compared, others ignored)."""

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in v.split("+")[0].split(".") if p.isdigit())

    return key(a) > key(b)


# ---------------------------------------------------------------------------- PyTorch parameters


@dataclass(frozen=True, kw_only=True, slots=True)
class PyTorchParameter:
    """A PyTorch backend parameter and the releases that read it (last None = still read)."""

    name: str
    first_release: str
    last_release: str | None
    source: str

    def in_release(self, version: str) -> bool:
        key = _version_key(version)
        if key < _version_key(self.first_release):
            return False
        return self.last_release is None or key <= _version_key(self.last_release)


def pytorch_parameters() -> dict[str, PyTorchParameter]:
    """Every PyTorch backend parameter any release of the table reads."""
    raw = load_data("triton-releases.json")["pytorch_parameters"]
    return {name: PyTorchParameter(name=name, **facts) for name, facts in raw.items() if name != "comment"}


def pytorch_parameter_error(
    name: str, version: str, *, path: str | None = None
) -> TritonValidationError | None:
    """The error for a PyTorch parameter ``version`` does not read (None when it does, or when the
    name is unknown: that is the declaration's UnknownPyTorchParameter)."""
    param = pytorch_parameters().get(name)
    if param is None or param.in_release(version):
        return None
    here = [n for n, p in pytorch_parameters().items() if p.in_release(version)]
    if param.last_release is not None and _version_key(version) > _version_key(param.last_release):
        return TritonValidationError(
            "RemovedPyTorchParameter",
            prop="pytorch parameter",
            value=name,
            problem=f"was removed after Triton {param.last_release} (the last release that had it), "
            f"and the target is {version}",
            allowed=", ".join(here),
            fix=f"remove it, or target triton_version {param.last_release} or older"
            + (" (use ENABLE_TENSOR_FUSER)" if name == "ENABLE_NVFUSER" else ""),
            path=path,
        )
    return TritonValidationError(
        "PyTorchParameterTooNew",
        prop="pytorch parameter",
        value=name,
        problem=f"is read from Triton {param.first_release} on, and the target is {version}",
        allowed=", ".join(here),
        fix=f"remove it, or target triton_version {param.first_release} or newer",
        path=path,
    )


# ---------------------------------------------------------------------------- the serve script


def serve_script_data(version: str) -> dict[str, Any] | None:
    """What the SageMaker ``serve`` script of ``version`` does with each variable
    (``data/sagemaker-serve.json``): the recorded release itself, or a recorded release whose
    script is byte-identical; None when no record covers ``version``."""
    if not is_valid_version_string(version):
        return None
    data = load_data("sagemaker-serve.json")
    recorded = data["releases"]
    if version in recorded:
        return dict(recorded[version])
    key = _version_key(version)
    for name, ranges in data["script_variants"].items():
        if name == "comment":
            continue
        spans = [
            (_version_key(lo), _version_key(hi or lo))
            for lo, _, hi in (r.replace("r", "").partition(" .. ") for r in ranges)
        ]
        if any(lo <= key <= hi for lo, hi in spans):
            same = [v for v in recorded if any(lo <= _version_key(v) <= hi for lo, hi in spans)]
            if same:
                return dict(recorded[same[0]])
    return None


# ---------------------------------------------------------------------------- the SageMaker front


def front_facts() -> dict[str, dict[str, Any]]:
    """How the SageMaker port of each release answers where that changed (``data/sagemaker-front.json``);
    ``config.server_options.front`` reads it."""
    facts: dict[str, dict[str, Any]] = load_data("sagemaker-front.json")["facts"]
    return facts


def at_least(version: str, floor: str) -> bool:
    """Whether release ``version`` is ``floor`` or newer (``'26.05'`` >= ``'26.03'``)."""
    return not is_newer(floor, version)


# ---------------------------------------------------------------------------- security advisories


def advisory_table() -> dict[str, Any]:
    """The vendored NVIDIA advisories (``data/triton-advisories.json``); ``config.advisories`` reads it."""
    return load_data("triton-advisories.json")


# ---------------------------------------------------------------------------- on-demand prices


def price_table() -> dict[str, Any]:
    """The vendored on-demand price table (``data/instance-prices.json``): region, prices, each sourced."""
    return load_data("instance-prices.json")


def on_demand_price(instance_type: str) -> float | None:
    """USD per instance-hour of ``instance_type`` in the table's region; None when it is not listed."""
    entry = price_table()["prices"].get(instance_type)
    return float(entry["usd_per_hour"]) if entry else None


@dataclass(frozen=True, kw_only=True, slots=True)
class ServiceLimit:
    """One CloudFormation / Parameter Store limit with its source (``cloudformation-limits.json``)."""

    name: str
    value: int
    unit: str
    what: str
    source: str


@cache
def cloudformation_limits() -> dict[str, ServiceLimit]:
    """The limits a fleet-sized stack can reach (template size, resources, outputs, SSM value sizes)."""
    raw = load_data("cloudformation-limits.json")["limits"]
    return {name: ServiceLimit(name=name, **facts) for name, facts in raw.items()}
