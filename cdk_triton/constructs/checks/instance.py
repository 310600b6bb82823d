"""The instance type: its shape, local storage, and its GPU against the release, the plans and the mode."""

from __future__ import annotations

import re

from cdk_triton.config import instance_rules, tables
from cdk_triton.config.tables import InstanceTypeInfo
from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

#: A finding for ``Annotations.add_warning_v2``: (warning id, message).
Warning = tuple[str, str]


INSTANCE_TYPE = instance_rules.INSTANCE_TYPE


_LOCAL_NVME_CPU = re.compile(r"^[a-z]+\d+[a-z]*d[a-z]*$")


def has_local_storage(instance_type: str, info: InstanceTypeInfo | None) -> bool:
    """Whether the instance type has local NVMe storage (hardware-encrypted: no volume KMS key)."""
    if info is not None:
        return info.local_nvme_storage
    if is_token(instance_type) or instance_type.count(".") != 2:
        return False
    family = instance_type.split(".")[1]
    # CPU types with a 'd' in the suffix (c5d, m5d, r5d, m6id, c6id ...) carry instance-store NVMe.
    return bool(_LOCAL_NVME_CPU.fullmatch(family)) and not family.startswith(("inf", "trn"))


def types_for_archs(archs: list[str]) -> list[str]:
    """The vendored instance types whose GPU has one of the architectures ``archs``."""
    return sorted(name for name, info in tables.instance_types().items() if info.sm in archs)


def check_instance(
    instance_type: str,
    info: InstanceTypeInfo | None,
    *,
    triton_version: str | None,
    gpu_architectures: list[str],
    packaged_instance_types: list[str],
    multi_model: bool,
) -> tuple[list[TritonValidationError], list[Warning]]:
    """The instance type against the release, the TensorRT plans and the endpoint mode."""
    it = instance_type
    if is_token(it):
        return [], []
    if not INSTANCE_TYPE.fullmatch(it):
        return [not_an_instance_type(it)], []
    errs = [
        e
        for e in (
            instance_rules.check_compute_capability(it, triton_version),
            instance_rules.check_triton_runs_there(it),
            instance_rules.check_mme_single_gpu(it, multi_model=multi_model),
        )
        if e is not None
    ]
    warnings: list[Warning] = []
    family = it.split(".")[1]
    if info is None and family[:1] in ("g", "p") and not family.startswith("perf"):
        warnings.append(
            (
                "cdk-triton:UnknownGpuInstanceType",
                f"{it} looks like a GPU instance type but is not in the vendored instance table; "
                "GPU checks (architecture, GPU count, GPUUtilization scaling) treat it as a CPU type",
            )
        )
    errs += _check_architecture(it, info, gpu_architectures)
    mme_types = tables.confirmed_mme_gpu_types()
    if multi_model and info is not None and info.gpu_count <= 1 and it not in mme_types:
        warnings.append(
            (
                "cdk-triton:MmeGpuUnconfirmed",
                f"{it} is not among the GPU instance types documented for multi-model endpoints "
                f"({', '.join(mme_types)}); check that SageMaker accepts it",
            )
        )
    if packaged_instance_types and it not in packaged_instance_types and not errs:
        warnings.append(
            (
                "cdk-triton:InstanceTypeNotPackaged",
                f"the artifacts were packaged for {', '.join(packaged_instance_types)}, not {it}",
            )
        )
    return errs, warnings


def _check_architecture(
    it: str, info: InstanceTypeInfo | None, archs: list[str]
) -> list[TritonValidationError]:
    if not archs:
        return []
    family = it.split(".")[1]
    if info is None:
        kind = "has no GPU" if not family.startswith(("g", "p")) else "is not a known GPU instance type"
        return [
            catalogued(
                "GpuArtifactsOnCpuInstance",
                prop="instance_type",
                value=it,
                problem=f"{kind}, and the artifacts hold TensorRT plans built for {', '.join(archs)}",
                allowed=", ".join(types_for_archs(archs)) or "a GPU instance type",
                fix="deploy on a GPU instance of that architecture, or rebuild portable (ONNX) artifacts",
            )
        ]
    if info.sm in archs:
        return []
    return [
        catalogued(
            "GpuArchitectureMismatch",
            prop="instance_type",
            value=it,
            problem=f"has {info.gpu} ({info.sm}), and the TensorRT plans were built for {', '.join(archs)}",
            allowed=", ".join(types_for_archs(archs)) or ", ".join(archs),
            fix="deploy on an instance with that GPU, or rebuild the plans for "
            f"{info.sm} (instance_types: [{it}] in build/models.yaml)",
        )
    ]


def not_an_instance_type(instance_type: str) -> TritonValidationError:
    err = instance_rules.check_instance_type_shape(instance_type)
    assert err is not None, instance_type
    return err


def instance_count_below_1(instance_count: int, fix: str) -> TritonValidationError:
    return catalogued(
        "InvalidInstanceCount",
        prop="instance_count",
        value=instance_count,
        problem="is below 1",
        allowed="an integer >= 1",
        fix=fix,
    )
