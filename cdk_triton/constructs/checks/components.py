"""The pure checks of an inference-components endpoint at synth: derived requirements, copies on instances,
GPU placement inside a component, and the instance floor.

Plain values in, ``TritonValidationError`` lists out (the construct locates them). The value limits of
one component, its names and whether one copy fits one instance are ``cdk_triton.config.components`` and
``config.layout`` (one author for build, synth and serve); here is only what synth adds: the derivation
of what the user left unset from the host facts (``config/tables.py``) and the memory arithmetic of
``config/sizing.py`` (``component_memory_mb``: Triton's 2 GiB + each model's bytes x its host copies,
+ 20 %), and a first-fit-decreasing packing of every copy onto instances of the type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cdk_triton.config import sizing
from cdk_triton.config.placement import Group
from cdk_triton.config.tables import InstanceTypeInfo
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

#: Accelerators a component asks for on a GPU type when unset (SageMaker's least, botocore: min 1).
DEFAULT_ACCELERATORS = 1
#: CPU cores a component asks for on a CPU instance type when unset (it needs some compute there).
DEFAULT_CPU_CORES_ON_CPU = 1.0


@dataclass(frozen=True, kw_only=True, slots=True)
class Requirements:
    """One copy's ``ComputeResourceRequirements`` (None: left out of the template)."""

    min_memory_mb: int
    max_memory_mb: int | None = None
    accelerators: int | None = None
    cpu_cores: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class CopyPlan:
    """What the packing needs of one component: its name, requirements and copy counts."""

    name: str
    requirements: Requirements
    copies: int
    max_copies: int


def derive_requirements(
    logical: str,
    info: InstanceTypeInfo | None,
    *,
    cpu_instance: bool,
    models: Sequence[sizing.SizedModel],
    accelerators: int | None,
    cpu_cores: float | None,
    min_memory_mb: int | None,
    max_memory_mb: int | None,
) -> tuple[Requirements | None, list[TritonValidationError]]:
    """The requirements of one copy: the given ones, else derived. Memory: ``sizing.component_min_memory_mb``
    of the archive's built models (the rule of build and serve too); accelerators: 1 on a GPU type; CPU cores: 1 on a CPU type, else left to
    SageMaker. A memory that is neither given nor derivable is ``InvalidComputeRequirement``."""
    memory = sizing.component_min_memory_mb(min_memory_mb, models)
    if memory is None:
        return None, [
            catalogued(
                "InvalidComputeRequirement",
                prop=f"components.{logical}.min_memory_mb",
                value=None,
                problem="is unset and cannot be derived: the manifest records no size for a model of the "
                "component (MinMemoryRequiredInMb is required)",
                allowed=f">= {sizing.COMPONENT_MIN_MEMORY_MB} MB",
                fix="pass ComponentOptions(min_memory_mb=...), set memory_mb in models.yaml, or rebuild so "
                "the manifest records the models' memory",
            )
        ]
    gpu = info is not None and info.gpu_count > 0
    acc = accelerators if accelerators is not None else (DEFAULT_ACCELERATORS if gpu else None)
    cpu = cpu_cores if cpu_cores is not None else (DEFAULT_CPU_CORES_ON_CPU if cpu_instance else None)
    return Requirements(
        min_memory_mb=memory, max_memory_mb=max_memory_mb, accelerators=acc, cpu_cores=cpu
    ), []


def _capacity(info: InstanceTypeInfo) -> tuple[float, float, float]:
    return float(info.gpu_count), float(info.vcpus), float(info.host_memory_gib * 1024)


def _need(req: Requirements) -> tuple[float, float, float]:
    return float(req.accelerators or 0), float(req.cpu_cores or 0), float(req.min_memory_mb)


def instances_needed(info: InstanceTypeInfo, plans: Sequence[CopyPlan], *, at_max: bool) -> int:
    """Instances that hold every copy (first-fit decreasing over accelerators, CPU cores and memory; at
    the scaling maxima when ``at_max``). A copy larger than one instance counts one (the fit check
    reports it)."""
    cap = _capacity(info)
    copies = [_need(p.requirements) for p in plans for _ in range(p.max_copies if at_max else p.copies)]
    bins: list[list[float]] = []
    for need in sorted(copies, reverse=True):
        for free in bins:
            if all(n <= f for n, f in zip(need, free, strict=True)):
                for i, n in enumerate(need):
                    free[i] -= n
                break
        else:
            bins.append([c - n for c, n in zip(cap, need, strict=True)])
    return len(bins)


def check_copies_fit(
    instance_type: str, info: InstanceTypeInfo, plans: Sequence[CopyPlan], max_instances: int
) -> list[TritonValidationError]:
    """The copies (initial, then at the scaling maxima) on at most ``max_instances`` instances."""
    for at_max, what in ((False, "the initial copies"), (True, "the copies at their scaling maxima")):
        need = instances_needed(info, plans, at_max=at_max)
        if need > max_instances:
            listing = ", ".join(f"{p.name} x {p.max_copies if at_max else p.copies}" for p in plans)
            return [
                catalogued(
                    "CopiesExceedInstances",
                    prop="max_instances",
                    value=max_instances,
                    problem=f"is too few: {what} ({listing}) need {need} x {instance_type}",
                    allowed=f">= {need} instances, or fewer copies or smaller requirements",
                    fix=f"pass max_instances={need} (or leave it unset: derived), or lower copies / max_copies",
                )
            ]
    return []


def check_component_placement(
    logical: str, groups: Mapping[str, Sequence[Group]], accelerators: int | None
) -> list[TritonValidationError]:
    """A model's instance_group ``gpus:`` indexes must lie below the component's accelerator count (the
    container sees the accelerators reserved for its copy as GPUs 0..n-1)."""
    errs = []
    n = accelerators or 0
    for model, model_groups in sorted(groups.items()):
        for i, (kind, _count, gpus) in enumerate(model_groups):
            if kind != "KIND_CPU" and gpus and max(gpus) >= n:
                errs.append(
                    catalogued(
                        "ComponentGpuPlacement",
                        prop=f"components.{logical}.accelerators",
                        value=n,
                        problem=f"is fewer than model '{model}' instance_groups[{i}] places on (gpus "
                        f"{list(gpus)}): a copy sees only its own accelerators, as GPUs 0..{max(n - 1, 0)}",
                        allowed=f"accelerators > {max(gpus)}, or gpus indexes below {n}",
                        fix=f"pass ComponentOptions(accelerators={max(gpus) + 1}), or drop gpus: from the model",
                    )
                )
    return errs


def check_instance_floor(min_instances: int, *, every_component_to_zero: bool) -> list[TritonValidationError]:
    """``min_instances`` 0 is reachable only when every component may scale in to 0 copies."""
    if min_instances != 0 or every_component_to_zero:
        return []
    return [
        catalogued(
            "InvalidInstanceScaling",
            prop="min_instances",
            value=0,
            problem="is 0 while a component keeps at least one copy (min_copies >= 1, or no copy scaling): "
            "the endpoint could never reach zero instances",
            allowed="0 only when every component has min_copies 0; else >= 1",
            fix="pass min_copies=0 on every component, or min_instances=1 (or leave it unset: derived)",
        )
    ]
