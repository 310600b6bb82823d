"""The pure checks of an inference-components endpoint at synth: derived requirements and GPU placement
inside a component. The copies on instances and the instance floor are ``config.components.instance_problems``
(one author: the build runs it on models.yaml before it writes).

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

from cdk_triton.config import components, sizing
from cdk_triton.config.placement import Group
from cdk_triton.config.tables import InstanceTypeInfo
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

#: Accelerators / CPU cores a component asks for when unset: config's (the build derives them alike).
DEFAULT_ACCELERATORS = components.DEFAULT_ACCELERATORS
DEFAULT_CPU_CORES_ON_CPU = components.DEFAULT_CPU_CORES_ON_CPU


@dataclass(frozen=True, kw_only=True, slots=True)
class Requirements:
    """One copy's ``ComputeResourceRequirements`` (None: left out of the template)."""

    min_memory_mb: int
    max_memory_mb: int | None = None
    accelerators: int | None = None
    cpu_cores: float | None = None


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
