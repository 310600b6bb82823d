"""A multi-model endpoint's working set against its instances: can they hold every TargetModel at once?

The residency rule is ``config.residency``'s (the same ``cdk-triton capacity`` reports): usable GPU and
host memory per instance, each TargetModel's footprint from the manifest. Not an error: an MME may
keep fewer models warm than it serves, at the cost of cold loads; the warning says how many instances
would keep them all warm.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from cdk_triton.config import residency
from cdk_triton.config.manifest import ModelEntry, TargetModel
from cdk_triton.config.sizing import GiB
from cdk_triton.constructs._tokens import is_token

if TYPE_CHECKING:
    from cdk_triton.config.gpu_readings import GpuReadings

#: A finding for ``Annotations.add_warning_v2``: (warning id, message).
Warning = tuple[str, str]

WARNING_ID = "cdk-triton:MmeWorkingSetExceedsInstances"


def check_working_set(
    instance_type: str,
    instance_count: int,
    target_models: Mapping[str, TargetModel],
    built_models: Mapping[str, ModelEntry],
    *,
    readings: GpuReadings | None = None,
) -> list[Warning]:
    """A warning when the TargetModels' summed GPU (or host) footprint exceeds ``instance_count`` x one
    instance's usable GPU (or host) memory, or when one of them fits no instance of the type."""
    if is_token(instance_type) or is_token(instance_count) or not target_models:
        return []
    names = {m for t in target_models.values() for m in t.models}
    formats = sorted({built_models[m].format for m in names if m in built_models})
    usable = residency.usable_memory(instance_type, formats)
    if usable is None:
        return []
    fps = [
        residency.target_footprint(n, t, built_models, readings=readings, instance_type=instance_type)
        for n, t in sorted(target_models.items())
    ]
    too_big = [f.name for f in fps if not residency.fits(f, usable)]
    gpu = sum(f.gpu_bytes for f in fps)
    host = sum(f.host_bytes for f in fps)
    over = gpu > instance_count * usable.gpu_bytes or host > instance_count * usable.host_bytes
    if not over and not too_big:
        return []
    fitting = [f for f in fps if residency.fits(f, usable)]
    bound = residency.lower_bound(fitting, usable)
    packed = residency.instances_to_hold_all(fitting, usable) or 0
    labels = sorted({f.source for f in fps}, key=residency.source_rank)
    parts = [
        f"the {len(fps)} TargetModels need about {gpu / GiB:.2f} GiB of GPU and {host / GiB:.2f} GiB of host "
        f"memory (bytes from {', '.join(labels)}); {instance_count} x {instance_type} hold about "
        f"{instance_count * usable.gpu_bytes / GiB:.2f} GiB of GPU and {instance_count * usable.host_bytes / GiB:.2f} "
        f"GiB of host memory usable by models (an estimate: see config/residency.py)"
    ]
    if too_big:
        parts.append(f"{', '.join(too_big)} fit(s) no {instance_type} at all: choose a type with more memory")
    parts.append(
        f"SageMaker unloads the least used models when memory runs short, so requests wait for cold loads; "
        f"at least {bound} instances ({packed} by first-fit packing) keep every model warm: raise "
        "instance_count (or the autoscaling minimum) or run `cdk-triton capacity` to size for a hit ratio"
    )
    return [(WARNING_ID, "; ".join(parts))]
