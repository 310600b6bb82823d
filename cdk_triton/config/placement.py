"""Where a model's instances go: ``instance_group`` GPUs against the instance type's GPUs.

Shared by the declaration rules (build) and the constructs' checks (synth). Pure; standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cdk_triton.config import sizing, tables
from cdk_triton.config.sizing import GiB
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
                    allowed="KIND_CPU on CPU instance types; KIND_GPU on GPU types "
                    f"({', '.join(tables.gpu_families())})",
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


def runs_on_gpu(kinds: Sequence[str], instance_types: Sequence[str]) -> bool:
    """Whether a model with instance groups of ``kinds`` may run on a GPU when served on
    ``instance_types`` (the types of every endpoint serving it).

    A KIND_GPU group always does. No group, or a KIND_AUTO group, is Triton's default placement: on the
    GPUs when the host has any, so on a GPU instance type, or on one the table does not know, or when
    no endpoint serves the model yet (a shard, a model built for later): it may be deployed on a GPU.
    KIND_CPU and KIND_MODEL groups alone never do.
    """
    if "KIND_GPU" in kinds:
        return True
    if kinds and "KIND_AUTO" not in kinds:
        return False
    if not instance_types:
        return True
    return any(tables.instance_kind(t) in ("gpu", "unknown") for t in instance_types)


#: One model for the memory check: its instance groups and the bytes one instance holds (None: unknown).
Sized = tuple[Sequence[Group], int | None]


def _per_gpu(groups: Sequence[Group], gpu: int) -> int:
    """Instances of a model on GPU ``gpu`` (no groups: Triton's default, one on each GPU)."""
    if not groups:
        return 1
    return sum(c for k, c, gpus in groups if k in ("KIND_GPU", "KIND_AUTO") and (not gpus or gpu in gpus))


def _on_host(groups: Sequence[Group]) -> int:
    """Copies of a model in host memory: its KIND_CPU instances, else one (the copy read while loading)."""
    cpu = sum(c for k, c, _ in groups if k == "KIND_CPU")
    return cpu or 1


def gpu_oversubscription(
    instance_type: str, models: Mapping[str, Sized], *, gpu_count: int, where: str
) -> str | None:
    """What is wrong when the fullest of ``gpu_count`` GPUs of ``instance_type`` (a whole instance's, or
    the accelerators an inference component's copy reserves) holds more than one GPU's memory: the sum of
    each model's size x its instances on that GPU; None when it fits. Models of unknown size count for
    nothing."""
    info = tables.instance_type_info(instance_type)
    sized = {n: (g, b) for n, (g, b) in models.items() if b}
    if info is None or not sized or gpu_count < 1:
        return None
    loads = [(sum(b * _per_gpu(g, gpu) for g, b in sized.values()), gpu) for gpu in range(gpu_count)]
    need, gpu = max(loads)
    if need <= info.gpu_memory_gib * GiB:
        return None
    parts = ", ".join(
        f"'{n}' {b / GiB:.1f} GiB x {_per_gpu(g, gpu)}"
        for n, (g, b) in sorted(sized.items())
        if _per_gpu(g, gpu)
    )
    return (
        f"the models on GPU {gpu} {where} ({parts}) need about {need / GiB:.1f} GiB, "
        f"more than the {info.gpu_memory_gib} GiB of one {info.gpu}"
    )


def memory_warnings(
    instance_type: str, models: Mapping[str, Sized], *, multi_model: bool = False
) -> list[tuple[str, str]]:
    """(warning id, message) when the repository outgrows the instance's memory.

    GPU (``GpuMemoryOversubscribed``): on the fullest GPU, the sum over every model of the repository
    of its size x its instances there (an SME loads all of them at start; an MME's cache holds them
    as long as they fit, then SageMaker unloads the least used). Host (``HostMemoryOversubscribed``):
    Triton's own share (SERVER_HOST_BYTES) plus each model's KIND_CPU instances, or one copy for a GPU
    model, against the instance's host memory. Models of unknown size count for nothing.
    """
    info = tables.instance_type_info(instance_type)
    sized = {n: (g, b) for n, (g, b) in models.items() if b}
    if info is None or not sized:
        return []
    tail = (
        "SageMaker unloads the least used models when the cache is full (cold starts); "
        "spread the models over endpoints or choose a larger GPU"
        if multi_model
        else "lower the instance counts, split the repository or choose a larger GPU"
    )
    over = gpu_oversubscription(instance_type, sized, gpu_count=info.gpu_count, where=f"of {instance_type}")
    out = [("cdk-triton:GpuMemoryOversubscribed", f"{over}; {tail}")] if over else []
    host = sizing.SERVER_HOST_BYTES + sum(b * _on_host(g) for g, b in sized.values())
    if host > info.host_memory_gib * GiB:
        out.append(
            (
                "cdk-triton:HostMemoryOversubscribed",
                f"the repository needs about {host / GiB:.1f} GiB of host memory on {instance_type} "
                f"(Triton {sizing.SERVER_HOST_BYTES / GiB:.0f} GiB + each model's KIND_CPU instances, or one copy "
                f"of a GPU model while it loads), more than its {info.host_memory_gib} GiB; choose a type with "
                "more memory or fewer KIND_CPU instances",
            )
        )
    return out
