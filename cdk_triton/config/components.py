"""Inference components: the limits SageMaker puts on one component, checked alike at build, synth and serve.

One author for each rule the declaration (``models.yaml``, at build), the constructs (at synth) and
the local endpoint (``cdk-triton serve``) apply to a component: the value limits of
``AWS::SageMaker::InferenceComponent`` (:func:`value_problems`), the instance scaling bounds
(:func:`scaling_problems`) and whether a component's compute requirements fit one instance of the
endpoint's type (:func:`fit_problems`). The limits and their sources are vendored in
``data/inference-components.json``. Standard library only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from cdk_triton.config import tables
from cdk_triton.errors import TritonValidationError


@cache
def limits() -> dict[str, Any]:
    """``data/inference-components.json``: the limits, each with its source and the date read."""
    text = resources.files("cdk_triton.config").joinpath("data", "inference-components.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def _limit(name: str) -> Any:
    return limits()["limits"][name]["value"]


#: ``ComputeResourceRequirements.MinMemoryRequiredInMb`` at least (required).
MIN_MEMORY_MB: int = _limit("min_memory_required_in_mb")
#: ``NumberOfAcceleratorDevicesRequired`` at least.
MIN_ACCELERATORS: int = _limit("number_of_accelerator_devices_required")
#: ``NumberOfCpuCoresRequired`` at least.
MIN_CPU_CORES: float = _limit("number_of_cpu_cores_required")
#: ``StartupParameters.ContainerStartupHealthCheckTimeoutInSeconds`` (and the download timeout) range.
STARTUP_TIMEOUT_S: tuple[int, int] = tuple(_limit("startup_timeout_seconds"))  # type: ignore[assignment]
#: ``RuntimeConfig.CopyCount`` at least (0: scaled in to zero copies).
MIN_COPY_COUNT: int = _limit("copy_count")
#: ``ManagedInstanceScaling.MinInstanceCount`` at least (0: the endpoint scales to zero instances).
MIN_INSTANCE_COUNT: int = _limit("min_instance_count")


@dataclass(frozen=True, kw_only=True, slots=True)
class ComponentValues:
    """One component's settings as written (``None``: not set, derived at synth).

    The field names of ``models.yaml`` ``components.<model>``; the manifest's ``ComponentEntry`` names
    ``memory_mb`` ``min_memory_mb`` (the CloudFormation word).
    """

    copies: int | None = None
    min_copies: int | None = None
    max_copies: int | None = None
    accelerators: int | None = None
    cpu_cores: float | None = None
    memory_mb: int | None = None
    max_memory_mb: int | None = None
    data_cache: bool | None = None
    startup_timeout_s: int | None = None


def _problem(
    code: str, path: str | None, prop: str, value: Any, problem: str, allowed: str, fix: str
) -> TritonValidationError:
    return TritonValidationError(
        code, prop=prop, value=value, problem=problem, allowed=allowed, fix=fix, path=path
    )


def _at(path: str | None, key: str) -> str | None:
    return f"{path}.{key}" if path else None


def _below_floor(
    code: str,
    v: ComponentValues,
    path: str | None,
    floors: tuple[tuple[str, float, str], ...],
    fix_tail: str,
) -> list[TritonValidationError]:
    """``code`` for each value of ``v`` below its floor: (key, floor, unit after the floor)."""
    out: list[TritonValidationError] = []
    for key, floor, unit in floors:
        value = getattr(v, key)
        if value is not None and value < floor:
            out.append(
                _problem(
                    code,
                    _at(path, key),
                    key,
                    value,
                    f"is below {floor}{unit}",
                    f">= {floor}",
                    f"set {key} to {floor} or more{fix_tail}",
                )
            )
    return out


def copy_problems(v: ComponentValues, path: str | None = None) -> list[TritonValidationError]:
    """``InvalidCopyCount``: copies or min_copies below 0, max_copies below 1, min above max, copies
    outside [min_copies, max_copies] (a templated CopyCount is never below the scaling minimum)."""
    floors = (("copies", MIN_COPY_COUNT, ""), ("min_copies", MIN_COPY_COUNT, ""), ("max_copies", 1, ""))
    out = _below_floor("InvalidCopyCount", v, path, floors, "")
    lo, hi = v.min_copies, v.max_copies
    if lo is not None and hi is not None and lo > hi and lo >= 0 and hi >= 1:
        out.append(
            _problem(
                "InvalidCopyCount",
                _at(path, "min_copies"),
                "min_copies",
                lo,
                f"exceeds max_copies {hi}",
                f"<= {hi}",
                "lower min_copies or raise max_copies",
            )
        )
    elif v.copies is not None and v.copies >= 0:
        if lo is not None and v.copies < lo:
            out.append(
                _problem(
                    "InvalidCopyCount",
                    _at(path, "copies"),
                    "copies",
                    v.copies,
                    f"is below min_copies {lo}",
                    f">= {lo}",
                    "raise copies to min_copies (autoscaling would raise it at once)",
                )
            )
        if hi is not None and hi >= 1 and v.copies > hi:
            out.append(
                _problem(
                    "InvalidCopyCount",
                    _at(path, "copies"),
                    "copies",
                    v.copies,
                    f"exceeds max_copies {hi}",
                    f"<= {hi}",
                    "lower copies or raise max_copies",
                )
            )
    return out


def compute_problems(v: ComponentValues, path: str | None = None) -> list[TritonValidationError]:
    """``InvalidComputeRequirement`` (memory < 128 MB, max memory below memory, accelerators < 1, CPU
    cores < 0.25) and ``InvalidStartupTimeout`` (outside 60-3600 s)."""
    floors = (
        ("memory_mb", MIN_MEMORY_MB, " MB (MinMemoryRequiredInMb)"),
        ("max_memory_mb", MIN_MEMORY_MB, " MB (MaxMemoryRequiredInMb)"),
        ("accelerators", MIN_ACCELERATORS, " (NumberOfAcceleratorDevicesRequired)"),
        ("cpu_cores", MIN_CPU_CORES, " (NumberOfCpuCoresRequired)"),
    )
    out = _below_floor("InvalidComputeRequirement", v, path, floors, ", or remove it (derived at synth)")
    lo, hi = v.memory_mb, v.max_memory_mb
    if lo is not None and hi is not None and hi < lo:
        out.append(
            _problem(
                "InvalidComputeRequirement",
                _at(path, "max_memory_mb"),
                "max_memory_mb",
                hi,
                f"is below memory_mb {lo}",
                f">= {lo}",
                "raise max_memory_mb or lower memory_mb",
            )
        )
    t, (t_lo, t_hi) = v.startup_timeout_s, STARTUP_TIMEOUT_S
    if t is not None and not t_lo <= t <= t_hi:
        out.append(
            _problem(
                "InvalidStartupTimeout",
                _at(path, "startup_timeout_s"),
                "startup_timeout_s",
                t,
                "is outside the StartupParameters range",
                f"{t_lo}..{t_hi} seconds",
                f"use a value in {t_lo}..{t_hi}",
            )
        )
    return out


def value_problems(v: ComponentValues, path: str | None = None) -> list[TritonValidationError]:
    """Every value problem of one component: :func:`copy_problems` then :func:`compute_problems`."""
    return copy_problems(v, path) + compute_problems(v, path)


def scaling_problems(
    min_instances: int | None, max_instances: int | None, path: str | None = None
) -> list[TritonValidationError]:
    """``InvalidInstanceScaling``: min_instances below 0, max_instances below 1, min above max."""
    out: list[TritonValidationError] = []
    if min_instances is not None and min_instances < MIN_INSTANCE_COUNT:
        out.append(
            _problem(
                "InvalidInstanceScaling",
                _at(path, "min_instances"),
                "min_instances",
                min_instances,
                "is negative",
                ">= 0 (0: scale to zero instances)",
                "set min_instances to 0 or more",
            )
        )
    if max_instances is not None and max_instances < 1:
        out.append(
            _problem(
                "InvalidInstanceScaling",
                _at(path, "max_instances"),
                "max_instances",
                max_instances,
                "is below 1",
                ">= 1",
                "set max_instances to 1 or more",
            )
        )
    if (
        min_instances is not None
        and max_instances is not None
        and min_instances >= 0
        and 1 <= max_instances < min_instances
    ):
        out.append(
            _problem(
                "InvalidInstanceScaling",
                _at(path, "min_instances"),
                "min_instances",
                min_instances,
                f"exceeds max_instances {max_instances}",
                f"<= {max_instances}",
                "lower min_instances or raise max_instances",
            )
        )
    return out


def fit_problems(
    instance_type: str,
    *,
    component: str,
    accelerators: int | None,
    cpu_cores: float | None,
    memory_mb: int | None,
    path: str | None = None,
) -> list[TritonValidationError]:
    """``ComponentDoesNotFit``: requirements one instance of ``instance_type`` cannot hold, so that
    SageMaker could never place one copy (the deployment would stay without capacity and fail).

    Checked against the instance table (``config.tables``): accelerators beyond the type's GPUs (or any
    on a CPU type), CPU cores beyond its vCPUs, memory beyond its host memory. A type the table lacks is
    not judged here (the instance rules report it). ``None`` requirements are not judged.
    """
    info = tables.instance_type_info(instance_type)
    kind = tables.instance_kind(instance_type)
    out: list[TritonValidationError] = []

    def no_fit(prop: str, value: Any, has: str, allowed: str) -> None:
        out.append(
            _problem(
                "ComponentDoesNotFit",
                path,
                f"component '{component}' {prop}",
                value,
                f"cannot fit one {instance_type} ({has}): SageMaker would find no instance to place a copy on",
                allowed,
                f"lower {prop}, or use a larger instance type",
            )
        )

    if accelerators is not None:
        gpus = info.gpu_count if info is not None else 0
        if (info is not None or kind == "cpu") and accelerators > gpus:
            no_fit(
                "accelerators",
                accelerators,
                f"{gpus} GPUs",
                f"<= {gpus}" if gpus else "none on a CPU instance type",
            )
    if info is None:
        return out
    if cpu_cores is not None and cpu_cores > info.vcpus:
        no_fit("cpu_cores", cpu_cores, f"{info.vcpus} vCPUs", f"<= {info.vcpus}")
    host_mb = info.host_memory_gib * 1024
    if memory_mb is not None and memory_mb > host_mb:
        no_fit("memory_mb", memory_mb, f"{info.host_memory_gib} GiB host memory", f"<= {host_mb}")
    return out


# -- the instances a components endpoint needs (build and synth: one author) --------------------------

#: Accelerators a copy asks for on a GPU type when unset (SageMaker's least, botocore: min 1).
DEFAULT_ACCELERATORS = 1
#: CPU cores a copy asks for on a CPU instance type when unset (it needs some compute there).
DEFAULT_CPU_CORES_ON_CPU = 1.0


@dataclass(frozen=True, kw_only=True, slots=True)
class CopyNeed:
    """What the packing needs of one component: its name, one copy's needs, its copy counts."""

    name: str
    accelerators: float
    cpu_cores: float
    memory_mb: float
    copies: int
    max_copies: int


def copy_counts(v: ComponentValues) -> tuple[int, int, int]:
    """(copies, min_copies, max_copies) as deployed: copies default 1; without copy scaling the bounds
    are the copies; with it, min_copies defaults to min(copies, 1) and max_copies to max(copies, 1)."""
    copies = v.copies if v.copies is not None else 1
    scaled = v.min_copies is not None or v.max_copies is not None
    lo = v.min_copies if v.min_copies is not None else (min(copies, 1) if scaled else copies)
    hi = v.max_copies if v.max_copies is not None else max(copies, 1)
    return copies, lo, hi


def instances_needed(info: tables.InstanceTypeInfo, needs: list[CopyNeed], *, at_max: bool) -> int:
    """Instances that hold every copy (first-fit decreasing over accelerators, CPU cores and memory; at
    the scaling maxima when ``at_max``). A copy larger than one instance counts one (``fit_problems``
    reports it)."""
    cap = (float(info.gpu_count), float(info.vcpus), float(info.host_memory_gib * 1024))
    copies = [
        (n.accelerators, n.cpu_cores, n.memory_mb)
        for n in needs
        for _ in range(n.max_copies if at_max else n.copies)
    ]
    bins: list[list[float]] = []
    for need in sorted(copies, reverse=True):
        for free in bins:
            if all(a <= f for a, f in zip(need, free, strict=True)):
                for i, a in enumerate(need):
                    free[i] -= a
                break
        else:
            bins.append([c - a for c, a in zip(cap, need, strict=True)])
    return len(bins)


def copies_fit_problems(
    instance_type: str,
    info: tables.InstanceTypeInfo,
    needs: list[CopyNeed],
    max_instances: int,
    path: str | None = None,
) -> list[TritonValidationError]:
    """``CopiesExceedInstances``: the copies (initial, then at the scaling maxima) on at most
    ``max_instances`` instances of ``instance_type``."""
    for at_max, what in ((False, "the initial copies"), (True, "the copies at their scaling maxima")):
        need = instances_needed(info, needs, at_max=at_max)
        if need > max_instances:
            listing = ", ".join(f"{n.name} x {n.max_copies if at_max else n.copies}" for n in needs)
            return [
                _problem(
                    "CopiesExceedInstances",
                    _at(path, "max_instances"),
                    "max_instances",
                    max_instances,
                    f"is too few: {what} ({listing}) need {need} x {instance_type}",
                    f">= {need} instances, or fewer copies or smaller requirements",
                    f"set max_instances to {need} (or leave it unset: derived), or lower copies / max_copies",
                )
            ]
    return []


def instance_floor_problems(
    min_instances: int, *, every_component_to_zero: bool, path: str | None = None
) -> list[TritonValidationError]:
    """``InvalidInstanceScaling``: ``min_instances`` 0 is reachable only when every component may scale
    in to 0 copies."""
    if min_instances != 0 or every_component_to_zero:
        return []
    return [
        _problem(
            "InvalidInstanceScaling",
            _at(path, "min_instances"),
            "min_instances",
            0,
            "is 0 while a component keeps at least one copy (min_copies >= 1, or no copy scaling): the "
            "endpoint could never reach zero instances",
            "0 only when every component has min_copies 0; else >= 1",
            "set min_copies: 0 on every component, or min_instances: 1 (or leave it unset: derived)",
        )
    ]


def instance_problems(
    instance_type: str,
    needs: list[CopyNeed],
    *,
    min_instances: int | None,
    max_instances: int | None,
    every_component_to_zero: bool,
    path: str | None = None,
) -> tuple[int, int, list[TritonValidationError]]:
    """The endpoint's instance bounds, given or derived (min: 0 when every component may reach 0 copies,
    else 1; max: enough for the copies at their maxima), and every problem of them: the scaling bounds
    (:func:`scaling_problems`), the floor (:func:`instance_floor_problems`), the copies on the instances
    (:func:`copies_fit_problems`, when the instance table knows the type). The build runs it on what
    ``models.yaml`` declares (unset memory at its floor: what the build cannot know yet is never larger
    at synth), synth on the derived requirements."""
    info = tables.instance_type_info(instance_type)
    at_max = instances_needed(info, needs, at_max=True) if info is not None else 1
    lo = min_instances if min_instances is not None else (0 if every_component_to_zero else 1)
    hi = max_instances if max_instances is not None else max(1, lo, at_max)
    errs = scaling_problems(lo, hi, path)
    errs += instance_floor_problems(lo, every_component_to_zero=every_component_to_zero, path=path)
    if info is not None and not errs:
        errs += copies_fit_problems(instance_type, info, needs, hi, path)
    return lo, hi, errs
