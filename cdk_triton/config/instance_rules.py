"""The SageMaker hosting rules of an instance type: one rule set for the build (``models.yaml``) and synth.

The declaration's rules (``declaration/rules.py``) run them on every endpoint of ``models.yaml``; the
constructs (``constructs/checks/instance.py``) run the same functions on their props. Pure; standard
library only; each function returns the problems it found without a path (the caller locates them).

- :func:`check_instance_type_shape`: ``ml.<family>.<size>`` (``InvalidInstanceType``).
- :func:`check_known_instance_type`: the type is in the instance table (a GPU type with its facts, or a
  size of a known CPU family); a typo is refused naming the closest known type (``UnknownInstanceType``).
  The constructs warn instead (``cdk-triton:UnknownGpuInstanceType``): a deployed stack may name a type
  newer than the table, while the build packages for the types it declares.
- :func:`check_triton_runs_there`: Graviton (arm64) and Inferentia/Trainium types run no
  sagemaker-tritonserver image (``NoTritonImageForInstance``).
- :func:`check_mme_single_gpu`: a GPU multi-model endpoint needs a single-GPU type (``MmeNeedsSingleGpu``).
- :func:`check_compute_capability`: the GPU is at least the release's minimum (``ComputeCapabilityTooLow``).
"""

from __future__ import annotations

import re

from cdk_triton.config import tables
from cdk_triton.config.parse import closest
from cdk_triton.errors import TritonValidationError

INSTANCE_TYPE = re.compile(r"^ml\.[a-z0-9-]+\.[a-z0-9]+$")
#: The sizes of the CPU families of the table (EC2 size names).
CPU_SIZE = re.compile(r"^(medium|large|xlarge|\d{1,2}xlarge|metal)$")
_CPU_SIZES = ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge")
SHAPE_ALLOWED = "'ml.<family>.<size>' such as ml.g5.xlarge, ml.g4dn.xlarge, ml.c6i.xlarge"


def known_instance_types() -> list[str]:
    """Every type the table knows: the GPU types, and the usual sizes of each CPU family."""
    gpus = list(tables.instance_types())
    cpus = [
        f"ml.{fam}.{size}"
        for fams in tables.cpu_instance_families().values()
        for fam in fams
        for size in _CPU_SIZES
    ]
    return gpus + sorted(set(cpus))


def closest_instance_type(instance_type: str) -> str | None:
    return closest(instance_type, known_instance_types(), cutoff=0.5)


def check_instance_type_shape(instance_type: str) -> TritonValidationError | None:
    if INSTANCE_TYPE.fullmatch(instance_type):
        return None
    near = closest_instance_type(instance_type if instance_type.startswith("ml.") else f"ml.{instance_type}")
    return TritonValidationError(
        "InvalidInstanceType",
        prop="instance_type",
        value=instance_type,
        problem="is not a SageMaker hosting instance type",
        allowed=SHAPE_ALLOWED,
        fix=f"did you mean '{near}'?" if near else "add the 'ml.' prefix and check the family and size",
    )


def is_known(instance_type: str) -> bool:
    """A GPU type of the table, or a CPU/arm64/accelerator family type with a size of EC2's pattern."""
    kind = tables.instance_kind(instance_type)
    if kind == "gpu":
        return True
    return kind != "unknown" and bool(CPU_SIZE.fullmatch(instance_type.split(".")[2]))


def check_known_instance_type(instance_type: str) -> TritonValidationError | None:
    """``UnknownInstanceType`` for a well-formed type the table does not know (a typo, most likely)."""
    if not INSTANCE_TYPE.fullmatch(instance_type) or is_known(instance_type):
        return None
    near = closest_instance_type(instance_type)
    excluded = tables.excluded_gpu_instance_types().get(instance_type)
    return TritonValidationError(
        "UnknownInstanceType",
        prop="instance_type",
        value=instance_type,
        problem="is not in the instance table"
        + (f" (left out: {excluded})" if excluded else " (a typo, or a type cdk-triton does not know yet)"),
        allowed="the GPU types of cdk_triton/config/data/instance-types.json and the sizes of its CPU "
        "families (c5, c6i, m5, m6i, r5, ...)",
        fix=f"did you mean '{near}'?"
        if near
        else "check the family and size against SageMaker's pricing page",
    )


def check_triton_runs_there(instance_type: str) -> TritonValidationError | None:
    """``NoTritonImageForInstance`` for a Graviton or Inferentia/Trainium type."""
    kind = tables.instance_kind(instance_type)
    if kind not in ("arm64", "accelerator"):
        return None
    what = (
        "a Graviton (arm64) type" if kind == "arm64" else "an Inferentia/Trainium type without an NVIDIA GPU"
    )
    return TritonValidationError(
        "NoTritonImageForInstance",
        prop="instance_type",
        value=instance_type,
        problem=f"is {what}; the sagemaker-tritonserver images are x86_64 CUDA images",
        allowed=f"x86_64 CPU types ({', '.join(tables.cpu_instance_families().get('x86_64', []))}) or "
        f"NVIDIA GPU types ({', '.join(tables.gpu_families())})",
        fix="use e.g. ml.c6i.xlarge (CPU) or ml.g5.xlarge (GPU)",
    )


def check_mme_single_gpu(instance_type: str, *, multi_model: bool) -> TritonValidationError | None:
    """``MmeNeedsSingleGpu``: a GPU multi-model endpoint on a type with more than one GPU."""
    info = tables.instance_type_info(instance_type)
    if not multi_model or info is None or info.gpu_count <= 1:
        return None
    return TritonValidationError(
        "MmeNeedsSingleGpu",
        prop="instance_type",
        value=instance_type,
        problem=f"has {info.gpu_count} GPUs; GPU multi-model endpoints need a single-GPU instance",
        allowed=", ".join(tables.confirmed_mme_gpu_types()),
        fix=f"use a single-GPU type such as {_single_gpu_like(info.family)}, or a single-model endpoint",
    )


def _single_gpu_like(family: str) -> str:
    same = [t for t in tables.confirmed_mme_gpu_types() if t.split(".")[1] == family]
    return same[-1] if same else "ml.g5.xlarge"


def check_compute_capability(instance_type: str, triton_version: str | None) -> TritonValidationError | None:
    """``ComputeCapabilityTooLow``: the type's GPU is older than the release's minimum."""
    info = tables.instance_type_info(instance_type)
    if info is None or triton_version is None:
        return None
    try:
        min_cc = tables.release(triton_version).min_compute_capability.value
    except TritonValidationError:
        min_cc = None
    if not min_cc or float(info.compute_capability) >= float(min_cc):
        return None
    return TritonValidationError(
        "ComputeCapabilityTooLow",
        prop="instance_type",
        value=instance_type,
        problem=f"has {info.gpu} GPUs (compute capability {info.compute_capability}), below the "
        f"{min_cc} Triton {triton_version} requires",
        allowed=f"GPU instance types with compute capability >= {min_cc} "
        f"({', '.join(tables.gpu_families(min_compute_capability=min_cc))})",
        fix=f"choose e.g. {' or '.join(tables.gpu_type_examples(min_compute_capability=min_cc))}",
    )


def check_declared_instance_type(
    instance_type: str, *, multi_model: bool, triton_version: str | None
) -> list[TritonValidationError]:
    """Every rule above, for an instance type a ``models.yaml`` endpoint declares (the build's rule set)."""
    shape = check_instance_type_shape(instance_type)
    if shape is not None:
        return [shape]
    found = [
        check_known_instance_type(instance_type),
        check_triton_runs_there(instance_type),
        check_mme_single_gpu(instance_type, multi_model=multi_model),
        check_compute_capability(instance_type, triton_version),
    ]
    return [e for e in found if e is not None]
