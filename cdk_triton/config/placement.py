"""Where a model's instances go: ``instance_group`` GPUs against the instance type's GPUs.

Shared by the declaration rules (build) and the constructs' checks (synth). Pure; standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence

from cdk_triton.config import tables
from cdk_triton.errors import TritonValidationError

#: (kind, count, gpus) of one instance_group entry.
Group = tuple[str, int, Sequence[int]]


def check_gpu_placement(
    instance_type: str, groups: Sequence[Group], *, model: str, path: str | None = None
) -> list[TritonValidationError]:
    """KIND_GPU groups on an instance without GPUs, and GPU indexes the instance does not have."""
    kind = tables.instance_kind(instance_type)
    info = tables.instance_type_info(instance_type)
    out: list[TritonValidationError] = []
    for i, (group_kind, _count, gpus) in enumerate(groups):
        where = f"model '{model}' instance_groups[{i}]"
        if group_kind == "KIND_GPU" and kind in ("cpu", "arm64", "accelerator"):
            out.append(
                TritonValidationError(
                    "GpuInstanceGroupOnCpuInstance",
                    prop="instance_groups",
                    value=f"{where}: KIND_GPU",
                    problem=f"places instances on a GPU, and {instance_type} has no NVIDIA GPU",
                    allowed="KIND_CPU on CPU instance types; KIND_GPU on GPU types (g4dn, g5, g6, p4d, p5 ...)",
                    fix="use kind: KIND_CPU, or deploy on a GPU instance type",
                    path=path,
                )
            )
        elif info is not None and any(g >= info.gpu_count or g < 0 for g in gpus):
            out.append(
                TritonValidationError(
                    "GpuIndexOutOfRange",
                    prop="instance_groups",
                    value=f"{where}: gpus {list(gpus)}",
                    problem=f"names GPUs that {instance_type} does not have ({info.gpu_count} x {info.gpu})",
                    allowed=f"GPU indexes 0..{info.gpu_count - 1}",
                    fix=f"drop gpus (one instance set on every GPU) or list indexes below {info.gpu_count}",
                    path=path,
                )
            )
    return out


def gpu_memory_warning(
    instance_type: str, groups: Sequence[Group], *, model: str, size_bytes: int | None
) -> str | None:
    """A warning when the instances of a model of known size outgrow one GPU's memory (size x instances per GPU)."""
    info = tables.instance_type_info(instance_type)
    if info is None or not size_bytes:
        return None
    if not groups:
        per_gpu = 1  # Triton's default: one instance on each GPU
    else:
        per_gpu = max(
            sum(c for k, c, gpus in groups if k in ("KIND_GPU", "KIND_AUTO") and (not gpus or g in gpus))
            for g in range(info.gpu_count)
        )
    need = size_bytes * per_gpu
    have = info.gpu_memory_gib * 1024**3
    if per_gpu == 0 or need <= have:
        return None
    return (
        f"model '{model}' ({size_bytes / 1024**3:.1f} GiB) x {per_gpu} instances per GPU needs about "
        f"{need / 1024**3:.1f} GiB of weights, more than the {info.gpu_memory_gib} GiB of one {info.gpu} "
        f"of {instance_type}; lower the instance count or choose a larger GPU"
    )
